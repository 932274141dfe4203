// smtrace-mpi: `smtrace check` and `smtrace info` as an MPI program
// (docs/cli.md, smtrace-mpi). Every process parses the same command line
// with smtrace's own parser (cli::main); process 0 runs the analysis and
// prints the report, the others read their share of the rank files, run the
// replay's pass and the passes of the rank-local checks on them, and send
// process 0 the records it still reads and those passes' state
// (distributed/transfer.hpp). The other processes'
// stdout and stderr go to /dev/null: what they would print, process 0 prints.
// Every process exits with process 0's exit status.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>
#include <thread>

#include <mpi.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "distributed/transfer.hpp"

namespace {

using namespace smtrace;

// Thrown by a reading process once it has sent its share: its part of the
// command ends there (it prints nothing and writes no file). Not a
// std::exception, so that cli::main lets it through.
struct Served {};

// Return true when `argv` names a command smtrace-mpi runs (or asks for help).
bool supported(int argc, char** argv) {
  if (argc < 2) return true;  // cli::main says what is missing
  const std::string_view first = argv[1];
  return first == "check" || first == "info" || first == "help" || first.starts_with("-");
}

int run(int argc, char** argv, int process, int processes) {
  // Set when process 0's analysis stopped with an exception while the
  // readers may still be sending: only MPI_Abort ends their job then.
  bool stranded = false;
  cli::Engine engine;
  if (process == 0) {
    engine.analyze = [&](const std::filesystem::path& dir, const analyzer::Options& options) {
      const format::TraceFiles files = format::find_trace_files(dir);
      analyzer::Options distributed = options;
      const auto world_size = static_cast<uint32_t>(files.rank_files.size());
      distributed.rank_source = distributed::receive_ranks(files, processes, MPI_COMM_WORLD);
      distributed.passes_elsewhere = distributed::passes_elsewhere(world_size, processes);
      try {
        return analyzer::analyze(dir, distributed);
      } catch (...) {
        stranded = processes > 1;
        throw;
      }
    };
    engine.read_trace = [&](const std::filesystem::path& dir, const format::ReadOptions& options) {
      const format::TraceFiles files = format::find_trace_files(dir);
      format::ReadOptions distributed = options;
      distributed.read_rank = distributed::receive_rank_traces(files, processes, MPI_COMM_WORLD);
      try {
        return format::read_trace(dir, distributed);
      } catch (...) {
        stranded = processes > 1;
        throw;
      }
    };
  } else {
    engine.analyze = [&](const std::filesystem::path& dir, const analyzer::Options& options) -> analyzer::Result {
      const format::TraceFiles files = format::find_trace_files(dir);
      distributed::send_ranks(files, process, processes, options, MPI_COMM_WORLD);
      throw Served{};
    };
    engine.read_trace = [&](const std::filesystem::path& dir, const format::ReadOptions& options) -> format::Trace {
      const format::TraceFiles files = format::find_trace_files(dir);
      distributed::send_rank_traces(files, process, processes, options.threads, MPI_COMM_WORLD);
      throw Served{};
    };
  }
  int status = cli::k_exit_usage;
  if (!supported(argc, argv)) {
    std::fprintf(stderr, "smtrace-mpi: error: '%s' does not run under MPI (smtrace-mpi runs check and info); "
                         "use smtrace %s\n", argv[1], argv[1]);
  } else {
    try {
      status = cli::main(argc, argv, engine);
    } catch (const Served&) {
    } catch (const std::bad_alloc&) {
      std::fputs("smtrace: error: out of memory\n", stderr);
      stranded = processes > 1;
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (stranded) MPI_Abort(MPI_COMM_WORLD, status);
  // The readers wait here while process 0 analyzes (seconds, the SMT
  // checks' budget among them): a blocking MPI_Bcast would spin on a core
  // (Open MPI), the core process 0 needs on a small machine, so they sleep
  // between tests.
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fputs("smtrace-mpi: error: MPI_Init_thread failed\n", stderr);
    return cli::k_exit_usage;
  }
  int process = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  if (provided < MPI_THREAD_MULTIPLE && processes > 1) {
    if (process == 0) std::fputs("smtrace-mpi: error: the MPI library does not provide MPI_THREAD_MULTIPLE\n", stderr);
    MPI_Finalize();
    return cli::k_exit_usage;
  }
  if (process != 0) {
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)) {
      MPI_Abort(MPI_COMM_WORLD, cli::k_exit_usage);
    }
  }
  const int status = run(argc, argv, process, processes);
  MPI_Finalize();
  return status;
}
