/* The ranks of MPI_Group_incl and MPI_Group_range_incl (2 ranks), each of
 * which must be a rank of the input group, all distinct (MPI-3.1 section
 * 6.3.2). Modes (argv[1]), each with a `_fixed` twin:
 *   incl    MPI_Group_incl of ranks {0, 5}: Open MPI aborts inside the call
 *           (the tracer writes every such call on entry)
 *   dup     MPI_Group_incl of ranks {1, 1}: Open MPI does not test it
 *   range   MPI_Group_range_incl of (0, 7, 1): aborts inside the call
 * The twins include {1, 0} and (0, 1, 1). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "incl";
  const int fixed = strstr(mode, "_fixed") != NULL;
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Group world, sub;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (strncmp(mode, "range", 5) == 0) {
    int ranges[1][3] = {{0, fixed ? 1 : 7, 1}};
    MPI_Group_range_incl(world, 1, ranges, &sub); /* bug: ranks 2..7 are not in the group */
  } else {
    const int dup = strncmp(mode, "dup", 3) == 0;
    int ranks[2] = {fixed ? 1 : dup ? 1 : 0, fixed ? 0 : dup ? 1 : 5};
    MPI_Group_incl(world, 2, ranks, &sub); /* bug: rank 5, or rank 1 twice */
  }
  int size = 0;
  MPI_Group_size(sub, &size);
  E2E_REQUIRE(size == 2);
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
