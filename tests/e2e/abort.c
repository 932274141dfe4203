/* MPI_Abort (3 ranks): rank 1 aborts with error code 3 after one exchange
 * while the others wait in a barrier. Fixed (argument `fixed`): nobody
 * aborts. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) >= 2);
  int value = rank;
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  E2E_REQUIRE(value == 0);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  if (rank == 1 && !fixed) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
