/* rma-race through compiler instrumentation (built with smtrace-cc),
 * remote-local load (2 ranks): rank 0 puts into rank 1's window under an
 * exclusive lock while rank 1 reads its own window memory with no
 * synchronization with rank 0. Fixed (argument `fixed`): rank 1 reads after
 * a barrier that follows rank 0's unlock, and must see the value put. */
#include <string.h>

#include "e2e_util.h"

enum { N = 16 };

/* Return the sum of `n` ints: a function of its own, so that the race's
 * call stack has two instrumented frames. */
static long sum_of(const int* v, int n) {
  long sum = 0;
  for (int i = 0; i < n; ++i) sum += v[i];
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[N];
  for (int i = 0; i < N; ++i) window[i] = 0;
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 0) {
    const int value = 42;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&value, 1, MPI_INT, 1, 5, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
  }
  if (fixed) MPI_Barrier(MPI_COMM_WORLD);
  long sum = 0;
  if (rank == 1) {
    sum = sum_of(window, N); /* bug (unfixed): the put may land while this reads */
  }
  if (!fixed) MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1 && fixed) E2E_REQUIRE(sum == 42);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
