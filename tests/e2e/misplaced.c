/* MPI calls before MPI_Init and after MPI_Finalize (MPI-3.1 section 8.7),
 * 2 ranks:
 *   before_init  every rank calls MPI_Barrier before MPI_Init (Open MPI
 *                aborts each process there)
 *   rank_before_init  the same with MPI_Comm_rank (a query the tracer
 *                wraps only for this)
 *   barrier  every rank calls MPI_Barrier after MPI_Finalize (Open MPI
 *            aborts each process there)
 *   send     rank 0 calls MPI_Send to rank 1 after MPI_Finalize
 *   twice    every rank calls MPI_Finalize a second time
 *   init_twice   every rank calls MPI_Init a second time, before MPI_Finalize
 *   init_after   every rank calls MPI_Init again after MPI_Finalize
 *   fixed    the calls the standard allows before MPI_Init and after
 *            MPI_Finalize: MPI_Finalized, MPI_Initialized, MPI_Get_version */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "barrier";
  int initialized = 1;
  int rank_early = 0;
  if (strcmp(mode, "before_init") == 0) MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "rank_before_init") == 0) MPI_Comm_rank(MPI_COMM_WORLD, &rank_early);
  MPI_Initialized(&initialized);
  if (initialized) return 1;
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int v = rank;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  E2E_REQUIRE(v == 1);
  if (strcmp(mode, "init_twice") == 0) MPI_Init(&argc, &argv);
  MPI_Finalize();
  if (strcmp(mode, "barrier") == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "twice") == 0) {
    MPI_Finalize();
  } else if (strcmp(mode, "init_after") == 0) {
    MPI_Init(&argc, &argv);
  } else if (strcmp(mode, "send") == 0) {
    if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    int finalized = 0, version = 0, subversion = 0;
    MPI_Finalized(&finalized);
    MPI_Initialized(&initialized);
    MPI_Get_version(&version, &subversion);
    if (!finalized || !initialized || version < 3) return 1;
  }
  return 0;
}
