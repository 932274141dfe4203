/* Buffered sends (2 ranks): each rank attaches a buffer (MPI_Buffer_attach),
 * sends to the other with MPI_Bsend and then receives: correct, since a
 * buffered send completes without its receive (MPI-3.1 section 3.4). The
 * buffer is detached before MPI_Finalize. Bug (argument `bug`): the same
 * exchange with MPI_Send, which may wait for its receive (potential-deadlock:
 * it relies on MPI's eager buffering). Argument `small`: the attached buffer
 * holds half the message; `none`: no buffer is attached. Both are erroneous
 * (MPI-4.0 section 3.6: the buffered send needs MPI_Pack_size of its data
 * plus MPI_BSEND_OVERHEAD free in the attached buffer; invalid-argument),
 * though Open MPI may send the message anyway. Argument `twice`: the buffer
 * holds one message, and each rank sends two before it receives either: the
 * first may still hold its space when the second is sent (invalid-argument,
 * "earlier buffered message"); `twice_fixed`: the ranks receive the first
 * messages and meet in MPI_Barrier before the second ones, so the first
 * are transmitted by then. */
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

enum { n = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  const int small = argc > 1 && strcmp(argv[1], "small") == 0;
  const int none = argc > 1 && strcmp(argv[1], "none") == 0;
  const int twice = argc > 1 && strcmp(argv[1], "twice") == 0;
  const int twice_fixed = argc > 1 && strcmp(argv[1], "twice_fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int other = 1 - rank;

  int packed = 0;
  MPI_Pack_size(n, MPI_INT, MPI_COMM_WORLD, &packed);
  const int size = small ? packed / 2 : packed + MPI_BSEND_OVERHEAD;
  char* attached = malloc((size_t)size);
  if (!none) MPI_Buffer_attach(attached, size);

  int out[n], in[n];
  for (int i = 0; i < n; ++i) out[i] = rank * 1000 + i;
  if (twice || twice_fixed) {
    MPI_Bsend(out, n, MPI_INT, other, 0, MPI_COMM_WORLD);
    if (twice_fixed) {
      MPI_Recv(in, n, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Bsend(out, n, MPI_INT, other, 1, MPI_COMM_WORLD);
    if (twice) MPI_Recv(in, n, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(in, n, MPI_INT, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    if (bug) MPI_Send(out, n, MPI_INT, other, 0, MPI_COMM_WORLD);
    else MPI_Bsend(out, n, MPI_INT, other, 0, MPI_COMM_WORLD);
    MPI_Recv(in, n, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < n; ++i) E2E_REQUIRE(in[i] == other * 1000 + i);

  if (!none) {
    void* detached = NULL;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
    E2E_REQUIRE(detached == attached && detached_size == size);
  }
  free(attached);
  MPI_Finalize();
  return 0;
}
