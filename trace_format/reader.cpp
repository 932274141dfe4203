// Reading rank files. Damage is expected input (a killed rank, a full disk, a
// copy cut short), so nothing here throws for file content: each problem is
// reported with its byte offset and reading goes on with what is left.
//
// Lengths read from the file are checked against the bytes that remain and
// against k_max_frame_bytes before anything is allocated from them.
#include "trace_format/reader.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "trace_format/call_semantics.hpp"
#include "trace_format/event_decoder.hpp"
#include "trace_format/parallel.hpp"
#include "trace_format/proto_convert.hpp"
#include "trace_format/symbols.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::format {

namespace fs = std::filesystem;
namespace v1 = smtrace::v1;

namespace {

uint32_t get_u32le(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// A file read in pieces with bounded buffers.
class InputFile {
 public:
  explicit InputFile(const fs::path& path) : m_file(std::fopen(path.c_str(), "rb")) {
    if (!m_file) {
      m_error = std::strerror(errno);
      return;
    }
    std::error_code ec;
    m_size = fs::file_size(path, ec);
    if (ec) m_error = ec.message();
  }
  ~InputFile() {
    if (m_file) std::fclose(m_file);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  bool ok() const { return m_file && m_error.empty(); }
  const std::string& error() const { return m_error; }
  uint64_t size() const { return m_size; }

  // Read `size` bytes at `offset` into `out`; the caller has checked that
  // they lie inside the file.
  bool read(uint64_t offset, std::size_t size, std::string& out) {
    out.resize(size);
    if (std::fseek(m_file, static_cast<long>(offset), SEEK_SET) != 0) return false;
    return std::fread(out.data(), 1, size, m_file) == size;
  }

  // Return the offset of the first non-zero byte at or after `offset`, or nullopt.
  std::optional<uint64_t> first_non_zero(uint64_t offset) {
    std::string block;
    while (offset < m_size) {
      std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(m_size - offset, 1u << 16));
      if (!read(offset, n, block)) return offset;
      for (std::size_t i = 0; i < n; ++i) {
        if (block[i] != 0) return offset + i;
      }
      offset += n;
    }
    return std::nullopt;
  }

 private:
  std::FILE* m_file;
  uint64_t m_size = 0;
  std::string m_error;
};

enum class FrameKind { sealed, open, cut };

// More ranks than any trace is expected to have: beyond, a number is damage
// (in a manifest, a rank file name or a RankHeader). The reader makes the
// implicit MPI_COMM_WORLD of a rank from its world size: a damaged header
// must not make it allocate gigabytes.
constexpr uint32_t k_max_world_size = 1u << 22;
// More ranks than this missing (expected by the manifest, with no rank
// file) is damage of the manifest, not a job that lost its files: each
// expected rank costs a RankTrace and a problem, so a 100-byte manifest
// must not make the reader build hundreds of thousands of them (found by
// fuzzing: tests/fuzz/regressions/manifest/).
constexpr uint32_t k_max_missing_ranks = 1u << 14;

const char* record_name(uint32_t field) {
  switch (field) {
    case 1: return "ChunkInfo";
    case 2: return "Event";
    case 3: return "CallSite";
    case 4: return "Module";
    case 5: return "CommDef";
    case 6: return "DatatypeDef";
    case 7: return "Termination";
    case 8: return "TracerNote";
  }
  return "unknown";
}

}  // namespace

// ---------------------------------------------------------------------------
// The walker behind RankReader and read_rank_file.

namespace {

using Callbacks = RankReader::Callbacks;

// The tag of an Event record in a frame (field 2, length-delimited).
constexpr uint32_t k_event_tag = 2 << 3 | 2;

// Return the bytes of the tag and length of the Event record at `p` (`left`
// bytes to the frame's end) when both are short: the tag in one byte, the
// length in one or two, the body inside the frame; set `len`. Else 0: the
// record is read with CodedInputStream, which decides what it is.
inline int event_head(const unsigned char* p, int left, uint32_t& len) {
  if (left < 2 || p[0] != k_event_tag) return 0;
  if (p[1] < 0x80) {
    len = p[1];
    return len <= static_cast<uint32_t>(left - 2) ? 2 : 0;
  }
  if (left < 3 || p[2] >= 0x80) return 0;
  len = (p[1] & 0x7fu) | static_cast<uint32_t>(p[2]) << 7;
  return len <= static_cast<uint32_t>(left - 3) ? 3 : 0;
}

struct RankWalker {
  fs::path path;
  std::string file;
  InputFile input;
  std::optional<uint32_t> rank;
  bool header_read = false;
  std::optional<RankHeader> header_value;
  uint64_t pos = 0;  // next frame
  uint64_t chunks = 0;
  bool truncated = false;

