/* Output that depends on a wildcard match (3 ranks), as in the README's
 * demo: rank 0 receives one value from each of ranks 1 and 2 with
 * MPI_ANY_SOURCE and prints 10 * first + second, which is 12 or 21 depending
 * on which message came first. `smtrace explore` re-runs it with the other
 * match forced and sees the output change: message-race error, confirmed by
 * re-execution. Fixed (argument `fixed`): it prints the sum, the same in
 * either order; the races stay, explore reports them as info. With argument
 * `crash` or `abort`, rank 2 sends late (so the recorded run takes rank 1's
 * message first) and rank 0 dies when rank 2's comes first: by SIGSEGV or
 * by MPI_Abort, which explore's forced runs show. With argument `iprobe`,
 * rank 0 polls with MPI_Iprobe(MPI_ANY_SOURCE) and then receives from the
 * source the probe saw: forcing the poll changes the output as well. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int crash = argc > 1 && strcmp(argv[1], "crash") == 0;
  const int abort = argc > 1 && strcmp(argv[1], "abort") == 0;
  const int iprobe = argc > 1 && strcmp(argv[1], "iprobe") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  if (rank == 0) {
    int first = 0, second = 0;
    if (iprobe) {
      int* values[2] = {&first, &second};
      for (int i = 0; i < 2; ++i) {
        int flag = 0;
        MPI_Status status;
        while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &status);
        MPI_Recv(values[i], 1, MPI_INT, status.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      printf("result %d\n", 10 * first + second);
      MPI_Finalize();
      return 0;
    }
    MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (first == 2 && crash) raise(SIGSEGV);
    if (first == 2 && abort) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Recv(&second, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("result %d\n", fixed ? first + second : 10 * first + second);
  } else {
    if (rank == 2 && (crash || abort)) usleep(300 * 1000); /* lets rank 1's message come first */
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
