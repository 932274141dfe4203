/* Teams (4 ranks): MPI_Comm_split makes two halves that run different
 * collective code on their own communicator, from different call sites.
 * Alignment is per communicator, so this is correct: the report must be
 * clean. */
#include "e2e_util.h"

static void even_team(MPI_Comm half) {
  int value = e2e_rank(half) == 0 ? 5 : 0;
  MPI_Bcast(&value, 1, MPI_INT, 0, half);
  E2E_REQUIRE(value == 5);
}

static void odd_team(MPI_Comm half) {
  int mine = 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, half);
  E2E_REQUIRE(sum == e2e_size(half));
  MPI_Barrier(half);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 4);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  if (rank % 2 == 0)
    even_team(half);
  else
    odd_team(half);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
