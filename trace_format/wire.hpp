// Protobuf wire coding of the trace format (k_format_version), written by hand so that the tracer
// needs no libprotobuf (an application may link its own, of another version).
// tests/unit/test_trace_format_wire.cpp parses these bytes with libprotobuf.
//
// Thread safety: a RecordEncoder is not thread safe; the tracer serializes
// calls to it. The free functions are.
//
// Cost: an ordinary event is encoded in a stack buffer and appended to `out`
// in one piece, so nothing is allocated when `out` has capacity (about 20 ns
// and 20 bytes for a Send). docs/trace-format.md specifies the coding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "trace_format/event.hpp"

namespace smtrace::format {

// Rank files and symbols.smt start with these 8 bytes.
inline constexpr char k_magic[8] = {'\x89', 'S', 'M', 'T', 'R', 'C', '\r', '\n'};
inline constexpr std::size_t k_magic_size = sizeof(k_magic);

// After the magic come frames: u32 little-endian payload length, u32
// little-endian CRC-32C of the payload, payload. The first frame's payload is
// a RankHeader, the others are Chunks.
inline constexpr std::size_t k_frame_header_size = 8;
// Length of a chunk the tracer has not sealed yet (the rank stopped while it
// was open): its records run until a zero byte where a record would start, or
// the end of the file.
inline constexpr uint32_t k_open_frame = 0xFFFFFFFFu;
// No frame is longer; a longer length prefix is corruption.
inline constexpr uint32_t k_max_frame_bytes = 64u << 20;

// Return the CRC-32C (Castagnoli) of `data`, continuing from `crc`. Uses the
// CPU's CRC32 instruction where there is one (SSE4.2 on x86-64, the CRC
// extension on aarch64; detected at run time), table-driven code otherwise.
uint32_t crc32c(const void* data, std::size_t size, uint32_t crc = 0);
// Return what crc32c returns, always with the table-driven code (for tests).
uint32_t crc32c_portable(const void* data, std::size_t size, uint32_t crc = 0);
// Return true when crc32c uses the CPU's CRC32 instruction.
bool crc32c_hardware() noexcept;

// Append the frame header for `payload` (sealed: length and CRC) to `out`.
void append_frame_header(std::string& out, std::string_view payload);
// Write the frame header of `payload` into `dst` (8 bytes).
void write_frame_header(unsigned char* dst, std::string_view payload);

// Return the RankHeader message's bytes (the first frame's payload).
std::string encode_rank_header(const RankHeader& header);

// An event record in stream coding ends with the outputs every call has,
// after all its inputs: duration (5), rc (11), status (34), then pending
// (6). So a blocking call's entry record (pending set, none of those
// outputs) ends with its pending field, two bytes, and the complete event
// is byte for byte the entry up to that field followed by the outputs:
// write them at `pending` (where the entry's pending field starts; room
// for k_entry_outputs_bound bytes) and return their end. Nothing of the
// entry is read or moved.
unsigned char* write_entry_outputs(unsigned char* pending, uint64_t duration, int32_t rc, const Status& status);
// write_entry_outputs for a completion call's entry (Wait, Waitall,
// Waitany, Waitsome: their last input is the requests list, 32): the
// complete event's completed requests (33) and flag (35), where the
// encoder writes them after the inputs, then the outputs. The complete
// event only if the entry has no input numbered above 33 (window 41,
// target 45-47; the caller checks: completion_ends_entry). Room for
// entry_completion_bound(n_completed) bytes at `pending`.
unsigned char* write_entry_completion(unsigned char* pending, const CompletedRequest* completed, std::size_t n_completed,
                                      const std::optional<bool>& flag, uint64_t duration, int32_t rc,
                                      const Status& status);
std::size_t entry_completion_bound(std::size_t n_completed);
// An entry's pending field: tag (6, varint) and 1.
inline constexpr unsigned char k_pending_field[2] = {6 << 3, 1};
inline constexpr std::size_t k_entry_outputs_bound = 64;

// A list of at most N values kept inline (HotEvent's repeated fields):
// nothing is constructed beyond size(), so an empty one costs nothing to make.
// T must be trivially copyable. push_back and resize beyond N are the
// caller's error (the tracer checks HotEvent::k_max_requests first).
template <class T, std::size_t N>
class HotList {
 public:
  static constexpr std::size_t k_capacity = N;
  HotList() noexcept {}  // the storage stays unconstructed
  std::size_t size() const noexcept { return m_size; }
  bool empty() const noexcept { return m_size == 0; }
  void clear() noexcept { m_size = 0; }
  // Make the list `n` long; new values are T{}.
  void resize(std::size_t n) noexcept {
    for (std::size_t i = m_size; i < n; ++i) new (&m_u.v[i]) T{};
    m_size = n;
  }
  void push_back(const T& value) noexcept { new (&m_u.v[m_size++]) T(value); }
  T& operator[](std::size_t i) noexcept { return m_u.v[i]; }
  const T& operator[](std::size_t i) const noexcept { return m_u.v[i]; }
  const T* data() const noexcept { return m_u.v; }
  const T* begin() const noexcept { return m_u.v; }
  const T* end() const noexcept { return m_u.v + m_size; }

