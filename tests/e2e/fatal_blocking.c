/* An erroneous blocking call under MPI_ERRORS_ARE_FATAL (2 ranks): rank 0
 * makes it while rank 1 waits in MPI_Barrier, and Open MPI ends the job
 * inside it. The trace then shows rank 0 inside the call and rank 1 inside
 * the barrier waiting for rank 0, which is no deadlock: the report names
 * the error and no deadlock (analyzer/checks/deadlock.cpp). Modes (argv[1],
 * each with a `_fixed` twin that makes the call correctly):
 *   recv_tag     MPI_Recv from rank 1 with tag -5
 *   send_count   MPI_Send to rank 1 with count -1
 *   unlock       MPI_Win_unlock of a target never locked
 *   flush        MPI_Win_flush outside any passive-target epoch
 * The twins send the message rank 1 then receives, or lock before. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "recv_tag";
  const int fixed = strstr(mode, "_fixed") != NULL;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int value = rank, cells[2] = {0, 0};
  MPI_Win win;
  MPI_Win_create(cells, sizeof cells, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (strncmp(mode, "recv_tag", 8) == 0) {
    if (rank == 0) MPI_Recv(&value, 1, MPI_INT, 1, fixed ? 5 : -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug */
    if (rank == 1) MPI_Send(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  } else if (strncmp(mode, "send_count", 10) == 0) {
    if (rank == 0) MPI_Send(&value, fixed ? 1 : -1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* bug */
    if (rank == 1) MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (strncmp(mode, "unlock", 6) == 0) {
    if (rank == 0) {
      if (fixed) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Win_unlock(1, win); /* bug: never locked */
    }
  } else if (strncmp(mode, "flush", 5) == 0) {
    if (rank == 0) {
      if (fixed) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Win_flush(1, win); /* bug: no passive-target epoch */
      if (fixed) MPI_Win_unlock(1, win);
    }
  } else {
    E2E_REQUIRE(!"unknown mode");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
