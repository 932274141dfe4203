// The directed replays of guided.hpp.
#include "smt_encoder/guided.hpp"

#include <algorithm>

namespace smtrace::smt {

namespace {

using Clock = std::chrono::steady_clock;

// One run: the state, the ranks and endpoints to look at again, and who
// waits for what.
class Runner {
 public:
  // Start at `start`; every endpoint it has something posted at is looked at first.
  Runner(const Machine& machine, const RunPolicy& policy, const RunLayout& layout, const RunStart& start)
      : m_machine(machine), m_model(machine.model()), m_policy(policy), m_layout(layout),
        m_pending(start.pending()), m_cursor(m_model.ranks.size(), 0), m_in_ready(m_model.ranks.size(), false),
        m_waiters(m_model.instances.size()), m_posted_members(start.posted_members()) {
    m_dirty.assign(layout.endpoints(), false);
    m_result.state = start.state();
    for (uint32_t e : start.marked()) mark(e);
  }

  RunResult go() {
    for (uint32_t r = 0; r < m_model.ranks.size(); ++r) wake(r);
    while (!m_finished) {
      if (!m_ready.empty()) {
        const uint32_t rank = m_ready.back();
        m_ready.pop_back();
        m_in_ready[rank] = false;
        advance(rank);
      } else if (!m_dirty_list.empty()) {
        const uint32_t e = m_dirty_list.back();
        m_dirty_list.pop_back();
        m_dirty[e] = false;
        settle(e);
      } else if (m_policy.stalled && m_policy.stalled(state())) {
        // The policy allows more now: look at every endpoint again.
        for (uint32_t e = 0; e < m_dirty.size(); ++e) mark(e);
      } else {
        break;
      }
    }
    return std::move(m_result);
  }

 private:
  Machine::State& state() { return m_result.state; }

  void wake(uint32_t rank) {
    if (m_in_ready[rank]) return;
    m_in_ready[rank] = true;
    m_ready.push_back(rank);
  }
  void mark(uint32_t endpoint) {
    if (endpoint == k_none || m_dirty[endpoint]) return;
    m_dirty[endpoint] = true;
    m_dirty_list.push_back(endpoint);
  }

  // Take `step` (allowed); the run is over when the policy is done or a limit is reached.
  void take(const RawStep& step) {
    m_machine.apply(state(), step);
    m_result.steps.push_back(step);
    if (m_policy.done && m_policy.done(state())) {
      m_result.done = true;
      m_finished = true;
    }
    if (m_result.steps.size() >= m_policy.max_steps) {
      m_result.stopped = true;
      m_finished = true;
    }
    if (m_policy.deadline && (m_result.steps.size() & 4095) == 0 && Clock::now() > *m_policy.deadline) {
      m_result.stopped = true;
      m_finished = true;
    }
  }

  // Let `rank` call and return as far as it can.
  void advance(uint32_t rank) {
    const RankEvents& events = m_model.ranks[rank];
    while (!m_finished) {
      const uint32_t pos = state().pos[rank];
      if (pos >= events.limit) return;
      const uint32_t k = pos / 2;
      if (pos % 2 == 0) {
        if (m_policy.may_call && !m_policy.may_call(rank, k, state())) {
          if (std::find(m_held.begin(), m_held.end(), rank) == m_held.end()) m_held.push_back(rank);
          return;
        }
        take({StepAction::call, rank, k, k_none, k_none});
        m_cursor[rank] = 0;
        for (uint32_t op : events.posts(k)) posted(op);
        continue;
      }
      if (pos + 1 > events.limit) return;  // stopped inside this call in the trace
      uint32_t& at = m_cursor[rank];
      const std::span<const uint32_t> completes = events.completes(k);
      while (at < completes.size() && m_machine.complete(state(), completes[at])) ++at;
      if (at < completes.size()) {
        const Op& o = m_model.ops[completes[at]];
        if (o.kind == OpKind::coll && o.instance != k_none) m_waiters[o.instance].push_back(rank);
        return;  // woken when the op it waits for changes
      }
      take({StepAction::ret, rank, k, k_none, k_none});
      if (!m_held.empty()) {
        for (uint32_t h : m_held) wake(h);
        m_held.clear();
      }
    }
  }

