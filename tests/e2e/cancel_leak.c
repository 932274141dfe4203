/* A receive cancelled and never completed (2 ranks): MPI-3.1 section 3.8.4
 * asks a cancelled request to be completed (MPI_Wait, MPI_Test, or freed)
 * all the same. The report names the leaked request once (request-leak),
 * not also the receive as unmatched. The `fixed` twin waits for the
 * cancelled receive and reads MPI_Test_cancelled. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int value = 0;
  if (rank == 0) {
    MPI_Request request;
    MPI_Irecv(&value, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &request); /* no message has tag 5 */
    MPI_Cancel(&request);
    if (fixed) {
      MPI_Status status;
      int cancelled = 0;
      MPI_Wait(&request, &status);
      MPI_Test_cancelled(&status, &cancelled);
      E2E_REQUIRE(cancelled);
    } /* bug unless fixed: the request is never completed */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
