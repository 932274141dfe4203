/* Persistent buffered sends (2 ranks): both ranks start an MPI_Bsend_init
 * request to each other before they receive. Buffered mode never waits for
 * the receiver (MPI-3.1 section 3.4), so this is correct under any
 * buffering: no potential deadlock. Bug (argument `standard`): the same with
 * MPI_Send_init, which completes under zero buffering only once matched, so
 * both ranks can block in MPI_Wait (potential-deadlock). */
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int standard = argc > 1 && strcmp(argv[1], "standard") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int peer = 1 - rank;

  int size = 0;
  MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &size);
  size += MPI_BSEND_OVERHEAD;
  void* attached = malloc((size_t)size * 2);
  MPI_Buffer_attach(attached, size * 2);

  int out = rank, in = -1;
  MPI_Request request;
  if (standard) MPI_Send_init(&out, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &request); /* bug: standard mode */
  else MPI_Bsend_init(&out, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &request);
  for (int round = 0; round < 2; ++round) {
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Recv(&in, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(in == peer);
  }
  MPI_Request_free(&request);
  MPI_Buffer_detach(&attached, &size);
  free(attached);
  MPI_Finalize();
  return 0;
}
