/* Polling loops (2 ranks): rank 0 spins on MPI_Test until a message that
 * rank 1 sends late arrives; then rank 1 spins on MPI_Iprobe for the answer.
 * Each spin makes thousands of identical calls that the tracer folds. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "e2e_util.h"

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  long polls = 0;
  int value = -1;
  if (rank == 0) {
    MPI_Request req;
    MPI_Irecv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req);
    int flag = 0;
    MPI_Status st;
    while (!flag) {
      MPI_Test(&req, &flag, &st);
      ++polls;
    }
    E2E_REQUIRE(value == 77 && st.MPI_SOURCE == 1 && st.MPI_TAG == 7);
    sleep_ms(200);
    value = 88;
    MPI_Send(&value, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
  } else {
    sleep_ms(200);
    value = 77;
    MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    int flag = 0;
    while (!flag) {
      MPI_Iprobe(0, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      ++polls;
    }
    MPI_Recv(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(value == 88);
  }
  E2E_REQUIRE(polls > 1);
  /* The checker compares the folded repeats with this count. */
  printf("e2e polling: rank %d polls %ld\n", rank, polls);
  MPI_Finalize();
  return 0;
}
