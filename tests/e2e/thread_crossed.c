/* Messages of one channel (communicator, sender, receiver) whose receives
 * or sends two threads post with nothing to order them, under
 * MPI_THREAD_MULTIPLE (2 ranks). MPI-3.1 section 3.5: such operations are
 * logically concurrent, so the two messages can match the two receives in
 * either order; here the other order truncates a message.
 *   recv        rank 0's threads A and B receive from rank 1 with tag 7,
 *               A room for 1 int, B (after a sleep) for 2; rank 1 sends
 *               1 int, then 2 (error: B's message can go to A)
 *   recv_fixed  the same, B receiving only after a pthread barrier that
 *               A reaches after its receive
 *   send        rank 1's threads A and B send 1 int and (after a sleep)
 *               2 ints with tag 7; rank 0 receives 1 int, then 2
 *               (error: B's message can arrive first)
 *   send_fixed  the same, B sending after a barrier A reaches after its
 *               send
 *   same        the recv shape with room for 2 ints in both receives
 *               (either order fits: clean) */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

static int g_fixed, g_same, g_sends;
static pthread_barrier_t g_barrier;

static void* run(void* arg) {
  const int b = (int)(long)arg;
  int buf[2] = {0, 0};
  if (b && !g_fixed) usleep(50000);
  if (b && g_fixed) pthread_barrier_wait(&g_barrier);
  if (g_sends) {
    buf[0] = 10 + b;
    buf[1] = 20;
    MPI_Send(buf, b + 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  } else {
    MPI_Recv(buf, g_same ? 2 : b + 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(buf[0] == 10 + b);
  }
  if (!b && g_fixed) pthread_barrier_wait(&g_barrier);
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "recv";
  g_fixed = strstr(mode, "_fixed") != NULL;
  g_same = strcmp(mode, "same") == 0;
  g_sends = strncmp(mode, "send", 4) == 0;
  e2e_init_multiple(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);
  const int threaded = g_sends ? rank == 1 : rank == 0;
  if (threaded) {
    pthread_barrier_init(&g_barrier, NULL, 2);
    pthread_t t[2];
    for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, run, (void*)i);
    for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_barrier);
  } else if (g_sends) {
    int buf[2] = {0, 0};
    MPI_Recv(buf, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(buf[0] == 10);
    MPI_Recv(buf, 2, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    E2E_REQUIRE(buf[0] == 11);
  } else {
    int one = 10, two[2] = {11, 20};
    MPI_Send(&one, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    MPI_Send(two, 2, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
