#include "smt_encoder/semantics.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/core.h>

namespace smtrace::smt {

namespace {

// Posting order of two ops of one rank: event, then op index (the order of
// requests in one MPI_Startall).
bool posted_before(const Op& a, uint32_t ia, const Op& b, uint32_t ib) {
  return a.post < b.post || (a.post == b.post && ia < ib);
}

std::string step_text(const Model& model, const RawStep& s) {
  switch (s.action) {
    case StepAction::call: return "call " + event_text(model, s.rank, s.event);
    case StepAction::ret: return "return " + event_text(model, s.rank, s.event);
    case StepAction::match:
      return fmt::format("match {} <- {}", model.post_ref(s.recv).str(), model.post_ref(s.send).str());
    case StepAction::blocked: return "blocked";
  }
  return "?";
}

}  // namespace

Machine::Machine(const Model& model, Buffering buffering)
    : m_model(model), m_buffering(buffering), m_channels(model), m_previous_same_tag(model.ops.size(), k_none),
      m_accepting(model.ops.size()), m_recorded_send(model.ops.size(), false), m_by_rank_recv(model.ranks.size()) {
  // The channel index (Channels) keeps a rank's sends and receives on one
  // communicator in index order; the rule needs posting order.
  // The last op by (comm, rank and kind): dense ids, as Channels' (a hash
  // map only past the table's limit).
  uint32_t comms = 0;
  for (const Op& op : model.ops) comms = std::max(comms, op.comm + 1);
  Channels::PairIds line_ids;
  line_ids.init(comms, 2 * uint64_t{model.ranks.size()}, model.ops.size());
  std::vector<uint32_t> last;  // per (comm, rank, kind) id: the op last seen
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& op = model.ops[i];
    if (op.kind == OpKind::recv && op.recorded != k_none) m_recorded_send[op.recorded] = true;
    if (op.kind == OpKind::recv) m_by_rank_recv[op.rank].push_back(i);
    if (op.kind == OpKind::send && op.peer >= 0) {
      m_previous_same_tag[i] = m_channels.previous_send(i, op.tag);
      const auto dest = static_cast<uint32_t>(op.peer);
      const auto src = static_cast<int32_t>(op.rank);
      m_accepting[i] = {&m_channels.receives(op.comm, dest, k_any, k_any), &m_channels.receives(op.comm, dest, k_any, op.tag),
                        &m_channels.receives(op.comm, dest, src, k_any), &m_channels.receives(op.comm, dest, src, op.tag)};
    }
    if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
    const uint32_t id = line_ids.insert(op.comm, 2 * uint64_t{op.rank} + (op.kind == OpKind::send ? 1 : 0),
                                        static_cast<uint32_t>(last.size()));
    if (id == last.size()) {
      last.push_back(i);
      continue;
    }
    if (!posted_before(model.ops[last[id]], last[id], op, i)) {
      throw std::logic_error(fmt::format("model: the operations of rank {} on {} are not in posting order (op {})",
                                         op.rank, model.comm_name(op.comm), i));
    }
    last[id] = i;
  }
}

Machine::State Machine::initial() const {
  State s;
  s.pos.assign(m_model.ranks.size(), 0);
  s.partner.assign(m_model.ops.size(), k_none);
  return s;
}

bool Machine::posted(const State& state, uint32_t op) const {
  const Op& o = m_model.ops[op];
  return state.pos[o.rank] >= 2 * o.post + 1;
}

bool Machine::complete(const State& state, uint32_t op) const {
  const Op& o = m_model.ops[op];
  switch (o.kind) {
    case OpKind::recv:
    case OpKind::probe:
      return state.partner[op] != k_none;
    case OpKind::send:
      return !waits_for_match(o) || state.partner[op] != k_none;
    case OpKind::coll: {
      if (o.instance == k_none) return true;
      const Instance& inst = m_model.instances[o.instance];
      for (uint32_t m = 0; m < inst.members.size(); ++m) {
        const uint32_t other = inst.members[m];
        if (other != k_none && !posted(state, other) && waits_for_member(inst, o.member, m)) return false;
      }
      return true;
    }
  }
  return true;
}

bool Machine::waits_for_member(const Instance& instance, uint32_t member, uint32_t other) const {
  if (waits_for_all(instance)) return true;
  switch (instance.kind) {
    case CollKind::full: return true;  // waits_for_all
    case CollKind::from_root: return member != instance.root && other == instance.root;
    case CollKind::to_root: return member == instance.root;
    case CollKind::scan: return other <= member;
    case CollKind::exscan: return other < member;
  }
  return true;
}

