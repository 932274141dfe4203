/* local-concurrency (2 ranks): rank 0 posts two MPI_Irecvs whose buffers
 * overlap (the second starts in the middle of the first). Fixed (argument
 * `fixed`): the second buffer follows the first. */
#include <string.h>

#include "e2e_util.h"

enum { n = 10 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  if (rank == 0) {
    int buf[2 * n];
    MPI_Request requests[2];
    MPI_Irecv(buf, n, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(buf + (fixed ? n : n / 2), n, MPI_INT, 1, 1, MPI_COMM_WORLD, &requests[1]); /* bug: overlaps */
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    if (fixed)
      for (int i = 0; i < 2 * n; ++i) E2E_REQUIRE(buf[i] == i);
  } else {
    int out[2 * n];
    for (int i = 0; i < 2 * n; ++i) out[i] = i;
    MPI_Send(out, n, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Send(out + n, n, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