  void posted(uint32_t op) {
    const Op& o = m_model.ops[op];
    switch (o.kind) {
      case OpKind::recv:
      case OpKind::probe:
        m_pending[m_layout.endpoint_of(op)].push_back(op);
        mark(m_layout.endpoint_of(op));
        break;
      case OpKind::send:
        mark(m_layout.endpoint_of(op));
        break;
      case OpKind::coll: {
        if (o.instance == k_none) break;
        const Instance& inst = m_model.instances[o.instance];
        ++m_posted_members[o.instance];
        // Members that wait for every call are woken once, by the last one.
        if (m_machine.waits_for_all(inst) && m_posted_members[o.instance] < m_layout.members(o.instance)) break;
        for (uint32_t w : m_waiters[o.instance]) wake(w);
        m_waiters[o.instance].clear();
        break;
      }
    }
  }

  // Match what can be matched at `endpoint`, oldest receive first, until nothing changes.
  void settle(uint32_t endpoint) {
    std::vector<uint32_t>& pending = m_pending[endpoint];
    for (bool changed = true; changed && !m_finished;) {
      changed = false;
      std::size_t kept = 0;
      for (std::size_t i = 0; i < pending.size(); ++i) {
        const uint32_t r = pending[i];
        if (!m_finished && state().partner[r] == k_none && try_match(r)) changed = true;
        if (state().partner[r] == k_none) pending[kept++] = r;
      }
      pending.resize(kept);
    }
  }

  bool try_match(uint32_t r) {
    const Op& o = m_model.ops[r];
    if (o.kind == OpKind::probe && state().pos[o.rank] != 2 * o.post + 1) return false;  // not waiting in it
    bool matched = false;
    m_policy.choose(r, state(), [&](uint32_t s) {
      if (matched || s == k_none || state().partner[s] != k_none || !m_machine.can_match(state(), r, s)) return false;
      take({StepAction::match, o.rank, o.post, r, s});
      wake(o.rank);
      wake(m_model.ops[s].rank);
      matched = true;
      return true;
    });
    return matched;
  }

  const Machine& m_machine;
  const Model& m_model;
  const RunPolicy& m_policy;
  const RunLayout& m_layout;
  RunResult m_result;
  bool m_finished = false;
  std::vector<std::vector<uint32_t>> m_pending;      // per endpoint: posted receives and probes, unmatched
  std::vector<bool> m_dirty;
  std::vector<uint32_t> m_dirty_list;
  std::vector<uint32_t> m_cursor;                    // per rank: completes of its current event known complete
  std::vector<uint32_t> m_ready;
  std::vector<bool> m_in_ready;
  std::vector<uint32_t> m_held;                      // ranks the policy holds before a call
  std::vector<std::vector<uint32_t>> m_waiters;      // per instance: ranks waiting in it
  std::vector<uint32_t> m_posted_members;            // per instance
};

}  // namespace

RunLayout::RunLayout(const Model& model)
    : m_endpoint_of(model.ops.size(), k_none), m_members(model.instances.size(), 0) {
  // Dense ids in first-seen order, through a table (Channels' PairIds).
  uint32_t comms = 0, width = static_cast<uint32_t>(model.ranks.size());
  for (const Op& o : model.ops) {
    comms = std::max(comms, o.comm + 1);
    if (o.kind == OpKind::send && o.peer >= 0) width = std::max(width, static_cast<uint32_t>(o.peer) + 1);
  }
  Channels::PairIds ids;
  ids.init(comms, width, model.ops.size());
  auto id = [&](uint32_t comm, uint32_t rank) {
    const uint32_t got = ids.insert(comm, rank, m_endpoints);
    if (got == m_endpoints) ++m_endpoints;
    return got;
  };
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& o = model.ops[i];
    if (o.kind == OpKind::recv || o.kind == OpKind::probe) m_endpoint_of[i] = id(o.comm, o.rank);
    if (o.kind == OpKind::send && o.peer >= 0) m_endpoint_of[i] = id(o.comm, static_cast<uint32_t>(o.peer));
  }
  for (uint32_t i = 0; i < model.instances.size(); ++i) {
    for (uint32_t member : model.instances[i].members) m_members[i] += member != k_none;
  }
}

bool offer_guided(const Model& model, const MatchPairs& pairs, uint32_t r, const Machine::State& state,
                  const RunPolicy::Take& take, uint32_t avoid, const Spread& spread) {
  const Op& o = model.ops[r];
  if (o.probe != k_none) {
    return state.partner[o.probe] != k_none && state.partner[o.probe] != avoid && take(state.partner[o.probe]);
  }
  if (spread.offer && spread.offer(r, spread.rotate + r, [&](uint32_t s) { return s != avoid && take(s); })) return true;
  if (o.recorded != k_none && o.recorded != avoid && take(o.recorded)) return true;
  for (uint32_t s : pairs.sends[r]) {
    if (s != avoid && s != o.recorded && take(s)) return true;
  }
  return false;
}

