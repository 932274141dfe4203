// Match pairs: for every receive and probe, the sends it could match in some
// execution. Over-approximated (Huang and Mercer, section 4 and Figure 5),
// generalized to MPI: an endpoint is (communicator, destination rank);
// receives may name any source and any tag; non-overtaking holds per
// (source, destination, communicator) among the messages a receive accepts.
// A pair is dropped only when no execution can have it (each rule says why):
// - envelope: the receive does not accept the send;
// - lower bound (the paper's rule 2): the sends of the same sender that the
//   receive accepts and that precede s must all be matched before it, each
//   by a distinct receive posted earlier on the rank from that sender or any;
// - upper bound (rule 3): the earlier receives that accept s must all be
//   matched first, each with an earlier send of s's sender or a send of
//   another rank that is not posted after r completes (happens-before below);
//   those that name s's sender take its sends before s: with s's tag, one
//   of the sends of the channel with that tag before s, with any tag, one of
//   the channel's sends before s (a later one would overtake s, which they
//   accept);
// - cut: across a point every rank passes (a barrier of all ranks), a
//   receive that completes before it never takes a send posted after it, and
//   when as many receives of an endpoint complete before it as sends to the
//   endpoint are posted before it, no send crosses it;
// - happens-before: r completes before s is posted in every execution.
// Candidate sends come out of indexed channels (per sender, per tag) by
// binary search, so a trace without wildcards costs O(n log n).
//
// Happens-before. A point is the call or the return of a model event. For
// points a and b, "a before b" means: in every execution (every sequence of
// steps of semantics.hpp, finished or not) in which b occurs, a occurred
// earlier. Relations that hold whichever matches happen:
// - program order: call(k) before ret(k) before call(k+1) on a rank;
// - a receive or probe that completes at event d took or saw a send s that
//   was posted before: call(s.post) before ret(d) for that s. Which s is
//   open, but it is a candidate, so ret(d) comes after the earliest of the
//   candidates' calls: componentwise, its clock is at least the MIN of their
//   clocks (one candidate: an ordinary edge);
// - an MPI_Ssend completing at d was matched by a receive posted before:
//   ret(d) after the MIN over its candidate receives' posting calls;
// - collectives, by CollKind: full, every member's call before every
//   member's return; from_root, the root's call before each return; to_root,
//   every call before the root's return; scan / exscan, members <= i / < i
//   before member i's return (scans of more than 64 members are left out).
// Standard sends get no edge, not even under zero buffering: the pairs serve
// both --buffering modes. Every edge goes from a call to a return, so the
// clock of a return, per rank j, is how many events of j are called before
// it; ret(r.done) before call(s.post) on another rank holds exactly when
// call(r.done + 1) is, i.e. when s.post's call clock counts r.done + 2
// events of r's rank. Clocks are computed rank by rank, an event once the
// calls it depends on are known, else (a cycle) with what is known so far;
// a value computed from sound values by these rules is sound, so every
// intermediate clock is a lower bound of the true relation.
//
// Soundness of the fixpoint. Clocks are derived from candidate sets, and
// candidate sets pruned with the clocks (the happens-before rule above, and
// rule 3 counting only the other ranks' sends not forced after r completes:
// the earlier receives are matched before r is, hence before r completes,
// with sends posted before that). Both steps are repeated until the clocks
// stop growing (at most k_hb_passes passes). Suppose some execution X
// matches a pair that is dropped; take the first pass whose pruning drops a
// pair of X. Every candidate set that pass's clocks came from still held
// every pair of X, so each relation derived holds in X (by induction over
// X's steps), and the dropped pair contradicts one of them: r would have
// completed before s was posted, or r's earlier receives would lack sends.
// So no pair of any execution is ever dropped. Vector clocks take world
// size entries per event: past k_hb_max_entries (events x ranks) the
// happens-before rules are skipped (hb_skipped) and the pairs are as
// without them. HbRules::off skips them too (benchmarks: Tuning::hb_pruning).
//
// Channels is the index the encoder shares for its non-overtaking
// constraints: each send's place in its channel, and receives by envelope.
//
// Thread safety: plain values; the functions are reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "smt_encoder/model.hpp"

