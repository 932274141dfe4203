/* A lock built from MPI_Compare_and_swap (3 ranks): ranks 1 and 2 take a
 * lock word in rank 0's window by spinning on a compare-and-swap, add one
 * to a counter there with MPI_Get and MPI_Put, each completed by a flush,
 * and give the lock back with another compare-and-swap. Atomic calls on
 * one location are applied one at a time (MPI-3.1 section 11.7.1), so the
 * counter's accesses never overlap: correct, and must be clean. Modes
 * (argv[1]):
 *   nolock   rank 2 updates the counter without taking the lock: a race */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  if (rank > 0) {
    const int me = rank, zero = 0;
    const int take = !(strcmp(mode, "nolock") == 0 && rank == 2);
    for (int round = 0; round < 3; ++round) {
      int old = 0;
      if (take) {
        do {
          MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 0, win);
          MPI_Win_flush(0, win);
        } while (old != 0);
      }
      int count = 0;
      MPI_Get(&count, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
      MPI_Win_flush(0, win);
      ++count;
      MPI_Put(&count, 1, MPI_INT, 0, 1, 1, MPI_INT, win); /* a race in mode nolock */
      MPI_Win_flush(0, win);
      if (take) {
        MPI_Compare_and_swap(&zero, &me, &old, MPI_INT, 0, 0, win);
        MPI_Win_flush(0, win);
      }
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
