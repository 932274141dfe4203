// Synthetic traces for benchmarks and tests: generators that write a trace
// directory as the tracer would have recorded a given communication pattern,
// with consistent seqs, matching sends and receives, statuses, call sites,
// a manifest and finalized termination records (unless a bug is injected).
//
// Writing streams: a rank's events go through the tracer's RecordEncoder into
// sealed chunks of about 64 KiB and to disk; nothing holds a rank's events.
// Ranks are written by parallel threads.
//
// Thread safety: write_synthetic_trace may be called from several threads
// for distinct directories.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace smtrace::format {

// A defect to plant in the generated program, for testing the analyzer.
enum class SynthBug : uint8_t {
  none,
  // halo: in the last iteration every rank posts its receives, sends
  // nothing, and stays in MPI_Waitall (pending) until killed by SIGTERM.
  deadlock,
  // halo: the last rank calls MPI_Bcast where the others call MPI_Allreduce
  // (the middle Allreduce of the run); the run goes on and finalizes.
  collective_mismatch,
};

struct SynthOptions {
  uint32_t ranks = 64;          // senders: K + 1 (rank 0 receives); fig6: 3; masterworker: 1 + workers
  uint64_t events = 1'000'000;  // per rank, approximate: whole iterations
  // Iterations of the main loop; 0: from `events` (halo, pingpong,
  // wildcard) or the generator's default (router: ranks / 2, fig6: 1).
  // senders and leader have no loop and refuse a nonzero value.
  uint64_t iterations = 0;
  uint64_t seed = 1;
  SynthBug bug = SynthBug::none;
  unsigned threads = 0;         // writer threads; 0: hardware concurrency
  std::string command;          // Manifest.command; empty: a generated one
};

struct SynthResult {
  uint32_t ranks = 0;
  uint64_t events = 0;          // all ranks
  uint64_t iterations = 0;      // of the generator's main loop
  uint64_t bytes = 0;           // rank files
};

// Return the names of the generators, as write_synthetic_trace takes them:
// "halo" (2-D periodic halo exchange with Irecv/Isend/Waitall, an Allreduce
// every 10 iterations and a Barrier every 100), "pingpong" (pairs of ranks,
// blocking Send/Recv), "wildcard" (rank 0 receives from MPI_ANY_SOURCE and
// answers each worker), and the seed's (smt-match-pairs-mcapi, section 5)
// benchmark programs: "senders" (Table 1: ranks 1..K each send one message
// to rank 0, which posts K receives from MPI_ANY_SOURCE), "leader" (leader
// election on a ring), "router" (distance-vector routing on a ring), "fig6"
// (the seed's Figure 6 program on 3 ranks, repeated `iterations` times),
// and "masterworker" (rank 0 hands out `iterations` tasks, default 60, to
// whichever worker asks first, MPI_ANY_SOURCE, then stops each worker; the
// workers receive with MPI_ANY_TAG).
std::vector<std::string> synth_generators();

// Return the name of `bug` ("none", "deadlock", "collective-mismatch").
std::string_view synth_bug_name(SynthBug bug);

// Write the trace of generator `name` into `dir` (created; rank files,
// symbols and manifest of an earlier trace there are replaced). Throw
// TraceError for an unknown generator, a bug the generator cannot plant, a
// rank count the generator cannot take (0; senders and leader: 1; router:
// under 3; fig6: other than 3), iterations for a generator without a loop,
// or a file that cannot be written.
SynthResult write_synthetic_trace(std::string_view name, const std::filesystem::path& dir,
                                  const SynthOptions& options);

}  // namespace smtrace::format