namespace smtrace::smt {

// A point every rank passes: a blocking synchronizing collective on a
// communicator of all ranks that every rank called and returned from.
struct Cut {
  uint32_t instance = 0;
  std::vector<uint32_t> event;  // per rank: index of its call
};

// Return the cuts of `model`, in program order (the same on every rank).
// Throw BudgetSpent past `deadline`.
std::vector<Cut> find_cuts(const Model& model, const Deadline& deadline = {});

class Channels {
 public:
  // Throw BudgetSpent past `deadline`.
  explicit Channels(const Model& model, const Deadline& deadline = {});

  // Return the send before `send` on its channel (same sender, communicator
  // and destination) with tag `tag` (k_any: any tag), or k_none.
  uint32_t previous_send(uint32_t send, int32_t tag) const;
  // Return the distinct tags of the channel of `send`.
  const std::vector<int32_t>& channel_tags(uint32_t send) const;
  // Return the position of `send` in its channel (0 = first).
  uint32_t channel_position(uint32_t send) const { return m_channel_pos[send]; }
  // Return the position of `send` among the sends of its channel with its tag.
  uint32_t tag_position(uint32_t send) const { return m_tag_pos.empty() ? m_channel_pos[send] : m_tag_pos[send]; }
  // (For a receive the two positions are its places in receives() of its
  // endpoint, source and k_all, and of its source and tag: count_before's
  // answer for it there without a search.)
  // Return the number of sends to (comm, rank) and of those from `source`.
  uint32_t sends_to(uint32_t comm, uint32_t rank) const;
  uint32_t sends_from_to(uint32_t source, uint32_t comm, uint32_t rank) const;
  // Return the senders that have a channel to (comm, rank).
  const std::vector<uint32_t>& senders_to(uint32_t comm, uint32_t rank) const;
  // Return the sends from `source` to (comm, rank) with tag `tag` (k_any: all), in order.
  const std::vector<uint32_t>& sends(uint32_t source, uint32_t comm, uint32_t rank, int32_t tag) const;
  // Return the receives of (comm, rank) posted as (source, tag) exactly
  // (k_any allowed), in posting order; `tag` k_all: every tag.
  // (The wildcard look-ups that no receive posted end here, inline: most of
  // the counting rules' calls on a trace without wildcards.)
  const std::vector<uint32_t>& receives(uint32_t comm, uint32_t rank, int32_t source, int32_t tag) const {
    if ((source == k_any && !m_any_source) || (tag == k_any && !m_any_tag) || source < k_any) return m_empty;
    return posted_receives(comm, rank, source, tag);
  }
  // Return how many receives of `list` were posted before op `op` (posting order).
  uint32_t count_before(const std::vector<uint32_t>& list, uint32_t op) const;
  // Return the last receive of `list` posted before op `op`, or k_none.
  uint32_t last_before(const std::vector<uint32_t>& list, uint32_t op) const;

  static constexpr int32_t k_all = -2;  // receives(): any posted tag

  // The dense id of endpoint (comm, rank), or k_none when no send goes to it
  // and no receive is posted on it.
  uint32_t endpoint(uint32_t comm, uint32_t rank) const { return m_endpoint_ids.find(comm, rank); }
  // Return the number of endpoints (ids 0 .. endpoints() - 1).
  uint32_t endpoints() const { return static_cast<uint32_t>(m_endpoints.size()); }
  // Return true when some receive names MPI_ANY_SOURCE (MPI_ANY_TAG):
  // otherwise receives() with that source (tag) is empty without a look-up.
  bool any_source() const { return m_any_source; }
  bool any_tag() const { return m_any_tag; }

  // A map from pairs (a, b) to dense ids: a table of rows x columns when
  // that is small against the model (at most 65,536 entries or one per 8
  // of its `ops`), else a hash map.
  class PairIds {
   public:
    void init(uint64_t rows, uint64_t columns, std::size_t ops);
    // Return the id of (a, b), or k_none.
    uint32_t find(uint64_t a, uint64_t b) const {
      if (!m_map_mode) return a < m_rows && b < m_columns ? m_table[a * m_columns + b] : k_none;
      auto it = m_map.find((a << 32) | b);
      return it == m_map.end() ? k_none : it->second;
    }
    // Return the id of (a, b), giving it `next` when it has none yet.
    uint32_t insert(uint64_t a, uint64_t b, uint32_t next);

