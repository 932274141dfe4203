/* Matched probes (2 ranks): rank 1 sends two messages of sizes rank 0 does
 * not know; rank 0 takes each with a matched probe (MPI_Mprobe from any
 * source, MPI_Improbe polled), sizes its buffer from the status and
 * receives exactly that message (MPI_Mrecv, MPI_Imrecv + MPI_Wait). A
 * message of MPI_PROC_NULL is probed and received too (MPI_MESSAGE_NO_PROC).
 * Correct: no finding. Bug (argument `bug`): rank 0 takes the second message
 * with MPI_Improbe and never receives it (resource-leak: the matched message;
 * the send itself was matched by the probe). */
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int bug = argc > 1 && strcmp(argv[1], "bug") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  if (rank == 1) {
    int first[3] = {1, 2, 3};
    int second[5] = {4, 5, 6, 7, 8};
    MPI_Send(first, 3, MPI_INT, 0, 7, MPI_COMM_WORLD);
    MPI_Send(second, 5, MPI_INT, 0, 8, MPI_COMM_WORLD);
  } else {
    MPI_Message message;
    MPI_Status status;
    int count = 0;
    MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &message, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    E2E_REQUIRE(count == 3 && status.MPI_SOURCE == 1);
    int* first = malloc(sizeof(int) * (size_t)count);
    MPI_Mrecv(first, count, MPI_INT, &message, MPI_STATUS_IGNORE);
    E2E_REQUIRE(first[2] == 3 && message == MPI_MESSAGE_NULL);
    free(first);

    int flag = 0;
    while (!flag) MPI_Improbe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    E2E_REQUIRE(count == 5 && status.MPI_TAG == 8);
    int* second = malloc(sizeof(int) * (size_t)count);
    if (!bug) {
      MPI_Request request;
      MPI_Imrecv(second, count, MPI_INT, &message, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      E2E_REQUIRE(second[4] == 8);
    } /* bug: the message taken by MPI_Improbe is never received */
    free(second);

    /* A matched probe of MPI_PROC_NULL finds MPI_MESSAGE_NO_PROC at once. */
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &message, &status);
    E2E_REQUIRE(message == MPI_MESSAGE_NO_PROC);
    MPI_Mrecv(NULL, 0, MPI_INT, &message, &status);
  }

  MPI_Finalize();
  return 0;
}
