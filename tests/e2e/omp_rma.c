/* Hybrid MPI + OpenMP, an OpenMP worker's store into window memory during
 * an epoch (2 ranks, built with smtrace-cc -fopenmp: GCC's libgomp, or
 * LLVM's libomp with clang). Rank 1 puts into rank 0's window in a lock
 * epoch and then sends rank 0 a token; rank 0 runs a parallel region of 4
 * threads in which the master thread receives the token
 * (MPI_THREAD_FUNNELED) and thread 1 stores into the window memory.
 *   (no argument)  thread 1 stores before the barrier that follows the
 *                  receive: the store races the put
 *   fixed          thread 1 stores after that barrier
 *   fixed_before   thread 1 stores in a parallel region that ends before
 *                  rank 0 sends rank 1 the go-ahead for its epoch */
#include <omp.h>
#include <string.h>

#include "e2e_util.h"

enum { N = 16 };

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  E2E_REQUIRE(provided >= MPI_THREAD_FUNNELED);
  const char* mode = argc > 1 ? argv[1] : "";
  const int fixed = strcmp(mode, "fixed") == 0;
  const int before = strcmp(mode, "fixed_before") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int* window = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
  for (int i = 0; i < N; ++i) window[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 1) {
    int go = 0;
    if (before) MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int values[N];
    for (int i = 0; i < N; ++i) values[i] = 100 + i;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(values, N, MPI_INT, 0, 0, N, MPI_INT, win);
    MPI_Win_unlock(0, win);
    const int token = 42;
    MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  } else if (before) {
#pragma omp parallel num_threads(4)
    {
      if (omp_get_thread_num() == 1)
        for (int i = 0; i < N; ++i) window[i] = -1;
    }
    const int go = 1;
    MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(token == 42);
  } else {
#pragma omp parallel num_threads(4)
    {
      if (omp_get_thread_num() == 0) {
        int token = 0;
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        E2E_REQUIRE(token == 42);
      }
      if (!fixed && omp_get_thread_num() == 1)
        for (int i = 0; i < N; ++i) window[i] = -1; /* bug: rank 1's put may land meanwhile */
#pragma omp barrier
      if (fixed && omp_get_thread_num() == 1)
        for (int i = 0; i < N; ++i) window[i] = -1;
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
