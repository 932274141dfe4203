/* Collectives on world and on the two halves of MPI_Comm_split (4 ranks).
 * color = rank % 2, key = -rank: each half lists its members in reverse
 * world order, so a CommDef that ignored the key would be caught. */
#include "e2e_util.h"

static void collectives(MPI_Comm comm, int bcast_root, int reduce_root, int gatherv_root) {
  const int rank = e2e_rank(comm);
  const int size = e2e_size(comm);
  int value = rank == bcast_root ? 42 : 0;
  MPI_Bcast(&value, 1, MPI_INT, bcast_root, comm);
  E2E_REQUIRE(value == 42);

  int mine = rank + 1, sum = 0;
  MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, reduce_root, comm);
  if (rank == reduce_root) E2E_REQUIRE(sum == size * (size + 1) / 2);

  int max = -1;
  MPI_Allreduce(&mine, &max, 1, MPI_INT, MPI_MAX, comm);
  E2E_REQUIRE(max == size);

  MPI_Barrier(comm);

  /* Rank i contributes i + 1 doubles. */
  double send[8], recv[64];
  int counts[8], displs[8];
  for (int i = 0; i < rank + 1; ++i) send[i] = rank;
  int total = 0;
  for (int i = 0; i < size; ++i) {
    counts[i] = i + 1;
    displs[i] = total;
    total += counts[i];
  }
  MPI_Gatherv(send, rank + 1, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, gatherv_root, comm);
  if (rank == gatherv_root)
    for (int i = 0; i < size; ++i) E2E_REQUIRE(recv[displs[i]] == i);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 4);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  E2E_REQUIRE(e2e_size(half) == 2 && e2e_rank(half) == 1 - rank / 2);

  collectives(half, 0, 1, 0);
  collectives(MPI_COMM_WORLD, 2, 3, 1);

  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
