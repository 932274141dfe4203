/* MPI_Send + MPI_Recv of 0 bytes, each rank to itself on MPI_COMM_SELF (one
 * rank suffices; every rank runs it): the blocking point-to-point calls'
 * cost without a partner's timing, which makes the two-rank ping-pong's
 * figures noise on a loaded machine.
 *   bench_self_sendrecv [ITERATIONS]
 * Prints, from rank 0, ns per intercepted call = loop time / (2 * N), in
 * wall time and in the thread's CPU time. */
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
  MPI_Status status;
  for (long i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      lap = bench_lap_start();
    }
    /* A 0-byte standard send to oneself completes eagerly, before its receive. */
    MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF);
    MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &status);
  }
  lap = bench_lap_stop(lap);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    bench_report("self_sendrecv", iterations, 2 * (warmup + iterations), lap, 2.0 * (double)iterations);
  MPI_Finalize();
  return 0;
}
