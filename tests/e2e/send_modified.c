/* local-concurrency (2 ranks), no annotation, no smtrace-cc: rank 0 stores
 * into the buffer of a pending MPI_Isend and of a started persistent send
 * before MPI_Wait completes them: the tracer's content check sees the bytes
 * change. Fixed (argument `fixed`): it waits first; meanwhile it writes only
 * the holes of a derived datatype pending in another MPI_Isend and sends
 * one buffer twice at once, without writes: all clean. Both: stores into
 * the buffers of a pending Isend and Irecv with MPI_PROC_NULL as peer (a
 * basic and a derived type): such a communication has no effect and leaves
 * the buffer alone (MPI-4.0 3.10), not a conflict. */
#include <string.h>

#include "e2e_util.h"

enum { n = 256 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  int buf[n], other[n], strided[2 * n];
  MPI_Datatype every_other;
  MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  if (rank == 0) {
    for (int i = 0; i < n; ++i) buf[i] = i, other[i] = i;
    for (int i = 0; i < 2 * n; ++i) strided[i] = i;
    MPI_Request request;
    MPI_Isend(buf, n, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    if (fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);
    buf[7] = -7; /* bug: the send may still read buf */
    if (!fixed) MPI_Wait(&request, MPI_STATUS_IGNORE);

    MPI_Request persistent;
    MPI_Send_init(other, n, MPI_INT, 1, 1, MPI_COMM_WORLD, &persistent);
    MPI_Start(&persistent);
    if (fixed) MPI_Wait(&persistent, MPI_STATUS_IGNORE);
    other[0] = 100; /* bug: the started send may still read it */
    if (!fixed) MPI_Wait(&persistent, MPI_STATUS_IGNORE);
    MPI_Start(&persistent); /* other[0] written between the operations: fine */
    MPI_Wait(&persistent, MPI_STATUS_IGNORE);
    MPI_Request_free(&persistent);

    MPI_Request two[3];
    MPI_Isend(strided, 1, every_other, 1, 2, MPI_COMM_WORLD, &two[0]);
    for (int i = 1; i < 2 * n; i += 2) strided[i] = -i; /* the holes: not the send's */
    MPI_Isend(buf, n, MPI_INT, 1, 3, MPI_COMM_WORLD, &two[1]);
    MPI_Isend(buf, n, MPI_INT, 1, 4, MPI_COMM_WORLD, &two[2]); /* the same buffer, read twice */
    MPI_Waitall(3, two, MPI_STATUSES_IGNORE);
    E2E_REQUIRE(buf[7] == -7 && other[0] == 100 && strided[1] == -1);

    MPI_Request null_peer[3];
    MPI_Isend(buf, n, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &null_peer[0]);
    MPI_Isend(strided, 1, every_other, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &null_peer[1]);
    MPI_Irecv(other, n, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &null_peer[2]);
    buf[1] = 1;
    strided[0] = 1;
    other[1] = 1;
    MPI_Waitall(3, null_peer, MPI_STATUSES_IGNORE);
  } else {
    MPI_Recv(buf, n, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(other, n, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(other, n, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buf, n, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buf, n, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buf, n, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Type_free(&every_other);
  MPI_Finalize();
  return 0;
}
