/* Erroneous arguments of calls that create handles, and of some RMA and
 * datatype calls (2 ranks); Open MPI's default error handler ends the job
 * inside each, which the tracer wrote on entry, and `check` names the
 * argument. Modes (argv[1]), each with a `_fixed` twin that passes the
 * right value:
 *   win_size   MPI_Win_create with size -4
 *   cart       MPI_Cart_create of a grid of 4 ranks over MPI_COMM_WORLD
 *   split      MPI_Comm_split with color -5 (neither >= 0 nor MPI_UNDEFINED)
 *   vector     MPI_Type_vector with blocklength -1
 *   alltoall   MPI_Alltoall with sendcount -1 (named as given, not times
 *              the ranks)
 *   lock_type  MPI_Win_lock with lock type 7
 *   assert     MPI_Win_fence with an assert bit no MPI_MODE_* constant has
 *   commit     MPI_Type_commit of MPI_DATATYPE_NULL
 *   put_count  MPI_Put with target count -1
 *   neighbor   MPI_Neighbor_allgather on MPI_COMM_WORLD, which has no
 *              virtual topology (the twin: on a periodic ring of 2) */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "win_size";
  const int fixed = strstr(mode, "_fixed") != NULL;
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int cells[4] = {0, 0, 0, 0}, got[4];
  if (strncmp(mode, "win_size", 8) == 0) {
    MPI_Win win;
    MPI_Win_create(cells, fixed ? (MPI_Aint)sizeof cells : -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win); /* bug */
    MPI_Win_free(&win);
  } else if (strncmp(mode, "cart", 4) == 0) {
    int dims[1] = {fixed ? 2 : 4}, periods[1] = {0};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart); /* bug: 4 ranks of 2 */
    MPI_Comm_free(&cart);
  } else if (strncmp(mode, "split", 5) == 0) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, fixed ? 0 : -5, 0, &half); /* bug: color -5 */
    MPI_Comm_free(&half);
  } else if (strncmp(mode, "vector", 6) == 0) {
    MPI_Datatype pairs;
    MPI_Type_vector(2, fixed ? 1 : -1, 2, MPI_INT, &pairs); /* bug: blocklength -1 */
    MPI_Type_free(&pairs);
  } else if (strncmp(mode, "alltoall", 8) == 0) {
    MPI_Alltoall(cells, fixed ? 1 : -1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD); /* bug: sendcount -1 */
  } else if (strncmp(mode, "lock_type", 9) == 0 || strncmp(mode, "assert", 6) == 0 ||
             strncmp(mode, "put_count", 9) == 0) {
    MPI_Win win;
    MPI_Win_create(cells, sizeof cells, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (mode[0] == 'a') {
      MPI_Win_fence(fixed ? MPI_MODE_NOPRECEDE : 1 << 20, win); /* bug: no such assert */
      MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    } else if (e2e_rank(MPI_COMM_WORLD) == 0) {
      MPI_Win_lock(mode[0] == 'l' && !fixed ? 7 : MPI_LOCK_SHARED, 1, 0, win); /* bug: lock type 7 */
      MPI_Put(cells, 1, MPI_INT, 1, 0, mode[0] == 'p' && !fixed ? -1 : 1, MPI_INT, win); /* bug: count -1 */
      MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
  } else if (strncmp(mode, "neighbor", 8) == 0) {
    MPI_Comm ring = MPI_COMM_WORLD;
    int dims[1] = {2}, periods[1] = {1};
    if (fixed) MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Neighbor_allgather(cells, 1, MPI_INT, got, 1, MPI_INT, ring); /* bug: no topology */
    if (fixed) MPI_Comm_free(&ring);
  } else if (strncmp(mode, "commit", 6) == 0) {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (fixed) MPI_Type_contiguous(2, MPI_INT, &type);
    MPI_Type_commit(&type); /* bug: MPI_DATATYPE_NULL */
    MPI_Type_free(&type);
  } else {
    E2E_REQUIRE(!"unknown mode");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
