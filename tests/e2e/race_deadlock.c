/* A wildcard receive whose other match deadlocks (3 ranks): rank 0 receives
 * from MPI_ANY_SOURCE, then from rank 1; ranks 1 and 2 each send it one
 * message. The run completes because rank 1 sends late (a sleep the trace
 * does not order), so the wildcard takes rank 2's message; had it taken
 * rank 1's, the receive from rank 1 would never match and rank 2's message
 * would stay unreceived. `smtrace check` proves it: message-race (error),
 * with the witness. Fixed (argument `fixed`): the first receive names rank 2. */
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);
  MPI_Barrier(MPI_COMM_WORLD);

  int value = 10 * rank;
  if (rank == 0) {
    int first = -1, second = -1;
    MPI_Status status;
    MPI_Recv(&first, 1, MPI_INT, fixed ? 2 : MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status); /* bug */
    MPI_Recv(&second, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(status.MPI_SOURCE == 2 && first == 20 && second == 10);
  } else {
    if (rank == 1) usleep(300 * 1000); /* lets rank 2's message come first */
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
