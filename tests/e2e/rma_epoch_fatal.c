/* epoch-lifecycle under the default error handler (3 ranks): MPI aborts the
 * job inside the erroneous RMA call, so the tracer must have written the
 * call when it was entered. No argument: rank 0 puts into rank 1's window
 * with no epoch open. `group`: rank 0 opens an access epoch with
 * MPI_Win_start for rank 1 and puts into rank 2, which is not in its group.
 * `rank`: in a fence epoch rank 0 puts into rank 3 of 3 (invalid-argument).
 * `user_op`: in a fence epoch rank 0 accumulates with a user-defined op,
 * which accumulates do not take (MPI-3.1 section 11.3.4; invalid-argument).
 * Fixed twins: `fixed` (a fence epoch), `group_fixed` (the put goes to
 * rank 1), `user_op_fixed` (MPI_SUM). */
#include <string.h>

#include "e2e_util.h"

static void add_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  const int fixed = strcmp(mode, "fixed") == 0;
  const int bad_rank = strcmp(mode, "rank") == 0;
  const int group = strcmp(mode, "group") == 0 || strcmp(mode, "group_fixed") == 0;
  const int group_fixed = strcmp(mode, "group_fixed") == 0;
  const int user_op = strcmp(mode, "user_op") == 0 || strcmp(mode, "user_op_fixed") == 0;
  const int user_op_fixed = strcmp(mode, "user_op_fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  int window[4] = {0, 0, 0, 0}, value = 5;
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (user_op) {
    MPI_Op op;
    MPI_Op_create(add_ints, 1, &op);
    MPI_Win_fence(0, win);
    if (rank == 0) MPI_Accumulate(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, user_op_fixed ? MPI_SUM : op, win);
    MPI_Win_fence(0, win);
    MPI_Op_free(&op);
  } else if (group) {
    MPI_Group world, peers;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int member = rank == 0 ? 1 : 0;
    MPI_Group_incl(world, 1, &member, &peers);
    if (rank == 0) {
      MPI_Win_start(peers, 0, win);
      MPI_Put(&value, 1, MPI_INT, group_fixed ? 1 : 2, 0, 1, MPI_INT, win); /* bug: rank 2 is not in the group */
      MPI_Win_complete(win);
    } else if (rank == 1) {
      MPI_Win_post(peers, 0, win);
      MPI_Win_wait(win);
    }
    MPI_Group_free(&peers);
    MPI_Group_free(&world);
  } else {
    if (fixed || bad_rank) MPI_Win_fence(0, win);
    if (rank == 0) MPI_Put(&value, 1, MPI_INT, bad_rank ? 3 : 1, 0, 1, MPI_INT, win); /* bug: no epoch; rank 3 of 3 */
    if (fixed || bad_rank) MPI_Win_fence(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
