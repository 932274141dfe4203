/* rma-race, remote-local (2 ranks): rank 0 puts into rank 1's window under
 * a shared lock while rank 1 stores into the same element of its own window
 * memory (annotated) without any synchronization with rank 0. Fixed
 * (argument `fixed`): rank 1 stores after a barrier that follows rank 0's
 * unlock. */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

enum { N = 8 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[N] = {0};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  if (rank == 0) {
    int value = 42;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Put(&value, 1, MPI_INT, 1, 3, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
  }
  if (fixed) MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    smtrace_annotate_write(&window[3], sizeof window[3]); /* bug (unfixed): the Put may land now */
    window[3] = 7;
  }
  if (!fixed) MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
