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
// The decisions without a solver are held to both (fixed.hpp): with the
// recorded matches fixed, one run decides a zero-buffer deadlock (and with
// one alternative forced, its bad end) as the restricted enumeration and
// Z3's `recorded_only` questions do; on choice-free models one run decides
// whether any bad end is reachable. The match rule's channel index agrees
// with the rule as written (Machine::refuse_by_definition) in every state
// of random runs. Case 6 (no bad end whatever the matches, by an acyclic
// wait-for graph) never claims a model where the enumerator reaches a
// deadlock or an unmatched end, under either buffering, and Z3's whole-part
// question agrees where it claims one.
// SMTRACE_SMT_DIFF_MODELS=N runs N models instead of the default (bench mode).
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <set>

#include <fmt/core.h>

#include "smt_encoder/encoder.hpp"
#include "smt_encoder/fixed.hpp"
#include "smt_encoder/guided.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_model_builder.hpp"

namespace {

using namespace smtrace::test;
using smtrace::smt::Buffering;
using smtrace::smt::Outcome;
using smtrace::smt::Verdict;

constexpr double k_timeout_s = 20;

// The goal "event (ra, ea) returns before event (rb, eb) is called".
smt::Goal precede_goal(uint32_t ra, uint32_t ea, uint32_t rb, uint32_t eb) {
  smt::Goal goal;
  goal.outcome = Outcome::precede;
  goal.a_rank = ra;
  goal.a_event = ea;
  goal.b_rank = rb;
  goal.b_event = eb;
  return goal;
}

uint32_t models_to_run() {
  if (const char* env = std::getenv("SMTRACE_SMT_DIFF_MODELS")) return static_cast<uint32_t>(std::atoi(env));
  return 120;
}

// Return "sat"/"unsat" of `v` for messages.
const char* name(Verdict v) { return v == Verdict::sat ? "sat" : v == Verdict::unsat ? "unsat" : "unknown"; }

struct FixedStats {
  uint64_t deadlock_runs = 0, deadlocks = 0, forced_runs = 0, forced_bad = 0, choice_free = 0;
};

// fixed.hpp on `model` against the restricted enumeration and Z3 (`enc`, the
// same model's encoding): the recorded-match deadlock under zero buffering,
// each wildcard alternative's bad end alone, and choice-free models.
void fixed_order_agrees(const smt::Model& model, const smt::MatchPairs& pairs, smt::Encoder& enc,
                        Buffering buffering, FixedStats& stats) {
  const smt::Machine machine(model, buffering);
  if (smt::choice_free(machine)) {
    ++stats.choice_free;
    const smt::Exploration ex = smt::explore(model, buffering, 500'000);
    const smt::RunResult run = smt::free_run(machine, pairs);
    INFO("choice-free run");
    if (!ex.truncated) CHECK(smt::bad_end(machine, run.state) == (ex.deadlock || ex.unmatched));
  }
  if (!smt::matches_recorded(model, pairs)) return;
  auto recorded = [&](uint32_t r, uint32_t s) { return model.ops[r].recorded == k_none || model.ops[r].recorded == s; };
  {
    const smt::Machine zero(model, Buffering::zero);
    const smt::RunResult run = smt::fixed_run(zero);
    REQUIRE(!run.stopped);
    const bool dead = zero.deadlocked(run.state);
    ++stats.deadlock_runs;
    stats.deadlocks += dead;
    const smt::Exploration ex = smt::explore(model, Buffering::zero, 500'000, recorded);
    INFO("recorded matches, zero buffering: run ", dead);
    if (!ex.truncated) CHECK(dead == ex.deadlock);
    const smt::SolveOutcome z3 = enc.bad_end(smt::BadEnd::deadlock, Buffering::zero, std::nullopt, k_timeout_s, true);
    CHECK(z3.verdict == (dead ? Verdict::sat : Verdict::unsat));
    if (dead) {
      smt::Goal goal;
      goal.outcome = Outcome::deadlock;
      CHECK(smt::check_schedule(zero, run.steps, goal) == "");
    }
  }
  for (uint32_t r = 0; r < model.ops.size(); ++r) {
    const smt::Op& o = model.ops[r];
    if ((o.kind != smt::OpKind::recv && o.kind != smt::OpKind::probe) || o.probe != k_none) continue;
    for (uint32_t s : pairs.sends[r]) {
      if (s == o.recorded) continue;
      const smt::RunResult run = smt::fixed_run(machine, std::pair{r, s});
      REQUIRE(!run.stopped);
      const bool bad = run.state.partner[r] == s && smt::bad_end(machine, run.state);
      ++stats.forced_runs;
      stats.forced_bad += bad;
      const smt::Exploration ex = smt::explore(model, buffering, 500'000, [&](uint32_t r2, uint32_t s2) {
        return r2 == r ? s2 == s : recorded(r2, s2);
      });
      INFO("alone: ", model.post_ref(r).str(), " takes ", model.post_ref(s).str(), ", run ", bad);
      if (!ex.truncated) CHECK(bad == (ex.bad_pairs.count({r, s}) > 0));
      const smt::SolveOutcome z3 = enc.bad_end(smt::BadEnd::either, buffering, std::pair{r, s}, k_timeout_s, true);
      CHECK(z3.verdict == (bad ? Verdict::sat : Verdict::unsat));
      if (bad) {
        smt::Goal goal;
        goal.outcome = machine.deadlocked(run.state) ? Outcome::deadlock : Outcome::unmatched;
        CHECK(smt::check_schedule(machine, run.steps, goal) == "");
      }
    }
  }
}

}  // namespace

TEST_CASE("smt differential: Z3 agrees with the brute-force enumerator on random small traces") {
  std::mt19937 rng(20261123);
  const uint32_t n = models_to_run();
  uint64_t questions = 0, sat = 0, explored = 0, guided = 0;
  FixedStats stats;
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
    fixed_order_agrees(model, pairs, enc, buffering, stats);
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
        const smt::Goal goal = precede_goal(ra, ea, rb, eb);
        CHECK(smt::check_schedule(model, buffering, out.steps, goal) == "");
      }
      // The directed replay holds rank b back until a returned: only feasible orders, replayed.
      if (auto steps = smt::guided_precede(machine, pairs, ra, ea, rb, eb)) {
        ++guided;
        CHECK(expected);
        const smt::Goal goal = precede_goal(ra, ea, rb, eb);
        CHECK(smt::check_schedule(machine, *steps, goal) == "");
      }
    }
  }
  MESSAGE(fmt::format("{} models, {} questions ({} sat, {} of them found by the directed replay too), {} states explored; "
                      "fixed order: {} deadlock runs ({} deadlocks), {} forced runs ({} bad), {} choice-free models",
                      n, questions, sat, guided, explored, stats.deadlock_runs, stats.deadlocks, stats.forced_runs,
                      stats.forced_bad, stats.choice_free));
  CHECK(guided > 0);
  CHECK(questions > 0);
  CHECK(stats.deadlocks > 0);
  CHECK(stats.forced_bad > 0);
  CHECK(stats.choice_free > 0);
}

