/* rma-race through compiler instrumentation (built with smtrace-cc, no
 * annotations), origin side (2 ranks): rank 0 opens a lock_all epoch, starts
 * an RMA operation from a local buffer and touches that buffer before
 * MPI_Win_flush completes the operation.
 *   (no argument)  MPI_Put, then a loop of stores into its origin buffer
 *   memcpy         MPI_Put, then memcpy into its origin buffer
 *   get            MPI_Get, then a loop of loads from its result buffer
 * Fixed (last argument `fixed`): the same accesses after the flush. The
 * buffers are stack arrays: nothing but the pending operation makes them
 * watched. */
#include <string.h>

#include "e2e_util.h"

enum { N = 64 };

static int has_arg(int argc, char** argv, const char* word) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], word) == 0) return 1;
  return 0;
}

/* Touch `buf` the way the mode says; return the sum of what was read. */
static long touch(int* buf, const int* other, int use_memcpy, int load) {
  long sum = 0;
  if (load) {
    for (int i = 0; i < N; ++i) sum += buf[i];
  } else if (use_memcpy) {
    memcpy(buf, other, sizeof(int) * N);
  } else {
    for (int i = 0; i < N; ++i) buf[i] = -i;
  }
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = has_arg(argc, argv, "fixed");
  const int use_memcpy = has_arg(argc, argv, "memcpy");
  const int get = has_arg(argc, argv, "get");
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int* window = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
  for (int i = 0; i < N; ++i) window[i] = 1000 + rank;
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 0) {
    int buf[N], other[N];
    for (int i = 0; i < N; ++i) buf[i] = i, other[i] = 2 * i;
    long sum = 0;
    MPI_Win_lock_all(0, win);
    if (get) MPI_Get(buf, N, MPI_INT, 1, 0, N, MPI_INT, win);
    else MPI_Put(buf, N, MPI_INT, 1, 0, N, MPI_INT, win);
    if (!fixed) sum = touch(buf, other, use_memcpy, get); /* bug: the operation may still use buf */
    MPI_Win_flush(1, win);
    if (fixed) sum = touch(buf, other, use_memcpy, get);
    MPI_Win_unlock_all(win);
    if (get && fixed) E2E_REQUIRE(sum == 1001L * N);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
