/* A root mismatch (2 ranks): each rank names itself the root of the same
 * MPI_Bcast of one int. Each "root" sends eagerly and returns, so the job
 * completes; nobody receives. With the argument "fixed" rank 0 is the root
 * everywhere. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = rank == 0 ? 42 : rank;
  const int root = fixed ? 0 : rank;
  MPI_Bcast(&value, 1, MPI_INT, root, MPI_COMM_WORLD);
  if (fixed) E2E_REQUIRE(value == 42);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
