/* MPI_THREAD_MULTIPLE from OpenMP threads: thread t of each rank exchanges a
   message of tag t with thread t of its partner rank (ranks paired 0-1,
   2-3, ...). The tracer writes a rank's calls in one order; a deadlock
   under zero buffering needs every thread of a blocked rank to block.
   bug (no argument): every thread sends before it receives: the run relies
   on MPI buffering the messages (potential-deadlock: all threads of both
   ranks block in MPI_Send under zero buffering).
   fixed: the even rank's threads send first, the odd rank's receive first.
   The sleeps fix the order the calls are written in: the odd rank's
   thread 1 receives first, before thread 0's receive and send, and in that
   one order the odd rank blocked in thread 1's receive would wait for
   the even rank's thread 1 send, written after its thread 0 send that
   blocks: not a deadlock of the program, where thread 0 goes on. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  e2e_init_multiple(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD), size = e2e_size(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int peer = rank ^ 1;
  if (peer < size) {
#pragma omp parallel num_threads(2)
    {
      const int t = omp_get_thread_num();
      int out = rank * 10 + t, in = -1;
      /* even rank: thread 1 starts last; odd rank: thread 0 starts between */
      if (rank % 2 == 0 && t == 1) usleep(200000);
      if (rank % 2 == 1 && t == 0) usleep(100000);
      if (rank % 2 == 0 || !fixed) {
        MPI_Send(&out, 1, MPI_INT, peer, t, MPI_COMM_WORLD);
        MPI_Recv(&in, 1, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&in, 1, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&out, 1, MPI_INT, peer, t, MPI_COMM_WORLD);
      }
      if (in != peer * 10 + t) fprintf(stderr, "omp_comms: rank %d thread %d got %d\n", rank, t, in);
    }
  }
  MPI_Finalize();
  return 0;
}
