// The fixed-order decisions of fixed.hpp.
#include "smt_encoder/fixed.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

namespace smtrace::smt {

bool matches_recorded(const Model& model, const MatchPairs& pairs) {
  for (uint32_t r = 0; r < model.ops.size(); ++r) {
    const Op& o = model.ops[r];
    if ((o.kind == OpKind::recv || o.kind == OpKind::probe) && !pairs.sends[r].empty() && o.recorded == k_none) {
      return false;
    }
  }
  return true;
}

namespace {

// The one sender of a set of sends, as they are added (k_any: none yet).
struct Senders {
  int32_t source = k_any;
  bool many = false;
  void add(int32_t s) {
    many = many || (source != k_any && source != s);
    source = s;
  }
  // Return true when every send added comes from `peer` (k_any: any).
  bool all_from(int32_t peer) const { return peer == k_any || (!many && (source == k_any || source == peer)); }
};

uint64_t endpoint_key(uint32_t comm, uint32_t rank) { return (uint64_t{comm} << 32) | rank; }

}  // namespace

bool choice_free(const Machine& machine) {
  const Model& model = machine.model();
  struct Endpoint {
    bool wildcard = false;         // a receive or probe with a wildcard (else: deterministic)
    bool probe = false;
    bool any_tag = false;          // a receive with MPI_ANY_TAG
    bool waits_for_match = false;  // a send to it completes only once matched
    bool unreceived = false;       // a send to it was not received in the recorded run
    Senders senders;               // of all its sends
    int32_t tag = k_any;           // the one tag of its sends (k_any: none yet)
    bool many_tags = false;
    std::unordered_map<int32_t, Senders> by_tag;  // the senders of its sends with each tag
  };
  std::unordered_map<uint64_t, Endpoint> endpoints;
  std::vector<bool> received(model.ops.size(), false);
  for (const Op& o : model.ops) {
    if (o.kind == OpKind::recv && o.recorded != k_none) received[o.recorded] = true;
  }
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& o = model.ops[i];
    if (o.kind == OpKind::recv || o.kind == OpKind::probe) {
      Endpoint& e = endpoints[endpoint_key(o.comm, o.rank)];
      e.wildcard = e.wildcard || o.peer == k_any || o.tag == k_any || o.probe != k_none;
      e.probe = e.probe || o.kind == OpKind::probe;
      e.any_tag = e.any_tag || o.tag == k_any;
    } else if (o.kind == OpKind::send && o.peer >= 0) {
      Endpoint& e = endpoints[endpoint_key(o.comm, static_cast<uint32_t>(o.peer))];
      e.waits_for_match = e.waits_for_match || machine.waits_for_match(o);
      e.unreceived = e.unreceived || !received[i];
      e.senders.add(static_cast<int32_t>(o.rank));
      e.by_tag[o.tag].add(static_cast<int32_t>(o.rank));
      e.many_tags = e.many_tags || (e.tag != k_any && e.tag != o.tag);
      e.tag = o.tag;
    }
  }
  for (const Op& o : model.ops) {
    if (o.kind != OpKind::recv && o.kind != OpKind::probe) continue;
    const Endpoint& e = endpoints[endpoint_key(o.comm, o.rank)];
    if (!e.wildcard) continue;  // deterministic
    if (e.probe || e.waits_for_match || e.unreceived) return false;
    if (e.any_tag) {
      // One interchangeable class: this receive accepts every send to the endpoint.
      const bool tags = o.tag == k_any || (!e.many_tags && (e.tag == k_any || e.tag == o.tag));
      if (!tags || !e.senders.all_from(o.peer)) return false;
    } else {
      // A class per tag: this receive accepts every send of its tag.
      const auto it = e.by_tag.find(o.tag);
      if (it != e.by_tag.end() && !it->second.all_from(o.peer)) return false;
    }
  }
  return true;
}

namespace {

// Case 1's policy: every receive and probe takes its recorded send or none; `forced` overrides one.
RunPolicy fixed_policy(const Model& model, std::optional<std::pair<uint32_t, uint32_t>> forced,
                       std::optional<std::chrono::steady_clock::time_point> deadline) {
  RunPolicy policy;
  policy.choose = [&model, forced](uint32_t r, const Machine::State&, const RunPolicy::Take& take) {
    if (forced && forced->first == r) {
      take(forced->second);
    } else if (model.ops[r].recorded != k_none) {
      take(model.ops[r].recorded);
    }
  };
  policy.deadline = deadline;
  return policy;
}

}  // namespace

RunResult fixed_run(const Machine& machine, std::optional<std::pair<uint32_t, uint32_t>> forced,
                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  return run(machine, fixed_policy(machine.model(), forced, deadline));
}

RunResult fixed_run(const Machine& machine, const RunLayout& layout, const RunStart& start,
                    std::pair<uint32_t, uint32_t> forced,
                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  return run(machine, fixed_policy(machine.model(), forced, deadline), layout, start);
}

bool forced_runs(const Machine& machine, const MatchPairs& pairs, const std::vector<uint32_t>& receives,
                 const RunResult& base, const ForcedVisit& visit,
                 std::optional<std::chrono::steady_clock::time_point> deadline) {
  const Model& model = machine.model();
  std::vector<std::size_t> at(model.ops.size(), base.steps.size());  // per op: the step where it matched
  for (std::size_t i = 0; i < base.steps.size(); ++i) {
    if (base.steps[i].action == StepAction::match) at[base.steps[i].recv] = i;
  }
  std::vector<std::pair<std::size_t, uint32_t>> order;
  for (uint32_t r : receives) order.emplace_back(at[r], r);
  std::sort(order.begin(), order.end());
  const RunLayout layout(model);
  Machine::State state = machine.initial();
  std::size_t replayed = 0;
  for (const auto& [until, r] : order) {
    for (; replayed < until; ++replayed) {
      if (!machine.refuse(state, base.steps[replayed]).empty()) return false;  // not base's steps
      machine.apply(state, base.steps[replayed]);
    }
    const RunStart start(machine, layout, state);
    for (uint32_t s : pairs.sends[r]) {
      if (s == model.ops[r].recorded) continue;
      const RunResult run = fixed_run(machine, layout, start, {r, s}, deadline);
      if (run.stopped || !visit(r, s, until, state, run)) return false;
    }
  }
  return true;
}

