/* MPI_Put + MPI_Win_flush loop under MPI_Win_lock_all (2 ranks or more):
 * each rank puts 8 bytes into its right neighbour and flushes, N times.
 *   bench_put_flush [ITERATIONS]
 * Prints, from rank 0, ns per intercepted call = loop time / (2 * N), in wall
 * time and in the thread's CPU time. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "bench_clock.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long iterations = bench_arg(argc, argv, 1, 100000);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int target = (rank + 1) % size;

  long* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  long value = rank;
  const long warmup = bench_warmup(iterations);
  bench_lap lap = {0, 0};
  MPI_Win_lock_all(0, win);
  for (long i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      lap = bench_lap_start();
    }
    MPI_Put(&value, 1, MPI_LONG, target, i % 64, 1, MPI_LONG, win);
    MPI_Win_flush(target, win);
  }
  lap = bench_lap_stop(lap);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    bench_report("put_flush", iterations, 2 * (warmup + iterations), lap, 2.0 * (double)iterations);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