  // Stream state (proto comments on Event and ChunkInfo).
  uint64_t next_seq = 0;
  uint64_t last_seq = ~uint64_t{0};
  int64_t last_t = 0;
  uint64_t last_buf = 0;
  // The format version of the file (its header's), which says how buf is
  // coded (buf_of); for a header that is lost, `recovered_version` (the
  // manifest's, read_trace, or this reader's).
  uint32_t version = k_format_version;
  uint32_t recovered_version = k_format_version;
  std::map<uint64_t, v1::Event> pending;  // resolved (absolute) messages
  uint64_t events = 0;

  v1::Event scratch;
  Event plain;  // decoded into for streaming callbacks, reused

  explicit RankWalker(fs::path p) : path(std::move(p)), file(path.string()), input(path) {}

  // The buf of an event record of `call` whose field 15 holds `coded`, and
  // move the stream state past it: in version 1 every record's buf is a
  // delta against the previous record's; from version 2 only those of
  // calls with a buffer (buf_in_stream), the others' is the address itself
  // (0 when absent) and leaves the running buf alone. Applied after the
  // whole record is read: fields may come in any order.
  uint64_t buf_of(Call call, uint64_t coded) {
    if (version >= 2 && !buf_in_stream(call)) return coded;
    last_buf += coded;
    return last_buf;
  }

  void problem(const Callbacks& cb, uint64_t offset, std::string message,
               std::optional<uint64_t> seq = std::nullopt,
               Problem::Severity severity = Problem::Severity::error) {
    if (!cb.problem) return;
    Problem p;
    p.severity = severity;
    p.file = file;
    p.offset = offset;
    p.rank = rank;
    p.seq = seq;
    p.message = std::move(message);
    cb.problem(p);
  }

  void warning(const Callbacks& cb, uint64_t offset, std::string message,
               std::optional<uint64_t> seq = std::nullopt) {
    problem(cb, offset, std::move(message), seq, Problem::Severity::warning);
  }

  std::optional<RankHeader> read_header(const Callbacks& cb) {
    header_read = true;
    if (!input.ok()) {
      problem(cb, 0, "cannot read: " + input.error());
      return std::nullopt;
    }
    const uint64_t size = input.size();
    if (size < k_magic_size) {
      problem(cb, 0, "file is " + std::to_string(size) + " bytes, shorter than the " +
                         std::to_string(k_magic_size) + "-byte magic");
      truncated = true;
      return std::nullopt;
    }
    std::string buf;
    if (!input.read(0, k_magic_size, buf) || std::memcmp(buf.data(), k_magic, k_magic_size) != 0) {
      return header_lost(cb, 0, "not an smtrace rank file (bad magic)");
    }
    const uint64_t at = k_magic_size;
    if (size - at < k_frame_header_size) {
      problem(cb, at, "file ends inside the header frame");
      truncated = true;
      return std::nullopt;
    }
    input.read(at, k_frame_header_size, buf);
    const auto* head = reinterpret_cast<const unsigned char*>(buf.data());
    const uint32_t len = get_u32le(head);
    const uint32_t crc = get_u32le(head + 4);
    const uint64_t room = size - at - k_frame_header_size;
    if (len == 0 || len == k_open_frame || len > k_max_frame_bytes || len > room) {
      truncated = true;
      return header_lost(cb, at,
                         "header frame length " + std::to_string(len) +
                             (len > room ? " exceeds the " + std::to_string(room) + " bytes left"
                                         : " is not valid"));
    }
    input.read(at + k_frame_header_size, len, buf);
    if (uint32_t got = crc32c(buf.data(), buf.size()); got != crc) {
      problem(cb, at, "header frame CRC mismatch (stored " + hex32(crc) + ", computed " +
                          hex32(got) + ")");
    }
    v1::RankHeader message;
    if (!message.ParseFromString(buf)) {
      return header_lost(cb, at + k_frame_header_size, "cannot parse the RankHeader");
    }
    RankHeader h = detail::to_plain(message);
    if (h.world_size > k_max_world_size) {
      return header_lost(cb, at + k_frame_header_size,
                         "RankHeader world size " + std::to_string(h.world_size) + " is implausible (more than " +
                             std::to_string(k_max_world_size) + " ranks)");
    }
    rank = h.rank;
    if (h.format_version == 0 || h.format_version > k_format_version) {
      problem(cb, at + k_frame_header_size,
              h.format_version == 0
                  ? "format version 0 is not valid (this reader reads 1 to " + std::to_string(k_format_version) + ")"
                  : "format version " + std::to_string(h.format_version) +
                        " is newer than this reader (" + std::to_string(k_format_version) + ")");
      return std::nullopt;
    }
    version = h.format_version;
    pos = at + k_frame_header_size + len;
    header_value = h;
    return h;
  }

