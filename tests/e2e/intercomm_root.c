/* Roots of collectives on an intercommunicator (6 ranks): world ranks
 * 0,2,4 and 1,3,5 form two groups. MPI_Bcast from member 1 of the even
 * group: it passes MPI_ROOT, members 0 and 2 of its group MPI_PROC_NULL,
 * every odd member root 1; then MPI_Gather to member 2 of the odd group the
 * same way round, and MPI_Barrier. Correct: no finding. Bug (argument
 * `bug`): member 0 of the even group names root 1 as if it were in the
 * other group (MPI-3.1 section 5.2.2): collective-mismatch. Open MPI then
 * waits in the broadcast, so the job is stopped from outside. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  const int world = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 6);
  const int color = world % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, world, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
  const int me = e2e_rank(local);
  int value = color == 0 && me == 1 ? 42 : -1;
  int root = color == 1 ? 1 : me == 1 ? MPI_ROOT : MPI_PROC_NULL;
  if (bug && color == 0 && me == 0) root = 1;
  MPI_Bcast(&value, 1, MPI_INT, root, inter);
  if (color == 1) E2E_REQUIRE(value == 42);
  int all[3] = {0, 0, 0};
  root = color == 0 ? 2 : me == 2 ? MPI_ROOT : MPI_PROC_NULL;
  MPI_Gather(&world, 1, MPI_INT, all, 1, MPI_INT, root, inter);
  if (color == 1 && me == 2) E2E_REQUIRE(all[0] == 0 && all[1] == 2 && all[2] == 4);
  MPI_Barrier(inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return 0;
}
