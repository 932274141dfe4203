/* Timing for the tracer benchmarks: CLOCK_MONOTONIC and thread CPU time in
 * ns, read outside MPI so the tracer never sees (or adds to) the reads. */
#ifndef SMTRACE_BENCH_CLOCK_H
#define SMTRACE_BENCH_CLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline int64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time of the calling thread in ns: on a shared machine, wall time
 * also counts the time other jobs held the core; this does not. */
static inline int64_t bench_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time of the whole process in ns (every thread: OpenMP variants). */
static inline int64_t bench_process_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Return argv[i] as a positive count, or `fallback`. */
static inline long bench_arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  const long v = strtol(argv[i], NULL, 10);
  return v > 0 ? v : fallback;
}

#endif
