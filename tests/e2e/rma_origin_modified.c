/* rma-race / local-concurrency (2 ranks), no annotation, no smtrace-cc:
 * rank 0 stores into the origin buffer of a pending MPI_Put (fence epoch)
 * and of a pending MPI_Accumulate (passive target, before MPI_Win_unlock):
 * the tracer's content check sees the bytes change at the synchronization
 * call that completes each. Fixed (argument `fixed`): the stores come after
 * the fence and after MPI_Win_flush_local; a Put's origin written between
 * epochs and a Put to MPI_PROC_NULL: all clean. With the argument `rput`
 * only one bug: a store into the origin of an MPI_Rput before MPI_Wait on
 * its request (MPI-4.0 12.3.5); in every run a store after that MPI_Wait
 * and before the unlock is fine, and a store into an Rput's origin after
 * the unlock that completed it, before its MPI_Wait, is fine too. */
#include <string.h>

#include "e2e_util.h"

enum { n = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rput_bug = argc > 1 && strcmp(argv[1], "rput") == 0;
  const int fixed = rput_bug || (argc > 1 && strcmp(argv[1], "fixed") == 0);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int window_memory[2 * n] = {0};
  MPI_Win win;
  MPI_Win_create(window_memory, sizeof window_memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int origin[n], other[n];
  for (int i = 0; i < n; ++i) origin[i] = i, other[i] = 2 * i;

  MPI_Win_fence(0, win);
  if (rank == 0) {
    MPI_Put(origin, n, MPI_INT, 1, 0, n, MPI_INT, win);
    if (!fixed) origin[5] = -5; /* bug: the Put may still read it */
  }
  MPI_Win_fence(0, win);
  if (rank == 0 && fixed) origin[5] = -5; /* the fence completed it */

  if (rank == 0) {
    MPI_Put(origin, n, MPI_INT, MPI_PROC_NULL, 0, n, MPI_INT, win);
    origin[6] = -6; /* to MPI_PROC_NULL: nothing reads it */
  }
  MPI_Win_fence(0, win);
  MPI_Win_fence(0, win);

  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Accumulate(other, n, MPI_INT, 1, n, n, MPI_INT, MPI_SUM, win);
    if (fixed) MPI_Win_flush_local(1, win);
    other[0] = 100; /* bug unless flushed locally: the accumulate may still read it */
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 0) {
    MPI_Request request;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Rput(origin, n, MPI_INT, 1, 0, n, MPI_INT, win, &request);
    if (rput_bug) origin[9] = -9; /* bug: the Rput may still read it */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    origin[10] = -10; /* completed at the origin by the wait */
    MPI_Rput(other, n, MPI_INT, 1, n, n, MPI_INT, win, &request);
    MPI_Win_unlock(1, win);
    other[1] = -1; /* the unlock completed it; the request is still open */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
