// The coding of trace_format's records (an event above all, and the
// definitions, headers and ends of a rank file) between the processes of one
// smtrace-mpi job: distributed/record_codec's messages of a rank file's
// records, and the events inside the state of rank passes that travel
// (WireWriter / WireReader, analyzer/wire.hpp: a pass that keeps whole events).
// One coding, here, for both.
//
// The coding is plain: fixed-width little-endian fields in declaration
// order, lengths before strings and vectors; an event is a bitmask of the
// fields that differ from a default Event's, then those fields. Made for the
// same build on both ends, never stored.
//
// Thread safety: an Encoder or Decoder is used from one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::analyzer::record_coding {

// The fields of each record type, in one list that both directions walk:
// a new field added to a struct in trace_format/event.hpp must be added
// here (tests/unit/test_distributed_record_codec.cpp compares sizes to
// remind whoever adds one).
template <class V>
void fields(V& v, format::Status& s) {
  v(s.source, s.tag, s.count, s.cancelled, s.error);
}
template <class V>
void fields(V& v, format::CompletedRequest& c) {
  v(c.index, c.request, c.status);
}
template <class V>
void fields(V& v, format::KernelArg& a) {
  v(a.index, a.addr, a.size, a.access);
}
// Inlined into its caller: an event's coder then lives in registers, its
// field index a constant (out of line, coding halo events cost a reader
// about a third more).
template <class V>
[[gnu::always_inline]] inline void fields(V& v, format::Event& e) {
  v(e.seq, e.call, e.thread, e.t_start, e.duration, e.pending, e.site, e.stack, e.repeat, e.rc);
  v(e.comm, e.peer, e.tag, e.buf, e.count, e.datatype, e.recv_buf, e.recv_count, e.recv_datatype);
  v(e.counts, e.displs, e.datatypes, e.recv_counts, e.recv_displs, e.recv_datatypes, e.recv_peer, e.recv_tag,
    e.op, e.in_place);
  v(e.request, e.requests, e.completed, e.status, e.flag);
  v(e.new_comm, e.color, e.key, e.group, e.new_datatype, e.message, e.peer_comm);
  v(e.window, e.win_base, e.win_size, e.disp_unit, e.target_disp, e.target_count, e.target_datatype, e.result_buf,
    e.result_count, e.result_datatype, e.compare_buf, e.lock_type, e.assert_flags);
  v(e.size, e.stride);
  v(e.stream, e.cuda_event, e.kernel, e.args, e.memory, e.recv_memory, e.copy_kind, e.flags);
}
template <class V>
void fields(V& v, format::CallSite& s) {
  v(s.id, s.module, s.offset, s.function, s.file, s.line, s.column);
}
template <class V>
void fields(V& v, format::Module& m) {
  v(m.id, m.path, m.base, m.build_id);
}
template <class V>
void fields(V& v, format::CommDef& c) {
  v(c.id, c.world_ranks, c.parent, c.is_group, c.inter, c.remote_world_ranks, c.topology, c.sources,
    c.destinations);
}
template <class V>
void fields(V& v, format::Run& r) {
  v(r.offset, r.length, r.count, r.stride);
}
template <class V>
void fields(V& v, format::TypeCount& t) {
  v(t.type, t.count);
}
template <class V>
void fields(V& v, format::DatatypeDef& t) {
  v(t.id, t.combiner, t.size, t.lb, t.extent, t.runs, t.signature, t.committed, t.truncated);
}
template <class V>
void fields(V& v, format::Termination& t) {
  v(t.kind, t.signal, t.t, t.message, t.last_seq, t.events, t.dropped);
}
template <class V>
void fields(V& v, format::TracerNote& n) {
  v(n.t, n.message);
}
template <class V>
void fields(V& v, format::Problem& p) {
  v(p.severity, p.file, p.offset, p.rank, p.seq, p.message);
}
template <class V>
void fields(V& v, format::RankHeader& h) {
  v(h.format_version, h.rank, h.world_size, h.host, h.pid, h.mpi_library, h.mpi_version, h.clock,
    h.clock_origin_ns, h.realtime_origin_ns, h.tracer_version, h.options, h.executable, h.argv, h.thread_level,
    h.chunk_bytes, h.thread_sync, h.recovered);
}