  // The header is unusable (`why`, at `offset`): report it and, when the
  // file has a chunk frame after that point, read on from there with a
  // rebuilt header; a file of nothing but zeros says so.
  std::optional<RankHeader> header_lost(const Callbacks& cb, uint64_t offset, const std::string& why) {
    const std::optional<uint64_t> data = input.first_non_zero(0);
    if (!data) {
      problem(cb, 0, "the file is " + std::to_string(input.size()) +
                         " bytes, all zero: the rank stopped before its header was written "
                         "(nothing to read)");
      truncated = true;
      return std::nullopt;
    }
    const std::optional<uint64_t> next = resync(std::max<uint64_t>(offset, *data), Frames::sealed_or_open);
    if (!next) {
      problem(cb, offset, why + "; no chunk found after it");
      return std::nullopt;
    }
    // The coding of buf differs between versions (docs/trace-format.md
    // section 3): one this reader does not know is not guessed at.
    if (recovered_version == 0 || recovered_version > k_format_version) {
      problem(cb, offset, why + "; header lost, and the manifest's format version " +
                              std::to_string(recovered_version) + " is not one this reader reads (1 to " +
                              std::to_string(k_format_version) + "): nothing read");
      return std::nullopt;
    }
    problem(cb, offset, why + "; header lost: reading the chunks from byte " + std::to_string(*next) +
                            " on, in format version " + std::to_string(recovered_version) +
                            " (the manifest's, else this reader's; rank and world size from the file name and the "
                            "manifest)");
    truncated = true;
    RankHeader h;
    h.recovered = true;
    h.format_version = version = recovered_version;
    pos = *next;
    header_value = h;
    return h;
  }

  // Takes events by value when set (read_rank_file), instead of cb.event.
  std::function<void(Event&&)> sink;

  // Deliver an event that is complete (or, at the end, still pending).
  void emit(const Callbacks& cb, const v1::Event& message) {
    ++events;
    if (sink) {
      sink(detail::to_plain(message));
    } else if (cb.event) {
      detail::to_plain(message, plain);
      cb.event(plain);
    }
  }

  void on_event(const Callbacks& cb, const unsigned char* data, uint32_t len, int readable, uint64_t offset,
                FrameKind kind, bool& stop) {
    // Most records are complete events in the writers' coding: decoded
    // straight into `plain`. The others (pending events, completion
    // records, anything decode_event leaves to the generated parser) take
    // the generated message, whose merge rules completion records follow.
    detail::EventRecord record;
    if (detail::decode_event(data, static_cast<int>(len), readable, plain, record) && record.completes == 0 && !plain.pending) {
      const uint64_t seq = record.has_seq ? plain.seq : next_seq;
      const int64_t t = static_cast<int64_t>(static_cast<uint64_t>(last_t) + static_cast<uint64_t>(plain.t_start));
      plain.buf = buf_of(plain.call, plain.buf);
      plain.seq = seq;
      plain.t_start = t;
      last_seq = seq;
      next_seq = seq + 1;
      last_t = t;
      ++events;
      if (sink) {
        sink(std::move(plain));
      } else if (cb.event) {
        cb.event(plain);
      }
      return;
    }
    scratch.Clear();
    if (!scratch.ParseFromArray(data, static_cast<int>(len))) {
      if (kind == FrameKind::sealed) {
        problem(cb, offset, "cannot parse an Event record; skipped");
      } else {
        stop = true;
      }
      return;
    }
    if (scratch.completes() != 0) {
      const uint64_t target = last_seq - (scratch.completes() - 1);
      auto it = pending.find(target);
      if (it == pending.end()) {
        warning(cb, offset, "completion record for an event that is not pending; ignored", target);
        return;
      }
      scratch.clear_seq();
      scratch.clear_completes();
      scratch.clear_t_start();
      scratch.clear_pending();
      v1::Event merged = std::move(it->second);
      pending.erase(it);
      merged.MergeFrom(scratch);
      merged.set_pending(false);
      emit(cb, merged);
      return;
    }
    const uint64_t seq = scratch.has_seq() ? scratch.seq() : next_seq;
    const int64_t t = static_cast<int64_t>(static_cast<uint64_t>(last_t) +
                                           static_cast<uint64_t>(scratch.t_start()));
    scratch.set_buf(static_cast<int64_t>(buf_of(static_cast<Call>(scratch.call()), static_cast<uint64_t>(scratch.buf()))));
    scratch.set_seq(seq);
    scratch.set_t_start(t);
    last_seq = seq;
    next_seq = seq + 1;
    last_t = t;
    if (scratch.pending()) {
      if (pending.count(seq)) warning(cb, offset, "event seq appears twice", seq);
      pending[seq] = scratch;
    } else {
      emit(cb, scratch);
    }
  }

