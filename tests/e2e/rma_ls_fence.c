/* rma-race through compiler instrumentation (built with smtrace-cc), target
 * side (2 ranks): in one fence epoch rank 0 puts into rank 1's window while
 * rank 1 stores into the same elements of its own window memory. Fixed
 * (argument `fixed`): rank 1 stores after the fence that closes the epoch. */
#include <string.h>

#include "e2e_util.h"

enum { N = 32 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int* window = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);

  int values[N];
  for (int i = 0; i < N; ++i) values[i] = 100 + i;
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(values, N / 2, MPI_INT, 1, N / 4, N / 2, MPI_INT, win);
  if (rank == 1 && !fixed)
    for (int i = 0; i < N; ++i) window[i] = -1; /* bug: rank 0's put lands in this epoch */
  MPI_Win_fence(0, win);
  if (rank == 1 && fixed)
    for (int i = 0; i < N; ++i) window[i] = -1;
  MPI_Win_fence(0, win);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
