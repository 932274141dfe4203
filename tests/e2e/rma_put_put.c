/* rma-race, remote-remote (3 ranks): ranks 1 and 2 both put into rank 0's
 * window in one fence epoch, rank 1 an MPI_INT vector of the even elements,
 * rank 2 of every element: they write the same bytes, unordered. Fixed
 * (argument `fixed`): rank 2 puts the odd elements, interleaved with rank
 * 1's, sharing no byte (exact footprints of derived datatypes). */
#include <string.h>

#include "e2e_util.h"

enum { N = 16 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  int window[2 * N] = {0};
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Datatype every_other;  /* N ints, one every two */
  MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);

  int mine[2 * N];
  for (int i = 0; i < 2 * N; ++i) mine[i] = 100 * rank + i;
  MPI_Win_fence(0, win);
  if (rank == 1) MPI_Put(mine, N, MPI_INT, 0, 0, 1, every_other, win);
  if (rank == 2) {
    if (fixed) MPI_Put(mine, N, MPI_INT, 0, 1, 1, every_other, win);
    else MPI_Put(mine, N, MPI_INT, 0, 0, N, MPI_INT, win); /* bug: overlaps rank 1's */
  }
  MPI_Win_fence(0, win);
  if (rank == 0 && fixed)
    for (int i = 0; i < N; ++i) E2E_REQUIRE(window[2 * i] == 100 + i && window[2 * i + 1] == 200 + i);

  MPI_Type_free(&every_other);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
