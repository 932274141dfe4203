// The questions of `smtrace prove` on a Model, without the analyzer: split
// the model into parts at its cuts and answer, per part, message races
// (every wildcard receive and probe against each other send it may take),
// deadlocks that rely on buffering, and the user's ordering questions.
// Each question is first put to a replay that needs no solver: directed
// replays find witnesses (guided.hpp), fixed-order runs decide deadlocks
// and parts without a choice (fixed.hpp); what they leave goes to Z3, one
// incremental encoding per part shared by all its questions (encoder.hpp).
// Every sat answer comes with a schedule that the reference semantics
// (semantics.hpp) replayed; a schedule that does not replay turns the
// answer into unknown, never into a claim.
//
// The budget is a wall: past it, nothing new is started, a running Z3 check
// is interrupted, and what is not decided is unknown. A part whose solving
// fails (an exception of any kind: z3::exception, std::bad_alloc,
// std::logic_error) is undecided with the reason in Solution::undecided;
// the other parts' answers stand.
//
// Everything here is by model indices (ops, per-rank event indices of the
// whole model); prove.cpp turns it into the report's events and locations.
// Kept apart from the analyzer so that the unit and differential tests can
// build models directly.
//
// Thread safety: solve() runs independent parts on its own threads (one
// z3::context each); the function itself is reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/parts.hpp"
#include "smt_encoder/prove.hpp"
#include "smt_encoder/semantics.hpp"

