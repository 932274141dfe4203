/* invalid-argument (2 ranks): with MPI_ERRORS_RETURN on MPI_COMM_WORLD the
 * program survives three calls MPI rejects, so the trace holds them with
 * their error codes: rank 0 sends to rank 2 (out of range for 2 ranks),
 * sends a derived datatype it never committed, and reduces MPI_DOUBLE with
 * MPI_LAND (not defined for floating point, MPI-3.1 section 5.9.2). Fixed
 * (argument `fixed`): destination 1, the type committed, MPI_SUM. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size == 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  int value[2] = {rank, rank};
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  if (fixed) MPI_Type_commit(&pair);
  if (rank == 0) {
    int rc = MPI_Send(value, 1, MPI_INT, fixed ? 1 : size, 0, MPI_COMM_WORLD); /* bug: rank 2 of 2 */
    E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
    rc = MPI_Send(value, 1, pair, 1, 1, MPI_COMM_WORLD); /* bug: not committed */
    E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
  } else if (fixed) {
    MPI_Recv(value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(value, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  double x = 1.0, y = 0.0;
  const int rc = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, fixed ? MPI_SUM : MPI_LAND, MPI_COMM_WORLD); /* bug: LAND */
  E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
  MPI_Type_free(&pair);
  MPI_Finalize();
  return 0;
}
