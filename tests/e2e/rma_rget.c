/* MPI_Rget's target read ends with its MPI_Wait (2 ranks): rank 1 reads
 * rank 0's window with MPI_Rget, waits for it, and then tells rank 0, which
 * overwrites the element it read. After the MPI_Wait the data is at the
 * origin, so the read of the target is done (MPI-3.1 section 11.3.5, example
 * 11.21): no race, though rank 1's lock epoch is still open. Bug (argument
 * `early`): rank 1 tells rank 0 before its MPI_Wait (rma-race). */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int early = argc > 1 && strcmp(argv[1], "early") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[4] = {10, 11, 12, 13};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int go = 1;
  if (rank == 1) {
    int got = -1;
    MPI_Request request;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Rget(&got, 1, MPI_INT, 0, 2, 1, MPI_INT, win, &request);
    if (early) MPI_Send(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); /* bug: the get may still read */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (!early) MPI_Send(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Win_unlock(0, win);
  } else {
    MPI_Recv(&go, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smtrace_annotate_write(&window[2], sizeof window[2]);
    window[2] = 99;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