  template <class Message, class Deliver>
  void on_def(const Callbacks& cb, const unsigned char* data, uint32_t len, uint64_t offset,
              FrameKind kind, bool& stop, uint32_t field, const Deliver& deliver) {
    Message message;
    if (!message.ParseFromArray(data, static_cast<int>(len))) {
      if (kind == FrameKind::sealed) {
        problem(cb, offset, std::string("cannot parse a ") + record_name(field) +
                                " record; skipped");
      } else {
        stop = true;
      }
      return;
    }
    deliver(detail::to_plain(message));
  }

  // Walk the records of one frame payload (`base`: its file offset). Return
  // the number of bytes that held records (for open frames: up to the zero
  // byte that ends them).
  std::size_t walk(const Callbacks& cb, const std::string& payload, uint64_t base,
                   FrameKind kind, bool* torn_tail = nullptr) {
    const auto* data = reinterpret_cast<const unsigned char*>(payload.data());
    const int size = static_cast<int>(payload.size());
    int pos = 0;  // the next record
    while (true) {
      const int at = pos;
      const uint64_t offset = base + static_cast<uint64_t>(at);
      if (at >= size) return static_cast<std::size_t>(at);
      if (kind == FrameKind::open && data[at] == 0) return static_cast<std::size_t>(at);
      uint32_t tag = 0;
      uint32_t len = 0;
      int body_at = 0;  // the record's body
      if (const int head = event_head(data + at, size - at, len)) {
        // An Event record whose length takes one or two bytes (nearly all
        // of them), read here; the others go through CodedInputStream.
        tag = k_event_tag;
        body_at = at + head;
      } else {
        google::protobuf::io::CodedInputStream in(data + at, size - at);
        tag = in.ReadTag();
        bool torn = false;
        if (tag == 0) {
          torn = true;
        } else if ((tag & 7) != 2) {
          // Not a record layout this reader knows: skip it if it is well formed.
          const uint32_t number = tag >> 3;
          if (number >= 1 && number <= 8) {
            problem(cb, offset, std::string(record_name(number)) + " record with wire type " +
                                    std::to_string(tag & 7) + "; skipped");
          }
          if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) torn = true;
          if (!torn) {
            pos = at + in.CurrentPosition();
            continue;
          }
        } else if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(size - at - in.CurrentPosition())) {
          torn = true;
        }
        if (torn) {
          truncated = true;
          if (torn_tail) *torn_tail = true;
          if (kind == FrameKind::sealed) {
            problem(cb, offset, "malformed record in a sealed chunk; rest of the chunk skipped");
          } else {
            problem(cb, offset,
                    std::string(kind == FrameKind::open ? "torn record at the end of an open chunk"
                                                        : "chunk cut short: record incomplete") +
                        "; dropped");
          }
          return static_cast<std::size_t>(at);
        }
        body_at = at + in.CurrentPosition();
      }
      const uint32_t field = tag >> 3;
      const unsigned char* body = data + body_at;
      const uint64_t body_offset = base + static_cast<uint64_t>(body_at);
      pos = body_at + static_cast<int>(len);
      bool stop = false;
      switch (field) {
        case 1: {
          v1::ChunkInfo info;
          if (!info.ParseFromArray(body, static_cast<int>(len))) {
            if (kind == FrameKind::sealed) {
              problem(cb, body_offset, "cannot parse the ChunkInfo record");
            } else {
              stop = true;
            }
            break;
          }
          next_seq = info.first_seq();
          last_seq = info.first_seq() - 1;
          last_t = info.t_base();
          last_buf = 0;
          break;
        }
        case 2: on_event(cb, body, len, static_cast<int>(data + size - body), body_offset, kind, stop); break;
        case 3:
          on_def<v1::CallSite>(cb, body, len, body_offset, kind, stop, field,
                               [&](const CallSite& s) { if (cb.site) cb.site(s); });
          break;
        case 4:
          on_def<v1::Module>(cb, body, len, body_offset, kind, stop, field,
                             [&](const Module& m) { if (cb.module) cb.module(m); });
          break;
        case 5:
          on_def<v1::CommDef>(cb, body, len, body_offset, kind, stop, field,
                              [&](const CommDef& c) { if (cb.comm) cb.comm(c); });
          break;
        case 6:
          on_def<v1::DatatypeDef>(cb, body, len, body_offset, kind, stop, field,
                                  [&](const DatatypeDef& t) { if (cb.datatype) cb.datatype(t); });
          break;
        case 7:
          on_def<v1::Termination>(cb, body, len, body_offset, kind, stop, field,
                                  [&](const Termination& t) {
                                    if (t.accesses_lost > 0)
                                      warning(cb, body_offset,
                                              std::to_string(t.accesses_lost) +
                                                  " threads' last loads and stores could not be written as "
                                                  "tracing ended: the trace lacks some of their accesses");
                                    if (cb.end) cb.end(t);
                                  });
          break;
        case 8:
          on_def<v1::TracerNote>(cb, body, len, body_offset, kind, stop, field,
                                 [&](const TracerNote& n) { if (cb.note) cb.note(n); });
          break;
        default: break;  // a record of a later version: skipped
      }
      if (stop) {
        // In an unsealed chunk a record that does not parse is the torn tail
        // (e.g. the length was written, the bytes after it were not).
        truncated = true;
        if (torn_tail) *torn_tail = true;
        problem(cb, offset, std::string(kind == FrameKind::open
                                            ? "torn record at the end of an open chunk"
                                            : "chunk cut short: record incomplete") +
                                "; dropped");
        return static_cast<std::size_t>(at);
      }
    }
  }

