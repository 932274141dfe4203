/* Timing for the tracer benchmarks: CLOCK_MONOTONIC and thread CPU time in
 * ns, read outside MPI so the tracer never sees (or adds to) the reads. */
#ifndef SMTRACE_BENCH_CLOCK_H
#define SMTRACE_BENCH_CLOCK_H

#include <stdint.h>
#include <stdio.h>
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

/* The timed part of a benchmark loop of warmup + N iterations: the first
 * bench_warmup(N) are not timed; bench_lap_start() at iteration i == warmup,
 * bench_lap_stop() after the loop gives the wall and CPU ns between. */
typedef struct {
  int64_t wall_ns, cpu_ns;
} bench_lap;

static inline long bench_warmup(long iterations) { return iterations / 10 + 1; }

static inline bench_lap bench_lap_start(void) {
  bench_lap lap = {bench_now_ns(), bench_cpu_ns()};
  return lap;
}

static inline bench_lap bench_lap_stop(bench_lap start) {
  bench_lap lap = {bench_now_ns() - start.wall_ns, bench_cpu_ns() - start.cpu_ns};
  return lap;
}

/* The line bench/tracer_compare.sh and tracer_overhead.sh read: ns per
 * intercepted call over `timed_calls` calls, in wall and CPU time. */
static inline void bench_report(const char* name, long iterations, long calls_per_rank, bench_lap lap,
                                double timed_calls) {
  printf("bench %s iterations %ld calls_per_rank %ld ns_per_call %.1f cpu_ns_per_call %.1f\n", name, iterations,
         calls_per_rank, (double)lap.wall_ns / timed_calls, (double)lap.cpu_ns / timed_calls);
}

#endif