RunResult free_run(const Machine& machine, const MatchPairs& pairs,
                   std::optional<std::chrono::steady_clock::time_point> deadline) {
  const Model& model = machine.model();
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    offer_guided(model, pairs, r, state, take);
  };
  policy.deadline = deadline;
  return run(machine, policy);
}

bool bad_end(const Machine& machine, const Machine::State& state) {
  return machine.deadlocked(state) || machine.unmatched_end(state);
}

namespace {

// A directed graph given edge by edge (case 6's wait-for graph).
class WaitGraph {
 public:
  // Return the first of `n` new nodes.
  uint32_t add_nodes(uint32_t n) {
    const uint32_t first = m_nodes;
    m_nodes += n;
    return first;
  }
  void edge(uint32_t from, uint32_t to) { m_edges.emplace_back(from, to); }
  // Return true when the graph has no cycle (Kahn's algorithm). Throw BudgetSpent past `deadline`.
  bool acyclic(const Deadline& deadline, uint64_t& ticks) const {
    std::vector<uint32_t> start(m_nodes + 1, 0), in(m_nodes, 0);
    for (const auto& [from, to] : m_edges) {
      ++start[from + 1];
      ++in[to];
    }
    for (uint32_t v = 0; v < m_nodes; ++v) start[v + 1] += start[v];
    std::vector<uint32_t> next(m_edges.size()), fill(start.begin(), start.end() - 1);
    for (const auto& [from, to] : m_edges) next[fill[from]++] = to;
    std::vector<uint32_t> ready;
    for (uint32_t v = 0; v < m_nodes; ++v) {
      if (in[v] == 0) ready.push_back(v);
    }
    uint32_t removed = 0;
    while (!ready.empty()) {
      check_deadline(deadline, ticks);
      const uint32_t v = ready.back();
      ready.pop_back();
      ++removed;
      for (uint32_t e = start[v]; e < start[v + 1]; ++e) {
        if (--in[next[e]] == 0) ready.push_back(next[e]);
      }
    }
    return removed == m_nodes;
  }

 private:
  uint32_t m_nodes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> m_edges;
};

// A class of case 6: receives that match in posting order and channels
// (a sender's sends of the class, in order).
struct MatchClass {
  std::vector<uint32_t> receives;
  std::vector<std::vector<uint32_t>> channels;
};

// Split the receives and sends of one endpoint into case 6's classes;
// return false when they do not split so.
bool split_classes(const Model& model, const std::vector<uint32_t>& receives, const std::vector<uint32_t>& sends,
                   std::vector<MatchClass>& out) {
  auto by_sender = [&](const std::vector<uint32_t>& list) {
    std::vector<std::vector<uint32_t>> channels;
    std::unordered_map<uint32_t, std::size_t> index;
    for (uint32_t s : list) {
      auto [it, fresh] = index.emplace(model.ops[s].rank, channels.size());
      if (fresh) channels.emplace_back();
      channels[it->second].push_back(s);
    }
    return channels;
  };
  // One class when every receive accepts every send, else one per source when no receive has a wildcard.
  auto add = [&](const std::vector<uint32_t>& rs, const std::vector<uint32_t>& ss) {
    Senders senders;
    bool many_tags = false;
    for (uint32_t s : ss) {
      senders.add(static_cast<int32_t>(model.ops[s].rank));
      many_tags = many_tags || model.ops[s].tag != model.ops[ss.front()].tag;
    }
    const bool all_accept = std::all_of(rs.begin(), rs.end(), [&](uint32_t r) {
      const Op& o = model.ops[r];
      const bool tags = o.tag == k_any || ss.empty() || (!many_tags && model.ops[ss.front()].tag == o.tag);
      return tags && senders.all_from(o.peer);
    });
    if (all_accept) {
      out.push_back({rs, by_sender(ss)});
      return true;
    }
    if (std::any_of(rs.begin(), rs.end(), [&](uint32_t r) { return model.ops[r].peer == k_any || model.ops[r].tag == k_any; })) {
      return false;
    }
    std::unordered_map<int32_t, MatchClass> per_source;
    for (uint32_t r : rs) per_source[model.ops[r].peer].receives.push_back(r);
    for (auto& channel : by_sender(ss)) {
      per_source[static_cast<int32_t>(model.ops[channel.front()].rank)].channels.push_back(std::move(channel));
    }
    for (auto& [source, c] : per_source) out.push_back(std::move(c));
    return true;
  };
  const bool any_tag =
      std::any_of(receives.begin(), receives.end(), [&](uint32_t r) { return model.ops[r].tag == k_any; });
  if (any_tag) return add(receives, sends);
  std::unordered_map<int32_t, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> by_tag;
  for (uint32_t r : receives) by_tag[model.ops[r].tag].first.push_back(r);
  for (uint32_t s : sends) by_tag[model.ops[s].tag].second.push_back(s);
  for (const auto& [tag, lists] : by_tag) {
    if (!add(lists.first, lists.second)) return false;
  }
  return true;
}

}  // namespace

