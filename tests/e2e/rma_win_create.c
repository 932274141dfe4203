/* Window creation orders the stores before it (2 ranks): rank 0 fills its
 * buffer, creates the window over it, and rank 1 reads it in its first
 * passive target epoch; after MPI_Win_free rank 0 reuses the memory. Window
 * creation and MPI_Win_free order every member's entry before every
 * member's return (docs/checks.md, rma-race: a window cannot be addressed
 * before every member described its memory, nor freed while one still
 * accesses it): no race. Bug (argument `late`): rank 0 stores after the
 * creation, with nothing ordering the store and rank 1's get (rma-race). */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int late = argc > 1 && strcmp(argv[1], "late") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int window[4] = {0, 0, 0, 0};
  if (rank == 0 && !late) {
    smtrace_annotate_write(window, sizeof window);
    for (int i = 0; i < 4; ++i) window[i] = 40 + i;
  }
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0 && late) {
    smtrace_annotate_write(window, sizeof window); /* bug: rank 1 may read now */
    for (int i = 0; i < 4; ++i) window[i] = 40 + i;
  }
  if (rank == 1) {
    int got = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&got, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Win_free(&win);
  if (rank == 0) {
    smtrace_annotate_write(window, sizeof window);
    window[0] = 0;
  }
  MPI_Finalize();
  return 0;
}
