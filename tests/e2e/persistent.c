/* Persistent requests (2 ranks): Send_init / Recv_init once, then rounds of
 * Startall + Waitall, then Request_free. */
#include "e2e_util.h"

enum { ROUNDS = 5 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int peer = 1 - rank;

  int out = 0, in = -1;
  MPI_Request reqs[2];
  MPI_Send_init(&out, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv_init(&in, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[1]);
  for (int round = 0; round < ROUNDS; ++round) {
    out = 100 * rank + round;
    MPI_Startall(2, reqs);
    MPI_Status sts[2];
    MPI_Waitall(2, reqs, sts);
    E2E_REQUIRE(in == 100 * peer + round);
    E2E_REQUIRE(sts[1].MPI_SOURCE == peer && sts[1].MPI_TAG == 5);
  }
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  MPI_Finalize();
  return 0;
}
