// The interface every check implements, and what it may look at.
//
// Loading streams each rank's events, in seq order, from one thread per rank
// (ranks in parallel). A check that needs per-event work returns a RankPass
// per rank; its event() is called from that rank's thread only, so a pass
// needs no lock but must not touch other ranks' passes. A pass names the
// events it reacts to (RankPass::wants, by the columns of the call table)
// and gets only those. Definitions (sites, comms, datatypes) reach
// RankData before the events that use them.
// After every rank has been read, the core replays matching (replay.hpp),
// and then each check's finish() runs, one at a time, with the whole
// Context. The happens-before graph (happens_before.hpp) is built on the
// first call of Context::happens_before().
#pragma once

#include <algorithm>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/finding.hpp"
#include "analyzer/rank_data.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/content.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer {

class CommTable;
class Replay;
class WireReader;
class WireWriter;
class HappensBefore;
class Context;
struct Options;

// Questions a check may put to the SMT backend about other executions of
// the recorded program: other matches of wildcard receives and probes,
// other timing, the same control flow. smt_encoder answers them (the
// analyzer cannot depend on it), through a check that offers an oracle
// (Check::schedule_oracle); without one, Context::schedule_oracle() is null.
struct ScheduleQuestion {
  EventRef earlier;   // an event that returned before `later` was called in the recorded run
  EventRef later;
  // The accesses the question is about (reports name them): the starts of
  // the two accesses whose lifetimes end at `earlier` and begin at `later`.
  EventRef earlier_access, later_access;
};
struct ScheduleAnswer {
  enum class Verdict : uint8_t { feasible, infeasible, unknown };
  // feasible: some execution calls `later` before `earlier` returns (with a
  // witness that was replayed); infeasible: none does (a proof); unknown.
  Verdict verdict = Verdict::unknown;
  std::vector<std::string> notes;  // the witness, or why not, in report lines
  std::string reason;              // unknown: why ("timeout", ...)
};
class ScheduleOracle {
 public:
  virtual ~ScheduleOracle() = default;
  // Answer `questions` (in order) within the oracle's own time budget.
  virtual std::vector<ScheduleAnswer> can_reorder(const Context& context,
                                                  const std::vector<ScheduleQuestion>& questions) = 0;
};

// Everything a check may read once loading is done. Thread safety: read-only
// after loading; finish() is called from one thread.
class Context {
 public:
  virtual ~Context() = default;
  virtual uint32_t world_size() const = 0;
  // Return rank `rank`'s data (present == false for a missing rank file).
  virtual const RankData& rank(uint32_t rank) const = 0;
  virtual const CommTable& comms() const = 0;
  virtual const Replay& replay() const = 0;
  virtual const HappensBefore& happens_before() const = 0;
  virtual const Options& options() const = 0;
  // Return the SMT backend's oracle when a check of this analysis offers
  // one, else nullptr. Valid during finish().
  virtual ScheduleOracle* schedule_oracle() const { return nullptr; }
  // Return the replay for freeing its point-to-point ops and matches
  // (Replay::release_p2p, release_matches) when no check finishing from
  // now on, the one finishing now included, reads them any more
  // (Check::reads_replay_ops); else nullptr. Valid during finish(): the
  // SMT model's build frees each rank's as it has copied them.
  virtual Replay* releasable_replay() const { return nullptr; }
  // Erroneous calls: a check whose findings say that a call is erroneous
  // (an invalid argument, an RMA call outside its epoch, mismatched types:
  // Grouped's checks) marks its event, during its finish(); a check that
  // finishes after the marks (Check::finish_stage) asks. What MPI does inside such a
  // call is not defined, and its default error handler ends the job inside
  // the ones it tests: a rank that stopped there was not waiting.
  // Thread safe.
  virtual void mark_erroneous(EventRef event) const { (void)event; }
  virtual bool erroneous(EventRef event) const {
    (void)event;
    return false;
  }
  // Return the Location of event `event` (its `call` and call `site`), with `note`.
  Location location(EventRef event, format::Call call, uint32_t site, std::string note = {}) const;
};

// The events a rank pass reacts to, by call: a set of rows of the call
// table (calls.def), chosen by their columns (format::CallTraits), never by
// a list of calls. A call value the table does not hold (a newer build's)
// has the row that says nothing, CallTraits{}.
class EventSet {
 public:
  // Return the set of every event.
  static EventSet every() {
    EventSet s;
    s.m_calls.set();
    return s;
  }
  // Return the set of no event.
  static EventSet none() { return {}; }
  // Return the set of the events whose call's row satisfies `holds` (a
  // predicate on const format::CallTraits&).
  template <class Holds>
  static EventSet of(const Holds& holds) {
    EventSet s;
    for (std::size_t i = 0; i < k_slots - 1; ++i)
      s.m_calls[i] = holds(format::call_traits(static_cast<format::Call>(i)));
    s.m_calls[k_slots - 1] = holds(format::CallTraits{});
    return s;
  }
  EventSet operator|(const EventSet& other) const {
    EventSet s;
    s.m_calls = m_calls | other.m_calls;
    return s;
  }
  bool operator==(const EventSet&) const = default;
  // Return true when events of `call` are in the set.
  bool has(format::Call call) const { return m_calls[slot(call)]; }
  bool all() const { return m_calls.all(); }
  // The slots the sets keep, one per call of the table and the last for
  // every value past it; slot(call) is the one of `call`.
  static constexpr std::size_t k_slots = format::detail::k_call_slots + 1;
  static std::size_t slot(format::Call call) {
    return std::min(static_cast<std::size_t>(call), k_slots - 1);
  }
  bool has_slot(std::size_t slot) const { return m_calls[slot]; }