bool no_bad_end(const Machine& machine, const Deadline& deadline) {
  const Model& model = machine.model();
  const auto ranks = static_cast<uint32_t>(model.ranks.size());
  // The preconditions of case 6, and each endpoint's receives and sends.
  std::unordered_map<uint64_t, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> endpoints;
  for (const RankEvents& r : model.ranks) {
    if (r.limit != 2 * r.events.size()) return false;
  }
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& o = model.ops[i];
    switch (o.kind) {
      case OpKind::probe: return false;
      case OpKind::recv:
        if (o.probe != k_none) return false;
        endpoints[endpoint_key(o.comm, o.rank)].first.push_back(i);
        break;
      case OpKind::send:
        if (o.peer < 0 || static_cast<uint32_t>(o.peer) >= ranks) return false;
        endpoints[endpoint_key(o.comm, static_cast<uint32_t>(o.peer))].second.push_back(i);
        break;
      case OpKind::coll: break;
    }
  }
  std::vector<MatchClass> classes;
  for (const auto& [key, lists] : endpoints) {
    if (!split_classes(model, lists.first, lists.second, classes)) return false;
  }
  uint64_t ticks = 0;
  try {
    // Nodes: per event E (the rank is stuck inside it) and Q (stuck inside
    // it or an earlier event); per op B (incomplete, its waiter stuck) and U
    // (unposted); hubs per class.
    WaitGraph g;
    std::vector<uint32_t> first_event(ranks);
    uint32_t events = 0;
    for (uint32_t r = 0; r < ranks; ++r) {
      first_event[r] = events;
      events += static_cast<uint32_t>(model.ranks[r].events.size());
    }
    const auto ops = static_cast<uint32_t>(model.ops.size());
    // Per op, whether it can be incomplete once posted (what it waits for
    // comes from another op); per rank, its first event that waits for such
    // an op: a rank stuck or done got there.
    std::vector<bool> may_wait(model.ops.size(), false);
    for (uint32_t i = 0; i < model.ops.size(); ++i) {
      const Op& o = model.ops[i];
      switch (o.kind) {
        case OpKind::recv:
        case OpKind::probe: may_wait[i] = true; break;
        case OpKind::send: may_wait[i] = machine.waits_for_match(o); break;
        case OpKind::coll:
          if (o.instance == k_none) break;
          const Instance& inst = model.instances[o.instance];
          for (uint32_t m = 0; m < inst.members.size(); ++m) {
            const uint32_t other = inst.members[m];
            if (other != k_none && other != i && machine.waits_for_member(inst, o.member, m)) may_wait[i] = true;
          }
          break;
      }
    }
    std::vector<uint32_t> first_wait(ranks, k_none);
    for (uint32_t r = 0; r < ranks; ++r) {
      const auto& list = model.ranks[r].events;
      for (uint32_t e = 0; e < list.size() && first_wait[r] == k_none; ++e) {
        const auto waited = model.ranks[r].completes(e);
        if (std::any_of(waited.begin(), waited.end(), [&](uint32_t op) { return may_wait[op]; })) first_wait[r] = e;
      }
    }
    const uint32_t stuck = g.add_nodes(events), upto = g.add_nodes(events);
    const uint32_t incomplete = g.add_nodes(ops), unposted = g.add_nodes(ops);
    for (uint32_t r = 0; r < ranks; ++r) {
      const auto& list = model.ranks[r].events;
      for (uint32_t e = 0; e < list.size(); ++e) {
        check_deadline(deadline, ticks);
        const uint32_t at = first_event[r] + e;
        const auto completes = model.ranks[r].completes(e);
        if (!completes.empty()) g.edge(upto + at, stuck + at);
        if (e > 0) g.edge(upto + at, upto + at - 1);
        for (uint32_t op : completes) {
          if (model.ops[op].rank != r || model.ops[op].post > e) return false;  // waits for an op not posted yet
          g.edge(stuck + at, incomplete + op);
        }
      }
    }
    for (uint32_t i = 0; i < ops; ++i) {
      check_deadline(deadline, ticks);
      const Op& o = model.ops[i];
      if (o.post > 0) g.edge(unposted + i, upto + first_event[o.rank] + o.post - 1);
      if (o.kind != OpKind::coll || !may_wait[i]) continue;
      const Instance& inst = model.instances[o.instance];
      for (uint32_t m = 0; m < inst.members.size(); ++m) {
        const uint32_t other = inst.members[m];
        if (other != k_none && other != i && machine.waits_for_member(inst, o.member, m)) {
          g.edge(incomplete + i, unposted + other);
        }
      }
    }
    for (MatchClass& c : classes) {
      uint32_t sends = 0;
      for (const auto& channel : c.channels) sends += static_cast<uint32_t>(channel.size());
      if (sends != c.receives.size()) return false;
      if (sends == 0) continue;
      const auto receives = static_cast<uint32_t>(c.receives.size());
      // A waiting send: the receive bound above.
      for (const auto& channel : c.channels) {
        const auto len = static_cast<uint32_t>(channel.size());
        for (uint32_t k = 0; k < len; ++k) {
          if (machine.waits_for_match(model.ops[channel[k]])) {
            g.edge(incomplete + channel[k], unposted + c.receives[std::min(receives - 1, k + sends - len)]);
          }
        }
      }
      // A receive R[i]: channel c's send number min(|c| - 1, i - P + p_c)
      // when that is at least p_c, where p_c counts the sends of c posted
      // once their rank is stuck or done (up to its first event that waits)
      // and P adds them up; none when i < P. By tails (c from p_c on) and
      // j = i - P: hub T[min(j, longest tail - 1)] to tail send min(j,
      // |tail| - 1) of each channel, the tails shorter than j + 1 through a
      // chain L over the tails by length (L[k]: the first k).
      std::vector<std::pair<uint32_t, uint32_t>> tails;  // (channel, p_c) with a tail
      uint32_t posted = 0;
      for (uint32_t x = 0; x < c.channels.size(); ++x) {
        const auto& channel = c.channels[x];
        const uint32_t first = first_wait[model.ops[channel.front()].rank];
        const auto p = static_cast<uint32_t>(
            std::partition_point(channel.begin(), channel.end(), [&](uint32_t s) { return model.ops[s].post <= first; }) -
            channel.begin());
        posted += p;
        if (p < channel.size()) tails.emplace_back(x, p);
      }
      if (tails.empty()) continue;
      auto tail_len = [&](const std::pair<uint32_t, uint32_t>& t) {
        return static_cast<uint32_t>(c.channels[t.first].size()) - t.second;
      };
      std::sort(tails.begin(), tails.end(), [&](const auto& a, const auto& b) { return tail_len(a) < tail_len(b); });
      const auto count = static_cast<uint32_t>(tails.size());
      const uint32_t longest = tail_len(tails.back());
      const uint32_t chain = g.add_nodes(count) - 1;  // L[k] is node chain + k, k = 1..count
      for (uint32_t k = 1; k <= count; ++k) {
        g.edge(chain + k, unposted + c.channels[tails[k - 1].first].back());
        if (k > 1) g.edge(chain + k, chain + k - 1);
      }
      const uint32_t hub = g.add_nodes(longest);
      uint32_t shorter = 0;  // tails with |tail| <= j
      for (uint32_t j = 0; j < longest; ++j) {
        check_deadline(deadline, ticks);
        while (shorter < count && tail_len(tails[shorter]) <= j) ++shorter;
        if (shorter > 0) g.edge(hub + j, chain + shorter);
        for (uint32_t k = shorter; k < count; ++k) {
          g.edge(hub + j, unposted + c.channels[tails[k].first][tails[k].second + j]);
        }
      }
      for (uint32_t i = posted; i < receives; ++i) {
        check_deadline(deadline, ticks);
        g.edge(incomplete + c.receives[i], hub + std::min(i - posted, longest - 1));
      }
    }
    return g.acyclic(deadline, ticks);
  } catch (const BudgetSpent&) {
    return false;
  }
}

