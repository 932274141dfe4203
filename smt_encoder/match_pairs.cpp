#include "smt_encoder/match_pairs.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace smtrace::smt {

namespace {

// Per rank: the cut events in order, for segment lookups. An event's segment
// is the number of cuts strictly before it (a cut's own event is in the
// segment it closes).
class Segments {
 public:
  Segments(const Model& model, const std::vector<Cut>& cuts) : m_by_rank(model.ranks.size()) {
    for (const Cut& cut : cuts) {
      for (uint32_t r = 0; r < cut.event.size(); ++r) m_by_rank[r].push_back(cut.event[r]);
    }
  }
  uint32_t of(uint32_t rank, uint32_t event) const {
    const auto& v = m_by_rank[rank];
    return static_cast<uint32_t>(std::lower_bound(v.begin(), v.end(), event) - v.begin());
  }

 private:
  std::vector<std::vector<uint32_t>> m_by_rank;
};

// The cuts at which an endpoint (comm, rank) is closed: as many of its
// receives complete before the cut as sends to it are posted before it.
class Closed {
 public:
  Closed(const Model& model, const Segments& segments, std::size_t cuts) : m_cuts(cuts) {
    if (cuts == 0) return;
    for (const Op& op : model.ops) {
      if (op.kind == OpKind::send) {
        count(op.comm, static_cast<uint32_t>(op.peer)).sends[segments.of(op.rank, op.post)]++;
      } else if (op.kind == OpKind::recv) {
        auto& c = count(op.comm, op.rank);
        // A receive never completed is never counted as completed before a cut.
        c.recvs[op.done == k_none ? cuts : segments.of(op.rank, op.done)]++;
      }
    }
    for (auto& [key, c] : m_counts) {
      int64_t balance = 0;
      for (std::size_t k = 0; k < cuts; ++k) {
        balance += static_cast<int64_t>(c.recvs[k]) - static_cast<int64_t>(c.sends[k]);
        if (balance == 0) c.closed.push_back(static_cast<uint32_t>(k));
      }
    }
  }
  // Return true when the endpoint is closed at some cut k with from <= k < to.
  bool closed_between(uint32_t comm, uint32_t rank, uint32_t from, uint32_t to) const {
    if (from >= to) return false;
    auto it = m_counts.find(key(comm, rank));
    if (it == m_counts.end()) return false;
    const auto& v = it->second.closed;
    auto at = std::lower_bound(v.begin(), v.end(), from);
    return at != v.end() && *at < to;
  }

 private:
  struct Counts {
    std::vector<uint32_t> sends, recvs, closed;
  };
  static uint64_t key(uint32_t comm, uint32_t rank) { return (uint64_t{comm} << 32) | rank; }
  Counts& count(uint32_t comm, uint32_t rank) {
    Counts& c = m_counts[key(comm, rank)];
    if (c.sends.empty()) {
      c.sends.assign(m_cuts + 1, 0);
      c.recvs.assign(m_cuts + 1, 0);
    }
    return c;
  }
  std::size_t m_cuts;
  std::unordered_map<uint64_t, Counts> m_counts;
};

// The counting rules for one receive (or probe) and one sender.
struct Bounds {
  uint32_t max_earlier = 0;   // sends before s on the channel that r accepts, at most
  uint32_t others = 0;        // sends to the endpoint from other ranks
  uint32_t receives_any_tag = 0;  // earlier receives that accept every message of the sender
};

Bounds bounds(const Channels& ch, const Op& r, uint32_t r_index, uint32_t sender) {
  Bounds b;
  b.max_earlier = ch.count_before(ch.receives(r.comm, r.rank, k_any, Channels::k_all), r_index) +
                  ch.count_before(ch.receives(r.comm, r.rank, static_cast<int32_t>(sender), Channels::k_all), r_index);
  b.others = ch.sends_to(r.comm, r.rank) - ch.sends_from_to(sender, r.comm, r.rank);
  b.receives_any_tag = ch.count_before(ch.receives(r.comm, r.rank, k_any, k_any), r_index) +
                       ch.count_before(ch.receives(r.comm, r.rank, static_cast<int32_t>(sender), k_any), r_index);
  return b;
}

// Return the earlier receives that accept send `s` (all four envelopes that do).
uint32_t accepting_before(const Channels& ch, const Op& r, uint32_t r_index, const Op& s) {
  const auto src = static_cast<int32_t>(s.rank);
  return ch.count_before(ch.receives(r.comm, r.rank, k_any, k_any), r_index) +
         ch.count_before(ch.receives(r.comm, r.rank, k_any, s.tag), r_index) +
         ch.count_before(ch.receives(r.comm, r.rank, src, k_any), r_index) +
         ch.count_before(ch.receives(r.comm, r.rank, src, s.tag), r_index);
}

}  // namespace

