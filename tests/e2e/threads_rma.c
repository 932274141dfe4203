/* Hybrid MPI + pthreads, rma-race within a rank (2 ranks, built with
 * smtrace-cc): rank 1 puts into rank 0's window in a lock epoch and then
 * sends rank 0 a token. On rank 0 one thread receives the token while
 * another stores into the same window memory.
 *   (no argument)  the storing thread does not wait for the token: its
 *                  store races the put (a single program order per rank,
 *                  in which the store is written after the receive, hides
 *                  it)
 *   fixed          the storing thread waits on a condition variable the
 *                  receiving thread signals after the receive
 *   fixed_join     the main thread joins the receiving thread before it
 *                  starts the storing one */
#include <pthread.h>
#include <string.h>

#include "e2e_util.h"

enum { N = 16 };

static int* g_window;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ready_cond = PTHREAD_COND_INITIALIZER;
static int g_ready;
static int g_wait;

static void* receive(void* arg) {
  (void)arg;
  int token = 0;
  MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  E2E_REQUIRE(token == 42);
  pthread_mutex_lock(&g_lock);
  g_ready = 1;
  pthread_cond_signal(&g_ready_cond);
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

static void* store(void* arg) {
  (void)arg;
  if (g_wait) {
    pthread_mutex_lock(&g_lock);
    while (!g_ready) pthread_cond_wait(&g_ready_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
  }
  for (int i = 0; i < N; ++i) g_window[i] = -1;
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  E2E_REQUIRE(provided == MPI_THREAD_MULTIPLE);
  const char* mode = argc > 1 ? argv[1] : "";
  g_wait = strcmp(mode, "fixed") == 0;
  const int join_first = strcmp(mode, "fixed_join") == 0;
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  MPI_Win win;
  MPI_Win_allocate(sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &g_window, &win);
  for (int i = 0; i < N; ++i) g_window[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 1) {
    int values[N];
    for (int i = 0; i < N; ++i) values[i] = 100 + i;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(values, N, MPI_INT, 0, 0, N, MPI_INT, win);
    MPI_Win_unlock(0, win);
    const int token = 42;
    MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  } else {
    pthread_t receiver, storer;
    E2E_REQUIRE(pthread_create(&receiver, NULL, receive, NULL) == 0);
    if (join_first) pthread_join(receiver, NULL);
    E2E_REQUIRE(pthread_create(&storer, NULL, store, NULL) == 0);
    if (!join_first) pthread_join(receiver, NULL);
    pthread_join(storer, NULL);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