// One interchangeable endpoint: its receives in posting order, its
// senders, and P_j per receive (row j: the sends of each sender posted in F_j).
struct InterchangeableMatches::Endpoint {
  int32_t tag = k_any;                  // the class's tag (k_any: every receive of the endpoint)
  bool decided = false;                 // the run was not stopped by the deadline
  std::vector<uint32_t> receives;       // in posting order
  std::vector<uint32_t> senders;        // channel index -> sender rank
  std::vector<std::vector<uint32_t>> posted;  // per receive index j: per channel, P_j
  std::vector<uint32_t> total;          // per j: A_j
  uint32_t reachable = 0;               // receives that match in some execution (a prefix)
};

InterchangeableMatches::InterchangeableMatches(const Machine& machine, const MatchPairs& pairs)
    : m_machine(machine), m_pairs(pairs), m_channels(machine.model()) {}

InterchangeableMatches::~InterchangeableMatches() = default;

const InterchangeableMatches::Endpoint* InterchangeableMatches::endpoint(uint32_t recv, const Deadline& deadline) {
  // Cached per receive: finding the class reads every op (covering runs ask per pair).
  if (m_class.empty()) {
    m_class.assign(m_machine.model().ops.size(), nullptr);
    m_looked_up.assign(m_class.size(), false);
  }
  if (!m_looked_up[recv]) {
    m_class[recv] = find_endpoint(recv, deadline);
    m_looked_up[recv] = true;
  }
  return m_class[recv];
}

const InterchangeableMatches::Endpoint* InterchangeableMatches::find_endpoint(uint32_t recv,
                                                                              const Deadline& deadline) {
  const Model& model = m_machine.model();
  const Op& o = model.ops[recv];
  if (o.kind != OpKind::recv) return nullptr;
  // The class of `recv` (case 2): every receive of the endpoint when one has
  // MPI_ANY_TAG, else those with its tag.
  int32_t tag = o.tag;
  for (uint32_t i = 0; i < model.ops.size() && tag != k_any; ++i) {
    const Op& r = model.ops[i];
    if (r.kind == OpKind::recv && r.comm == o.comm && r.rank == o.rank && r.tag == k_any) tag = k_any;
  }
  const uint64_t key = (uint64_t{o.comm} << 32 | o.rank) * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(tag);
  if (auto it = m_endpoints.find(key); it != m_endpoints.end()) return it->second.get();
  auto e = std::make_unique<Endpoint>();
  e->tag = tag;
  bool wildcard = false;
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& r = model.ops[i];
    if (r.kind != OpKind::recv || r.comm != o.comm || r.rank != o.rank || (tag != k_any && r.tag != tag)) continue;
    e->receives.push_back(i);
    wildcard = wildcard || r.peer == k_any || r.tag == k_any;
  }
  Endpoint* out = e.get();
  m_endpoints.emplace(key, std::move(e));
  if (!wildcard) return nullptr;  // deterministic: not this case
  for (uint32_t sender : m_channels.senders_to(o.comm, o.rank)) {
    if (!m_channels.sends(sender, o.comm, o.rank, tag).empty()) out->senders.push_back(sender);
  }
  std::vector<uint32_t> index(model.ops.size(), k_none);
  for (uint32_t j = 0; j < out->receives.size(); ++j) index[out->receives[j]] = j;
  // The run: E's receive j may match once j < allowed; each stall records
  // P_allowed and allows one more.
  uint32_t allowed = 0, matched = 0;
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    if (index[r] != k_none && index[r] >= allowed) return;
    if (offer_guided(model, m_pairs, r, state, take) && index[r] != k_none) ++matched;
  };
  policy.stalled = [&](const Machine::State& state) {
    if (matched < allowed) return false;  // receive allowed - 1 can never match: the rest cannot either
    std::vector<uint32_t> row(out->senders.size(), 0);
    uint32_t sum = 0;
    for (uint32_t c = 0; c < out->senders.size(); ++c) {
      const std::vector<uint32_t>& sends = m_channels.sends(out->senders[c], o.comm, o.rank, tag);
      const uint32_t pos = state.pos[out->senders[c]];
      // Posted: called, i.e. post < (pos + 1) / 2; the channel is in posting order.
      row[c] = static_cast<uint32_t>(std::partition_point(sends.begin(), sends.end(), [&](uint32_t s) {
                                       return 2 * model.ops[s].post + 1 <= pos;
                                     }) - sends.begin());
      sum += row[c];
    }
    out->posted.push_back(std::move(row));
    out->total.push_back(sum);
    out->reachable = matched;
    if (allowed == out->receives.size()) return false;
    ++allowed;
    return true;
  };
  policy.deadline = deadline;
  const RunResult result = run(m_machine, policy);
  out->decided = !result.stopped;
  if (out->decided && matched == out->receives.size()) out->reachable = matched;
  return out;
}

