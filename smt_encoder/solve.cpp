// Races, deadlocks and questions over the parts of a model; see solve.hpp.
#include "smt_encoder/solve.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <fmt/core.h>

#include "smt_encoder/encoder.hpp"
#include "smt_encoder/fixed.hpp"
#include "smt_encoder/guided.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/parts.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::smt {

namespace {

using Clock = std::chrono::steady_clock;

// Runs planned on the counting bounds per alternative looking for a bad end
// after its match, one per preferred channel, at most.
constexpr uint32_t k_planned_bad_runs = 4;

// The wall-clock budget shared by everything one solve() does.
class Budget {
 public:
  explicit Budget(double seconds)
      : m_end(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))) {}
  // Return the seconds left (0 when spent).
  double left() const { return std::max(0.0, std::chrono::duration<double>(m_end - Clock::now()).count()); }
  // Return the seconds one of many solver questions may take: a quarter of
  // what is left, at least a second, so that one hard question does not
  // starve the others.
  double slice() const { return std::min(left(), std::max(1.0, left() / 4)); }
  bool spent() const { return Clock::now() >= m_end; }
  Clock::time_point deadline() const { return m_end; }

 private:
  Clock::time_point m_end;
};

HbRules hb_rules(const Tuning& tuning) { return tuning.hb_pruning ? HbRules::on : HbRules::off; }

// Return why a part's solving failed, from the exception it threw.
std::string failure_reason(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::logic_error& e) {
    return fmt::format("internal error: {}", e.what());
  } catch (const std::exception& e) {
    return fmt::format("the solver failed: {}", e.what());
  } catch (...) {
    return "an exception of unknown type";
  }
}


// One part with what its questions need, each made on first use: the
// reference semantics per buffering, and one Z3 encoding shared by every
// question (questions are assumption literals, encoder.hpp). Not movable:
// the Machines and the Encoder refer to the part's model.
class PartSolver {
 public:
  // `whole`: the match pairs of the model the part was taken from.
  PartSolver(Part part, const MatchPairs& whole, const Tuning& tuning)
      : m_part(std::move(part)), m_tuning(tuning), m_channels(m_part.model), m_pairs(restrict_pairs(whole, m_part)) {}
  PartSolver(const PartSolver&) = delete;
  PartSolver& operator=(const PartSolver&) = delete;

  const Part& part() const { return m_part; }
  const Model& model() const { return m_part.model; }
  const MatchPairs& pairs() const { return m_pairs; }

  const Machine& machine(Buffering buffering) {
    auto& slot = m_machines[buffering == Buffering::zero ? 1 : 0];
    if (!slot) slot = std::make_unique<Machine>(m_part.model, buffering);
    return *slot;
  }

  // Return the encoding, made on first use; throw BudgetSpent when making
  // it runs past the budget.
  Encoder& encoder(const Budget& budget) { return make(m_encoder, Track::no, budget); }
  // Return an encoding whose unsat cores name constraints (explanations).
  Encoder& tracked(const Budget& budget) { return make(m_tracked, Track::yes, budget); }
  // Return the encoding if one was made.
  const Encoder* made() const { return m_encoder.get(); }
  // Encode `pairs` (fewer than pairs(), and still every pair an execution
  // under the buffering of every question to come can have) instead of
  // pairs(); only before an encoding is made.
  void encode_fewer(MatchPairs pairs) {
    if (!m_encoder && !m_tracked) m_encoded = std::move(pairs);
  }

  // Return what the encoding answers `question`; nothing when the budget
  // runs out or the solver fails (then it is asked nothing more: failure()).
  std::optional<SolveOutcome> ask(const Budget& budget, const std::function<SolveOutcome(Encoder&)>& question) {
    if (!m_failure.empty()) return std::nullopt;
    try {
      return question(encoder(budget));
    } catch (const BudgetSpent&) {
      return std::nullopt;
    } catch (...) {
      m_failure = failure_reason(std::current_exception());
      return std::nullopt;
    }
  }
  // Return why the solver failed on this part (empty: it did not).
  const std::string& failure() const { return m_failure; }

  // Return the witness of `steps` (by the part's indices) in whole-model
  // indices if the schedule replays to `goal`, else nothing.
  std::shared_ptr<RawWitness> witness(const std::vector<RawStep>& steps, const Goal& goal, Buffering buffering) {
    if (!check_schedule(machine(buffering), steps, goal).empty()) return nullptr;
    return checked_witness(steps, goal, buffering);
  }
  // As witness(), for `steps` the caller replayed to `goal` itself, ending
  // in `end` when given (else replayed again for a deadlock's blocked ranks).
  std::shared_ptr<RawWitness> checked_witness(const std::vector<RawStep>& steps, const Goal& goal,
                                              Buffering buffering, const Machine::State* end = nullptr) {
    auto w = std::make_shared<RawWitness>();
    w->outcome = goal.outcome;
    w->replayed = true;
    w->steps.reserve(steps.size());
    for (RawStep s : steps) {
      s.event += m_part.first[s.rank];
      if (s.recv != k_none) s.recv = m_part.op_of[s.recv];
      if (s.send != k_none) s.send = m_part.op_of[s.send];
      w->steps.push_back(s);
    }
    if (goal.outcome == Outcome::deadlock) {
      w->cycle = end ? blocked_ranks(machine(buffering), *end) : blocked_ranks(m_part.model, buffering, steps);
      for (RawBlocked& b : w->cycle) b.event += m_part.first[b.rank];
    }
    if (goal.outcome == Outcome::deadlock || goal.outcome == Outcome::unmatched || goal.outcome == Outcome::precede) {
      if (const auto reuse = find_status_reuse(m_part.model, steps)) w->reuse = whole(*reuse);
    }
    if (m_kept && w->steps.size() > k_witness_head) {
      // Past the budget only the head is kept (the schedule replayed whole above).
      const uint64_t size = w->steps.size();
      if (m_kept->fetch_add(size) + size > m_keep_limit) {
        m_kept->fetch_sub(size);
        w->omitted = size - k_witness_head;
        w->steps.resize(k_witness_head);
        w->steps.shrink_to_fit();
      }
    }
    return w;
  }
  // Return `reuse` (by the part's ops) by whole-model ops.
  StatusReuse whole(const StatusReuse& reuse) const {
    return {m_part.op_of[reuse.op], m_part.op_of[reuse.receive], reuse.source};
  }
  // From now on keep the steps of the witnesses made here whole only while
  // `kept` (shared by the parts of one solve) stays within `limit`; after,
  // a witness keeps its first k_witness_head steps (RawWitness::omitted).
  void cut_witnesses(std::atomic<uint64_t>& kept, uint64_t limit) {
    m_kept = &kept;
    m_keep_limit = limit;
  }
  // Return the witness of a bad end, deadlock or unmatched, if `steps` replay to one.
  std::shared_ptr<RawWitness> bad_witness(const std::vector<RawStep>& steps, Buffering buffering) {
    Goal goal;
    goal.outcome = Outcome::deadlock;
    if (auto w = witness(steps, goal, buffering)) return w;
    goal.outcome = Outcome::unmatched;
    return witness(steps, goal, buffering);
  }

 private:
  Encoder& make(std::unique_ptr<Encoder>& slot, Track track, const Budget& budget) {
    if (!slot) {
      if (budget.spent()) throw BudgetSpent();
      slot = std::make_unique<Encoder>(m_part.model, m_channels, m_encoded ? *m_encoded : m_pairs, track,
                                       std::max(budget.left(), 0.001), m_tuning.z3_memory_mb);
    }
    return *slot;
  }

