// The SMT backend's public interface: what `smtrace prove` and the
// message-race / potential-deadlock checks of `smtrace check` call.
//
// A trace shows one run. prove() asks what else the same run could have
// done: which other sends a wildcard receive could have matched (message
// races), whether a deadlock is reachable under zero buffering or through
// another match, and the user's ordering questions (--can-match,
// --can-precede). Every answer is a proof: sat with a witness schedule that
// an independent replay (not Z3) has accepted, unsat with an explanation
// from the unsat core, or unknown (timeout, budget spent), never a guess.
// The method follows Huang and Mercer, "Proving MCAPI Executions are
// Correct" (match pairs, sections 3 and 4), generalized to MPI; docs/cli.md
// (prove) and docs/checks.md (message-race, potential-deadlock) say what
// users see.
//
// Nothing here exposes Z3: verdicts, witnesses and findings are plain values.
//
// JSON report of render_json (`smtrace prove DIR --format json`); keys are
// only ever added, "format_version" is raised when one changes meaning:
//
//   {
//     "schema": "smtrace-prove", "format_version": 1,
//     "tool": {"name": "smtrace", "version": "0.1.0"},
//     "trace": "DIR", "ranks": 3, "complete": true,        // trace complete (every rank finalized)
//     "buffering": "infinite",                            // --buffering
//     "smt_timeout_s": 30,
//     "summary": {"errors": 1, "warnings": 0, "infos": 2, "unknown": 0},
//     "findings": [                                       // check's finding shape, plus verdict and witness;
//                                                         // kinds: message-race, potential-deadlock, and
//                                                         // rma-race (races of another execution)
//       {"kind": "message-race", "severity": "error", "message": "...",
//        "locations": [{"rank": 0, "event": "0:2", "seq": 2, "call": "MPI_Recv", "function": "main",
//                       "file": "a.c", "line": 12, "column": 0, "note": "..."}],
//        "notes": ["..."], "verdict": "sat", "witness": WITNESS or null}
//     ],
//     "questions": [                                      // --can-match / --can-precede, in order
//       {"question": "can-match", "events": ["0:3", "50:1"], "verdict": "sat",  // sat | unsat | unknown
//        "witness": WITNESS or null, "explanation": ["..."], "reason": ""}       // reason: why unknown
//     ],
//     "races": [                                          // every wildcard receive or probe with a choice
//       {"receive": "0:3", "recorded": "2:1",             // recorded: the send it took ("" if none)
//        "alternatives": [{"send": "1:1", "verdict": "sat", "outcome": "harmless", "alone": true}]}
//     ],                                                  // outcome: harmless | deadlock | unmatched | mismatch | unknown
//                                                         // (harmless: no deadlock, no message unreceived)
//     "undecided": ["part 2 of 5 (from 0:17): out of memory (std::bad_alloc)"],  // parts whose solving failed
//     "stats": {"parts": 1, "receives": 3, "sends": 3, "match_pairs": 9, "decision_variables": 3,
//               "assertions": 40, "solver_calls": 4, "unknown": 0, ...}   // sorted by name; may grow
//   }
//
//   WITNESS = {"outcome": "match" | "precede" | "deadlock" | "unmatched" | "harmless",
//              "schedule": [                              // one execution, in order
//                {"step": 0, "action": "call" | "return" | "match" | "blocked",
//                 "event": "1:1", "rank": 1, "seq": 1, "call": "MPI_Send",
//                 "receive": "0:3", "send": "1:1"}],       // receive/send: "match" steps only ("" else)
//              "matches": [{"receive": "0:3", "send": "1:1"}],
//              "cycle": [{"rank": 0, "event": "0:4", "call": "MPI_Recv", "waits_for": [2]}],  // deadlock
//              "replayed": true,                          // the independent replay accepted it
//              "omitted_steps": 0}                        // steps left out at the end: a finding's witness
//                                                         // past the report's budget (docs/cli.md, prove)
//
// Thread safety: prove() and the renderers are reentrant; prove() runs the
// independent parts of a trace on its own threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/finding.hpp"
#include "analyzer/report.hpp"