 private:
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  std::size_t m_size = 0;
  union Storage {
    Storage() noexcept {}
    T v[N];
  } m_u;
};

// The fields of an Event that the tracer's hottest calls have (point to
// point and one-sided communication, their synchronization and the
// completion of at most k_max_requests requests: Send, Recv, Isend, Irecv,
// Put, Win_flush, Wait, Test, Waitall, Testall ...), for
// RecordEncoder::hot_event_at. Every field of an Event that is not here is
// at its default. to_event() gives the Event it stands for.
struct HotEvent {
  // The most requests (and completed requests) a HotEvent holds.
  static constexpr std::size_t k_max_requests = 16;

  uint64_t seq = 0;
  Call call = Call::unspecified;
  uint32_t thread = 0;
  int64_t t_start = 0;
  uint64_t duration = 0;
  bool pending = false;
  uint32_t site = 0;
  int32_t rc = 0;
  uint32_t comm = 0;
  std::optional<int32_t> peer;
  std::optional<int32_t> tag;
  uint64_t buf = 0;
  int64_t count = 0;
  uint32_t datatype = 0;
  uint64_t request = 0;
  Status status;
  std::optional<bool> flag;
  uint32_t window = 0;
  uint64_t target_disp = 0;
  int64_t target_count = 0;
  uint32_t target_datatype = 0;
  // Last, so that the other fields share a cache line or two.
  HotList<uint64_t, k_max_requests> requests;
  HotList<CompletedRequest, k_max_requests> completed;

  // Every field at its default, which is all zero bytes before `requests`
  // (no optional engaged; the lists' sizes are set by their own
  // initializers): cleared in 16-byte stores instead of one store a field
  // (the compiler drops the default initializers above as overwritten);
  // HotScope builds one per hot call. A unit test checks the result
  // against the defaults.
  HotEvent() noexcept {
    constexpr std::size_t n = offsetof(HotEvent, requests);
    static_assert(n >= 16);
    struct Zero16 {
      uint64_t a, b;
    };
    const Zero16 zero{0, 0};
    auto* p = reinterpret_cast<unsigned char*>(this);
#pragma GCC unroll 16
    for (std::size_t i = 0; i + 16 <= n; i += 16) std::memcpy(p + i, &zero, 16);
    if constexpr (n % 16 != 0) std::memcpy(p + n - 16, &zero, 16);
  }

