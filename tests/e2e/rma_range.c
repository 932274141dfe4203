/* RMA calls whose target range lies outside the target's window (2 ranks):
 * the target buffer, target_count elements of target_datatype at
 * target_disp times the target's disp_unit, must fit in the target's
 * window (MPI-3.1 section 11.3, MPI_ERR_RMA_RANGE). Rank 0 makes each call
 * in a fence epoch (rput: a lock epoch). Modes (argv[1]), each with a `_fixed` twin:
 *   put    MPI_Put of 1 int at disp 4 of a window of 4 ints (the twin:
 *          disp 3, exactly at the end)
 *   get    MPI_Get of 2 ints at disp 3 (the twin: disp 2)
 *   sizes  the windows differ (rank 0 has 4 ints, rank 1 has 2): a put of
 *          4 ints to rank 0 fits, to rank 1 it does not (the twin puts 2
 *          to rank 1); under MPI_ERRORS_RETURN, so that the job ends
 *          well whether MPI rejects the put (Open MPI's osc rdma: an error
 *          code) or not
 *   allocate  the same with MPI_Win_allocate (Open MPI's osc sm tests no
 *          range: the put goes through)
 *   fetch  MPI_Fetch_and_op at disp 4 (the twin: disp 3)
 *   rput   MPI_Rput at disp -1, before the window (the twin: disp 0)
 *   dynamic  MPI_Put of 1 int just past the 4 ints rank 1 attached to a
 *          dynamic window, at the address rank 1 sent (section 11.2.4; the
 *          twin: the last attached int), under MPI_ERRORS_RETURN
 * and `edges_fixed`, correct calls at the edges: count 0 far beyond the
 * window, MPI_PROC_NULL, disp_unit 8 with the last double, a resized type
 * whose extent passes the end but whose data does not, an accumulate of
 * the last int. */
#include <string.h>

#include "e2e_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "put";
  const int fixed = strstr(mode, "_fixed") != NULL;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  int cells[4] = {0, 0, 0, 0}, got[4] = {0, 0, 0, 0}, one = 1, old = 0;
  double reals[2] = {0, 0}, real = 2.5;
  MPI_Win win;
  const int sizes = strncmp(mode, "sizes", 5) == 0 || strncmp(mode, "allocate", 8) == 0;
  const int dynamic = strncmp(mode, "dynamic", 7) == 0;
  MPI_Aint address = 0;
  if (dynamic) {
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (rank == 1) {
      MPI_Win_attach(win, cells, sizeof cells);
      MPI_Get_address(cells, &address);
      MPI_Send(&address, 1, MPI_AINT, 0, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&address, 1, MPI_AINT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (strncmp(mode, "allocate", 8) == 0) {
    int* base = NULL;
    MPI_Win_allocate((MPI_Aint)((rank == 0 ? 4 : 2) * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
  } else if (sizes) {
    MPI_Win_create(cells, (MPI_Aint)((rank == 0 ? 4 : 2) * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
  } else if (strncmp(mode, "edges", 5) == 0) {
    MPI_Win_create(reals, sizeof reals, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    MPI_Win_create(cells, sizeof cells, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  }
  if (sizes) MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  const int passive = strncmp(mode, "rput", 4) == 0;
  if (!passive) MPI_Win_fence(0, win);
  if (rank == 0) {
    if (strncmp(mode, "put", 3) == 0) {
      MPI_Put(&one, 1, MPI_INT, 1, fixed ? 3 : 4, 1, MPI_INT, win); /* bug: disp 4 of 4 ints */
    } else if (strncmp(mode, "get", 3) == 0) {
      MPI_Get(got, 2, MPI_INT, 1, fixed ? 2 : 3, 2, MPI_INT, win); /* bug: ints 3 and 4 of 4 */
    } else if (sizes) {
      MPI_Put(got, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
      MPI_Put(got, fixed ? 2 : 4, MPI_INT, 1, 0, fixed ? 2 : 4, MPI_INT, win); /* bug: rank 1 has 2 ints */
    } else if (strncmp(mode, "fetch", 5) == 0) {
      MPI_Fetch_and_op(&one, &old, MPI_INT, 1, fixed ? 3 : 4, MPI_SUM, win); /* bug: disp 4 of 4 ints */
    } else if (strncmp(mode, "rput", 4) == 0) {
      MPI_Request request;
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Rput(&one, 1, MPI_INT, 1, fixed ? 0 : -1, 1, MPI_INT, win, &request); /* bug: disp -1 */
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      MPI_Win_unlock(1, win);
    } else if (dynamic) {
      MPI_Put(&one, 1, MPI_INT, 1, MPI_Aint_add(address, (fixed ? 3 : 4) * sizeof(int)), 1, MPI_INT,
              win); /* bug: past the attached ints */
    } else if (strncmp(mode, "edges", 5) == 0) {
      MPI_Datatype wide;
      MPI_Type_create_resized(MPI_DOUBLE, 0, 64, &wide);
      MPI_Type_commit(&wide);
      MPI_Put(&real, 0, MPI_DOUBLE, 1, 1000, 0, MPI_DOUBLE, win);            /* count 0 */
      MPI_Put(&real, 1, MPI_DOUBLE, MPI_PROC_NULL, 1000, 1, MPI_DOUBLE, win); /* no target */
      MPI_Put(&real, 1, MPI_DOUBLE, 1, 1, 1, MPI_DOUBLE, win);               /* the last double */
      MPI_Put(&real, 1, MPI_DOUBLE, 0, 1, 1, wide, win);                     /* its data fits */
      MPI_Accumulate(&real, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, win);
      MPI_Type_free(&wide);
    } else {
      E2E_REQUIRE(!"unknown mode");
    }
  }
  if (!passive) MPI_Win_fence(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (dynamic && rank == 1) MPI_Win_detach(win, cells);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
