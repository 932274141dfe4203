/* thread-level judged on the order thread synchronization gives (2 ranks),
 * not on the run's timing:
 *   serialized        MPI_THREAD_SERIALIZED; threads A and B of each rank
 *                     call MPI_Sendrecv_replace in turn with the other rank,
 *                     A with tag 0, B with tag 1, and B starts only after a
 *                     sleep, so the calls rarely overlap in time; nothing
 *                     orders them (error: MPI-3.1 section 12.4.3 asks the
 *                     program to serialize its calls)
 *   serialized_fixed  the same calls under one mutex
 *   collective        MPI_THREAD_MULTIPLE; threads A and B of each rank call
 *                     MPI_Allreduce on MPI_COMM_WORLD, B after a sleep; the
 *                     order of the two, and so which one matches which on
 *                     the other rank, is left to chance (error: MPI-3.1
 *                     section 12.4.2)
 *   collective_fixed  A and B on two duplicates of MPI_COMM_WORLD, and a
 *                     third pair on MPI_COMM_WORLD ordered by a
 *                     pthread_barrier_wait */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

static int g_fixed, g_collective, g_rank;
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t g_barrier;
static MPI_Comm g_comm[2];

static void* run(void* arg) {
  const int b = (int)(long)arg;
  if (b) usleep(50000);
  if (g_collective) {
    int v = 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, g_fixed ? g_comm[b] : MPI_COMM_WORLD);
    if (g_fixed) {
      if (b) pthread_barrier_wait(&g_barrier);
      if (!b) MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      if (!b) pthread_barrier_wait(&g_barrier);
      if (b) MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    return NULL;
  }
  int v = b;
  for (int i = 0; i < 4; ++i) {
    if (g_fixed) pthread_mutex_lock(&g_mutex);
    MPI_Sendrecv_replace(&v, 1, MPI_INT, 1 - g_rank, b, 1 - g_rank, b, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (g_fixed) pthread_mutex_unlock(&g_mutex);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "serialized";
  g_collective = strncmp(mode, "collective", 10) == 0;
  g_fixed = strstr(mode, "_fixed") != NULL;
  const int level = g_collective ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, level, &provided);
  E2E_REQUIRE(provided >= level);
  g_rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm[1]);
  pthread_barrier_init(&g_barrier, NULL, 2);
  pthread_t t[2];
  for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, run, (void*)i);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&g_barrier);
  MPI_Comm_free(&g_comm[0]);
  MPI_Comm_free(&g_comm[1]);
  MPI_Finalize();
  return 0;
}
