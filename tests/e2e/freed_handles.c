/* A handle used after it was freed (2 ranks): the program keeps a copy of
 * the handle, frees it, then passes the copy. Open MPI crashes inside the
 * call (comm, win, op) or goes on (group); the tracer, which keeps a freed
 * handle marked until MPI hands it out again, writes the call on entry
 * and never asks MPI about the freed handle. Modes (argv[1]), each with a
 * `_fixed` twin that frees it, makes a new one (MPI may hand out the same
 * handle value again) and uses that: it must be clean.
 *   comm   MPI_Barrier on a freed communicator
 *   win    MPI_Win_fence on a freed window
 *   op     MPI_Allreduce with a freed user op
 *   group  MPI_Comm_create with a freed group
 *   type   MPI_Bcast with a freed datatype; its twin also takes a freed
 *          type back from MPI_Type_get_contents of a type made from it
 *          (alive there, MPI-3.1 section 4.1.9; Open MPI returns the same
 *          handle) and uses that */
#include <string.h>

#include "e2e_util.h"

static void sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "comm";
  const int fixed = strstr(mode, "_fixed") != NULL;
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  if (strncmp(mode, "comm", 4) == 0) {
    MPI_Comm c, copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    copy = c;
    MPI_Comm_free(&c);
    if (fixed) {
      MPI_Comm_dup(MPI_COMM_WORLD, &copy);
      MPI_Barrier(copy);
      MPI_Comm_free(&copy);
    } else {
      MPI_Barrier(copy); /* bug: freed */
    }
  } else if (strncmp(mode, "win", 3) == 0) {
    int cell = 0;
    MPI_Win w, copy;
    MPI_Win_create(&cell, sizeof cell, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    copy = w;
    MPI_Win_free(&w);
    if (fixed) {
      MPI_Win_create(&cell, sizeof cell, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &copy);
      MPI_Win_fence(0, copy);
      MPI_Win_fence(0, copy);
      MPI_Win_free(&copy);
    } else {
      MPI_Win_fence(0, copy); /* bug: freed */
    }
  } else if (strncmp(mode, "op", 2) == 0) {
    MPI_Op op, copy;
    MPI_Op_create(sum, 1, &op);
    copy = op;
    MPI_Op_free(&op);
    int x = 1, y = 0;
    if (fixed) MPI_Op_create(sum, 1, &copy);
    MPI_Allreduce(&x, &y, 1, MPI_INT, copy, MPI_COMM_WORLD); /* bug unless fixed: freed */
    if (fixed) MPI_Op_free(&copy);
  } else if (strncmp(mode, "group", 5) == 0) {
    MPI_Group g, copy;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    copy = g;
    MPI_Group_free(&g);
    if (fixed) MPI_Comm_group(MPI_COMM_WORLD, &copy);
    MPI_Comm made;
    MPI_Comm_create(MPI_COMM_WORLD, copy, &made); /* bug unless fixed: freed */
    if (made != MPI_COMM_NULL) MPI_Comm_free(&made);
    if (fixed) MPI_Group_free(&copy);
  } else if (strncmp(mode, "type", 4) == 0) {
    MPI_Datatype t, copy;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    copy = t;
    MPI_Type_free(&t);
    int buf[4] = {0};
    if (fixed) {
      MPI_Type_contiguous(2, MPI_INT, &copy);
      MPI_Type_commit(&copy);
      MPI_Bcast(buf, 1, copy, 0, MPI_COMM_WORLD);
      MPI_Datatype pair, vec;
      MPI_Type_contiguous(2, MPI_INT, &pair);
      MPI_Type_vector(2, 1, 1, pair, &vec);
      MPI_Type_free(&pair);
      int ints[3];
      MPI_Aint addrs[1];
      MPI_Datatype back[1];
      MPI_Type_get_contents(vec, 3, 0, 1, ints, addrs, back);
      MPI_Type_commit(&back[0]);
      MPI_Bcast(buf, 2, back[0], 0, MPI_COMM_WORLD);
      MPI_Type_free(&back[0]);
      MPI_Type_free(&vec);
      MPI_Type_free(&copy);
    } else {
      MPI_Bcast(buf, 1, copy, 0, MPI_COMM_WORLD); /* bug: freed */
    }
  }
  MPI_Finalize();
  return 0;
}