namespace smtrace::smt {

// How much a standard-mode send may buffer: infinite (it returns at once)
// or zero (it returns only once matched). MPI_Ssend is always zero,
// MPI_Bsend always infinite.
enum class Buffering : uint8_t { infinite, zero };

enum class Verdict : uint8_t { sat, unsat, unknown };

// Return "infinite" or "zero".
std::string_view buffering_name(Buffering buffering);
// Return the buffering named `name`, if any.
std::optional<Buffering> buffering_from_name(std::string_view name);
// Return "sat", "unsat" or "unknown".
std::string_view verdict_name(Verdict verdict);

// A user's ordering question.
enum class QuestionKind : uint8_t {
  can_match,    // can receive (or probe) `a` match send `b` (either order given)?
  can_precede,  // can event `a` return before event `b` is called?
};
struct Question {
  QuestionKind kind = QuestionKind::can_match;
  analyzer::EventRef a, b;
};
// Return "can-match" or "can-precede".
std::string_view question_name(QuestionKind kind);

// How the backend decides, for benchmarks and tests; the defaults are what
// users get. The library reads no environment variable: the CLI maps
// SMTRACE_SMT_GUIDED, SMTRACE_SMT_MEMORY_MB, SMTRACE_SMT_NO_HB_PRUNING and
// SMTRACE_SMT_WITNESS_STEPS to these fields (docs/cli.md).
struct Tuning {
  // Decide by replay before any solver is built: directed replays for
  // can-match, can-precede and race alternatives (guided.hpp), fixed-order
  // runs for deadlocks and for parts without a choice (fixed.hpp). false:
  // every question goes to Z3 (the solver-alone baseline of the benchmarks).
  bool replay = true;
  // Z3's memory cap in MiB, for the whole process (0: none).
  uint32_t z3_memory_mb = 1024;
  // The happens-before rules of the match pairs (match_pairs.hpp).
  bool hb_pruning = true;
  // Steps of race witnesses kept whole, all together: a witness runs from
  // its part's start to the match, so on a long part without cuts one per
  // alternative grows with the square of the part's length (synth wildcard
  // --ranks 5 --events 5k: 24 GB). solve() keeps the runs it makes whole
  // while their steps stay within it (about 20 bytes a step), the head of
  // each after (k_witness_head, solve.hpp); prove()'s report then gives its
  // findings whole witnesses, in report order (errors first), while theirs
  // do (about 90 bytes a step, 130 in JSON), and the first steps after,
  // Witness::omitted saying how many are left out. Verdicts, outcomes and
  // notes are the same.
  uint64_t witness_steps = uint64_t{1} << 20;
};

struct ProveOptions {
  Buffering buffering = Buffering::infinite;
  // Wall-clock budget, in seconds, for all solver work; what is left
  // undecided when it runs out is reported as unknown.
  double smt_timeout_s = 30;
  unsigned threads = 0;      // parts solved in parallel; 0: hardware concurrency
  bool races = true;         // message-race findings
  bool harmless_races = true;  // also report races whose alternatives are harmless (info)
  bool deadlocks = true;     // potential-deadlock findings
  std::vector<Question> questions;
  bool emit_smt2 = false;    // keep the problem in SMT-LIB 2 in ProveResult::smt2
  Tuning tuning;
};

// One step of a witness schedule.
enum class StepAction : uint8_t { call, ret, match, blocked };
// Return "call", "return", "match" or "blocked".
std::string_view step_action_name(StepAction action);

struct Step {
  StepAction action = StepAction::call;
  analyzer::EventRef event;      // match: the receive's posting event
  std::string call;              // "MPI_Recv"
  analyzer::EventRef receive;    // match only: the receive (or probe) and
  analyzer::EventRef send;       //   the send, by their posting events
};

struct MatchRef {
  analyzer::EventRef receive;
  analyzer::EventRef send;
  bool probe = false;            // receive is a probe that saw the send
  auto operator<=>(const MatchRef&) const = default;
};

// A rank stopped for good in a deadlock witness.
struct Blocked {
  analyzer::EventRef event;
  std::string call;
  std::vector<uint32_t> waits_for;  // ranks that could release it
};

// mismatch: a race's alternative match that is erroneous by itself (the
// message does not fit the receive's buffer: MPI-3.1 sections 3.3.1, 3.2.4).
enum class Outcome : uint8_t { match, precede, deadlock, unmatched, harmless, mismatch };
// Return "match", "precede", "deadlock", "unmatched", "harmless" or "mismatch".
std::string_view outcome_name(Outcome outcome);

struct Witness {
  Outcome outcome = Outcome::match;
  std::vector<Step> schedule;
  std::vector<MatchRef> matches;
  std::vector<Blocked> cycle;    // deadlock: the blocked ranks, a wait-for cycle first
  bool replayed = false;         // the independent replay accepted the schedule
  uint64_t omitted = 0;          // steps left out at the end (a finding's witness past
                                 // Tuning::witness_steps; `--can-match` gives it whole)
};

struct Answer {
  Question question;
  Verdict verdict = Verdict::unknown;
  std::optional<Witness> witness;        // sat
  std::vector<std::string> explanation;  // unsat: from the unsat core
  std::string reason;                    // unknown: "timeout", "budget spent", ...
};

// A wildcard receive (or probe) and what else it could have matched.
struct Race {
  analyzer::EventRef receive;
  std::optional<analyzer::EventRef> recorded;
  struct Alternative {
    analyzer::EventRef send;
    Verdict verdict = Verdict::unknown;   // can it match?
    Outcome outcome = Outcome::harmless;  // harmless, deadlock, unmatched, mismatch (sat only)
    bool outcome_known = false;           // false: whether it leads to a bad end is unknown
    bool alone = true;                    // a bad outcome follows from this match alone (every
                                          // other receive keeps its recorded match); false: only
                                          // together with other alternative matches
  };
  std::vector<Alternative> alternatives;
};

struct ProveFinding {
  analyzer::Finding finding;
  Verdict verdict = Verdict::sat;
  std::optional<Witness> witness;
};

struct ProveResult {
  std::string trace;               // the directory as given
  uint32_t world_size = 0;
  bool complete = false;           // the trace: every rank present and finalized
  Buffering buffering = Buffering::infinite;
  double smt_timeout_s = 0;
  std::vector<ProveFinding> findings;   // sorted as check sorts them
  std::vector<Answer> answers;          // one per question, in order
  std::vector<Race> races;
  std::map<std::string, uint64_t> stats;
  uint64_t unknown = 0;                 // questions left undecided
  std::vector<std::string> undecided;   // parts left undecided by a failure, with the reason
  std::string smt2;                     // the problem in SMT-LIB 2 (ProveOptions::emit_smt2 set)
};

// Analyze the trace in `dir` and answer `options`' questions. Throw
// format::TraceError when `dir` holds no trace, std::invalid_argument for a
// question naming an event that does not exist or cannot be asked about.
ProveResult prove(const std::filesystem::path& dir, const ProveOptions& options);

// Write `result` as text: findings as compiler-style diagnostics (as
// check prints them), then each question with its verdict and witness
// schedule, then a SUMMARY line. Written as it is rendered (a report of a
// wildcard trace runs to hundreds of MB); render_text returns the same bytes.
void write_text(std::ostream& out, const ProveResult& result);
std::string render_text(const ProveResult& result);
// Write `result` as the JSON object described at the top of this file, as
// it is rendered; render_json returns the same bytes.
void write_json(std::ostream& out, const ProveResult& result);
std::string render_json(const ProveResult& result);
// Return the first witness of `result` (the first question's, else the
// first finding's) as a Graphviz digraph: the events of the schedule in
// program order per rank, the matches, and the wait-for cycle of a
// deadlock; an empty graph when there is no witness.
std::string render_dot(const ProveResult& result);

// The SMT checks of `smtrace check`: message-race (errors: a race whose
// alternative match deadlocks, alone or together with other alternative
// matches, or alone leaves a message unmatched; warnings: it leaves one
// unmatched only together with other alternative matches) and
// potential-deadlock, within one budget of `smt_timeout_s` seconds for both
// (it starts when the first of them needs the model, after the trace was
// read and replayed, and is a wall: building the model, match pairs,
// replays and Z3 count, reading does not). They share one model of the trace.
struct CheckSettings {
  double smt_timeout_s = 5;
  Buffering buffering = Buffering::infinite;  // message-race (potential-deadlock is always zero)
  Tuning tuning;
};
// Return the factories of the SMT checks, for analyzer::Options::extra_checks.
std::vector<std::function<std::unique_ptr<analyzer::Check>()>> check_factories(const CheckSettings& settings);
// Return the rules (name, severity, description) of the SMT checks.
std::vector<analyzer::RuleInfo> check_rules();

}  // namespace smtrace::smt