bool Machine::match_basics(const State& state, uint32_t r, uint32_t s, std::string* why) const {
  auto no = [&](const char* text) {
    if (why) *why = text;
    return false;
  };
  const Op& recv = m_model.ops[r];
  const Op& send = m_model.ops[s];
  if ((recv.kind != OpKind::recv && recv.kind != OpKind::probe) || send.kind != OpKind::send) {
    return no("not a receive and a send");
  }
  if (!posted(state, r)) return no("the receive is not posted");
  if (!posted(state, s)) return no("the send is not posted");
  if (state.partner[r] != k_none) return no("the receive already matched");
  if (state.partner[s] != k_none) return no("the send already matched");
  if (!accepts(recv, send)) return no("the receive does not accept the send's envelope");
  if (recv.kind == OpKind::probe) {
    if (state.pos[recv.rank] != 2 * recv.post + 1) return no("the probe is not waiting");
    if (2 * recv.post + 2 > m_model.ranks[recv.rank].limit) return no("the probe never returns");
  }
  if (recv.probe != k_none && state.partner[recv.probe] != s) return no("the probe saw another message");
  return true;
}

bool Machine::match_allowed(const State& state, uint32_t r, uint32_t s, std::string* why) const {
  if (!match_basics(state, r, s, why)) return false;
  const Op& recv = m_model.ops[r];
  // Sender side: the nearest earlier send of the channel with each tag the
  // receive accepts (the earlier ones are matched when it is: header comment).
  auto earlier_send = [&](int32_t tag) {
    const uint32_t p = m_channels.previous_send(s, tag);
    if (p == k_none || state.partner[p] != k_none) return false;
    if (why) *why = fmt::format("earlier send {} is unmatched (non-overtaking)", m_model.post_ref(p).str());
    return true;
  };
  if (recv.tag != k_any) {
    const uint32_t p = m_previous_same_tag[s];
    if (p != k_none && state.partner[p] == k_none) {
      if (why) *why = fmt::format("earlier send {} is unmatched (non-overtaking)", m_model.post_ref(p).str());
      return false;
    }
  } else {
    for (int32_t tag : m_channels.channel_tags(s)) {
      if (earlier_send(tag)) return false;
    }
  }
  // Receiver side: the nearest receive posted before r with each envelope that accepts s.
  for (const std::vector<uint32_t>* list : m_accepting[s]) {
    const uint32_t i = m_channels.last_before(*list, r);
    if (i == k_none || state.partner[i] != k_none) continue;
    if (why) *why = fmt::format("earlier receive {} is unmatched (non-overtaking)", m_model.post_ref(i).str());
    return false;
  }
  return true;
}

bool Machine::match_by_scan(const State& state, uint32_t r, uint32_t s, std::string* why) const {
  if (!match_basics(state, r, s, why)) return false;
  auto no = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  const Op& recv = m_model.ops[r];
  const Op& send = m_model.ops[s];
  // Sender side: an earlier send of the same channel that the receive accepts.
  for (uint32_t i = 0; i < m_model.ops.size(); ++i) {
    const Op& other = m_model.ops[i];
    if (i == s || other.kind != OpKind::send || other.rank != send.rank) continue;
    if (!posted_before(other, i, send, s) || !accepts(recv, other)) continue;
    if (state.partner[i] == k_none) {
      return no(fmt::format("earlier send {} is unmatched (non-overtaking)", m_model.post_ref(i).str()));
    }
  }
  // Receiver side: an earlier receive of the rank that accepts the send.
  for (uint32_t i : m_by_rank_recv[recv.rank]) {
    if (i == r) continue;
    const Op& other = m_model.ops[i];
    const bool earlier = recv.kind == OpKind::probe ? other.post < recv.post : posted_before(other, i, recv, r);
    if (!earlier || !posted(state, i) || !accepts(other, send)) continue;
    if (state.partner[i] == k_none) {
      return no(fmt::format("earlier receive {} is unmatched (non-overtaking)", m_model.post_ref(i).str()));
    }
  }
  return true;
}

bool Machine::can_return(const State& state, uint32_t rank, uint32_t event) const {
  const RankEvents& events = m_model.ranks[rank];
  const uint32_t pos = state.pos[rank];
  if (pos != 2 * event + 1 || pos + 1 > events.limit) return false;
  for (uint32_t op : events.completes(event)) {
    if (!complete(state, op)) return false;
  }
  return true;
}

std::string Machine::refuse_by_definition(const State& state, const RawStep& step) const {
  if (step.action != StepAction::match) return refuse(state, step);
  if (step.recv >= m_model.ops.size() || step.send >= m_model.ops.size()) return "no such operation";
  std::string why;
  return match_by_scan(state, step.recv, step.send, &why) ? std::string() : why;
}

