/* Neighbourhood collectives on a Cartesian topology (4 ranks): a
 * non-periodic line from MPI_Cart_create (the ends have MPI_PROC_NULL
 * neighbours), one MPI_Neighbor_alltoall and one MPI_Ineighbor_allgather
 * completed by MPI_Wait. Correct: no finding. Bug (argument `bug`): each rank
 * reads the receive buffer of the MPI_Ineighbor_allgather before MPI_Wait
 * (local-concurrency). */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 4);

  int dims[1] = {4}, periods[1] = {0};
  MPI_Comm line;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
  const int rank = e2e_rank(line);
  int left, right;
  MPI_Cart_shift(line, 0, 1, &left, &right);

  /* Block 0 goes to the left neighbour, block 1 to the right one. */
  int out[2] = {10 * rank, 10 * rank + 1}, in[2] = {-1, -1};
  MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, line);
  E2E_REQUIRE(left == MPI_PROC_NULL ? in[0] == -1 : in[0] == 10 * left + 1);
  E2E_REQUIRE(right == MPI_PROC_NULL ? in[1] == -1 : in[1] == 10 * right);

  int mine = rank, theirs[2] = {-1, -1};
  MPI_Request request;
  MPI_Ineighbor_allgather(&mine, 1, MPI_INT, theirs, 1, MPI_INT, line, &request);
  if (bug) {
    smtrace_annotate_read(theirs, sizeof theirs); /* bug: the collective may still write it */
    E2E_REQUIRE(theirs[0] >= -1);
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  E2E_REQUIRE(left == MPI_PROC_NULL ? theirs[0] == -1 : theirs[0] == left);
  E2E_REQUIRE(right == MPI_PROC_NULL ? theirs[1] == -1 : theirs[1] == right);

  MPI_Comm_free(&line);
  MPI_Finalize();
  return 0;
}
