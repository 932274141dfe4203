/* Buffers of one call that share bytes (3 ranks): MPI-3.1 section 2.3 lets
 * no output argument alias another argument. Modes (argv[1]), each with a
 * `_fixed` twin that must be clean:
 *   sendrecv   MPI_Sendrecv whose receive buffer starts inside its send
 *              buffer; fixed: the send buffer's even ints go out and the
 *              odd ones of the same array come in (disjoint bytes)
 *   allgather  MPI_Allgather with the send buffer inside the receive
 *              buffer; fixed: MPI_IN_PLACE
 *   gatherv    MPI_Gatherv whose displacements at the root overlap
 *              (section 5.5: no location written twice); fixed: apart
 *   getacc     MPI_Get_accumulate whose result buffer is its origin
 *              buffer (section 11.3.4); fixed: two buffers */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "sendrecv";
  const int fixed = strstr(mode, "_fixed") != NULL;
  const int rank = e2e_rank(MPI_COMM_WORLD), size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size == 3);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int a[12] = {0};
  if (strncmp(mode, "sendrecv", 8) == 0) {
    if (fixed) {
      MPI_Datatype evens;
      MPI_Type_vector(3, 1, 2, MPI_INT, &evens);
      MPI_Type_commit(&evens);
      MPI_Sendrecv(a, 1, evens, right, 0, a + 1, 1, evens, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Type_free(&evens);
    } else {
      MPI_Sendrecv(a, 3, MPI_INT, right, 0, a + 1, 3, MPI_INT, left, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE); /* bug: aliased */
    }
  } else if (strncmp(mode, "allgather", 9) == 0) {
    a[rank] = rank;
    if (fixed) MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INT, MPI_COMM_WORLD);
    else MPI_Allgather(a + rank, 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD); /* bug: aliased */
  } else if (strncmp(mode, "gatherv", 7) == 0) {
    int mine[2] = {rank, rank};
    const int counts[3] = {2, 2, 2};
    const int displs[3] = {0, fixed ? 2 : 1, 4};
    MPI_Gatherv(mine, 2, MPI_INT, a, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); /* bug unless fixed */
  } else if (strncmp(mode, "getacc", 6) == 0) {
    int* base = NULL;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_fence(0, win);
    int* result = fixed ? a + 4 : a;
    MPI_Get_accumulate(a, 2, MPI_INT, result, 2, MPI_INT, right, 0, 2, MPI_INT, MPI_SUM, win); /* bug unless fixed */
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
  }
  MPI_Finalize();
  return 0;
}