std::string Machine::refuse(const State& state, const RawStep& step) const {
  if (step.action == StepAction::match) {
    if (step.recv >= m_model.ops.size() || step.send >= m_model.ops.size()) return "no such operation";
    std::string why;
    return match_allowed(state, step.recv, step.send, &why) ? std::string() : why;
  }
  if (step.rank >= m_model.ranks.size()) return "no such rank";
  const RankEvents& rank = m_model.ranks[step.rank];
  if (step.event >= rank.events.size()) return "no such event";
  const uint32_t pos = state.pos[step.rank];
  if (step.action == StepAction::call) {
    if (pos != 2 * step.event) return "the rank is not before this call";
    if (pos + 1 > rank.limit) return "the rank never gets here";
    return {};
  }
  if (step.action == StepAction::ret) {
    if (pos != 2 * step.event + 1) return "the rank is not inside this call";
    if (pos + 1 > rank.limit) return "the call never returns in the trace";
    for (uint32_t op : rank.completes(step.event)) {
      if (!complete(state, op)) return fmt::format("{} is not complete", m_model.post_ref(op).str());
    }
    return {};
  }
  return "not a step";
}

void Machine::apply(State& state, const RawStep& step) const {
  switch (step.action) {
    case StepAction::call:
    case StepAction::ret:
      ++state.pos[step.rank];
      break;
    case StepAction::match:
      state.partner[step.recv] = step.send;
      if (m_model.ops[step.recv].kind == OpKind::recv) state.partner[step.send] = step.recv;
      break;
    case StepAction::blocked:
      break;
  }
}

void Machine::enabled(const State& state, std::vector<RawStep>& out) const {
  for (uint32_t r = 0; r < m_model.ranks.size(); ++r) {
    const uint32_t pos = state.pos[r];
    if (pos >= m_model.ranks[r].limit) continue;
    RawStep step;
    step.rank = r;
    step.event = pos / 2;
    step.action = pos % 2 == 0 ? StepAction::call : StepAction::ret;
    if (refuse(state, step).empty()) out.push_back(step);
  }
  for (uint32_t r = 0; r < m_model.ops.size(); ++r) {
    const Op& recv = m_model.ops[r];
    if ((recv.kind != OpKind::recv && recv.kind != OpKind::probe) || state.partner[r] != k_none) continue;
    if (!posted(state, r)) continue;
    for (uint32_t s = 0; s < m_model.ops.size(); ++s) {
      if (m_model.ops[s].kind != OpKind::send || state.partner[s] != k_none) continue;
      if (match_allowed(state, r, s, nullptr)) out.push_back({StepAction::match, 0, 0, r, s});
    }
  }
}

bool Machine::finished(const State& state) const {
  for (uint32_t r = 0; r < m_model.ranks.size(); ++r) {
    if (state.pos[r] != m_model.ranks[r].limit) return false;
  }
  return true;
}

bool Machine::any_step(const State& state) const {
  for (uint32_t r = 0; r < m_model.ranks.size(); ++r) {
    const uint32_t pos = state.pos[r];
    if (pos >= m_model.ranks[r].limit) continue;
    if (pos % 2 == 0 || can_return(state, r, pos / 2)) return true;
  }
  // Matches: only the first unmatched send of a channel and tag can be taken
  // (header comment), so each pending receive tries one send per sender and tag.
  std::unordered_map<const std::vector<uint32_t>*, uint32_t> heads;
  auto head = [&](const std::vector<uint32_t>& list) {
    auto [it, fresh] = heads.emplace(&list, k_none);
    if (fresh) {
      for (uint32_t s : list) {
        if (state.partner[s] == k_none) {
          it->second = s;
          break;
        }
      }
    }
    return it->second;
  };
  for (uint32_t r = 0; r < m_model.ops.size(); ++r) {
    const Op& recv = m_model.ops[r];
    if ((recv.kind != OpKind::recv && recv.kind != OpKind::probe) || state.partner[r] != k_none) continue;
    if (!posted(state, r)) continue;
    for (uint32_t sender : m_channels.senders_to(recv.comm, recv.rank)) {
      if (recv.peer != k_any && recv.peer != static_cast<int32_t>(sender)) continue;
      const auto& all = m_channels.sends(sender, recv.comm, recv.rank, k_any);
      if (all.empty()) continue;
      for (int32_t tag : m_channels.channel_tags(all.front())) {
        if (recv.tag != k_any && recv.tag != tag) continue;
        const uint32_t s = head(m_channels.sends(sender, recv.comm, recv.rank, tag));
        if (s != k_none && match_allowed(state, r, s, nullptr)) return true;
      }
    }
  }
  return false;
}

bool Machine::deadlocked(const State& state) const {
  if (finished(state)) return false;
  if (any_step(state)) return false;
  for (uint32_t r = 0; r < m_model.ranks.size(); ++r) {
    const uint32_t pos = state.pos[r];
    if (pos == m_model.ranks[r].limit) continue;
    if (pos % 2 == 0 || !m_model.ranks[r].events[pos / 2].may_block) return false;
  }
  return true;
}

