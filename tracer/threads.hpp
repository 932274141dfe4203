// Thread synchronization, the tracer's side (issue 15): what the
// interposers of pthreads (threads.cpp), of GCC's libgomp (gomp.cpp) and the
// OMPT tool for LLVM's libomp (ompt.cpp) share. They record the thread
// family of calls (trace_format/calls.def 400-443, fields in
// docs/trace-format.md "Thread events"), which the analyzer turns into
// happens-before edges between the threads of a rank.
//
// Recording rules (docs/tracer.md "Threads"):
// - Only while the rank traces and SMTRACE_THREADS says so
//   (handlers::threads_tracked()), and only once the program has a second
//   thread: a single thread's order needs no synchronization.
// - Never inside MPI or the tracer (handlers::in_wrapper()), never on a
//   thread that MPI started (MPI_Init's progress threads), never from the
//   OpenMP runtimes' or MPI's own libraries (their internal locks).
// - A release (unlock, post, signal, create, a thread's end) is written
//   before the real call, an acquire after it returns: the seq order of
//   the events of one object is the order they took effect in.
//
// Thread safety: everything here is thread safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::tracer::threads {

// Return true when this thread's synchronization is recorded now.
bool recording() noexcept;
// Return true when code address `caller` belongs to an MPI or OpenMP
// runtime library (their own locking is not the program's).
bool from_runtime(uintptr_t caller) noexcept;
// Note that the program has a second thread: recording starts.
void second_thread() noexcept;
// Return true while the OMPT tool (ompt.cpp) reports the OpenMP runtime's
// events: the GOMP_* interposers (gomp.cpp) then pass through.
bool ompt_on() noexcept;
// Set what ompt_on() returns.
void set_ompt_on(bool on) noexcept;

// One thread-family event: the fields docs/trace-format.md names.
struct Sync {
  Sync(format::Call call_, uint64_t buf_ = 0, uint64_t recv_buf_ = 0, std::optional<int32_t> peer_ = std::nullopt,
       int64_t count_ = 0)
      : call(call_), buf(buf_), recv_buf(recv_buf_), peer(peer_), count(count_) {}
  format::Call call = format::Call::unspecified;
  uint64_t buf = 0;
  uint64_t recv_buf = 0;
  std::optional<int32_t> peer;
  int64_t count = 0;
  std::vector<int64_t> displs, counts;  // an OpenMP task's dependences: addresses, kinds
};
// Write `sync` as a complete event of this thread that started at `t0`
// (handlers::now()) and ends now; `site` is the caller's address, `source`
// the format::thread_sync bit of who observed it.
void record(const Sync& sync, uintptr_t site, int64_t t0,
            uint32_t source = format::thread_sync::pthreads) noexcept;

// A blocking thread-family call (a condition wait, a join, a barrier): the
// pending entry is written by the constructor (its release), the
// completion by done() (its acquire).
class Blocking {
 public:
  Blocking(const Sync& sync, uintptr_t site, uint32_t source = format::thread_sync::pthreads) noexcept;
  Blocking(const Blocking&) = delete;
  Blocking& operator=(const Blocking&) = delete;
  // Complete the event with return code `rc`.
  void done(int rc) noexcept;

 private:
  format::Event m_event;
  uint64_t m_seq = 0;
};

// Return a fresh id for an OpenMP team or task (never 0).
uint64_t next_object_id() noexcept;

}  // namespace smtrace::tracer::threads