template <class V>
void fields(V& v, format::RankTrace& r) {
  v(r.present, r.file, r.header, r.events, r.sites, r.modules, r.comms, r.datatypes, r.end, r.notes, r.problems,
    r.bytes, r.chunks, r.truncated);
}

template <class T>
inline constexpr bool k_plain = std::is_arithmetic_v<T> || std::is_enum_v<T>;
// An optional plain field (an event's peer, tag, flag...).
template <class T>
inline constexpr bool k_plain_optional = false;
template <class T>
inline constexpr bool k_plain_optional<std::optional<T>> = k_plain<T>;

// Writes from byte `at` of `out`, whose size is room to write in, not the
// bytes written: size() says where the writing stopped. Plain fields are
// copied through a pointer kept here, and `out` grows only when the room
// runs out: appending to a std::string field by field cost a reader a sixth
// of its time (halo, 16x500k).
class Encoder {
 public:
  Encoder(std::string& out, std::size_t at) : m_out(out), m_p(out.data() + at), m_end(out.data() + out.size()) {}
  std::size_t size() const { return static_cast<std::size_t>(m_p - m_out.data()); }
  template <class... T>
  void operator()(const T&... values) {
    (put(values), ...);
  }

  template <class T>
  void put(const T& value) {
    if constexpr (k_plain<T>) {
      raw(&value, sizeof value);
    } else {
      fields(*this, const_cast<T&>(value));  // Encoder only reads
    }
  }
  void put(const std::string& s) {
    put(static_cast<uint64_t>(s.size()));
    raw(s.data(), s.size());
  }
  template <class T>
  void put(const std::optional<T>& value) {
    put(value.has_value());
    if (value) put(*value);
  }
  template <class T>
  void put(const std::vector<T>& values) {
    put(static_cast<uint64_t>(values.size()));
    if constexpr (k_plain<T>) {
      raw(values.data(), values.size() * sizeof(T));
    } else {
      for (const T& value : values) put(value);
    }
  }
  template <class T>
  void put(const std::unordered_map<uint32_t, T>& map) {
    // By key: the same map codes to the same bytes.
    std::vector<const std::pair<const uint32_t, T>*> entries;
    for (const auto& entry : map) entries.push_back(&entry);
    std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
    put(static_cast<uint64_t>(entries.size()));
    for (const auto* entry : entries) {
      put(entry->first);
      put(entry->second);
    }
  }
  void put(const std::map<std::string, std::string>& map) {
    put(static_cast<uint64_t>(map.size()));
    for (const auto& [key, value] : map) {
      put(key);
      put(value);
    }
  }

  // Copy `n` bytes from `from`.
  void raw(const void* from, std::size_t n) {
    if (static_cast<std::size_t>(m_end - m_p) < n) grow(n);
    if (n) std::memcpy(m_p, from, n);
    m_p += n;
  }
  // Return the offset of `n` bytes left to be written later (write_at).
  std::size_t skip(std::size_t n) {
    if (static_cast<std::size_t>(m_end - m_p) < n) grow(n);
    const std::size_t at = size();
    m_p += n;
    return at;
  }
  void write_at(std::size_t at, const void* from, std::size_t n) { std::memcpy(m_out.data() + at, from, n); }
  // Make room for `n` bytes.
  void room(std::size_t n) {
    if (static_cast<std::size_t>(m_end - m_p) < n) grow(n);
  }
  // Write `value` in the room made (room()), but move past it only when
  // `keep`: no branch on what an event holds.
  template <class T>
  void put_if(const T& value, bool keep) {
    std::memcpy(m_p, &value, sizeof value);
    m_p += keep ? sizeof value : 0;
  }
  // The same for an optional, coded as put() codes it: kept only when it
  // has a value.
  template <class T>
  void put_if(const std::optional<T>& value, bool keep) {
    const bool has = true;
    const T held = value.value_or(T{});
    std::memcpy(m_p, &has, sizeof has);
    std::memcpy(m_p + sizeof has, &held, sizeof held);
    m_p += keep ? sizeof has + sizeof held : 0;
  }