bool Machine::unmatched_end(const State& state) const {
  if (!finished(state)) return false;
  if (any_step(state)) return false;
  for (uint32_t s = 0; s < m_model.ops.size(); ++s) {
    if (m_recorded_send[s] && posted(state, s) && state.partner[s] == k_none) return true;
  }
  return false;
}

std::string check_schedule(const Model& model, Buffering buffering, const std::vector<RawStep>& steps,
                           const Goal& goal) {
  return check_schedule(Machine(model, buffering), steps, goal);
}

std::string check_schedule(const Machine& machine, const std::vector<RawStep>& steps, const Goal& goal) {
  return check_schedule(machine, machine.initial(), steps, goal);
}

std::string check_schedule(const Machine& machine, const Machine::State& start, const std::vector<RawStep>& steps,
                           const Goal& goal) {
  const Model& model = machine.model();
  Machine::State state = start;
  std::size_t a_returned = SIZE_MAX, b_called = SIZE_MAX;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const RawStep& step = steps[i];
    if (std::string why = machine.refuse(state, step); !why.empty()) {
      return fmt::format("step {} ({}): {}", i, step_text(model, step), why);
    }
    machine.apply(state, step);
    if (step.action == StepAction::ret && step.rank == goal.a_rank && step.event == goal.a_event) a_returned = i;
    if (step.action == StepAction::call && step.rank == goal.b_rank && step.event == goal.b_event) b_called = i;
  }
  switch (goal.outcome) {
    case Outcome::match:
      if (goal.recv >= model.ops.size() || state.partner[goal.recv] != goal.send) {
        return "the schedule does not match the pair asked about";
      }
      return {};
    case Outcome::precede:
      if (a_returned == SIZE_MAX || b_called == SIZE_MAX || a_returned > b_called) {
        return "the schedule does not order the events as asked";
      }
      return {};
    case Outcome::deadlock:
      return machine.deadlocked(state) ? std::string() : "the schedule does not end in a deadlock";
    case Outcome::unmatched:
      return machine.unmatched_end(state) ? std::string() : "the schedule does not end with a message unmatched";
    case Outcome::harmless: case Outcome::mismatch:  // (no goal of a schedule: a property of a match)
      return {};
  }
  return {};
}

namespace {

struct StateHash {
  std::size_t operator()(const Machine::State& s) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t v : s.pos) h = (h ^ v) * 1099511628211ull;
    for (uint32_t v : s.partner) h = (h ^ v) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

}  // namespace

Exploration explore(const Model& model, Buffering buffering, uint64_t max_states) {
  return explore(model, buffering, max_states, {});
}

Exploration explore(const Model& model, Buffering buffering, uint64_t max_states,
                    const std::function<bool(uint32_t, uint32_t)>& allowed) {
  const Machine machine(model, buffering);
  Exploration out;
  std::unordered_set<Machine::State, StateHash> seen;
  std::vector<Machine::State> stack{machine.initial()};
  seen.insert(stack.back());
  std::vector<RawStep> steps;
  while (!stack.empty()) {
    Machine::State state = std::move(stack.back());
    stack.pop_back();
    ++out.states;
    out.positions.insert(state.pos);
    steps.clear();
    machine.enabled(state, steps);
    if (allowed) {
      std::erase_if(steps, [&](const RawStep& s) { return s.action == StepAction::match && !allowed(s.recv, s.send); });
    }
    if (steps.empty()) {
      const bool dead = machine.deadlocked(state);
      const bool unmatched = machine.unmatched_end(state);
      out.deadlock = out.deadlock || dead;
      out.unmatched = out.unmatched || unmatched;
      if (dead || unmatched) {
        for (uint32_t r = 0; r < model.ops.size(); ++r) {
          const OpKind kind = model.ops[r].kind;
          if ((kind == OpKind::recv || kind == OpKind::probe) && state.partner[r] != k_none) {
            out.bad_pairs.insert({r, state.partner[r]});
          }
        }
      }
      continue;
    }
    for (const RawStep& step : steps) {
      Machine::State next = state;
      machine.apply(next, step);
      if (step.action == StepAction::match) out.pairs.insert({step.recv, step.send});
      if (seen.size() >= max_states) {
        out.truncated = true;
        continue;
      }
      if (seen.insert(next).second) stack.push_back(std::move(next));
    }
  }
  return out;
}

bool Exploration::can_precede(const Model& model, uint32_t a_rank, uint32_t a_event, uint32_t b_rank,
                              uint32_t b_event) const {
  for (const auto& pos : positions) {
    if (pos[a_rank] >= 2 * a_event + 2 && pos[b_rank] == 2 * b_event &&
        2 * b_event + 1 <= model.ranks[b_rank].limit) {
      return true;
    }
  }
  return false;
}

}  // namespace smtrace::smt
