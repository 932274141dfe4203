/* A blocking send before what its receiver first waits for: the run
 * completes only because MPI buffers the send, a program MPI-4.0 section 3.5
 * calls unsafe (`smtrace check`: potential-deadlock). Argument `probe` (2
 * ranks): rank 1 sends tag 0 (2 ints), then tag 1; rank 0 probes for tag 1
 * from any source, then receives tag 1 and tag 0 from the rank the probe
 * saw; under zero buffering the tag-0 send waits for a receive rank 0 posts
 * only after its probe saw tag 1 (nd_probe_tagloose). Argument `barrier` (3
 * ranks): rank 1 sends before MPI_Barrier, rank 0 receives from any source
 * after it, and rank 2 sends after it; the barrier waits for rank 1, whose
 * send waits for rank 0's receive (nd_barrier_trunc). Fixed (second argument
 * `isend`): rank 1's sends are MPI_Isend, completed after (MPI_Waitall, MPI_Wait). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int barrier = argc > 1 && strcmp(argv[1], "barrier") == 0;
  const int isend = argc > 2 && strcmp(argv[2], "isend") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == (barrier ? 3 : 2));
  int v[2] = {1, 2}, one = 0, two[2] = {0, 0};
  MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};

  if (!barrier) {
    if (rank == 0) {
      MPI_Status st;
      MPI_Probe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
      MPI_Recv(&one, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(two, 2, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      E2E_REQUIRE(one == 1 && two[1] == 2);
    } else if (isend) {
      MPI_Isend(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq[1]);
      MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    } else {
      MPI_Send(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD); /* bug: waits for a receive behind the probe */
      MPI_Send(v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
  } else {
    if (rank == 1) {
      if (isend) {
        MPI_Isend(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq[0]);
      } else {
        MPI_Send(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD); /* bug: waits for a receive behind the barrier */
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Recv(two, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(two, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 2) {
      MPI_Send(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  }

  MPI_Finalize();
  return 0;
}
