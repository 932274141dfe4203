// Handler-only cost of the tracer: CPU ns per recorded call, no MPI.
//   bench_handlers [monotonic] [hot] [noahead]
// Records Send/Recv pairs (blocking: entry record, then the complete event),
// Puts (non-blocking: one record) and halo exchanges (4 Isend, 4 Irecv and
// the Waitall of their 8 requests) into a trace under $TMPDIR, through
// handlers::HotScope (what the wrappers use for these calls while
// handlers::hot_path()) and through handlers::CallScope (every other call;
// "general"; a tracer whose HotEvent has no completed requests records the
// Waitall through CallScope in both, as its wrappers do), and prints the
// best of 5 rounds of thread CPU time per call, and the kernel's part of the
// hot figures in those rounds (page faults of the rank file's mapping). Less
// noisy than bench/tracer_overhead.sh on a shared machine, but it leaves out
// the MPI layer (handle lookups, statuses). `monotonic`: the vDSO clock
// instead of the cycle counter (SMTRACE_CLOCK=monotonic). `hot`: the
// HotScope rounds only (for a profiler; the general figures print as 0).
// `noahead`: no grow-ahead thread (SMTRACE_GROW_AHEAD=0: the zeros of each
// next segment of the file written by this thread, as before it).
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include "tracer/handlers.hpp"
namespace h = smtrace::tracer::handlers;
using smtrace::format::Call;
// What the wrappers record a Waitall of at most 16 requests through on the hot path.
template <class E>
constexpr bool k_has_completed = requires(E e) { e.completed; };
constexpr bool k_hot_completions = k_has_completed<smtrace::format::HotEvent>;
// In HotScope rounds, the scope the wrappers use for a call of groups G
// (handlers::HotScopeOf: the encoder skips the other groups' tests).
template <class Scope, smtrace::format::HotGroups G>
using KindScope = std::conditional_t<std::is_same_v<Scope, h::HotScope>, h::HotScopeOf<G>, Scope>;
static double cpu_ns() { timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec * 1e9 + ts.tv_nsec; }
// This thread's kernel time (ns), the part of cpu_ns() spent in the kernel:
// page faults of the rank file's mapping, its growth.
static double sys_ns() { rusage u; getrusage(RUSAGE_THREAD, &u); return u.ru_stime.tv_sec * 1e9 + u.ru_stime.tv_usec * 1e3; }
int main(int argc, char** argv) {
  smtrace::tracer::StartInfo info;
  const char* tmp = std::getenv("TMPDIR");
  // A directory of this process's own: runs side by side may share TMPDIR.
  info.options.dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/smtrace-bench-handlers-" + std::to_string(getpid());
  info.options.quiet = true;
  bool monotonic = false, hot_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "monotonic") monotonic = true;
    else if (std::string(argv[i]) == "hot") hot_only = true;
    else if (std::string(argv[i]) == "noahead") info.options.grow_ahead = false;
    else return std::fprintf(stderr, "usage: bench_handlers [monotonic] [hot] [noahead]\n"), 2;
  }
  info.options.counter_clock = !monotonic;
  info.install_handlers = false;
  if (!h::start(info)) return 1;
  const int n = 2000000;
  // One round of `n` Send/Recv and `n` Puts through Scope; `best` keeps the least ns per call.
  auto round = [&]<class Scope>(double (&best)[3], double (&kernel)[3]) {
    double s0 = sys_ns(), t0 = cpu_ns();
    for (int i = 0; i < n; ++i) {
      KindScope<Scope, smtrace::format::k_hot_p2p> s(i & 1 ? Call::Recv : Call::Send, 0x401000);
      s.e.comm = 0; s.e.peer = 1; s.e.tag = 0; s.e.buf = 0x7fff0000; s.e.count = 0; s.e.datatype = 4;
      s.enter();
      if (i & 1) s.set_status({1, 0, 0, false, 0});  // as the Recv wrapper does
      s.leave(0);
    }
    double t1 = cpu_ns(), s1 = sys_ns();
    for (int i = 0; i < n; ++i) {
      KindScope<Scope, smtrace::format::k_hot_rma> s(Call::Put, 0x401010);
      s.e.window = 1; s.e.peer = 1; s.e.buf = 0x7fff0000; s.e.count = 1; s.e.datatype = 7; s.e.target_disp = 0; s.e.target_count = 1; s.e.target_datatype = 7;
      s.enter();
      s.leave(0);
    }
    double t2 = cpu_ns(), s2 = sys_ns();
    using WaitScope = std::conditional_t<std::is_same_v<Scope, h::HotScope> && k_hot_completions,
                                         h::HotScopeOf<smtrace::format::k_hot_requests>, h::CallScope>;
    const int halos = n / 9;
    uint64_t next_request = 1;
    for (int i = 0; i < halos; ++i) {
      const uint64_t first = next_request;
      for (int k = 0; k < 8; ++k) {
        KindScope<Scope, smtrace::format::k_hot_requests> s(k < 4 ? Call::Isend : Call::Irecv, 0x401020);
        s.e.comm = 0; s.e.peer = k & 3; s.e.tag = 0; s.e.buf = 0x7fff0000 + 4096 * k; s.e.count = 64; s.e.datatype = 4;
        s.enter();
        s.out().request = next_request++;
        s.leave(0);
      }
      WaitScope s(Call::Waitall, 0x401030);
      for (int k = 0; k < 8; ++k) s.e.requests.push_back(first + k);
      s.enter();
      for (uint32_t k = 0; k < 8; ++k)
        s.out().completed.push_back({k, first + k, k < 4 ? smtrace::format::Status{}
                                                          : smtrace::format::Status{int32_t(k & 3), 0, 64, false, 0}});
      s.leave(0);
    }
    double t3 = cpu_ns(), s3 = sys_ns();
    const double per[3] = {(t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / (9.0 * halos)};
    const double sys[3] = {(s1 - s0) / n, (s2 - s1) / n, (s3 - s2) / (9.0 * halos)};
    for (int k = 0; k < 3; ++k)
      if (per[k] < best[k]) best[k] = per[k], kernel[k] = sys[k];
  };
  double hot[3] = {1e9, 1e9, 1e9}, general[3] = {1e9, 1e9, 1e9}, hot_kernel[3] = {}, general_kernel[3] = {};
  if (hot_only) general[0] = general[1] = general[2] = 0;
  for (int rep = 0; rep < 5; ++rep) {
    round.operator()<h::HotScope>(hot, hot_kernel);
    if (!hot_only) round.operator()<h::CallScope>(general, general_kernel);
  }
  h::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  std::remove((info.options.dir + "/rank-0.smt").c_str());
  std::remove((info.options.dir + "/manifest.json").c_str());
  std::remove(info.options.dir.c_str());
  std::printf("handler cpu ns/call: send/recv %.1f  put %.1f  halo %.1f  (general: send/recv %.1f  put %.1f  halo %.1f)\n",
              hot[0], hot[1], hot[2], general[0], general[1], general[2]);
  // The kernel's part of the hot figures (the same rounds).
  std::printf("of which kernel: send/recv %.1f  put %.1f  halo %.1f\n", hot_kernel[0], hot_kernel[1], hot_kernel[2]);
}
