/* MPI_THREAD_MULTIPLE from OpenMP threads (3 ranks). Rank 0's thread 0
 * receives two messages of tag 0 from any rank; rank 2 sends one at once,
 * rank 1 only after it got rank 0's message of tag 1.
 * fixed: rank 0's thread 1 sends that message, later than thread 0's two
 * receives are written (it sleeps first): in the one order the trace keeps,
 * rank 0 would block in its second receive before the send, but the
 * program does not, since thread 1 goes on (clean).
 * bug (no argument): thread 0 sends it itself after its two receives: the
 * run hangs (deadlock; the test stops it). */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  e2e_init_multiple(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = rank, in = -1;
  if (rank == 0) {
#pragma omp parallel num_threads(2)
    {
      const int t = omp_get_thread_num();
      int got = -1;
      if (t == 0) {
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!fixed) MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* bug: after the receive it enables */
      } else if (fixed) {
        usleep(100000);
        MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
      }
    }
  } else if (rank == 1) {
    MPI_Recv(&in, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (rank == 2) {
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