 private:
  [[gnu::noinline]] void grow(std::size_t n) {
    const std::size_t at = size();
    m_out.resize(std::max(m_out.size() * 2, at + n + 1024));
    m_p = m_out.data() + at;
    m_end = m_out.data() + m_out.size();
  }

  std::string& m_out;
  char* m_p;
  char* m_end;
};

// Reads from `in` and advances it past what it read when it goes.
class Decoder {
 public:
  explicit Decoder(std::string_view& in) : m_in(in), m_p(in.data()), m_end(in.data() + in.size()) {}
  ~Decoder() { m_in = std::string_view(m_p, left()); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  std::size_t left() const { return static_cast<std::size_t>(m_end - m_p); }
  // Read a `T` when `keep` and set `value` to it, else to T{}; the caller
  // knows that sizeof(T) bytes are left: no branch on what an event holds.
  template <class T>
  void get_if(T& value, bool keep) {
    T read;
    std::memcpy(&read, m_p, sizeof read);
    value = keep ? read : T{};
    m_p += keep ? sizeof read : 0;
  }
  // The same for an optional, coded as get() decodes it.
  template <class T>
  void get_if(std::optional<T>& value, bool keep) {
    uint8_t has = 0;
    T read;
    std::memcpy(&has, m_p, sizeof has);
    std::memcpy(&read, m_p + sizeof has, sizeof read);
    const bool held = keep && has != 0;
    value = held ? std::optional<T>(read) : std::nullopt;
    m_p += keep ? sizeof has + (has != 0 ? sizeof read : 0) : 0;
  }
  template <class... T>
  void operator()(T&... values) {
    (get(values), ...);
  }

  template <class T>
  void get(T& value) {
    if constexpr (k_plain<T>) {
      std::memcpy(&value, take(sizeof value), sizeof value);
    } else {
      fields(*this, value);
    }
  }
  void get(std::string& s) {
    const std::size_t n = length();
    s.assign(take(n), n);
  }
  template <class T>
  void get(std::optional<T>& value) {
    bool has = false;
    get(has);
    if (!has) {
      value.reset();
      return;
    }
    if (!value) value.emplace();
    get(*value);
  }
  template <class T>
  void get(std::vector<T>& values) {
    const std::size_t n = length();
    values.resize(n);
    if constexpr (k_plain<T>) {
      if (n) std::memcpy(values.data(), take(n * sizeof(T)), n * sizeof(T));
    } else {
      for (T& value : values) get(value);
    }
  }
  template <class T>
  void get(std::unordered_map<uint32_t, T>& map) {
    const std::size_t n = length();
    map.clear();
    for (std::size_t i = 0; i < n; ++i) {
      uint32_t key = 0;
      get(key);
      get(map[key]);
    }
  }
  void get(std::map<std::string, std::string>& map) {
    const std::size_t n = length();
    map.clear();
    for (std::size_t i = 0; i < n; ++i) {
      std::string key, value;
      get(key);
      get(value);
      map.emplace(std::move(key), std::move(value));
    }
  }

 private:
  const char* take(std::size_t n) {
    if (n > left()) cut_short();
    const char* p = m_p;
    m_p += n;
    return p;
  }
  std::size_t length() {
    uint64_t n = 0;
    get(n);
    if (n > left()) cut_short();
    return static_cast<std::size_t>(n);
  }
  [[noreturn, gnu::noinline, gnu::cold]] static void cut_short() {
    throw std::runtime_error("smtrace-mpi: a record was cut short in transfer");
  }

  std::string_view& m_in;
  const char* m_p;
  const char* m_end;
};

// Events are the bulk, and mostly defaults (a halo Isend sets a dozen of
// Event's 68 fields): an event is coded as a bitmask of the fields that
// differ from a default Event's, then those fields. Coded densely, a halo
// event took about 350 bytes, and moving and decoding them cost process 0
// as much as reading the rank file itself.
inline constexpr unsigned k_mask_words = 2;

// Room for every plain field of an event, optional or not: they are members
// of Event, each at least as large as its coding.
inline constexpr std::size_t k_event_room = sizeof(format::Event);

class SparseEncoder {
 public:
  explicit SparseEncoder(Encoder& out) : m_out(out), m_at(out.skip(sizeof m_mask)) { m_out.room(k_event_room); }
  template <class... T>
  [[gnu::always_inline]] void operator()(const T&... values) {
    (field(values), ...);
  }
  // Write the mask in front of the fields.
  void finish() {
    if (m_index > 64 * k_mask_words) throw std::logic_error("smtrace-mpi: more event fields than mask bits");
    m_out.write_at(m_at, m_mask, sizeof m_mask);
  }

