/* Collectives in different orders (3 ranks): rank 0 broadcasts and then
 * reduces, the others reduce and then receive the broadcast. Open MPI
 * keeps the two apart (each collective has its own internal tag) and, with
 * one int each, the job completes with the right values although the
 * program is erroneous. With the argument "fixed" every rank calls
 * MPI_Bcast first. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = rank == 0 ? 7 : 0;
  int mine = rank + 1, sum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (fixed || rank == 0) {
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  E2E_REQUIRE(value == 7);
  E2E_REQUIRE(sum == size * (size + 1) / 2);
  MPI_Finalize();
  return 0;
}