std::vector<Cut> find_cuts(const Model& model) {
  std::vector<Cut> cuts;
  const uint32_t n = model.world_size;
  if (n == 0) return cuts;
  for (uint32_t i = 0; i < model.instances.size(); ++i) {
    const Instance& inst = model.instances[i];
    if (inst.kind != CollKind::full || inst.members.size() != n) continue;
    Cut cut;
    cut.instance = i;
    cut.event.assign(n, k_none);
    bool ok = true;
    for (uint32_t op : inst.members) {
      if (op == k_none) {
        ok = false;
        break;
      }
      const Op& o = model.ops[op];
      if (o.done != o.post || 2 * o.post + 2 > model.ranks[o.rank].limit || cut.event[o.rank] != k_none) {
        ok = false;
        break;
      }
      cut.event[o.rank] = o.post;
    }
    if (ok) cuts.push_back(std::move(cut));
  }
  std::sort(cuts.begin(), cuts.end(), [](const Cut& a, const Cut& b) { return a.event[0] < b.event[0]; });
  std::vector<Cut> out;
  for (Cut& cut : cuts) {
    bool later = true;
    for (uint32_t r = 0; r < n && !out.empty(); ++r) later = later && cut.event[r] > out.back().event[r];
    if (later) out.push_back(std::move(cut));
  }
  return out;
}

std::size_t Channels::KeyHash::operator()(const Key& k) const {
  uint64_t h = uint64_t{k.comm} * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{k.rank} + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= (static_cast<uint64_t>(static_cast<uint32_t>(k.source)) << 32 | static_cast<uint32_t>(k.tag)) *
       0x165667B19E3779F9ull;
  return static_cast<std::size_t>(h ^ (h >> 31));
}

Channels::Channels(const Model& model)
    : m_model(model), m_channel_pos(model.ops.size(), 0), m_tag_pos(model.ops.size(), 0) {
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& op = model.ops[i];
    if (op.kind == OpKind::send) {
      const auto dest = static_cast<uint32_t>(op.peer);
      const auto src = static_cast<int32_t>(op.rank);
      auto& all = m_sends[{op.comm, dest, src, k_any}];
      auto& tagged = m_sends[{op.comm, dest, src, op.tag}];
      if (all.empty()) m_senders[{op.comm, dest, 0, 0}].push_back(op.rank);
      if (tagged.empty()) m_tags[{op.comm, dest, src, 0}].push_back(op.tag);
      m_channel_pos[i] = static_cast<uint32_t>(all.size());
      m_tag_pos[i] = static_cast<uint32_t>(tagged.size());
      all.push_back(i);
      tagged.push_back(i);
    } else if (op.kind == OpKind::recv) {
      m_receives[{op.comm, op.rank, op.peer, op.tag}].push_back(i);
      m_receives[{op.comm, op.rank, op.peer, k_all}].push_back(i);
    }
  }
}

uint64_t Channels::order(uint32_t op) const { return (uint64_t{m_model.ops[op].post} << 32) | op; }

uint32_t Channels::previous_send(uint32_t send, int32_t tag) const {
  const Op& s = m_model.ops[send];
  const auto& list = sends(s.rank, s.comm, static_cast<uint32_t>(s.peer), tag);
  // Sends of one channel are in posting order, which is op order.
  auto it = std::lower_bound(list.begin(), list.end(), send);
  return it == list.begin() ? k_none : *(it - 1);
}