Verdict InterchangeableMatches::can_match(uint32_t recv, uint32_t send, const Deadline& deadline) {
  const Endpoint* e = endpoint(recv, deadline);
  if (!e || !e->decided) return Verdict::unknown;
  const Model& model = m_machine.model();
  const uint32_t i = static_cast<uint32_t>(
      std::find(e->receives.begin(), e->receives.end(), recv) - e->receives.begin());
  if (i >= e->reachable || i >= e->posted.size()) return Verdict::unsat;
  const Op& s = model.ops[send];
  const auto channel = std::find(e->senders.begin(), e->senders.end(), s.rank);
  if (channel == e->senders.end() || !accepts(model.ops[recv], s)) return Verdict::unsat;
  const auto t = static_cast<std::size_t>(channel - e->senders.begin());
  const uint32_t k = e->tag == k_any ? m_channels.channel_position(send) : m_channels.tag_position(send);
  if (k > i || e->posted[i][t] <= k) return Verdict::unsat;  // its k earlier sends need k earlier receives
  for (uint32_t j = 0; j < i; ++j) {
    const uint32_t own = std::min(k, e->posted[j][t]);
    const uint32_t others = std::min(i - k, e->total[j] - e->posted[j][t]);
    if (own + others < j + 1) return Verdict::unsat;
  }
  return Verdict::sat;
}

std::optional<std::vector<RawStep>> InterchangeableMatches::witness(uint32_t recv, uint32_t send,
                                                                    const Deadline& deadline) {
  if (can_match(recv, send, deadline) != Verdict::sat) return std::nullopt;
  const Endpoint& e = *endpoint(recv, deadline);
  const Model& model = m_machine.model();
  const Op& o = model.ops[recv];
  const auto i = static_cast<uint32_t>(std::find(e.receives.begin(), e.receives.end(), recv) - e.receives.begin());
  const auto t = static_cast<uint32_t>(std::find(e.senders.begin(), e.senders.end(), model.ops[send].rank) -
                                       e.senders.begin());
  const uint32_t k = e.tag == k_any ? m_channels.channel_position(send) : m_channels.tag_position(send);
  const auto channels = static_cast<uint32_t>(e.senders.size());
  // release(c, m): the first j whose F_j has the m-th send of c posted (P_j grows with j).
  auto release = [&](uint32_t c, uint32_t m) {
    return static_cast<uint32_t>(std::partition_point(e.posted.begin(), e.posted.end(),
                                                      [&](const std::vector<uint32_t>& row) { return row[c] <= m; }) -
                                 e.posted.begin());
  };
  // The sends r_0..r_{i-1} take: k of t, and the i - k earliest posted of the others.
  std::vector<uint32_t> quota(channels, 0), taken(channels, 0);
  quota[t] = k;
  {
    using Next = std::pair<uint32_t, uint32_t>;  // (release of the channel's next send, channel)
    std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
    for (uint32_t c = 0; c < channels; ++c) {
      if (c != t) next.emplace(release(c, 0), c);
    }
    for (uint32_t left = i - k; left > 0; --left) {
      if (next.empty()) return std::nullopt;
      const uint32_t c = next.top().second;
      next.pop();
      ++quota[c];
      next.emplace(release(c, quota[c]), c);
    }
  }
  // Each r_j takes the chosen channel whose next send was posted earliest.
  std::vector<uint32_t> plan;
  for (uint32_t j = 0; j < i; ++j) {
    uint32_t best = k_none;
    for (uint32_t c = 0; c < channels; ++c) {
      if (taken[c] < quota[c] && (best == k_none || release(c, taken[c]) < release(best, taken[best]))) best = c;
    }
    if (best == k_none) return std::nullopt;
    plan.push_back(m_channels.sends(e.senders[best], o.comm, o.rank, e.tag)[taken[best]++]);
  }
  plan.push_back(send);
  return run_plan(e, plan, deadline);
}

