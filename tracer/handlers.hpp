// Handlers: the tracer's logic on plain values. The MPI layer (wrappers.cpp)
// turns handles into ids and calls these; unit tests call them without MPI.
//
// A wrapper does:
//   if (!handlers::should_trace(Call::Send)) return PMPI_Send(...);
//   CallScope s(Call::Send, return_address);   // takes the re-entry guard
//   s.e.comm = ...; s.e.peer = ...;            // inputs, plain values
//   s.enter();                                 // blocking: pending record now
//   int rc = PMPI_Send(...);
//   s.set_status(...); s.out().request = ...;  // outputs
//   s.leave(rc);                               // complete record or completion
//   return rc;
//
// Thread safety: everything here is thread safe (one global lock around
// seq assignment, encoding and copying into the file; relaxed atomics for
// the on/off checks); the re-entry guard is thread_local.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracer/access_abi.hpp"
#include "tracer/options.hpp"
#include "trace_format/event.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::tracer {

// What MPI_Init tells the tracer.
struct StartInfo {
  uint32_t rank = 0;
  uint32_t world_size = 1;
  std::string mpi_library;
  uint32_t mpi_version = 0;
  int32_t thread_level = 0;
  int64_t tag_ub = 0;            // MPI_TAG_UB of MPI_COMM_WORLD; 0: unknown
  int64_t bsend_overhead = -1;   // MPI_BSEND_OVERHEAD of the library's mpi.h; -1: unknown
  Options options;
  int64_t clock_origin = 0;      // CLOCK_MONOTONIC ns that event times count from; 0: now
  bool install_handlers = true;  // signal handlers and atexit (off in unit tests)
  // Started at a call before MPI_Init (record_before_init): the rank and size
  // come from the launcher's environment, the rest of MPI's facts are unknown.
  bool before_init = false;
};

