/* invalid-argument under MPI_ERRORS_ARE_FATAL (2 ranks): rank 0 posts an
 * MPI_Isend to rank 2 of 2; MPI aborts the job inside the call (Open MPI
 * ends the process with _exit, no atexit handler runs). The tracer writes
 * such a call when it is entered, so the trace still holds it with its
 * arguments and `check` names it. Fixed (argument `fixed`): destination 1.
 * With `uncommitted` the destination is right but the send's datatype is
 * a contiguous type never committed (MPI_ERR_TYPE inside the MPI_Isend);
 * `uncommitted_fixed` commits it, and sends a duplicate of it (MPI_Type_dup
 * keeps the committed state). With `start_null` rank 0 frees its
 * persistent send request (MPI_Request_free sets the handle to
 * MPI_REQUEST_NULL) and then starts it (MPI_ERR_REQUEST inside MPI_Start);
 * `start_null_fixed` starts, waits and then frees it. With `free_int`
 * every rank frees MPI_INT, a predefined datatype (MPI_ERR_TYPE inside
 * MPI_Type_free); `free_int_fixed` frees a copy of it.
 * With `preinit` every rank first calls MPI_Send before MPI_Init, which MPI
 * forbids: nothing can be recorded yet, the tracer says so on stderr
 * (record_exit.sh). With `postfini` every rank calls MPI_Finalized (allowed)
 * and then MPI_Barrier after MPI_Finalize (forbidden): the tracer says so
 * for the barrier alone, on stderr (record_exit.sh). */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "preinit") == 0) {
    int early = 0;
    MPI_Send(&early, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); /* bug: before MPI_Init */
  }
  MPI_Init(&argc, &argv);
  const int uncommitted = argc > 1 && strncmp(argv[1], "uncommitted", 11) == 0;
  const int start_null = argc > 1 && strncmp(argv[1], "start_null", 10) == 0;
  const int free_int = argc > 1 && strncmp(argv[1], "free_int", 8) == 0;
  const int fixed = argc > 1 && (strcmp(argv[1], "fixed") == 0 || strcmp(argv[1], "uncommitted_fixed") == 0 ||
                                 strcmp(argv[1], "start_null_fixed") == 0 || strcmp(argv[1], "free_int_fixed") == 0 ||
                                 strcmp(argv[1], "postfini") == 0);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  const int size = e2e_size(MPI_COMM_WORLD);
  E2E_REQUIRE(size == 2);
  int value = rank;
  if (free_int) {
    MPI_Datatype type = MPI_INT;
    if (fixed) MPI_Type_dup(MPI_INT, &type);
    MPI_Type_free(&type); /* bug: MPI_INT is predefined */
  } else if (start_null) {
    if (rank == 0) {
      MPI_Request request;
      MPI_Send_init(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
      if (!fixed) MPI_Request_free(&request);
      MPI_Start(&request); /* bug: the freed request is MPI_REQUEST_NULL */
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      if (fixed) MPI_Request_free(&request);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (uncommitted) {
    int pair[2] = {rank, rank};
    MPI_Datatype type, copy;
    MPI_Type_contiguous(2, MPI_INT, &type);
    if (fixed) MPI_Type_commit(&type);
    MPI_Type_dup(type, &copy);
    if (rank == 0) {
      MPI_Request request;
      MPI_Isend(pair, 1, copy, 1, 0, MPI_COMM_WORLD, &request); /* bug: never committed */
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(pair, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&copy);
    MPI_Type_free(&type);
  } else if (rank == 0) {
    MPI_Request request;
    MPI_Isend(&value, 1, MPI_INT, fixed ? 1 : size, 0, MPI_COMM_WORLD, &request); /* bug: rank 2 of 2 */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  if (argc > 1 && strcmp(argv[1], "postfini") == 0) {
    int done = 0;
    MPI_Finalized(&done);          /* allowed after MPI_Finalize */
    if (done) MPI_Barrier(MPI_COMM_WORLD); /* bug: after MPI_Finalize */
  }
  return 0;
}
