/* local-concurrency (2 ranks): rank 0 reuses the buffer of a pending
 * MPI_Isend, first with an annotated store, then as the buffer of an
 * MPI_Recv, before MPI_Wait completes the send. Fixed (argument `fixed`):
 * it waits first. */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

enum { n = 100 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int buf[n];
  if (rank == 0) {
    for (int i = 0; i < n; ++i) buf[i] = i;
    MPI_Request request;
    MPI_Isend(buf, n, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    if (fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);
    smtrace_annotate_write(buf, sizeof buf[0]); /* bug: the send may still read buf */
    buf[0] = -1;
    MPI_Recv(buf, n, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug: receives into it */
    if (!fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; ++i) E2E_REQUIRE(buf[i] == 2 * i);
  } else {
    MPI_Recv(buf, n, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; ++i) buf[i] = 2 * i;
    MPI_Send(buf, n, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
