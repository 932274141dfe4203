/* A request handle that MPI_Request_free freed is no longer valid (2 ranks):
 * each rank sends with MPI_Isend, frees the request, receives the peer's
 * message, then sends again with a new MPI_Isend (whose handle MPI may give
 * the same value) and waits for it, which is correct. Bug (argument
 * `copy`): the rank waits on a copy of the freed handle instead
 * (invalid-argument: MPI-3.1 section 3.7.3, a freed request may not be used
 * again). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int copy = argc > 1 && strcmp(argv[1], "copy") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int other = 1 - rank;
  int out = rank, in = -1;
  MPI_Request send, kept;
  MPI_Isend(&out, 1, MPI_INT, other, 0, MPI_COMM_WORLD, &send);
  kept = send;
  MPI_Recv(&in, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  E2E_REQUIRE(in == other);
  MPI_Request_free(&send); /* the send completed: the peer received it */
  if (copy) {
    MPI_Wait(&kept, MPI_STATUS_IGNORE); /* bug: kept is the freed handle */
  } else {
    int again = rank + 10;
    MPI_Isend(&again, 1, MPI_INT, other, 1, MPI_COMM_WORLD, &send);
    MPI_Recv(&in, 1, MPI_INT, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(in == other + 10);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