  enum class Frames { sealed, sealed_or_open };

  // Look for the next sealed frame after damage at `from`: a plausible
  // length whose payload's CRC matches and starts with a ChunkInfo record.
  // With Frames::sealed_or_open an open chunk (length k_open_frame, then a
  // ChunkInfo record after the crc field) is also taken: it has no CRC, so
  // this is for a file whose header was lost, where a rank killed early has
  // nothing but an open chunk.
  std::optional<uint64_t> resync(uint64_t from, Frames frames = Frames::sealed) {
    const uint64_t size = input.size();
    std::string window;
    constexpr std::size_t k_window = 1u << 16;
    std::string payload;
    for (uint64_t base = from; base + k_frame_header_size <= size; base += k_window) {
      std::size_t n = static_cast<std::size_t>(
          std::min<uint64_t>(size - base, k_window + k_frame_header_size));
      if (!input.read(base, n, window)) return std::nullopt;
      const auto* w = reinterpret_cast<const unsigned char*>(window.data());
      for (std::size_t i = 0; i + k_frame_header_size <= n && i < k_window; ++i) {
        const uint64_t at = base + i;
        const uint32_t len = get_u32le(w + i);
        const bool chunk_info = i + k_frame_header_size < n && w[i + k_frame_header_size] == 0x0A;
        if (len == k_open_frame && frames == Frames::sealed_or_open && chunk_info) return at;
        if (len == 0 || len > k_max_frame_bytes || len > size - at - k_frame_header_size) continue;
        if (i + k_frame_header_size < n && !chunk_info) continue;
        if (!input.read(at + k_frame_header_size, len, payload)) continue;
        if (crc32c(payload.data(), payload.size()) == get_u32le(w + i + 4)) return at;
      }
    }
    return std::nullopt;
  }

  uint64_t read_all(const Callbacks& cb) {
    if (!header_read) read_header(cb);
    if (!header_value) return 0;
    const uint64_t size = input.size();
    std::string head;
    std::string payload;
    while (pos < size) {
      const uint64_t at = pos;
      if (size - at < k_frame_header_size) {
        if (input.first_non_zero(at)) {
          truncated = true;
          problem(cb, at, "file ends inside a frame header (" + std::to_string(size - at) +
                              " bytes left)");
        }
        break;
      }
      input.read(at, k_frame_header_size, head);
      const auto* h = reinterpret_cast<const unsigned char*>(head.data());
      const uint32_t len = get_u32le(h);
      const uint32_t crc = get_u32le(h + 4);
      const uint64_t room = size - at - k_frame_header_size;
      if (len == 0) {
        // End of data; what follows is the zero padding of a preallocated file.
        if (auto junk = input.first_non_zero(at)) {
          warning(cb, *junk, "non-zero bytes after the end of data (zero frame length at byte " +
                                 std::to_string(at) + "); ignored");
        }
        break;
      }
      if (len == k_open_frame) {
        std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(room, k_max_frame_bytes));
        input.read(at + k_frame_header_size, n, payload);
        ++chunks;
        truncated = true;  // the tracer never sealed it: the rank stopped inside
        bool torn = false;
        std::size_t used = walk(cb, payload, at + k_frame_header_size, FrameKind::open, &torn);
        const uint64_t end = at + k_frame_header_size + used;
        if (auto junk = torn ? std::nullopt : input.first_non_zero(end)) {
          warning(cb, *junk, "non-zero bytes after the end of an open chunk; ignored");
        }
        break;
      }
      if (len > k_max_frame_bytes || len > room) {
        truncated = true;
        if (len > k_max_frame_bytes) {
          problem(cb, at, "chunk length " + std::to_string(len) + " exceeds the maximum (" +
                              std::to_string(k_max_frame_bytes) + ")");
        } else {
          // Most likely a copy cut short: keep the complete records.
          problem(cb, at, "chunk length " + std::to_string(len) + " exceeds the " +
                              std::to_string(room) + " bytes left in the file (" +
                              std::to_string(size) + " bytes): file cut short");
          if (len <= k_max_frame_bytes && room > 0) {
            input.read(at + k_frame_header_size, static_cast<std::size_t>(room), payload);
            ++chunks;
            walk(cb, payload, at + k_frame_header_size, FrameKind::cut);
          }
          break;
        }
        if (auto next = resync(at + 1)) {
          warning(cb, at, "skipped " + std::to_string(*next - at) +
                              " damaged bytes to the next valid chunk at byte " +
                              std::to_string(*next));
          pos = *next;
          continue;
        }
        break;
      }
      input.read(at + k_frame_header_size, len, payload);
      if (uint32_t got = crc32c(payload.data(), payload.size()); got != crc) {
        problem(cb, at, "chunk CRC mismatch (stored " + hex32(crc) + ", computed " + hex32(got) +
                            "); chunk of " + std::to_string(len) + " bytes skipped");
        pos = at + k_frame_header_size + len;
        continue;
      }
      ++chunks;
      walk(cb, payload, at + k_frame_header_size, FrameKind::sealed);
      pos = at + k_frame_header_size + len;
    }
    // Events whose end never came stay pending.
    for (auto& [seq, message] : pending) emit(cb, message);
    pending.clear();
    return events;
  }
};

}  // namespace

