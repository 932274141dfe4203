/* Helpers shared by the end-to-end test programs: fail loudly, and the
 * exchange partner of a rank. Programs check their own results, so a test
 * also fails when tracing changes what the application computes. */
#ifndef SMTRACE_E2E_UTIL_H
#define SMTRACE_E2E_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define E2E_REQUIRE(cond)                                                     \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: e2e program check failed: %s\n", __FILE__,      \
              __LINE__, #cond);                                               \
      MPI_Abort(MPI_COMM_WORLD, 99);                                          \
    }                                                                         \
  } while (0)

static inline int e2e_rank(MPI_Comm comm) {
  int r = -1;
  MPI_Comm_rank(comm, &r);
  return r;
}

static inline int e2e_size(MPI_Comm comm) {
  int n = -1;
  MPI_Comm_size(comm, &n);
  return n;
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE; aborts the job when the
 * library does not provide it. */
static inline void e2e_init_multiple(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "%s: MPI_THREAD_MULTIPLE not provided\n", (*argv)[0]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

#endif
