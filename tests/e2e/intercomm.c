/* An exchange over an intercommunicator (4 ranks): the even and the odd
 * world ranks form two groups joined by MPI_Intercomm_create; member i of
 * each group exchanges with member i of the other (ranks name the remote
 * group), the even group's member 0 broadcasts to the odd group (MPI_ROOT /
 * MPI_PROC_NULL on its side), then the groups merge (MPI_Intercomm_merge)
 * for an allreduce. Correct: no finding. Bug (argument `bug`): both groups
 * send first with MPI_Ssend (deadlock). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  const int world = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 4);
  const int color = world % 2;

  MPI_Comm local, inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, color, world, &local);
  /* The other group's leader is world rank 1 (for the evens) or 0 (for the odds). */
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 5, &inter);
  const int me = e2e_rank(inter);
  int remote = 0;
  MPI_Comm_remote_size(inter, &remote);
  E2E_REQUIRE(remote == 2);

  int out = 100 * color + me, in = -1;
  if (bug || color == 0) {
    MPI_Ssend(&out, 1, MPI_INT, me, 0, inter);
    MPI_Recv(&in, 1, MPI_INT, me, 0, inter, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&in, 1, MPI_INT, me, 0, inter, MPI_STATUS_IGNORE);
    MPI_Ssend(&out, 1, MPI_INT, me, 0, inter);
  }
  E2E_REQUIRE(in == 100 * (1 - color) + me);

  int value = color == 0 ? 42 : -1;
  const int root = color == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&value, 1, MPI_INT, root, inter);
  E2E_REQUIRE(value == 42);

  MPI_Intercomm_merge(inter, color, &merged);
  int sum = 0, one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
  E2E_REQUIRE(sum == 4);

  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return 0;
}
