/* MPI_Isend + MPI_Wait of BYTES bytes from rank 0 to rank 1 (which posts
 * MPI_Recv), the cost of the tracer's content check of pending send buffers
 * (docs/tracer.md "Content check of pending send buffers").
 *   bench_isend_wait BYTES [ITERATIONS]
 * Prints, from rank 0, ns per iteration (one Isend and one Wait, both
 * intercepted: calls_per_rank 2) in wall and thread CPU time. bench/
 * content_hash.sh runs it untraced, traced with SMTRACE_HASH=0 and traced
 * with SMTRACE_HASH=1, alternating; the check's cost is the difference of
 * the last two. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long bytes = bench_arg(argc, argv, 1, 1024);
  const long iterations = bench_arg(argc, argv, 2, 20000);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "bench_isend_wait: needs exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* buf = malloc((size_t)bytes);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(buf, rank + 1, (size_t)bytes);
  const long warmup = bench_warmup(iterations);
  bench_lap lap = {0, 0};
  for (long i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      lap = bench_lap_start();
    }
    if (rank == 0) {
      MPI_Request request;
      MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  lap = bench_lap_stop(lap);
  if (rank == 0) {
    char name[64];
    snprintf(name, sizeof name, "isend_wait_%ld", bytes);
    bench_report(name, iterations, 2, lap, (double)iterations);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
