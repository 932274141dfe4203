/* A stencil-like loop for the load/store runtime's cost (bench/loadstore.sh):
 * a 2D Jacobi sweep over two N x N grids of doubles, ITERATIONS times, with
 * an RMA window alive during the sweeps, so that the runtime's watch set is
 * not empty.
 *
 *   bench_stencil [N] [ITERATIONS] [outside|inside]
 *
 * outside (default): the grids are malloc'ed, away from the window: the
 *   common case, every access is outside the watched ranges.
 * inside: the grids are the window's memory (MPI_Win_allocate): every access
 *   is watched and recorded (as strided runs).
 * Prints one line: "stencil n N iterations I points P ns_per_point W
 * cpu_ns_per_point C checksum S" for rank 0 (each rank sweeps its own grids;
 * no communication inside the timed loop).
 *
 * Built with -fopenmp, each sweep is a parallel loop over the rows
 * (OMP_NUM_THREADS threads, a parallel region per sweep) and the CPU time
 * is the process's (every thread's). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

/* One Jacobi sweep of the interior of `a` into `b`. */
static void sweep(const double* a, double* b, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 1; i < n - 1; ++i)
    for (long j = 1; j < n - 1; ++j)
      b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = bench_arg(argc, argv, 1, 1024);
  const long iterations = bench_arg(argc, argv, 2, 20);
  const int inside = argc > 3 && strcmp(argv[3], "inside") == 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  const MPI_Aint grid_bytes = (MPI_Aint)(n * n * (long)sizeof(double));
  double* window = NULL;
  MPI_Win win;
  MPI_Win_allocate(inside ? 2 * grid_bytes : 4096, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
  double* a = inside ? window : malloc((size_t)grid_bytes);
  double* b = inside ? window + n * n : malloc((size_t)grid_bytes);
  if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long k = 0; k < n * n; ++k) {
    a[k] = (double)(k % 7);
    b[k] = 0.0;
  }
  MPI_Barrier(MPI_COMM_WORLD);

#ifdef _OPENMP
#define BENCH_CPU_NS bench_process_cpu_ns
#else
#define BENCH_CPU_NS bench_cpu_ns
#endif
  const int64_t t0 = bench_now_ns(), c0 = BENCH_CPU_NS();
  for (long it = 0; it < iterations; ++it) {
    sweep(a, b, n);
    double* t = a;
    a = b;
    b = t;
  }
  const int64_t t1 = bench_now_ns(), c1 = BENCH_CPU_NS();

  double checksum = 0.0;
  for (long k = 0; k < n * n; k += n + 1) checksum += a[k];
  const double points = (double)(n - 2) * (double)(n - 2) * (double)iterations;
  if (rank == 0)
    printf("stencil n %ld iterations %ld points %.0f ns_per_point %.3f cpu_ns_per_point %.3f checksum %.6f\n", n,
           iterations, points, (double)(t1 - t0) / points, (double)(c1 - c0) / points, checksum);

  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  if (!inside) {
    free(a);
    free(b);
  }
  MPI_Finalize();
  return 0;
}