namespace smtrace::smt {

// A rank stopped for good in a deadlock witness, by model indices.
struct RawBlocked {
  uint32_t rank = 0;
  uint32_t event = 0;
  std::vector<uint32_t> waits_for;
};

// An op of a schedule that names what a wildcard receive's status gave in
// the recorded run, after the receive took another message with another
// status in the schedule (model.hpp: the trace records the values a call
// used, not where the program took them from).
struct StatusReuse {
  uint32_t op = k_none;       // the later op
  uint32_t receive = k_none;  // the wildcard receive or probe it follows
  bool source = true;         // it names the recorded source (else the recorded tag)
};

// Return the first op of `steps` (a schedule of `model`) posted on the rank
// of a wildcard receive or probe R after the event that completes R
// returned, where R took a send other than its recorded one whose source
// differs from the recorded send's (R of MPI_ANY_SOURCE) or whose tag does
// (R of MPI_ANY_TAG), and the op names the recorded send's source as its
// peer (the destination of a send, the source of a receive) or, for a
// changed tag, its tag: a program that took them from R's status
// (status.MPI_SOURCE, status.MPI_TAG) calls it with the new ones in that
// execution, so the schedule says nothing about it. A receive tied to a
// wildcard probe (Op::probe) already follows the probe's match and is not
// one. Nothing when there is none.
std::optional<StatusReuse> find_status_reuse(const Model& model, const std::vector<RawStep>& steps);

// A witness by whole-model indices. The schedule starts where its part
// starts (after the cut before it, which every rank passed).
struct RawWitness {
  Outcome outcome = Outcome::match;
  std::vector<RawStep> steps;
  std::vector<RawBlocked> cycle;  // deadlock: the blocked ranks, a wait-for cycle first
  bool replayed = false;
  uint64_t omitted = 0;           // steps of the replayed schedule not kept, after `steps` (a race
                                  // witness past Tuning::witness_steps keeps k_witness_head steps)
  // A bad end or a precede witness whose schedule reuses a changed status
  // (find_status_reuse), whole-model ops; op k_none when it does not.
  StatusReuse reuse;
};


// The steps a race witness keeps once the witnesses of a solve() hold
// Tuning::witness_steps steps (the steps a finding's note shows): a witness
// runs from its part's start, so with one per alternative their steps grow
// with the square of a part's length.
constexpr std::size_t k_witness_head = 40;

// A question by model indices: can_match(recv op, send op) or
// can_precede((a_rank, a_event) returns before (b_rank, b_event) is called).
struct RawQuestion {
  QuestionKind kind = QuestionKind::can_match;
  uint32_t recv = k_none, send = k_none;
  uint32_t a_rank = 0, a_event = 0, b_rank = 0, b_event = 0;
};

struct RawAnswer {
  Verdict verdict = Verdict::unknown;
  std::optional<RawWitness> witness;
  std::vector<std::string> explanation;
  std::string reason;
};

struct RawAlternative {
  uint32_t send = 0;
  Verdict verdict = Verdict::unknown;     // can the receive take it?
  Outcome outcome = Outcome::harmless;    // sat: harmless, deadlock, unmatched or mismatch
  bool outcome_known = false;
  bool alone = true;                      // bad outcome: every other receive keeps its recorded match
  StatusReuse reuse;                      // bad outcome: the witness reuses a changed status
                                          // (find_status_reuse; whole-model ops, op k_none: it does not),
                                          // so whether the program ends badly is not known
  // deadlock: a rank of the witness whose other thread can still call MPI while it blocks (prove.cpp,
  // first_escape: the schedule takes one order of the rank's threads), so whether the program
  // deadlocks is not known; its call (model index), k_none when no witness was kept to name it.
  // k_none: no such rank.
  uint32_t free_rank = k_none, free_event = k_none;
  uint64_t witness_steps = 0;             // `witness` cut (omitted): its steps up to and with the
                                          // match (0: not known, the whole run)
  std::shared_ptr<const RawWitness> witness;  // sat: the bad end when there is one, else a run with the
                                              // match (shared: one run may witness many alternatives);
                                              // null when replayed but not kept (solve.cpp's shared
                                              // fixed runs keep what the race finding shows)
};

struct RawRace {
  uint32_t recv = 0;                      // a receive or probe op
  std::vector<RawAlternative> alternatives;  // candidate sends other than the recorded one
};

struct SolveOptions {
  Buffering buffering = Buffering::infinite;
  double timeout_s = 30;       // for everything together
  unsigned threads = 0;        // 0: hardware concurrency
  bool races = true;
  bool outcomes = true;        // ask whether each feasible alternative ends badly
  bool errors_only = false;    // races: only those that can end badly matter (skip parts that cannot)
  bool deadlocks = true;       // zero-buffer deadlocks with the recorded matches
  // Races: whether receive `recv` taking send `send` (ops of the whole
  // model) is erroneous by itself: the message does not fit the receive's
  // buffer (model.hpp, misfit). A feasible such match is a bad outcome
  // (Outcome::mismatch) whatever follows it. Null: none is.
  std::function<bool(uint32_t recv, uint32_t send)> misfit;
  bool smt2 = false;           // keep the first question's (else the first part's) problem in SMT-LIB 2
  Tuning tuning;
  // Called on the worker of each part before it is solved (tests make a
  // part fail from here).
  std::function<void(std::size_t part)> on_part;
};

struct Solution {
  std::vector<RawAnswer> answers;            // per question
  std::vector<RawRace> races;                // receives with at least one alternative
  std::vector<RawWitness> deadlocks;         // at most one per part
  std::map<std::string, uint64_t> stats;
  uint64_t unknown = 0;
  std::vector<std::string> undecided;        // why parts were left undecided other than by the budget
  std::string smt2;
};

// What a Prepared's match pairs must give besides the pairs themselves:
// all: their figures as the whole analysis finds them (prove's report
// prints them: the happens-before passes run, the pairs each rule dropped);
// pairs_only: the pairs and parts alone (check's reports print none of
// those figures). Then, on a model without wildcards whose pairs by the
// counting rules and cuts are its recorded matches, the happens-before
// clocks are not built when a run shows that they would drop none of those
// pairs (solve.cpp, happens_before_drops_none), and not at all where they
// would not run (Tuning::hb_pruning off, or !clocks_fit): the same pairs
// and parts, with MatchPairs::hb_passes 0 and hb_skipped set, and no list
// per send (MatchPairs::recvs, probes: the parts make theirs).
enum class PairFigures : uint8_t { all, pairs_only };

// What every question on a model needs: its cuts, channel index, match
// pairs and parts, made once (the SMT checks of one analysis share them).
// Not movable: it refers to the model.
struct Prepared {
  // Throw BudgetSpent past `deadline`. `threads` (0: one per core) run the
  // parts' runs of PairFigures::pairs_only.
  Prepared(const Model& model, const Tuning& tuning, const Deadline& deadline = {},
           PairFigures figures = PairFigures::all, unsigned threads = 0);
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  std::vector<Cut> cuts;
  Channels channels;
  MatchPairs pairs;
  std::vector<PartRange> parts;  // each Part is made when it is solved, and freed after
  // Per part, when the clocks were skipped (PairFigures::pairs_only): 1 when
  // its run with the recorded matches under zero buffering (fixed.hpp, case
  // 1), made to show that the clocks drop nothing, ended without a deadlock
  // and no rank of the part stopped inside an event: potential-deadlock's
  // answer for the part (find_deadlock's one run), known. Empty otherwise.
  std::vector<char> deadlock_free;
};

// Answer `questions` and find races and deadlocks in `model`, prepared as `prepared`.
Solution solve(const Model& model, const Prepared& prepared, const std::vector<RawQuestion>& questions,
               const SolveOptions& options);
// As above, preparing `model` within the budget first (when that runs out,
// every question is unknown).
Solution solve(const Model& model, const std::vector<RawQuestion>& questions, const SolveOptions& options);

// Return the blocked ranks of the state `steps` lead to (a wait-for cycle
// first), or an empty list when the steps do not replay.
std::vector<RawBlocked> blocked_ranks(const Model& model, Buffering buffering, const std::vector<RawStep>& steps);
// As above, for the state `state` of `machine`'s model itself.
std::vector<RawBlocked> blocked_ranks(const Machine& machine, const Machine::State& state);

}  // namespace smtrace::smt
