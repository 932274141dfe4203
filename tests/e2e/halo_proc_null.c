/* A 1-D halo exchange (3 ranks, not periodic): each rank posts an Irecv and
 * an Isend to its left and right neighbours, MPI_PROC_NULL at the ends, and
 * completes all four with one MPI_Waitall; then two receives from
 * MPI_PROC_NULL completed by one Waitall. Open MPI hands every operation on
 * MPI_PROC_NULL the same (already completed) request handle: the tracer must
 * still give them distinct ids, or the report shows request leaks and
 * overlapping receives. Correct: the report must be clean. With the
 * argument "leak" the end ranks leave their MPI_PROC_NULL receive out of
 * the Waitall (a request leak, MPI-3.1 section 3.7.3). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  const int leak = argc > 1 && strcmp(argv[1], "leak") == 0;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  double cells[6] = {0, 1.0 + rank, 2.0 + rank, 3.0 + rank, 4.0 + rank, 0};
  MPI_Request req[4];
  MPI_Irecv(&cells[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
  MPI_Irecv(&cells[5], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
  MPI_Isend(&cells[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[2]);
  MPI_Isend(&cells[4], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[3]);
  const int end_rank = left == MPI_PROC_NULL || right == MPI_PROC_NULL;
  if (leak && end_rank) {
    /* The receive from MPI_PROC_NULL is never completed. */
    MPI_Request rest[3];
    int k = 0;
    for (int i = 0; i < 4; ++i)
      if (!(i < 2 && (i == 0 ? left : right) == MPI_PROC_NULL)) rest[k++] = req[i];
    MPI_Waitall(k, rest, MPI_STATUSES_IGNORE);
  } else {
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  }
  if (left != MPI_PROC_NULL) E2E_REQUIRE(cells[0] == 4.0 + left);
  if (right != MPI_PROC_NULL) E2E_REQUIRE(cells[5] == 1.0 + right);

  /* Two receives from MPI_PROC_NULL, one Waitall. */
  int a = 7, b = 8;
  MPI_Request two[2];
  MPI_Irecv(&a, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &two[0]);
  MPI_Irecv(&b, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &two[1]);
  MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
  E2E_REQUIRE(a == 7 && b == 8);
  MPI_Finalize();
  return 0;
}