std::optional<std::vector<RawStep>> InterchangeableMatches::run_plan(const Endpoint& e,
                                                                     const std::vector<uint32_t>& plan,
                                                                     const Deadline& deadline) {
  if (plan.empty() || plan.size() > e.receives.size()) return std::nullopt;
  const Model& model = m_machine.model();
  std::vector<uint32_t> index(model.ops.size(), k_none);
  for (uint32_t j = 0; j < e.receives.size(); ++j) index[e.receives[j]] = j;
  const uint32_t last = e.receives[plan.size() - 1];
  uint32_t allowed = 0;
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    if (index[r] == k_none) {  // another endpoint: any send
      offer_guided(model, m_pairs, r, state, take);
    } else if (index[r] < allowed && index[r] < plan.size()) {
      take(plan[index[r]]);
    }
  };
  policy.stalled = [&](const Machine::State&) {
    if (allowed >= plan.size()) return false;
    ++allowed;
    return true;
  };
  policy.done = [&](const Machine::State& state) { return state.partner[last] == plan.back(); };
  policy.deadline = deadline;
  RunResult result = run(m_machine, policy);
  if (!result.done) return std::nullopt;
  return std::move(result.steps);
}

std::vector<uint32_t> InterchangeableMatches::class_receives(uint32_t recv, const Deadline& deadline) {
  const Endpoint* e = endpoint(recv, deadline);
  return e && e->decided ? e->receives : std::vector<uint32_t>{};
}

namespace {

// The largest backlog (A_j - j) of an endpoint's first `n` receives.
uint32_t largest_backlog(const std::vector<uint32_t>& total, uint32_t n) {
  uint32_t most = 0;
  for (uint32_t j = 0; j < n; ++j) most = std::max(most, total[j] > j ? total[j] - j : 0);
  return most;
}

}  // namespace

uint32_t InterchangeableMatches::cover_rounds(uint32_t recv, const Deadline& deadline) {
  const Endpoint* e = endpoint(recv, deadline);
  if (!e || !e->decided) return 0;
  const auto n = static_cast<uint32_t>(std::min<std::size_t>(e->reachable, e->posted.size()));
  // Every send posted before the class's first match (P_0 = P_{n-1}): any
  // order of takes is an execution, and the directed replays' rotation
  // (guided.hpp's Spread) already gives each run a new pair per receive.
  if (n == 0 || e->posted[0] == e->posted[n - 1]) return 0;
  return static_cast<uint32_t>(e->senders.size()) * largest_backlog(e->total, n);
}

std::optional<std::vector<RawStep>> InterchangeableMatches::cover_run(
    uint32_t recv, uint32_t round, const Given& given, const Deadline& deadline) {
  const uint32_t rounds = cover_rounds(recv, deadline);
  if (rounds == 0) return std::nullopt;
  const Endpoint& e = *endpoint(recv, deadline);
  const Op& o = m_machine.model().ops[recv];
  const auto n = static_cast<uint32_t>(std::min<std::size_t>(e.reachable, e.posted.size()));
  const auto channels = static_cast<uint32_t>(e.senders.size());
  const uint32_t levels = rounds / channels;
  // Even cycles of rounds serve the largest backlog among the others, odd ones the smallest.
  const bool smallest = (round / rounds) % 2 == 1;
  round %= rounds;
  const uint32_t hot = round % channels, level = levels - round / channels;
  std::vector<const std::vector<uint32_t>*> sends(channels);
  for (uint32_t c = 0; c < channels; ++c) sends[c] = &m_channels.sends(e.senders[c], o.comm, o.rank, e.tag);
  std::vector<uint32_t> taken(channels, 0), plan;
  plan.reserve(n);
  for (uint32_t j = 0; j < n; ++j) {
    auto backlog = [&](uint32_t c) { return e.posted[j][c] > taken[c] ? e.posted[j][c] - taken[c] : 0; };
    auto fresh = [&](uint32_t c) { return !given(e.receives[j], (*sends[c])[taken[c]]); };
    uint32_t pick = k_none;
    if (backlog(hot) >= level && fresh(hot)) {
      pick = hot;
    } else {
      // Another channel: a fresh pair first, then the largest (smallest) backlog.
      bool pick_fresh = false;
      for (uint32_t c = 0; c < channels; ++c) {
        if (c == hot || backlog(c) == 0) continue;
        const bool f = fresh(c);
        const auto before = [&] { return smallest ? backlog(c) < backlog(pick) : backlog(c) > backlog(pick); };
        if (pick == k_none || (f && !pick_fresh) || (f == pick_fresh && before())) {
          pick = c;
          pick_fresh = f;
        }
      }
      if (pick == k_none && backlog(hot) > 0) pick = hot;
    }
    if (pick == k_none) break;  // no send posted: the class's receives end here in every run
    plan.push_back((*sends[pick])[taken[pick]++]);
  }
  if (plan.empty()) return std::nullopt;
  return run_plan(e, plan, deadline);
}

// One class E of case 5: its receives in posting order, its channels, and
// per channel the bounds L_c(i) and U_c(i) for i = 0..n, then, once asked,
// the interval of a_c(i) for each i (empty from some i on: those receives
// never match).
struct CountingBounds::Class {
  int32_t tag = k_any;                 // k_any: every receive of the endpoint
  std::vector<uint32_t> receives;      // r_0, r_1, ... in posting order
  std::unordered_map<uint32_t, uint32_t> channel_of;  // sender rank -> channel
  std::vector<const std::vector<uint32_t>*> sends;    // per channel, in channel order
  std::vector<std::vector<uint32_t>> lower, upper;    // per channel, per i: L_c(i), U_c(i)
  std::vector<uint32_t> lower_sum, upper_sum;         // per i: over every channel
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> reach;  // per channel, per i (lazy)
};

CountingBounds::CountingBounds(const Machine& machine, const MatchPairs& pairs)
    : m_machine(machine), m_pairs(pairs), m_channels(machine.model()), m_index(machine.model().ops.size(), k_none) {}

CountingBounds::~CountingBounds() = default;

