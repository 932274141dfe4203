#include "tracer/handlers.hpp"

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <type_traits>

#include "tracer/access.hpp"
#include "tracer/clock.hpp"
#include "tracer/force.hpp"
#include "tracer/poll_fold.hpp"
#include "tracer/recorder.hpp"
#include "tracer/sites.hpp"
#include "tracer/tracer.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/content.hpp"

namespace smtrace::tracer::handlers {

using format::Call;
using format::Event;

namespace {

constexpr uint32_t k_max_fold_threads = 256;
constexpr int k_max_stack = 64;

struct Global {
  std::atomic<bool> on{false};
  std::atomic<uint32_t> families{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint32_t> next_thread{0};
  std::atomic<bool> finished{false};
  std::atomic<bool> finalized{false};       // finished by MPI_Finalize, the file closed
  std::atomic<bool> after_finalize{false};  // record_after_finalize wrote its event
  std::atomic<bool> threads{false};  // thread synchronization recorded
  std::atomic<bool> hot{false};      // hot_path()
  std::atomic<bool> timed{true};     // non-blocking calls' durations measured (timed_nonblocking)
  bool warned = false;
  format::RankHeader header;  // as written, for note_thread_sync
  Options options;
  uint32_t rank = 0;
  int64_t origin = 0;
  std::unique_ptr<Recorder> recorder;
  std::unique_ptr<SiteTable> sites;
  std::unique_ptr<std::array<PollFolder, k_max_fold_threads>> folds;
  Event access;  // the Load/Store event being written (under the lock)
};

// Never destroyed: atexit handlers and signal handlers may run after static
// destructors.
Global* g = new Global;
thread_local bool t_busy SMTRACE_FAST_TLS = false;
thread_local uint32_t t_thread SMTRACE_FAST_TLS = UINT32_MAX;

constexpr int k_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
struct sigaction g_previous[65];

// Event times: the cycle counter fitted to CLOCK_MONOTONIC (clock.hpp).
Clock g_clock;

// Return the ns from `start` to `end`, 0 when `end` reads earlier (the
// thread moved to a core whose counter is a little behind).
uint64_t elapsed(int64_t start, int64_t end) noexcept {
  return end > start ? static_cast<uint64_t>(end - start) : 0;
}

int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// stop_on_failure's work, once the recorder has failed.
[[gnu::cold, gnu::noinline]] void stop_recording() noexcept {
  if (!g->on.load(std::memory_order_relaxed)) return;
  g->on.store(false, std::memory_order_relaxed);
  g->errors.fetch_add(1, std::memory_order_relaxed);
  if (!g->warned) {
    g->warned = true;
    std::fprintf(stderr, "smtrace: warning: rank %u: %s; tracing stopped for this rank\n", g->rank,
                 g->recorder->error().c_str());
  }
}

// Stop recording after the recorder failed: one warning, the application
// goes on. Inline: every recorded call checks, after each write.
inline void stop_on_failure() noexcept {
  if (!g->recorder || g->recorder->active()) [[likely]]
    return;
  stop_recording();
}

// Run `write` holding the tracer's lock; an exception (from an
// allocation) is a counted tracer error, the lock is released either way.
template <class Write>
void under_lock(Write&& write) noexcept {
  bool locked = false;
  try {
    g->recorder->lock();
    locked = true;
    write();
    locked = false;
    g->recorder->unlock();
    stop_on_failure();
  } catch (...) {
    if (locked) g->recorder->unlock();
    count_error();
  }
}

// Fill `e.site` and `e.stack`; the lock is held.
void resolve_sites(Event& e, uintptr_t site, const void* const* frames, int nframes) {
  e.site = g->sites->id(site, *g->recorder);
  if (nframes <= 0) return;
  int i = 0;
  while (i < nframes && reinterpret_cast<uintptr_t>(frames[i]) != site) ++i;
  for (++i; i < nframes && e.stack.size() + 1 < g->options.stack_depth; ++i)
    e.stack.push_back(g->sites->id(reinterpret_cast<uintptr_t>(frames[i]), *g->recorder));
}

// flush_folds' writing, out of line: its Event is built only for a run.
[[gnu::noinline]] void write_fold_summary(PollFolder& f) {
  Event summary;
  if (f.take_summary(summary)) g->recorder->event(summary);
}

// Write the summary of folded polls of thread `tid`, if any; the lock is
// held. Inline: every recorded call asks, and nearly always there is none.
inline void flush_folds(uint32_t tid) {
  if (!g->folds || tid >= k_max_fold_threads) return;
  PollFolder& f = (*g->folds)[tid];
  if (f.active()) [[unlikely]]
    write_fold_summary(f);
}

void flush_all_folds() {
  if (!g->folds) return;
  for (uint32_t t = 0; t < k_max_fold_threads; ++t) flush_folds(t);
}

// Write a run of the load/store runtime as a LOAD or STORE event of
// thread `thread`; the lock is held.
void write_access_run(const smtrace_access_run& run, uint32_t thread) {
  Event& e = g->access;
  e.call = run.kind == smtrace_access_store ? Call::Store : Call::Load;
  e.thread = thread;
  e.t_start = run.t_start;
  e.buf = run.addr;
  e.size = run.size;
  e.count = run.count > 1 ? static_cast<int64_t>(run.count) : 0;
  e.stride = run.count > 1 ? run.stride : 0;
  e.site = g->sites->id(run.pc, *g->recorder);
  e.stack.clear();
  for (uint32_t i = 0; i < run.depth && e.stack.size() + 1 < g->options.stack_depth; ++i)
    e.stack.push_back(g->sites->id(run.stack[i], *g->recorder));
  g->recorder->event(e);
}

// Write this thread's open runs before an event of the thread; the lock is held.
void flush_access_runs() noexcept {
  access::flush_thread([](const smtrace_access_run* run, void*) { write_access_run(*run, thread_id()); }, nullptr);
}

// Write every thread's open runs as tracing ends (threads that make no MPI
// call, OpenMP workers, may hold some); return how many threads' runs could
// not be taken. The lock is held.
uint32_t flush_all_access_runs() noexcept {
  return access::flush_all(
      [](const smtrace_access_run* run, uint64_t tag, void*) {
        // A thread never tagged made no recorded event: it gets an id now.
        write_access_run(*run, tag ? static_cast<uint32_t>(tag - 1) : g->next_thread.fetch_add(1));
      },
      nullptr);
}

// Fill `frames` for resolve_sites: with the load/store runtime's shadow
// stack when this thread has one (no unwinding), else with backtrace().
int call_stack(void** frames, uintptr_t site) {
  if (g->options.stack_depth <= 1) return 0;
  uintptr_t shadow[k_max_stack];
  const std::size_t max = std::min<std::size_t>(g->options.stack_depth - 1, k_max_stack);
  if (std::size_t n = access::shadow_stack(shadow, max); n > 0) {
    frames[0] = reinterpret_cast<void*>(site);
    for (std::size_t i = 0; i < n; ++i) frames[i + 1] = reinterpret_cast<void*>(shadow[i]);
    return static_cast<int>(n + 1);
  }
  return backtrace(frames, static_cast<int>(g->options.stack_depth) + 3);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::vector<std::string> read_cmdline() {
  std::vector<std::string> argv;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

std::string read_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Create `dir` and its parents; another rank creating them at the same time is fine.
bool make_dirs(const std::string& dir, std::string& error) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      error = "cannot create directory " + path + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = dir + " is not a directory";
    return false;
  }
  return true;
}

std::string utc_now() {
  time_t t = time(nullptr);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string job_id() {
  for (const char* name : {"SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PBS_JOBID"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return {};
}

bool write_manifest(const StartInfo& info, const std::vector<std::string>& argv, std::string& error) {
  std::string command;
  if (const char* c = std::getenv("SMTRACE_COMMAND"); c && *c) {
    command = c;
  } else {
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  }
  std::ostringstream j;
  j << "{\n"
    << "  \"format_version\": " << format::k_format_version << ",\n"
    << "  \"world_size\": " << info.world_size << ",\n"
    << "  \"rank_file_pattern\": \"rank-{rank}.smt\",\n"
    << "  \"created_utc\": \"" << utc_now() << "\",\n"
    << "  \"command\": \"" << json_escape(command) << "\",\n"
    << "  \"tracer_version\": \"" << SMTRACE_VERSION << "\",\n"
    << "  \"mpi_library\": \"" << json_escape(info.mpi_library) << "\",\n"
    << "  \"job\": \"" << json_escape(job_id()) << "\"\n"
    << "}\n";
  std::string final_path = info.options.dir + "/manifest.json";
  std::string tmp = final_path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << j.str();
    if (!out.flush()) {
      error = "cannot write " + tmp;
      return false;
    }
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    error = "cannot rename " + tmp + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

void on_signal(int signo, siginfo_t*, void*) {
  int saved = errno;
  if (g->recorder && g->on.load(std::memory_order_relaxed) && !g->finished.load() && g->recorder->try_lock()) {
    // Only when the lock is free: a thread stopped inside the tracer would
    // otherwise deadlock us. No folds flushed here (they may allocate).
    if (!g->finished.exchange(true)) {
      format::Termination end;
      // Every thread's open loads and stores, as far as they can be taken.
      end.accesses_lost = flush_all_access_runs();
      end.kind = format::TerminationKind::signal;
      end.signal = signo;
      end.t = monotonic_ns() - g->origin;
      g->recorder->termination(end);
      g->recorder->seal();
    }
    g->recorder->unlock();
  }
  g->on.store(false, std::memory_order_relaxed);
  sigaction(signo, &g_previous[signo], nullptr);
  errno = saved;
  raise(signo);
}

void on_exit() {
  if (g->on.load() && !g->finished.load())
    finish(format::TerminationKind::exit_without_finalize, 0, "exit() before MPI_Finalize", true);
}

void install_handlers() {
  for (int s : k_signals) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(s, &sa, &g_previous[s]);
  }
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit(on_exit);
  }
}

}  // namespace

bool should_trace(Call call) noexcept {
  if (t_busy || !g->on.load(std::memory_order_relaxed)) return false;
  return (g->families.load(std::memory_order_relaxed) >> static_cast<unsigned>(format::call_traits(call).family)) & 1u;
}

bool tracing() noexcept { return g->on.load(std::memory_order_relaxed); }

bool family_off(Call call) noexcept {
  if (t_busy || !g->on.load(std::memory_order_relaxed)) return false;
  return !((g->families.load(std::memory_order_relaxed) >> static_cast<unsigned>(format::call_traits(call).family)) & 1u);
}

int64_t now() noexcept { return g_clock.now() - g->origin; }

uint32_t thread_id() noexcept {
  if (t_thread == UINT32_MAX) [[unlikely]] {
    t_thread = g->next_thread.fetch_add(1, std::memory_order_relaxed);
    access::set_tag(t_thread + 1ull);
  }
  return t_thread;
}

const Options& options() noexcept { return g->options; }

bool threads_tracked() noexcept { return g->threads.load(std::memory_order_relaxed); }

bool thread_tracking(ThreadTracking mode, int32_t thread_level, bool loadstore) noexcept {
  switch (mode) {
    case ThreadTracking::on: return true;
    case ThreadTracking::off: return false;
    case ThreadTracking::automatic: return loadstore || thread_level >= 2;
  }
  return false;
}

namespace {
std::atomic<bool (*)() noexcept> g_cuda_tracing{nullptr};  // set_cuda_tracing's; set before start()
}  // namespace

void set_cuda_tracing(bool (*active)() noexcept) noexcept { g_cuda_tracing.store(active); }

void count_error() noexcept { g->errors.fetch_add(1, std::memory_order_relaxed); }
uint64_t errors() noexcept { return g->errors.load(std::memory_order_relaxed); }

bool start(const StartInfo& info) {
  g->options = info.options;
  g->rank = info.rank;
  if (info.options.disable) return false;
  // The origin is the moment MPI_Init was entered, so MPI_Init starts at 0.
  int64_t real_origin = realtime_ns() - (info.clock_origin ? monotonic_ns() - info.clock_origin : 0);
  g->origin = info.clock_origin ? info.clock_origin : monotonic_ns();
  g_clock.start(info.options.counter_clock ? Clock::Source::counter : Clock::Source::monotonic);
  t_thread = 0;
  g->next_thread.store(1);
  g->finished.store(false);
  g->finalized.store(false);
  g->after_finalize.store(false);
  g->warned = false;
  g->folds = std::make_unique<std::array<PollFolder, k_max_fold_threads>>();
  g->sites = std::make_unique<SiteTable>();
  auto warn = [&](const std::string& what) {
    std::fprintf(stderr, "smtrace: warning: rank %u: %s; tracing stopped for this rank\n", info.rank, what.c_str());
    g->warned = true;
  };
  if (!info.options.problems.empty() && !info.options.quiet && info.rank == 0)
    std::fprintf(stderr, "smtrace: warning: %s\n", info.options.problems.c_str());
  std::string error;
  if (!make_dirs(info.options.dir, error)) {
    warn(error);
    return false;
  }
  auto argv = read_cmdline();
  format::RankHeader h;
  h.rank = info.rank;
  h.world_size = info.world_size;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  h.host = host;
  h.pid = static_cast<uint32_t>(getpid());
  h.mpi_library = info.mpi_library;
  h.mpi_version = info.mpi_version;
  h.clock = format::ClockKind::monotonic;
  h.clock_origin_ns = g->origin;
  h.realtime_origin_ns = real_origin;
  h.tracer_version = SMTRACE_VERSION;
  h.options = info.options.to_map();
  // The bound the invalid-argument check holds tags to (it varies by library and transport).
  if (info.tag_ub > 0) h.options["mpi.tag_ub"] = std::to_string(info.tag_ub);
  // The space each buffered send takes beyond its data (invalid-argument's bsend buffer rule).
  if (info.bsend_overhead >= 0) h.options["mpi.bsend_overhead"] = std::to_string(info.bsend_overhead);
  // What SMTRACE_CLOCK gave: times are CLOCK_MONOTONIC ns either way.
  h.options["clock.source"] = g_clock.source() == Clock::Source::counter ? "counter" : "monotonic";
  if (g_clock.source() == Clock::Source::counter)
    h.options["clock.counter_hz"] = std::to_string(static_cast<uint64_t>(g_clock.counter_hz()));
  // Loads and stores (family annotate) when the program has the load/store
  // runtime (compiled by smtrace-cc): noted in the header, so that a reader
  // can tell "no access recorded" from "accesses not captured".
  if (info.options.records(format::Family::annotate) &&
      access::attach(std::max<uint32_t>(info.options.stack_depth, 1) - 1)) {
    h.options["loadstore"] = "on";
    access::set_tag(1);  // this thread, id 0
  }
  // No CUDA call traced on this rank (CUPTI not built, not subscribed, or
  // switched off before MPI_Init): said in the header, so that the
  // cuda-mpi-race check can skip the rank.
  if (bool (*active)() noexcept = g_cuda_tracing.load(); !active || !active())
    h.options[std::string(format::k_cuda_option)] = std::string(format::k_cuda_untraced);
  if (info.before_init) h.options[std::string(format::k_started_option)] = std::string(format::k_started_before_init);
  h.executable = read_exe();
  h.argv = argv;
  h.thread_level = info.thread_level;
  h.chunk_bytes = info.options.chunk_bytes;
  // One clock reading per non-blocking call where nothing reads its
  // duration (timed_nonblocking): said in the header, so that a reader
  // knows their duration 0 means "not measured".
  g->timed.store(timed_nonblocking(info.thread_level), std::memory_order_relaxed);
  if (!g->timed.load(std::memory_order_relaxed)) h.options["durations"] = "blocking";
  // Thread synchronization (tracer/threads.cpp). RankHeader.thread_sync
  // stays 0 until the first event of a kind is recorded (record_event).
  const bool threads = info.options.records(format::Family::thread) &&
                       thread_tracking(info.options.threads, info.thread_level, h.options.count("loadstore") > 0);
  g->header = h;
  if (info.rank == 0 && !write_manifest(info, argv, error)) {
    count_error();
    if (!info.options.quiet) std::fprintf(stderr, "smtrace: warning: rank 0: %s\n", error.c_str());
  }
  g->recorder = std::make_unique<Recorder>();
  std::string path = info.options.dir + "/" + format::rank_file_name(info.rank);
  if (!g->recorder->open(path, h, info.options.chunk_bytes)) {
    access::detach();
    warn(g->recorder->error());
    return false;
  }
  {
    format::CommDef world;
    world.id = format::k_comm_world;
    for (uint32_t r = 0; r < info.world_size; ++r) world.world_ranks.push_back(r);
    format::CommDef self;
    self.id = format::k_comm_self;
    self.world_ranks = {info.rank};
    g->recorder->lock();
    g->recorder->comm(world);
    g->recorder->comm(self);
    // Not the program's thread (threads.cpp's pthread_create: inside the tracer).
    Untraced quiet;
    if (info.options.grow_ahead) g->recorder->start_grow_ahead();
    g->recorder->unlock();
  }
  if (g->options.stack_depth > 1) {  // backtrace() loads libgcc on first use: not inside a signal or the lock
    void* frames[4];
    backtrace(frames, 4);
  }
  g->families.store(info.options.families);
  g->threads.store(threads);
  force::start(info.options.force, info.rank);
  g->hot.store(info.options.stack_depth <= 1 && !access::attached() && !force::armed());
  g->on.store(true);
  stop_on_failure();
  if (info.install_handlers) install_handlers();
  return g->on.load();
}

void record_init(Call call, uintptr_t site, int64_t t0) {
  if (!g->on.load()) return;
  Event init;
  init.call = call;
  init.t_start = t0 - g->origin;  // t0 was read while the origin was still 0
  init.duration = elapsed(init.t_start, now());
  g->recorder->lock();
  init.thread = 0;
  resolve_sites(init, site, nullptr, 0);
  g->recorder->event(init);
  g->recorder->unlock();
  stop_on_failure();
}

void finish(format::TerminationKind kind, int32_t signal, const std::string& message, bool close) {
  if (!g->recorder || g->finished.exchange(true)) return;
  uint64_t errs = g->errors.load();
  g->recorder->lock();
  flush_access_runs();
  // Other threads' runs: written at their last event or exit, except what
  // threads still running hold (OpenMP workers make no MPI call).
  const uint32_t lost = flush_all_access_runs();
  flush_all_folds();
  if (errs > 0) g->recorder->note(format::TracerNote{now(), std::to_string(errs) + " tracer errors"});
  if (lost > 0)
    g->recorder->note(format::TracerNote{
        now(), std::to_string(lost) + " threads were inside the load/store runtime as tracing ended: their last "
                                      "accesses may be missing"});
  format::Termination end;
  end.accesses_lost = lost;
  end.kind = kind;
  end.signal = signal;
  end.t = now();
  end.message = message;
  g->recorder->termination(end);
  if (close) g->recorder->close();
  else g->recorder->seal();
  g->recorder->unlock();
  g->finalized.store(close && kind == format::TerminationKind::finalized);
  g->on.store(false);
  g->threads.store(false);
  access::detach();
  if (errs > 0 && !g->options.quiet)
    std::fprintf(stderr, "smtrace: rank %u: %llu tracer errors while recording\n", g->rank,
                 static_cast<unsigned long long>(errs));
}

namespace {
// The event of call `call` made outside MPI's life (before MPI_Init, after
// MPI_Finalize): its call, thread and time, no arguments.
Event outside_event(Call call, bool pending) noexcept {
  Event e;
  e.call = call;
  e.thread = thread_id();
  e.t_start = now();
  e.pending = pending;
  return e;
}
}  // namespace

void record_before_init(Call call, uintptr_t site) noexcept {
  if (!g->on.load()) return;
  Event e = outside_event(call, true);
  void* frames[k_max_stack + 4];
  const int n = call_stack(frames, site);
  under_lock([&] {
    resolve_sites(e, site, frames, n);
    g->recorder->event(e);
  });
  finish(format::TerminationKind::exit_without_finalize, 0,
         std::string(format::call_name(call)) + " called before MPI_Init: the MPI library ends the process there",
         true);
}

bool record_after_finalize(Call call, uintptr_t site) noexcept {
  if (!g->recorder || !g->finalized.load() || g->after_finalize.exchange(true)) return false;
  bool written = false;
  Event e = outside_event(call, false);
  void* frames[k_max_stack + 4];
  const int n = call_stack(frames, site);
  under_lock([&] {
    if (!g->recorder->reopen()) return;
    resolve_sites(e, site, frames, n);
    g->recorder->event(e);
    written = g->recorder->active();
    g->recorder->close();
  });
  return written;
}

void reset_for_tests() {
  if (g->recorder && !g->finished.load()) {
    g->recorder->lock();
    g->recorder->close();
    g->recorder->unlock();
  }
  g->on.store(false);
  g->finished.store(true);
  g->errors.store(0);
  access::detach();
}

void note(const std::string& message) {
  if (!g->on.load(std::memory_order_relaxed)) return;
  g->recorder->lock();
  g->recorder->note(format::TracerNote{now(), message});
  g->recorder->unlock();
  stop_on_failure();
}

void define_comm(const format::CommDef& comm) {
  if (!g->on.load(std::memory_order_relaxed)) return;
  g->recorder->lock();
  g->recorder->comm(comm);
  g->recorder->unlock();
  stop_on_failure();
}

void define_datatype(const format::DatatypeDef& type) {
  if (!g->on.load(std::memory_order_relaxed)) return;
  g->recorder->lock();
  g->recorder->datatype(type);
  g->recorder->unlock();
  stop_on_failure();
}

void on_access_run(const smtrace_access_run& run) noexcept {
  if (!g->on.load(std::memory_order_relaxed)) return;
  // Inside the tracer while the lock is held: a signal handler's sem_post
  // on this thread must not record (tracer/threads.cpp).
  Untraced untraced;
  under_lock([&] {
    flush_folds(thread_id());
    write_access_run(run, thread_id());
  });
}

bool in_wrapper() noexcept { return t_busy; }

Untraced::Untraced() noexcept : m_was(t_busy) { t_busy = true; }
Untraced::~Untraced() { t_busy = m_was; }

uint32_t reserve_thread_id() noexcept {
  if (!g->on.load(std::memory_order_relaxed)) return UINT32_MAX;
  return g->next_thread.fetch_add(1, std::memory_order_relaxed);
}

void adopt_thread_id(uint32_t id) noexcept {
  if (id == UINT32_MAX) return;
  t_thread = id;
  access::set_tag(id + 1ull);
}

namespace {
// Add `bits` to RankHeader.thread_sync, in the file too; the lock is held.
// Before the event is written: a rank killed in between has a header that
// promises more than its events hold, never less.
void note_thread_sync(uint32_t bits) {
  if ((g->header.thread_sync & bits) == bits) return;
  g->header.thread_sync |= bits;
  if (!g->recorder->rewrite_header(g->header)) count_error();
}

// Write `e` (a thread-family event of this thread) under the lock.
uint64_t write_thread_event(Event& e, uintptr_t site, uint32_t bits) noexcept {
  if (!g->on.load(std::memory_order_relaxed)) return 0;
  uint64_t seq = 0;
  void* frames[k_max_stack + 4];
  const int n = call_stack(frames, site);
  under_lock([&] {
    note_thread_sync(bits);
    flush_access_runs();
    flush_folds(e.thread);
    resolve_sites(e, site, frames, n);
    seq = g->recorder->event(e);
  });
  return seq;
}
}  // namespace

uint64_t record_event(Event& e, uintptr_t site, uint32_t bits) noexcept {
  e.thread = thread_id();
  e.pending = false;
  return write_thread_event(e, site, bits);
}

uint64_t record_entry(Event& e, uintptr_t site, uint32_t bits) noexcept {
  e.thread = thread_id();
  e.pending = true;
  return write_thread_event(e, site, bits);
}

void record_exit(uint64_t seq, Event& e, int64_t t_end) noexcept {
  if (!g->on.load(std::memory_order_relaxed)) return;
  e.pending = false;
  e.duration = elapsed(e.t_start, t_end);
  try {
    g->recorder->lock();
    // What this thread accessed while it waited (tasks run in a barrier).
    flush_access_runs();
    // `e` keeps its resolved site and stack: rewrite_last re-encodes it as it is.
    if (!g->recorder->rewrite_last(seq, e)) {
      Event end;
      end.duration = e.duration;
      end.rc = e.rc;
      g->recorder->completion(seq, end);
    }
    g->recorder->unlock();
    stop_on_failure();
  } catch (...) {
    count_error();
  }
}


uint32_t site_id(uintptr_t address) noexcept {
  if (!g->on.load(std::memory_order_relaxed) || !g->sites) return 0;
  uint32_t id = 0;
  try {
    g->recorder->lock();
    id = g->sites->id(address, *g->recorder);
  } catch (...) {
    count_error();
  }
  g->recorder->unlock();
  stop_on_failure();
  return id;
}

void on_annotate(Call call, uintptr_t address, uint64_t size, uintptr_t site) noexcept {
  if (!should_trace(call)) return;
  CallScope s(call, site);
  s.e.buf = address;
  s.e.size = size;
  s.enter();
  s.leave(0);
}

void record_buffer_modified(uint64_t request, uint64_t address, uint64_t size, uintptr_t site) noexcept {
  if (!g->on.load(std::memory_order_relaxed) ||
      !((g->families.load(std::memory_order_relaxed) >> static_cast<unsigned>(format::Family::annotate)) & 1u))
    return;
  try {
    Event e;
    e.call = Call::Buffer_modified;
    e.thread = thread_id();
    e.t_start = now();
    e.buf = address;
    e.size = size;
    e.request = request;
    void* frames[k_max_stack + 4];
    const int n = call_stack(frames, site);
    under_lock([&] {
      flush_access_runs();
      flush_folds(e.thread);
      resolve_sites(e, site, frames, n);
      g->recorder->event(e);
    });
  } catch (...) {
    count_error();
  }
}

namespace {
thread_local uintptr_t t_site SMTRACE_FAST_TLS = 0;

// Fold a blocking call's outputs (what the wrappers put in out()) into its
// entry, for Recorder::rewrite_last.
void merge_outputs(Event& e, const Event& end) {
  if (end.status != format::Status{}) e.status = end.status;
  if (!end.completed.empty()) e.completed = end.completed;
  if (end.flag) e.flag = end.flag;
  if (end.request) e.request = end.request;
  if (end.new_comm) e.new_comm = end.new_comm;
  if (end.new_datatype) e.new_datatype = end.new_datatype;
  if (end.window) e.window = end.window;
  if (end.win_base) e.win_base = end.win_base;
  if (end.win_size) e.win_size = end.win_size;
  if (end.disp_unit) e.disp_unit = end.disp_unit;
  if (end.message) e.message = end.message;
  if (end.buf) e.buf = end.buf;
  if (end.size) e.size = end.size;
  if (end.count) e.count = end.count;
}
}

namespace {
struct EventSlots {
  Event input;
  Event output;
};
// Per thread (fast_thread_local: constructed on the thread's first traced call).
EventSlots& slots() noexcept { return fast_thread_local<EventSlots>(); }

// Reset `e` to a default Event, keeping the capacity of the vectors the hot
// calls use.
Event& recycle(Event& e) noexcept {
  auto stack = std::move(e.stack);
  auto requests = std::move(e.requests);
  auto completed = std::move(e.completed);
  std::destroy_at(&e);  // cheaper than move-assigning a whole Event
  std::construct_at(&e);
  stack.clear();
  requests.clear();
  completed.clear();
  e.stack = std::move(stack);
  e.requests = std::move(requests);
  e.completed = std::move(completed);
  return e;
}
}  // namespace

CallScope::CallScope(Call call, uintptr_t site) noexcept : e(recycle(slots().input)), m_end(slots().output) {
  t_busy = true;
  e.call = call;
  t_site = site;
  m_blocking = format::call_traits(call).blocks;
}

CallScope::~CallScope() { t_busy = false; }

Event& CallScope::out() noexcept {
  if (!m_blocking) return e;
  if (!m_end_used) recycle(m_end);  // only calls with outputs pay for the reset
  m_end_used = true;
  return m_end;
}

void CallScope::set_status(const format::Status& status) noexcept {
  if (m_blocking) m_status = status;
  else e.status = status;
}

namespace {
uint64_t write_event(Event& e) { return g->recorder->event(e); }
template <format::HotGroups G>
uint64_t write_event(format::HotEvent& e) { return g->recorder->hot_event<G>(e); }

// Write a non-blocking call's complete event `e` (the lock held), or, when
// it is an unsuccessful poll and polls fold, count it in this thread's run
// of equal polls: after the thread's load/store runs and earlier folds, as
// every record. E: Event (CallScope) or HotEvent (HotScope, with its
// groups G).
template <format::HotGroups G = format::HotGroups{}, class E>
void write_or_fold(E& e, bool unsuccessful_poll) {
  PollFolder* f = unsuccessful_poll && g->options.fold_polls && e.thread < k_max_fold_threads && g->folds
                      ? &(*g->folds)[e.thread]
                      : nullptr;
  const uint64_t key = f ? poll_key(e) : 0;
  if (f && f->fold(e, key)) return;
  flush_access_runs();
  flush_folds(e.thread);
  if constexpr (std::is_same_v<E, Event>) write_event(e);
  else write_event<G>(e);
  if (f) f->start(e, key);
}
}  // namespace

void CallScope::enter() noexcept {
  m_entered = true;
  e.thread = thread_id();
  e.t_start = now();
  if (!m_blocking || !g->on.load(std::memory_order_relaxed)) return;
  try {
    void* frames[k_max_stack + 4];
    int n = call_stack(frames, t_site);
    e.pending = true;
    g->recorder->lock();
    flush_access_runs();
    flush_folds(e.thread);
    resolve_sites(e, t_site, frames, n);
    m_pending_seq = g->recorder->event(e);
    g->recorder->unlock();
    stop_on_failure();
  } catch (...) {
    count_error();
  }
}

void CallScope::leave(int rc) noexcept {
  // A non-blocking call's end is read only where its duration is (one
  // counter read per call instead of two: timed_nonblocking).
  const bool timed = m_blocking || g->timed.load(std::memory_order_relaxed);
  int64_t t_end = timed ? now() : 0;
  if (!m_entered || !g->on.load(std::memory_order_relaxed)) return;
  try {
    if (m_blocking) {
      uint64_t duration = elapsed(e.t_start, t_end);
      if (m_end_used) merge_outputs(e, m_end);
      if (m_status != format::Status{}) e.status = m_status;
      e.pending = false;
      e.duration = duration;
      e.rc = rc;
      // The inputs are final since enter() (wrappers put outputs in out()
      // and set_status): a call without outputs in out() differs from its
      // entry record in pending, duration, rc and status only.
      const bool in_place = !m_end_used;
      g->recorder->lock();
      if (!(in_place && g->recorder->complete_last(m_pending_seq, duration, rc, e.status)) &&
          !g->recorder->rewrite_last(m_pending_seq, e)) {
        Event& end = out();
        end.duration = duration;
        end.rc = rc;
        if (m_status != format::Status{}) end.status = m_status;
        g->recorder->completion(m_pending_seq, end);
      }
      g->recorder->unlock();
    } else {
      e.duration = timed ? elapsed(e.t_start, t_end) : 0;
      e.rc = rc;
      void* frames[k_max_stack + 4];
      int n = call_stack(frames, t_site);
      g->recorder->lock();
      resolve_sites(e, t_site, frames, n);
      write_or_fold(e, m_unsuccessful_poll);
      g->recorder->unlock();
    }
    stop_on_failure();
  } catch (...) {
    count_error();
  }
}

bool hot_path() noexcept { return g->hot.load(std::memory_order_relaxed); }

bool timed_nonblocking(int32_t thread_level) noexcept { return thread_level == k_thread_serialized; }

template <format::HotGroups G>
HotScopeOf<G>::HotScopeOf(Call call, uintptr_t site) noexcept
    : m_site(site), m_blocking(format::call_traits(call).blocks) {
  t_busy = true;
  e.call = call;
}

template <format::HotGroups G>
HotScopeOf<G>::~HotScopeOf() {
  t_busy = false;
}

// CallScope::enter and leave with a HotEvent: the same steps in the same
// order (this thread's load/store runs and folded polls first, the site
// resolved under the lock), so the records are the same.
template <format::HotGroups G>
void HotScopeOf<G>::enter() noexcept {
  m_entered = true;
  e.thread = thread_id();
  e.t_start = now();
  if (!m_blocking || !g->on.load(std::memory_order_relaxed)) return;
  e.pending = true;
  m_request_in = e.request;
  under_lock([&] {
    flush_access_runs();
    flush_folds(e.thread);
    e.site = g->sites->id(m_site, *g->recorder);
    m_pending_seq = g->recorder->hot_event<format::entry_groups(G)>(e);
  });
  e.pending = false;
}

template <format::HotGroups G>
void HotScopeOf<G>::leave(int rc) noexcept {
  const bool timed = m_blocking || g->timed.load(std::memory_order_relaxed);
  const int64_t t_end = timed ? now() : 0;
  if (!m_entered || !g->on.load(std::memory_order_relaxed)) return;
  e.duration = timed ? elapsed(e.t_start, t_end) : 0;
  e.rc = rc;
  under_lock([&] {
    if (!m_blocking) {
      e.site = g->sites->id(m_site, *g->recorder);
      write_or_fold<G>(e, m_unsuccessful_poll);
      return;
    }
    // A call whose only outputs are duration, rc and status (Send, Recv,
    // Win_flush ...), or those and completed requests and a flag (Wait,
    // Waitall ... : entries that end with their requests): its entry with
    // those appended where the entry's encoding said they go
    // (Recorder::complete_last, no second encoding).
    // Else the entry taken back and the complete event encoded in its place,
    // else a completion.
    if (e.request == m_request_in) {
      if (e.completed.empty() && !e.flag) {
        if (g->recorder->complete_last(m_pending_seq, e.duration, rc, e.status)) return;
      } else if (format::completion_ends_entry(e) &&
                 g->recorder->complete_last(m_pending_seq, e.completed.begin(), e.completed.size(), e.flag,
                                            e.duration, rc, e.status)) {
        // A Wait's completed requests and flag, appended as well: outputs,
        // so not in the entry (set after enter), whose inputs end with its
        // requests (32) when it has none of those the encoder writes after
        // them (completion_ends_entry).
        return;
      }
    }
    if (g->recorder->rewrite_last<G>(m_pending_seq, e)) return;
    Event end;
    end.duration = e.duration;
    end.rc = rc;
    end.status = e.status;
    end.request = e.request;
    end.completed.assign(e.completed.begin(), e.completed.end());
    end.flag = e.flag;
    g->recorder->completion(m_pending_seq, end);
  });
}

// The scopes of the sets themselves (an entry's set is only the encoder's).
template class HotScopeOf<format::HotGroups{}>;
template class HotScopeOf<format::k_hot_p2p>;
template class HotScopeOf<format::k_hot_requests>;
template class HotScopeOf<format::k_hot_rma>;
template class HotScopeOf<format::k_hot_rma_sync>;

}  // namespace smtrace::tracer::handlers
