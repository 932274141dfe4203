/* MPI_Request_free on an active send (2 ranks): rank 0 sends with MPI_Isend,
 * frees the request at once (MPI allows it, MPI-3.1 section 3.7.3), and
 * reuses the buffer only after rank 1's reply tells it the message arrived,
 * the pattern the standard gives for it. No leak, no local-concurrency
 * error. Bug (argument `early`): rank 0 overwrites the buffer right after
 * MPI_Request_free, while the send may still read it (local-concurrency). */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int early = argc > 1 && strcmp(argv[1], "early") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = i;
  int ack = 0;
  if (rank == 0) {
    MPI_Request request;
    MPI_Isend(buf, 16, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
    if (early) {
      smtrace_annotate_write(buf, sizeof buf); /* bug: the send may still read it */
      buf[0] = -1;
    }
    MPI_Recv(&ack, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smtrace_annotate_write(buf, sizeof buf);
    buf[0] = 100;
  } else {
    MPI_Recv(buf, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(buf[5] == 5);
    MPI_Send(&ack, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
