/* A crash (2 ranks): after a few exchanges rank 1 segfaults (or, with the
 * argument "kill", is killed by SIGKILL, which no tracer can catch: the
 * OOM killer's way). Rank 0 then waits in a barrier until the launcher tears
 * the job down. Fixed (argument `fixed`): no signal. */
#include <signal.h>
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int peer = 1 - rank;
  for (int i = 0; i < 3; ++i) {
    int out = 10 * rank + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, peer, i, &in, 1, MPI_INT, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(in == 10 * peer + i);
  }
  if (rank == 1) {
    int ping = 1;
    MPI_Send(&ping, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
    if (!fixed) raise(argc > 1 && strcmp(argv[1], "kill") == 0 ? SIGKILL : SIGSEGV);
  } else {
    int ping = 0;
    MPI_Recv(&ping, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
