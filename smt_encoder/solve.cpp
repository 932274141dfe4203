// Races, deadlocks and questions over the parts of a model; see solve.hpp.
#include "smt_encoder/solve.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>

#include "smt_encoder/encoder.hpp"
#include "smt_encoder/guided.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/parts.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::smt {

namespace {

using Clock = std::chrono::steady_clock;

// The wall-clock budget shared by every solver call of one solve().
class Budget {
 public:
  explicit Budget(double seconds)
      : m_end(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))) {}
  // Return the seconds left (0 when spent).
  double left() const { return std::max(0.0, std::chrono::duration<double>(m_end - Clock::now()).count()); }

 private:
  Clock::time_point m_end;
};

// Return the witness of `steps` (by `part`'s indices) in whole-model
// indices if the schedule replays to `goal`, else nothing.
std::optional<RawWitness> replayed_witness(const Part& part, const std::vector<RawStep>& steps, const Goal& goal,
                                           Buffering buffering) {
  if (!check_schedule(part.model, buffering, steps, goal).empty()) return std::nullopt;
  RawWitness w;
  w.outcome = goal.outcome;
  w.replayed = true;
  for (RawStep s : steps) {
    s.event += part.first[s.rank];
    if (s.recv != k_none) s.recv = part.op_of[s.recv];
    if (s.send != k_none) s.send = part.op_of[s.send];
    w.steps.push_back(s);
  }
  if (goal.outcome == Outcome::deadlock) {
    w.cycle = blocked_ranks(part.model, buffering, steps);
    for (RawBlocked& b : w.cycle) b.event += part.first[b.rank];
  }
  return w;
}

// Return a replayed witness of `part`'s receive `recv` matching `send` (part
// indices) found by the directed replay (guided.hpp), or nothing.
std::optional<RawWitness> guided_witness(const Part& part, uint32_t recv, uint32_t send, Buffering buffering) {
  if (!guided_enabled() || recv == k_none || send == k_none) return std::nullopt;
  const Channels channels(part.model);
  const MatchPairs pairs = match_pairs(part.model, channels, find_cuts(part.model));
  if (pairs.find(recv, send) == k_none) return std::nullopt;
  auto steps = guided_match(part.model, pairs, buffering, recv, send);
  if (!steps) return std::nullopt;
  Goal goal;
  goal.recv = recv;
  goal.send = send;
  return replayed_witness(part, *steps, goal, buffering);
}

// One part with its index, pairs and encoding.
struct PartSolver {
  // Throw BudgetSpent when encoding takes longer than `budget_s` seconds.
  PartSolver(Part p, Track track, double budget_s)
      : part(std::move(p)), channels(part.model), cuts(find_cuts(part.model)),
        pairs(match_pairs(part.model, channels, cuts)), encoder(part.model, channels, pairs, track, budget_s) {}


  // Return the witness of `out` if its schedule replays to `goal`, else nothing.
  std::optional<RawWitness> witness(const SolveOutcome& out, const Goal& goal, Buffering buffering) const {
    return replayed_witness(part, out.steps, goal, buffering);
  }

  // Return the witness of a bad end, deadlock or unmatched, if it replays as one.
  std::optional<RawWitness> bad_witness(const SolveOutcome& out, Buffering buffering) const {
    Goal goal;
    goal.outcome = Outcome::deadlock;
    if (auto w = witness(out, goal, buffering)) return w;
    goal.outcome = Outcome::unmatched;
    return witness(out, goal, buffering);
  }

  Part part;
  Channels channels;
  std::vector<Cut> cuts;
  MatchPairs pairs;
  Encoder encoder;
};

bool any_rank_stopped(const Model& model) {
  return std::any_of(model.ranks.begin(), model.ranks.end(), [](const RankEvents& r) { return r.limit % 2 == 1; });
}

// What one part found, merged into the Solution under a lock.
struct PartFindings {
  std::vector<RawRace> races;
  std::vector<RawWitness> deadlocks;
  uint64_t unknown = 0;
};

// Return true when receive or probe `r` is a nondeterministic choice point.
bool is_wildcard(const Op& r) {
  return (r.kind == OpKind::recv || r.kind == OpKind::probe) && r.probe == k_none &&
         (r.peer == k_any || r.tag == k_any);
}

