// Recorder: writes one rank file (rank-<R>.smt) through a growing MAP_SHARED
// mapping, so a rank killed by SIGKILL leaves everything recorded so far in
// the page cache, without a syscall per record.
//
// File layout (trace_format/wire.hpp): magic, sealed RankHeader frame, then
// chunk frames. A chunk is opened with length k_open_frame, filled with
// records and sealed (CRC first, then length) when it reaches `chunk_bytes`.
// Each record is copied with its first byte stored last, so a kill never
// leaves a half record that parses: space after the last record is zero,
// and readers stop at a zero byte where a record would start.
//
// The magic and header are written with write(2) before the file is grown
// or mapped, so a file never exists without them. The file grows in segments
// reserved with posix_fallocate (disk full is an error return, not SIGBUS),
// never past RLIMIT_FSIZE (SIGXFSZ would kill the application); the mapping
// always starts at or before the open chunk, older segments are unmapped
// (bounded memory per rank).
//
// Thread safety: none inside; callers hold lock() around every write (the
// tracer's one global lock). try_lock() serves signal handlers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tracer/tables.hpp"
#include "trace_format/event.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::tracer {

class Recorder {
 public:
  Recorder() = default;
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Create `path`, write the magic and `header`; return false and set
  // error() on failure. `chunk_bytes` is the chunk size to seal at.
  bool open(const std::string& path, const format::RankHeader& header, uint32_t chunk_bytes);
  // Start the grow-ahead thread: from then on the zeros of the file's next
  // segment are written into the page cache (fill_page_cache's work, about
  // 700 ns per 4 KiB page of trace) by that thread, one segment ahead of
  // the mapping, not by the thread whose record reaches the segment's end.
  // The calling thread's CPU goes down by that much, the process's does not
  // (docs/tracer.md). Nothing is started, and false returned, where this
  // process may run on fewer than 2 CPUs (its affinity mask) or the
  // recorder is not active. The thread records nothing, blocks every
  // signal, and only ever writes zeros beyond the mapping (a range it
  // claims first; grow() waits for a claimed write in flight before it maps
  // the range: GrowAhead in recorder.cpp). Call after open(), before other
  // threads record. close() and the destructor stop it; in a forked child
  // it is ignored (it lives in the parent).
  bool start_grow_ahead();
  // Return true while the grow-ahead thread of this process runs.
  bool grow_ahead() const;
  // Return true while records can be written (open and no error met).
  bool active() const { return m_active; }
  // Return what went wrong, when active() turned false by an error.
  const std::string& error() const { return m_error; }

  void lock() noexcept { m_lock.lock(); }
  bool try_lock() noexcept { return m_lock.try_lock(); }
  void unlock() noexcept { m_lock.unlock(); }

  // Assign the next seq to `event` and write it; return the seq. The lock is held.
  uint64_t event(format::Event& event);
  // event() for an event whose fields all fit a HotEvent: the same record
  // (RecordEncoder::hot_event_at, with the groups G of fields it has), without
  // an Event. Instantiated for SMTRACE_HOT_GROUP_SETS (wire.hpp).
  template <format::HotGroups G = format::HotGroups{}>
  uint64_t hot_event(format::HotEvent& event);
  // Write a completion record for pending event `seq` carrying `end`'s outputs.
  void completion(uint64_t seq, const format::Event& end);
  // Replace pending event `seq` by the complete `event` when its record is
  // still the last one of the open chunk (nothing else was written since);
  // return false, changing nothing, otherwise. Saves the completion record:
  // most blocking calls return before anything else is recorded.
  bool rewrite_last(uint64_t seq, format::Event& event);
  // rewrite_last with hot_event's coding (byte for byte the same record).
  template <format::HotGroups G = format::HotGroups{}>
  bool rewrite_last(uint64_t seq, format::HotEvent& event);
  // Turn pending event `seq`, when its record is still the last one of the
  // open chunk, into the complete event: the entry's bytes up to its pending
  // field (its last), then `duration`, `rc` and `status` (the call's only
  // outputs), which is byte for byte what event() writes for the complete
  // Event (format::write_entry_outputs), without encoding it again. Return
  // false, changing nothing, where that does not apply (then rewrite_last or
  // completion).
  bool complete_last(uint64_t seq, uint64_t duration, int32_t rc, const format::Status& status);
  // complete_last for a completion call (Wait, Waitall, Waitany, Waitsome)
  // whose entry's last input is its requests list: the completed requests
  // and flag go in first, then the outputs (format::write_entry_completion),
  // byte for byte event()'s record of the complete event where the entry
  // has no input numbered above 33 (the caller checks: format::completion_ends_entry).
  bool complete_last(uint64_t seq, const format::CompletedRequest* completed, std::size_t n_completed,
                     const std::optional<bool>& flag, uint64_t duration, int32_t rc, const format::Status& status);
  // Write `header` over the header written by open(), in place; return
  // false (changing nothing) when its encoding is not exactly as long.
  bool rewrite_header(const format::RankHeader& header);
  void site(const format::CallSite& site);
  void module(const format::Module& module);
  void comm(const format::CommDef& comm);
  void datatype(const format::DatatypeDef& type);
  void note(const format::TracerNote& note);
  // Write `end` (last_seq, events, dropped filled in here).
  void termination(format::Termination end);
  // Seal the open chunk (if any): the file parses as sealed frames.
  void seal();
  // Seal, cut the file to the bytes used, unmap and close. The lock is held.
  void close();
  // After close(): open the file again to append records after its last
  // one (a call made after MPI_Finalize), then close() again. Return false
  // (nothing written) when the recorder failed before, was never opened,
  // is still open, or the file is no longer as close() left it. The lock is held.
  bool reopen();
  // Count an event that could not be written (tracing stopped).
  void drop() { ++m_dropped; }