namespace handlers {

// Return true when a call of `call` on this thread is to be recorded now
// (tracing on, family on, not inside another traced call).
bool should_trace(format::Call call) noexcept;
// Return true while this rank records.
bool tracing() noexcept;
// Return true when a call of `call` is not recorded only because its family
// is off (tracing on, not inside another traced call): the MPI layer still
// keeps its handle tables right.
bool family_off(format::Call call) noexcept;
// Return ns since the rank's clock origin (CLOCK_MONOTONIC through the vDSO).
int64_t now() noexcept;
// Return this thread's tracer id (0 = the thread that started tracing).
uint32_t thread_id() noexcept;
// Return the options in force (defaults before start).
const Options& options() noexcept;
// Return true while thread synchronization is recorded (SMTRACE_THREADS,
// decided at start: tracer/threads.cpp records only while this holds).
bool threads_tracked() noexcept;
// Return whether SMTRACE_THREADS=`mode` records thread synchronization for
// a rank whose MPI provided `thread_level` (0 single .. 3 multiple), with
// the load/store runtime attached or not.
bool thread_tracking(ThreadTracking mode, int32_t thread_level, bool loadstore) noexcept;

// Start recording rank `info.rank` into `info.options.dir`: create the
// directory, the rank file and its header, the world and self CommDefs;
// rank 0 writes manifest.json. Return false (after one warning) when the
// rank cannot record. Not thread safe: call once, from MPI_Init's wrapper.
bool start(const StartInfo& info);
// Write the complete MPI_Init / MPI_Init_thread event `call` from return
// address `site`, entered at `t0` (a now() reading taken before start).
void record_init(format::Call call, uintptr_t site, int64_t t0);
// End the trace: flush folded polls, write Termination{`kind`}, seal the
// chunk; with `close` also cut the file and unmap it. Report the tracer's
// error count once. Later calls do nothing.
void finish(format::TerminationKind kind, int32_t signal, const std::string& message, bool close);
// Record the call `call` at return address `site`, made after MPI_Finalize
// ended the trace (MPI-3.1 section 8.7 forbids it): the rank file is opened
// again and one event (call, site, thread, time; no arguments) is written
// after its termination record. Once per process; return true when written
// (false: no trace, the trace ended otherwise, or it was written before).
bool record_after_finalize(format::Call call, uintptr_t site) noexcept;
// After start() with StartInfo::before_init: write the call `call` at
// return address `site`, made before MPI_Init (as pending: MPI ends the
// process inside it), and end the trace (exit_without_finalize, closed).
void record_before_init(format::Call call, uintptr_t site) noexcept;
// Stop recording, used by unit tests to start again in another directory.
void reset_for_tests();

// Write a CommDef (communicator or group) record.
void define_comm(const format::CommDef& comm);
// Write a DatatypeDef record.
void define_datatype(const format::DatatypeDef& type);
// Write a TracerNote with `message` (nothing while not recording).
void note(const std::string& message);
// Count one tracer error (reported at finish).
void count_error() noexcept;
// Return the number of tracer errors so far.
uint64_t errors() noexcept;

// Record an annotated local access: ANNOTATE_READ / ANNOTATE_WRITE.
void on_annotate(format::Call call, uintptr_t address, uint64_t size, uintptr_t site) noexcept;
// Write a BUFFER_MODIFIED record of this thread: the bytes [address, +size)
// that pending `request` reads changed before the call at `site` (which may
// complete it) was entered (the content check, tracer/content_hash.hpp).
void record_buffer_modified(uint64_t request, uint64_t address, uint64_t size, uintptr_t site) noexcept;
// Record a run of loads or stores that the load/store runtime closed
// (a LOAD / STORE event of this thread; tracer/access.hpp).
void on_access_run(const smtrace_access_run& run) noexcept;
// Return true while this thread is inside a traced call.
bool in_wrapper() noexcept;

// Thread synchronization (tracer/threads.cpp). Return a fresh tracer thread
// id for a thread about to be created (UINT32_MAX while not recording).
uint32_t reserve_thread_id() noexcept;
// Make `id` (from reserve_thread_id) this thread's tracer id.
void adopt_thread_id(uint32_t id) noexcept;
// Write the complete thread-family event `e` of this thread from code
// address `site` (its t_start and duration already set); this thread's open
// load/store runs are written first. `bits` (format::thread_sync: who
// recorded it) are added to RankHeader.thread_sync, in place. Return its seq.
uint64_t record_event(format::Event& e, uintptr_t site, uint32_t bits) noexcept;
// Write the pending entry of the blocking thread-family event `e` (its
// release part: before the call goes on), as record_event; return its seq.
uint64_t record_entry(format::Event& e, uintptr_t site, uint32_t bits) noexcept;
// Complete the pending event `seq` written by record_entry for `e`, which
// returned at `t_end`.
void record_exit(uint64_t seq, format::Event& e, int64_t t_end) noexcept;

// Marks the calling thread as inside MPI (in_wrapper() true) for its
// lifetime without recording anything: MPI_Init's own work (threads it
// starts, locks it takes) is not the program's.
class Untraced {
 public:
  Untraced() noexcept;
  ~Untraced();
  Untraced(const Untraced&) = delete;
  Untraced& operator=(const Untraced&) = delete;

 private:
  bool m_was;
};
// Return the CallSite id of code address `address`, writing its Module and
// CallSite records on first sight (0 while not recording). CUDA kernel
// launches name their kernel this way (Event.kernel).
uint32_t site_id(uintptr_t address) noexcept;

// One traced call in flight on this thread.
class CallScope {
 public:
  // Take the re-entry guard; `site` is the wrapper's return address.
  CallScope(format::Call call, uintptr_t site) noexcept;
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Treat this call as one that may not return: enter() writes its entry
  // record (as for a blocking call), so a job MPI aborts inside it keeps it.
  // Call before enter().
  void expect_no_return() noexcept { m_blocking = true; }
  // Return true when enter() will write an entry record (a blocking call,
  // or expect_no_return): expect_no_return then changes nothing.
  bool writes_entry() const noexcept { return m_blocking; }
  // Take the start time; for a blocking call write the pending entry record.
  // The inputs in `e` are final from here on: outputs go to out() and
  // set_status (leave() may finish the entry record as it is).
  void enter() noexcept;
  // Return the event to put outputs in (for blocking calls, the completion).
  format::Event& out() noexcept;
  // Set the call's status output: what `out().status = status` does, without
  // resetting the output slot when the status is a blocking call's only
  // output (a Recv's), so the slot is not reset on a receive's way out.
  void set_status(const format::Status& status) noexcept;
  // The slot set_status sets (at its default until filled), to fill in
  // place: a Status built elsewhere and copied in is read back through a
  // store-forwarding stall (its optionals stored as 4 + 1 bytes, loaded 16
  // at a time).
  format::Status& status() noexcept { return m_blocking ? m_status : e.status; }
  // Mark this call an unsuccessful poll (flag false): it may be folded.
  void unsuccessful_poll() noexcept { m_unsuccessful_poll = true; }
  // Take the end time and write the event (or its completion) with `rc`.
  void leave(int rc) noexcept;

