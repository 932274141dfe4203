/* An unmatched message (2 ranks): rank 0 sends a small message with tag 7
 * (eager, so the send completes) that rank 1 never receives; both ranks
 * finalize. With the argument "fixed" rank 1 receives it. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = 42;
  if (rank == 0) {
    MPI_Send(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  } else if (fixed) {
    MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(value == 42);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
