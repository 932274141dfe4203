/* thread-level (2 ranks): MPI calls that the provided thread level forbids.
 *   funneled          MPI_THREAD_FUNNELED; a second thread of rank 0 sends
 *                     (error: only the main thread may call MPI)
 *   funneled_fixed    the second thread computes, the main thread sends
 *   serialized        MPI_THREAD_SERIALIZED; threads A and B of rank 0 each
 *                     call MPI_Sendrecv, and rank 1 answers each only after
 *                     it received both sends: neither call can return before
 *                     the other started, so they always overlap (error: two
 *                     threads inside MPI at once)
 *   serialized_fixed  the same calls from two threads, serialized by
 *                     pthread_join: B sends and ends before A receives */
#include <pthread.h>
#include <string.h>

#include "e2e_util.h"

static int g_value;

static void* send_to_1(void* arg) {
  (void)arg;
  int v = 42;
  MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  return NULL;
}

static void* recv_from_1(void* arg) {
  (void)arg;
  MPI_Recv(&g_value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

// Thread `arg` (0: A, 1: B) of the serialized case.
static void* sendrecv(void* arg) {
  const int b = (int)(long)arg;
  int v = 42;
  MPI_Sendrecv(&v, 1, MPI_INT, 1, b ? 0 : 2, b ? &v : &g_value, 1, MPI_INT, 1, b ? 3 : 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  return NULL;
}

static void* compute(void* arg) {
  (void)arg;
  g_value = 42;
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "funneled";
  const int funneled = strncmp(mode, "funneled", 8) == 0;
  const int fixed = strstr(mode, "_fixed") != NULL;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED, &provided);
  E2E_REQUIRE(provided >= (funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED));
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  if (rank == 1) {
    int v = 0;
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(v == 42);
    if (!funneled && !fixed) {
      int w = 0;
      MPI_Recv(&w, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }
    if (!funneled) MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  } else if (funneled) {
    pthread_t t;
    E2E_REQUIRE(pthread_create(&t, NULL, fixed ? compute : send_to_1, NULL) == 0);
    pthread_join(t, NULL);
    if (fixed) MPI_Send(&g_value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (!fixed) {
    pthread_t a, b;
    E2E_REQUIRE(pthread_create(&a, NULL, sendrecv, (void*)0L) == 0);
    E2E_REQUIRE(pthread_create(&b, NULL, sendrecv, (void*)1L) == 0);
    pthread_join(b, NULL);
    pthread_join(a, NULL);
    E2E_REQUIRE(g_value == 42);
  } else {
    pthread_t a, b;
    E2E_REQUIRE(pthread_create(&b, NULL, send_to_1, NULL) == 0);
    pthread_join(b, NULL);
    E2E_REQUIRE(pthread_create(&a, NULL, recv_from_1, NULL) == 0);
    pthread_join(a, NULL);
    E2E_REQUIRE(g_value == 42);
  }
  MPI_Finalize();
  return 0;
}
