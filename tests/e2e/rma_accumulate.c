/* rma-race and accumulate atomicity (3 ranks): ranks 1 and 2 add into rank
 * 0's counter under MPI_Win_lock_all; MPI_Accumulate calls with the same op
 * and basic type are atomic with each other. Bug: rank 2 uses MPI_Put
 * instead, which races with rank 1's MPI_Accumulate. Fixed (argument
 * `fixed`): both accumulate. Rank 1 also reuses its origin buffer: the bug
 * version before MPI_Win_flush_local, the fixed one after it. */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  long counter = 0;
  MPI_Win win;
  MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  long one = 1;
  if (rank == 1) {
    MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
    if (fixed) MPI_Win_flush_local(0, win);
    smtrace_annotate_write(&one, sizeof one); /* bug (unfixed): the origin buffer is still in use */
    one = 2;
  }
  if (rank == 2) {
    if (fixed) MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
    else MPI_Put(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win); /* bug: not atomic with the Accumulate */
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && fixed) E2E_REQUIRE(counter == 2);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