  // Return the Event with these fields and every other one at its default.
  Event to_event() const;
};

// Which of a HotEvent's groups of fields a record has, where its caller
// knows it at compile time (the tracer's wrappers know the call):
// the requests and their completion (31-35: request, requests, completed,
// flag), the window and target (41, 45-47: window, target_disp,
// target_count, target_datatype), the outputs (5, 11, 34: duration, rc,
// status). `maybe`: the encoder tests the group's fields together, one
// branch, and writes them if any is set; `yes`: it writes them without that
// test (each field is still written only when set: the same bytes as
// `maybe` whatever the values); `no`: it writes none of them, and they must
// all be at their defaults (else the record is not the HotEvent's).
struct HotGroups {
  enum Has : unsigned char { no, yes, maybe };
  Has requests = maybe;
  Has rma = maybe;
  Has outputs = maybe;
};
// The sets of the tracer's wrappers (tracer/wrappers.cpp): point-to-point
// calls without a request (Send, Recv ...), with one or requests to
// complete (Isend, Irecv, the persistent inits, Wait, Test, Waitall ...),
// one-sided communication (Put, Get: a window and a target) and
// synchronization (Win_flush, Win_unlock ...: a window, no target; one test
// of the group's four fields costs less than a test of each).
inline constexpr HotGroups k_hot_p2p{HotGroups::no, HotGroups::no};
inline constexpr HotGroups k_hot_requests{HotGroups::yes, HotGroups::no};
inline constexpr HotGroups k_hot_rma{HotGroups::no, HotGroups::yes};
inline constexpr HotGroups k_hot_rma_sync{HotGroups::no, HotGroups::maybe};
// `g` for a blocking call's entry, which has no outputs yet.
constexpr HotGroups entry_groups(HotGroups g) {
  g.outputs = HotGroups::no;
  return g;
}
// Return whether `e` keeps `g`'s promise: every field of each group `g`
// says `no` at its default. hot_event_at<g> writes none of such a group's
// fields, so one set there would be lost on the wire; a build with
// SMTRACE_CHECK_HOT_GROUPS (a debug or sanitizer build: CMakeLists.txt)
// aborts on it in hot_event_at, and the unit tests check that the records
// differ from event_at's exactly when this is false. (wire.cpp: the
// encoder's own tests of a `maybe` group.)
bool hot_groups_hold(HotGroups g, const HotEvent& e);
// X(G) for every set above and its entry_groups, and the default (any):
// the instantiations of the templates on a set.
#define SMTRACE_HOT_GROUP_SETS(X)                                                                  \
  X(::smtrace::format::HotGroups{}) X(::smtrace::format::entry_groups(::smtrace::format::HotGroups{})) \
  X(::smtrace::format::k_hot_p2p) X(::smtrace::format::entry_groups(::smtrace::format::k_hot_p2p))     \
  X(::smtrace::format::k_hot_requests) X(::smtrace::format::entry_groups(::smtrace::format::k_hot_requests)) \
  X(::smtrace::format::k_hot_rma) X(::smtrace::format::entry_groups(::smtrace::format::k_hot_rma))     \
  X(::smtrace::format::k_hot_rma_sync) X(::smtrace::format::entry_groups(::smtrace::format::k_hot_rma_sync))

// Return true when write_entry_completion's end makes `e`'s entry its
// complete event byte for byte: the encoder writes none of `e`'s inputs
// after the completed requests (33) and flag (35), i.e. `e` has no window
// (41) and no target (45-47), which come after them (write_event_body).
inline bool completion_ends_entry(const HotEvent& e) {
  return e.window == 0 && e.target_disp == 0 && e.target_count == 0 && e.target_datatype == 0;
}

namespace detail {
struct VarintWriter;  // varint.hpp
}

// Appends Chunk records (each one field of the Chunk message) to a buffer,
// keeping the state that the stream coding deltas against.
class RecordEncoder {
 public:
  // Append the ChunkInfo record that opens a chunk; reset the delta state so
  // that the next event is coded against `first_seq` and `t_base`.
  void begin_chunk(std::string& out, uint64_t first_seq, int64_t t_base, uint32_t index);
  // Append `event` in stream coding. `event.seq` must be the next seq
  // (the previous event's + 1, or first_seq) unless it is larger: gaps are
  // allowed and coded explicitly.
  void event(std::string& out, const Event& event);
  // Append a completion record for the pending event `completed_seq`,
  // carrying `end`'s outputs (duration, status, completed, flag, rc,
  // new_comm, new_datatype, window, win_base, win_size, request, ...).
  // Fields of `end` left at their defaults are not written; seq, t_start and
  // pending never are; `end.buf`, when set, is written as an absolute address.
  // The stream state does not change.
  void completion(std::string& out, uint64_t completed_seq, const Event& end);
  // In place, for a writer into memory that a reader may see at any moment
  // (the tracer's mapped file): write the record of `event` (event_at) or of
  // a completion (completion_at) at `dst`, which has room for
  // record_bound(event) bytes, except its first byte, the tag k_event_tag,
  // which the caller stores last; return the record's size. The bytes
  // written are exactly those of event() / completion(), nothing beyond.
  // With `entry`, also say whether the record is a blocking call's entry
  // that write_entry_outputs completes (pending, no outputs, a body of less
  // than 0x80 bytes: a one-byte length).
  std::size_t event_at(unsigned char* dst, const Event& event, bool* entry = nullptr);
  std::size_t completion_at(unsigned char* dst, uint64_t completed_seq, const Event& end);
  static std::size_t record_bound(const Event& event);
  // The tracer's fast path: event_at of `event.to_event()`, byte for byte
  // (the same fields in the same order, the same stream state), written
  // without looking at the fields a HotEvent does not have. `dst` has room
  // for k_hot_record_bound bytes.
  // `entry` as for event_at. G: the groups of fields `event` has (the
  // default: any); wire.cpp instantiates the tracer's sets.
  template <HotGroups G = HotGroups{}>
  std::size_t hot_event_at(unsigned char* dst, const HotEvent& event, bool* entry = nullptr);
  static const std::size_t k_hot_record_bound;
  static constexpr unsigned char k_event_tag = (2 << 3) | 2;  // Chunk.event, length-delimited

  // Append a CallSite record.
  void site(std::string& out, const CallSite& site);
  // Append a Module record.
  void module(std::string& out, const Module& module);
  // Append a CommDef record.
  void comm(std::string& out, const CommDef& comm);
  // Append a DatatypeDef record.
  void datatype(std::string& out, const DatatypeDef& type);
  // Append the Termination record (the last record of a file).
  void termination(std::string& out, const Termination& end);
  // Append a TracerNote record.
  void note(std::string& out, const TracerNote& note);

  // Return the seq that an event without a gap would have next.
  uint64_t next_seq() const { return m_next_seq; }

 private:
  template <HotGroups G, class E>
  [[gnu::always_inline]] bool write_stream_event(detail::VarintWriter& out, const E& event);
  template <HotGroups G, class E>
  [[gnu::always_inline]] std::size_t stream_event_at(unsigned char* dst, const E& event, bool* entry);
  template <class Writer, class E>
  [[gnu::always_inline]] void write_stream_head(Writer& w, const E& event);
  template <class E>
  [[gnu::always_inline]] void advance(const E& event);
  template <class Sink>
  void completion_into(Sink&& sink, uint64_t completed_seq, const Event& end);

  uint64_t m_next_seq = 0;
  uint64_t m_last_seq = 0;
  int64_t m_last_t = 0;
  uint64_t m_last_buf = 0;
};

}  // namespace smtrace::format
