/* Neighbourhood collectives on a Cartesian topology (4 ranks): a
 * non-periodic line from MPI_Cart_create (the ends have MPI_PROC_NULL
 * neighbours), one MPI_Neighbor_alltoall and one MPI_Ineighbor_allgather
 * completed by MPI_Wait, then an MPI_Neighbor_alltoallv on a ring made with
 * MPI_Dist_graph_create_adjacent; before them, a communicator of two ranks
 * from MPI_Comm_create_group. Correct: no finding. Bug (argument `bug`): each rank
 * reads the receive buffer of the MPI_Ineighbor_allgather before MPI_Wait
 * (local-concurrency). */
#include <string.h>

#include <smtrace/annotate.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 4);

  /* First a communicator of ranks 0 and 1 only (MPI_Comm_create_group is
   * collective over the group: ranks 2 and 3 do not call it, and the
   * communicators created on MPI_COMM_WORLD after it are still the same on
   * every rank). */
  const int world = e2e_rank(MPI_COMM_WORLD);
  MPI_Group world_group, pair_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int pair[2] = {0, 1};
  MPI_Group_incl(world_group, 2, pair, &pair_group);
  if (world < 2) {
    MPI_Comm pair_comm;
    MPI_Comm_create_group(MPI_COMM_WORLD, pair_group, 3, &pair_comm);
    int one = 1, two = 0;
    MPI_Allreduce(&one, &two, 1, MPI_INT, MPI_SUM, pair_comm);
    E2E_REQUIRE(two == 2);
    MPI_Comm_free(&pair_comm);
  }
  MPI_Group_free(&pair_group);
  MPI_Group_free(&world_group);

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

  /* A ring as a distributed graph: receive from the left, send to the right. */
  const int from = (rank + 3) % 4, to = (rank + 1) % 4;
  MPI_Comm ring;
  const int weight = 1; /* weights: GCC 12 flags MPI_UNWEIGHTED as an empty array */
  MPI_Dist_graph_create_adjacent(line, 1, &from, &weight, 1, &to, &weight, MPI_INFO_NULL, 0, &ring);
  int two[2] = {rank, rank}, got[2] = {-1, -1}, counts[1] = {2}, displs[1] = {0};
  MPI_Neighbor_alltoallv(two, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring);
  E2E_REQUIRE(got[0] == from && got[1] == from);
  MPI_Comm_free(&ring);

  MPI_Comm_free(&line);
  MPI_Finalize();
  return 0;
}
