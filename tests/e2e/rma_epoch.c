/* epoch-lifecycle (2 ranks): with MPI_ERRORS_RETURN on the window, rank 0
 * puts into rank 1's window before any epoch is open and unlocks a target
 * it never locked; with the argument `double` it locks rank 1 twice instead
 * (nested locks on one target, MPI-3.1 section 11.5.3). Fixed (argument
 * `fixed`): a lock/put/unlock epoch. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int twice = argc > 1 && strcmp(argv[1], "double") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  if (rank == 0) {
    int value = 5;
    if (fixed || twice) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    if (twice) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win); /* bug: rank 1 is already locked */
    MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win); /* bug (no argument): no epoch */
    MPI_Win_unlock(1, win);                             /* bug (no argument): never locked */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
