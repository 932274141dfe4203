/* MPI_THREAD_MULTIPLE (2 ranks): two threads per rank exchange messages with
 * the same thread of the other rank on a duplicated communicator, each
 * thread on its own tag. */
#include <pthread.h>

#include "e2e_util.h"

enum { ROUNDS = 50, THREADS = 2 };

static MPI_Comm g_comm;
static int g_rank;

static void* exchange(void* arg) {
  const int tag = (int)(long)arg;
  const int peer = 1 - g_rank;
  for (int i = 0; i < ROUNDS; ++i) {
    int out = 1000 * tag + i, in = -1;
    if (g_rank == 0) {
      MPI_Send(&out, 1, MPI_INT, peer, tag, g_comm);
      MPI_Recv(&in, 1, MPI_INT, peer, tag, g_comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&in, 1, MPI_INT, peer, tag, g_comm, MPI_STATUS_IGNORE);
      MPI_Send(&out, 1, MPI_INT, peer, tag, g_comm);
    }
    E2E_REQUIRE(in == 1000 * tag + i);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  E2E_REQUIRE(provided == MPI_THREAD_MULTIPLE);
  g_rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);

  pthread_t threads[THREADS];
  for (long t = 0; t < THREADS; ++t) E2E_REQUIRE(pthread_create(&threads[t], NULL, exchange, (void*)t) == 0);
  for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);

  MPI_Comm_free(&g_comm);
  MPI_Finalize();
  return 0;
}
