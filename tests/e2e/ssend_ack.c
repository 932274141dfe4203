/* A server that answers whoever asked (3 ranks): ranks 1 and 2 each
 * MPI_Ssend a request to rank 0 and wait for its answer; rank 0 receives
 * twice from MPI_ANY_SOURCE and answers each request with an MPI_Ssend to
 * status.MPI_SOURCE. Rank 2 asks late (a sleep the trace does not order),
 * so the run takes rank 1's request first and answers rank 1 first. Under
 * the other match the answers follow the requests: correct. The trace
 * records the destinations used (1, then 2), not that they came from the
 * status, so `smtrace check` must not claim the deadlock that answering
 * rank 1 first would cause under that match (docs/checks.md, message-race:
 * a call that reuses what a changed status gave).
 * Bug (argument `bug`): rank 0 answers rank 1 first, then rank 2, whoever
 * asked; its trace is the same, and `smtrace explore` confirms the deadlock
 * by re-executing with the other match forced. */
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  int value = 0;
  if (rank == 0) {
    for (int k = 0; k < 2; k++) {
      MPI_Status status;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status);
      MPI_Ssend(&value, 1, MPI_INT, bug ? k + 1 : status.MPI_SOURCE, 1, MPI_COMM_WORLD); /* bug */
    }
  } else {
    if (rank == 2) usleep(300 * 1000); /* lets rank 1's request come first */
    MPI_Ssend(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(value == rank);
  }

  MPI_Finalize();
  return 0;
}