   private:
    bool m_map_mode = false;
    uint64_t m_rows = 0, m_columns = 0;
    std::vector<uint32_t> m_table;
    std::unordered_map<uint64_t, uint32_t> m_map;
  };

 private:
  // Lists of ops by tag: the tags in first-posted order and, when there are
  // more than one, a list per tag (with one, the list of every tag is it).
  struct ByTag {
    std::vector<uint32_t> all;
    std::vector<int32_t> tags;
    std::vector<std::pair<int32_t, uint32_t>> sorted;  // (tag, index into lists), more than one tag only
    std::vector<std::vector<uint32_t>> lists;          // per tag, more than one tag only
    // Return the list of tag `tag`, or nullptr.
    const std::vector<uint32_t>* find(int32_t tag) const;
  };
  struct Endpoint {
    uint32_t sends = 0;             // sends to it
    std::vector<uint32_t> senders;  // ranks that send to it, in order of their first send
  };
  uint64_t order(uint32_t op) const;
  // receives() past its wildcard checks.
  const std::vector<uint32_t>& posted_receives(uint32_t comm, uint32_t rank, int32_t source, int32_t tag) const;
  const ByTag* channel(uint32_t source, uint32_t comm, uint32_t rank) const;

  const Model& m_model;
  // Per op; m_tag_pos stays empty while every list has one tag, where the
  // two positions are the same (the common case: a channel per tag).
  std::vector<uint32_t> m_channel_pos, m_tag_pos;
  uint32_t m_width = 0;          // ranks (and peers) below it
  PairIds m_endpoint_ids;        // (comm, rank) -> endpoint
  PairIds m_channel_ids;         // (endpoint, source) -> channel
  PairIds m_receive_ids;         // (endpoint, source + 1: 0 any) -> receive slot
  std::vector<Endpoint> m_endpoints;
  std::vector<ByTag> m_channels;  // sends of one sender to one endpoint
  std::vector<ByTag> m_receive_slots;  // receives of one endpoint naming one source (or any), tag k_any included
  bool m_any_source = false, m_any_tag = false;
  std::vector<uint32_t> m_empty;
  std::vector<int32_t> m_no_tags;
};

// Per op, the candidate sends of a receive or probe (ascending; none for a
// send or a collective call): a list per op, or (recorded_pairs, where
// every receive and probe has its recorded send as its one candidate, or
// none without one) the model's ops themselves, each read as the list of
// its `recorded` send, so that no list per op is kept (16 bytes per op).
// Read as a span; written through list(), in lists mode only.
class SendLists {
 public:
  std::size_t size() const { return m_size; }
  std::span<const uint32_t> operator[](std::size_t op) const {
    if (m_ops == nullptr) return {m_lists[op].data(), m_lists[op].size()};
    const Op& o = m_ops[op];
    return {&o.recorded, o.kind != OpKind::send && o.kind != OpKind::coll && o.recorded != k_none ? 1U : 0U};
  }
  // Make `n` empty lists (lists mode).
  void assign(std::size_t n) {
    m_ops = nullptr;
    m_lists.assign(n, {});
    m_size = n;
  }
  // Read the lists from `ops` (each receive's and probe's recorded send,
  // none without one), which must outlive this and every copy of it.
  void use_recorded(const std::vector<Op>& ops) {
    m_lists = {};
    m_ops = ops.data();
    m_size = ops.size();
  }
  bool recorded() const { return m_ops != nullptr; }
  // Return op `op`'s list to change; throw std::logic_error in recorded mode.
  IdList& list(std::size_t op);