RunStart::RunStart(const Machine& machine, const RunLayout& layout, Machine::State state)
    : m_state(std::move(state)), m_pending(layout.endpoints()), m_posted_members(machine.model().instances.size(), 0) {
  const Model& model = machine.model();
  std::vector<bool> marked(layout.endpoints(), false);
  // Its unmatched receives and probes wait at their endpoints (oldest
  // first: a rank's ops are in posting order), its collective calls count.
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    if (!machine.posted(m_state, i)) continue;
    const Op& o = model.ops[i];
    if ((o.kind == OpKind::recv || o.kind == OpKind::probe) && m_state.partner[i] == k_none) {
      m_pending[layout.endpoint_of(i)].push_back(i);
    }
    if (o.kind == OpKind::coll && o.instance != k_none) ++m_posted_members[o.instance];
    if (const uint32_t e = layout.endpoint_of(i); e != k_none && !marked[e]) {
      marked[e] = true;
      m_marked.push_back(e);
    }
  }
}

RunResult run(const Machine& machine, const RunPolicy& policy) {
  const RunLayout layout(machine.model());
  return Runner(machine, policy, layout, RunStart(machine, layout, machine.initial())).go();
}

RunResult run(const Machine& machine, const RunPolicy& policy, const RunLayout& layout, const RunStart& start) {
  return Runner(machine, policy, layout, start).go();
}

std::optional<std::vector<RawStep>> guided_match(const Machine& machine, const MatchPairs& pairs, uint32_t recv,
                                                 uint32_t send, const Spread& spread, uint64_t max_steps) {
  const Model& model = machine.model();
  if (recv >= model.ops.size() || send >= model.ops.size() || pairs.find(recv, send) == k_none) return std::nullopt;
  // With a spread, the sends `recv` could take that `send` cannot overtake
  // (same sender, communicator and destination, posted before it): `recv`
  // takes `send` only once each is matched, so the other receives take them
  // first. Without it the run follows the recorded matches, which leave
  // them unmatched when the recorded run took fewer messages of that sender
  // before `recv` than the question needs.
  std::vector<uint32_t> before;
  if (spread.offer) {
    const Op& target = model.ops[send];
    for (uint32_t s : pairs.sends[recv]) {
      const Op& o = model.ops[s];
      if (s < send && o.rank == target.rank && o.comm == target.comm && o.peer == target.peer) before.push_back(s);
    }
    std::sort(before.begin(), before.end());
  }
  std::size_t drained = 0;  // before[0, drained) are matched
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    if (r == recv) {
      take(send);
      return;
    }
    while (drained < before.size() && state.partner[before[drained]] != k_none) ++drained;
    if (drained < before.size() && take(before[drained])) return;
    offer_guided(model, pairs, r, state, take, send, spread);
  };
  policy.done = [&](const Machine::State& state) { return state.partner[recv] == send; };
  policy.max_steps = max_steps;
  RunResult result = run(machine, policy);
  if (!result.done) return std::nullopt;
  return std::move(result.steps);
}

std::optional<std::vector<RawStep>> guided_precede(const Machine& machine, const MatchPairs& pairs, uint32_t a_rank,
                                                   uint32_t a_event, uint32_t b_rank, uint32_t b_event,
                                                   uint64_t max_steps) {
  const Model& model = machine.model();
  if (a_rank >= model.ranks.size() || b_rank >= model.ranks.size()) return std::nullopt;
  if (a_event >= model.ranks[a_rank].events.size() || b_event >= model.ranks[b_rank].events.size()) {
    return std::nullopt;
  }
  if (a_rank == b_rank && b_event <= a_event) return std::nullopt;
  auto returned = [&](const Machine::State& state) { return state.pos[a_rank] >= 2 * a_event + 2; };
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    offer_guided(model, pairs, r, state, take);
  };
  policy.may_call = [&](uint32_t rank, uint32_t event, const Machine::State& state) {
    return rank != b_rank || event != b_event || returned(state);
  };
  policy.done = [&](const Machine::State& state) { return returned(state) && state.pos[b_rank] >= 2 * b_event + 1; };
  policy.max_steps = max_steps;
  RunResult result = run(machine, policy);
  if (!result.done) return std::nullopt;
  return std::move(result.steps);
}

}  // namespace smtrace::smt
