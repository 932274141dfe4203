/* A successful MPI_Win_test ends the exposure epoch (2 ranks): rank 0
 * exposes its window to rank 1 with MPI_Win_post and polls MPI_Win_test
 * until it returns true, then writes the element rank 1 put. MPI_Win_test
 * returning true has the effect of MPI_Win_wait (MPI-3.1 section 11.5.2):
 * the put is complete, no race. Bug (argument `early`): rank 0 writes the
 * element before its test succeeds (rma-race). */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int early = argc > 1 && strcmp(argv[1], "early") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = 1 - rank;
  MPI_Group_incl(world, 1, &other, &peer);
  if (rank == 0) {
    MPI_Win_post(peer, 0, win);
    if (early) {
      smtrace_annotate_write(&window[1], sizeof window[1]); /* bug: the put may land now */
      window[1] = -1;
    }
    int flag = 0;
    while (!flag) MPI_Win_test(win, &flag);
    if (!early) {
      smtrace_annotate_write(&window[1], sizeof window[1]);
      E2E_REQUIRE(window[1] == 7);
      window[1] = 8;
    }
  } else {
    const int value = 7;
    MPI_Win_start(peer, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