struct RankReader::Impl : RankWalker {
  using RankWalker::RankWalker;
};

RankReader::RankReader(fs::path file, uint32_t recovered_version) : m_impl(std::make_unique<Impl>(std::move(file))) {
  m_impl->recovered_version = recovered_version;
}

uint32_t recovered_version(const TraceFiles& files) {
  const uint32_t v = files.manifest.format_version;
  return files.has_manifest && v >= 1 ? v : k_format_version;  // (a version it does not know: header_lost says so)
}
RankReader::~RankReader() = default;

std::optional<RankHeader> RankReader::header(const Callbacks& callbacks) {
  if (!m_impl->header_read) return m_impl->read_header(callbacks);
  return m_impl->header_value;
}

uint64_t RankReader::read_all(const Callbacks& callbacks) { return m_impl->read_all(callbacks); }

// ---------------------------------------------------------------------------

namespace {

void add_implicit_comms(RankTrace& r, uint32_t world_size) {
  if (!r.comms.count(k_comm_world)) {
    CommDef world;
    world.id = k_comm_world;
    for (uint32_t i = 0; i < world_size; ++i) world.world_ranks.push_back(i);
    r.comms.emplace(world.id, std::move(world));
  }
  if (!r.comms.count(k_comm_self)) {
    CommDef self;
    self.id = k_comm_self;
    self.world_ranks.push_back(r.header.rank);
    r.comms.emplace(self.id, std::move(self));
  }
}

}  // namespace

RankTrace read_rank_file(const fs::path& file, uint32_t recovered_version) {
  RankTrace r;
  r.file = file.string();
  RankWalker impl(file);
  impl.recovered_version = recovered_version;
  r.bytes = impl.input.size();
  // Events are large (about 600 bytes): move them, and reserve for a guess
  // of the count (records take 10 to 30 bytes) so that the vector rarely
  // moves; untouched reserved pages cost no memory.
  r.events.reserve(static_cast<std::size_t>(std::min<uint64_t>(r.bytes / 16, 1u << 21)));
  impl.sink = [&](Event&& e) { r.events.push_back(std::move(e)); };
  RankReader::Callbacks cb;
  cb.site = [&](const CallSite& s) { r.sites[s.id] = s; };
  cb.module = [&](const Module& m) { r.modules[m.id] = m; };
  cb.comm = [&](const CommDef& c) { r.comms[c.id] = c; };
  cb.datatype = [&](const DatatypeDef& t) { r.datatypes[t.id] = t; };
  cb.end = [&](const Termination& t) { r.end = t; };
  cb.note = [&](const TracerNote& n) { r.notes.push_back(n); };
  cb.problem = [&](const Problem& p) { r.problems.push_back(p); };
  if (auto header = impl.read_header(cb)) {
    r.present = true;
    r.header = *header;
    impl.read_all(cb);
    // Completed events arrive at their completion, so the stream is in seq
    // order except around threads' overlapping calls; events are large, so
    // sort only when needed.
    auto by_seq = [](const Event& a, const Event& b) { return a.seq < b.seq; };
    if (!std::is_sorted(r.events.begin(), r.events.end(), by_seq)) {
      std::stable_sort(r.events.begin(), r.events.end(), by_seq);
    }
    // A rebuilt header's world size comes later (read_trace).
    if (!r.header.recovered) add_implicit_comms(r, r.header.world_size);
  }
  r.chunks = impl.chunks;
  r.truncated = impl.truncated;
  return r;
}

