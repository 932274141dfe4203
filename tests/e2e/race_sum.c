/* A harmless message race (3 ranks): rank 0 adds up one value from each of
 * ranks 1 and 2, received with MPI_ANY_SOURCE, so either message can come
 * first; the sum is the same. `smtrace prove` reports message-race as info
 * (the alternative is harmless); `smtrace check` reports nothing. Fixed
 * (argument `fixed`): the receives name rank 1, then rank 2, and prove
 * reports nothing either. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  if (rank == 0) {
    int sum = 0;
    for (int i = 1; i <= 2; ++i) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, fixed ? i : MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += value;
    }
    E2E_REQUIRE(sum == 1 + 2);
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