void find_races(PartSolver& ps, const SolveOptions& options, const Budget& budget, PartFindings& out) {
  const Model& m = ps.part.model;
  std::vector<uint32_t> wildcards;
  for (uint32_t r = 0; r < m.ops.size(); ++r) {
    if (!is_wildcard(m.ops[r])) continue;
    const auto& cands = ps.pairs.sends[r];
    if (std::any_of(cands.begin(), cands.end(), [&](uint32_t s) { return s != m.ops[r].recorded; })) {
      wildcards.push_back(r);
    }
  }
  if (wildcards.empty()) return;
  // Can anything end badly in this part at all? If not, every race is harmless.
  bool bad_possible = options.outcomes || options.errors_only;
  bool outcomes_known = false;
  if (bad_possible) {
    const SolveOutcome any = ps.encoder.bad_end(BadEnd::either, options.buffering, std::nullopt, budget.left());
    if (any.verdict == Verdict::unsat) {
      bad_possible = false;
      outcomes_known = true;
    } else if (any.verdict == Verdict::unknown) {
      ++out.unknown;
      if (options.errors_only) return;
    }
  }
  if (options.errors_only && !bad_possible) return;

  // Pairs seen matched in some replayed witness: feasible without asking again.
  std::map<std::pair<uint32_t, uint32_t>, std::shared_ptr<RawWitness>> seen;
  auto learn = [&](const SolveOutcome& sol, const std::shared_ptr<RawWitness>& w) {
    for (const RawStep& s : sol.steps) {
      if (s.action == StepAction::match) seen.emplace(std::pair{s.recv, s.send}, w);
    }
  };
  for (uint32_t r : wildcards) {
    RawRace race;
    race.recv = ps.part.op_of[r];
    for (uint32_t s : ps.pairs.sends[r]) {
      if (s == m.ops[r].recorded) continue;
      RawAlternative alt;
      alt.send = ps.part.op_of[s];
      if (budget.left() <= 0) {  // spent: undecided, not asked
        ++out.unknown;
        race.alternatives.push_back(std::move(alt));
        continue;
      }
      if (auto it = seen.find({r, s}); it != seen.end()) {
        alt.verdict = Verdict::sat;
        alt.witness = *it->second;
        alt.witness->outcome = Outcome::match;
      } else {
        const SolveOutcome sol = ps.encoder.can_match(r, s, options.buffering, budget.left());
        alt.verdict = sol.verdict;
        if (sol.verdict == Verdict::sat) {
          Goal goal;
          goal.recv = r;
          goal.send = s;
          if (auto w = ps.witness(sol, goal, options.buffering)) {
            alt.witness = *w;
            learn(sol, std::make_shared<RawWitness>(*w));
          } else {
            alt.verdict = Verdict::unknown;  // Z3's schedule did not replay: no claim
          }
        }
        if (alt.verdict == Verdict::unknown) ++out.unknown;
      }
      if (alt.verdict == Verdict::sat) {
        if (outcomes_known) {
          alt.outcome = Outcome::harmless;
          alt.outcome_known = true;
        } else if (bad_possible) {
          // First with every other receive keeping its recorded match (the
          // bad end follows from this choice alone), then with any matches.
          SolveOutcome bad =
              ps.encoder.bad_end(BadEnd::either, options.buffering, std::pair{r, s}, budget.left(), true);
          if (bad.verdict == Verdict::unsat) {
            bad = ps.encoder.bad_end(BadEnd::either, options.buffering, std::pair{r, s}, budget.left());
            alt.alone = false;
          }
          if (bad.verdict == Verdict::unsat) {
            alt.alone = true;
            alt.outcome = Outcome::harmless;
            alt.outcome_known = true;
          } else if (bad.verdict == Verdict::sat) {
            if (auto w = ps.bad_witness(bad, options.buffering)) {
              alt.outcome = w->outcome;
              alt.outcome_known = true;
              alt.witness = std::move(*w);
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
    if (!race.alternatives.empty()) out.races.push_back(std::move(race));
  }
}

void find_deadlock(PartSolver& ps, const Budget& budget, PartFindings& out) {
  if (any_rank_stopped(ps.part.model)) return;  // the recorded run itself stopped: check's deadlock says so
  const SolveOutcome sol = ps.encoder.bad_end(BadEnd::deadlock, Buffering::zero, std::nullopt, budget.left(), true);
  if (sol.verdict == Verdict::unknown) {
    ++out.unknown;
    return;
  }
  if (sol.verdict != Verdict::sat) return;
  Goal goal;
  goal.outcome = Outcome::deadlock;
  if (auto w = ps.witness(sol, goal, Buffering::zero)) {
    out.deadlocks.push_back(std::move(*w));
  } else {
    ++out.unknown;
  }
}

// Return the index of the part of `parts` holding segment `segment`, or k_none.
uint32_t part_of(const std::vector<Part>& parts, uint32_t segment) {
  for (uint32_t i = 0; i < parts.size(); ++i) {
    if (parts[i].first_segment <= segment && segment <= parts[i].last_segment) return i;
  }
  return k_none;
}

// Return the range of segments a question about events (ra, ea) and (rb, eb) needs.
std::pair<uint32_t, uint32_t> question_range(const std::vector<Part>& parts, const std::vector<Cut>& cuts,
                                             uint32_t ra, uint32_t ea, uint32_t rb, uint32_t eb) {
  uint32_t lo = std::min(segment_of(cuts, ra, ea), segment_of(cuts, rb, eb));
  uint32_t hi = std::max(segment_of(cuts, ra, ea), segment_of(cuts, rb, eb));
  if (const uint32_t p = part_of(parts, lo); p != k_none) lo = parts[p].first_segment;
  if (const uint32_t p = part_of(parts, hi); p != k_none) hi = parts[p].last_segment;
  return {lo, hi};
}

// Return the explanation of an unsat answer: the same question asked again
// of a tracked encoding of `part`, whose unsat core names the constraints.
std::vector<std::string> explain(const Part& part, const Budget& budget,
                                 const std::function<SolveOutcome(Encoder&)>& ask) {
  try {
    PartSolver tracked(part, Track::yes, std::max(budget.left(), 0.001));
    SolveOutcome out = ask(tracked.encoder);
    if (out.verdict == Verdict::unsat) return out.explanation;
  } catch (const BudgetSpent&) {
  }
  return {"no explanation: the budget ran out before the unsat core was found"};
}

// Fill `ans` from what `ps`'s encoder answered (`sol`); a sat schedule
// must replay to `goal`, else the answer is unknown.
void settle(const PartSolver& ps, const SolveOutcome& sol, const Goal& goal, const SolveOptions& options,
            std::map<std::string, uint64_t>& stats, std::string* smt2, RawAnswer& ans) {
  stats["question_assertions"] += ps.encoder.assertions();
  stats["question_decision_variables"] += ps.encoder.decision_variables();
  if (smt2 && smt2->empty()) *smt2 = ps.encoder.smt2();
  ans.verdict = sol.verdict;
  ans.explanation = sol.explanation;
  ans.reason = sol.reason;
  if (sol.verdict == Verdict::sat) {
    ans.witness = ps.witness(sol, goal, options.buffering);
    if (!ans.witness) {
      ans.verdict = Verdict::unknown;
      ans.reason = "the solver's schedule did not replay";
    }
  }
}

RawAnswer answer(const Model& model, const std::vector<Cut>& cuts, const Channels& channels,
                 const std::vector<Part>& parts, const RawQuestion& q, const SolveOptions& options,
                 const Budget& budget, std::map<std::string, uint64_t>& stats, std::string* smt2) {
  RawAnswer ans;
  if (q.kind == QuestionKind::can_match) {
    const Op& r = model.ops[q.recv];
    const Op& s = model.ops[q.send];
    if (std::string why = pair_excluded_because(model, channels, cuts, q.recv, q.send); !why.empty()) {
      ans.verdict = Verdict::unsat;
      ans.explanation.push_back(std::move(why));
      return ans;
    }
    const auto [lo, hi] = question_range(parts, cuts, r.rank, r.post, s.rank, s.post);
    Part part = extract(model, cuts, lo, hi);
    if (auto w = guided_witness(part, part.local_op(q.recv), part.local_op(q.send), options.buffering)) {
      ++stats["question_guided_witnesses"];
      ans.verdict = Verdict::sat;
      ans.witness = std::move(*w);
      return ans;
    }
    PartSolver ps(std::move(part), Track::no, std::max(budget.left(), 0.001));
    const uint32_t lr = ps.part.local_op(q.recv), ls = ps.part.local_op(q.send);
    if (lr == k_none || ls == k_none || ps.pairs.find(lr, ls) == k_none) {
      ans.verdict = Verdict::unsat;
      ans.explanation.push_back("the pair is not among the match pairs: no execution can have it");
      return ans;
    }
    auto ask = [&](Encoder& e) { return e.can_match(lr, ls, options.buffering, budget.left()); };
    SolveOutcome sol = ask(ps.encoder);
    if (sol.verdict == Verdict::unsat) sol.explanation = explain(ps.part, budget, ask);
    Goal goal;
    goal.recv = lr;
    goal.send = ls;
    settle(ps, sol, goal, options, stats, smt2, ans);
  } else {
    const auto [lo, hi] = question_range(parts, cuts, q.a_rank, q.a_event, q.b_rank, q.b_event);
    PartSolver ps(extract(model, cuts, lo, hi), Track::no, std::max(budget.left(), 0.001));
    Goal goal;
    goal.outcome = Outcome::precede;
    goal.a_rank = q.a_rank;
    goal.a_event = q.a_event - ps.part.first[q.a_rank];
    goal.b_rank = q.b_rank;
    goal.b_event = q.b_event - ps.part.first[q.b_rank];
    auto ask = [&](Encoder& e) {
      return e.can_precede(goal.a_rank, goal.a_event, goal.b_rank, goal.b_event, options.buffering, budget.left());
    };
    SolveOutcome sol = ask(ps.encoder);
    if (sol.verdict == Verdict::unsat) sol.explanation = explain(ps.part, budget, ask);
    settle(ps, sol, goal, options, stats, smt2, ans);
    if (ans.verdict == Verdict::unsat && ans.explanation.empty()) {
      ans.explanation.push_back(q.a_rank == q.b_rank ? "program order: the first event comes after the second"
                                                     : "the question's own condition cannot hold");
    }
  }
  if (ans.verdict == Verdict::unknown && ans.reason.empty()) ans.reason = budget.left() <= 0 ? "budget spent" : "unknown";
  return ans;
}

}  // namespace

std::vector<RawBlocked> blocked_ranks(const Model& model, Buffering buffering, const std::vector<RawStep>& steps) {
  const Machine machine(model, buffering);
  Machine::State state = machine.initial();
  for (const RawStep& step : steps) {
    if (!machine.refuse(state, step).empty()) return {};
    machine.apply(state, step);
  }
  std::vector<RawBlocked> blocked;
  for (uint32_t r = 0; r < model.ranks.size(); ++r) {
    if (state.pos[r] == model.ranks[r].limit) continue;
    RawBlocked b;
    b.rank = r;
    b.event = std::min<uint32_t>(state.pos[r] / 2, static_cast<uint32_t>(model.ranks[r].events.size()) - 1);
    std::set<uint32_t> waits;
    for (uint32_t i : model.ranks[r].events[b.event].completes) {
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

Solution solve(const Model& model, const std::vector<RawQuestion>& questions, const SolveOptions& options) {
  Solution out;
  const Budget budget(options.timeout_s);
  const std::vector<Cut> cuts = find_cuts(model);
  const Channels channels(model);
  const MatchPairs pairs = match_pairs(model, channels, cuts);
  const std::vector<Part> parts = split(model, cuts, pairs);
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

  for (const RawQuestion& q : questions) {
    try {
      out.answers.push_back(answer(model, cuts, channels, parts, q, options, budget, out.stats,
                                   options.smt2 ? &out.smt2 : nullptr));
    } catch (const BudgetSpent& e) {
      RawAnswer undecided;
      undecided.reason = e.what();
      out.answers.push_back(std::move(undecided));
    }
    if (out.answers.back().verdict == Verdict::unknown) ++out.unknown;
  }

  if (options.races || options.deadlocks) {
    std::mutex mutex;
    std::atomic<std::size_t> next{0};
    uint64_t assertions = 0, variables = 0, calls = 0;
    auto work = [&] {
      for (std::size_t i; (i = next.fetch_add(1)) < parts.size();) {
        // Races only: a part without a wildcard receive or probe has nothing to ask.
        const auto& ops = parts[i].model.ops;
        if (!options.deadlocks && std::none_of(ops.begin(), ops.end(), is_wildcard)) continue;
        std::unique_ptr<PartSolver> made;
        try {
          made = std::make_unique<PartSolver>(parts[i], Track::no, std::max(budget.left(), 0.001));
        } catch (const BudgetSpent&) {
          std::lock_guard lock(mutex);
          ++out.unknown;  // the part is left undecided
          continue;
        }
        PartSolver& ps = *made;
        PartFindings found;
        if (options.deadlocks) find_deadlock(ps, budget, found);
        if (options.races) find_races(ps, options, budget, found);
        std::lock_guard lock(mutex);
        assertions += ps.encoder.assertions();
        variables += ps.encoder.decision_variables();
        calls += ps.encoder.solver_calls();
        if (options.smt2 && out.smt2.empty() && i == 0) out.smt2 = ps.encoder.smt2();
        for (RawRace& r : found.races) out.races.push_back(std::move(r));
        for (RawWitness& w : found.deadlocks) out.deadlocks.push_back(std::move(w));
        out.unknown += found.unknown;
      }
    };
    format::run_on_threads(format::thread_count(options.threads, parts.size()), work);
    out.stats["assertions"] = assertions;
    out.stats["decision_variables"] = variables;
    out.stats["solver_calls"] = calls;
    std::sort(out.races.begin(), out.races.end(), [](const RawRace& a, const RawRace& b) { return a.recv < b.recv; });
  } else {
    out.stats["assertions"] = out.stats["question_assertions"];
    out.stats["decision_variables"] = out.stats["question_decision_variables"];
  }
  out.stats["solver_calls"] += questions.size();
  out.stats["unknown"] = out.unknown;
  return out;
}

}  // namespace smtrace::smt
