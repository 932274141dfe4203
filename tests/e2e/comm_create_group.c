/* MPI_Comm_create_group (3 ranks). First, legal on every run: rank 0
 * creates a communicator with rank 1, then one with rank 2, with the same
 * tag; ranks 1 and 2 each make the one call they are members of (the calls
 * pair member by member, not as the k-th call of each rank). Then the bug
 * (argument `order`): ranks 0 and 1 create a communicator of both, rank 1
 * naming the ranks in the other order. Every member must pass the same
 * group, its ranks in the same order (MPI-3.1 section 6.4.2); Open MPI does
 * not test it. Fixed (argument `fixed`): both name them in one order. */
#include <string.h>

#include "e2e_util.h"

static MPI_Comm create(MPI_Group world, int a, int b, int tag) {
  const int ranks[2] = {a, b};
  MPI_Group group;
  MPI_Group_incl(world, 2, ranks, &group);
  MPI_Comm made;
  MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &made);
  MPI_Group_free(&group);
  return made;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Comm made[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  if (rank == 0) {
    made[0] = create(world, 0, 1, 7);
    made[1] = create(world, 0, 2, 7);
  } else {
    made[0] = create(world, 0, rank, 7);
  }
  for (int i = 0; i < 2; ++i) {
    if (made[i] != MPI_COMM_NULL) MPI_Comm_free(&made[i]);
  }
  if (rank == 0) made[0] = create(world, 0, 1, 8);
  if (rank == 1) made[0] = fixed ? create(world, 0, 1, 8) : create(world, 1, 0, 8); /* bug: another order */
  if (made[0] != MPI_COMM_NULL) MPI_Comm_free(&made[0]);
  MPI_Group_free(&world);
  MPI_Finalize();
  return 0;
}
