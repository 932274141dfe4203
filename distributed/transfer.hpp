// smtrace-mpi's division of work: which process reads which rank files, the
// readers' side (read, code, send) and the analyzing process's side (a
// RankSource per rank that receives what a reader sent).
//
// Process 0 runs the analysis; the other processes read. With one process,
// process 0 reads every file itself (the run is `smtrace check`'s). With N > 1,
// the world ranks are cut into N - 1 blocks of consecutive ranks, block k
// read by process k + 1. Each rank's records go to process 0 in messages of
// whole records (about k_message_bytes), tagged with the rank, so that process
// 0's loading threads each receive the rank they load.
//
// The readers also run, on the ranks they read, the replay's pass and the
// passes of the checks whose passes can travel (analyzer::Check::saves_passes:
// request-leak, resource-leak, invalid-argument, thread-level,
// cuda-mpi-race, epoch-lifecycle, type-mismatch, the collective checks,
// abnormal-termination, local-concurrency, rma-race), and send their state
// after the rank's records; process 0 runs every other pass (the SMT
// checks' collection), the matching and every check's finish(). Of the
// events, a reader sends only those that process 0 still reads
// (analyzer::run_saved_passes decides, RankSource::pass_on_only): every
// event when a pass of the rank runs there, else only the calls that create
// communicators and windows (its comm table); and the count of events read
// and their last seq (analyzer::EventsRead), before the rank's end.
//
// Order and progress: process 0 loads ranks in ascending order (a pool of
// threads taking the next rank), and each reader sends its ranks in ascending
// order (a pool of threads too); a reader's thread blocks only on a rank that
// process 0 has started or will start before any higher one, so the exchange
// cannot deadlock. A reader keeps at most two messages per thread in memory,
// and the passes' state of the rank each thread reads (the replay's: about
// 100 bytes per send and receive, its coded copy included) until it is sent.
//
// Thread safety: MPI must be initialized with MPI_THREAD_MULTIPLE.
#pragma once

#include <cstddef>
#include <cstdint>

#include <mpi.h>

#include "analyzer/analyze.hpp"
#include "analyzer/rank_source.hpp"
#include "distributed/share.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::distributed {

inline constexpr std::size_t k_message_bytes = std::size_t{1} << 20;

// Read the rank files of `files` that process `process` of `processes`
// reads, on up to `options.threads` threads (0: hardware concurrency), and
// send their records to process 0 over `comm`, each rank's followed by the
// state of its passes of the checks that save them (analyzer::run_saved_passes
// with `options`, process 0's own). Reader errors go to process 0 as
// records; an MPI error aborts the job (MPI's default handler).
void send_ranks(const format::TraceFiles& files, int process, int processes, const analyzer::Options& options,
                MPI_Comm comm);

// Return the RankSourceFactory for process 0 of `processes` on the ranks of
// `files`: a reader of the file for the ranks process 0 reads itself (a lost
// header read in format::recovered_version(files)), a receiver for the others.
analyzer::RankSourceFactory receive_ranks(const format::TraceFiles& files, int processes, MPI_Comm comm);
// Return analyzer::Options::passes_elsewhere for process 0 of `processes`:
// true for the ranks another process reads (and runs those passes of).
std::function<bool(uint32_t)> passes_elsewhere(uint32_t world_size, int processes);

// smtrace-mpi info: as send_ranks, each rank read whole (format::read_rank_file)
// and sent as one coded RankTrace (in messages of at most k_piece_bytes).
void send_rank_traces(const format::TraceFiles& files, int process, int processes, unsigned threads,
                      MPI_Comm comm);
// Return format::ReadOptions::read_rank for process 0 of `processes`:
// read_rank_file for the ranks of `files` process 0 reads (a lost header read
// in format::recovered_version(files)), a receiver for the others.
std::function<format::RankTrace(uint32_t, const std::filesystem::path&)> receive_rank_traces(
    const format::TraceFiles& files, int processes, MPI_Comm comm);

inline constexpr std::size_t k_piece_bytes = std::size_t{256} << 20;

}  // namespace smtrace::distributed
