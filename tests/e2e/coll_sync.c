/* A collective that may synchronize (2 ranks): rank 0 calls MPI_Bcast (it is
 * the root) and then sends rank 1 one int; rank 1 receives it, then calls
 * MPI_Bcast. Open MPI lets the root of a small MPI_Bcast return at once, so
 * the run completes; the MPI standard allows any collective to wait for
 * every member, and then rank 0 waits in MPI_Bcast for rank 1, which waits
 * in MPI_Recv for rank 0. `smtrace check` proves it: potential-deadlock
 * (zero buffering: every collective synchronizes), with the cycle. Fixed:
 * `fixed`, rank 1 calls MPI_Bcast before it receives. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int setting = rank == 0 ? 7 : 0, value = rank == 0 ? 42 : 0;
  if (rank == 1 && !fixed) MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug */
  MPI_Bcast(&setting, 1, MPI_INT, 0, MPI_COMM_WORLD); /* the root may wait here for rank 1 */
  if (rank == 0) {
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (fixed) {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  E2E_REQUIRE(value == 42 && setting == 7);

  MPI_Finalize();
  return 0;
}