 private:
  std::bitset<k_slots> m_calls;
};

// Per-rank, per-check state fed with that rank's events.
class RankPass {
 public:
  virtual ~RankPass() = default;
  // Take the next event of the rank (seq order) that wants() holds. Pending
  // events (the rank stopped inside the call) come last, with
  // `event.pending` set.
  virtual void event(const format::Event& event) = 0;
  // Return the events event() reacts to; the others never reach it. Asked
  // once per rank, just before its first event (RankData holds the rank's
  // header by then), so a pass may name fewer events where the header
  // says that the others change nothing. It must hold every event that
  // changes the pass's state or findings, pending and failed ones
  // included (tests/unit/test_analyzer_event_sets.cpp runs every check's
  // pass on every call with and without it); a pass that counts events or
  // keeps seq takes every().
  virtual EventSet wants() const { return EventSet::every(); }
  // An event written after the rank's end record (seq past
  // Termination::last_seq): a call the rank made after MPI_Finalize, which
  // the tracer appends to a closed trace (tracer/handlers.hpp,
  // record_after_finalize); or the one call of a trace the tracer began
  // at a call before MPI_Init (format::started_before_init). Such events
  // reach no pass's event(), only this, whatever wants() says: they carry
  // no arguments and are outside the run MPI saw.
  virtual void after_end(const format::Event& event) { (void)event; }
  // Called once after the rank's last event.
  virtual void end() {}
};

class Check {
 public:
  virtual ~Check() = default;
  // Return the check's name as --checks and reports spell it: "deadlock".
  virtual std::string_view name() const = 0;
  // Return the severity of its findings.
  virtual Severity severity() const = 0;
  // Return one line for `smtrace check --list`.
  virtual std::string_view description() const = 0;
  // Return what the check cannot run without (format::Content bits). The
  // analyzer skips it, and says so in the report, on a trace that lacks any
  // of it (an imported one: trace_format/content.hpp).
  virtual format::ContentSet needs() const { return 0; }
  // Return the pass for rank `rank` (whose data `data` fills while loading), or
  // nullptr when this check needs no per-event work. Called before loading.
  virtual std::unique_ptr<RankPass> rank_pass(const RankData& data) {
    (void)data;
    return nullptr;
  }
  // Append this check's findings, given the passes it returned (index = rank;
  // nullptr where it returned none).
  virtual void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
                      std::vector<Finding>& out) = 0;
  // Add this check's figures to the report's stats (after finish()), named
  // "<check>_<figure>" with underscores: "rma_race_peak_nodes". Deterministic
  // values only (no timings).
  virtual void stats(std::map<std::string, uint64_t>& out) const { (void)out; }
  // Return true while this check's finish() (or its ScheduleOracle
  // answers) may still read the Replay's point-to-point ops or matches
  // (p2p, payload, matched): asked during another check's finish() for it
  // and every check after it (Context::releasable_replay). Conservative
  // by default.
  virtual bool reads_replay_ops() const { return true; }
  // When finish() runs, against the other checks (the report's order of
  // checks and findings does not change): `normal`; `after_marks` when it
  // asks Context::erroneous, after every `normal` check (Grouped's checks
  // mark there); `last` when it may free what the others read (the SMT
  // checks: their model's build hands back the replay's ops through
  // Context::releasable_replay, which a check after it that reads them
  // holds back). Within a stage, the checks' order.
  enum class FinishStage : uint8_t { normal, after_marks, last };
  virtual FinishStage finish_stage() const { return FinishStage::normal; }
  // Return true when the check's rank passes may run on another process
  // than its finish() (smtrace-mpi: where the rank file is read): the pass
  // reads only its rank's events and RankData (as every pass does), and
  // what finish() reads of it after end() survives save_pass and load_pass.
  // finish() may still read the whole Context on its own process (matching,
  // happens-before, the comm table, every rank's RankData) and combine the
  // ranks (pair them, group findings, count, cap).
  virtual bool saves_passes() const { return false; }
  // Append the state of `pass` (this check's, after its end()) to `out`.
  virtual void save_pass(const RankPass& pass, WireWriter& out) const {
    (void)pass;
    (void)out;
  }
  // Return a pass of the rank of `data` holding what save_pass wrote, read
  // from `in`. Thread safety: called from several loading threads at once.
  virtual std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const {
    (void)data;
    (void)in;
    return nullptr;
  }
  // Return the oracle this check offers the others (smt_encoder's checks),
  // or nullptr. It may use what the check's passes collected while loading,
  // and is called before or after this check's finish().
  virtual ScheduleOracle* schedule_oracle() { return nullptr; }
};

// Check::save_pass and load_pass for a pass type P that saves and loads
// itself (`void save(WireWriter&) const`, `void load(WireReader&)`); Args
// construct the empty pass that load() fills.
template <class P>
void save_pass_of(const RankPass& pass, WireWriter& out) {
  dynamic_cast<const P&>(pass).save(out);
}
template <class P, class... Args>
std::unique_ptr<RankPass> load_pass_of(WireReader& in, Args&&... args) {
  auto pass = std::make_unique<P>(std::forward<Args>(args)...);
  pass->load(in);
  return pass;
}

// Return a new instance of every check, in report order.
std::vector<std::unique_ptr<Check>> all_checks();

}  // namespace smtrace::analyzer