 private:
  // Plain fields, optional or not, without a branch (which fields an event
  // sets varies from one event to the next: mispredicted branches cost a
  // reader a tenth of its time); the others, rarer, as they come, then
  // room again.
  template <class T>
  [[gnu::always_inline]] void field(const T& value) {
    const bool set = !(value == T{});
    m_mask[m_index / 64] |= uint64_t{set} << (m_index % 64);
    if constexpr (k_plain<T> || k_plain_optional<T>) {
      m_out.put_if(value, set);
    } else if (set) {
      m_out.put(value);
      m_out.room(k_event_room);
    }
    ++m_index;
  }

  Encoder& m_out;
  std::size_t m_at;
  uint64_t m_mask[k_mask_words] = {};
  unsigned m_index = 0;
};

class SparseDecoder {
 public:
  explicit SparseDecoder(Decoder& decode) : m_decode(decode) {
    for (uint64_t& word : m_mask) decode(word);
    m_roomy = m_decode.left() >= k_event_room;
  }
  template <class... T>
  [[gnu::always_inline]] void operator()(T&... values) {
    (field(values), ...);
  }

 private:
  // Plain fields without a branch while the message holds room for every
  // plain field of an event (all but its last few events), checked near
  // its end.
  template <class T>
  [[gnu::always_inline]] void field(T& value) {
    const bool set = (m_mask[m_index / 64] >> (m_index % 64)) & 1;
    if constexpr (k_plain<T> || k_plain_optional<T>) {
      if (m_roomy) {
        m_decode.get_if(value, set);
      } else if (set) {
        m_decode(value);
      } else {
        reset(value);
      }
    } else if (set) {
      m_decode(value);
      m_roomy = m_decode.left() >= k_event_room;
    } else {
      reset(value);
    }
    ++m_index;
  }
  template <class T>
  static void reset(std::vector<T>& values) {
    values.clear();  // keeps the capacity of the reused event
  }
  template <class T>
  static void reset(T& value) {
    value = T{};
  }

  Decoder& m_decode;
  uint64_t m_mask[k_mask_words] = {};
  unsigned m_index = 0;
  bool m_roomy = false;  // left() >= k_event_room
};

// Write event `e` at the end of what `out` wrote.
[[gnu::always_inline]] inline void put_event(Encoder& out, const format::Event& e) {
  SparseEncoder sparse(out);
  fields(sparse, const_cast<format::Event&>(e));  // SparseEncoder only reads
  sparse.finish();
}

// Read into `e` the event put_event wrote (every field is overwritten;
// vectors keep their capacity).
[[gnu::always_inline]] inline void get_event(Decoder& in, format::Event& e) {
  SparseDecoder sparse(in);
  fields(sparse, e);
}

}  // namespace smtrace::analyzer::record_coding
