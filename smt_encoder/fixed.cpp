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
      const bool waits = s.mode == SendMode::sync || (zero && s.mode == SendMode::standard);
      if (!waits || s.done == k_none) continue;
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
    dropped += std::erase_if(out.sends[r], [&](uint32_t s) { return can_match(r, s, deadline) == Verdict::unsat; });
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
