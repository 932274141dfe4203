/* invalid-argument under MPI_ERRORS_ARE_FATAL (2 ranks): rank 0 posts an
 * MPI_Isend to rank 2 of 2; MPI aborts the job inside the call (Open MPI
 * ends the process with _exit, no atexit handler runs). The tracer writes
 * such a call when it is entered, so the trace still holds it with its
 * arguments and `check` names it. Fixed (argument `fixed`): destination 1.
 * With `preinit` every rank first calls MPI_Send before MPI_Init, which MPI
 * forbids: nothing can be recorded yet, the tracer says so on stderr
 * (record_exit.sh). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "preinit") == 0) {
    int early = 0;
    MPI_Send(&early, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); /* bug: before MPI_Init */
  }
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size == 2);
  int value = rank;
  if (rank == 0) {
    MPI_Request request;
    MPI_Isend(&value, 1, MPI_INT, fixed ? 1 : size, 0, MPI_COMM_WORLD, &request); /* bug: rank 2 of 2 */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
