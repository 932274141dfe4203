/* resource-leak (2 ranks): a duplicated communicator, a vector datatype and
 * the info object MPI_Comm_get_info returns (the caller frees it, MPI-4.0
 * section 7.4.4) are never freed. Fixed (argument `fixed`): all are freed
 * before MPI_Finalize. Both free an info made by MPI_Info_create and
 * MPI_Info_dup. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup); /* bug: never freed */
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other); /* bug: never freed */
  MPI_Type_commit(&every_other);
  MPI_Info hints, copy, used;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "mpi_assert_no_any_source", "true");
  MPI_Info_dup(hints, &copy);
  MPI_Info_free(&hints);
  MPI_Info_free(&copy);
  MPI_Comm_get_info(dup, &used); /* bug: never freed */

  int data[8];
  for (int i = 0; i < 8; ++i) data[i] = rank == 0 ? i : -1;
  if (rank == 0) {
    MPI_Send(data, 1, every_other, 1, 0, dup);
  } else {
    MPI_Recv(data, 1, every_other, 0, 0, dup, MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; ++i) E2E_REQUIRE(data[i] == (i % 2 == 0 ? i : -1));
  }

  if (fixed) {
    MPI_Info_free(&used);
    MPI_Type_free(&every_other);
    MPI_Comm_free(&dup);
  }
  MPI_Finalize();
  return 0;
}
