/* A communicator of MPI_Comm_idup used before the request completes (2
 * ranks): MPI_Allreduce on it comes after the Ibarrier's wait but before the
 * Comm_idup's (MPI-3.1 section 6.4.2: erroneous; Open MPI crashes in it).
 * With the argument "fixed" both requests are waited for first. Mode "p2p"
 * ("p2p_fixed" its twin): MPI_Isend / MPI_Irecv on it before the wait,
 * which the tracer writes on entry (Open MPI crashes in them, and a
 * non-blocking call is otherwise written when it returns). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strstr(argv[1], "fixed") != NULL;
  MPI_Comm dup;
  MPI_Request q[2];
  if (argc > 1 && strncmp(argv[1], "p2p", 3) == 0) {
    MPI_Comm_idup(MPI_COMM_WORLD, &dup, &q[0]);
    if (fixed) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    int v = rank;
    if (rank == 0) MPI_Isend(&v, 1, MPI_INT, 1, 0, dup, &q[1]); /* bug unless fixed */
    else MPI_Irecv(&v, 1, MPI_INT, 0, 0, dup, &q[1]);
    if (!fixed) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
  }
  MPI_Comm_idup(MPI_COMM_WORLD, &dup, &q[0]);
  MPI_Ibarrier(MPI_COMM_WORLD, &q[1]);
  int x = rank, sum = 0;
  if (fixed) {
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup);
    E2E_REQUIRE(sum == 1);
  } else {
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