  uint64_t events() const { return m_events; }
  uint64_t dropped() const { return m_dropped; }
  uint64_t next_seq() const { return m_next_seq; }
  uint64_t bytes() const { return m_pos; }

 private:
  template <class Encode>
  void record(int64_t t, Encode&& encode);
  template <class E, class Encode>
  uint64_t stream_event(E& event, std::size_t bound, Encode&& encode);
  template <class Encode>
  bool record_in_place(int64_t t, std::size_t bound, Encode&& encode);
  // complete_last's work: `write(pending)` writes the end (at most `bound` bytes) and returns it;
  // with `k_long`, a body that outgrows the one-byte length is moved on for a two-byte one
  // (else declined: a blocking call's outputs rarely do, and the test costs them).
  template <bool k_long, class Write>
  bool finish_entry(uint64_t seq, std::size_t bound, Write&& write);
  // Take back pending event `seq` (rewrite_last): false when it is not the last record.
  bool take_back_last(uint64_t seq);
  void open_chunk(int64_t t);
  // Return true when file bytes up to `end` are mapped (growing the file
  // and the mapping as needed); false once the recorder failed.
  bool ensure(uint64_t end) {
    if (m_active && m_map && end <= m_map_off + m_map_len) [[likely]]
      return true;
    return grow(end);
  }
  bool grow(uint64_t end);
  struct GrowAhead;
  // m_ahead when its thread is this process's (not a forked parent's).
  GrowAhead* ahead_here() const;
  void stop_grow_ahead();
  void fill_page_cache(uint64_t from, uint64_t to);
  void put(const void* data, std::size_t size, bool first_byte_last);
  void fail(const std::string& what);

  SpinLock m_lock;
  GrowAhead* m_ahead = nullptr;  // freed only once its thread has been joined
  format::RecordEncoder m_encoder;
  std::string m_scratch;
  std::string m_path;
  uint64_t m_header_bytes = 0;  // the header frame's payload as written by open()
  int m_fd = -1;
  bool m_active = false;
  std::string m_error;
  uint32_t m_chunk_bytes = 64 * 1024;
  uint64_t m_segment = 4u << 20;
  unsigned char* m_map = nullptr;
  uint64_t m_map_off = 0;
  uint64_t m_map_len = 0;
  uint64_t m_pos = 0;           // file offset of the next byte
  uint64_t m_filled = 0;        // the file's bytes up to here are in the page cache (fill_page_cache)
  bool m_chunk_open = false;
  uint64_t m_chunk_start = 0;   // file offset of the open chunk's frame header
  uint64_t m_chunk_payload = 0;
  uint64_t m_info_bytes = 0;    // the open chunk's ChunkInfo record
  uint32_t m_chunk_crc = 0;
  uint32_t m_chunk_index = 0;
  uint64_t m_next_seq = 0;
  uint64_t m_events = 0;
  uint64_t m_dropped = 0;
  int64_t m_last_t = 0;
  // The last record written, to take it back (rewrite_last).
  struct LastRecord {
    bool is_event = false;
    uint64_t seq = 0;
    uint64_t start = 0;  // file offset
    uint64_t size = 0;
    format::RecordEncoder encoder_before;
    // An entry complete_last can finish (the encodings say so). True only
    // while the record is an event, the last of the open chunk, within the
    // mapping, and the recorder active: finish_entry tests this alone.
    bool entry = false;
  };
  LastRecord m_last;
};

}  // namespace smtrace::tracer
