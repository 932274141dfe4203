// A directed replay that looks for a witness before any solver is built:
// the model's executions are run forward under a policy that steers one
// receive to the send a question asks about and lets everything else
// progress (every other receive taking its recorded message when it can,
// else another candidate). A schedule it finds is a witness like the
// solver's: check_schedule (semantics.hpp) replays it to the goal before it
// is used. When the policy gets stuck nothing is claimed and the question
// goes to Z3 (the search is incomplete by design; unsat answers and the
// hard cases are the solver's).
//
// Why: for the questions users ask first ("can this receive take that
// message?") a witness usually exists and is easy to build; encoding every
// match pair of a large part to find it costs far more (the senders
// benchmark's K = 1000 has a million pairs). The solver's own figures are
// measured with SMTRACE_SMT_GUIDED=0 (bench/smt_senders.sh).
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/semantics.hpp"

namespace smtrace::smt {

// Return a schedule of `model` (whose match pairs are `pairs`) that ends
// with receive or probe `recv` matched to `send`, or nothing when the
// directed replay gets stuck or spends `max_steps` steps. Not checked
// here: callers replay it (check_schedule) before using it.
std::optional<std::vector<RawStep>> guided_match(const Model& model, const MatchPairs& pairs, Buffering buffering,
                                                 uint32_t recv, uint32_t send, uint64_t max_steps = 1'000'000);

// Return false when SMTRACE_SMT_GUIDED=0 is set (benchmarks of the solver alone).
bool guided_enabled();

}  // namespace smtrace::smt
