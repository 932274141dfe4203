// Hand-written protobuf coding of the records of smtrace.proto. Field numbers
// here must match the .proto; test_trace_format_wire.cpp parses the output
// with libprotobuf to hold them together.
//
// Each record is written into a buffer sized by an upper bound of its
// encoding, then its tag and length are put in front. Bounded records (every
// ordinary event) use a stack buffer and end in one append, so nothing is
// allocated when `out` has capacity; larger ones are written in place in
// `out` after growing it.
#include "trace_format/wire.hpp"

#include "trace_format/call_semantics.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "trace_format/varint.hpp"

namespace smtrace::format {

using detail::packed_bound;
using detail::varint_size;
using detail::VarintWriter;
using detail::WireType;

namespace {

// ---------------------------------------------------------------------------
// CRC-32C, slicing by 8 (reflected polynomial 0x82F63B78).

constexpr std::array<std::array<uint32_t, 256>, 8> make_crc_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (std::size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

constexpr auto k_crc_tables = make_crc_tables();

// The CRC32 instruction's raw state (no inversions) after `n` more zero
// bytes is a linear map of the state before: a 32 x 32 matrix over GF(2),
// kept as the images of the 32 unit vectors. Three independent streams
// over consecutive blocks are joined with it (crc32c_hw).
using Gf2Matrix = std::array<uint32_t, 32>;
constexpr uint32_t gf2_times(const Gf2Matrix& m, uint32_t v) {
  uint32_t out = 0;
  for (int i = 0; v; ++i, v >>= 1)
    if (v & 1) out ^= m[static_cast<std::size_t>(i)];
  return out;
}
constexpr Gf2Matrix gf2_product(const Gf2Matrix& a, const Gf2Matrix& b) {  // a after b
  Gf2Matrix out{};
  for (std::size_t i = 0; i < 32; ++i) out[i] = gf2_times(a, b[i]);
  return out;
}
// The map of `bytes` zero bytes, by squaring the map of one zero bit.
constexpr Gf2Matrix crc_zeros(uint64_t bytes) {
  Gf2Matrix bit{};
  for (std::size_t i = 0; i < 32; ++i) {
    const uint32_t v = uint32_t{1} << i;
    bit[i] = (v & 1) ? (v >> 1) ^ 0x82F63B78u : v >> 1;
  }
  Gf2Matrix out{};
  for (std::size_t i = 0; i < 32; ++i) out[i] = uint32_t{1} << i;
  for (uint64_t n = bytes * 8; n; n >>= 1) {
    if (n & 1) out = gf2_product(bit, out);
    bit = gf2_product(bit, bit);
  }
  return out;
}
// A matrix as four tables, one per byte of the state: four loads to apply.
using CrcShift = std::array<std::array<uint32_t, 256>, 4>;
constexpr CrcShift crc_shift_tables(uint64_t bytes) {
  const Gf2Matrix m = crc_zeros(bytes);
  CrcShift t{};
  for (std::size_t k = 0; k < 4; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = gf2_times(m, b << (8 * k));
  return t;
}
[[maybe_unused]] uint32_t crc_shift(const CrcShift& t, uint32_t v) {
  return t[0][v & 0xFF] ^ t[1][(v >> 8) & 0xFF] ^ t[2][(v >> 16) & 0xFF] ^ t[3][v >> 24];
}
// crc32c_hw's blocks: three streams of k_crc_block bytes each at a time.
inline constexpr std::size_t k_crc_block = 1024;
[[maybe_unused]] constexpr CrcShift k_crc_shift_1 = crc_shift_tables(k_crc_block);
[[maybe_unused]] constexpr CrcShift k_crc_shift_2 = crc_shift_tables(2 * k_crc_block);

void put_u32le(unsigned char* dst, uint32_t v) {
  dst[0] = static_cast<unsigned char>(v);
  dst[1] = static_cast<unsigned char>(v >> 8);
  dst[2] = static_cast<unsigned char>(v >> 16);
  dst[3] = static_cast<unsigned char>(v >> 24);
}

// Chunk field numbers.
enum ChunkField : uint32_t {
  k_info = 1, k_event = 2, k_site = 3, k_module = 4, k_comm = 5,
  k_datatype = 6, k_end = 7, k_note = 8,
};

inline constexpr std::size_t k_stack_record = 2048;

// Append one length-delimited record (field `field` of the enclosing message)
// whose payload `fill` writes, taking at most `bound` bytes.
template <class Fill>
void append_record(std::string& out, uint32_t field, std::size_t bound, Fill&& fill) {
  constexpr std::size_t k_head_room = 16;  // tag (<= 5) + length (<= 10)
  const std::size_t tag_size = varint_size(static_cast<uint64_t>(field) << 3);
  if (bound <= k_stack_record) {
    unsigned char buf[k_head_room + k_stack_record];
    VarintWriter w{buf + k_head_room};
    fill(w);
    std::size_t len = static_cast<std::size_t>(w.p - (buf + k_head_room));
    unsigned char* start = buf + k_head_room - tag_size - varint_size(len);
    VarintWriter h{start};
    h.tag(field, WireType::len);
    h.varint(len);
    out.append(reinterpret_cast<const char*>(start), tag_size + varint_size(len) + len);
    return;
  }
  const std::size_t old = out.size();
  out.resize(old + k_head_room + bound);
  auto* base = reinterpret_cast<unsigned char*>(out.data()) + old;
  VarintWriter w{base + k_head_room};
  fill(w);
  std::size_t len = static_cast<std::size_t>(w.p - (base + k_head_room));
  VarintWriter h{base};
  h.tag(field, WireType::len);
  h.varint(len);
  std::memmove(h.p, base + k_head_room, len);
  out.resize(old + static_cast<std::size_t>(h.p - base) + len);
}

// Write one length-delimited record of Chunk field `field` (< 16: a one-byte
// tag) at `dst`, all but its tag byte; return its size. The payload goes
// after a one-byte length and moves right in the rare case it needs more.
template <class Fill>
std::size_t put_record_at(unsigned char* dst, Fill&& fill) {
  VarintWriter w{dst + 2};
  fill(w);
  auto len = static_cast<std::size_t>(w.p - (dst + 2));
  if (len < 0x80) {
    dst[1] = static_cast<unsigned char>(len);
    return 2 + len;
  }
  std::size_t n = varint_size(len);
  std::memmove(dst + 1 + n, dst + 2, len);
  VarintWriter h{dst + 1};
  h.varint(len);
  return 1 + n + len;
}

// is_default without a branch per member: most records have no status,
// asked once for the record and its entry flag (Outputs).
inline bool hot_default(const Status& s) {
  return (s.source.has_value() | s.tag.has_value() | s.count.has_value() | s.cancelled | (s.error != 0)) == 0;
}

// VarintWriter for the event encoders' scalar fields: the same bytes, with the
// lengths of most hot values (1 to 3 bytes: handles, counts, sites, time
// deltas and durations under 2 ms) stored straight, without the loop's
// test and shift per byte; longer values go on in the loop. Exactly the
// varint's bytes are stored, nothing past them (the bytes after a record
// must stay zero until the next one is published).
struct HotWriter : VarintWriter {
  [[gnu::always_inline]] void varint(uint64_t v) {
    if (v < 0x80) {
      *p++ = static_cast<unsigned char>(v);
      return;
    }
    p[0] = static_cast<unsigned char>(v | 0x80);
    if (v < 0x4000) {
      p[1] = static_cast<unsigned char>(v >> 7);
      p += 2;
      return;
    }
    p[1] = static_cast<unsigned char>((v >> 7) | 0x80);
    if (v < 0x200000) {
      p[2] = static_cast<unsigned char>(v >> 14);
      p += 3;
      return;
    }
    p += 2;
    VarintWriter::varint(v >> 14);
  }
  [[gnu::always_inline]] void u(uint32_t field, uint64_t value) {
    if (value != 0) {
      tag(field, WireType::varint);
      varint(value);
    }
  }
  [[gnu::always_inline]] void i(uint32_t field, int64_t value) { u(field, static_cast<uint64_t>(value)); }
  [[gnu::always_inline]] void s(uint32_t field, int64_t value) { u(field, detail::zigzag(value)); }
  [[gnu::always_inline]] void s32(uint32_t field, int32_t value) { u(field, detail::zigzag32(value)); }
  [[gnu::always_inline]] void opt_s32(uint32_t field, const std::optional<int32_t>& value) {
    if (value) {
      tag(field, WireType::varint);
      varint(detail::zigzag32(*value));
    }
  }
};

constexpr std::size_t k_status_bound = 2 + 3 * detail::k_max_scalar_field + 2 * 12;

bool is_default(const Status& s) {
  return !s.source && !s.tag && !s.count && !s.cancelled && s.error == 0;
}

// Write status `s` as field `field` at `p`; return the end. The writer
// goes by value, in and out: a VarintWriter whose address reaches a
// function that is not inlined lives in memory, and every byte stored
// through it may alias its own pointer, which then goes back to memory and
// is read again after each store of the caller's whole record.
unsigned char* write_status_fields(unsigned char* p, uint32_t field, const Status& s) {
  VarintWriter w{p};
  unsigned char* mark = w.begin_nested(field);
  w.opt_s32(1, s.source);
  w.opt_s32(2, s.tag);
  w.opt_i(3, s.count);
  w.u(4, s.cancelled);
  w.i(5, s.error);
  w.end_nested(mark);
  return w.p;
}
// Most records have no status: the test inline, the writing out of line.
template <class Writer>
inline void write_status(Writer& w, uint32_t field, const Status& s) {
  if (!is_default(s)) w.p = write_status_fields(w.p, field, s);
}

// The bytes of one CompletedRequest (tag, length, index, request, status).
constexpr std::size_t k_completed_bound = 12 + 2 * detail::k_max_scalar_field + k_status_bound;

std::size_t event_bound(const Event& e) {
  // 66 scalar fields, the status, and the repeated ones.
  std::size_t n = 66 * detail::k_max_scalar_field + k_status_bound;
  if (!e.stack.empty()) n += packed_bound(e.stack.size());
  if (!e.counts.empty()) n += packed_bound(e.counts.size());
  if (!e.displs.empty()) n += packed_bound(e.displs.size());
  if (!e.datatypes.empty()) n += packed_bound(e.datatypes.size());
  if (!e.recv_counts.empty()) n += packed_bound(e.recv_counts.size());
  if (!e.recv_displs.empty()) n += packed_bound(e.recv_displs.size());
  if (!e.recv_datatypes.empty()) n += packed_bound(e.recv_datatypes.size());
  if (!e.requests.empty()) n += packed_bound(e.requests.size());
  n += e.completed.size() * k_completed_bound;
  n += e.args.size() * (12 + 4 * detail::k_max_scalar_field);
  return n;
}

// The completed requests (33) and flag (35) of an event: outputs of the
// completion calls, which the encoder writes after the requests (32).
// Always inlined: a writer whose address reaches a function that is not
// lives in memory (write_status_fields).
template <class Writer, class List>
[[gnu::always_inline]] inline void write_completions(Writer& w, const List& completed,
                                                     const std::optional<bool>& flag) {
  for (const CompletedRequest& c : completed) {
    unsigned char* mark = w.begin_nested(33);
    w.u(1, c.index);
    w.u(2, c.request);
    write_status(w, 3, c.status);
    w.end_nested(mark);
  }
  if (flag) {
    w.tag(35, WireType::varint);
    w.varint(*flag ? 1 : 0);
  }
}

// Which of a HotEvent's groups of fields a record may have: those most hot
// calls lack are tested as groups of zeros, one branch a group (for a
// HotEvent), or written without a test where the call is known to have
// them, or skipped where it is known not to (HotGroups, wire.hpp). An Event's
// fields are tested one by one, as with `yes`.
template <class E>
inline constexpr bool k_grouped = std::is_same_v<E, HotEvent>;

// The requests and their completion (31-35): a Send, Recv or Put has none.
template <HotGroups G, class E>
[[gnu::always_inline]] inline bool has_requests(const E& e) {
  if constexpr (!k_grouped<E> || G.requests == HotGroups::yes) return true;
  else if constexpr (G.requests == HotGroups::no) return false;
  else return (e.request | e.requests.size() | e.completed.size() | e.flag.has_value()) != 0;
}
// The window and target (41, 45-47): a point-to-point call has none.
template <HotGroups G, class E>
[[gnu::always_inline]] inline bool has_rma(const E& e) {
  if constexpr (!k_grouped<E> || G.rma == HotGroups::yes) return true;
  else if constexpr (G.rma == HotGroups::no) return false;
  else return (e.window | e.target_disp | static_cast<uint64_t>(e.target_count) | e.target_datatype) != 0;
}

// Whether a record has a status, and any output (duration 5, rc 11, status
// 34: an entry and an untimed non-blocking call have none), tested before
// its fields are written (a byte stored through the writer may alias the
// event, whose fields a test after it loads again), once for the record
// and its entry flag (stream_event_at).
struct Outputs {
  bool status;
  bool any;
};
template <HotGroups G, class E>
[[gnu::always_inline]] inline Outputs outputs_of(const E& e) {
  if constexpr (k_grouped<E> && G.outputs == HotGroups::no) {
    return {false, false};
  } else {
    const bool status = !hot_default(e.status);
    return {status, (e.duration | static_cast<uint32_t>(e.rc) | status) != 0};
  }
}

// Write the input fields of `e` after the identity and time fields, which
// the caller writes in its coding (stream or completion); the outputs
// duration, rc and status follow (write_outputs). E: Event, or HotEvent
// (RecordEncoder::hot_event_at), which has only some of the fields: the
// others are at their defaults, which are not written, so the one order
// here serves both and the records agree byte for byte. G: the HotEvent's
// groups (has_requests, has_rma).
template <HotGroups G = HotGroups{}, class Writer, class E>
[[gnu::always_inline]] inline void write_event_body(Writer& w, const E& e) {
  constexpr bool full = std::is_same_v<E, Event>;
  w.u(8, e.site);
  if constexpr (full) {
    w.packed(9, e.stack);
    w.u(10, e.repeat);
  }
  w.u(12, e.comm);
  w.opt_s32(13, e.peer);
  w.opt_s32(14, e.tag);
  // 15 (buf) is written by the caller.
  w.i(16, e.count);
  w.u(17, e.datatype);
  if constexpr (full) {
    w.s(18, static_cast<int64_t>(e.recv_buf));
    w.i(19, e.recv_count);
    w.u(20, e.recv_datatype);
    w.packed(21, e.counts);
    w.packed(22, e.displs);
    w.packed(23, e.datatypes);
    w.packed(24, e.recv_counts);
    w.packed(25, e.recv_displs);
    w.packed(26, e.recv_datatypes);
    w.opt_s32(27, e.recv_peer);
    w.opt_s32(28, e.recv_tag);
    w.u(29, e.op);
    w.u(30, e.in_place);
  }
  if (has_requests<G>(e)) {
    w.u(31, e.request);
    w.packed(32, e.requests);
    write_completions(w, e.completed, e.flag);
  }
  if constexpr (full) {
    w.u(36, e.new_comm);
    w.s32(37, e.color);
    w.s32(38, e.key);
    w.u(39, e.group);
    w.u(40, e.new_datatype);
  }
  const bool rma = has_rma<G>(e);
  if (rma) w.u(41, e.window);
  if constexpr (full) {
    w.u(42, e.win_base);
    w.u(43, e.win_size);
    w.i(44, e.disp_unit);
  }
  if (rma) {
    w.u(45, e.target_disp);
    w.i(46, e.target_count);
    w.u(47, e.target_datatype);
  }
  if constexpr (full) {
    w.s(48, static_cast<int64_t>(e.result_buf));
    w.i(49, e.result_count);
    w.u(50, e.result_datatype);
    w.s(51, static_cast<int64_t>(e.compare_buf));
    w.u(52, static_cast<uint64_t>(e.lock_type));
    w.u(53, e.assert_flags);
    w.u(54, e.size);
    w.i(56, e.stride);
    w.u(57, e.stream);
    w.u(58, e.cuda_event);
    w.u(59, e.kernel);
    for (const KernelArg& a : e.args) {
      unsigned char* mark = w.begin_nested(60);
      w.u(1, a.index);
      w.u(2, a.addr);
      w.u(3, a.size);
      w.u(4, static_cast<uint64_t>(a.access));
      w.end_nested(mark);
    }
    w.u(61, static_cast<uint64_t>(e.memory));
    w.u(62, static_cast<uint64_t>(e.recv_memory));
    w.u(63, static_cast<uint64_t>(e.copy_kind));
    w.u(64, e.flags);
    w.u(65, e.message);
    w.u(66, e.peer_comm);
  }
}

// The outputs every call has, after its inputs: duration (5), rc (11),
// status (34). A blocking call's entry has none of them and ends with its
// pending field (6, written after them), so its complete event is the
// entry up to that field followed by these (write_entry_outputs).
// `status`: whether `s` is not at its default, when the caller asked
// (Outputs); else tested here, after the other outputs' stores.
template <class Writer>
[[gnu::always_inline]] inline void write_outputs(Writer& w, uint64_t duration, int32_t rc, const Status& s,
                                                 const bool* status = nullptr) {
  w.u(5, duration);
  w.s32(11, rc);
  if (status ? *status : !is_default(s)) w.p = write_status_fields(w.p, 34, s);
}

}  // namespace

unsigned char* write_entry_outputs(unsigned char* at, uint64_t duration, int32_t rc, const Status& status) {
  VarintWriter w{at};
  write_outputs(w, duration, rc, status);
  return w.p;
}

unsigned char* write_entry_completion(unsigned char* at, const CompletedRequest* completed, std::size_t n_completed,
                                      const std::optional<bool>& flag, uint64_t duration, int32_t rc,
                                      const Status& status) {
  VarintWriter w{at};
  write_completions(w, std::span<const CompletedRequest>(completed, n_completed), flag);
  write_outputs(w, duration, rc, status);
  return w.p;
}

std::size_t entry_completion_bound(std::size_t n_completed) {
  return k_entry_outputs_bound + 3 + n_completed * k_completed_bound;
}

uint32_t crc32c_portable(const void* data, std::size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  const auto& t = k_crc_tables;
  crc = ~crc;
  while (size >= 8) {
    uint32_t lo = crc ^ (static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

namespace {

// The CRC32 instruction computes exactly CRC-32C's reflected update (no
// initial or final inversion), 8 bytes at a time.
#if defined(__x86_64__)
// The instruction's latency is three times its throughput: in runs of three
// blocks, three streams go side by side (the first from the state so far,
// the others from 0), then the first two are carried over the blocks after
// them (k_crc_shift_*) and the three added.
__attribute__((target("sse4.2"))) uint32_t crc32c_hw(const void* data, std::size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t c = ~crc;
  for (; size >= 3 * k_crc_block; p += 3 * k_crc_block, size -= 3 * k_crc_block) {
    uint64_t b = 0, d = 0;
    for (std::size_t i = 0; i < k_crc_block; i += 8) {
      uint64_t u, v, w;
      std::memcpy(&u, p + i, 8);
      std::memcpy(&v, p + k_crc_block + i, 8);
      std::memcpy(&w, p + 2 * k_crc_block + i, 8);
      c = _mm_crc32_u64(c, u);
      b = _mm_crc32_u64(b, v);
      d = _mm_crc32_u64(d, w);
    }
    c = crc_shift(k_crc_shift_2, static_cast<uint32_t>(c)) ^ crc_shift(k_crc_shift_1, static_cast<uint32_t>(b)) ^ d;
  }
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; size > 0; ++p, --size) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
bool detect_hw() noexcept {
  __builtin_cpu_init();  // may run before libgcc's own constructor did
  return __builtin_cpu_supports("sse4.2");
}
#define SMTRACE_CRC_HW 1
#elif defined(__aarch64__) && defined(__linux__) && defined(HWCAP_CRC32)
__attribute__((target("+crc"))) uint32_t crc32c_hw(const void* data, std::size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __crc32cd(c, v);
  }
  for (; size > 0; ++p, --size) c = __crc32cb(c, *p);
  return ~c;
}
bool detect_hw() noexcept { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#define SMTRACE_CRC_HW 1
#else
bool detect_hw() noexcept { return false; }
#endif

}  // namespace

bool crc32c_hardware() noexcept {
  static const bool hw = detect_hw();  // on first use: static initializers may checksum
  return hw;
}

uint32_t crc32c(const void* data, std::size_t size, uint32_t crc) {
#ifdef SMTRACE_CRC_HW
  if (crc32c_hardware()) return crc32c_hw(data, size, crc);
#endif
  return crc32c_portable(data, size, crc);
}

void write_frame_header(unsigned char* dst, std::string_view payload) {
  put_u32le(dst, static_cast<uint32_t>(payload.size()));
  put_u32le(dst + 4, crc32c(payload.data(), payload.size()));
}

void append_frame_header(std::string& out, std::string_view payload) {
  unsigned char head[k_frame_header_size];
  write_frame_header(head, payload);
  out.append(reinterpret_cast<const char*>(head), sizeof head);
}

std::string encode_rank_header(const RankHeader& h) {
  std::size_t bound = 16 * detail::k_max_scalar_field + h.host.size() + h.mpi_library.size() +
                      h.tracer_version.size() + h.executable.size();
  for (const auto& [key, value] : h.options) bound += 3 * 12 + key.size() + value.size();
  for (const std::string& arg : h.argv) bound += 12 + arg.size();
  std::string out;
  out.resize(bound);
  VarintWriter w{reinterpret_cast<unsigned char*>(out.data())};
  w.u(1, h.format_version);
  w.u(2, h.rank);
  w.u(3, h.world_size);
  w.bytes(4, h.host);
  w.u(5, h.pid);
  w.bytes(6, h.mpi_library);
  w.u(7, h.mpi_version);
  w.u(8, static_cast<uint64_t>(h.clock));
  w.i(9, h.clock_origin_ns);
  w.i(10, h.realtime_origin_ns);
  w.bytes(11, h.tracer_version);
  for (const auto& [key, value] : h.options) {
    unsigned char* mark = w.begin_nested(12);
    w.bytes(1, key);
    w.bytes(2, value);
    w.end_nested(mark);
  }
  w.bytes(13, h.executable);
  for (const std::string& arg : h.argv) w.bytes_always(14, arg);
  w.i(15, h.thread_level);
  w.u(16, h.chunk_bytes);
  // Always written (two bytes, also when 0): the tracer sets the bits in
  // place once it records the first event of each kind.
  w.opt_u(17, uint64_t{h.thread_sync});
  out.resize(static_cast<std::size_t>(w.p - reinterpret_cast<unsigned char*>(out.data())));
  return out;
}

void RecordEncoder::begin_chunk(std::string& out, uint64_t first_seq, int64_t t_base,
                                uint32_t index) {
  append_record(out, k_info, 3 * detail::k_max_scalar_field, [&](VarintWriter& w) {
    w.u(1, first_seq);
    w.i(2, t_base);
    w.u(3, index);
  });
  m_next_seq = first_seq;
  m_last_seq = first_seq - 1;  // wraps for 0: completions before any event are meaningless
  m_last_t = t_base;
  m_last_buf = 0;
}

namespace {
// The two ways to write a record: appended to a string, or in place.
struct AppendSink {
  std::string& out;
  template <class Fill>
  void operator()(std::size_t bound, Fill&& fill) {
    append_record(out, k_event, bound, fill);
  }
};
struct InPlaceSink {
  unsigned char* dst;
  std::size_t size = 0;
  template <class Fill>
  void operator()(std::size_t, Fill&& fill) {
    size = put_record_at(dst, fill);
  }
};
}  // namespace

// The fields of an event in stream coding that come before its body (1-4,
// then 15, buf: against the stream state for a call with a buffer, as it is
// for the others, format version 2), for Event and HotEvent alike.
template <class Writer, class E>
inline void RecordEncoder::write_stream_head(Writer& w, const E& e) {
  if (e.seq != m_next_seq) {
    w.tag(1, WireType::varint);
    w.varint(e.seq);
  }
  w.u(2, static_cast<uint64_t>(e.call));
  w.u(3, e.thread);
  w.s(4, static_cast<int64_t>(static_cast<uint64_t>(e.t_start) - static_cast<uint64_t>(m_last_t)));
  w.s(15, static_cast<int64_t>(e.buf - (buf_in_stream(e.call) ? m_last_buf : 0)));
}

namespace {
// The fields of an event in stream coding after its body: its outputs
// (`o`: outputs_of(e)), then pending (6), last.
template <HotGroups G, class Writer, class E>
[[gnu::always_inline]] inline void write_stream_tail(Writer& w, const E& e, Outputs o) {
  if (o.any) write_outputs(w, e.duration, e.rc, e.status, &o.status);
  w.u(6, e.pending);
}
}  // namespace

// Move the stream state past event `e`.
template <class E>
inline void RecordEncoder::advance(const E& e) {
  m_last_seq = e.seq;
  m_next_seq = e.seq + 1;
  m_last_t = e.t_start;
  if (buf_in_stream(e.call)) m_last_buf = e.buf;
}

// Write `e` in stream coding at `out`: head, body, tail, the one order of
// the fields, for Event and HotEvent alike. Return whether it has outputs
// (outputs_of, asked before any byte is stored).
template <HotGroups G, class E>
[[gnu::always_inline]] inline bool RecordEncoder::write_stream_event(VarintWriter& out, const E& e) {
  const Outputs o = outputs_of<G>(e);
  HotWriter w{{out.p}};
  write_stream_head(w, e);
  write_event_body<G>(w, e);
  write_stream_tail<G>(w, e, o);
  out.p = w.p;
  return o.any;
}

// event_at and hot_event_at: write `e` at `dst` and move the stream state
// past it.
template <HotGroups G, class E>
[[gnu::always_inline]] inline std::size_t RecordEncoder::stream_event_at(unsigned char* dst, const E& e,
                                                                         bool* entry) {
  bool outputs = false;
  const std::size_t size = put_record_at(
      dst, [&](VarintWriter& w) __attribute__((always_inline)) { outputs = write_stream_event<G>(w, e); });
  advance(e);
  // An entry that Recorder::complete_last can finish with
  // write_entry_outputs: pending, no outputs, a one-byte length (`size`,
  // a tag, a length and the body, is at least 2).
  if (entry) *entry = e.pending && !outputs && size - 2 < 0x80;
  return size;
}

bool hot_groups_hold(HotGroups g, const HotEvent& e) {
  constexpr HotGroups k_tested{};  // every group `maybe`: tested as the encoder tests it
  return !(g.requests == HotGroups::no && has_requests<k_tested>(e)) &&
         !(g.rma == HotGroups::no && has_rma<k_tested>(e)) && !(g.outputs == HotGroups::no && outputs_of<k_tested>(e).any);
}

#ifdef SMTRACE_CHECK_HOT_GROUPS
namespace {
// A caller of hot_event_at<g> set a field of a group `g` says `no`
// (hot_groups_hold): that field would not be written. Say which and abort.
[[noreturn, gnu::cold]] void hot_groups_broken(HotGroups g, const HotEvent& e) {
  std::fprintf(stderr,
               "smtrace: hot_event_at: call %d sets a field of a group its HotGroups says `no` "
               "(requests %d, rma %d, outputs %d; 0 no, 1 yes, 2 maybe): it would be lost on the wire\n",
               static_cast<int>(e.call), g.requests, g.rma, g.outputs);
  std::abort();
}
}  // namespace
#endif

// event_at of a HotEvent, with its groups G (wire.hpp).
template <HotGroups G>
std::size_t RecordEncoder::hot_event_at(unsigned char* dst, const HotEvent& e, bool* entry) {
#ifdef SMTRACE_CHECK_HOT_GROUPS
  if (!hot_groups_hold(G, e)) hot_groups_broken(G, e);
#endif
  return stream_event_at<G>(dst, e, entry);
}
#define SMTRACE_HOT_EVENT_AT(G) template std::size_t RecordEncoder::hot_event_at<G>(unsigned char*, const HotEvent&, bool*);
SMTRACE_HOT_GROUP_SETS(SMTRACE_HOT_EVENT_AT)
#undef SMTRACE_HOT_EVENT_AT

// Tag and length, 20 scalar fields (the head's 7 and 13 of the body), the
// status, and the longest requests and completed lists.
const std::size_t RecordEncoder::k_hot_record_bound =
    1 + 10 + 20 * detail::k_max_scalar_field + k_status_bound + packed_bound(HotEvent::k_max_requests) +
    HotEvent::k_max_requests * k_completed_bound;

Event HotEvent::to_event() const {
  Event e;
  e.seq = seq;
  e.call = call;
  e.thread = thread;
  e.t_start = t_start;
  e.duration = duration;
  e.pending = pending;
  e.site = site;
  e.rc = rc;
  e.comm = comm;
  e.peer = peer;
  e.tag = tag;
  e.buf = buf;
  e.count = count;
  e.datatype = datatype;
  e.request = request;
  e.requests.assign(requests.begin(), requests.end());
  e.completed.assign(completed.begin(), completed.end());
  e.status = status;
  e.flag = flag;
  e.window = window;
  e.target_disp = target_disp;
  e.target_count = target_count;
  e.target_datatype = target_datatype;
  return e;
}

template <class Sink>
void RecordEncoder::completion_into(Sink&& sink, uint64_t completed_seq, const Event& end) {
  sink(event_bound(end), [&](VarintWriter& out) {
    HotWriter w{{out.p}};
    w.u(2, static_cast<uint64_t>(end.call));
    w.u(3, end.thread);
    w.tag(7, WireType::varint);
    w.varint(m_last_seq - completed_seq + 1);
    // In a completion record buf is absolute: it is not part of the stream.
    w.s(15, static_cast<int64_t>(end.buf));
    write_event_body(w, end);
    write_outputs(w, end.duration, end.rc, end.status);
    out.p = w.p;
  });
}

void RecordEncoder::event(std::string& out, const Event& e) {
  append_record(out, k_event, event_bound(e), [&](VarintWriter& w) { write_stream_event<HotGroups{}>(w, e); });
  advance(e);
}

void RecordEncoder::completion(std::string& out, uint64_t completed_seq, const Event& end) {
  completion_into(AppendSink{out}, completed_seq, end);
}

std::size_t RecordEncoder::event_at(unsigned char* dst, const Event& e, bool* entry) {
  return stream_event_at<HotGroups{}>(dst, e, entry);
}

std::size_t RecordEncoder::completion_at(unsigned char* dst, uint64_t completed_seq, const Event& end) {
  InPlaceSink sink{dst};
  completion_into(sink, completed_seq, end);
  return sink.size;
}

std::size_t RecordEncoder::record_bound(const Event& e) { return 1 + 10 + event_bound(e); }

void RecordEncoder::site(std::string& out, const CallSite& s) {
  append_record(out, k_site, 6 * detail::k_max_scalar_field + s.function.size() + s.file.size(),
                [&](VarintWriter& w) {
                  w.u(1, s.id);
                  w.u(2, s.module);
                  w.u(3, s.offset);
                  w.bytes(4, s.function);
                  w.bytes(5, s.file);
                  w.u(6, s.line);
                  w.u(7, s.column);
                });
}

void RecordEncoder::module(std::string& out, const Module& m) {
  append_record(out, k_module, 4 * detail::k_max_scalar_field + m.path.size() + m.build_id.size(),
                [&](VarintWriter& w) {
                  w.u(1, m.id);
                  w.bytes(2, m.path);
                  w.u(3, m.base);
                  w.bytes(4, m.build_id);
                });
}

void RecordEncoder::comm(std::string& out, const CommDef& c) {
  append_record(out, k_comm,
                5 * detail::k_max_scalar_field + packed_bound(c.world_ranks.size()) +
                    packed_bound(c.remote_world_ranks.size()) + packed_bound(c.sources.size()) +
                    packed_bound(c.destinations.size()),
                [&](VarintWriter& w) {
                  w.u(1, c.id);
                  w.packed(2, c.world_ranks);
                  w.u(3, c.parent);
                  w.u(4, c.is_group);
                  w.u(5, c.inter);
                  w.packed(6, c.remote_world_ranks);
                  w.u(7, static_cast<uint64_t>(c.topology));
                  w.packed(8, c.sources);
                  w.packed(9, c.destinations);
                });
}

void RecordEncoder::datatype(std::string& out, const DatatypeDef& t) {
  constexpr std::size_t k_run = 12 + 4 * detail::k_max_scalar_field;
  constexpr std::size_t k_type_count = 12 + 2 * detail::k_max_scalar_field;
  append_record(out, k_datatype,
                9 * detail::k_max_scalar_field + t.runs.size() * k_run +
                    t.signature.size() * k_type_count,
                [&](VarintWriter& w) {
                  w.u(1, t.id);
                  w.u(2, static_cast<uint64_t>(t.combiner));
                  w.u(3, t.size);
                  w.i(4, t.lb);
                  w.i(5, t.extent);
                  for (const Run& r : t.runs) {
                    unsigned char* mark = w.begin_nested(6);
                    w.i(1, r.offset);
                    w.u(2, r.length);
                    // The struct says 1 for a single block, the wire says 0.
                    w.u(3, r.count == 1 ? 0 : r.count);
                    w.i(4, r.stride);
                    w.end_nested(mark);
                  }
                  for (const TypeCount& tc : t.signature) {
                    unsigned char* mark = w.begin_nested(7);
                    w.u(1, tc.type);
                    w.u(2, tc.count);
                    w.end_nested(mark);
                  }
                  w.u(8, t.committed);
                  w.u(9, t.truncated);
                });
}

void RecordEncoder::termination(std::string& out, const Termination& end) {
  append_record(out, k_end, 8 * detail::k_max_scalar_field + end.message.size(),
                [&](VarintWriter& w) {
                  w.u(1, static_cast<uint64_t>(end.kind));
                  w.i(2, end.signal);
                  w.i(3, end.t);
                  w.bytes(4, end.message);
                  w.u(5, end.last_seq);
                  w.u(6, end.events);
                  w.u(7, end.dropped);
                  w.u(8, end.accesses_lost);
                });
}

void RecordEncoder::note(std::string& out, const TracerNote& n) {
  append_record(out, k_note, 2 * detail::k_max_scalar_field + n.message.size(),
                [&](VarintWriter& w) {
                  w.i(1, n.t);
                  w.bytes(2, n.message);
                });
}

}  // namespace smtrace::format
