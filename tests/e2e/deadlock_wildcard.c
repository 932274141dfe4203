/* A deadlock with a wildcard (3 ranks): rank 0 receives from any source
 * twice but only rank 1 sends; rank 2 waits in a barrier that rank 0 never
 * reaches. Killed by timeout. With "fixed" rank 2 sends too. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = rank;
  if (rank == 0) {
    for (int i = 0; i < 2; ++i) {
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (rank == 1 || fixed) {
    MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
