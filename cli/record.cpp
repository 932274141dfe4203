// smtrace record: run a command with libsmtrace.so injected.
//
// How the tracer reaches the ranks depends on the launcher:
// - Open MPI (mpirun, mpiexec, orterun, oshrun): ranks on other nodes get
//   only the variables named by -x, so `-x LD_PRELOAD=... -x SMTRACE_...=...`
//   go right after the launcher's name. LD_PRELOAD is NOT set for mpirun
//   itself: the launcher and its daemons need no tracer, and loading one
//   (with libmpi behind it) into them only adds risk. The SMTRACE_*
//   variables are also set in the environment, which local ranks inherit.
// - srun exports the whole environment by default, so the environment
//   carries LD_PRELOAD and SMTRACE_*.
// - Anything else (a singleton ./app, a script) gets them in the environment.
//
// The child runs in its own process group. When smtrace owns the terminal,
// that group becomes the terminal's foreground group, so a Ctrl-C reaches
// the job exactly once (mpirun treats a second SIGINT as "kill hard"); a
// SIGTERM/SIGINT/SIGHUP/SIGQUIT sent to smtrace itself (by `timeout`, a
// batch system) is forwarded to the group.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "analyzer/finding.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "cli/record.hpp"
#include "cli/summary.hpp"

#ifndef SMTRACE_INSTALL_LIBDIR
#define SMTRACE_INSTALL_LIBDIR "lib"
#endif
#ifndef SMTRACE_LIBRARY_ARCHITECTURE
#define SMTRACE_LIBRARY_ARCHITECTURE ""
#endif

extern char** environ;

namespace smtrace::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_tracer_file = "libsmtrace.so";
// Sanitizer runtimes, by file name prefix (gcc's; clang's are libclang_rt.*).
constexpr const char* k_sanitizer_runtimes[] = {"libasan.so", "libtsan.so", "libubsan.so", "liblsan.so",
                                                "libhwasan.so", "libmsan.so"};

// The child's process group, for the signal handler (which can reach no
// other state). 0 while no child runs.
volatile sig_atomic_t g_child_pgid = 0;

extern "C" void forward_signal(int signal) {
  const pid_t pgid = static_cast<pid_t>(g_child_pgid);
  if (pgid > 0) ::kill(-pgid, signal);
}

constexpr std::array<int, 4> k_forwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