std::string Problem::to_string() const {
  std::string s = file + ": byte " + std::to_string(offset) + ": ";
  if (rank) {
    s += "rank " + std::to_string(*rank) + ": ";
    if (seq) s += "event " + std::to_string(*rank) + ":" + std::to_string(*seq) + ": ";
  } else if (seq) {
    s += "event " + std::to_string(*seq) + ": ";
  }
  if (severity == Severity::warning) s += "warning: ";
  return s + message;
}

const Event* RankTrace::find(uint64_t seq) const {
  auto it = std::lower_bound(events.begin(), events.end(), seq,
                             [](const Event& e, uint64_t s) { return e.seq < s; });
  return it != events.end() && it->seq == seq ? &*it : nullptr;
}

const CallSite* RankTrace::site(uint32_t id) const {
  auto it = sites.find(id);
  return it == sites.end() ? nullptr : &it->second;
}

std::optional<uint32_t> RankTrace::world_rank(uint32_t comm, int32_t rank_in_comm) const {
  auto it = comms.find(comm);
  if (it == comms.end() || rank_in_comm < 0) return std::nullopt;
  // Point-to-point peers and roots on an intercommunicator are ranks of the remote group.
  const auto& ranks = it->second.inter ? it->second.remote_world_ranks : it->second.world_ranks;
  if (static_cast<std::size_t>(rank_in_comm) >= ranks.size()) return std::nullopt;
  return ranks[static_cast<std::size_t>(rank_in_comm)];
}

std::vector<Problem> Trace::all_problems() const {
  std::vector<Problem> all = problems;
  for (const RankTrace& r : ranks) all.insert(all.end(), r.problems.begin(), r.problems.end());
  return all;
}

bool Trace::complete() const {
  if (ranks.empty()) return false;
  return std::all_of(ranks.begin(), ranks.end(),
                     [](const RankTrace& r) { return r.present && r.finalized(); });
}

// ---------------------------------------------------------------------------

namespace {

// Return the rank a file name stands for under `pattern` ("rank-{rank}.smt").
std::optional<uint32_t> rank_of(const std::string& name, const std::string& pattern) {
  const auto hole = pattern.find("{rank}");
  if (hole == std::string::npos) return std::nullopt;
  const std::string prefix = pattern.substr(0, hole);
  const std::string suffix = pattern.substr(hole + 6);
  if (name.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return std::nullopt;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::stoul(digits));
}

std::string file_for(const std::string& pattern, uint32_t rank) {
  std::string name = pattern;
  const auto hole = name.find("{rank}");
  if (hole == std::string::npos) return rank_file_name(rank);
  return name.replace(hole, 6, std::to_string(rank));
}

}  // namespace

