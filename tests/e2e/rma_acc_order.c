/* Accumulates from one origin to one location are ordered (3 ranks): rank 1
 * adds to rank 0's counter and then takes the maximum with it, in one lock
 * epoch. MPI orders accumulates of one origin to the same location by
 * default (accumulate_ordering rar,raw,war,waw, MPI-3.1 section 11.7.2), so
 * the two do not race although their ops differ. Bug (argument `two`): the
 * MPI_MAX comes from rank 2 instead; accumulates with different ops from
 * different origins are neither ordered nor atomic together (rma-race). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int two = argc > 1 && strcmp(argv[1], "two") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  long counter = 0;
  MPI_Win win;
  MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const long add = 5, top = 3;
  MPI_Win_lock_all(0, win);
  if (rank == 1) MPI_Accumulate(&add, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
  if (rank == (two ? 2 : 1)) MPI_Accumulate(&top, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_MAX, win); /* bug with `two` */
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && !two) E2E_REQUIRE(counter == 5); /* with `two` the order, hence the value, varies */
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
