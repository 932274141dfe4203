/* epoch-lifecycle (2 ranks): an access epoch opened while RMA calls of a
 * fence epoch are pending. Rank 0 puts into rank 1's window after a fence,
 * then locks rank 1 and puts again before any fence completed the first put:
 * the fence epoch and the lock epoch overlap (access epochs of one window at
 * one process must be disjoint, MPI-3.1 section 11.5). MPI_ERRORS_RETURN on
 * the window. Fixed (argument `fixed`): a fence with MPI_MODE_NOSUCCEED
 * closes the fence epoch before the lock (a fence followed by lock epochs is
 * allowed). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int value = 5;
  if (rank == 0) MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
  if (fixed) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); /* bug (no argument): the fence epoch's put is pending */
    MPI_Put(&value, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
  }
  if (!fixed) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
