/* Textually misaligned collectives (2 ranks): both ranks make the same
 * sequence of collectives, but reach the barrier from different places.
 *   (no argument)  even ranks call MPI_Barrier in sync_even(), odd ranks in
 *                  sync_odd(): different call sites.
 *   path           every rank calls MPI_Barrier in sync_all(), which main
 *                  calls from two different lines: the same call site,
 *                  different call paths (strict alignment with a recorded
 *                  stack deeper than 1 finds it, weak alignment does not).
 *   fixed          every rank calls sync_all() from one line.
 *   in_place       (3 ranks) the root calls MPI_Reduce with MPI_IN_PLACE on
 *                  one line, every other rank calls it on another: the
 *                  root's role differs (MPI_IN_PLACE and the receive buffer
 *                  count at the root only), so this is aligned.
 *   in_place_split (3 ranks) as in_place, but the non-roots call MPI_Reduce
 *                  from two different lines: misaligned. */
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
  if (strncmp(mode, "in_place", 8) == 0) {
    int total = rank;
    if (rank == 0)
      MPI_Reduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    else if (rank == 1 || strcmp(mode, "in_place") == 0)
      MPI_Reduce(&mine, NULL, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    else
      MPI_Reduce(&mine, NULL, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    E2E_REQUIRE(rank != 0 || total == sum);
  } else if (strcmp(mode, "fixed") == 0) {
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
  E2E_REQUIRE(sum == e2e_size(MPI_COMM_WORLD) * (e2e_size(MPI_COMM_WORLD) - 1) / 2);
  MPI_Finalize();
  return 0;
}