  Part m_part;
  Tuning m_tuning;
  Channels m_channels;
  MatchPairs m_pairs;
  std::optional<MatchPairs> m_encoded;  // encode_fewer
  std::unique_ptr<Machine> m_machines[2];
  std::unique_ptr<Encoder> m_encoder, m_tracked;
  std::string m_failure;
  std::atomic<uint64_t>* m_kept = nullptr;  // cut_witnesses
  uint64_t m_keep_limit = 0;
};

bool any_rank_stopped(const Model& model) {
  return std::any_of(model.ranks.begin(), model.ranks.end(), [](const RankEvents& r) { return r.limit % 2 == 1; });
}

// What one part found, merged into the Solution under a lock.
struct PartFindings {
  std::vector<RawRace> races;
  std::vector<RawWitness> deadlocks;
  uint64_t unknown = 0;
  std::map<std::string, uint64_t> stats;
};

// Return true when receive or probe `r` is a nondeterministic choice point.
bool is_wildcard(const Op& r) {
  return (r.kind == OpKind::recv || r.kind == OpKind::probe) && r.probe == k_none &&
         (r.peer == k_any || r.tag == k_any);
}

// Return the steps of `steps` up to and with the one where `recv` takes
// `send` (all of them when there is none).
uint64_t match_steps(const std::vector<RawStep>& steps, uint32_t recv, uint32_t send) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].action == StepAction::match && steps[i].recv == recv && steps[i].send == send) return i + 1;
  }
  return steps.size();
}

// Which alternatives of a part's wildcard receives some replayed run
// witnessed, and those left per receive: what the next runs try first.
class Coverage {
 public:
  Coverage(const Model& model, const MatchPairs& pairs, const std::vector<uint32_t>& wildcards)
      : m_pairs(pairs), m_next(model.ops.size()), m_witness(model.ops.size()), m_steps(model.ops.size()) {
    for (uint32_t r : wildcards) {
      const auto& cands = pairs.sends[r];
      m_witness[r].resize(cands.size());
      m_steps[r].resize(cands.size());
      m_next[r].resize(cands.size() + 1);
      for (uint32_t k = 0; k <= cands.size(); ++k) m_next[r][k] = k;
      if (const uint32_t k = pairs.find(r, model.ops[r].recorded); k != k_none) m_next[r][k] = k + 1;
    }
  }
  // Offer `recv` its alternatives no run witnessed yet, in candidate order
  // from index `from` on (cyclically), until `take` takes one.
  bool offer(uint32_t recv, uint32_t from, const RunPolicy::Take& take) {
    const auto n = static_cast<uint32_t>(m_witness[recv].size());
    if (n == 0) return false;
    from %= n;
    for (uint32_t k = find(recv, from); k < n; k = find(recv, k + 1)) {
      if (take(m_pairs.sends[recv][k])) return true;
    }
    for (uint32_t k = find(recv, 0); k < from; k = find(recv, k + 1)) {
      if (take(m_pairs.sends[recv][k])) return true;
    }
    return false;
  }
  // Return the witness of (`recv`, `send`), if a run had it.
  std::shared_ptr<const RawWitness> witness(uint32_t recv, uint32_t send) const {
    const uint32_t k = index(recv, send);
    return k == k_none ? nullptr : m_witness[recv][k];
  }
  // Return the steps of the witness of (`recv`, `send`) up to and with the match.
  uint64_t steps(uint32_t recv, uint32_t send) const {
    const uint32_t k = index(recv, send);
    return k == k_none ? 0 : m_steps[recv][k];
  }
  // Record that `w` matches `recv` with `send` at its step `step`.
  void cover(uint32_t recv, uint32_t send, const std::shared_ptr<const RawWitness>& w, std::size_t step) {
    const uint32_t k = index(recv, send);
    if (k == k_none || m_witness[recv][k]) return;
    m_witness[recv][k] = w;
    m_steps[recv][k] = static_cast<uint32_t>(step + 1);
    m_next[recv][k] = k + 1;
    ++m_covered;
  }
  // Return how many pairs runs witnessed.
  uint64_t covered() const { return m_covered; }

 private:
  uint32_t index(uint32_t recv, uint32_t send) const {
    return m_witness[recv].empty() ? k_none : m_pairs.find(recv, send);
  }
  // Return the first candidate index >= k not covered (the count when none):
  // a union-find over "covered: go right", with path halving.
  uint32_t find(uint32_t recv, uint32_t k) {
    std::vector<uint32_t>& next = m_next[recv];
    while (next[k] != k) {
      next[k] = next[next[k]];
      k = next[k];
    }
    return k;
  }
  const MatchPairs& m_pairs;
  std::vector<std::vector<uint32_t>> m_next;  // per op and candidate index (union-find)
  std::vector<std::vector<std::shared_ptr<const RawWitness>>> m_witness;  // per op and candidate index
  std::vector<std::vector<uint32_t>> m_steps;  // per op and candidate index: the witness's steps to the match
  uint64_t m_covered = 0;
};

// Case 1 (fixed.hpp) for every alternative of a part's wildcard receives at
// once: whether the run in which the receive takes the alternative and every
// other receive its recorded message ends badly. A run per alternative from
// the initial state costs the whole part each (master/worker 16 x 1000 under
// zero buffering: 203,548 alternatives of runs of 10,141 steps). Here
// the unforced run is made once and replayed, checked step by step; each
// receive's alternatives run from the state just before the step where it
// took its recorded message (forced_runs, fixed.hpp): by case 1's
// persistence each run ends in the state the run from the initial state
// ends in, so the answers are the same, for the cost of what follows the
// receive. Each run's steps are replayed from the saved state
// (check_schedule); the prefix was replayed once. Witnesses are
// kept for what the race finding shows (prove.cpp): the first alternative
// the receive takes and the first that ends badly; the other alternatives'
// answers were replayed as well, their schedules are not kept.
class SharedFixedRuns {
 public:
  enum class Kind : uint8_t { unknown, not_taken, completes, bad };
  struct Result {
    Kind kind = Kind::unknown;
    Outcome outcome = Outcome::harmless;        // bad: deadlock or unmatched
    std::shared_ptr<const RawWitness> witness;  // may be null (class comment)
    uint64_t steps = 0;                         // the witness's steps up to and with the match (completes)
    StatusReuse reuse;                          // bad: find_status_reuse of the run, whole-model ops
  };

  // Decide the alternatives of `wildcards` (receives of `ps`'s part) under
  // `buffering` until the budget is spent.
  SharedFixedRuns(PartSolver& ps, Buffering buffering, const std::vector<uint32_t>& wildcards, const Budget& budget,
                  PartFindings& out)
      : m_results(ps.model().ops.size()) {
    const Machine& machine = ps.machine(buffering);
    const MatchPairs& pairs = ps.pairs();
    const RunResult base = fixed_run(machine, std::nullopt, budget.deadline());
    if (base.stopped) return;
    bool taken_kept = false, bad_kept = false;
    uint32_t last = k_none;
    std::vector<RawStep> steps;
    forced_runs(machine, pairs, wildcards, base, [&](uint32_t r, uint32_t s, std::size_t prefix,
                                                     const Machine::State& start, const RunResult& run) {
      if (r != last) {
        last = r;
        taken_kept = bad_kept = false;
        m_results[r].resize(pairs.sends[r].size());
        ++out.stats["replay_outcome_prefixes"];
      }
      if (budget.spent()) return false;
      Result& result = m_results[r][pairs.find(r, s)];
      if (run.state.partner[r] != s) {
        result.kind = Kind::not_taken;
        return true;
      }
      Goal goal;
      goal.recv = r;
      goal.send = s;
      const bool dead = machine.deadlocked(run.state);  // bad_end(), each half once
      const bool bad = dead || machine.unmatched_end(run.state);
      if (bad) goal.outcome = dead ? Outcome::deadlock : Outcome::unmatched;
      if (!check_schedule(machine, start, run.steps, goal).empty()) return true;  // unknown: asked as before
      result.kind = bad ? Kind::bad : Kind::completes;
      result.outcome = goal.outcome;
      // The run from `start` holds the forced match, the only one that differs from the recorded run's.
      if (bad) {
        if (const auto reuse = find_status_reuse(ps.part().model, run.steps)) result.reuse = ps.whole(*reuse);
      }
      if ((bad && bad_kept) || (!bad && taken_kept)) return true;
      steps.assign(base.steps.begin(), base.steps.begin() + static_cast<std::ptrdiff_t>(prefix));
      steps.insert(steps.end(), run.steps.begin(), run.steps.end());
      result.witness = ps.checked_witness(steps, goal, buffering, &run.state);
      if (!bad) result.steps = match_steps(steps, r, s);
      taken_kept = true;
      bad_kept = bad_kept || bad;
      return true;
    }, budget.deadline());
  }

