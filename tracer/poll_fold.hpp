// Poll folding: consecutive unsuccessful identical polls (MPI_Test*,
// MPI_Iprobe with flag false; cudaStreamQuery and cudaEventQuery returning
// cudaErrorNotReady: same call, arguments, site and thread) become
// two events, the first poll as it happened and one summary event whose
// `repeat` counts the polls folded after it (t_start of the second poll,
// duration up to the end of the last). The first poll is written at once;
// the summary when the run ends: another call on that thread, a successful
// poll, or the end of the trace. A rank killed while spinning keeps the first
// poll and loses the count.
//
// Thread safety: none; the tracer keeps one PollFolder per thread id and uses
// it under its global lock.
#pragma once

#include <cstdint>

#include "trace_format/event.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::tracer {

// Return a hash of what makes two polls identical: call, site, thread,
// comm, peer, tag, request(s), stream, CUDA event. E: format::Event or
// format::HotEvent (whose missing fields are at their defaults): the same
// poll gives the same key either way.
template <class E>
uint64_t poll_key(const E& poll);

class PollFolder {
 public:
  // Return true when unsuccessful poll `poll` (with key `key`) continues the
  // run in progress: it is counted and must not be written. E as poll_key.
  template <class E>
  bool fold(const E& poll, uint64_t key);
  // Start a new run with `poll`, which the caller writes.
  void start(const format::Event& poll, uint64_t key);
  void start(const format::HotEvent& poll, uint64_t key) { start(poll.to_event(), key); }
  // Return true and set `summary` when polls were folded since start; end
  // the run in any case.
  bool take_summary(format::Event& summary);
  // Return true while a run is in progress.
  bool active() const { return m_active; }

 private:
  bool m_active = false;
  uint64_t m_key = 0;
  format::Event m_first;
  uint32_t m_folded = 0;
  int64_t m_second_start = 0;
  int64_t m_last_end = 0;
};

}  // namespace smtrace::tracer
