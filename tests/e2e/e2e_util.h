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

#endif
