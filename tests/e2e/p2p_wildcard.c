/* Wildcard receives, blocking and non-blocking (3 ranks or more).
 * Ranks >= 1 send to rank 0; rank 0 receives with MPI_ANY_SOURCE and
 * MPI_ANY_TAG. The trace must keep the posted wildcards and the actual
 * source and tag from the status. Lines marked "site:" are checked by the
 * call_sites case: keep each marked call on one line. */
#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size >= 3);
  const int senders = size - 1;

  if (rank == 0) {
    /* Blocking: any source, fixed tag per round; then any source, any tag. */
    for (int i = 0; i < senders; ++i) {
      int value = -1;
      MPI_Status st;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st); /* site:recv_any_source */
      E2E_REQUIRE(st.MPI_TAG == 10 && value == 100 + st.MPI_SOURCE);
    }
    for (int i = 0; i < senders; ++i) {
      int value = -1;
      MPI_Status st;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      E2E_REQUIRE(st.MPI_TAG == 20 + st.MPI_SOURCE && value == 200 + st.MPI_SOURCE);
    }
    /* The rounds of MPI_ANY_TAG receives are kept apart: without the
     * barrier a receive of this round could take a sender's next message. */
    MPI_Barrier(MPI_COMM_WORLD);
    /* Non-blocking: Irecv with both wildcards, completed by Waitall. */
    int values[16];
    MPI_Request reqs[16];
    MPI_Status sts[16];
    E2E_REQUIRE(senders <= 16);
    for (int i = 0; i < senders; ++i)
      MPI_Irecv(&values[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[i]); /* site:irecv_any */
    MPI_Waitall(senders, reqs, sts); /* site:waitall */
    for (int i = 0; i < senders; ++i)
      E2E_REQUIRE(sts[i].MPI_TAG == 30 + sts[i].MPI_SOURCE && values[i] == 300 + sts[i].MPI_SOURCE);
    MPI_Barrier(MPI_COMM_WORLD);
    /* A wildcard receive with MPI_STATUS_IGNORE: the tracer still records the
     * actual source and tag. */
    for (int i = 0; i < senders; ++i) {
      int value = -1;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      E2E_REQUIRE(value >= 401 && value < 400 + size);
    }
  } else {
    int v1 = 100 + rank, v2 = 200 + rank, v3 = 300 + rank, v4 = 400 + rank;
    MPI_Send(&v1, 1, MPI_INT, 0, 10, MPI_COMM_WORLD); /* site:send */
    MPI_Send(&v2, 1, MPI_INT, 0, 20 + rank, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request req;
    MPI_Isend(&v3, 1, MPI_INT, 0, 30 + rank, MPI_COMM_WORLD, &req); /* site:isend */
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&v4, 1, MPI_INT, 0, 40, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
