/* An MPI fatal error at the start (any number of ranks): the last rank
 * sends to a rank that does not exist right after MPI_Init, so that
 * MPI_ERRORS_ARE_FATAL aborts the job while the other ranks are still in
 * their first calls (or still starting the tracer). With the argument
 * "late" the error comes after a few barriers. The abort storm
 * (abort_storm.sh) runs it many times under load. */
#include <string.h>

#include "../e2e/e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  const int late = argc > 1 && strcmp(argv[1], "late") == 0;
  for (int i = 0; late && i < 3; ++i) MPI_Barrier(MPI_COMM_WORLD);
  if (rank == size - 1) {
    int value = 1;
    MPI_Send(&value, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD); /* invalid rank: fatal */
  }
  for (int i = 0; i < 1000; ++i) MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
