// One recorded run of a command, as `smtrace record` makes it, for the
// commands that record runs of their own (`smtrace explore`).
//
// Thread safety: record_run forks and waits; call it from one thread at a
// time (it installs signal handlers for the child's lifetime).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"

namespace smtrace::cli {

// How a run differs from `smtrace record`'s.
struct RunSettings {
  // Variables for the tracer beyond record's (SMTRACE_FORCE=...); an empty
  // value removes the variable from what the ranks get.
  std::vector<std::pair<std::string, std::string>> vars;
  std::filesystem::path stdout_file;  // COMMAND's standard output goes here (empty: inherited)
  std::filesystem::path stderr_file;  // and its standard error
  // Seconds COMMAND may run; then its process group gets SIGTERM, and
  // SIGKILL 5 s later (0: no limit).
  double timeout_s = 0;
  // record's lines on stderr: trace written, summary, exit status.
  bool report = true;
};

// What became of a run.
struct RunResult {
  bool started = false;     // COMMAND could be executed
  int exit_code = 0;        // as `smtrace record` returns it (128+N: killed by signal N)
  int signal = 0;           // the signal that ended COMMAND (0: it exited)
  bool timed_out = false;   // stopped by RunSettings::timeout_s
  double wall_s = 0;        // seconds from start to end
  bool traced = false;      // a trace was written
  std::filesystem::path dir;  // the trace directory, absolute
};

// Run `options.command` with the tracer injected into its ranks and write
// the trace to `options.output` (what `smtrace record` does; docs/cli.md).
// Throw Error when the run cannot start (bad options, output in use, no
// tracer library).
RunResult record_run(const RecordOptions& options, const RunSettings& settings);

}  // namespace smtrace::cli
