/* Predictive rma-race through a wildcard receive (3 ranks): rank 1 puts into
 * rank 0's window under a shared lock, unlocks, and tells rank 0 with a
 * message; rank 2 sends rank 0 a message of the same tag later (it sleeps
 * first). Rank 0 receives from MPI_ANY_SOURCE and then reads the element
 * rank 1 wrote (annotated). In the recorded run the first receive takes rank
 * 1's message, which orders the Put before the read; but it may as well take
 * rank 2's, and then the read races with the Put. `smtrace check` finds it:
 * the pair is ordered only through the wildcard match, and the SMT backend
 * proves the other match feasible, with a witness schedule.
 * Fixed (argument `fixed`): rank 0 receives from rank 1 first, by name. */
#include <string.h>
#include <unistd.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

enum { N = 8, TAG = 5 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  int window[N] = {0};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  int token = rank;
  if (rank == 1) {
    int value = 42;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
    MPI_Send(&token, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
  } else if (rank == 2) {
    usleep(200 * 1000);
    MPI_Send(&token, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
  } else {
    int got = 0;
    MPI_Recv(&got, 1, MPI_INT, fixed ? 1 : MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smtrace_annotate_read(&window[2], sizeof window[2]); /* bug (unfixed): the Put may not have landed */
    const int seen = window[2];
    MPI_Recv(&got, 1, MPI_INT, fixed ? 2 : MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (void)seen;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
