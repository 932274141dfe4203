/* Buffered sends (2 ranks): each rank attaches a buffer (MPI_Buffer_attach),
 * sends to the other with MPI_Bsend and then receives: correct, since a
 * buffered send completes without its receive (MPI-3.1 section 3.4). The
 * buffer is detached before MPI_Finalize. Bug (argument `bug`): the same
 * exchange with MPI_Send, which may wait for its receive (potential-deadlock:
 * it relies on MPI's eager buffering). */
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

enum { n = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int other = 1 - rank;

  int packed = 0;
  MPI_Pack_size(n, MPI_INT, MPI_COMM_WORLD, &packed);
  const int size = packed + MPI_BSEND_OVERHEAD;
  char* attached = malloc((size_t)size);
  MPI_Buffer_attach(attached, size);

  int out[n], in[n];
  for (int i = 0; i < n; ++i) out[i] = rank * 1000 + i;
  if (bug) MPI_Send(out, n, MPI_INT, other, 0, MPI_COMM_WORLD);
  else MPI_Bsend(out, n, MPI_INT, other, 0, MPI_COMM_WORLD);
  MPI_Recv(in, n, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) E2E_REQUIRE(in[i] == other * 1000 + i);

  void* detached = NULL;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  E2E_REQUIRE(detached == attached && detached_size == size);
  free(attached);
  MPI_Finalize();
  return 0;
}
