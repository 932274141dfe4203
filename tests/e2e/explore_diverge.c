/* A program that takes another path after a wildcard match and still
 * computes the same (3 ranks), as a master hands out work: rank 0 receives
 * a request from MPI_ANY_SOURCE, answers that rank first, then receives from
 * and answers the other one. Forcing the other match changes the order of
 * rank 0's calls (its sends and named receives go to the other rank first),
 * not the result: `smtrace explore` reports the alternative as diverged,
 * the race as info. */
#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 3);

  if (rank == 0) {
    int request = 0, total = 0;
    MPI_Status status;
    MPI_Recv(&request, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status);
    const int first = status.MPI_SOURCE;
    const int other = 3 - first;
    int work = 100 * first;
    MPI_Send(&work, 1, MPI_INT, first, 1, MPI_COMM_WORLD);
    total += request;
    MPI_Recv(&request, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    work = 100 * other;
    MPI_Send(&work, 1, MPI_INT, other, 1, MPI_COMM_WORLD);
    total += request;
    printf("total %d\n", total);
  } else {
    int work = 0;
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Recv(&work, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(work == 100 * rank);
  }

  MPI_Finalize();
  return 0;
}
