/* 0-byte ping-pong between 2 ranks with MPI_Send / MPI_Recv.
 *   bench_pingpong [ITERATIONS]
 * Prints, from rank 0, the time per intercepted call: each iteration is one
 * MPI_Send and one MPI_Recv on each rank, so ns/call = loop time / (2 * N).
 * The figure includes the transport's latency; the tracer's cost is the
 * difference between a traced and an untraced run of the same binary. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "bench_clock.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long iterations = bench_arg(argc, argv, 1, 200000);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "bench_pingpong: needs exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int peer = 1 - rank;
  char byte = 0;
  const long warmup = bench_warmup(iterations);
  bench_lap lap = {0, 0};
  for (long i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      lap = bench_lap_start();
    }
    if (rank == 0) {
      MPI_Send(&byte, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(&byte, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&byte, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&byte, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  lap = bench_lap_stop(lap);
  if (rank == 0)
    bench_report("pingpong", iterations, 2 * (warmup + iterations), lap, 2.0 * (double)iterations);
  MPI_Finalize();
  return 0;
}
