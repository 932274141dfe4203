/* Erroneous arguments of calls that create handles (2 ranks); Open MPI's
 * default error handler ends the job inside each, which the tracer wrote
 * on entry, and `check` names the argument. Modes (argv[1]), each with a
 * `_fixed` twin that passes the right value:
 *   win_size   MPI_Win_create with size -4
 *   cart       MPI_Cart_create of a grid of 4 ranks over MPI_COMM_WORLD
 *   split      MPI_Comm_split with color -5 (neither >= 0 nor MPI_UNDEFINED)
 *   vector     MPI_Type_vector with blocklength -1
 *   alltoall   MPI_Alltoall with sendcount -1 (named as given, not times
 *              the ranks) */
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
  } else {
    E2E_REQUIRE(!"unknown mode");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
