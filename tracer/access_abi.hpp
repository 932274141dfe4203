// The interface between libsmtrace.so (the tracer, preloaded by `smtrace
// record`) and libsmtrace_tsan.so (the load/store runtime, linked into
// programs compiled by smtrace-cc with -fsanitize=thread): plain C structs
// and function pointers, so that the two libraries agree without sharing
// any C++ type.
//
// Who does what:
// - The runtime owns the hot path: the __tsan_* entry points, the per-thread
//   shadow stack and open runs, and the table of watched ranges that every
//   access is checked against.
// - The tracer owns what needs MPI or the trace: which ranges are watched
//   (it publishes their union after every change) and the writing of runs
//   as Load/Store events.
//
// At MPI_Init the tracer looks the runtime up with
// dlsym(RTLD_DEFAULT, "smtrace_access_runtime") and, when the versions
// agree, attaches. A program without the runtime is traced as before; a
// program with the runtime and without the tracer watches nothing (every
// access costs its filter check only).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// Raise on any change of these structs or of the meaning of a member.
inline constexpr uint32_t k_smtrace_access_abi = 2;
// Outer frames a run keeps (the tracer's stack depth is capped to this).
inline constexpr uint32_t k_smtrace_access_frames = 63;

enum smtrace_access_kind : uint32_t { smtrace_access_load = 0, smtrace_access_store = 1 };

// A half-open address range [lo, hi).
struct smtrace_access_range {
  uintptr_t lo;
  uintptr_t hi;
};

// Accesses of one instruction merged by the runtime: `count` blocks of
// `size` bytes, block k at `addr + k * stride`.
struct smtrace_access_run {
  uint32_t kind;        // smtrace_access_kind
  uint32_t depth;       // frames in `stack`
  uintptr_t pc;         // return address of the __tsan_* call (or of memcpy & co.)
  uintptr_t addr;
  uint64_t size;
  uint64_t count;
  int64_t stride;
  int64_t t_start;      // the tracer's clock at the first access
  uintptr_t stack[k_smtrace_access_frames];  // the shadow stack, innermost first
};

// What the tracer gives the runtime. Every function is called on the thread
// the accesses belong to.
struct smtrace_access_tracer {
  uint32_t abi;         // k_smtrace_access_abi
  uint32_t frames;      // outer frames to keep per run (<= k_smtrace_access_frames)
  // Write a finished run (the runtime holds none of the tracer's locks).
  void (*record)(const smtrace_access_run* run);
  // Return nonzero while the thread is inside an MPI wrapper: accesses made
  // there (a user reduction op, a callback) are MPI's, not the program's.
  int (*busy)(void);
  // Return the tracer's clock (ns since the rank's origin).
  int64_t (*now)(void);
};

// What the runtime gives the tracer.
struct smtrace_access_runtime_api {
  uint32_t abi;         // k_smtrace_access_abi
  // Attach `tracer` (kept by pointer; nullptr detaches: nothing is recorded).
  void (*attach)(const smtrace_access_tracer* tracer);
  // Replace the watched ranges by `ranges[0..n)`: sorted, disjoint, non-empty.
  // Callers serialize calls; readers on other threads never block.
  void (*publish)(const smtrace_access_range* ranges, size_t n);
  // Hand this thread's open runs, oldest first, to `write(run, context)` and
  // close them. The tracer calls it, holding its lock, right before it
  // writes an event of this thread, so that accesses stay between the MPI
  // calls they happened between.
  void (*flush_thread)(void (*write)(const smtrace_access_run* run, void* context), void* context);
  // Copy up to `max` frames of this thread's shadow stack (return addresses,
  // innermost first) to `out`; return how many. 0 when the thread has none.
  size_t (*stack)(uintptr_t* out, size_t max);
  // Tag this thread's runs with `tag` (the tracer's thread id + 1) for
  // flush_all.
  void (*set_tag)(uint64_t tag);
  // Hand every thread's open runs to `write(run, tag, context)` (tag 0: the
  // thread was never tagged) and close them: tracing ends (MPI_Finalize,
  // exit, a fatal signal) while threads that make no MPI call (OpenMP
  // workers) may still hold runs. A thread busy in the runtime is waited
  // for briefly, then left; return how many threads were left with runs
  // (or possibly with runs) unwritten. Never blocks for long: also called
  // from a signal handler.
  uint32_t (*flush_all)(void (*write)(const smtrace_access_run* run, uint64_t tag, void* context), void* context);
};

// The hull of the watched ranges, for code instrumented by smtrace's compiler
// plugins (tracer/filter/), which read it inline before every access and
// call the runtime's __tsan_* entry only on a hit: `lo` is the first watched
// byte minus 15 (so that an access of up to 16 bytes hits with one compare:
// addr - lo < hi - lo), `hi` one past the last watched byte; lo = hi = 0
// while nothing is watched. Read with relaxed (LLVM: unordered) loads. The
// runtime widens it before a range is watched and narrows it after one is
// no longer (RangeTable::publish), so that a thread that sees the runtime
// watch a range sees a hull that covers it. Instrumented code has its layout
// compiled in: a change of it must rename smtrace_access_watch_hull.
struct smtrace_access_hull {
  uintptr_t lo;
  uintptr_t hi;
};

// Exported by libsmtrace_tsan.so.
const smtrace_access_runtime_api* smtrace_access_runtime(void);
extern smtrace_access_hull smtrace_access_watch_hull;
}
