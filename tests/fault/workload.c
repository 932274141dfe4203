/* The workload of the fault-injection tests (fault_test.sh): pairs of ranks
 * exchange messages and check every value, so that a tracer that changed
 * what the application computes fails the program (exit status, message).
 * Each rank prints "workload: rank R: N p2p calls" at the end: its calls of
 * MPI_Sendrecv, MPI_Send and MPI_Recv, which its trace must hold exactly.
 *
 *   workload exchange ROUNDS   Sendrecv rounds with the partner rank
 *   workload signals ROUNDS    the same under a SIGALRM every 100 us
 *                              (records are being written when it comes)
 *   workload threads T SECONDS MPI_THREAD_MULTIPLE: T threads per rank, each
 *                              exchanging with the same thread of the
 *                              partner on its own tag, for SECONDS
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "../e2e/e2e_util.h"

static int g_rank, g_size;
static volatile sig_atomic_t g_alarms;

static int partner(void) { return g_rank ^ 1; }

static long exchange(long rounds, int tag, MPI_Comm comm) {
  long calls = 0;
  for (long i = 0; i < rounds; ++i) {
    long out = 1000 * (long)g_rank + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_LONG, partner(), tag, &in, 1, MPI_LONG, partner(), tag, comm, MPI_STATUS_IGNORE);
    ++calls;
    E2E_REQUIRE(in == 1000 * (long)partner() + i);
  }
  return calls;
}

static void on_alarm(int signo) {
  (void)signo;
  ++g_alarms;
}

struct Worker {
  int tag;
  double seconds;
  MPI_Comm comm;
  long calls;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Even ranks decide when to stop (a flag in each message); odd ranks echo. */
static void* worker(void* arg) {
  struct Worker* w = arg;
  const double end = now_s() + w->seconds;
  for (long i = 0;; ++i) {
    long msg[2] = {g_rank % 2 == 0 ? (now_s() < end) : 0, 1000 * (long)w->tag + i}, in[2] = {-1, -1};
    if (g_rank % 2 == 0) {
      MPI_Send(msg, 2, MPI_LONG, partner(), w->tag, w->comm);
      MPI_Recv(in, 2, MPI_LONG, partner(), w->tag, w->comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, 2, MPI_LONG, partner(), w->tag, w->comm, MPI_STATUS_IGNORE);
      msg[0] = in[0];
      MPI_Send(msg, 2, MPI_LONG, partner(), w->tag, w->comm);
    }
    w->calls += 2;
    E2E_REQUIRE(in[1] == 1000 * (long)w->tag + i);
    if ((g_rank % 2 == 0 ? msg[0] : in[0]) == 0) break;
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "exchange";
  const int threaded = strcmp(mode, "threads") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, threaded ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  long calls = 0;
  E2E_REQUIRE(g_size % 2 == 0);
  if (strcmp(mode, "exchange") == 0 || strcmp(mode, "signals") == 0) {
    const long rounds = argc > 2 ? atol(argv[2]) : 1000;
    if (strcmp(mode, "signals") == 0) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_alarm;
      sa.sa_flags = SA_RESTART;
      sigaction(SIGALRM, &sa, NULL);
      struct itimerval every = {{0, 100}, {0, 100}};
      setitimer(ITIMER_REAL, &every, NULL);
    }
    calls += exchange(rounds, 7, MPI_COMM_WORLD);
    if (strcmp(mode, "signals") == 0) {
      struct itimerval off = {{0, 0}, {0, 0}};
      setitimer(ITIMER_REAL, &off, NULL);
      E2E_REQUIRE(g_alarms > 0);
    }
  } else if (threaded) {
    E2E_REQUIRE(provided == MPI_THREAD_MULTIPLE);
    const int threads = argc > 2 ? atoi(argv[2]) : 8;
    const double seconds = argc > 3 ? atof(argv[3]) : 3.0;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    pthread_t ids[64];
    struct Worker workers[64];
    E2E_REQUIRE(threads > 0 && threads <= 64);
    for (int t = 0; t < threads; ++t) {
      workers[t] = (struct Worker){t, seconds, comm, 0};
      pthread_create(&ids[t], NULL, worker, &workers[t]);
    }
    for (int t = 0; t < threads; ++t) {
      pthread_join(ids[t], NULL);
      calls += workers[t].calls;
    }
    MPI_Comm_free(&comm);
  } else {
    E2E_REQUIRE(!"unknown mode");
  }
  long total = 0;
  MPI_Allreduce(&calls, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  E2E_REQUIRE(total > 0);
  printf("workload: rank %d: %ld p2p calls\n", g_rank, calls);
  MPI_Finalize();
  return 0;
}
