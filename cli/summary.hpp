// How a trace and its ranks ended, in words: shared by info and record.
#pragma once

#include <cstdint>
#include <string>

#include "trace_format/reader.hpp"

namespace smtrace::cli {

// Return the number of ranks the run had: the manifest's world size, else
// the largest world size in a rank header, else the number of rank slots.
uint32_t expected_ranks(const format::Trace& trace);

// Return the pending event with the highest seq (the call the rank stopped
// inside), or nullptr.
const format::Event* last_pending(const format::RankTrace& rank);

// Return the rank's end as a stable keyword: "finalized", "signal",
// "aborted", "tracer_stopped", "exit_without_finalize", "none" (no end
// record: killed hard or still running) or "missing" (no rank file).
std::string end_kind(const format::RankTrace& rank);

// Return how the rank ended, for people: "finalized", "killed by SIGSEGV
// inside MPI_Recv at a.c:42 (1:57)", "stopped inside MPI_Wait ...".
std::string rank_state(const format::RankTrace& rank, uint32_t world_rank);

// Return "4 of 4 ranks, 1234 events, complete" or "..., incomplete: rank 1
// killed by SIGSEGV ...; rank 3 missing".
std::string trace_summary(const format::Trace& trace);

// Return true when every rank of the run left a rank file that ends with
// MPI_Finalize.
bool all_finalized(const format::Trace& trace);

}  // namespace smtrace::cli
