/* abnormal-termination (2 ranks): rank 1 returns from main without calling
 * MPI_Finalize after its exchange with rank 0; rank 0 finalizes. The run
 * looks fine to every other check. Fixed (argument `fixed`): rank 1
 * finalizes too. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int value = rank;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  E2E_REQUIRE(value == 1);
  if (rank == 1 && !fixed) return 0; /* bug: no MPI_Finalize */
  MPI_Finalize();
  return 0;
}
