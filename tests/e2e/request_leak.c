/* request-leak (2 ranks): rank 0's MPI_Isend is matched and delivered but
 * its request is never waited on; rank 1's persistent send request is
 * started and completed but never freed. Both ranks finalize. Fixed
 * (argument `fixed`): rank 0 waits, rank 1 frees the persistent request. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int value = 7 + rank, got = -1;
  if (rank == 0) {
    MPI_Request request;
    MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request); /* bug: never waited */
    MPI_Recv(&got, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(got == 8);
    if (fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(got == 7);
    MPI_Request persistent;
    MPI_Send_init(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &persistent); /* bug: never freed */
    MPI_Start(&persistent);
    MPI_Wait(&persistent, MPI_STATUS_IGNORE);
    if (fixed) MPI_Request_free(&persistent);
  }
  /* Every message has arrived before anyone finalizes. */
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Finalize();
  return 0;
}