  // Return the answer for (`recv`, `send`), or nothing when it was not decided here.
  const Result* find(uint32_t recv, uint32_t send, const MatchPairs& pairs) const {
    if (recv >= m_results.size() || m_results[recv].empty()) return nullptr;
    const uint32_t k = pairs.find(recv, send);
    if (k == k_none || m_results[recv][k].kind == Kind::unknown) return nullptr;
    return &m_results[recv][k];
  }

 private:
  std::vector<std::vector<Result>> m_results;  // per op and candidate index
};

// Whether some execution of a part can end badly (deadlock or unmatched end).
enum class Bad : uint8_t { unasked, possible, impossible, unknown };

void find_races(PartSolver& ps, const SolveOptions& options, const Budget& budget, PartFindings& out) {
  const Model& m = ps.model();
  const MatchPairs& pairs = ps.pairs();
  std::vector<uint32_t> wildcards;
  for (uint32_t r = 0; r < m.ops.size(); ++r) {
    if (!is_wildcard(m.ops[r])) continue;
    const auto& cands = pairs.sends[r];
    if (std::any_of(cands.begin(), cands.end(), [&](uint32_t s) { return s != m.ops[r].recorded; })) {
      wildcards.push_back(r);
    }
  }
  if (wildcards.empty()) return;
  const Buffering buffering = options.buffering;
  const Machine& machine = ps.machine(buffering);
  const bool replay = options.tuning.replay;
  const bool ask_outcomes = options.outcomes || options.errors_only;
  const bool without_choice = replay && choice_free(machine);
  // Which sends the receives of interchangeable endpoints can take (fixed.hpp, case 3).
  std::optional<InterchangeableMatches> interchangeable;
  if (without_choice) interchangeable.emplace(machine, pairs);
  // Unsat answers by counting (fixed.hpp, case 5), where case 3 does not apply.
  std::optional<CountingBounds> counting;
  if (replay && !without_choice) counting.emplace(machine, pairs);
  // Every question on this part is then about zero buffering (the deadlock
  // question always is): Z3 gets the pairs the counting bounds leave.
  if (counting && buffering == Buffering::zero) {
    if (auto fewer = counting->surviving_pairs(budget.deadline())) {
      out.stats["match_pairs_dropped_by_counting"] += pairs.pairs - fewer->pairs;
      ps.encode_fewer(std::move(*fewer));
    }
  }

  // A part without a choice (fixed.hpp, case 2): one run says whether anything can end badly.
  Bad bad = Bad::unasked;
  if (ask_outcomes && without_choice) {
    const RunResult run = free_run(machine, pairs, budget.deadline());
    if (!run.stopped) {
      ++out.stats["replay_choice_free_parts"];
      bad = bad_end(machine, run.state) ? Bad::possible : Bad::impossible;
    }
  }
  // No execution ends badly whatever the matches (fixed.hpp, case 6): the wait-for graph is acyclic.
  if (ask_outcomes && bad == Bad::unasked && replay && no_bad_end(machine, budget.deadline())) {
    ++out.stats["replay_acyclic_parts"];
    bad = Bad::impossible;
  }
  // Alternatives whose match alone is erroneous (the message does not fit): bad whatever follows.
  const auto misfits = [&](uint32_t r, uint32_t s) {
    return options.misfit && options.misfit(ps.part().op_of[r], ps.part().op_of[s]);
  };
  const bool any_misfit = options.misfit && std::any_of(wildcards.begin(), wildcards.end(), [&](uint32_t r) {
    const auto& cands = pairs.sends[r];
    return std::any_of(cands.begin(), cands.end(), [&](uint32_t s) { return s != m.ops[r].recorded && misfits(r, s); });
  });
  if (options.errors_only && bad == Bad::impossible && !any_misfit) return;
  // Matches given (fixed.hpp, case 1): whether an alternative alone ends badly is one run.
  const bool fixed = replay && matches_recorded(m, pairs);
  // Z3's question whether anything can end badly, asked once, when an outcome first needs the solver.
  auto ask_any_bad = [&] {
    if (bad != Bad::unasked) return;
    const auto any = ps.ask(budget, [&](Encoder& e) {
      return e.bad_end(BadEnd::either, buffering, std::nullopt, budget.slice());
    });
    const Verdict v = any ? any->verdict : Verdict::unknown;
    bad = v == Verdict::unsat ? Bad::impossible : v == Verdict::sat ? Bad::possible : Bad::unknown;
    if (bad == Bad::unknown) ++out.unknown;
  };

  // Every alternative's run alone at once, sharing prefixes.
  std::optional<SharedFixedRuns> shared;
  if (ask_outcomes && fixed && bad != Bad::impossible) shared.emplace(ps, buffering, wildcards, budget, out);

  // Feasibility witnesses, shared: every pair some replayed run matched.
  Coverage seen(m, pairs, wildcards);
  auto learn = [&](const std::vector<RawStep>& steps, const std::shared_ptr<const RawWitness>& w) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].action == StepAction::match) seen.cover(steps[i].recv, steps[i].send, w, i);
    }
  };
  // Give `alt` (receive `r` taking `send` `s`) the witness `w` of the run of
  // `steps`; a cut one with its steps to the match.
  auto attach = [&](RawAlternative& alt, const std::shared_ptr<const RawWitness>& w, uint32_t r, uint32_t s,
                    const std::vector<RawStep>& steps) {
    alt.witness = w;
    alt.witness_steps = w->omitted && w->outcome == Outcome::match ? match_steps(steps, r, s) : 0;
  };
  Spread spread;
  spread.offer = [&](uint32_t r, uint32_t from, const RunPolicy::Take& take) { return seen.offer(r, from, take); };
  Goal match_goal;
  // Take `steps` as the witness of `alt` if they replay to match_goal.
  auto accept = [&](const std::vector<RawStep>& steps, RawAlternative& alt) {
    auto w = ps.witness(steps, match_goal, buffering);
    if (!w) return false;
    ++out.stats["replay_witnesses"];
    alt.verdict = Verdict::sat;
    attach(alt, w, match_goal.recv, match_goal.send, steps);
    learn(steps, w);
    return true;
  };
  // Decide whether `r` can take `s` (alt.verdict) with a witness: runs first, then Z3.
  auto feasible = [&](uint32_t r, uint32_t s, RawAlternative& alt) {
    match_goal.recv = r;
    match_goal.send = s;
    if (auto hit = seen.witness(r, s)) {
      alt.verdict = Verdict::sat;
      alt.witness = hit;
      alt.witness_steps = hit->omitted ? seen.steps(r, s) : 0;
      return;
    }
    if (replay) {
      // At an interchangeable endpoint the answer is known (case 3); else try.
      const Verdict known = interchangeable ? interchangeable->can_match(r, s, budget.deadline()) : Verdict::unknown;
      if (known == Verdict::unsat) {
        ++out.stats["replay_unsat"];
        alt.verdict = Verdict::unsat;
        return;
      }
      if (counting && counting->can_match(r, s, budget.deadline()) == Verdict::unsat) {
        ++out.stats["replay_counting_unsat"];
        alt.verdict = Verdict::unsat;
        return;
      }
      auto steps = guided_match(machine, pairs, r, s, spread);
      ++spread.rotate;
      if (!steps && known != Verdict::sat) steps = guided_match(machine, pairs, r, s);
      if (steps && accept(*steps, alt)) return;
      if (known == Verdict::sat) {
        if (auto built = interchangeable->witness(r, s, budget.deadline()); built && accept(*built, alt)) return;
      }
      if (counting) {
        if (auto planned = counting->planned_run(r, s, std::nullopt, budget.deadline()); planned && accept(*planned, alt)) {
          return;
        }
      }
    }
    const auto sol = ps.ask(budget, [&](Encoder& e) { return e.can_match(r, s, buffering, budget.slice()); });
    alt.verdict = sol ? sol->verdict : Verdict::unknown;
    if (alt.verdict == Verdict::sat) {
      if (auto w = ps.witness(sol->steps, match_goal, buffering)) {
        attach(alt, w, r, s, sol->steps);
        learn(sol->steps, w);
      } else {
        alt.verdict = Verdict::unknown;  // Z3's schedule did not replay: no claim
      }
    }
    if (alt.verdict == Verdict::unknown) ++out.unknown;
  };

  // Covering runs (fixed.hpp, case 4): the feasible pairs of each
  // interchangeable class witnessed many per run, before any alternative is
  // asked about, until every feasible pair of the class has a witness or the
  // runs give too few new pairs (below).
  if (interchangeable && !options.errors_only) {
    std::vector<bool> visited(m.ops.size(), false);
    for (uint32_t r : wildcards) {
      if (visited[r]) continue;
      const std::vector<uint32_t> members = interchangeable->class_receives(r, budget.deadline());
      for (uint32_t x : members) visited[x] = true;
      const uint32_t rounds = interchangeable->cover_rounds(r, budget.deadline());
      if (rounds == 0) continue;
      uint64_t feasible_pairs = 0;
      for (uint32_t x : members) {
        if (!is_wildcard(m.ops[x])) continue;
        for (uint32_t s : pairs.sends[x]) {
          feasible_pairs += interchangeable->can_match(x, s, budget.deadline()) == Verdict::sat;
        }
      }
      const uint64_t start = seen.covered();
      const auto given = [&](uint32_t a, uint32_t b) { return seen.witness(a, b) != nullptr; };
      // A covering run costs about what a directed replay to one pair costs,
      // so they go on while they give more: stop once the last cycle of
      // rounds (every channel at every level) gave fewer than two new pairs
      // per run.
      const uint32_t window = rounds;
      std::vector<uint64_t> gains(window, 2);
      uint64_t recent = 2 * uint64_t{window};
      for (uint32_t round = 0; recent >= 2 * uint64_t{window} && seen.covered() - start < feasible_pairs; ++round) {
        if (budget.spent()) break;
        const uint64_t before = seen.covered();
        if (auto steps = interchangeable->cover_run(r, round, given, budget.deadline())) {
          // The goal: the run's last match (it ends with the plan's last receive matched).
          Goal goal;
          for (auto it = steps->rbegin(); it != steps->rend() && goal.recv == k_none; ++it) {
            if (it->action == StepAction::match) {
              goal.recv = it->recv;
              goal.send = it->send;
            }
          }
          if (auto w = ps.witness(*steps, goal, buffering)) {
            ++out.stats["replay_cover_runs"];
            learn(*steps, w);
          }
        }
        uint64_t& slot = gains[round % window];
        recent = recent - slot + (seen.covered() - before);
        slot = seen.covered() - before;
      }
    }
  }

  // Later receives first: a run to one of them matches the earlier ones on
  // the way, preferring pairs not witnessed yet, so few runs cover many pairs.
  for (auto it = wildcards.rbegin(); it != wildcards.rend(); ++it) {
    const uint32_t r = *it;
    RawRace race;
    race.recv = ps.part().op_of[r];
    for (uint32_t s : pairs.sends[r]) {
      if (s == m.ops[r].recorded) continue;
      RawAlternative alt;
      alt.send = ps.part().op_of[s];
      if (budget.spent()) {  // spent: undecided, not asked
        ++out.unknown;
        race.alternatives.push_back(std::move(alt));
        continue;
      }
      match_goal.recv = r;
      match_goal.send = s;
      // A match that does not fit is an error once some execution has it.
      if (any_misfit && misfits(r, s)) {
        feasible(r, s, alt);
        if (alt.verdict == Verdict::sat) {
          alt.outcome = Outcome::mismatch;
          alt.outcome_known = true;
          alt.alone = true;
        }
        race.alternatives.push_back(std::move(alt));
        continue;
      }
      // With every other receive keeping its recorded match: no bad end (decided by a run).
      bool alone_harmless = false;
      if (bad == Bad::impossible) {
        alt.outcome_known = true;
      } else if (const SharedFixedRuns::Result* known = shared ? shared->find(r, s, pairs) : nullptr) {
        ++out.stats["replay_outcomes"];
        alone_harmless = known->kind != SharedFixedRuns::Kind::bad;
        if (known->kind != SharedFixedRuns::Kind::not_taken) {
          alt.verdict = Verdict::sat;
          alt.witness = known->witness;
          alt.witness_steps = known->witness && known->witness->omitted ? known->steps : 0;
        }
        if (known->kind == SharedFixedRuns::Kind::bad) {
          alt.outcome = known->outcome;
          alt.outcome_known = true;
          alt.reuse = known->reuse;
        }
      } else if (ask_outcomes && fixed) {
        const RunResult run = fixed_run(machine, std::pair{r, s}, budget.deadline());
        if (!run.stopped) {
          ++out.stats["replay_outcomes"];
          // A bad end without the forced match is no answer: then no execution has the match alone.
          if (run.state.partner[r] == s && bad_end(machine, run.state)) {
            if (auto w = ps.bad_witness(run.steps, buffering)) {
              alt.verdict = Verdict::sat;
              alt.outcome = w->outcome;
              alt.outcome_known = true;
              alt.witness = w;
              alt.reuse = w->reuse;
              learn(run.steps, w);
            }
          } else {
            alone_harmless = true;
            if (run.state.partner[r] == s) {
              if (auto w = ps.witness(run.steps, match_goal, buffering)) {
                alt.verdict = Verdict::sat;
                attach(alt, w, r, s, run.steps);
                learn(run.steps, w);
              }
            }
          }
        }
      }
      // Can the receive take it at all? (check asks only about outcomes, and
      // about the other alternatives of the races it reports, below; the
      // counting bounds first: an alternative no execution has cannot end
      // badly, and they cost no run.)
      if (alt.verdict != Verdict::sat && !options.errors_only) feasible(r, s, alt);
      if (alt.verdict == Verdict::unknown && options.errors_only && counting &&
          counting->can_match(r, s, budget.deadline()) == Verdict::unsat) {
        ++out.stats["replay_counting_unsat"];
        alt.verdict = Verdict::unsat;
      }
      // Does it lead to a bad end? What the runs left, Z3 decides.
      if (ask_outcomes && !alt.outcome_known && alt.verdict != Verdict::unsat &&
          (alt.verdict == Verdict::sat || options.errors_only)) {
        // Runs planned on the counting bounds (fixed.hpp, case 5) that go on
        // after the match, the class's later receives preferring one channel.
        if (counting && alt.verdict == Verdict::sat) {
          const uint32_t channels = std::min<uint32_t>(counting->channels(r, budget.deadline()), k_planned_bad_runs);
          for (uint32_t p = 0; p < channels && !alt.outcome_known; ++p) {
            auto steps = counting->planned_run(r, s, p, budget.deadline());
            if (!steps) continue;
            if (auto w = ps.bad_witness(*steps, buffering)) {
              ++out.stats["replay_counting_bad_ends"];
              alt.outcome = w->outcome;
              alt.outcome_known = true;
              alt.alone = false;
              alt.witness = w;
              alt.reuse = w->reuse;
              learn(*steps, w);
            }
          }
          if (alt.outcome_known) {
            race.alternatives.push_back(std::move(alt));
            continue;
          }
        }
        ask_any_bad();
        if (bad == Bad::impossible) {
          alt.outcome_known = true;
        } else if (bad == Bad::unknown && options.errors_only) {
          ++out.unknown;  // check does not spend its budget on one part's every alternative
        } else {
          // First with every other receive keeping its recorded match (the
          // bad end follows from this choice alone), then with any matches.
          std::optional<SolveOutcome> o = SolveOutcome{Verdict::unsat, {}, {}, {}, {}};
          if (!alone_harmless) {
            o = ps.ask(budget, [&](Encoder& e) {
              return e.bad_end(BadEnd::either, buffering, std::pair{r, s}, budget.slice(), true);
            });
          }
          bool alone = true;
          if (o && o->verdict == Verdict::unsat) {
            o = ps.ask(budget, [&](Encoder& e) {
              return e.bad_end(BadEnd::either, buffering, std::pair{r, s}, budget.slice());
            });
            alone = false;
          }
          const Verdict v = o ? o->verdict : Verdict::unknown;
          if (v == Verdict::unsat) {
            alt.outcome_known = true;
          } else if (v == Verdict::sat) {
            if (auto w = ps.bad_witness(o->steps, buffering)) {
              alt.verdict = Verdict::sat;
              alt.outcome = w->outcome;
              alt.outcome_known = true;
              alt.alone = alone;
              alt.witness = w;
              alt.reuse = w->reuse;
            } else {
              ++out.unknown;
            }
          } else {
            ++out.unknown;
          }
        }
      }
      race.alternatives.push_back(std::move(alt));
    }
    // check reports a race with every alternative the receive can take.
    const bool reported = std::any_of(race.alternatives.begin(), race.alternatives.end(), [](const RawAlternative& a) {
      return a.verdict == Verdict::sat && a.outcome_known && a.outcome != Outcome::harmless && a.reuse.op == k_none;
    });
    if (options.errors_only && reported) {
      for (RawAlternative& alt : race.alternatives) {
        if (alt.verdict == Verdict::unknown && !budget.spent()) feasible(r, ps.part().local_op(alt.send), alt);
      }
    }
    if (!race.alternatives.empty()) out.races.push_back(std::move(race));
  }
}

