/* One-sided communication with fence synchronization (3 ranks or more):
 * Win_create over a local array and Win_allocate, Put / Get / Accumulate. */
#include "e2e_util.h"

enum { N = 16 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size >= 3 && size < N - 10);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  int local[N];
  for (int i = 0; i < N; ++i) local[i] = 1000 * rank + i;
  MPI_Win win;
  MPI_Win_create(local, sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int token = 7000 + rank;
  MPI_Put(&token, 1, MPI_INT, right, rank, 1, MPI_INT, win); /* into right's local[rank] */
  MPI_Win_fence(0, win);
  int got = -1;
  MPI_Get(&got, 1, MPI_INT, left, 5, 1, MPI_INT, win);
  int one = 1;
  MPI_Accumulate(&one, 1, MPI_INT, 0, 10, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  E2E_REQUIRE(local[left] == 7000 + left);
  E2E_REQUIRE(got == 1000 * left + 5);
  if (rank == 0) E2E_REQUIRE(local[10] == 10 + size);

  /* A window the library allocates. */
  double* mem = NULL;
  MPI_Win awin;
  MPI_Win_allocate(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &awin);
  for (int i = 0; i < 4; ++i) mem[i] = -1.0;
  MPI_Win_fence(0, awin);
  double d = rank;
  MPI_Put(&d, 1, MPI_DOUBLE, left, 2, 1, MPI_DOUBLE, awin);
  MPI_Win_fence(0, awin);
  E2E_REQUIRE(mem[2] == (double)right);

  MPI_Win_free(&awin);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
