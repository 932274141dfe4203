/* A wildcard receive whose other match truncates (3 ranks): rank 0 receives
 * twice from MPI_ANY_SOURCE, first into room for 1 int, then for 4; rank 1
 * sends 1 int, rank 2 (later: a sleep the trace does not order) 4 ints. The
 * run completes, but had the first receive taken rank 2's message it would
 * have been truncated (MPI_ERR_TRUNCATE, MPI-4.0 section 3.2.4): `smtrace
 * check` proves that match feasible, message-race (error). Fixed (argument
 * `fixed`): both receives have room for 4. Argument `type`: rank 2 sends 4
 * floats, into int buffers (a type signature that differs, section 3.3.1).
 * MPI_ERRORS_RETURN, so that a run in which the timing flips still ends. */
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int type = argc > 1 && strcmp(argv[1], "type") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 0) {
    int first[4] = {0}, second[4] = {0};
    MPI_Recv(first, fixed || type ? 4 : 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug */
    MPI_Recv(second, 4, type ? MPI_FLOAT : MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    int one = 1;
    MPI_Send(&one, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    usleep(300 * 1000); /* lets rank 1's message come first */
    int four[4] = {2, 2, 2, 2};
    float fourf[4] = {2, 2, 2, 2};
    if (type) MPI_Send(fourf, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
    else MPI_Send(four, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
