/* invalid-argument, more kinds (2 ranks): with MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD the program survives each call MPI rejects, so the trace
 * holds them with their arguments: a send with a negative count, a send with
 * tag -1, a broadcast with root 5 of 2 ranks, a send on MPI_COMM_NULL, and an
 * MPI_Start of a persistent send that is still active. Fixed (argument
 * `fixed`): count 1, tag 3, root 0, MPI_COMM_WORLD, a Wait between the
 * Starts. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  int value = rank, rc;
  if (rank == 0) {
    rc = MPI_Send(&value, fixed ? 1 : -1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* bug: count -1 */
    E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
    rc = MPI_Send(&value, 1, MPI_INT, 1, fixed ? 3 : -1, MPI_COMM_WORLD); /* bug: tag -1 */
    E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
    rc = MPI_Send(&value, 1, MPI_INT, 1, 4, fixed ? MPI_COMM_WORLD : MPI_COMM_NULL); /* bug: null comm */
    E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
  } else if (fixed) {
    MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&value, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  rc = MPI_Bcast(&value, 1, MPI_INT, fixed ? 0 : 5, MPI_COMM_WORLD); /* bug: root 5 of 2 */
  E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);

  /* A persistent send to self, started twice. */
  int out = 7, in = 0;
  MPI_Request send, recv;
  MPI_Send_init(&out, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &send);
  MPI_Start(&send);
  MPI_Recv(&in, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (fixed) MPI_Wait(&send, MPI_STATUS_IGNORE);
  MPI_Irecv(&in, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &recv);
  rc = MPI_Start(&send); /* bug: still active without the Wait */
  E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : 1);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  MPI_Wait(&recv, MPI_STATUS_IGNORE);
  MPI_Request_free(&send);
  MPI_Finalize();
  return 0;
}
