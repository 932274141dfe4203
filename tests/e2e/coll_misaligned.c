/* Textually misaligned collectives (2 ranks): both ranks make the same
 * sequence of collectives, but reach the barrier from different places.
 *   (no argument)  even ranks call MPI_Barrier in sync_even(), odd ranks in
 *                  sync_odd(): different call sites.
 *   path           every rank calls MPI_Barrier in sync_all(), which main
 *                  calls from two different lines: the same call site,
 *                  different call paths (strict alignment with a recorded
 *                  stack deeper than 1 finds it, weak alignment does not).
 *   fixed          every rank calls sync_all() from one line. */
#include <string.h>

#include "e2e_util.h"

static void sync_even(MPI_Comm comm) { MPI_Barrier(comm); }

static void sync_odd(MPI_Comm comm) { MPI_Barrier(comm); }

static void sync_all(MPI_Comm comm) { MPI_Barrier(comm); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const char* mode = argc > 1 ? argv[1] : "";
  int mine = rank, sum = -1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (strcmp(mode, "fixed") == 0) {
    sync_all(MPI_COMM_WORLD);
  } else if (strcmp(mode, "path") == 0) {
    if (rank % 2 == 0)
      sync_all(MPI_COMM_WORLD);
    else
      sync_all(MPI_COMM_WORLD);
  } else {
    if (rank % 2 == 0)
      sync_even(MPI_COMM_WORLD);
    else
      sync_odd(MPI_COMM_WORLD);
  }
  E2E_REQUIRE(sum == 1);
  MPI_Finalize();
  return 0;
}
