// The SMT encoding of one part of a trace (Huang and Mercer, section 3,
// generalized to MPI; the test against brute force, test_smt_encoder_
// differential.cpp, checks the constraints against semantics.hpp). Variables:
// - P_r: rank r's progress (model.hpp): which events have been called and
//   returned; free for prefixes of executions, pinned for deadlocks;
// - c_r_k, t_r_k: the times of event k's call and return (one for events
//   that do not wait);
// - x_r_s: receive (or probe) r matches (sees) send s, one Boolean per match
//   pair (match_pairs.hpp), so decisions exist only where there is a choice;
// - mu_r: when receive r is matched; nu_s: when send s is (mu of its receive).
// Constraints: program order; a pair only between posted operations and
// after both posts; each receive and each send in at most one pair; an event
// returns only when what it waits for is complete (nearest-enclosing
// completion: the Wait/Test that completes a request); non-overtaking on the
// sender side and the receiver side, with only the nearest earlier operation
// of each envelope (the rest follows by transitivity); collectives through a
// hub per instance; zero buffering behind a literal Z; the terminal state of
// a deadlock behind a literal D (every rank at its end or blocked in a call
// that can never return, and no two pending operations left that the runtime
// could match).
//
// Questions are asked through assumption literals on one incremental
// solver, so a part is encoded once. A tracked encoder names each group of
// constraints so that an unsat core reads as an explanation.
//
// Thread safety: one Encoder per thread (it owns its z3::context).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/prove.hpp"
#include "smt_encoder/semantics.hpp"

namespace smtrace::smt {

enum class BadEnd : uint8_t { deadlock, unmatched, either };

struct SolveOutcome {
  Verdict verdict = Verdict::unknown;
  std::vector<RawStep> steps;            // sat: the execution found, in order
  std::vector<uint32_t> final_pos;       // sat: each rank's progress at its end
  std::vector<std::string> explanation;  // unsat from a tracked encoder: the core, readable
  std::string reason;                    // unknown: Z3's reason ("timeout", "canceled", ...)
};

enum class Track : uint8_t { no, yes };

class Encoder {
 public:
  // Encode `model` with its `pairs`; `channels` indexes the same model.
  // Throw BudgetSpent when encoding takes more than `budget_s` seconds (0:
  // no limit). Z3's memory is capped at `memory_mb` MiB for the whole
  // process (0: no cap; Tuning::z3_memory_mb).
  Encoder(const Model& model, const Channels& channels, const MatchPairs& pairs, Track track = Track::no,
          double budget_s = 0, uint32_t memory_mb = 1024);
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // Return whether receive or probe `recv` can match send `send` in some
  // execution (prefix). `send` must be one of its pairs.
  SolveOutcome can_match(uint32_t recv, uint32_t send, Buffering buffering, double timeout_s);
  // Return whether `recv` can match any of `sends` (its pairs).
  SolveOutcome can_match_any(uint32_t recv, const std::vector<uint32_t>& sends, Buffering buffering,
                             double timeout_s);
  // Return whether event `a` can return before event `b` is called.
  SolveOutcome can_precede(uint32_t a_rank, uint32_t a_event, uint32_t b_rank, uint32_t b_event,
                           Buffering buffering, double timeout_s);
  // Return whether an execution can end in `kind`, with pair `with` (recv,
  // send) matched when given. `recorded_only`: every other receive and probe
  // that has a recorded match takes that one or none (no alternative match),
  // so that the bad end follows from `with` alone.
  SolveOutcome bad_end(BadEnd kind, Buffering buffering, std::optional<std::pair<uint32_t, uint32_t>> with,
                       double timeout_s, bool recorded_only = false);

  // Return the last question asked as a stand-alone SMT-LIB 2 problem: the
  // constraints, the question and the buffering asserted, then
  // (check-sat). Before any question: the constraints alone.
  std::string smt2() const;
  uint64_t assertions() const;
  uint64_t decision_variables() const;
  uint64_t solver_calls() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace smtrace::smt
