/* Datatypes with overlapping entries (2 ranks): MPI-3.1 section 4.1 makes
 * their use in a receive erroneous, even where the message is too short to
 * write an entry twice; sections 11.3.1 and 11.3.2 say it of MPI_Put's
 * target and MPI_Get's origin. Modes (argv[1]), each with a `_fixed` twin
 * that must be clean:
 *   recv     MPI_Recv into an indexed type whose blocks share ints;
 *            fixed: the same type sends (a send may read an entry twice)
 *            and the receive takes plain ints
 *   resized  MPI_Recv of 4 elements of a 2-int type resized to 1 int: the
 *            elements overlap; fixed: a column type resized to 1 int, whose
 *            elements interleave without sharing a byte (the transpose idiom)
 *   get      MPI_Get whose origin type overlaps; fixed: it is the target
 *            type of an MPI_Get (read there) */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "recv";
  const int fixed = strstr(mode, "_fixed") != NULL;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int a[16] = {0}, b[16] = {0};
  for (int i = 0; i < 16; ++i) a[i] = i;
  const int lengths[2] = {3, 3}, displs[2] = {0, 1};
  MPI_Datatype shared;
  MPI_Type_indexed(2, lengths, displs, MPI_INT, &shared); /* ints 1 and 2 twice */
  MPI_Type_commit(&shared);
  if (strncmp(mode, "recv", 4) == 0) {
    if (rank == 0) {
      MPI_Send(a, 1, fixed ? shared : MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (fixed) {
      MPI_Recv(b, 6, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(b, 1, shared, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug: overlapping entries */
    }
  } else if (strncmp(mode, "resized", 7) == 0) {
    MPI_Datatype block, element;
    if (fixed) MPI_Type_vector(2, 1, 4, MPI_INT, &block); /* a column of a 2x4 matrix */
    else MPI_Type_contiguous(2, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, sizeof(int), &element);
    MPI_Type_commit(&element);
    if (rank == 0) MPI_Send(a, 8, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else MPI_Recv(b, 4, element, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* bug unless fixed */
    MPI_Type_free(&element);
    MPI_Type_free(&block);
  } else if (strncmp(mode, "get", 3) == 0) {
    MPI_Win win;
    MPI_Win_create(a, sizeof a, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
      if (fixed) MPI_Get(b, 6, MPI_INT, 1, 0, 1, shared, win);
      else MPI_Get(b, 1, shared, 1, 0, 6, MPI_INT, win); /* bug: overlapping entries */
    }
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
  }
  MPI_Type_free(&shared);
  MPI_Finalize();
  return 0;
}
