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
      const bool alone =
          o.mode == SendMode::buffered || (o.mode == SendMode::standard && machine.buffering() == Buffering::infinite);
      e.waits_for_match = e.waits_for_match || !alone;
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

RunResult fixed_run(const Machine& machine, std::optional<std::pair<uint32_t, uint32_t>> forced,
                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  const Model& model = machine.model();
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State&, const RunPolicy::Take& take) {
    if (forced && forced->first == r) {
      take(forced->second);
    } else if (model.ops[r].recorded != k_none) {
      take(model.ops[r].recorded);
    }
  };
  policy.deadline = deadline;
  return run(machine, policy);
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

}  // namespace smtrace::smt
