// The entry point of the analyzer: read a trace directory, run the checks,
// return findings and statistics.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analyzer/finding.hpp"
#include "analyzer/rank_source.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::analyzer {

class Check;
// Makes one instance of a check for one analysis.
using CheckFactory = std::function<std::unique_ptr<Check>()>;

enum class Alignment : uint8_t { strict, weak, off };

// What an exception thrown by a check (its rank passes or its finish) does:
// end the analysis (rethrow: analyze() throws it, from whichever thread), or
// drop that check and keep the others' findings (report: Result::failures).
// Out of memory always ends the analysis.
enum class CheckErrors : uint8_t { rethrow, report };

struct Options {
  std::set<std::string> checks;          // empty: all
  // collective-misaligned is a style rule, not an MPI error (docs/checks.md):
  // off unless asked for.
  Alignment alignment = Alignment::off;
  unsigned threads = 0;                  // 0: hardware concurrency
  // Build the happens-before graph even when no check asks for it (its
  // size then appears in the stats); checks that need it build it anyway.
  bool happens_before = false;
  // Called now and then with a line of progress ("read 3/64 ranks"); may be empty.
  std::function<void(const std::string&)> progress;
  // Checks defined outside the analyzer (smt_encoder's message-race and
  // potential-deadlock: the analyzer cannot depend on them). They run after
  // the built-in ones and `checks` may name them like the others.
  std::vector<CheckFactory> extra_checks;
  CheckErrors check_errors = CheckErrors::rethrow;
  // Where each present rank's records come from (smtrace-mpi: another MPI
  // process reads the file and sends them); empty: the file, read here.
  RankSourceFactory rank_source;
  // smtrace-mpi: the ranks whose passes of the checks that save them
  // (Check::saves_passes) ran where their file was read (run_saved_passes);
  // their source hands the saved state over (RankSource::saved_passes) and
  // finish() gets passes loaded from it; so does the replay (Replay::load_rank),
  // which then runs no pass of those ranks here, and the source may deliver
  // only some of the rank's events (run_saved_passes says which) with their
  // count (RankSource::events_read). Where a check whose passes do not travel
  // has a pass of such a rank (the SMT checks), every event comes and the
  // replay's pass runs here, as for a rank read here. Empty: every pass runs here.
  std::function<bool(uint32_t rank)> passes_elsewhere;
};

// A check that threw while it ran (a bug of the check or an input it cannot
// handle): its findings are left out of the result, the other checks' stay.
struct CheckFailure {
  std::string check;    // its name: "rma-race"
  std::string message;  // what it threw, and where: "rank 2: event 2:57: ..."
};

// A check that did not run because the trace lacks what it needs.
struct SkippedCheck {
  std::string check;       // "rma-race"
  std::string reason;      // "the trace has no buffer addresses (imported from otf2:...)"
  bool operator==(const SkippedCheck&) const = default;
};

struct Result {
  std::vector<Finding> findings;                 // sorted (sort_findings)
  std::vector<SkippedCheck> skipped;             // in report order
  std::vector<CheckFailure> failures;            // checks that threw (CheckErrors::report)
  std::vector<format::Problem> problems;         // met while reading
  std::map<std::string, uint64_t> stats;         // "ranks", "events", "matches", "hb_nodes", ...
  uint32_t world_size = 0;
  bool complete = false;                         // every rank present and finalized
  std::vector<std::string> notes;                // about the report as a whole ("run smtrace symbolize")
  // Return true when a finding has Severity::error.
  bool has_errors() const;
};

// Return the names of all checks, in report order.
std::vector<std::string> check_names();

// Analyze the trace in `dir`. Throw format::TraceError when `dir` is not a
// trace at all, std::invalid_argument for an unknown check name,
// std::bad_alloc when memory runs out; std::runtime_error naming the rank
// file when loading a rank fails on another error (the reader, the replay, or
// a check's pass; whichever thread it happens on); and what a check's
// finish() throws. Under `options.check_errors` == CheckErrors::report a
// check's exceptions go to Result::failures instead.
Result analyze(const std::filesystem::path& dir, const Options& options = {});

// smtrace-mpi's reading processes: load rank `rank` of `files` from `source`
// as analyze() with `options` does, running only the passes of the selected
// checks that save them (Check::saves_passes) and the replay's, and return their state for
// the analyzing process (RankSource::saved_passes hands it to analyze(),
// which loads the passes, or fails a check, or throws, as it would have
// itself). Before reading, tell `source` which events the analyzing process
// still reads (RankSource::pass_on_only): those of the calls its comm table
// observes (CommTable::observes); or, when a selected check whose passes do
// not travel has a pass of the rank (the SMT checks: it runs there), every
// event, and then the replay's pass runs there too, not here. A source that
// leaves events out says there how many it read (RankSource::events_read).
// Never throws: what loading threw travels in the result too.
std::string run_saved_passes(const format::TraceFiles& files, uint32_t rank, RankSource& source,
                             const Options& options);

}  // namespace smtrace::analyzer