void find_deadlock(PartSolver& ps, const SolveOptions& options, const Budget& budget, PartFindings& out) {
  if (any_rank_stopped(ps.model())) return;  // the recorded run itself stopped: check's deadlock says so
  Goal goal;
  goal.outcome = Outcome::deadlock;
  // The recorded matches fix the order (fixed.hpp, case 1): one run decides.
  if (options.tuning.replay && matches_recorded(ps.model(), ps.pairs())) {
    const Machine& zero = ps.machine(Buffering::zero);
    const RunResult run = fixed_run(zero, std::nullopt, budget.deadline());
    if (run.stopped) {
      ++out.unknown;
      return;
    }
    ++out.stats["replay_deadlock_parts"];
    if (!zero.deadlocked(run.state)) return;
    if (auto w = ps.witness(run.steps, goal, Buffering::zero)) {
      out.deadlocks.push_back(std::move(*w));
    } else {
      ++out.unknown;
    }
    return;
  }
  // No execution deadlocks, whatever the matches (fixed.hpp, case 6).
  if (options.tuning.replay && no_bad_end(ps.machine(Buffering::zero), budget.deadline())) {
    ++out.stats["replay_acyclic_parts"];
    return;
  }
  const auto sol = ps.ask(budget, [&](Encoder& e) {
    return e.bad_end(BadEnd::deadlock, Buffering::zero, std::nullopt, budget.slice(), true);
  });
  if (!sol || sol->verdict == Verdict::unknown) {
    ++out.unknown;
    return;
  }
  if (sol->verdict != Verdict::sat) return;
  if (auto w = ps.witness(sol->steps, goal, Buffering::zero)) {
    out.deadlocks.push_back(std::move(*w));
  } else {
    ++out.unknown;
  }
}