fs::path find_tracer() {
  if (const char* env = std::getenv("SMTRACE_LIB"); env != nullptr && *env != '\0') {
    std::error_code ec;
    const fs::path lib = fs::absolute(env, ec);
    if (!fs::is_regular_file(lib, ec)) {
      throw Error(fmt::format("SMTRACE_LIB={}: no such file", env));
    }
    return lib;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(fmt::format("cannot find smtrace's own path (/proc/self/exe): {}", ec.message()));
  const fs::path bin = exe.parent_path();
  const fs::path prefix = bin.parent_path();
  std::vector<fs::path> candidates;
  const fs::path libdir = SMTRACE_INSTALL_LIBDIR;
  candidates.push_back(libdir.is_absolute() ? libdir / k_tracer_file : prefix / libdir / k_tracer_file);
  candidates.push_back(prefix / "lib" / k_tracer_file);
  if (std::string_view(SMTRACE_LIBRARY_ARCHITECTURE).size() > 0) {
    candidates.push_back(prefix / "lib" / SMTRACE_LIBRARY_ARCHITECTURE / k_tracer_file);
  }
  candidates.push_back(prefix / "lib64" / k_tracer_file);
  candidates.push_back(prefix / "tracer" / k_tracer_file);  // build tree: <build>/cli/smtrace
  std::string looked;
  std::vector<fs::path> tried;
  for (const fs::path& candidate : candidates) {
    const fs::path path = candidate.lexically_normal();
    if (fs::is_regular_file(path, ec)) return path;
    if (std::find(tried.begin(), tried.end(), path) != tried.end()) continue;
    tried.push_back(path);
    looked += fmt::format("\n  {}", path.string());
  }
  throw Error(fmt::format("cannot find the tracer library {}; looked in:{}\n"
                          "Set SMTRACE_LIB=/path/to/{} to name it.",
                          k_tracer_file, looked, k_tracer_file));
}

enum class Launcher { open_mpi, srun, none };

bool is_open_mpi_launcher(const std::string& word) {
  const std::string name = fs::path(word).filename().string();
  for (const char* launcher : {"mpirun", "mpiexec", "orterun", "oshrun"}) {
    // Debian's alternatives are called mpirun.openmpi etc.
    if (name == launcher || name.starts_with(std::string(launcher) + ".")) return true;
  }
  return false;
}

// The index of the Open MPI launcher word: 0 for `mpirun ...`, or a later
// word behind a wrapper that runs its arguments (`timeout 60 mpirun ...`);
// npos when there is none. Other commands (scripts, `sh -c`) are not
// searched: a word "mpirun" there may be anything.
std::size_t open_mpi_launcher_index(const std::vector<std::string>& command) {
  if (is_open_mpi_launcher(command[0])) return 0;
  const std::string first = fs::path(command[0]).filename().string();
  bool wrapper = false;
  for (const char* name : {"timeout", "env", "nice", "nohup", "stdbuf", "time", "taskset", "numactl",
                           "chrt", "ionice"}) {
    wrapper = wrapper || first == name;
  }
  if (!wrapper) return std::string::npos;
  for (std::size_t i = 1; i < command.size(); ++i) {
    if (is_open_mpi_launcher(command[i])) return i;
  }
  return std::string::npos;
}

struct ChildResult {
  int exit_code = 0;
  bool started = false;
  int signal = 0;  // the signal that killed the child, 0 when it exited
  int exec_errno = 0;
  bool timed_out = false;
};

// Open `path` for COMMAND's output (close-on-exec: the child dup2s it);
// -1 for an empty path.
int open_output(const fs::path& path) {
  if (path.empty()) return -1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  return fd;
}

// Wait for `pid`; past `deadline` (when set) send SIGTERM to its group,
// and SIGKILL 5 s later. Set `timed_out` when the deadline passed.
int wait_child(pid_t pid, std::optional<std::chrono::steady_clock::time_point> deadline, bool& timed_out) {
  int status = 0;
  if (!deadline) {
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) break;
    }
    return status;
  }
  bool termed = false;
  auto kill_at = *deadline;
  while (true) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) return status;
    const auto now = std::chrono::steady_clock::now();
    if (now >= kill_at) {
      timed_out = true;
      ::kill(-pid, termed ? SIGKILL : SIGTERM);
      if (!termed) kill_at = now + std::chrono::seconds(5);
      else kill_at = now + std::chrono::hours(24);  // SIGKILL once, then wait
      termed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Run `args` in its own process group with environment `env` (NAME=VALUE
// strings), standard output and error to `out_fd` / `err_fd` when not -1;
// wait for it (at most until `deadline`), forwarding signals.
ChildResult run_child(const std::vector<std::string>& args, const std::vector<std::string>& env, int out_fd,
                      int err_fd, std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(fmt::format("pipe: {}", std::strerror(errno)));

  const bool owns_tty = ::isatty(STDIN_FILENO) != 0 && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();

  // Block the forwarded signals until the handler knows the child's group,
  // so that none is lost or handled by default in between.
  sigset_t block, previous;
  sigemptyset(&block);
  for (int signal : k_forwarded) sigaddset(&block, signal);
  ::sigprocmask(SIG_BLOCK, &block, &previous);

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw Error(fmt::format("fork: {}", std::strerror(error)));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::setpgid(0, 0);
    if (owns_tty) {
      ::signal(SIGTTOU, SIG_IGN);
      ::tcsetpgrp(STDIN_FILENO, ::getpid());
      ::signal(SIGTTOU, SIG_DFL);
    }
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (out_fd >= 0) ::dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    [[maybe_unused]] ssize_t written = ::write(pipe_fds[1], &error, sizeof error);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first wins the race
  g_child_pgid = pid;
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  std::array<struct sigaction, k_forwarded.size()> saved{};
  for (std::size_t i = 0; i < k_forwarded.size(); ++i) {
    ::sigaction(k_forwarded[i], &action, &saved[i]);
  }
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);

  ::close(pipe_fds[1]);
  ChildResult result;
  int exec_errno = 0;
  ssize_t got = 0;
  do {
    got = ::read(pipe_fds[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    result.exec_errno = exec_errno;
  } else {
    result.started = true;
  }

  const int status = wait_child(pid, deadline, result.timed_out);
  g_child_pgid = 0;
  for (std::size_t i = 0; i < k_forwarded.size(); ++i) {
    ::sigaction(k_forwarded[i], &saved[i], nullptr);
  }
  if (owns_tty) {
    // Take the terminal back; from the background, that needs SIGTTOU ignored.
    struct sigaction ignore {}, old {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGTTOU, &ignore, &old);
    ::tcsetpgrp(STDIN_FILENO, ::getpgrp());
    ::sigaction(SIGTTOU, &old, nullptr);
  }

  if (!result.started) {
    result.exit_code = result.exec_errno == ENOENT ? 127 : 126;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  } else {
    result.exit_code = 1;
  }
  return result;
}

// Wait until no process holds a lock on a rank file of `dir` (each rank
// holds one on its own file for as long as it lives: tracer/recorder.cpp),
// at most `limit`. After an abort the launcher may return while ranks are
// still being killed or still write their end in a signal handler; a trace
// read then changes afterwards. Return the files still locked at the end.
std::vector<fs::path> wait_for_writers(const fs::path& dir, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<fs::path> locked;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".smt") && name != format::k_symbols_file) locked.push_back(entry.path());
  }
  while (true) {
    std::erase_if(locked, [](const fs::path& file) {
      const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return true;
      const bool free = ::flock(fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK;
      ::close(fd);
      return free;
    });
    if (locked.empty() || std::chrono::steady_clock::now() >= deadline) return locked;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void report_exit(const ChildResult& child) {
  if (child.signal != 0) {
    fmt::print(stderr, "smtrace: command killed by {}: exit status {}\n", format::signal_name(child.signal),
               child.exit_code);
  } else {
    fmt::print(stderr, "smtrace: command exited with status {}\n", child.exit_code);
  }
}

}  // namespace

// Return the LD_PRELOAD for the ranks: the tracer before the libraries
// `existing` preloads, except sanitizer runtimes (libasan, libtsan, ...,
// libclang_rt.*), which must come first in the list of loaded libraries or
// they refuse to start ("ASan runtime does not come first in initial library
// list"): those stay in front.
std::string preload_list(const std::string& tracer, std::string_view existing) {
  std::vector<std::string> first, rest;
  while (!existing.empty()) {
    const auto end = existing.find_first_of(": ");
    const std::string entry(existing.substr(0, end));
    existing = end == std::string_view::npos ? std::string_view() : existing.substr(end + 1);
    if (entry.empty()) continue;
    const std::string name = fs::path(entry).filename().string();
    const bool runtime = name.starts_with("libclang_rt.") ||
                         std::any_of(std::begin(k_sanitizer_runtimes), std::end(k_sanitizer_runtimes),
                                     [&](const char* lib) { return name.starts_with(lib); });
    (runtime ? first : rest).push_back(entry);
  }
  first.push_back(tracer);
  first.insert(first.end(), rest.begin(), rest.end());
  std::string out;
  for (const std::string& entry : first) out += (out.empty() ? "" : ":") + entry;
  return out;
}

// Check --families and --buffer the way the tracer will read them, so that a
// typo stops smtrace (exit 2) instead of a warning from every rank.
void check_options(const RecordOptions& options) {
  if (!options.families.empty()) {
    std::string_view rest = options.families;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view word = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (!word.empty() && (word[0] == '+' || word[0] == '-')) word.remove_prefix(1);
      if (word.empty() || word == "all") continue;
      bool known = false;
      std::string names = "all";
      for (format::Family family : {format::Family::env, format::Family::comm, format::Family::group,
                                    format::Family::p2p, format::Family::request, format::Family::coll,
                                    format::Family::rma, format::Family::type, format::Family::annotate,
                                    format::Family::cuda, format::Family::thread}) {
        known = known || format::family_name(family) == word;
        names += fmt::format(", {}", format::family_name(family));
      }
      if (!known) {
        throw Error(fmt::format("--families: unknown family '{}' (known: {}; -NAME removes one)", word, names));
      }
    }
  }
  if (!options.buffer.empty()) {
    const std::string& text = options.buffer;
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    uint64_t multiplier = 1;
    std::string_view suffix = std::string_view(text).substr(digits);
    if (suffix == "k" || suffix == "K") multiplier = 1024;
    if (suffix == "m" || suffix == "M") multiplier = 1024 * 1024;
    const bool shape = digits > 0 && digits <= 9 && (suffix.empty() || multiplier != 1);
    const uint64_t bytes = shape ? std::stoull(text.substr(0, digits)) * multiplier : 0;
    if (!shape || bytes < 4096 || bytes > (16u << 20)) {
      throw Error(fmt::format("--buffer: '{}' is not a size from 4096 to 16M (bytes, or with K or M)", text));
    }
  }
}

RunResult record_run(const RecordOptions& options, const RunSettings& settings) {
  if (options.command.empty()) throw Error("no COMMAND given: smtrace record [OPTIONS] -- COMMAND...");
  check_options(options);
  const fs::path tracer = find_tracer();

  std::error_code ec;
  fs::path dir = options.output.empty() ? fs::path(timestamped_name("smtrace")) : fs::path(options.output);
  dir = fs::absolute(dir, ec).lexically_normal();
  if (ec) throw Error(fmt::format("{}: {}", options.output, ec.message()));
  if (dir.has_filename() == false) dir = dir.parent_path();  // "out/" -> "out"
  const bool existed = fs::exists(dir, ec);
  prepare_output_dir(dir, options.force);
  RunResult result;
  result.dir = dir;

  // The variables the tracer reads, in the order they are passed on.
  std::vector<std::pair<std::string, std::string>> vars;
  vars.emplace_back("SMTRACE_DIR", dir.string());
  if (options.stack_depth) vars.emplace_back("SMTRACE_STACK_DEPTH", std::to_string(*options.stack_depth));
  if (!options.families.empty()) vars.emplace_back("SMTRACE_FAMILIES", options.families);
  if (!options.buffer.empty()) vars.emplace_back("SMTRACE_BUFFER", options.buffer);
  vars.emplace_back("SMTRACE_COMMAND", shell_join(options.command));
  std::vector<std::string> removed;  // settings.vars with an empty value
  for (const auto& [name, value] : settings.vars) {
    if (value.empty()) removed.push_back(name);
    else vars.emplace_back(name, value);
  }
  auto listed = [&](const std::string& name) {
    if (std::find(removed.begin(), removed.end(), name) != removed.end()) return true;
    return std::any_of(vars.begin(), vars.end(), [&](const auto& var) { return var.first == name; });
  };
  // SMTRACE_* variables the user set outside smtrace (SMTRACE_FOLD_POLLS,
  // SMTRACE_QUIET, ...) travel on with -x too.
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (!text.starts_with("SMTRACE_") || equals == std::string_view::npos) continue;
    const std::string name(text.substr(0, equals));
    if (name == "SMTRACE_LIB") continue;  // smtrace's own
    if (!listed(name)) vars.emplace_back(name, std::string(text.substr(equals + 1)));
  }
  if (const char* disable = std::getenv("SMTRACE_DISABLE"); disable != nullptr && *disable != '\0') {
    const std::string_view value(disable);
    if (value != "0" && value != "no" && value != "off" && value != "false") {
      warn(fmt::format("SMTRACE_DISABLE={} is set: the tracer will record nothing", disable));
    }
  }

  const char* existing = std::getenv("LD_PRELOAD");
  const std::string preload = preload_list(tracer.string(), existing != nullptr ? existing : "");

  // The child's environment: ours, with the tracer's variables in it (local
  // ranks inherit them) and, without an Open MPI launcher (srun, which
  // exports the environment by default, and singletons), LD_PRELOAD. It is
  // built here, not with setenv, so that runs one after another each get
  // exactly their own settings.
  std::vector<std::pair<std::string, std::string>> child_vars = vars;
  std::vector<std::string> command = options.command;
  const std::size_t launcher = open_mpi_launcher_index(command);
  if (launcher != std::string::npos) {
    std::vector<std::string> inserted = {"-x", "LD_PRELOAD=" + preload};
    for (const auto& [name, value] : vars) {
      inserted.push_back("-x");
      inserted.push_back(name + "=" + value);
    }
    command.insert(command.begin() + static_cast<std::ptrdiff_t>(launcher) + 1, inserted.begin(),
                   inserted.end());
  } else {
    child_vars.emplace_back("LD_PRELOAD", preload);
  }
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string name(text.substr(0, text.find('=')));
    const bool replaced = listed(name) || (name == "LD_PRELOAD" && launcher == std::string::npos);
    if (!replaced) env.emplace_back(text);
  }
  for (const auto& [name, value] : child_vars) env.push_back(name + "=" + value);

  struct Fds {
    int out = -1, err = -1;
    ~Fds() {
      if (out >= 0) ::close(out);
      if (err >= 0) ::close(err);
    }
  } fds;
  fds.out = open_output(settings.stdout_file);
  fds.err = open_output(settings.stderr_file);
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (settings.timeout_s > 0) {
    deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(settings.timeout_s));
  }
  const ChildResult child = run_child(command, env, fds.out, fds.err, deadline);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.started = child.started;
  result.exit_code = child.exit_code;
  result.signal = child.signal;
  result.timed_out = child.timed_out;
  if (!child.started) {
    fmt::print(stderr, "smtrace: error: cannot run '{}': {}\n", command[0], std::strerror(child.exec_errno));
    if (!existed) fs::remove(dir, ec);  // only removes an empty directory
    return result;
  }

  const std::vector<fs::path> writing = wait_for_writers(dir, std::chrono::seconds(10));
  for (const fs::path& file : writing) {
    warn(fmt::format("{}: a process still writes it 10 s after the command ended; what follows may change",
                     file.string()));
  }
  if (fs::is_empty(dir, ec)) {
    warn(fmt::format("no trace was written to {}: no process of '{}' called MPI_Init with the tracer "
                     "loaded (the command failed early, is not an MPI program, links MPI statically, "
                     "or tracing is disabled)",
                     dir.string(), options.command[0]));
    if (!existed) fs::remove(dir, ec);
    if (settings.report) report_exit(child);
    return result;
  }
  result.traced = true;

  if (options.symbolize) {
    try {
      Progress progress(options.quiet ? Quiet::yes : Quiet::no);
      const SymbolizeResult symbols = symbolize_trace(dir, progress.callback());
      progress.clear();
      if (!symbols.changed_modules.empty()) {
        warn(fmt::format("symbolize: {} module(s) changed since the run (build id), e.g. {}",
                         symbols.changed_modules.size(), symbols.changed_modules.front()));
      }
      if (!symbols.missing_modules.empty()) {
        warn(fmt::format("symbolize: {} module(s) not found, e.g. {}", symbols.missing_modules.size(),
                         symbols.missing_modules.front()));
      }
    } catch (const std::exception& e) {
      warn(fmt::format("symbolize: {}", e.what()));
    }
  }

  if (!settings.report) return result;
  fmt::print(stderr, "smtrace: trace written to {}\n", dir.string());
  bool finalized = false;
  std::vector<uint32_t> after_end;  // ranks with a call written after their end record
  try {
    const format::Trace trace = read_trace_or_throw(dir);
    fmt::print(stderr, "smtrace: {}\n", trace_summary(trace));
    finalized = all_finalized(trace);
    for (const format::RankTrace& r : trace.ranks) {
      if (r.present && r.end && !r.events.empty() && r.end->precedes(r.events.back().seq))
        after_end.push_back(r.header.rank);
    }
  } catch (const std::exception& e) {
    warn(fmt::format("cannot read the trace back: {}", e.what()));
  }
  report_exit(child);
  // A launcher that fails after every rank finalized (mpirun crashing in
  // its teardown) is not the application's failure: say which one it was.
  if (child.exit_code != 0) {
    if (finalized && !after_end.empty()) {
      fmt::print(stderr, "smtrace: {} {} called MPI after MPI_Finalize, which ends the process; `smtrace check {}` "
                         "names the calls\n",
                 after_end.size() == 1 ? "rank" : "ranks", analyzer::rank_list(after_end), dir.string());
    } else if (finalized) {
      fmt::print(stderr, "smtrace: every rank reached MPI_Finalize: the application completed and the trace is "
                         "complete; the launcher failed afterwards\n");
    } else {
      fmt::print(stderr, "smtrace: the application ended abnormally; `smtrace check {}` names the ranks and calls\n",
                 dir.string());
    }
  }
  return result;
}

int run_record(const RecordOptions& options) {
  return record_run(options, RunSettings{}).exit_code;
}

}  // namespace smtrace::cli