const std::vector<int32_t>& Channels::channel_tags(uint32_t send) const {
  const Op& s = m_model.ops[send];
  auto it = m_tags.find({s.comm, static_cast<uint32_t>(s.peer), static_cast<int32_t>(s.rank), 0});
  return it == m_tags.end() ? m_no_tags : it->second;
}

uint32_t Channels::sends_to(uint32_t comm, uint32_t rank) const {
  uint32_t n = 0;
  for (uint32_t source : senders_to(comm, rank)) n += sends_from_to(source, comm, rank);
  return n;
}

uint32_t Channels::sends_from_to(uint32_t source, uint32_t comm, uint32_t rank) const {
  return static_cast<uint32_t>(sends(source, comm, rank, k_any).size());
}

const std::vector<uint32_t>& Channels::senders_to(uint32_t comm, uint32_t rank) const {
  auto it = m_senders.find({comm, rank, 0, 0});
  return it == m_senders.end() ? m_empty : it->second;
}

const std::vector<uint32_t>& Channels::sends(uint32_t source, uint32_t comm, uint32_t rank, int32_t tag) const {
  auto it = m_sends.find({comm, rank, static_cast<int32_t>(source), tag});
  return it == m_sends.end() ? m_empty : it->second;
}

const std::vector<uint32_t>& Channels::receives(uint32_t comm, uint32_t rank, int32_t source, int32_t tag) const {
  auto it = m_receives.find({comm, rank, source, tag});
  return it == m_receives.end() ? m_empty : it->second;
}

uint32_t Channels::count_before(const std::vector<uint32_t>& list, uint32_t op) const {
  const uint64_t limit = order(op);
  auto it = std::lower_bound(list.begin(), list.end(), limit,
                             [&](uint32_t a, uint64_t v) { return order(a) < v; });
  return static_cast<uint32_t>(it - list.begin());
}

uint32_t Channels::last_before(const std::vector<uint32_t>& list, uint32_t op) const {
  const uint32_t n = count_before(list, op);
  return n == 0 ? k_none : list[n - 1];
}

uint32_t MatchPairs::find(uint32_t recv, uint32_t send) const {
  const auto& v = sends[recv];
  auto it = std::lower_bound(v.begin(), v.end(), send);
  return it != v.end() && *it == send ? static_cast<uint32_t>(it - v.begin()) : k_none;
}