TraceFiles find_trace_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw TraceError(dir.string() + ": no such directory");
  if (!fs::is_directory(dir, ec)) throw TraceError(dir.string() + ": not a directory");

  TraceFiles trace;
  trace.dir = dir;
  const fs::path manifest_path = dir / std::string(k_manifest_file);
  if (fs::exists(manifest_path, ec)) {
    std::ifstream in(manifest_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    v1::Manifest message;
    google::protobuf::util::JsonParseOptions parse;
    parse.ignore_unknown_fields = true;
    auto status = google::protobuf::util::JsonStringToMessage(text.str(), &message, parse);
    if (!in || !status.ok()) {
      trace.problems.push_back({Problem::Severity::error, manifest_path.string(), 0, std::nullopt,
                                std::nullopt,
                                "cannot parse the manifest: " + std::string(status.message())});
    } else {
      trace.manifest = detail::to_plain(message);
      trace.has_manifest = true;
      if (trace.manifest.format_version > k_format_version) {
        trace.problems.push_back(
            {Problem::Severity::error, manifest_path.string(), 0, std::nullopt, std::nullopt,
             "format version " + std::to_string(trace.manifest.format_version) +
                 " is newer than this reader (" + std::to_string(k_format_version) + ")"});
      }
    }
  }
  std::string pattern = trace.manifest.rank_file_pattern;
  if (pattern.find("{rank}") == std::string::npos) pattern = "rank-{rank}.smt";

  std::map<uint32_t, fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto r = rank_of(entry.path().filename().string(), pattern);
    if (!r) continue;
    if (*r >= k_max_world_size) {
      trace.problems.push_back({Problem::Severity::warning, entry.path().string(), 0, std::nullopt,
                                std::nullopt, "rank number too large; file ignored"});
      continue;
    }
    files[*r] = entry.path();
  }
  if (!trace.has_manifest && files.empty()) {
    if (fs::exists(manifest_path, ec)) {
      throw TraceError(dir.string() + ": " + trace.problems.front().message +
                       " and no rank files");
    }
    throw TraceError(dir.string() + ": no manifest.json and no rank-*.smt files");
  }

  uint32_t world_size = trace.has_manifest ? trace.manifest.world_size : 0;
  if (world_size > k_max_world_size) {
    // A damaged manifest must not make us expect billions of rank files.
    trace.problems.push_back({Problem::Severity::error, manifest_path.string(), 0, std::nullopt,
                              std::nullopt,
                              "world size " + std::to_string(world_size) +
                                  " is implausible; using the rank files found"});
    world_size = 0;
  }
  if (world_size > files.size() && world_size - files.size() > k_max_missing_ranks) {
    trace.problems.push_back({Problem::Severity::error, manifest_path.string(), 0, std::nullopt,
                              std::nullopt,
                              "world size " + std::to_string(world_size) + " is implausible: " +
                                  std::to_string(files.size()) + " rank files found, more than " +
                                  std::to_string(k_max_missing_ranks) +
                                  " missing; using the rank files found"});
    world_size = 0;
  }
  if (!files.empty()) world_size = std::max(world_size, files.rbegin()->first + 1);
  trace.rank_files.resize(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    if (auto it = files.find(r); it != files.end()) {
      trace.rank_files[r] = it->second;
      trace.present.push_back(r);
    } else {
      trace.rank_files[r] = dir / file_for(pattern, r);
      trace.problems.push_back({Problem::Severity::error, trace.rank_files[r].string(), 0, r,
                                std::nullopt,
                                "missing rank file " + file_for(pattern, r) + " (expected " +
                                    std::to_string(world_size) + " ranks)"});
    }
  }
  return trace;
}

Problem check_rank_header(const TraceFiles& files, uint32_t rank, RankHeader& header, bool& ok) {
  ok = true;
  Problem p{Problem::Severity::warning, files.rank_files[rank].string(), 0, rank, std::nullopt, ""};
  if (header.recovered) {
    header.rank = rank;
    header.world_size = files.has_manifest && files.manifest.world_size != 0
                            ? files.manifest.world_size
                            : static_cast<uint32_t>(files.rank_files.size());
    return p;
  }
  if (header.rank != rank) {
    ok = false;
    p.message = "header says rank " + std::to_string(header.rank) + ", file name says rank " +
                std::to_string(rank);
  } else if (files.has_manifest && files.manifest.world_size != 0 &&
             header.world_size != files.manifest.world_size) {
    ok = false;
    p.message = "header says world size " + std::to_string(header.world_size) + ", the manifest " +
                std::to_string(files.manifest.world_size);
  }
  return p;
}

Trace read_trace(const fs::path& dir, const ReadOptions& options) {
  TraceFiles found = find_trace_files(dir);
  Trace trace;
  trace.dir = dir;
  trace.manifest = found.manifest;
  trace.has_manifest = found.has_manifest;
  trace.problems = found.problems;
  const uint32_t world_size = static_cast<uint32_t>(found.rank_files.size());
  trace.ranks.resize(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    trace.ranks[r].file = found.rank_files[r].string();
    trace.ranks[r].header.rank = r;
  }
  const std::vector<uint32_t>& todo = found.present;
  const uint32_t lost_header_version = recovered_version(found);

  run_on_threads(thread_count(options.threads, todo.size()), todo.size(), [&](std::size_t i) {
    const uint32_t r = todo[i];
    trace.ranks[r] = options.read_rank ? options.read_rank(r, found.rank_files[r])
                                       : read_rank_file(found.rank_files[r], lost_header_version);
  });

  for (uint32_t r = 0; r < world_size; ++r) {
    RankTrace& rank = trace.ranks[r];
    if (!rank.present) continue;
    bool ok = true;
    Problem p = check_rank_header(found, r, rank.header, ok);
    if (!ok) rank.problems.push_back(std::move(p));
    if (rank.header.recovered) add_implicit_comms(rank, rank.header.world_size);
  }

  std::error_code ec;
  const fs::path symbols_path = dir / std::string(k_symbols_file);
  if (options.symbols && fs::exists(symbols_path, ec)) {
    auto symbols = read_symbols(symbols_path, trace.problems);
    for (auto& [r, sites] : symbols) {
      if (r < trace.ranks.size() && trace.ranks[r].present) apply_symbols(trace.ranks[r], sites);
    }
  }
  return trace;
}

}  // namespace smtrace::format
