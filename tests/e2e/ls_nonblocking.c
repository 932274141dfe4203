/* local-concurrency through compiler instrumentation (built with smtrace-cc,
 * no annotations), 2 ranks: rank 0 stores into the buffer of its pending
 * MPI_Isend, rank 1 reads the buffer of its pending MPI_Irecv, each before
 * MPI_Wait completes the request. Fixed (argument `fixed`): each accesses
 * its buffer after the wait.
 * Mode `freed` (argv[1], `freed_fixed` its twin): rank 0 frees its active
 * MPI_Isend's request (MPI_Request_free) and stores into the buffer, which
 * the send may still read (MPI-3.1 section 3.7.3); fixed: it stores after
 * rank 1's answer, sent once its receive completed, three rounds. */
#include <string.h>

#include "e2e_util.h"

enum { N = 100 };

/* Store `value` into every element of `v`. */
static void fill(int* v, int value) {
  for (int i = 0; i < N; ++i) v[i] = value + i;
}

/* Return the sum of the elements of `v`. */
static long total(const int* v) {
  long sum = 0;
  for (int i = 0; i < N; ++i) sum += v[i];
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strstr(argv[1], "fixed") != NULL;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  if (argc > 1 && strncmp(argv[1], "freed", 5) == 0) {
    int data[N], answer = 0;
    for (int round = 0; round < 3; ++round) {
      if (rank == 0) {
        fill(data, round);
        MPI_Request sent;
        MPI_Isend(data, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &sent);
        MPI_Request_free(&sent);
        if (!fixed) fill(data, 1000); /* bug: the send may still read data */
        MPI_Recv(&answer, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (fixed) fill(data, 1000);
      } else {
        MPI_Recv(data, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&answer, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
      }
    }
    MPI_Finalize();
    return 0;
  }

  int buf[N];
  MPI_Request request;
  long sum = 0;
  if (rank == 0) {
    fill(buf, 1);
    MPI_Isend(buf, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    if (!fixed) fill(buf, 1000); /* bug: the send may still read buf */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (fixed) fill(buf, 1000);
  } else {
    MPI_Irecv(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &request);
    if (!fixed) sum = total(buf); /* bug: the receive may still write buf */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (fixed) {
      sum = total(buf);
      E2E_REQUIRE(sum == N + N * (N - 1) / 2);
    }
  }

  MPI_Finalize();
  return 0;
}
