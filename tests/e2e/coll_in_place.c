/* MPI_IN_PLACE at some members only (3 ranks): rank 1 passes MPI_IN_PLACE
 * to MPI_Allgather, the others a send buffer; Allgather's in-place option is
 * given at all members or at none (MPI-3.1 section 5.7). With the argument
 * "fixed" every rank passes MPI_IN_PLACE; MPI_Scan, whose option is each
 * member's own (section 5.11.1), is in place at rank 1 only in both. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int all[8], mine = rank;
  for (int k = 0; k < 8; ++k) all[k] = k == rank ? rank : -1;
  if (fixed || rank == 1)
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD);
  else
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  int x = rank + 1, y = 0;
  if (rank == 1)
    MPI_Scan(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  else
    MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
