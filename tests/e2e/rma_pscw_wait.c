/* Generalized active-target synchronization out of order (2 ranks): rank 0
 * starts an access epoch to rank 1, puts and completes it, then enters a
 * barrier; rank 1 enters the barrier before it posts the exposure epoch.
 * MPI_Win_complete (or the start) waits for the post, the barrier for
 * rank 0: a deadlock (analyzer/checks/deadlock.cpp: a start or complete
 * waits for its targets' posts, a wait for its origins' completes). Fixed
 * (argument `fixed`): rank 1 posts before the barrier and waits after it. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int cells[2] = {0, 0}, one = 1;
  MPI_Win win;
  MPI_Win_create(cells, sizeof cells, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = 1 - rank;
  MPI_Group_incl(world, 1, &other, &peer);
  if (rank == 0) {
    MPI_Win_start(peer, 0, win);
    MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    if (fixed) MPI_Win_post(peer, 0, win);
    MPI_Barrier(MPI_COMM_WORLD); /* bug: rank 0's epoch waits for the post below */
    if (!fixed) MPI_Win_post(peer, 0, win);
    MPI_Win_wait(win);
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