// Return the index of the part of `parts` holding segment `segment`, or k_none.
uint32_t part_of(const std::vector<PartRange>& parts, uint32_t segment) {
  auto it = std::lower_bound(parts.begin(), parts.end(), segment,
                             [](const PartRange& p, uint32_t s) { return p.last_segment < s; });
  return it != parts.end() && it->first_segment <= segment ? static_cast<uint32_t>(it - parts.begin()) : k_none;
}

// Return the range of segments a question about events (ra, ea) and (rb, eb) needs.
std::pair<uint32_t, uint32_t> question_range(const std::vector<PartRange>& parts, const std::vector<Cut>& cuts,
                                             uint32_t ra, uint32_t ea, uint32_t rb, uint32_t eb) {
  uint32_t lo = std::min(segment_of(cuts, ra, ea), segment_of(cuts, rb, eb));
  uint32_t hi = std::max(segment_of(cuts, ra, ea), segment_of(cuts, rb, eb));
  if (const uint32_t p = part_of(parts, lo); p != k_none) lo = parts[p].first_segment;
  if (const uint32_t p = part_of(parts, hi); p != k_none) hi = parts[p].last_segment;
  return {lo, hi};
}

// Return true when the happens-before rules of match_pairs would drop none
// of `counted`, the pairs of `model` by the counting rules and cuts when they
// are its recorded matches (recorded_pairs) and no receive or probe has a
// wildcard, split into `parts` (split_ranges of those pairs): then they are
// the model's match pairs, and the parts the same. Set `deadlock_free[p]`
// when part p's run below under zero buffering ended without a deadlock
// and no rank of it stopped inside an event: what find_deadlock's one run
// would find on it (no deadlock). Throw BudgetSpent past `deadline`.
//
// Why. Without wildcards, for a receive r and the sends of its channel with
// its tag, the counting rules' window starts at the send as many places in
// that list as r has receives before it with its source and tag (those
// take the earlier ones), and the happens-before form of rule 3 starts it
// no later (every earlier receive that accepts such a send names r's source
// and tag); so what the clocks may drop is the end of the window only: the
// sends forced after r completes (match_pairs.hpp). Let s be r's one
// candidate and r complete (done) in the model. The clocks are derived from
// edges that hold in every execution (program order, collective members,
// a receive's return after its candidate's post, an Ssend's after its
// candidate receive's post: here every candidate set is the recorded match
// alone or empty), and the edges from a part's events reach only its own
// (every pair, op and instance that crosses a cut ties the segments into
// one part). So in any execution Y of the part in which s is posted, were s
// forced after r completes, r would have completed before s was posted,
// hence matched another send first: but every match of Y is a recorded one,
// and r's is s. Y here is the part's run with every receive and probe
// taking its recorded send (fixed.hpp, case 1's run), under zero buffering
// (find_deadlock's run), and when that one stops before posting every such
// s, under infinite buffering (a standard send returns at once): when s is
// posted at its end, s is not forced after r, and the rules keep the pair.
// A part whose runs do not post every such s (a model that waits where the
// recorded run did not) makes this return false: the caller then runs the
// whole analysis.
bool happens_before_drops_none(const Model& model, const std::vector<Cut>& cuts, const MatchPairs& counted,
                               const std::vector<PartRange>& parts, unsigned threads, const Deadline& deadline,
                               std::vector<char>& deadlock_free) {
  // A candidate whose receive never completes is never forced after it.
  auto asks = [&](uint32_t op) { return !counted.sends[op].empty() && model.ops[op].done != k_none; };
  deadlock_free.assign(parts.size(), 0);
  std::atomic<bool> holds{true}, spent{false};
  // Paced by parts, as the stages of the whole model's building are.
  Pace pace(deadline, parts.size());
  std::mutex pace_mutex;
  std::size_t finished = 0;
  auto paced = [&] {
    std::lock_guard lock(pace_mutex);
    try {
      pace.now(++finished);
    } catch (const BudgetSpent&) {
      spent = true;
    }
  };
  auto check_part = [&](std::size_t p) {
    const PartRange& range = parts[p];
    const Part part = extract_part(model, cuts, range);
    // Return true when the run under `buffering` posted every candidate that asks.
    auto posts_all = [&](Buffering buffering, char* free_of_deadlock) {
      const Machine machine(part.model, buffering);
      const RunResult run = fixed_run(machine, std::nullopt, deadline);
      if (run.stopped) {  // by the deadline, or by the run's step limit (then nothing is shown)
        if (deadline && Clock::now() > *deadline) spent = true;
        return false;
      }
      if (free_of_deadlock) *free_of_deadlock = !any_rank_stopped(part.model) && !machine.deadlocked(run.state);
      return std::all_of(part.op_of.begin(), part.op_of.end(), [&](uint32_t op) {
        if (!asks(op)) return true;
        const uint32_t s = part.local_op(counted.sends[op][0]);
        return s != k_none && machine.posted(run.state, s);
      });
    };
    if (posts_all(Buffering::zero, &deadlock_free[p]) || spent) return;
    if (!posts_all(Buffering::infinite, nullptr)) holds = false;
  };
  auto job = [&](std::size_t p) {
    if (!holds || spent) return;
    check_part(p);
    paced();
  };
  format::run_on_threads(format::thread_count(threads, parts.size()), parts.size(), job);
  if (spent) throw BudgetSpent();
  return holds;
}

