/* A lock held across a barrier (3 ranks): rank 0 locks rank 1's window
 * memory exclusively (a flush makes sure it holds the lock), tells rank 2
 * so, and then waits in MPI_Barrier; rank 2 reaches the barrier only after
 * its own exclusive lock on rank 1, which it cannot get until rank 0
 * unlocks after the barrier. Each waits for the other: a
 * deadlock (a lock waits for the holders of a conflicting lock,
 * analyzer/checks/deadlock.cpp). Fixed (argument `fixed`): rank 0 unlocks
 * before the barrier. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);
  int cells[2] = {0, 0}, one = 1;
  MPI_Win win;
  MPI_Win_create(cells, sizeof cells, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    if (fixed) MPI_Win_unlock(1, win);
    MPI_Send(&one, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!fixed) MPI_Win_unlock(1, win); /* bug: held across the barrier */
  } else if (rank == 2) {
    int word = 0;
    MPI_Recv(&word, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&one, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