MatchPairs match_pairs(const Model& model, const Channels& ch, const std::vector<Cut>& cuts) {
  MatchPairs out;
  const std::size_t n = model.ops.size();
  out.sends.resize(n);
  out.recvs.resize(n);
  out.probes.resize(n);
  const Segments segments(model, cuts);
  const Closed closed(model, segments, cuts.size());

  auto collect = [&](uint32_t ri) {
    const Op& r = model.ops[ri];
    std::vector<uint32_t>& found = out.sends[ri];
    std::vector<uint32_t> single;
    const std::vector<uint32_t>* senders = &ch.senders_to(r.comm, r.rank);
    if (r.peer != k_any) {
      single.push_back(static_cast<uint32_t>(r.peer));
      senders = &single;
    }
    const uint32_t r_done_segment = r.done == k_none ? UINT32_MAX : segments.of(r.rank, r.done);
    const uint32_t r_post_segment = segments.of(r.rank, r.post);
    for (uint32_t sender : *senders) {
      const std::vector<uint32_t>& list = ch.sends(sender, r.comm, r.rank, r.tag);
      if (list.empty()) continue;
      const Bounds b = bounds(ch, r, ri, sender);
      const std::size_t hi = std::min<std::size_t>(list.size() - 1, b.max_earlier);
      // First send whose channel position can satisfy the receives that take any tag.
      auto lo_it = std::lower_bound(list.begin(), list.end(), b.receives_any_tag, [&](uint32_t s, uint32_t need) {
        return ch.channel_position(s) + b.others < need;
      });
      for (std::size_t i = static_cast<std::size_t>(lo_it - list.begin()); i <= hi && i < list.size(); ++i) {
        const uint32_t s = list[i];
        const Op& send = model.ops[s];
        if (accepting_before(ch, r, ri, send) > ch.channel_position(s) + b.others) continue;
        const uint32_t s_post_segment = segments.of(send.rank, send.post);
        if (r_done_segment < s_post_segment ||
            closed.closed_between(r.comm, r.rank, s_post_segment, r_post_segment)) {
          ++out.dropped_by_cuts;
          continue;
        }
        found.push_back(s);
      }
    }
    std::sort(found.begin(), found.end());
  };

  for (uint32_t i = 0; i < n; ++i) {
    if (model.ops[i].kind == OpKind::probe) collect(i);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Op& r = model.ops[i];
    if (r.kind != OpKind::recv) continue;
    collect(i);
    if (r.probe != k_none) {
      const auto& seen = out.sends[r.probe];
      std::erase_if(out.sends[i], [&](uint32_t s) { return !std::binary_search(seen.begin(), seen.end(), s); });
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    const bool probe = model.ops[i].kind == OpKind::probe;
    for (uint32_t s : out.sends[i]) (probe ? out.probes : out.recvs)[s].push_back(i);
    out.pairs += out.sends[i].size();
  }
  return out;
}

std::string pair_excluded_because(const Model& model, const Channels& ch, const std::vector<Cut>& cuts,
                                  uint32_t ri, uint32_t si) {
  const Op& r = model.ops[ri];
  const Op& s = model.ops[si];
  const std::string rt = model.post_ref(ri).str();
  const std::string st = model.post_ref(si).str();
  if (!accepts(r, s)) {
    if (s.kind != OpKind::send || (r.kind != OpKind::recv && r.kind != OpKind::probe)) {
      return fmt::format("{} is not a receive or probe and {} a send", rt, st);
    }
    return fmt::format("{} ({}) does not accept the envelope of {} ({})", rt, op_text(model, ri), st,
                       op_text(model, si));
  }
  if (r.probe != k_none) {
    const Channels& c = ch;
    if (!pair_excluded_because(model, c, cuts, r.probe, si).empty()) {
      return fmt::format("{} takes the message that probe {} saw, and that probe cannot see {}", rt,
                         model.post_ref(r.probe).str(), st);
    }
  }
  const Bounds b = bounds(ch, r, ri, s.rank);
  const uint32_t earlier = r.tag == k_any ? ch.channel_position(si) : ch.tag_position(si);
  if (earlier > b.max_earlier) {
    return fmt::format(
        "non-overtaking: {} earlier send(s) of rank {} that {} accepts must be received before {}, by "
        "receives posted before {}, and only {} such receive(s) can take messages from rank {}",
        earlier, s.rank, rt, st, rt, b.max_earlier, s.rank);
  }
  const uint32_t before = accepting_before(ch, r, ri, s);
  if (before > ch.channel_position(si) + b.others) {
    return fmt::format(
        "non-overtaking: the {} receive(s) posted before {} that accept {} must match first, with "
        "earlier sends of rank {} ({}) or sends of other ranks ({}): too few",
        before, rt, st, s.rank, ch.channel_position(si), b.others);
  }
  const Segments segments(model, cuts);
  const uint32_t s_post = segments.of(s.rank, s.post);
  if (r.done != k_none && segments.of(r.rank, r.done) < s_post) {
    return fmt::format("{} completes before a collective of all ranks that rank {} passes before posting {}", rt,
                       s.rank, st);
  }
  const Closed closed(model, segments, cuts.size());
  if (closed.closed_between(r.comm, r.rank, s_post, segments.of(r.rank, r.post))) {
    return fmt::format(
        "every message to rank {} posted before a collective of all ranks is received before it, and {} is "
        "posted after it while {} is posted before",
        r.rank, rt, st);
  }
  return {};
}

}  // namespace smtrace::smt