// What the questions share: the whole model's rules, and one PartSolver per
// range of segments, so that questions on one part share its encoding.
class Questions {
 public:
  Questions(const Model& model, const std::vector<Cut>& cuts, const Channels& channels, const MatchPairs& pairs,
            const std::vector<PartRange>& parts, const SolveOptions& options, const Budget& budget, Solution& out)
      : m_model(model), m_cuts(cuts), m_channels(channels), m_pairs(pairs), m_parts(parts), m_options(options),
        m_budget(budget), m_out(out) {}

  RawAnswer answer(const RawQuestion& q) {
    RawAnswer ans;
    if (q.kind == QuestionKind::can_match) {
      can_match(q, ans);
    } else {
      can_precede(q, ans);
    }
    if (ans.verdict == Verdict::unknown && ans.reason.empty()) ans.reason = m_budget.spent() ? "budget spent" : "unknown";
    return ans;
  }

  // Return the solver of the first question that went to Z3, if any.
  const Encoder* first_encoder() const { return m_first; }

 private:
  PartSolver& part(uint32_t lo, uint32_t hi) {
    auto& slot = m_solvers[{lo, hi}];
    if (!slot) slot = std::make_unique<PartSolver>(extract(m_model, m_cuts, lo, hi), m_pairs, m_options.tuning);
    return *slot;
  }

  // Return the explanation of an unsat answer: the question asked again of
  // a tracked encoding, whose unsat core names the constraints.
  std::vector<std::string> explain(PartSolver& ps, const std::function<SolveOutcome(Encoder&)>& ask) {
    try {
      SolveOutcome out = ask(ps.tracked(m_budget));
      if (out.verdict == Verdict::unsat) return out.explanation;
    } catch (const BudgetSpent&) {
    }
    return {"no explanation: the budget ran out before the unsat core was found"};
  }

  // Ask Z3 (`ask`) and fill `ans`; a sat schedule must replay to `goal`.
  void solve(PartSolver& ps, const Goal& goal, const std::function<SolveOutcome(Encoder&)>& ask, RawAnswer& ans) {
    Encoder& e = ps.encoder(m_budget);
    SolveOutcome sol = ask(e);
    if (!m_first) m_first = &e;
    if (m_options.smt2 && m_out.smt2.empty()) m_out.smt2 = e.smt2();
    if (sol.verdict == Verdict::unsat) sol.explanation = explain(ps, ask);
    ans.verdict = sol.verdict;
    ans.explanation = std::move(sol.explanation);
    ans.reason = std::move(sol.reason);
    if (sol.verdict == Verdict::sat) {
      if (auto w = ps.witness(sol.steps, goal, m_options.buffering)) {
        ans.witness = std::move(*w);
      } else {
        ans.verdict = Verdict::unknown;
        ans.reason = "the solver's schedule did not replay";
      }
    }
  }

  void can_match(const RawQuestion& q, RawAnswer& ans) {
    const Op& r = m_model.ops[q.recv];
    const Op& s = m_model.ops[q.send];
    if (!m_rules) m_rules = std::make_unique<PairRules>(m_model, m_channels, m_cuts, hb_rules(m_options.tuning));
    if (std::string why = m_rules->excluded_because(q.recv, q.send); !why.empty()) {
      ans.verdict = Verdict::unsat;
      ans.explanation.push_back(std::move(why));
      return;
    }
    const auto [lo, hi] = question_range(m_parts, m_cuts, r.rank, r.post, s.rank, s.post);
    PartSolver& ps = part(lo, hi);
    const uint32_t lr = ps.part().local_op(q.recv), ls = ps.part().local_op(q.send);
    if (lr == k_none || ls == k_none || ps.pairs().find(lr, ls) == k_none) {
      ans.verdict = Verdict::unsat;
      ans.explanation.push_back("the pair is not among the match pairs: no execution can have it");
      return;
    }
    Goal goal;
    goal.recv = lr;
    goal.send = ls;
    // With --emit-smt2 the first question goes to the solver, so that the file is the problem it solved.
    if (m_options.tuning.replay && !(m_options.smt2 && m_out.smt2.empty())) {
      if (auto steps = guided_match(ps.machine(m_options.buffering), ps.pairs(), lr, ls)) {
        if (auto w = ps.witness(*steps, goal, m_options.buffering)) {
          ++m_out.stats["question_guided_witnesses"];
          ans.verdict = Verdict::sat;
          ans.witness = std::move(*w);
          return;
        }
      }
    }
    solve(ps, goal, [&](Encoder& e) { return e.can_match(lr, ls, m_options.buffering, m_budget.left()); }, ans);
  }

