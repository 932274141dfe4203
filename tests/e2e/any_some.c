/* MPI_Waitany, MPI_Testany, MPI_Waitsome and MPI_Testsome (2 ranks): rank 0
 * posts receives and completes them with each call in turn, rank 1 sends
 * (for the polls, late: 100 ms after rank 0 said it is about to spin, so
 * that the polls fail and fold). The last Waitsome is
 * over 17 requests, one more than the tracer's fast path holds: the checker
 * reads the same kind of events either way. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "e2e_util.h"

#define MANY 17
#define READY 99 /* rank 0 to rank 1: about to poll */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Post receives of tags first .. first + n - 1 from rank 1 into v. */
static void post(MPI_Request* r, int* v, int first, int n) {
  for (int i = 0; i < n; ++i) MPI_Irecv(&v[i], 1, MPI_INT, 1, first + i, MPI_COMM_WORLD, &r[i]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  if (rank == 0) {
    MPI_Request r[MANY];
    int v[MANY];
    int index = -1, flag = 0, outcount = 0, indices[MANY];
    MPI_Status st, sts[MANY];
    /* Waitany: tags 1-3, one each. */
    post(r, v, 1, 3);
    for (int k = 0; k < 3; ++k) {
      MPI_Waitany(3, r, &index, &st);
      E2E_REQUIRE(index >= 0 && index < 3 && st.MPI_TAG == 1 + index && v[index] == 10 * (1 + index));
    }
    /* Waitany over null requests only. */
    MPI_Request none[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Waitany(2, none, &index, &st);
    E2E_REQUIRE(index == MPI_UNDEFINED);
    /* Testany: tags 4-5, sent late. */
    post(r, v, 4, 2);
    MPI_Send(NULL, 0, MPI_BYTE, 1, READY, MPI_COMM_WORLD);
    for (int done = 0; done < 2;) {
      MPI_Testany(2, r, &index, &flag, &st);
      if (flag) {
        E2E_REQUIRE(index >= 0 && index < 2 && st.MPI_TAG == 4 + index);
        ++done;
      }
    }
    /* Waitsome: tags 6-7. */
    post(r, v, 6, 2);
    for (int done = 0; done < 2; done += outcount) {
      MPI_Waitsome(2, r, &outcount, indices, sts);
      E2E_REQUIRE(outcount >= 1 && outcount <= 2);
    }
    /* Testsome: tags 8-9, sent late. */
    post(r, v, 8, 2);
    MPI_Send(NULL, 0, MPI_BYTE, 1, READY, MPI_COMM_WORLD);
    for (int done = 0; done < 2; done += outcount) {
      MPI_Testsome(2, r, &outcount, indices, sts);
      E2E_REQUIRE(outcount >= 0 && outcount <= 2);
    }
    /* Waitsome of MANY requests, statuses ignored: tags 100 ... */
    post(r, v, 100, MANY);
    for (int done = 0; done < MANY; done += outcount) {
      MPI_Waitsome(MANY, r, &outcount, indices, MPI_STATUSES_IGNORE);
      E2E_REQUIRE(outcount >= 1);
    }
    for (int i = 0; i < MANY; ++i) E2E_REQUIRE(v[i] == 10 * (100 + i));
  } else {
    int v[MANY];
    for (int tag = 1; tag <= 9; ++tag) {
      if (tag == 4 || tag == 8) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sleep_ms(100);
      }
      v[0] = 10 * tag;
      MPI_Send(&v[0], 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
    }
    for (int i = 0; i < MANY; ++i) {
      v[i] = 10 * (100 + i);
      MPI_Send(&v[i], 1, MPI_INT, 0, 100 + i, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
