/* MPI_Comm_create with groups that disagree (2 ranks): rank 0 passes the
 * group of rank 0 alone, rank 1 the group of ranks 0 and 1. Every member
 * of a non-empty group must pass the same group (MPI-3.1 section 6.4.2);
 * Open MPI does not test it and returns a communicator to each. Fixed
 * (argument `fixed`): both pass the group of rank 0 (rank 1 gets
 * MPI_COMM_NULL). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Group world, first;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int zero = 0;
  MPI_Group_incl(world, 1, &zero, &first);
  MPI_Comm made;
  MPI_Comm_create(MPI_COMM_WORLD, rank == 0 || fixed ? first : world, &made); /* bug: rank 1 passes another group */
  if (made != MPI_COMM_NULL) MPI_Comm_free(&made);
  MPI_Group_free(&first);
  MPI_Group_free(&world);
  MPI_Finalize();
  return 0;
}