  void can_precede(const RawQuestion& q, RawAnswer& ans) {
    const auto [lo, hi] = question_range(m_parts, m_cuts, q.a_rank, q.a_event, q.b_rank, q.b_event);
    PartSolver& ps = part(lo, hi);
    Goal goal;
    goal.outcome = Outcome::precede;
    goal.a_rank = q.a_rank;
    goal.a_event = q.a_event - ps.part().first[q.a_rank];
    goal.b_rank = q.b_rank;
    goal.b_event = q.b_event - ps.part().first[q.b_rank];
    if (m_options.tuning.replay && !(m_options.smt2 && m_out.smt2.empty())) {
      if (auto steps = guided_precede(ps.machine(m_options.buffering), ps.pairs(), goal.a_rank, goal.a_event,
                                      goal.b_rank, goal.b_event)) {
        if (auto w = ps.witness(*steps, goal, m_options.buffering)) {
          ++m_out.stats["question_guided_witnesses"];
          ans.verdict = Verdict::sat;
          ans.witness = std::move(*w);
          return;
        }
      }
    }
    solve(ps, goal, [&](Encoder& e) {
      return e.can_precede(goal.a_rank, goal.a_event, goal.b_rank, goal.b_event, m_options.buffering, m_budget.left());
    }, ans);
    if (ans.verdict == Verdict::unsat && ans.explanation.empty()) {
      ans.explanation.push_back(q.a_rank == q.b_rank ? "program order: the first event comes after the second"
                                                     : "the question's own condition cannot hold");
    }
  }

  const Model& m_model;
  const std::vector<Cut>& m_cuts;
  const Channels& m_channels;
  const MatchPairs& m_pairs;
  const std::vector<PartRange>& m_parts;
  const SolveOptions& m_options;
  const Budget& m_budget;
  Solution& m_out;
  std::unique_ptr<PairRules> m_rules;
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<PartSolver>> m_solvers;
  const Encoder* m_first = nullptr;
};

}  // namespace

std::optional<StatusReuse> find_status_reuse(const Model& model, const std::vector<RawStep>& steps) {
  // Per rank, the changed statuses seen so far: the wildcard and what its recorded send named.
  struct Changed {
    uint32_t receive = k_none;
    uint32_t done = k_none;   // the event that completes it: the status is read after it returns
    int32_t source = k_any;   // the recorded source when the schedule's differs (else k_any)
    bool tag_changed = false;
    int32_t tag = 0;          // the recorded tag (tag_changed)
  };
  std::unordered_map<uint32_t, std::vector<Changed>> changed;
  for (const RawStep& step : steps) {
    if (step.action == StepAction::match) {
      const Op& r = model.ops[step.recv];
      if (r.recorded == k_none || r.recorded == step.send || r.done == k_none) continue;
      const Op& now = model.ops[step.send];
      const Op& then = model.ops[r.recorded];
      Changed c;
      c.receive = step.recv;
      c.done = r.done;
      if (r.peer == k_any && now.rank != then.rank) c.source = static_cast<int32_t>(then.rank);
      c.tag_changed = r.tag == k_any && now.tag != then.tag;
      c.tag = then.tag;
      if (c.source != k_any || c.tag_changed) changed[r.rank].push_back(c);
      continue;
    }
    if (step.action != StepAction::call || changed.empty()) continue;
    const auto it = changed.find(step.rank);
    if (it == changed.end()) continue;
    for (uint32_t id : model.posts(step.rank, step.event)) {
      const Op& o = model.ops[id];
      if (o.kind == OpKind::coll) continue;
      for (const Changed& c : it->second) {
        if (step.event <= c.done || (o.kind == OpKind::recv && o.probe == c.receive)) continue;
        const bool source = c.source != k_any && o.peer == c.source;
        if (source || (c.tag_changed && o.tag == c.tag)) return StatusReuse{id, c.receive, source};
      }
    }
  }
  return std::nullopt;
}

std::vector<RawBlocked> blocked_ranks(const Model& model, Buffering buffering, const std::vector<RawStep>& steps) {
  const Machine machine(model, buffering);
  Machine::State state = machine.initial();
  for (const RawStep& step : steps) {
    if (!machine.refuse(state, step).empty()) return {};
    machine.apply(state, step);
  }
  return blocked_ranks(machine, state);
}

std::vector<RawBlocked> blocked_ranks(const Machine& machine, const Machine::State& state) {
  const Model& model = machine.model();
  std::vector<RawBlocked> blocked;
  for (uint32_t r = 0; r < model.ranks.size(); ++r) {
    if (state.pos[r] == model.ranks[r].limit) continue;
    RawBlocked b;
    b.rank = r;
    b.event = std::min<uint32_t>(state.pos[r] / 2, static_cast<uint32_t>(model.ranks[r].events.size()) - 1);
    std::set<uint32_t> waits;
    for (uint32_t i : model.ranks[r].completes(b.event)) {
      if (machine.complete(state, i)) continue;
      const Op& o = model.ops[i];
      if (o.kind == OpKind::send) {
        waits.insert(static_cast<uint32_t>(o.peer));
      } else if (o.kind == OpKind::recv || o.kind == OpKind::probe) {
        if (o.peer != k_any) {
          waits.insert(static_cast<uint32_t>(o.peer));
        } else {
          for (const Op& s : model.ops) {
            if (accepts(o, s)) waits.insert(s.rank);
          }
        }
      } else if (o.instance != k_none) {
        for (uint32_t member : model.instances[o.instance].members) {
          if (member != k_none && !machine.posted(state, member)) waits.insert(model.ops[member].rank);
        }
      }
    }
    waits.erase(r);
    b.waits_for.assign(waits.begin(), waits.end());
    blocked.push_back(std::move(b));
  }
  // A wait-for cycle among the blocked ranks first: follow the first blocked
  // rank each waits for until a rank repeats.
  std::map<uint32_t, std::size_t> at;
  for (std::size_t i = 0; i < blocked.size(); ++i) at[blocked[i].rank] = i;
  for (std::size_t start = 0; start < blocked.size(); ++start) {
    std::vector<std::size_t> path;
    std::map<std::size_t, std::size_t> index;
    for (std::size_t cur = start;;) {
      if (auto seen = index.find(cur); seen != index.end()) {
        std::vector<RawBlocked> ordered;
        std::set<std::size_t> in_cycle;
        for (std::size_t i = seen->second; i < path.size(); ++i) {
          ordered.push_back(blocked[path[i]]);
          in_cycle.insert(path[i]);
        }
        for (std::size_t i = 0; i < blocked.size(); ++i) {
          if (!in_cycle.count(i)) ordered.push_back(blocked[i]);
        }
        return ordered;
      }
      index[cur] = path.size();
      path.push_back(cur);
      std::size_t next = SIZE_MAX;
      for (uint32_t w : blocked[cur].waits_for) {
        if (auto it = at.find(w); it != at.end()) {
          next = it->second;
          break;
        }
      }
      if (next == SIZE_MAX) break;
      cur = next;
    }
  }
  return blocked;
}

Prepared::Prepared(const Model& model, const Tuning& tuning, const Deadline& deadline, PairFigures figures,
                   unsigned threads)
    : cuts(find_cuts(model, deadline)), channels(model, deadline) {
  if (figures == PairFigures::pairs_only && !names_wildcard(model)) {
    // Where the happens-before rules would not run (switched off, or the
    // clocks too large: clocks_fit), match_pairs gives the pairs of the
    // counting rules and cuts alone, which recorded_pairs gives too when
    // they are the recorded matches, without a list per send (on 64 x 1M
    // halo events, 3 GB less: docs/bench.md, the twenty-fourth round).
    const bool hb_runs = tuning.hb_pruning && clocks_fit(model);
    if (std::optional<MatchPairs> counted = recorded_pairs(model, channels, cuts, deadline)) {
      std::vector<PartRange> ranges = split_ranges(model, cuts, *counted, deadline);
      if (!hb_runs || happens_before_drops_none(model, cuts, *counted, ranges, threads, deadline, deadlock_free)) {
        pairs = std::move(*counted);
        parts = std::move(ranges);
        return;
      }
      deadlock_free.clear();
    }
  }
  pairs = match_pairs(model, channels, cuts, hb_rules(tuning), deadline);
  parts = split_ranges(model, cuts, pairs, deadline);
}

