/* Passive-target one-sided communication (2 ranks or more): lock_all, a Put
 * to every other rank, flush per target, unlock_all. */
#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size >= 2 && size <= 8);

  long* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < 8; ++i) mem[i] = -1;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  long value = 500 + rank;
  MPI_Win_lock_all(0, win);
  for (int target = 0; target < size; ++target) {
    if (target == rank) continue;
    MPI_Put(&value, 1, MPI_LONG, target, rank, 1, MPI_LONG, win);
    MPI_Win_flush(target, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  for (int r = 0; r < size; ++r)
    if (r != rank) E2E_REQUIRE(mem[r] == 500 + r);
  MPI_Win_unlock(rank, win);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
