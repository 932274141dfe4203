/* Two ranks that both send before they receive (2 ranks): each MPI_Sends
 * one int to the other, then MPI_Recvs. The run completes only because MPI
 * buffers small messages (eager protocol); with zero buffering (or larger
 * messages, or MPI_Ssend) both wait in MPI_Send for a receive that is never
 * posted. `smtrace check` proves it: potential-deadlock, with the cycle.
 * Fixed: `fixed`, rank 0 sends first and rank 1 receives first; `sendrecv`,
 * both exchange with one MPI_Sendrecv. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int peer = 1 - rank;

  int out = rank + 1, in = 0;
  if (strcmp(mode, "sendrecv") == 0) {
    MPI_Sendrecv(&out, 1, MPI_INT, peer, 0, &in, 1, MPI_INT, peer, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  } else if (strcmp(mode, "fixed") == 0 && rank == 1) {
    MPI_Recv(&in, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&out, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
  } else {
    MPI_Send(&out, 1, MPI_INT, peer, 0, MPI_COMM_WORLD); /* bug: both ranks send first */
    MPI_Recv(&in, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  E2E_REQUIRE(in == peer + 1);

  MPI_Finalize();
  return 0;
}
