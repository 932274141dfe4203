/* A ready-mode send started before its receive is posted (2 ranks): rank 0
 * calls MPI_Rsend at once, rank 1 posts the MPI_Irecv for it with nothing
 * ordering the post before the send (MPI-3.1 section 3.4: erroneous; Open
 * MPI delivers it anyway). With the argument "fixed" rank 1 posts the
 * receive, then both ranks pass a barrier before the MPI_Rsend; a
 * persistent MPI_Rsend_init started after a second barrier follows. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = 7, got = 0;
  MPI_Request q = MPI_REQUEST_NULL;
  if (rank == 1) MPI_Irecv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &q);
  if (fixed) MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_Rsend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  if (rank == 1) E2E_REQUIRE(got == 7);
  if (fixed) {
    MPI_Request p;
    if (rank == 0) MPI_Rsend_init(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &p);
    else MPI_Recv_init(&got, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &p);
    if (rank == 1) MPI_Start(&p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_Start(&p);
    MPI_Wait(&p, MPI_STATUS_IGNORE);
    MPI_Request_free(&p);
  }
  MPI_Finalize();
  return 0;
}