 private:
  std::vector<IdList> m_lists;
  const Op* m_ops = nullptr;
  std::size_t m_size = 0;
};

struct MatchPairs {
  SendLists sends;   // per receive or probe: candidate sends (ascending)
  // Per send: the receives that may take it, and the probes that may see it
  // (ascending; `sends` inverted). Empty (no entry per op) from
  // recorded_pairs: a part's are made from its sends (restrict_pairs).
  std::vector<IdList> recvs;
  std::vector<IdList> probes;
  uint64_t pairs = 0;                         // receive and probe pairs
  uint64_t dropped_by_cuts = 0;
  // Pairs that the happens-before rules remove, counted against the window
  // of the counting rules (a few may also fail a per-pair rule 3 check).
  uint64_t dropped_by_happens_before = 0;
  uint32_t hb_passes = 0;    // vector clock passes run
  bool hb_skipped = false;   // happens-before rules not applied (too large, or switched off)
  // Return the index of `send` in sends[recv], or k_none.
  uint32_t find(uint32_t recv, uint32_t send) const;
};

inline constexpr uint32_t k_hb_passes = 8;
inline constexpr uint64_t k_hb_max_entries = uint64_t{1} << 27;

enum class HbRules : uint8_t { on, off };

// Return the match pairs of `model` given its cuts `cuts` (find_cuts),
// with the happens-before rules unless `hb` is off. Throw BudgetSpent past
// `deadline`.
MatchPairs match_pairs(const Model& model, const Channels& channels, const std::vector<Cut>& cuts,
                       HbRules hb = HbRules::on, const Deadline& deadline = {});

// Return true when `model` is small enough for the happens-before clocks
// (events x ranks at most k_hb_max_entries); match_pairs skips their rules
// on a larger one.
bool clocks_fit(const Model& model);

// Return true when some receive or probe of `model` names MPI_ANY_SOURCE or
// MPI_ANY_TAG (k_any), a receive bound to a probe included (one that takes
// a wildcard probe's message carries the probe's envelope), unlike
// solve.cpp's is_wildcard, which leaves bound receives out.
bool names_wildcard(const Model& model);

// Return the match pairs of `model` by the counting rules and cuts alone
// (match_pairs with HbRules::off) when they are its recorded matches: each
// receive and probe has its recorded send as its one candidate, or none
// when it has no recorded send; else nothing, given up at the first receive
// or probe that differs. Its `recvs` and `probes` are left empty. Throw
// BudgetSpent past `deadline`. Which of these pairs the happens-before rules
// would drop is for the caller to settle (solve.cpp, Prepared).
std::optional<MatchPairs> recorded_pairs(const Model& model, const Channels& channels, const std::vector<Cut>& cuts,
                                         const Deadline& deadline = {});

// Whether a standard-mode send returns before its match (infinite
// buffering) or only once matched (zero buffering).
enum class StandardSends : uint8_t { return_at_once, wait_for_match };

// Happens-before under one buffering: the vector clocks of the header
// comment, with the MIN groups of `pairs`, and under wait_for_match an edge
// for every standard send as for MPI_Ssend (its return comes after the
// earliest posting call of its candidate receives). The match pairs
// themselves leave standard sends out: they serve both bufferings.
class Precedence {
 public:
  // Build the clocks of `model`, unless it has more than `max_entries`
  // events x ranks (then nothing is ever ordered). Throw BudgetSpent past `deadline`.
  Precedence(const Model& model, const MatchPairs& pairs, StandardSends standard, uint64_t max_entries,
             const Deadline& deadline = {});
  ~Precedence();
  Precedence(const Precedence&) = delete;
  Precedence& operator=(const Precedence&) = delete;
  // Return true when op `a` completes (its waiting event returns) before op
  // `b` is posted, in every execution.
  bool completes_before_post(uint32_t a, uint32_t b) const;

 private:
  struct Impl;
  const Model& m_model;
  std::unique_ptr<Impl> m_impl;
};

// The rules above, run once over a model, to say why pairs are excluded.
class PairRules {
 public:
  PairRules(const Model& model, const Channels& channels, const std::vector<Cut>& cuts, HbRules hb = HbRules::on);
  ~PairRules();
  PairRules(const PairRules&) = delete;
  PairRules& operator=(const PairRules&) = delete;
  // Return why receive or probe `recv` can never match send `send` (a rule
  // above), or an empty string when the pair is not excluded by these rules.
  std::string excluded_because(uint32_t recv, uint32_t send) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// Return PairRules(model, channels, cuts).excluded_because(recv, send).
std::string pair_excluded_because(const Model& model, const Channels& channels, const std::vector<Cut>& cuts,
                                  uint32_t recv, uint32_t send);

}  // namespace smtrace::smt