CountingBounds::Class* CountingBounds::find_class(uint32_t recv, const Deadline& deadline) {
  const Model& model = m_machine.model();
  const Op& o = model.ops[recv];
  if (o.kind != OpKind::recv) return nullptr;
  if (m_endpoints.empty()) {
    for (const Op& x : model.ops) {
      if (x.kind != OpKind::recv && x.kind != OpKind::probe) continue;
      std::pair<bool, bool>& e = m_endpoints[endpoint_key(x.comm, x.rank)];
      e.first = e.first || x.kind == OpKind::probe;
      e.second = e.second || (x.kind == OpKind::recv && x.tag == k_any);
    }
  }
  // The class: every receive of the endpoint when one has MPI_ANY_TAG, else those of o's tag.
  const auto [probe, any_tag] = m_endpoints[endpoint_key(o.comm, o.rank)];
  if (probe) return nullptr;
  const int32_t tag = any_tag ? k_any : o.tag;
  const uint64_t key = (endpoint_key(o.comm, o.rank) * 0x9E3779B97F4A7C15ull) ^ static_cast<uint32_t>(tag);
  if (auto it = m_classes.find(key); it != m_classes.end()) return it->second.get();
  std::unique_ptr<Class>& slot = m_classes[key];
  auto c = std::make_unique<Class>();
  c->tag = tag;
  std::vector<int32_t> tags;  // the tags of the class's sends (any_tag classes)
  for (uint32_t sender : m_channels.senders_to(o.comm, o.rank)) {
    const std::vector<uint32_t>& list = m_channels.sends(sender, o.comm, o.rank, tag);
    if (list.empty()) continue;
    c->channel_of.emplace(sender, static_cast<uint32_t>(c->sends.size()));
    c->sends.push_back(&list);
    const auto& t = m_channels.channel_tags(list.front());
    tags.insert(tags.end(), t.begin(), t.end());
  }
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& r = model.ops[i];
    if (r.kind != OpKind::recv || r.comm != o.comm || r.rank != o.rank || (tag != k_any && r.tag != tag)) continue;
    // Each receive accepts every send of the class, and takes what it accepts.
    const bool sources = r.peer == k_any || (c->sends.size() == 1 && c->channel_of.count(static_cast<uint32_t>(r.peer)));
    const bool tags_ok = r.tag == k_any || tag != k_any ||
                         std::all_of(tags.begin(), tags.end(), [&](int32_t t) { return t == r.tag; });
    if (r.probe != k_none || !sources || !tags_ok) return slot.get();  // nullptr: not this case
    c->receives.push_back(i);
  }
  const auto n = static_cast<uint32_t>(c->receives.size());
  for (uint32_t j = 0; j < n; ++j) m_index[c->receives[j]] = j;
  // The clocks, once per model: the zero-buffering edges, or MPI_Ssend's.
  const bool zero = m_machine.buffering() == Buffering::zero;
  if (!m_precedence) {
    m_precedence = std::make_unique<Precedence>(model, m_pairs,
                                                zero ? StandardSends::wait_for_match : StandardSends::return_at_once,
                                                k_hb_max_entries / 4, deadline);
  }
  const Precedence& before = *m_precedence;
  uint64_t ticks = 0;
  const auto channels = static_cast<uint32_t>(c->sends.size());
  c->lower.assign(channels, std::vector<uint32_t>(n + 1, 0));
  c->upper.assign(channels, std::vector<uint32_t>(n + 1, 0));
  c->lower_sum.assign(n + 1, 0);
  c->upper_sum.assign(n + 1, 0);
  for (uint32_t ch = 0; ch < channels; ++ch) {
    const std::vector<uint32_t>& list = *c->sends[ch];
    // U: the first receive that can take each send (n: none), as a running
    // maximum along the channel; U_c(i) counts the sends whose maximum is below i.
    uint32_t first = 0, taken = 0;
    std::vector<uint32_t>& upper = c->upper[ch];
    std::vector<uint32_t>& lower = c->lower[ch];
    std::vector<uint32_t> earliest(list.size(), n);
    for (std::size_t m = 0; m < list.size(); ++m) {
      check_deadline(deadline, ticks);
      uint32_t lo = n;
      for (uint32_t x : m_pairs.recvs[list[m]]) {
        if (m_index[x] != k_none && m_index[x] < n && c->receives[m_index[x]] == x &&
            !before.completes_before_post(x, list[m])) {
          lo = std::min(lo, m_index[x]);
        }
      }
      first = std::max(first, lo);
      earliest[m] = first;
    }
    for (uint32_t i = 0; i <= n; ++i) {
      while (taken < list.size() && earliest[taken] < i) ++taken;
      upper[i] = taken;
    }
    // L: the first receive posted after each send that waits for its match returns.
    for (std::size_t m = 0; m < list.size(); ++m) {
      const Op& s = model.ops[list[m]];
      if (!m_machine.waits_for_match(s) || s.done == k_none) continue;
      check_deadline(deadline, ticks);
      uint32_t lo = 0, hi = n;  // first i with s returning before r_i is posted (n: none)
      while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (before.completes_before_post(list[m], c->receives[mid])) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      if (lo < n) lower[lo] = std::max(lower[lo], static_cast<uint32_t>(m + 1));
    }
    for (uint32_t i = 0; i <= n; ++i) {
      if (i > 0) lower[i] = std::max(lower[i], lower[i - 1]);
      c->lower_sum[i] += lower[i];
      c->upper_sum[i] += upper[i];
    }
  }
  c->reach.resize(channels);
  slot = std::move(c);
  return slot.get();
}

