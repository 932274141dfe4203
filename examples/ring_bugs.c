/* A ring shift with two classic bugs, both silent on most runs:
 *  - each rank shifts its block to the right "in place": it receives the left
 *    neighbour's block into the very buffer its MPI_Isend may still be
 *    reading (MPI_Wait comes after), so the right neighbour may get either;
 *  - a duplicated communicator is never freed.
 * `smtrace check` reports the first as a local-concurrency error with both
 * locations and the second as a resource-leak warning.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm ring;
  MPI_Comm_dup(MPI_COMM_WORLD, &ring); /* BUG: never freed */
  MPI_Comm_rank(ring, &rank);
  MPI_Comm_size(ring, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int block[4];
  for (int i = 0; i < 4; ++i) block[i] = 10 * rank + i;
  for (int step = 0; step < 3; ++step) {
    MPI_Request req;
    MPI_Isend(block, 4, MPI_INT, right, step, ring, &req);
    /* BUG: receives into the buffer the pending send may still read. */
    MPI_Recv(block, 4, MPI_INT, left, step, ring, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  printf("rank %d: block[0] = %d\n", rank, block[0]);
  MPI_Finalize();
  return 0;
}
