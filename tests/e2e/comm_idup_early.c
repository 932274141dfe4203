/* A communicator of MPI_Comm_idup used before the request completes (2
 * ranks): MPI_Allreduce on it comes after the Ibarrier's wait but before the
 * Comm_idup's (MPI-3.1 section 6.4.2: erroneous; Open MPI crashes in it).
 * With the argument "fixed" both requests are waited for first. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  MPI_Comm dup;
  MPI_Request q[2];
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
