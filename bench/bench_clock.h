/* Timing for the tracer benchmarks: CLOCK_MONOTONIC in ns, read outside MPI
 * so the tracer never sees (or adds to) the clock reads. */
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

/* Return argv[i] as a positive count, or `fallback`. */
static inline long bench_arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  const long v = strtol(argv[i], NULL, 10);
  return v > 0 ? v : fallback;
}

#endif
