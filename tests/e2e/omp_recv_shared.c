/* MPI_THREAD_MULTIPLE from OpenMP threads: rank 0's two threads each
   receive a message from any rank and send it back to its sender.
   bug (no argument): both threads receive into one shared variable, so
   one thread's MPI_Recv writes the buffer that the other thread's MPI_Recv
   or MPI_Send is using (local-concurrency: no thread synchronization
   orders the calls).
   fixed: each thread receives into a variable of its own. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

static int shared_value = -1;

int main(int argc, char** argv) {
  e2e_init_multiple(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  if (rank == 0) {
#pragma omp parallel num_threads(2)
    {
      int own = -1;
      int* value = fixed ? &own : &shared_value;
      MPI_Status status;
      MPI_Recv(value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status);
      MPI_Send(value, 1, MPI_INT, status.MPI_SOURCE, 1, MPI_COMM_WORLD);
    }
  } else if (rank <= 2) {
    int value = rank, back = 0;
    if (rank == 2) usleep(50000);
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Recv(&back, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