TEST_CASE("smt differential: one run decides choice-free models (random programs, one tag or no MPI_ANY_TAG)") {
  std::mt19937 rng(20261201);
  const uint32_t n = models_to_run();
  FixedStats stats;
  uint64_t bad = 0, decided = 0, cover_runs = 0;
  for (uint32_t i = 0; i < n; ++i) {
    smt::Model model = random_model(rng, 2 + i % 3, 2 + (i / 3) % 5,
                                    i % 2 == 0 ? RandomStyle::one_tag : RandomStyle::tag_classes);
    for (const Buffering buffering : {Buffering::infinite, Buffering::zero}) {
      const smt::Machine machine(model, buffering);
      if (!smt::choice_free(machine)) continue;
      const smt::Exploration ex = smt::explore(model, buffering, 500'000);
      if (ex.truncated) continue;
      INFO("model ", i, " buffering ", smt::buffering_name(buffering));
      ++stats.choice_free;
      const smt::Channels ch(model);
      const smt::MatchPairs pairs = smt::match_pairs(model, ch, smt::find_cuts(model));
      const smt::RunResult run = smt::free_run(machine, pairs);
      REQUIRE(!run.stopped);
      const bool run_bad = smt::bad_end(machine, run.state);
      CHECK(run_bad == (ex.deadlock || ex.unmatched));
      bad += run_bad;
      smt::Encoder enc(model, ch, pairs);
      const smt::SolveOutcome any = enc.bad_end(smt::BadEnd::either, buffering, std::nullopt, k_timeout_s);
      CHECK(any.verdict == (run_bad ? Verdict::sat : Verdict::unsat));
      // Case 3: which sends each receive of an interchangeable endpoint can take.
      smt::InterchangeableMatches matches(machine, pairs);
      for (uint32_t r = 0; r < model.ops.size(); ++r) {
        for (uint32_t s = 0; s < model.ops.size(); ++s) {
          if (model.ops[s].kind != smt::OpKind::send) continue;
          const Verdict v = matches.can_match(r, s);
          if (v == Verdict::unknown) continue;
          ++decided;
          INFO("interchangeable: ", model.post_ref(r).str(), " takes ", model.post_ref(s).str(), ": ", name(v));
          CHECK(v == (ex.pairs.count({r, s}) ? Verdict::sat : Verdict::unsat));
          if (v != Verdict::sat) continue;
          const auto steps = matches.witness(r, s);
          REQUIRE(steps);
          smt::Goal goal;
          goal.recv = r;
          goal.send = s;
          CHECK(smt::check_schedule(machine, *steps, goal) == "");
        }
      }
      // Case 4: every covering round is an execution, whatever pairs it is told were given.
      for (uint32_t r = 0; r < model.ops.size(); ++r) {
        const uint32_t rounds = matches.cover_rounds(r);
        std::set<std::pair<uint32_t, uint32_t>> given;
        for (uint32_t round = 0; round < 2 * rounds; ++round) {  // both orders of the other channels
          const auto steps = matches.cover_run(r, round, [&](uint32_t a, uint32_t b) { return given.count({a, b}) > 0; });
          REQUIRE(steps);
          ++cover_runs;
          smt::Goal goal;
          for (const smt::RawStep& step : *steps) {
            if (step.action != smt::StepAction::match) continue;
            CHECK(ex.pairs.count({step.recv, step.send}) == 1);
            given.insert({step.recv, step.send});
            goal.recv = step.recv;
            goal.send = step.send;
          }
          CHECK(smt::check_schedule(machine, *steps, goal) == "");
        }
      }
    }
  }
  MESSAGE(fmt::format("{} choice-free models, {} of them with a bad end; {} interchangeable pairs decided, {} covering "
                      "runs replayed", stats.choice_free, bad, decided, cover_runs));
  CHECK(cover_runs > 0);
  CHECK(decided > 0);
  CHECK(stats.choice_free > n / 4);
}

TEST_CASE("smt differential: the match rule's channel index agrees with the rule as written") {
  std::mt19937 rng(20261202);
  uint64_t checked = 0;
  for (uint32_t i = 0; i < models_to_run() / 3; ++i) {
    const smt::Model model = random_model(rng, 2 + i % 2, 2 + (i / 2) % 5);
    for (const Buffering buffering : {Buffering::infinite, Buffering::zero}) {
      const smt::Machine machine(model, buffering);
      smt::Machine::State state = machine.initial();
      std::vector<smt::RawStep> steps;
      for (;;) {
        for (uint32_t r = 0; r < model.ops.size(); ++r) {
          for (uint32_t s = 0; s < model.ops.size(); ++s) {
            const smt::RawStep step{smt::StepAction::match, 0, 0, r, s};
            INFO("model ", i, " match ", r, " ", s);
            CHECK(machine.refuse(state, step).empty() == machine.refuse_by_definition(state, step).empty());
            ++checked;
          }
        }
        steps.clear();
        machine.enabled(state, steps);
        CHECK(machine.any_step(state) == !steps.empty());
        if (steps.empty()) break;
        machine.apply(state, steps[std::uniform_int_distribution<std::size_t>(0, steps.size() - 1)(rng)]);
      }
    }
  }
  MESSAGE(fmt::format("{} match steps checked", checked));
}

TEST_CASE("smt differential: the counting bounds never refuse a pair the enumerator reaches (fixed.hpp, case 5)") {
  std::mt19937 rng(20261124);
  const uint32_t n = models_to_run();
  uint64_t asked = 0, refused = 0, planned = 0, dropped = 0, bad_ends = 0;
  uint64_t refused_by_buffering[2] = {0, 0};
  for (uint32_t i = 0; i < n; ++i) {
    const RandomStyle style = i % 3 == 0 ? RandomStyle::mixed : i % 3 == 1 ? RandomStyle::one_tag : RandomStyle::tag_classes;
    const smt::Model model = random_model(rng, 2 + i % 3, 3 + (i / 3) % 5, style);
    const smt::Channels ch(model);
    const smt::MatchPairs pairs = smt::match_pairs(model, ch, smt::find_cuts(model));
    for (const Buffering buffering : {Buffering::infinite, Buffering::zero}) {
      const smt::Exploration ex = smt::explore(model, buffering, 500'000);
      if (ex.truncated) continue;
      INFO("model ", i, " buffering ", smt::buffering_name(buffering));
      const smt::Machine machine(model, buffering);
      smt::CountingBounds counting(machine, pairs);
      for (uint32_t r = 0; r < model.ops.size(); ++r) {
        for (uint32_t s : pairs.sends[r]) {
          ++asked;
          const bool reachable = ex.pairs.count({r, s}) > 0;
          INFO(model.post_ref(r).str(), " takes ", model.post_ref(s).str(), reachable ? " (reachable)" : "");
          if (counting.can_match(r, s) == Verdict::unsat) {
            CHECK_FALSE(reachable);
            ++refused;
            ++refused_by_buffering[buffering == Buffering::zero ? 1 : 0];
            continue;
          }
          // A planned run is an execution that has the pair.
          const auto steps = counting.planned_run(r, s);
          if (!steps) continue;
          ++planned;
          smt::Goal goal;
          goal.recv = r;
          goal.send = s;
          CHECK(smt::check_schedule(machine, *steps, goal) == "");
          CHECK(reachable);
          // Runs that go on after the match: executions with it, and a bad end only where one is reachable.
          for (uint32_t then = 0; then < counting.channels(r); ++then) {
            const auto more = counting.planned_run(r, s, then);
            if (!more) continue;
            CHECK(smt::check_schedule(machine, *more, goal) == "");
            for (const Outcome outcome : {Outcome::deadlock, Outcome::unmatched}) {
              smt::Goal bad;
              bad.outcome = outcome;
              if (smt::check_schedule(machine, *more, bad).empty()) {
                CHECK(ex.bad_pairs.count({r, s}) == 1);
                ++bad_ends;
              }
            }
          }
        }
      }
      if (const auto fewer = counting.surviving_pairs()) {
        dropped += pairs.pairs - fewer->pairs;
        for (uint32_t r = 0; r < model.ops.size(); ++r) {
          for (uint32_t s : pairs.sends[r]) {
            if (ex.pairs.count({r, s})) CHECK(fewer->find(r, s) != smtrace::smt::k_none);
          }
        }
      }
    }
  }
  MESSAGE(fmt::format("{} pairs asked, {} refused by counting ({} infinite, {} zero buffering), {} planned runs "
                      "replayed ({} going on to a bad end), {} pairs dropped",
                      asked, refused, refused_by_buffering[0], refused_by_buffering[1], planned, bad_ends, dropped));
  CHECK(refused_by_buffering[1] > 0);
  CHECK(planned > 0);
}

TEST_CASE("smt differential: no bad end by an acyclic wait-for graph only where the enumerator finds none (case 6)") {
  std::mt19937 rng(20261125);
  const uint32_t n = models_to_run();
  uint64_t models = 0, proved = 0, bad = 0, proved_by_buffering[2] = {0, 0};
  for (uint32_t i = 0; i < n; ++i) {
    const RandomStyle style = i % 3 == 0 ? RandomStyle::mixed : i % 3 == 1 ? RandomStyle::one_tag : RandomStyle::tag_classes;
    const smt::Model model = random_model(rng, 2 + i % 3, 2 + (i / 3) % 8, style);
    for (const Buffering buffering : {Buffering::infinite, Buffering::zero}) {
      const smt::Exploration ex = smt::explore(model, buffering, 500'000);
      if (ex.truncated) continue;
      ++models;
      const bool any_bad = ex.deadlock || ex.unmatched;
      bad += any_bad;
      const smt::Machine machine(model, buffering);
      if (!smt::no_bad_end(machine)) continue;
      INFO("model ", i, " buffering ", smt::buffering_name(buffering));
      CHECK_FALSE(any_bad);
      ++proved;
      ++proved_by_buffering[buffering == Buffering::zero ? 1 : 0];
      if (proved % 8 == 0) {  // Z3 agrees (a sample: each whole-part question costs a solver call)
        const smt::Channels ch(model);
        const smt::MatchPairs pairs = smt::match_pairs(model, ch, smt::find_cuts(model));
        smt::Encoder enc(model, ch, pairs);
        CHECK(enc.bad_end(smt::BadEnd::either, buffering, std::nullopt, k_timeout_s).verdict == Verdict::unsat);
      }
    }
  }
  MESSAGE(fmt::format("{} models explored, {} with a bad end; case 6 proved {} harmless ({} infinite, {} zero buffering)",
                      models, bad, proved, proved_by_buffering[0], proved_by_buffering[1]));
  CHECK(bad > 0);
  CHECK(proved_by_buffering[0] > 0);
  CHECK(proved_by_buffering[1] > 0);
}

TEST_CASE("smt differential: forced runs from a shared prefix end where runs from the start do (fixed.hpp, case 1)") {
  std::mt19937 rng(20261126);
  const uint32_t n = models_to_run();
  uint64_t models = 0, runs = 0, bad = 0, later = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const RandomStyle style = i % 3 == 0 ? RandomStyle::mixed : i % 3 == 1 ? RandomStyle::one_tag : RandomStyle::tag_classes;
    const smt::Model model = random_model(rng, 2 + i % 3, 2 + (i / 3) % 8, style);
    const smt::Channels ch(model);
    const smt::MatchPairs pairs = smt::match_pairs(model, ch, smt::find_cuts(model));
    if (!smt::matches_recorded(model, pairs)) continue;
    std::vector<uint32_t> receives;
    for (uint32_t r = 0; r < model.ops.size(); ++r) {
      const smt::Op& o = model.ops[r];
      if ((o.kind == smt::OpKind::recv || o.kind == smt::OpKind::probe) && o.probe == k_none) receives.push_back(r);
    }
    auto recorded = [&](uint32_t r, uint32_t s) { return model.ops[r].recorded == k_none || model.ops[r].recorded == s; };
    for (const Buffering buffering : {Buffering::infinite, Buffering::zero}) {
      ++models;
      const smt::Machine machine(model, buffering);
      const smt::RunResult base = smt::fixed_run(machine);
      REQUIRE(!base.stopped);
      uint64_t expected = 0;
      for (uint32_t r : receives) {
        for (uint32_t s : pairs.sends[r]) expected += s != model.ops[r].recorded;
      }
      uint64_t visited = 0;
      const bool through = smt::forced_runs(machine, pairs, receives, base, [&](uint32_t r, uint32_t s, std::size_t prefix,
                                                                               const smt::Machine::State& start,
                                                                               const smt::RunResult& run) {
        ++visited;
        INFO("model ", i, " buffering ", smt::buffering_name(buffering), ": ", model.post_ref(r).str(), " takes ",
             model.post_ref(s).str(), " after ", prefix, " steps");
        later += prefix > 0;
        // The same final state as the run from the initial state.
        const smt::RunResult scratch = smt::fixed_run(machine, std::pair{r, s});
        CHECK(run.state == scratch.state);
        // The prefix then the run replay from the initial state, the run alone from `start`.
        std::vector<smt::RawStep> steps(base.steps.begin(), base.steps.begin() + static_cast<std::ptrdiff_t>(prefix));
        steps.insert(steps.end(), run.steps.begin(), run.steps.end());
        smt::Goal goal;
        const bool taken = run.state.partner[r] == s;
        const bool is_bad = taken && smt::bad_end(machine, run.state);
        if (is_bad) goal.outcome = machine.deadlocked(run.state) ? Outcome::deadlock : Outcome::unmatched;
        goal.recv = taken ? r : k_none;
        goal.send = s;
        if (taken) {
          CHECK(smt::check_schedule(machine, steps, goal) == "");
          CHECK(smt::check_schedule(machine, start, run.steps, goal) == "");
        }
        // The enumerator with every other receive keeping its recorded match.
        const smt::Exploration ex = smt::explore(model, buffering, 500'000, [&](uint32_t r2, uint32_t s2) {
          return r2 == r ? s2 == s : recorded(r2, s2);
        });
        if (!ex.truncated) CHECK(is_bad == (ex.bad_pairs.count({r, s}) > 0));
        ++runs;
        bad += is_bad;
        return true;
      });
      CHECK(through);
      CHECK(visited == expected);
    }
  }
  MESSAGE(fmt::format("{} models with recorded matches, {} forced runs from a shared prefix ({} after a non-empty "
                      "one), {} ending badly",
                      models, runs, later, bad));
  CHECK(runs > 0);
  CHECK(later > 0);
  CHECK(bad > 0);
}
