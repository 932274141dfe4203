/* Type signatures of neighbourhood collectives pair along the topology's
 * edges (4 ranks, a 2 x 2 Cartesian grid, periodic in dimension 0 only, so
 * that a neighbour may appear twice and a missing one is MPI_PROC_NULL):
 * Neighbor_allgather of one int, Neighbor_allgatherv in which rank r sends
 * r + 1 ints and each rank expects from its k-th source that source's count,
 * Ineighbor_alltoall, Neighbor_alltoallv with the same per-sender counts
 * and Neighbor_alltoallw. Correct. Bugs (collective-mismatch: MPI-3.1
 * section 7.6, the signature sent along an edge must be the one received):
 * argument `float`, rank 0 sends MPI_FLOAT where its neighbours expect
 * MPI_INT in the Neighbor_allgather; argument `wfloat`, rank 0 sends its
 * Neighbor_alltoallw block to its neighbour in dimension 1 (an edge that
 * appears once) as MPI_FLOAT where that rank expects MPI_INT. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int as_float = argc > 1 && strcmp(argv[1], "float") == 0;
  const int w_float = argc > 1 && strcmp(argv[1], "wfloat") == 0;
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 4);
  int dims[2] = {2, 2}, periods[2] = {1, 0};
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  const int rank = e2e_rank(grid);

  int one[1] = {rank}, got[4];
  float fone[1] = {(float)rank};
  if (as_float && rank == 0)
    MPI_Neighbor_allgather(fone, 1, MPI_FLOAT, got, 1, MPI_INT, grid); /* bug */
  else
    MPI_Neighbor_allgather(one, 1, MPI_INT, got, 1, MPI_INT, grid);

  /* The 4 neighbours in order: dimension 0 (-1, +1), dimension 1 (-1, +1). */
  int sources[4];
  for (int d = 0; d < 2; ++d) MPI_Cart_shift(grid, d, 1, &sources[2 * d], &sources[2 * d + 1]);
  int counts[4], displs[4], mine[4], all[16], at = 0;
  for (int k = 0; k < 4; ++k) {
    counts[k] = sources[k] == MPI_PROC_NULL ? 0 : sources[k] + 1;
    displs[k] = at;
    at += counts[k];
  }
  for (int i = 0; i < 4; ++i) mine[i] = rank;
  MPI_Neighbor_allgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, grid);
  for (int k = 0; k < 4; ++k)
    if (counts[k] > 0) E2E_REQUIRE(all[displs[k]] == sources[k]);

  int blocks[4] = {rank, rank, rank, rank}, back[4];
  MPI_Request request;
  MPI_Ineighbor_alltoall(blocks, 1, MPI_INT, back, 1, MPI_INT, grid, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  for (int k = 0; k < 4; ++k)
    if (sources[k] != MPI_PROC_NULL) E2E_REQUIRE(back[k] == sources[k]);

  /* Block k goes to the k-th neighbour; each sends its own rank + 1 ints. */
  int vcounts[4], vdispls[4], vsend[16], vrecv[16];
  for (int k = 0; k < 4; ++k) {
    vcounts[k] = rank + 1;
    vdispls[k] = 4 * k;
  }
  for (int i = 0; i < 16; ++i) vsend[i] = rank;
  MPI_Neighbor_alltoallv(vsend, vcounts, vdispls, MPI_INT, vrecv, counts, vdispls, MPI_INT, grid);
  for (int k = 0; k < 4; ++k)
    if (counts[k] > 0) E2E_REQUIRE(vrecv[4 * k] == sources[k]);

  int wcounts[4] = {1, 1, 1, 1};
  MPI_Aint wdispls[4] = {0, sizeof(int), 2 * sizeof(int), 3 * sizeof(int)};
  MPI_Datatype stypes[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT}, rtypes[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
  if (w_float && rank == 0) stypes[2] = stypes[3] = MPI_FLOAT; /* bug: dimension 1's neighbour expects MPI_INT */
  MPI_Neighbor_alltoallw(blocks, wcounts, wdispls, stypes, back, wcounts, wdispls, rtypes, grid);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
