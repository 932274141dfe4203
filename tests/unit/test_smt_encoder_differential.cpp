// Differential test of the SMT encoding against brute force (the seed's
// Theorems 1 and 2): on random small programs (2-3 ranks, up to 6
// messages: blocking, non-blocking and synchronous sends, receives from any
// source or with any tag, probes, barriers) the exhaustive enumerator of
// semantics.hpp explores every reachable state. Then
// - every pair matched in some state is a match pair (over-approximation),
// - Z3's can-match is sat exactly for the pairs the enumerator saw,
// - a deadlock / an unmatched end is sat exactly when the enumerator found one,
// - can-precede agrees on random event pairs,
// and every sat witness replays on the reference semantics. The directed
// replay (guided.hpp) is held to the same: it may miss a feasible pair,
// never claim an infeasible one, and its schedules replay.
// SMTRACE_SMT_DIFF_MODELS=N runs N models instead of the default (bench mode).
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include <fmt/core.h>

#include "smt_encoder/encoder.hpp"
#include "smt_encoder/guided.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_model_builder.hpp"

namespace {

using namespace smtrace::test;
using smtrace::smt::Buffering;
using smtrace::smt::Outcome;
using smtrace::smt::Verdict;

constexpr double k_timeout_s = 20;

uint32_t models_to_run() {
  if (const char* env = std::getenv("SMTRACE_SMT_DIFF_MODELS")) return static_cast<uint32_t>(std::atoi(env));
  return 120;
}

// Return "sat"/"unsat" of `v` for messages.
const char* name(Verdict v) { return v == Verdict::sat ? "sat" : v == Verdict::unsat ? "unsat" : "unknown"; }

}  // namespace

TEST_CASE("smt differential: Z3 agrees with the brute-force enumerator on random small traces") {
  std::mt19937 rng(20261123);
  const uint32_t n = models_to_run();
  uint64_t questions = 0, sat = 0, explored = 0, guided = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t ranks = 2 + i % 2;
    const uint32_t messages = 2 + (i / 2) % 5;
    smt::Model model = random_model(rng, ranks, messages);
    const Buffering buffering = i % 3 == 0 ? Buffering::zero : Buffering::infinite;
    const smt::Exploration ex = smt::explore(model, buffering, 500'000);
    if (ex.truncated) continue;
    explored += ex.states;
    const smt::Channels ch(model);
    const auto cuts = smt::find_cuts(model);
    const smt::MatchPairs pairs = smt::match_pairs(model, ch, cuts);
    INFO("model ", i, " buffering ", smt::buffering_name(buffering));
    // Theorem 1: the match pairs contain every feasible pair.
    for (const auto& [r, s] : ex.pairs) {
      INFO("feasible pair ", model.post_ref(r).str(), " <- ", model.post_ref(s).str());
      CHECK(pairs.find(r, s) != k_none);
    }
    smt::Encoder enc(model, ch, pairs);
    const smt::Machine machine(model, buffering);
    for (uint32_t r = 0; r < model.ops.size(); ++r) {
      for (uint32_t s : pairs.sends[r]) {
        const smt::SolveOutcome out = enc.can_match(r, s, buffering, k_timeout_s);
        ++questions;
        const bool expected = ex.pairs.count({r, s}) > 0;
        INFO("can-match ", model.post_ref(r).str(), " ", model.post_ref(s).str(), ": ", name(out.verdict));
        CHECK(out.verdict == (expected ? Verdict::sat : Verdict::unsat));
        smt::Goal goal;
        goal.recv = r;
        goal.send = s;
        if (out.verdict == Verdict::sat) {
          ++sat;
          CHECK(smt::check_schedule(model, buffering, out.steps, goal) == "");
        }
        // The directed replay (guided.hpp) claims only feasible pairs, with a schedule that replays.
        if (auto steps = smt::guided_match(machine, pairs, r, s)) {
          ++guided;
          CHECK(expected);
          CHECK(smt::check_schedule(model, buffering, *steps, goal) == "");
        }
      }
    }
    const struct {
      smt::BadEnd kind;
      Outcome outcome;
      bool expected;
    } ends[] = {{smt::BadEnd::deadlock, Outcome::deadlock, ex.deadlock},
                {smt::BadEnd::unmatched, Outcome::unmatched, ex.unmatched}};
    for (const auto& end : ends) {
      const smt::SolveOutcome out = enc.bad_end(end.kind, buffering, std::nullopt, k_timeout_s);
      ++questions;
      INFO(smt::outcome_name(end.outcome), ": ", name(out.verdict));
      CHECK(out.verdict == (end.expected ? Verdict::sat : Verdict::unsat));
      if (out.verdict == Verdict::sat) {
        ++sat;
        smt::Goal goal;
        goal.outcome = end.outcome;
        CHECK(smt::check_schedule(model, buffering, out.steps, goal) == "");
      }
    }
    for (int k = 0; k < 3; ++k) {
      auto pick = [&](uint32_t m) { return std::uniform_int_distribution<uint32_t>(0, m - 1)(rng); };
      const uint32_t ra = pick(ranks), rb = pick(ranks);
      if (model.ranks[ra].events.empty() || model.ranks[rb].events.empty()) continue;
      const uint32_t ea = pick(static_cast<uint32_t>(model.ranks[ra].events.size()));
      const uint32_t eb = pick(static_cast<uint32_t>(model.ranks[rb].events.size()));
      const smt::SolveOutcome out = enc.can_precede(ra, ea, rb, eb, buffering, k_timeout_s);
      ++questions;
      const bool expected = ex.can_precede(model, ra, ea, rb, eb);
      INFO("can-precede ", model.ref(ra, ea).str(), " ", model.ref(rb, eb).str(), ": ", name(out.verdict));
      CHECK(out.verdict == (expected ? Verdict::sat : Verdict::unsat));
      if (out.verdict == Verdict::sat) {
        ++sat;
        smt::Goal goal;
        goal.outcome = Outcome::precede;
        goal.a_rank = ra;
        goal.a_event = ea;
        goal.b_rank = rb;
        goal.b_event = eb;
        CHECK(smt::check_schedule(model, buffering, out.steps, goal) == "");
      }
    }
  }
  MESSAGE(fmt::format("{} models, {} questions ({} sat, {} of them found by the directed replay too), {} states explored",
                      n, questions, sat, guided, explored));
  CHECK(guided > 0);
  CHECK(questions > 0);
}
