/* A deadlock (2 ranks): both ranks receive first. The test kills the job
 * with timeout; each rank's trace must end in a pending MPI_Recv.
 * With the argument "fixed" (the twin whose report must be clean) rank 0
 * sends first and the job completes. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int peer = 1 - rank;
  int in = -1, out = rank;
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (fixed && rank == 0) {
    MPI_Send(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
    MPI_Recv(&in, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&in, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
  }
  E2E_REQUIRE(in == peer);
  MPI_Finalize();
  return 0;
}
