/* A matched probe's message received twice (2 ranks): rank 1's MPI_Mprobe
 * takes rank 0's message, MPI_Mrecv receives it and sets the handle to
 * MPI_MESSAGE_NULL, and a second MPI_Mrecv passes that null handle
 * (MPI-3.1 section 2.5.1: erroneous; Open MPI aborts in it). With the
 * argument "fixed" the second receive is left out; both variants first
 * probe MPI_PROC_NULL and receive its MPI_MESSAGE_NO_PROC (fine). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  int value = 5, got = 0;
  MPI_Message m;
  MPI_Status st;
  MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
  MPI_Mrecv(&got, 1, MPI_INT, &m, &st);
  if (rank == 0) {
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Mprobe(0, 0, MPI_COMM_WORLD, &m, &st);
    MPI_Mrecv(&got, 1, MPI_INT, &m, &st);
    E2E_REQUIRE(got == 5);
    if (!fixed) MPI_Mrecv(&got, 1, MPI_INT, &m, &st);
  }
  MPI_Finalize();
  return 0;
}
