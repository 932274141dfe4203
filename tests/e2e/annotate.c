/* Annotation API (2 ranks): declare local reads and writes around an
 * exchange. Runs traced (annotations recorded with their call sites) and
 * untraced (annotations cost nothing and change nothing). */
#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int peer = 1 - rank;

  int buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = rank;
  smtrace_annotate_write(buf, sizeof buf); /* site:annotate_write */
  int in[64];
  MPI_Sendrecv(buf, 64, MPI_INT, peer, 0, in, 64, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  smtrace_annotate_read(in, 16 * sizeof(int)); /* site:annotate_read */
  for (int i = 0; i < 64; ++i) E2E_REQUIRE(in[i] == peer);

  MPI_Finalize();
  return 0;
}
