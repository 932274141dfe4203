/* MPI_Irecv + MPI_Isend + MPI_Waitsome / MPI_Waitany loop, each rank with
 * itself (one rank suffices; every rank runs it): a request completion
 * measured without a partner's timing.
 *   bench_waitsome [ITERATIONS]
 * Each iteration posts a receive and a send of 0 bytes to the rank itself,
 * then completes both: with MPI_Waitsome (until both are done) on even
 * iterations, with two MPI_Waitany on odd ones. Prints, from rank 0, ns per
 * intercepted call = loop time / calls made, in wall time and in the
 * thread's CPU time. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "bench_clock.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long iterations = bench_arg(argc, argv, 1, 100000);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long warmup = bench_warmup(iterations);
  bench_lap lap = {0, 0};
  long calls = 0, calls_at_start = 0;
  MPI_Request r[2];
  int indices[2], outcount = 0, index = 0;
  for (long i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      lap = bench_lap_start();
      calls_at_start = calls;
    }
    MPI_Irecv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &r[0]);
    MPI_Isend(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &r[1]);
    calls += 2;
    if (i % 2 == 0) {
      for (int done = 0; done < 2; done += outcount, ++calls) MPI_Waitsome(2, r, &outcount, indices, MPI_STATUSES_IGNORE);
    } else {
      MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
      MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
      calls += 2;
    }
  }
  lap = bench_lap_stop(lap);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    bench_report("waitsome", iterations, calls, lap, (double)(calls - calls_at_start));
  MPI_Finalize();
  return 0;
}
