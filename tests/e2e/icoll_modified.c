/* local-concurrency (2 ranks), no annotation: rank 0 stores into the input
 * of a pending MPI_Ibcast (it is the root) and every rank into the send
 * buffer of a pending MPI_Iallreduce, before MPI_Wait. Fixed (`fixed`):
 * they wait first; an MPI_IN_PLACE Iallreduce's buffer (in/out, written by
 * MPI) is not hashed, and a non-root's Ibcast buffer is written by MPI. */
#include <string.h>

#include "e2e_util.h"

enum { n = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  double data[n], sum[n], io[n];
  for (int i = 0; i < n; ++i) data[i] = rank == 0 ? i : 0, io[i] = 1;
  MPI_Request request;
  MPI_Ibcast(data, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
  if (fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (rank == 0) data[3] = -3; /* bug at the root: the broadcast may still read it */
  if (!fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);

  MPI_Iallreduce(data, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  if (fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);
  data[5] = -5; /* bug: the reduction may still read it */
  if (!fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);

  MPI_Iallreduce(MPI_IN_PLACE, io, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  E2E_REQUIRE(io[0] == 2 && data[5] == -5);
  MPI_Finalize();
  return 0;
}