Solution solve(const Model& model, const std::vector<RawQuestion>& questions, const SolveOptions& options) {
  const Budget budget(options.timeout_s);
  std::unique_ptr<Prepared> prepared;
  try {
    prepared = std::make_unique<Prepared>(model, options.tuning, budget.deadline());
  } catch (const BudgetSpent&) {
    Solution out;
    for (std::size_t i = 0; i < questions.size(); ++i) {
      RawAnswer undecided;
      undecided.reason = "budget spent before the match pairs were known";
      out.answers.push_back(std::move(undecided));
    }
    out.unknown = std::max<uint64_t>(1, questions.size());
    out.undecided.push_back("the match pairs and parts of the model were not done within the budget");
    out.stats["unknown"] = out.unknown;
    return out;
  }
  SolveOptions rest = options;
  rest.timeout_s = budget.left();
  return solve(model, *prepared, questions, rest);
}

Solution solve(const Model& model, const Prepared& prepared, const std::vector<RawQuestion>& questions,
               const SolveOptions& options) {
  Solution out;
  const Budget budget(options.timeout_s);
  const std::vector<Cut>& cuts = prepared.cuts;
  const Channels& channels = prepared.channels;
  const MatchPairs& pairs = prepared.pairs;
  const std::vector<PartRange>& parts = prepared.parts;
  out.stats["cuts"] = cuts.size();
  out.stats["parts"] = parts.size();
  out.stats["match_pairs"] = pairs.pairs;
  out.stats["match_pairs_dropped_by_cuts"] = pairs.dropped_by_cuts;
  out.stats["match_pairs_dropped_by_happens_before"] = pairs.dropped_by_happens_before;
  out.stats["match_pairs_hb_passes"] = pairs.hb_passes;
  out.stats["match_pairs_hb_skipped"] = pairs.hb_skipped ? 1 : 0;
  for (const Op& op : model.ops) {
    if (op.kind == OpKind::recv || op.kind == OpKind::probe) ++out.stats["receives"];
    if (op.kind == OpKind::send) ++out.stats["sends"];
  }
  uint64_t assertions = 0, variables = 0, calls = 0;
  auto count_encoder = [&](const Encoder* e) {
    if (!e) return;
    assertions += e->assertions();
    variables += e->decision_variables();
    calls += e->solver_calls();
  };

  {
    Questions asked(model, cuts, channels, pairs, parts, options, budget, out);
    for (const RawQuestion& q : questions) {
      try {
        out.answers.push_back(asked.answer(q));
      } catch (const BudgetSpent& e) {
        RawAnswer undecided;
        undecided.reason = e.what();
        out.answers.push_back(std::move(undecided));
      } catch (...) {
        RawAnswer undecided;
        undecided.reason = failure_reason(std::current_exception());
        out.answers.push_back(std::move(undecided));
      }
      if (out.answers.back().verdict == Verdict::unknown) ++out.unknown;
    }
    count_encoder(asked.first_encoder());
  }

  if (options.races || options.deadlocks) {
    std::mutex mutex;
    std::atomic<std::size_t> next{0};
    // The parts that ask: races only, a part without a wildcard receive or
    // probe has nothing to ask.
    std::vector<char> asks(parts.size(), 1);
    if (!options.deadlocks) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::vector<uint32_t> ops = part_ops(model, cuts, parts[i].first_segment, parts[i].last_segment);
        asks[i] = std::any_of(ops.begin(), ops.end(), [&](uint32_t op) { return is_wildcard(model.ops[op]); });
      }
    }
    // Race witnesses kept whole (PartSolver::cut_witnesses): each part that
    // asks gets an equal share of Tuning::witness_steps, fixed before the
    // parts run, so which witnesses are cut does not depend on which part
    // a thread finishes first.
    const auto asking = static_cast<std::size_t>(std::count(asks.begin(), asks.end(), 1));
    const uint64_t witness_share = options.tuning.witness_steps / std::max<std::size_t>(asking, 1);
    uint64_t skipped = 0;
    std::map<std::size_t, std::string> failed;  // by part
    auto work = [&] {
      for (std::size_t i; (i = next.fetch_add(1)) < parts.size();) {
        if (!asks[i]) continue;
        if (budget.spent()) {
          std::lock_guard lock(mutex);
          ++out.unknown;  // the part is left undecided
          ++skipped;
          continue;
        }
        // find_deadlock's one run on this part was made already (Prepared::deadlock_free).
        const bool deadlock_free = options.deadlocks && !options.races && !options.smt2 && options.tuning.replay &&
                                   i < prepared.deadlock_free.size() && prepared.deadlock_free[i];
        std::atomic<uint64_t> kept{0};  // outlives `ps`, which counts into it
        PartFindings found;
        std::exception_ptr failure;
        std::string failed_on_question;
        const Encoder* encoder = nullptr;
        std::unique_ptr<PartSolver> ps;
        try {
          if (options.on_part) options.on_part(i);
          if (deadlock_free) {
            ++found.stats["replay_deadlock_parts"];
          } else {
            ps = std::make_unique<PartSolver>(extract_part(model, cuts, parts[i]), pairs, options.tuning);
            if (options.deadlocks) find_deadlock(*ps, options, budget, found);
            if (options.races) {
              ps->cut_witnesses(kept, witness_share);
              find_races(*ps, options, budget, found);
            }
            if (options.smt2 && i == 0) ps->encoder(budget);
            encoder = ps->made();
            if (!ps->failure().empty()) {
              failed_on_question = fmt::format("part {} of {}: the solver failed on a question ({}); what it had "
                                               "left is unknown", i + 1, parts.size(), ps->failure());
            }
          }
        } catch (const BudgetSpent&) {
          ++found.unknown;
        } catch (...) {
          failure = std::current_exception();
        }
        std::lock_guard lock(mutex);
        count_encoder(encoder);
        if (options.smt2 && out.smt2.empty() && i == 0 && encoder) out.smt2 = encoder->smt2();
        for (RawRace& r : found.races) out.races.push_back(std::move(r));
        for (RawWitness& w : found.deadlocks) out.deadlocks.push_back(std::move(w));
        for (const auto& [key, value] : found.stats) out.stats[key] += value;
        out.unknown += found.unknown;
        if (!failed_on_question.empty()) failed[i] = std::move(failed_on_question);
        if (failure) {
          ++out.unknown;
          const PartRange& p = parts[i];
          auto events = [&](uint32_t r) { return part_events(model, cuts, p.first_segment, p.last_segment, r); };
          uint32_t rank = 0;
          while (rank + 1 < model.ranks.size() && events(rank).first == events(rank).second) ++rank;
          const auto [begin, end] = model.ranks.empty() ? std::pair<uint32_t, uint32_t>{0, 0} : events(rank);
          const std::string from = begin == end ? std::string("no events") : "from " + model.ref(rank, begin).str();
          failed[i] = fmt::format("part {} of {} ({}): {}", i + 1, parts.size(), from, failure_reason(failure));
        }
      }
    };
    format::run_on_threads(format::thread_count(options.threads, parts.size()), work);
    if (skipped) out.stats["parts_not_started"] = skipped;
    for (auto& [index, reason] : failed) out.undecided.push_back(std::move(reason));
    std::sort(out.races.begin(), out.races.end(), [](const RawRace& a, const RawRace& b) { return a.recv < b.recv; });
  }
  out.stats["assertions"] = assertions;
  out.stats["decision_variables"] = variables;
  out.stats["solver_calls"] = calls;
  out.stats["unknown"] = out.unknown;
  return out;
}

}  // namespace smtrace::smt
