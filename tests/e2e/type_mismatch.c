/* type-mismatch (2 ranks): rank 0 sends 4 MPI_INT that rank 1 receives as 4
 * MPI_FLOAT (MPI does not notice: the sizes agree), then 8 MPI_INT into a
 * receive buffer of 4 (MPI_ERR_TRUNCATE; MPI_ERRORS_RETURN lets the program
 * go on). Fixed (argument `fixed`): MPI_INT on both sides, a buffer of 8. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  int ints[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  if (rank == 0) {
    MPI_Send(ints, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Send(ints, 8, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else {
    float floats[4];
    int got[8];
    if (fixed) MPI_Recv(got, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else MPI_Recv(floats, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug: ints as floats */
    const int rc = MPI_Recv(got, fixed ? 8 : 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug: 8 into 4 */
    E2E_REQUIRE(fixed ? rc == MPI_SUCCESS : rc != MPI_SUCCESS);
  }
  MPI_Finalize();
  return 0;
}