Verdict CountingBounds::can_match(uint32_t recv, uint32_t send, const Deadline& deadline) {
  Class* c = nullptr;
  try {
    c = find_class(recv, deadline);
  } catch (const BudgetSpent&) {
    return Verdict::unknown;  // the class stays without bounds
  }
  if (!c) return Verdict::unknown;
  const Op& s = m_machine.model().ops[send];
  const auto at = c->channel_of.find(s.rank);
  if (at == c->channel_of.end() || !accepts(m_machine.model().ops[recv], s)) return Verdict::unknown;
  const uint32_t t = at->second;
  const uint32_t j = m_index[recv];
  const std::vector<std::pair<uint32_t, uint32_t>>& reach = this->reach(*c, t);
  if (j >= reach.size()) return Verdict::unsat;  // r_j never matches
  const uint32_t k = c->tag == k_any ? m_channels.channel_position(send) : m_channels.tag_position(send);
  // After the match t has given k + 1 sends to r_0..r_j: U_t(j + 1) bounds that too.
  if (k >= c->upper[t][j + 1]) return Verdict::unsat;
  return k < reach[j].first || k > reach[j].second ? Verdict::unsat : Verdict::unknown;
}

const std::vector<std::pair<uint32_t, uint32_t>>& CountingBounds::reach(Class& c, uint32_t t) {
  std::vector<std::pair<uint32_t, uint32_t>>& reach = c.reach[t];
  if (!reach.empty()) return reach;
  // a_t(i) forward: a_t(0) = 0, each step adds 0 or 1, within t's bounds
  // and with i - a_t(i) within the others' summed bounds.
  const auto n = static_cast<uint32_t>(c.receives.size());
  const std::vector<uint32_t>& lower = c.lower[t];
  const std::vector<uint32_t>& upper = c.upper[t];
  uint32_t lo = 0, hi = 0;
  reach.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (i > 0) ++hi;
    const uint32_t others_lower = c.lower_sum[i] - lower[i];
    const uint32_t others_upper = c.upper_sum[i] - upper[i];
    lo = std::max({lo, lower[i], i > others_upper ? i - others_upper : 0});
    if (others_lower > i) break;
    hi = std::min({hi, upper[i], i - others_lower});
    if (lo > hi) break;
    reach.emplace_back(lo, hi);
  }
  if (reach.empty()) reach.emplace_back(1, 0);  // r_0 never matches: an empty interval
  return reach;
}

std::optional<MatchPairs> CountingBounds::surviving_pairs(const Deadline& deadline) {
  const Model& model = m_machine.model();
  MatchPairs out = m_pairs;
  uint64_t dropped = 0;
  for (uint32_t r = 0; r < model.ops.size(); ++r) {
    if (model.ops[r].kind != OpKind::recv || out.sends[r].size() < 2) continue;  // one candidate: little to drop
    if (deadline && std::chrono::steady_clock::now() > *deadline) return std::nullopt;
    dropped += erase_if(out.sends.list(r), [&](uint32_t s) { return can_match(r, s, deadline) == Verdict::unsat; });
  }
  if (dropped == 0) return std::nullopt;
  for (auto& list : out.recvs) list.clear();
  for (uint32_t r = 0; r < model.ops.size(); ++r) {
    if (model.ops[r].kind != OpKind::recv) continue;
    for (uint32_t s : out.sends[r]) out.recvs[s].push_back(r);
  }
  out.pairs -= dropped;
  return out;
}

uint32_t CountingBounds::channels(uint32_t recv, const Deadline& deadline) {
  try {
    const Class* c = find_class(recv, deadline);
    return c ? static_cast<uint32_t>(c->sends.size()) : 0;
  } catch (const BudgetSpent&) {
    return 0;
  }
}

std::optional<std::vector<RawStep>> CountingBounds::planned_run(uint32_t recv, uint32_t send,
                                                                std::optional<uint32_t> then,
                                                                const Deadline& deadline) {
  if (channels(recv, deadline) == 0 || can_match(recv, send, deadline) != Verdict::unknown) return std::nullopt;
  Class& c = *find_class(recv, deadline);
  const Model& model = m_machine.model();
  const uint32_t t = c.channel_of.at(model.ops[send].rank);
  const uint32_t j = m_index[recv];
  const uint32_t k = c.tag == k_any ? m_channels.channel_position(send) : m_channels.tag_position(send);
  const std::vector<std::pair<uint32_t, uint32_t>>& in = reach(c, t);
  // A path of a_t back from a_t(j) = k: r_i takes from t where it grows.
  std::vector<bool> from_t(j, false);
  uint32_t a = k;
  for (uint32_t i = j; i > 0; --i) {
    const auto [lo, hi] = in[i - 1];
    if (a > 0 && a - 1 >= lo && a - 1 <= hi) {
      from_t[i - 1] = true;
      --a;
    } else if (a < lo || a > hi) {
      return std::nullopt;
    }
  }
  if (a != 0) return std::nullopt;
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    const uint32_t i = m_index[r];
    if (i == k_none || i >= c.receives.size() || c.receives[i] != r) {
      offer_guided(model, m_pairs, r, state, take);
    } else if (i == j) {
      take(send);
    } else if (i < j) {
      // Its channel's next send (non-overtaking leaves only the heads).
      for (uint32_t x : m_pairs.sends[r]) {
        if ((model.ops[x].rank == model.ops[send].rank) == from_t[i] && take(x)) return;
      }
    } else if (then && *then < c.sends.size()) {
      for (uint32_t x : *c.sends[*then]) {
        if (state.partner[x] == k_none) {
          if (take(x)) return;
          break;
        }
      }
      offer_guided(model, m_pairs, r, state, take);
    }
  };
  if (!then) policy.done = [&](const Machine::State& state) { return state.partner[recv] == send; };
  policy.deadline = deadline;
  RunResult result = run(m_machine, policy);
  if (result.stopped || result.state.partner[recv] != send) return std::nullopt;
  return std::move(result.steps);
}

}  // namespace smtrace::smt
