// The `smtrace` command line: parses arguments, runs one subcommand, and is
// the only place that catches errors (they become "smtrace: error: <what>"
// on stderr and exit code 2).
#pragma once

namespace smtrace::cli {

struct Engine;

// Run smtrace with the process's arguments; return the exit code.
int main(int argc, char** argv);
// Run smtrace with the process's arguments, `check` and `info` through
// `engine` (smtrace-mpi: the same command line, spread over MPI processes);
// return the exit code.
int main(int argc, char** argv, const Engine& engine);

}  // namespace smtrace::cli
