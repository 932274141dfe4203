// smtrace tracer: PMPI wrappers that record every intercepted MPI call of a
// rank into rank-<R>.smt (trace format v1, trace_format/smtrace.proto).
//
// Ground rules, for every file of tracer/:
// - No exception leaves a wrapper; each wrapper calls PMPI_X exactly once and
//   returns its rc, whatever happens to tracing.
// - Inside the tracer, call PMPI_*, never MPI_* (an MPI_* call would re-enter
//   our own wrappers and record the tracer's own work).
// - The re-entry guard is thread_local: MPI calls made by the MPI library or
//   by the tracer itself while a wrapper runs are not traced.
// - No MPI traffic per call; no syscall per call on the hot path: clock from
//   the cycle counter (or the vDSO), records encoded straight into an mmap'd
//   file. (The one exchange: a window's creation gathers its members' sizes
//   once, on every member or none, wrappers.cpp WindowShapes.)
// - Swap MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE for local statuses so
//   wildcard receives record the actual source, tag and count.
// - Handles become plain ids in the wrappers (wrappers.cpp, the only file that
//   includes mpi.h); handlers take plain values so unit tests call them
//   without MPI.
// - The tracer's own problems never break the application: one warning on
//   stderr, tracing stops for the rank. Tracer errors are counted and
//   reported once, at MPI_Finalize.
// - Only libc, libdl and MPI are linked: never libprotobuf (the application
//   may link its own).
#pragma once

#define SMTRACE_EXPORT __attribute__((visibility("default")))
#define SMTRACE_NOINLINE __attribute__((noinline))
// initial-exec: a few bytes of static TLS, read without __tls_get_addr on
// every wrapper call (the library is preloaded or linked, not dlopen'ed late).
#define SMTRACE_FAST_TLS __attribute__((tls_model("initial-exec")))

namespace smtrace::tracer {
// The calling thread's T, for a T with a constructor: constructed on the
// thread's first call (dynamic TLS, through __tls_get_addr, which costs about
// 1% of a traced call when reached on every access); later calls reach it
// through a pointer in initial-exec TLS.
template <class T>
T& fast_thread_local() noexcept {
  static thread_local T* at SMTRACE_FAST_TLS = nullptr;
  if (!at) [[unlikely]] {
    static thread_local T owner;
    at = &owner;
  }
  return *at;
}
}  // namespace smtrace::tracer