  // The call's inputs. This and the outputs are per-thread slots reused
  // from call to call (one traced call per thread at a time: the re-entry
  // guard), so their vectors keep their capacity: no allocation once warm.
  format::Event& e;

 private:
  bool m_blocking = false;
  bool m_entered = false;
  bool m_unsuccessful_poll = false;
  uint64_t m_pending_seq = 0;
  format::Event& m_end;  // a blocking call's outputs
  bool m_end_used = false;
  format::Status m_status;  // a blocking call's status (set_status)
};

// Return true when calls may be recorded through HotScope (decided at
// start): no call stack beyond the call site (SMTRACE_STACK_DEPTH=1), no
// load/store runtime, nothing forced (SMTRACE_FORCE). Otherwise CallScope.
bool hot_path() noexcept;

// Register `active`, which says whether CUDA calls are being traced: the
// CUPTI subscriber (tracer/cupti.cpp) does once it subscribed. At start(),
// a rank with none registered, or whose `active` says no, writes the header
// option cuda.traced=off (format::k_cuda_option): it records no CUDA event
// (the subscription happens at load time only).
void set_cuda_tracing(bool (*active)() noexcept) noexcept;

// MPI_THREAD_SERIALIZED as StartInfo::thread_level gives it.
constexpr int32_t k_thread_serialized = 2;
// Return whether a rank whose MPI provided `thread_level` (0 single ..
// 3 multiple) measures the duration of its non-blocking calls (calls.def
// blocks=0, entered without expect_no_return): only under
// MPI_THREAD_SERIALIZED, where the thread-level check compares calls of
// different threads by time. Elsewhere such a call reads the clock once
// (its t_start) and records duration 0, and the header's options say
// `durations=blocking` (docs/trace-format.md).
bool timed_nonblocking(int32_t thread_level) noexcept;

// CallScope for a call whose inputs and outputs all fit format::HotEvent
// (the wrappers' point-to-point and one-sided calls, and the completion of
// at most HotEvent::k_max_requests requests, while hot_path()): the
// same records as CallScope writes for the same values, encoded from `e` by
// RecordEncoder::hot_event_at, without the per-thread Event slots (nothing
// to reset, no 66-field encoding). Used like CallScope; `e.request`,
// `e.completed`, `e.flag` and `e.status` are outputs (set after enter(),
// with out() / set_status); an unsuccessful poll may be folded as with
// CallScope. G: the groups of fields the call has (format::HotGroups; the
// wrappers' shapes know them), so the encoder skips the tests of the
// others; instantiated for SMTRACE_HOT_GROUP_SETS.
template <format::HotGroups G>
class HotScopeOf {
 public:
  HotScopeOf(format::Call call, uintptr_t site) noexcept;
  ~HotScopeOf();
  HotScopeOf(const HotScopeOf&) = delete;
  HotScopeOf& operator=(const HotScopeOf&) = delete;

  void expect_no_return() noexcept { m_blocking = true; }
  bool writes_entry() const noexcept { return m_blocking; }
  void enter() noexcept;
  format::HotEvent& out() noexcept { return e; }
  void set_status(const format::Status& status) noexcept { e.status = status; }
  format::Status& status() noexcept { return e.status; }
  void unsuccessful_poll() noexcept { m_unsuccessful_poll = true; }
  void leave(int rc) noexcept;

  format::HotEvent e;

 private:
  uintptr_t m_site;
  bool m_blocking;
  bool m_unsuccessful_poll = false;
  bool m_entered = false;
  uint64_t m_pending_seq = 0;
  uint64_t m_request_in = 0;  // e.request as the entry was written
};
// A HotScope for any call that fits a HotEvent (every group tested).
using HotScope = HotScopeOf<format::HotGroups{}>;

}  // namespace handlers
}  // namespace smtrace::tracer
