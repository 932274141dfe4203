/* A bug that shows once in a while: rank 0 receives two results with
 * MPI_ANY_SOURCE and assumes the first one comes from rank 1. Whether it does
 * depends on timing. Run under `smtrace record`, the trace keeps both the
 * posted wildcard and the sender that actually matched.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    if (rank == 0) fprintf(stderr, "wildcard_race: run with 3 ranks\n");
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    int from_one = 0, from_two = 0;
    /* BUG: the two receives may match either sender. */
    MPI_Recv(&from_one, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&from_two, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank 0: result = %d (expected 12 only if rank 1 came first)\n", 10 * from_one + from_two);
  } else if (rank <= 2) {
    int value = rank;
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
