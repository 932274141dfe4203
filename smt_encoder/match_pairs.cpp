#include "smt_encoder/match_pairs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>

#include <fmt/core.h>

namespace smtrace::smt {

namespace {

// Per rank: the cut events in order, for segment lookups. An event's segment
// is the number of cuts strictly before it (a cut's own event is in the
// segment it closes).
class Segments {
 public:
  Segments(const Model& model, const std::vector<Cut>& cuts, const Deadline& deadline)
      : m_by_rank(model.ranks.size()) {
    uint64_t ticks = 0;
    for (const Cut& cut : cuts) {
      check_deadline(deadline, ticks);
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
// Per endpoint of `channels` (its dense ids).
class Closed {
 public:
  // Throw BudgetSpent past `deadline`.
  Closed(const Model& model, const Channels& channels, const Segments& segments, std::size_t cuts,
         const Deadline& deadline)
      : m_channels(channels), m_cuts(cuts) {
    if (cuts == 0) return;
    m_counts.resize(channels.endpoints());
    uint64_t ticks = 0;
    for (const Op& op : model.ops) {
      check_deadline(deadline, ticks);
      if (op.kind == OpKind::send) {
        if (Counts* c = count(op.comm, static_cast<uint32_t>(op.peer))) c->sends[segments.of(op.rank, op.post)]++;
      } else if (op.kind == OpKind::recv) {
        // A receive never completed is never counted as completed before a cut.
        if (Counts* c = count(op.comm, op.rank)) c->recvs[op.done == k_none ? cuts : segments.of(op.rank, op.done)]++;
      }
    }
    for (Counts& c : m_counts) {
      check_deadline(deadline, ticks);
      int64_t balance = 0;
      for (std::size_t k = 0; k < c.sends.size() && k < cuts; ++k) {
        balance += static_cast<int64_t>(c.recvs[k]) - static_cast<int64_t>(c.sends[k]);
        if (balance == 0) c.closed.push_back(static_cast<uint32_t>(k));
      }
      std::vector<uint32_t>().swap(c.sends);
      std::vector<uint32_t>().swap(c.recvs);
    }
  }
  // Return true when the endpoint is closed at some cut k with from <= k < to.
  bool closed_between(uint32_t comm, uint32_t rank, uint32_t from, uint32_t to) const {
    if (from >= to || m_counts.empty()) return false;
    const uint32_t e = m_channels.endpoint(comm, rank);
    if (e == k_none) return false;
    const auto& v = m_counts[e].closed;
    auto at = std::lower_bound(v.begin(), v.end(), from);
    return at != v.end() && *at < to;
  }

 private:
  struct Counts {
    std::vector<uint32_t> sends, recvs, closed;
  };
  Counts* count(uint32_t comm, uint32_t rank) {
    const uint32_t e = m_channels.endpoint(comm, rank);
    if (e == k_none) return nullptr;  // an op that Channels does not index (no such peer)
    Counts& c = m_counts[e];
    if (c.sends.empty()) {
      c.sends.assign(m_cuts + 1, 0);
      c.recvs.assign(m_cuts + 1, 0);
    }
    return &c;
  }
  const Channels& m_channels;
  std::size_t m_cuts;
  std::vector<Counts> m_counts;
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

// Return the receives posted before `r` that accept a send of `source` with
// tag `tag` (all four envelopes that do).
uint32_t accepting_before(const Channels& ch, const Op& r, uint32_t r_index, uint32_t source, int32_t tag) {
  const auto src = static_cast<int32_t>(source);
  return ch.count_before(ch.receives(r.comm, r.rank, k_any, k_any), r_index) +
         ch.count_before(ch.receives(r.comm, r.rank, k_any, tag), r_index) +
         ch.count_before(ch.receives(r.comm, r.rank, src, k_any), r_index) +
         ch.count_before(ch.receives(r.comm, r.rank, src, tag), r_index);
}

// The receives posted before `r` that name `source`: with tag `tag`, and
// with any tag. Each takes an earlier send of `source` than any send of
// its channel (and tag) that `r` could take: non-overtaking on both sides
// (match_pairs.hpp, rule 3 for receives that name the sender).
struct NamedBefore {
  uint32_t same_tag = 0, any_tag = 0;
};
NamedBefore named_before(const Channels& ch, const Op& r, uint32_t r_index, uint32_t source, int32_t tag) {
  const auto src = static_cast<int32_t>(source);
  return {ch.count_before(ch.receives(r.comm, r.rank, src, tag), r_index),
          ch.count_before(ch.receives(r.comm, r.rank, src, k_any), r_index)};
}

// An event of a rank.
struct Point {
  uint32_t rank = 0, event = 0;
};

// Per op: the calls its completion waits for, any one of which is enough (a
// receive's candidate sends, an Ssend's candidate receives): the MIN group,
// mostly one call (one in place: 16 bytes per op).
using Sources = std::vector<SmallList<Point, 1>>;

// Return the index of the first element of `list` for which `pred` is false
// (`pred` true on a prefix, false on the rest).
template <class Pred>
std::size_t prefix_length(const std::vector<uint32_t>& list, std::size_t end, Pred pred) {
  return static_cast<std::size_t>(std::partition_point(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(end), pred) -
                                  list.begin());
}

// As prefix_length, looking first at the ends a receive's window has when
// it is its recorded send alone: 0, `hint` or `hint + 1` (`hint`: the
// recorded send's place in `list`, or SIZE_MAX), a search only when none is.
template <class Pred>
std::size_t prefix_length_near(const std::vector<uint32_t>& list, std::size_t end, Pred pred, std::size_t hint) {
  if (end == 0 || !pred(list[0])) return 0;
  if (hint != SIZE_MAX && hint > 0 && hint <= end && pred(list[hint - 1])) {
    if (hint == end || !pred(list[hint])) return hint;
    if (hint + 1 == end || !pred(list[hint + 1])) return hint + 1;
  }
  return prefix_length(list, end, pred);
}

// Whether a pass over the whole model's clocks gives up early (Pace): the
// match pairs' passes do; a part's (fixed.cpp) stops at the deadline only.
enum class Paced : uint8_t { no, yes };

// Vector clocks of "must happen before" (header comment): per event, how
// many events of each rank are called before it returns, in every execution.
class Clocks {
 public:
  Clocks(const Model& model, const Deadline& deadline, Paced paced = Paced::no)
      : m_model(model), m_deadline(deadline), m_paced(paced), m_width(static_cast<uint32_t>(model.ranks.size())), m_base(model.ranks.size() + 1, 0) {
    for (std::size_t r = 0; r < model.ranks.size(); ++r) m_base[r + 1] = m_base[r] + model.ranks[r].events.size();
    // Zeroed by calloc: the pages of rows never raised (and all of them
    // when a pass gives up early, Pace) are never touched.
    const std::size_t entries = m_base.back() * m_width;
    m_v.reset(static_cast<uint32_t*>(std::calloc(std::max<std::size_t>(entries, 1), sizeof(uint32_t))));
    if (!m_v) throw std::bad_alloc();
    m_nonzero.reset(static_cast<uint32_t*>(std::calloc(std::max<std::size_t>(m_base.back(), 1), sizeof(uint32_t))));
    if (!m_nonzero) throw std::bad_alloc();
  }

  // Return false when `model` has too many events x ranks for clocks.
  static bool fits(const Model& model) { return clocks_fit(model); }
  // Return the clock of the return of event `k` of `rank`.
  const uint32_t* ret(uint32_t rank, uint32_t k) const { return &m_v[(m_base[rank] + k) * m_width]; }
  // Return how many events of rank `of` are called before event `k` of `rank` is called.
  uint32_t at_call(uint32_t rank, uint32_t k, uint32_t of) const {
    if (of == rank) return k + 1;
    return k == 0 ? 0 : ret(rank, k - 1)[of];
  }
  // Return true when `r` completes before `s` is posted in every execution.
  bool forced_after(const Op& r, const Op& s) const {
    if (r.done == k_none) return false;
    if (s.rank == r.rank) return s.post > r.done;
    return at_call(s.rank, s.post, r.rank) >= r.done + 2;
  }

  // Run one pass over every event, the MIN groups of ops given by
  // `sources`; return true when some clock grew.
  bool pass(const Sources& sources) {
    const uint32_t w = m_width;
    m_cursor.assign(w, 0);
    m_hub.assign(m_model.instances.size(), {});
    m_hub_users.assign(m_model.instances.size(), 0);
    for (const Op& o : m_model.ops) {
      if (o.kind == OpKind::coll && o.instance != k_none && o.done != k_none && uses_hub(o)) ++m_hub_users[o.instance];
    }
    m_changed = false;
    uint64_t left = m_base.back();
    Pace pace(m_paced == Paced::yes ? m_deadline : Deadline{}, left);
    uint32_t force = 0;
    while (left > 0) {
      pace.at(m_base.back() - left);
      bool progress = false;
      for (uint32_t i = 0; i < w; ++i) {
        const uint32_t n = static_cast<uint32_t>(m_model.ranks[i].events.size());
        while (m_cursor[i] < n && ready(i, m_cursor[i], sources)) {
          compute(i, m_cursor[i]++, sources);
          --left;
          progress = true;
        }
      }
      if (progress) continue;
      // Every rank waits for a call not known yet (a cycle, or a receive whose
      // candidates lie ahead): go on with what is known, which is sound.
      while (m_cursor[force] == m_model.ranks[force].events.size()) force = (force + 1) % w;
      compute(force, m_cursor[force]++, sources);
      --left;
      force = (force + 1) % w;
    }
    m_hub.clear();
    m_hub_users.clear();
    return m_changed;
  }

 private:
  static constexpr std::size_t k_max_scan_members = 64;

  // Return true when the call of `p` has its clock of this pass (seen from rank `rank`).
  bool known(Point p, uint32_t rank) const { return p.rank == rank || m_cursor[p.rank] >= p.event; }

  // Call `fn` with the posting event of each member whose call collective
  // op `o` waits for before it returns.
  template <class F>
  void awaited(const Op& o, F&& fn) const {
    const Instance& inst = m_model.instances[o.instance];
    auto visit = [&](std::size_t from, std::size_t to) {
      for (std::size_t m = from; m < to; ++m) {
        if (inst.members[m] != k_none) fn(Point{m_model.ops[inst.members[m]].rank, m_model.ops[inst.members[m]].post});
      }
    };
    const std::size_t size = inst.members.size();
    switch (inst.kind) {
      case CollKind::full:
        visit(0, size);
        break;
      case CollKind::from_root:
        if (o.member != inst.root && inst.root < size) visit(inst.root, inst.root + 1);
        break;
      case CollKind::to_root:
        if (o.member == inst.root) visit(0, size);
        break;
      case CollKind::scan:
      case CollKind::exscan:
        if (size <= k_max_scan_members) visit(0, inst.kind == CollKind::scan ? o.member + 1 : o.member);
        break;
    }
  }
  // Return true when collective op `o` waits for every member (through the instance's hub).
  bool uses_hub(const Op& o) const {
    const Instance& inst = m_model.instances[o.instance];
    return inst.kind == CollKind::full || (inst.kind == CollKind::to_root && o.member == inst.root);
  }

  bool ready(uint32_t i, uint32_t k, const Sources& sources) const {
    for (uint32_t op : m_model.ranks[i].completes(k)) {
      const Op& o = m_model.ops[op];
      bool ok = true;
      if (o.kind == OpKind::coll) {
        if (o.instance == k_none || (uses_hub(o) && !m_hub[o.instance].empty())) continue;
        awaited(o, [&](Point p) { ok = ok && known(p, i); });
      } else {
        for (Point p : sources[op]) ok = ok && known(p, i);
      }
      if (!ok) return false;
    }
    return true;
  }

  // Raise `acc` to the clock of the call of `p`.
  void join_call(Point p, std::vector<uint32_t>& acc) const {
    if (p.event > 0) {
      const uint32_t* v = ret(p.rank, p.event - 1);
      for (uint32_t x = 0; x < m_width; ++x) acc[x] = std::max(acc[x], v[x]);
    }
    acc[p.rank] = std::max(acc[p.rank], p.event + 1);
  }

  // Return the join of the calls of every member of instance `index`; kept
  // for the rest of the pass once all of them are known.
  const std::vector<uint32_t>& hub(uint32_t index, uint32_t rank) {
    if (!m_hub[index].empty()) return m_hub[index];
    m_scratch.assign(m_width, 0);
    bool all = true;
    for (uint32_t m : m_model.instances[index].members) {
      if (m == k_none) continue;
      const Point p{m_model.ops[m].rank, m_model.ops[m].post};
      all = all && known(p, rank);
      join_call(p, m_scratch);
    }
    if (all) m_hub[index] = m_scratch;
    return m_scratch;
  }

  void compute(uint32_t i, uint32_t k, const Sources& sources) {
    check_deadline(m_deadline, m_ticks);
    std::vector<uint32_t>& acc = m_acc;
    acc.assign(m_width, 0);
    if (k > 0) std::copy(ret(i, k - 1), ret(i, k - 1) + m_width, acc.begin());
    acc[i] = k + 1;
    for (uint32_t op : m_model.ranks[i].completes(k)) {
      const Op& o = m_model.ops[op];
      if (o.kind == OpKind::coll) {
        if (o.instance == k_none) continue;
        if (uses_hub(o)) {
          const std::vector<uint32_t>& h = hub(o.instance, i);
          for (uint32_t x = 0; x < m_width; ++x) acc[x] = std::max(acc[x], h[x]);
          // The hub is dropped after its last user: instances x ranks could be large.
          if (--m_hub_users[o.instance] == 0) std::vector<uint32_t>().swap(m_hub[o.instance]);
        } else {
          awaited(o, [&](Point p) { join_call(p, acc); });
        }
        continue;
      }
      const auto& group = sources[op];
      if (group.empty()) continue;
      // The MIN is nonzero only where every member's call clock is: start
      // from the sparsest member and lower its nonzero entries only (a
      // receive with K candidates costs K x its support, not K x ranks).
      std::size_t pivot = 0;
      for (std::size_t g = 1; g < group.size(); ++g) {
        if (call_support(group[g]) < call_support(group[pivot])) pivot = g;
      }
      m_low.assign(m_width, 0);
      join_call(group[pivot], m_low);
      for (uint32_t x = 0; x < m_width; ++x) {
        if (m_low[x] == 0) continue;
        for (std::size_t g = 0; g < group.size() && m_low[x] != 0; ++g) {
          if (g != pivot) m_low[x] = std::min(m_low[x], call_at(group[g], x));
        }
        acc[x] = std::max(acc[x], m_low[x]);
      }
    }
    const std::size_t row = m_base[i] + k;
    uint32_t* v = &m_v[row * m_width];
    uint32_t nonzero = 0;
    for (uint32_t x = 0; x < m_width; ++x) {
      if (acc[x] > v[x]) {
        v[x] = acc[x];
        m_changed = true;
      }
      nonzero += v[x] != 0;
    }
    m_nonzero[row] = nonzero;
  }

  // Return how many events of rank `x` are called before the call of `p`, at least.
  uint32_t call_at(Point p, uint32_t x) const {
    if (x == p.rank) return p.event + 1;
    return p.event == 0 ? 0 : ret(p.rank, p.event - 1)[x];
  }
  // Return how many entries of the call clock of `p` are nonzero, at most.
  uint32_t call_support(Point p) const { return 1 + (p.event == 0 ? 0 : m_nonzero[m_base[p.rank] + p.event - 1]); }

  const Model& m_model;
  Deadline m_deadline;
  Paced m_paced;
  uint64_t m_ticks = 0;
  uint32_t m_width;
  std::vector<std::size_t> m_base;  // per rank: its first event's row
  struct Free {
    void operator()(uint32_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint32_t[], Free> m_v;        // row per event, m_width counts
  std::unique_ptr<uint32_t[], Free> m_nonzero;  // per row: its nonzero counts
  // Pass state.
  std::vector<uint32_t> m_cursor;   // per rank: events with this pass's clock
  std::vector<std::vector<uint32_t>> m_hub;  // per instance: the join of its members' calls
  std::vector<uint32_t> m_hub_users;         // per instance: members still to use the hub
  std::vector<uint32_t> m_acc, m_low, m_scratch;
  bool m_changed = false;
};

void min_groups(const Model& model, const MatchPairs& pairs, StandardSends standard, Sources& sources);

// The rules of the header comment over one model: the counting rules and
// cuts, and once clocks exist the happens-before rules; run() iterates
// clocks and pairs to their fixpoint.
class Analysis {
 public:
  Analysis(const Model& model, const Channels& ch, const std::vector<Cut>& cuts, const Deadline& deadline = {})
      : m_model(model), m_deadline(deadline), m_ch(ch), m_segments(model, cuts, deadline),
        m_closed(model, ch, m_segments, cuts.size(), deadline) {}

  // Return the match pairs, with the happens-before rules unless `skip_hb`.
  MatchPairs run(bool skip_hb) {
    if (skip_hb || !Clocks::fits(m_model)) {
      materialize();
      m_pairs.hb_skipped = true;
      return std::move(m_pairs);
    }
    m_clocks.emplace(m_model, m_deadline, Paced::yes);
    // The first pass has no pair lists yet (on request/answer traces they
    // would be quadratic): a receive's MIN group is the first candidate of
    // each sender under the counting rules, which is the earliest one.
    m_sources.assign(m_model.ops.size(), {});
    IdList found;
    MatchPairs scratch;
    Pace pace(m_deadline, m_model.ops.size());
    for (uint32_t ri = 0; ri < m_model.ops.size(); ++ri) {
      pace.at(ri);
      const Op& r = m_model.ops[ri];
      if ((r.kind != OpKind::recv && r.kind != OpKind::probe) || r.done == k_none) continue;
      found.clear();
      collect(ri, Want::first_per_sender, found, scratch);
      for (uint32_t s : found) m_sources[ri].push_back({m_model.ops[s].rank, m_model.ops[s].post});
    }
    bool grew = m_clocks->pass(m_sources);
    uint32_t passes = 1;
    materialize();
    while (grew && passes < k_hb_passes) {
      sources_from_pairs();
      grew = m_clocks->pass(m_sources);
      ++passes;
      if (grew) materialize();
    }
    m_pairs.hb_passes = passes;
    return std::move(m_pairs);
  }

  // Return the pairs by the counting rules and cuts (run(true)'s) when they
  // are the recorded matches (recorded_pairs), else nothing, given up at the
  // first receive or probe whose candidates differ.
  std::optional<MatchPairs> run_recorded() {
    if (!materialize(Recorded::required)) return std::nullopt;
    m_pairs.hb_skipped = true;
    return std::move(m_pairs);
  }

  // Return why `ri` never matches `si` (pair_excluded_because); run() first.
  std::string explain(uint32_t ri, uint32_t si) const;

 private:
  enum class Want : uint8_t { all, first_per_sender };

  bool forced(const Op& r, const Op& s) const { return m_clocks && m_clocks->forced_after(r, s); }
  // Return how many sends of `sender` to r's endpoint are not posted after r completes.
  uint32_t unforced_from(const Op& r, uint32_t sender) const {
    const std::vector<uint32_t>& list = m_ch.sends(sender, r.comm, r.rank, k_any);
    return static_cast<uint32_t>(
        prefix_length(list, list.size(), [&](uint32_t s) { return !forced(r, m_model.ops[s]); }));
  }
  // Return the sends to r's endpoint from ranks other than `sender` that
  // r's earlier receives could take (rule 3), given `b` and, with clocks,
  // `unforced` (unforced_from summed over every sender).
  uint32_t others(const Op& r, uint32_t sender, const Bounds& b, uint32_t unforced) const {
    return m_clocks ? unforced - unforced_from(r, sender) : b.others;
  }
  uint32_t unforced_all(const Op& r) const {
    uint32_t n = 0;
    if (m_clocks) {
      for (uint32_t v : m_ch.senders_to(r.comm, r.rank)) n += unforced_from(r, v);
    }
    return n;
  }

  // Whether materialize() gives up once a receive's candidates are not its recorded send alone.
  enum class Recorded : uint8_t { any, required };

  void collect(uint32_t ri, Want want, IdList& found, MatchPairs& stats) const;
  // Make m_pairs from the rules; with Recorded::required, return false (and
  // leave m_pairs unfinished) at the first receive or probe whose candidates
  // are not its recorded send alone (none when it has none).
  bool materialize(Recorded recorded = Recorded::any);
  void sources_from_pairs();
  std::vector<Point> chain(const Op& r, const Op& s) const;

  const Model& m_model;
  Deadline m_deadline;
  mutable uint64_t m_ticks = 0;
  const Channels& m_ch;
  Segments m_segments;
  Closed m_closed;
  std::optional<Clocks> m_clocks;
  Sources m_sources;  // the MIN groups of the last pass
  MatchPairs m_pairs;
};

void Analysis::collect(uint32_t ri, Want want, IdList& found, MatchPairs& stats) const {
  check_deadline(m_deadline, m_ticks);
  const Op& r = m_model.ops[ri];
  std::vector<uint32_t> single;
  const std::vector<uint32_t>* senders = &m_ch.senders_to(r.comm, r.rank);
  if (r.peer != k_any) {
    single.push_back(static_cast<uint32_t>(r.peer));
    senders = &single;
  }
  const uint32_t r_done_segment = r.done == k_none ? UINT32_MAX : m_segments.of(r.rank, r.done);
  const uint32_t r_post_segment = m_segments.of(r.rank, r.post);
  const uint32_t unforced = unforced_all(r);
  for (uint32_t sender : *senders) {
    const std::vector<uint32_t>& channel = m_ch.sends(sender, r.comm, r.rank, k_any);
    if (channel.empty()) continue;
    const Bounds b = bounds(m_ch, r, ri, sender);
    const uint32_t other = others(r, sender, b, unforced);
    const std::size_t first_found = found.size();
    // One tag at a time, so that the earlier receives that accept the sends
    // (rule 3) are one number and every rule cuts the list into a window:
    // from the first send whose channel position can satisfy them, to the
    // last one rule 2 allows, before the first one posted after r completes.
    auto scan = [&](int32_t tag) {
      const std::vector<uint32_t>& list = m_ch.sends(sender, r.comm, r.rank, tag);
      const uint32_t need = accepting_before(m_ch, r, ri, sender, tag);
      // Where r's recorded send is in the list, if it is: the window's ends are next to it when the rules keep it alone.
      std::size_t hint = SIZE_MAX;
      if (r.recorded != k_none) {
        const uint32_t at = m_ch.tag_position(r.recorded);
        if (at < list.size() && list[at] == r.recorded) hint = at;
      }
      auto first_from = [&](uint32_t with) {
        return prefix_length_near(
            list, list.size(), [&](uint32_t s) { return m_ch.channel_position(s) + with < need; }, hint);
      };
      const std::size_t hi_plain = prefix_length_near(
          list, list.size(),
          [&](uint32_t s) { return (r.tag == k_any ? m_ch.channel_position(s) : m_ch.tag_position(s)) <= b.max_earlier; },
          hint);
      // The earlier receives that name the sender take its earlier sends only.
      const NamedBefore named = named_before(m_ch, r, ri, sender, tag);
      const std::size_t lo_named = prefix_length_near(
          list, list.size(),
          [&](uint32_t s) {
            return m_ch.tag_position(s) < named.same_tag || m_ch.channel_position(s) < named.same_tag + named.any_tag;
          },
          hint);
      const std::size_t lo_plain = std::max(first_from(b.others), lo_named);
      const std::size_t lo = m_clocks ? std::max(first_from(other), lo_named) : lo_plain;
      const std::size_t hi =
          m_clocks ? prefix_length(list, hi_plain, [&](uint32_t s) { return !forced(r, m_model.ops[s]); }) : hi_plain;
      if (lo_plain < hi_plain) stats.dropped_by_happens_before += (hi_plain - lo_plain) - (lo < hi ? hi - lo : 0);
      for (std::size_t i = lo; i < hi; ++i) {
        const uint32_t s = list[i];
        const Op& send = m_model.ops[s];
        const uint32_t s_post_segment = m_segments.of(send.rank, send.post);
        if (r_done_segment < s_post_segment ||
            m_closed.closed_between(r.comm, r.rank, s_post_segment, r_post_segment)) {
          ++stats.dropped_by_cuts;
          continue;
        }
        found.push_back(s);
        if (want == Want::first_per_sender) break;
      }
    };
    if (r.tag != k_any) {
      scan(r.tag);
    } else {
      for (int32_t tag : m_ch.channel_tags(channel.front())) scan(tag);
    }
    if (want == Want::first_per_sender && found.size() > first_found + 1) {
      // One per tag: keep the earliest posted.
      const uint32_t earliest =
          *std::min_element(found.begin() + static_cast<std::ptrdiff_t>(first_found), found.end(),
                            [&](uint32_t a, uint32_t c) { return m_model.ops[a].post < m_model.ops[c].post; });
      found.resize(first_found);
      found.push_back(earliest);
    }
  }
  std::sort(found.begin(), found.end());
}

bool Analysis::materialize(Recorded recorded) {
  MatchPairs& out = m_pairs;
  const std::size_t n = m_model.ops.size();
  // recorded_pairs keeps no lists per send (MatchPairs: restrict_pairs makes a part's from its sends),
  // and none per receive: each list it would keep is the op's recorded send (SendLists::use_recorded).
  const bool per_send = recorded == Recorded::any;
  if (per_send) {
    out.sends.assign(n);
  } else {
    out.sends.use_recorded(m_model.ops);
  }
  out.recvs.assign(per_send ? n : 0, {});
  out.probes.assign(per_send ? n : 0, {});
  out.pairs = out.dropped_by_cuts = out.dropped_by_happens_before = 0;
  IdList scratch;  // Recorded::required: the candidates of one op, compared with its recorded send
  auto target = [&](uint32_t i) -> IdList& {
    if (per_send) return out.sends.list(i);
    scratch.clear();
    return scratch;
  };
  auto as_recorded = [&](uint32_t i, const IdList& found) {
    const uint32_t rec = m_model.ops[i].recorded;
    return rec == k_none ? found.empty() : found.size() == 1 && found[0] == rec;
  };
  for (uint32_t i = 0; i < n; ++i) {
    if (m_model.ops[i].kind != OpKind::probe) continue;
    IdList& found = target(i);
    collect(i, Want::all, found, out);
    if (recorded == Recorded::required && !as_recorded(i, found)) return false;
  }
  Pace pace(m_deadline, n);  // by receives' ops (the probes' loop before is short)
  for (uint32_t i = 0; i < n; ++i) {
    pace.at(i);
    const Op& r = m_model.ops[i];
    if (r.kind != OpKind::recv) continue;
    IdList& found = target(i);
    collect(i, Want::all, found, out);
    if (r.probe != k_none) {
      // (Recorded::required: the probe's list is its recorded send, checked above.)
      const auto seen = out.sends[r.probe];
      erase_if(found, [&](uint32_t s) { return !std::binary_search(seen.begin(), seen.end(), s); });
    }
    if (recorded == Recorded::required && !as_recorded(i, found)) return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const bool probe = m_model.ops[i].kind == OpKind::probe;
    if (per_send) {
      for (uint32_t s : out.sends[i]) (probe ? out.probes : out.recvs)[s].push_back(i);
    }
    out.pairs += out.sends[i].size();
  }
  return true;
}

void Analysis::sources_from_pairs() { min_groups(m_model, m_pairs, StandardSends::return_at_once, m_sources); }

// The MIN groups of every op that waits for a match: a receive's or probe's
// candidate sends, and the candidate receives of a send that completes only
// once matched (MPI_Ssend; standard sends too when `standard` is
// wait_for_match).
void min_groups(const Model& model, const MatchPairs& pairs, StandardSends standard, Sources& sources) {
  sources.assign(model.ops.size(), {});
  // Clocks grow along a rank, so a MIN group needs the earliest candidate per rank only.
  std::vector<uint32_t> earliest(model.ranks.size(), k_none);
  std::vector<uint32_t> touched;
  auto group = [&](std::span<const uint32_t> candidates, SmallList<Point, 1>& out) {
    out.clear();
    for (uint32_t c : candidates) {
      const Op& o = model.ops[c];
      if (earliest[o.rank] == k_none) touched.push_back(o.rank);
      earliest[o.rank] = std::min(earliest[o.rank], o.post);
    }
    for (uint32_t rank : touched) {
      out.push_back({rank, earliest[rank]});
      earliest[rank] = k_none;
    }
    touched.clear();
  };
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& o = model.ops[i];
    if (o.done == k_none) continue;
    if (o.kind == OpKind::recv || o.kind == OpKind::probe) group(pairs.sends[i], sources[i]);
    const bool waits = o.mode == SendMode::sync ||
                       (o.mode == SendMode::standard && standard == StandardSends::wait_for_match);
    if (o.kind == OpKind::send && waits) group(pairs.recvs[i], sources[i]);
  }
}

std::vector<Point> Analysis::chain(const Op& r, const Op& s) const {
  // Walk back from s's call: on each rank, the first event whose return
  // knows r's rank passed r.done + 1, and the call on another rank it got
  // that from (a MIN group has it from all of its calls).
  std::vector<Point> out;
  const uint32_t need = r.done + 2;
  Point at{s.rank, s.post};
  for (int step = 0; step < 64 && at.rank != r.rank; ++step) {
    uint32_t lo = 0, hi = at.event;  // first k < at.event with ret(k) >= need
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (m_clocks->ret(at.rank, mid)[r.rank] >= need) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (lo == at.event) return {};
    out.push_back({at.rank, lo});
    std::optional<Point> from;
    auto consider = [&](Point p) {
      if (!from && p.rank != at.rank && m_clocks->at_call(p.rank, p.event, r.rank) >= need) from = p;
    };
    for (uint32_t op : m_model.ranks[at.rank].completes(lo)) {
      const Op& o = m_model.ops[op];
      if (o.kind != OpKind::coll) {
        for (Point p : m_sources[op]) consider(p);
        continue;
      }
      if (o.instance == k_none) continue;
      for (uint32_t m : m_model.instances[o.instance].members) {
        if (m != k_none) consider({m_model.ops[m].rank, m_model.ops[m].post});
      }
    }
    if (!from) return {};
    at = *from;
  }
  if (at.rank != r.rank) return {};
  std::reverse(out.begin(), out.end());
  return out;
}

std::string Analysis::explain(uint32_t ri, uint32_t si) const {
  const Model& model = m_model;
  const Channels& ch = m_ch;
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
  if (r.probe != k_none && !explain(r.probe, si).empty()) {
    return fmt::format("{} takes the message that probe {} saw, and that probe cannot see {}", rt,
                       model.post_ref(r.probe).str(), st);
  }
  const Bounds b = bounds(ch, r, ri, s.rank);
  const uint32_t earlier = r.tag == k_any ? ch.channel_position(si) : ch.tag_position(si);
  if (earlier > b.max_earlier) {
    return fmt::format(
        "non-overtaking: {} earlier send(s) of rank {} that {} accepts must be received before {}, by "
        "receives posted before {}, and only {} such receive(s) can take messages from rank {}",
        earlier, s.rank, rt, st, rt, b.max_earlier, s.rank);
  }
  const NamedBefore named = named_before(ch, r, ri, s.rank, s.tag);
  if (named.same_tag > ch.tag_position(si) || named.same_tag + named.any_tag > ch.channel_position(si)) {
    return fmt::format(
        "non-overtaking: the {} receive(s) posted before {} that name rank {} ({} with tag {}) each take an "
        "earlier message of rank {} than {}, and only {} ({} with tag {}) precede it",
        named.same_tag + named.any_tag, rt, s.rank, named.same_tag, s.tag, s.rank, st, ch.channel_position(si),
        ch.tag_position(si), s.tag);
  }
  const uint32_t before = accepting_before(ch, r, ri, s.rank, s.tag);
  if (before > ch.channel_position(si) + b.others) {
    return fmt::format(
        "non-overtaking: the {} receive(s) posted before {} that accept {} must match first, with "
        "earlier sends of rank {} ({}) or sends of other ranks ({}): too few",
        before, rt, st, s.rank, ch.channel_position(si), b.others);
  }
  const uint32_t s_post = m_segments.of(s.rank, s.post);
  if (r.done != k_none && m_segments.of(r.rank, r.done) < s_post) {
    return fmt::format("{} completes before a collective of all ranks that rank {} passes before posting {}", rt,
                       s.rank, st);
  }
  if (m_closed.closed_between(r.comm, r.rank, s_post, m_segments.of(r.rank, r.post))) {
    return fmt::format(
        "every message to rank {} posted before a collective of all ranks is received before it, and {} is "
        "posted after it while {} is posted before",
        r.rank, rt, st);
  }
  if (forced(r, s)) {
    std::string through;
    if (s.rank == r.rank) {
      through = "program order";
    } else {
      for (Point p : chain(r, s)) through += (through.empty() ? "" : ", ") + event_text(model, p.rank, p.event);
      through = through.empty() ? "vector clocks" : "through " + through;
    }
    return fmt::format("{} completes before {} is posted in every execution (happens-before {})", rt, st, through);
  }
  const uint32_t other = others(r, s.rank, b, unforced_all(r));
  if (before > ch.channel_position(si) + other) {
    return fmt::format(
        "non-overtaking: the {} receive(s) posted before {} that accept {} must match before {} completes, "
        "with earlier sends of rank {} ({}) or sends of other ranks not posted after that ({}): too few",
        before, rt, st, rt, s.rank, ch.channel_position(si), other);
  }
  return {};
}

}  // namespace

std::vector<Cut> find_cuts(const Model& model, const Deadline& deadline) {
  std::vector<Cut> cuts;
  const uint32_t n = model.world_size;
  if (n == 0) return cuts;
  uint64_t ticks = 0;
  for (uint32_t i = 0; i < model.instances.size(); ++i) {
    check_deadline(deadline, ticks);
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

void Channels::PairIds::init(uint64_t rows, uint64_t columns, std::size_t ops) {
  m_rows = rows;
  m_columns = columns;
  m_map_mode = rows * columns > std::max<uint64_t>(uint64_t{1} << 16, ops / 8);
  if (!m_map_mode) m_table.assign(rows * columns, k_none);
}

uint32_t Channels::PairIds::insert(uint64_t a, uint64_t b, uint32_t next) {
  if (!m_map_mode) {
    uint32_t& id = m_table[a * m_columns + b];
    if (id == k_none) id = next;
    return id;
  }
  return m_map.try_emplace((a << 32) | b, next).first->second;
}

const std::vector<uint32_t>* Channels::ByTag::find(int32_t tag) const {
  if (lists.empty()) return tags.size() == 1 && tags[0] == tag ? &all : nullptr;
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair{tag, uint32_t{0}});
  return it != sorted.end() && it->first == tag ? &lists[it->second] : nullptr;
}

Channels::Channels(const Model& model, const Deadline& deadline)
    : m_model(model), m_channel_pos(model.ops.size(), 0) {
  uint64_t ticks = 0;
  // Dense ids: endpoints first (comm, rank), then the channels (endpoint,
  // sender) and receive slots (endpoint, named source or any); a table where
  // rows x columns is at most about an eighth of an entry per op.
  uint32_t comms = 0;
  auto indexed = [](const Op& op) { return (op.kind == OpKind::send && op.peer >= 0) || (op.kind == OpKind::recv && op.peer >= k_any); };
  for (const Op& op : model.ops) {
    check_deadline(deadline, ticks);
    if (!indexed(op)) continue;
    comms = std::max(comms, op.comm + 1);
    m_width = std::max(m_width, uint32_t{op.rank} + 1);
    if (op.peer >= 0) m_width = std::max(m_width, static_cast<uint32_t>(op.peer) + 1);
    m_any_source = m_any_source || (op.kind == OpKind::recv && op.peer == k_any);
    m_any_tag = m_any_tag || (op.kind == OpKind::recv && op.tag == k_any);
  }
  m_endpoint_ids.init(comms, m_width, model.ops.size());
  auto endpoint_of = [&](const Op& op) {
    const uint32_t rank = op.kind == OpKind::send ? static_cast<uint32_t>(op.peer) : op.rank;
    const uint32_t id = m_endpoint_ids.insert(op.comm, rank, static_cast<uint32_t>(m_endpoints.size()));
    if (id == m_endpoints.size()) m_endpoints.emplace_back();
    return id;
  };
  // Each op's endpoint, kept in m_channel_pos until its position replaces it below.
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    check_deadline(deadline, ticks);
    if (indexed(model.ops[i])) m_channel_pos[i] = endpoint_of(model.ops[i]);
  }
  m_channel_ids.init(m_endpoints.size(), m_width, model.ops.size());
  m_receive_ids.init(m_endpoints.size(), uint64_t{m_width} + 1, model.ops.size());
  // Tags of one list: looked up by scanning while there are few, else in a
  // map (list id, tag) -> index, kept for the build only.
  constexpr std::size_t k_scan_tags = 8;
  std::unordered_map<uint64_t, uint32_t> channel_tag_index, receive_tag_index;
  auto add = [&](ByTag& list, uint64_t id, uint32_t op, int32_t tag, std::unordered_map<uint64_t, uint32_t>& index) {
    const uint64_t key = (id << 32) | static_cast<uint32_t>(tag);
    uint32_t t = k_none;
    if (list.tags.size() <= k_scan_tags) {
      for (uint32_t i = 0; i < list.tags.size() && t == k_none; ++i) t = list.tags[i] == tag ? i : k_none;
    } else if (auto it = index.find(key); it != index.end()) {
      t = it->second;
    }
    if (t == k_none) {
      t = static_cast<uint32_t>(list.tags.size());
      list.tags.push_back(tag);
      // The first list with a second tag: from here on a tag's position may
      // differ from the list's. Every op before `op` has its position in
      // m_channel_pos by now (later ones hold their endpoint there, and are
      // written below).
      if (t == 1 && m_tag_pos.empty()) {
        m_tag_pos.assign(m_channel_pos.begin(), m_channel_pos.begin() + op);
        m_tag_pos.resize(m_channel_pos.size(), 0);
      }
      // Lists per tag from the second tag on (the first one's is every op so far).
      if (t == 1) list.lists.push_back(list.all);
      if (t >= 1) list.lists.emplace_back();
      if (list.tags.size() == k_scan_tags + 1) {
        for (uint32_t i = 0; i < list.tags.size(); ++i) index.emplace((id << 32) | static_cast<uint32_t>(list.tags[i]), i);
      } else if (list.tags.size() > k_scan_tags + 1) {
        index.emplace(key, t);
      }
    }
    list.all.push_back(op);
    if (list.lists.empty()) return static_cast<uint32_t>(list.all.size() - 1);
    list.lists[t].push_back(op);
    return static_cast<uint32_t>(list.lists[t].size() - 1);
  };
  // The position by tag, where one is kept (m_tag_pos, once some list has
  // two tags); else it is the list's position, set just before.
  auto set_tag_pos = [&](uint32_t op, uint32_t pos) {
    if (!m_tag_pos.empty()) m_tag_pos[op] = pos;
  };
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    check_deadline(deadline, ticks);
    const Op& op = model.ops[i];
    if (!indexed(op)) continue;
    const uint32_t e = m_channel_pos[i];
    if (op.kind == OpKind::send) {
      const uint32_t c = m_channel_ids.insert(e, op.rank, static_cast<uint32_t>(m_channels.size()));
      if (c == m_channels.size()) {
        m_channels.emplace_back();
        m_endpoints[e].senders.push_back(op.rank);
      }
      ++m_endpoints[e].sends;
      m_channel_pos[i] = static_cast<uint32_t>(m_channels[c].all.size());
      set_tag_pos(i, add(m_channels[c], c, i, op.tag, channel_tag_index));
    } else {
      const uint32_t slot = m_receive_ids.insert(e, static_cast<uint64_t>(op.peer + 1), static_cast<uint32_t>(m_receive_slots.size()));
      if (slot == m_receive_slots.size()) m_receive_slots.emplace_back();
      m_channel_pos[i] = static_cast<uint32_t>(m_receive_slots[slot].all.size());
      set_tag_pos(i, add(m_receive_slots[slot], slot, i, op.tag, receive_tag_index));
    }
  }
  auto finish = [](ByTag& list) {
    if (list.tags.size() <= 1) return;  // the list of every tag is the one tag's
    list.sorted.reserve(list.tags.size());
    for (uint32_t t = 0; t < list.tags.size(); ++t) list.sorted.emplace_back(list.tags[t], t);
    std::sort(list.sorted.begin(), list.sorted.end());
  };
  for (ByTag& list : m_channels) {
    check_deadline(deadline, ticks);
    finish(list);
  }
  for (ByTag& list : m_receive_slots) {
    check_deadline(deadline, ticks);
    finish(list);
  }
}

uint64_t Channels::order(uint32_t op) const { return (uint64_t{m_model.ops[op].post} << 32) | op; }

const Channels::ByTag* Channels::channel(uint32_t source, uint32_t comm, uint32_t rank) const {
  const uint32_t e = endpoint(comm, rank);
  if (e == k_none) return nullptr;
  const uint32_t c = m_channel_ids.find(e, source);
  return c == k_none ? nullptr : &m_channels[c];
}

uint32_t Channels::previous_send(uint32_t send, int32_t tag) const {
  const Op& s = m_model.ops[send];
  // The send's own positions answer for every tag and for its own.
  if (tag == k_any || tag == s.tag) {
    const ByTag* c = s.peer >= 0 ? channel(s.rank, s.comm, static_cast<uint32_t>(s.peer)) : nullptr;
    if (!c) return k_none;
    const uint32_t pos = tag == k_any ? m_channel_pos[send] : tag_position(send);
    if (pos == 0) return k_none;
    return (tag == k_any ? c->all : *c->find(tag))[pos - 1];
  }
  const auto& list = sends(s.rank, s.comm, static_cast<uint32_t>(s.peer), tag);
  // Sends of one channel are in posting order, which is op order.
  auto it = std::lower_bound(list.begin(), list.end(), send);
  return it == list.begin() ? k_none : *(it - 1);
}

const std::vector<int32_t>& Channels::channel_tags(uint32_t send) const {
  const Op& s = m_model.ops[send];
  const ByTag* c = s.kind == OpKind::send ? channel(s.rank, s.comm, static_cast<uint32_t>(s.peer)) : nullptr;
  return c ? c->tags : m_no_tags;
}

uint32_t Channels::sends_to(uint32_t comm, uint32_t rank) const {
  const uint32_t e = endpoint(comm, rank);
  return e == k_none ? 0 : m_endpoints[e].sends;
}

uint32_t Channels::sends_from_to(uint32_t source, uint32_t comm, uint32_t rank) const {
  const ByTag* c = channel(source, comm, rank);
  return c ? static_cast<uint32_t>(c->all.size()) : 0;
}

const std::vector<uint32_t>& Channels::senders_to(uint32_t comm, uint32_t rank) const {
  const uint32_t e = endpoint(comm, rank);
  return e == k_none ? m_empty : m_endpoints[e].senders;
}

const std::vector<uint32_t>& Channels::sends(uint32_t source, uint32_t comm, uint32_t rank, int32_t tag) const {
  const ByTag* c = channel(source, comm, rank);
  if (!c) return m_empty;
  if (tag == k_any) return c->all;
  const std::vector<uint32_t>* list = c->find(tag);
  return list ? *list : m_empty;
}

const std::vector<uint32_t>& Channels::posted_receives(uint32_t comm, uint32_t rank, int32_t source,
                                                       int32_t tag) const {
  const uint32_t e = endpoint(comm, rank);
  if (e == k_none) return m_empty;
  const uint32_t slot = m_receive_ids.find(e, static_cast<uint64_t>(source + 1));
  if (slot == k_none) return m_empty;
  const ByTag& list = m_receive_slots[slot];
  if (tag == k_all) return list.all;
  const std::vector<uint32_t>* found = list.find(tag);
  return found ? *found : m_empty;
}

uint32_t Channels::count_before(const std::vector<uint32_t>& list, uint32_t op) const {
  // A receive in `list` (one of its own two lists) is preceded by its position there.
  if (m_model.ops[op].kind == OpKind::recv) {
    for (const uint32_t pos : {tag_position(op), m_channel_pos[op]}) {
      if (pos < list.size() && list[pos] == op) return pos;
    }
  }
  // A probe comes before every receive of its own event: the receive a
  // matched probe (MPI_Mprobe, MPI_Improbe) posts takes what the probe saw.
  const uint64_t limit = m_model.ops[op].kind == OpKind::probe ? uint64_t{m_model.ops[op].post} << 32 : order(op);
  auto it = std::lower_bound(list.begin(), list.end(), limit,
                             [&](uint32_t a, uint64_t v) { return order(a) < v; });
  return static_cast<uint32_t>(it - list.begin());
}

uint32_t Channels::last_before(const std::vector<uint32_t>& list, uint32_t op) const {
  const uint32_t n = count_before(list, op);
  return n == 0 ? k_none : list[n - 1];
}

IdList& SendLists::list(std::size_t op) {
  if (m_ops != nullptr) throw std::logic_error("match pairs: the recorded matches' lists are read only");
  return m_lists[op];
}

uint32_t MatchPairs::find(uint32_t recv, uint32_t send) const {
  const auto& v = sends[recv];
  auto it = std::lower_bound(v.begin(), v.end(), send);
  return it != v.end() && *it == send ? static_cast<uint32_t>(it - v.begin()) : k_none;
}

MatchPairs match_pairs(const Model& model, const Channels& ch, const std::vector<Cut>& cuts, HbRules hb,
                       const Deadline& deadline) {
  return Analysis(model, ch, cuts, deadline).run(hb == HbRules::off);
}

bool clocks_fit(const Model& model) {
  uint64_t events = 0;
  for (const RankEvents& r : model.ranks) events += r.events.size();
  return events * model.ranks.size() <= k_hb_max_entries;
}

bool names_wildcard(const Model& model) {
  return std::any_of(model.ops.begin(), model.ops.end(), [](const Op& o) {
    return (o.kind == OpKind::recv || o.kind == OpKind::probe) && (o.peer == k_any || o.tag == k_any);
  });
}

std::optional<MatchPairs> recorded_pairs(const Model& model, const Channels& ch, const std::vector<Cut>& cuts,
                                         const Deadline& deadline) {
  return Analysis(model, ch, cuts, deadline).run_recorded();
}

struct Precedence::Impl {
  Impl(const Model& model, const Deadline& deadline) : clocks(model, deadline) {}
  Clocks clocks;
};

Precedence::Precedence(const Model& model, const MatchPairs& pairs, StandardSends standard, uint64_t max_entries,
                       const Deadline& deadline)
    : m_model(model) {
  uint64_t events = 0;
  for (const RankEvents& r : model.ranks) events += r.events.size();
  if (events * model.ranks.size() > max_entries) return;
  m_impl = std::make_unique<Impl>(model, deadline);
  Sources sources;
  min_groups(model, pairs, standard, sources);
  // The groups do not change between passes: each pass only lets clocks
  // computed past a cycle see more of the others.
  for (uint32_t pass = 0; pass < k_hb_passes && m_impl->clocks.pass(sources); ++pass) {
  }
}

Precedence::~Precedence() = default;

bool Precedence::completes_before_post(uint32_t a, uint32_t b) const {
  return m_impl && m_impl->clocks.forced_after(m_model.ops[a], m_model.ops[b]);
}

struct PairRules::Impl {
  Impl(const Model& model, const Channels& ch, const std::vector<Cut>& cuts) : analysis(model, ch, cuts) {}
  Analysis analysis;
};

PairRules::PairRules(const Model& model, const Channels& ch, const std::vector<Cut>& cuts, HbRules hb)
    : m_impl(std::make_unique<Impl>(model, ch, cuts)) {
  m_impl->analysis.run(hb == HbRules::off);
}

PairRules::~PairRules() = default;

std::string PairRules::excluded_because(uint32_t recv, uint32_t send) const {
  return m_impl->analysis.explain(recv, send);
}

std::string pair_excluded_because(const Model& model, const Channels& ch, const std::vector<Cut>& cuts,
                                  uint32_t ri, uint32_t si) {
  return PairRules(model, ch, cuts).excluded_because(ri, si);
}

}  // namespace smtrace::smt
