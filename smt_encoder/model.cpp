// Building the model from the analyzer's replay: p2p operations, collective
// calls and RMA synchronization calls (with what each does to epochs, a
// successful MPI_Win_test as a wait: format::epoch_of) come from Replay,
// probes and the calls of completing events from the Collector's per-rank
// passes. What a call means is asked of trace_format/call_semantics.hpp.
#include "smt_encoder/model.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "analyzer/comms.hpp"
#include "analyzer/rank_data.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/call_semantics.hpp"

namespace smtrace::smt {

using format::Call;

namespace {

struct ProbeRecord {
  uint64_t seq = 0;
  Call call = Call::unspecified;
  uint32_t site = 0;
  uint32_t comm = 0;
  int32_t peer = 0;
  int32_t tag = 0;
  int32_t status_source = analyzer::k_unknown;
  int32_t status_tag = analyzer::k_unknown;
  bool pending = false;
};

struct CallRecord {
  uint64_t seq = 0;
  Call call = Call::unspecified;
  uint32_t site = 0;
};

struct RankCollected {
  std::vector<ProbeRecord> probes;
  std::vector<CallRecord> completions;  // Wait*/Test* that completed something
  uint64_t spent_ns = 0;                // the pass's time in event(), estimated (Collector::spent)
  bool passed = false;                  // a pass was made for this rank
};

// Free what `rank` collected (`v = {}` would keep the vectors' blocks: it
// assigns an empty initializer list).
void free_collected(RankCollected& rank) {
  std::vector<ProbeRecord>().swap(rank.probes);
  std::vector<CallRecord>().swap(rank.completions);
}

class CollectPass final : public analyzer::RankPass {
 public:
  explicit CollectPass(RankCollected& out) : m(out) {}
  RankCollected& collected() const { return m; }
  // Probes and the calls that complete requests: sync_of's match and
  // request effect are the row's (a non-blocking probe that found nothing
  // reaches event() and is left there).
  analyzer::EventSet wants() const override {
    return analyzer::EventSet::of([](const format::CallTraits& t) {
      return t.role == format::Role::probe || format::completes_requests(t.request);
    });
  }
  // A call that may grow its list (the list is full) is always timed (a
  // few per rank, whose copies and fresh pages are much of the time), the
  // others one in k_sample, and end() counts the rest at their mean: two
  // clock reads per call would cost as much as the call. (A period of 2^k
  // would time only the calls that grow the lists, at powers of two, and
  // count each 2^k times.) A sampled call counts as k_longest at most: one
  // that took longer was descheduled (on a loaded machine), and the time
  // of another process would be counted k_sample times.
  void event(const format::Event& e) override {
    const format::Sync sync = format::sync_of(e);
    const bool grows = sync.match == format::Match::probe ? m.probes.size() == m.probes.capacity()
                                                          : m.completions.size() == m.completions.capacity();
    if (!grows && m_calls++ % k_sample != 0) {
      collect(e, sync);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    collect(e, sync);
    const auto took = std::chrono::steady_clock::now() - start;
    if (grows) {
      m_grown += took;
    } else {
      m_sampled += std::min<std::chrono::steady_clock::duration>(took, k_longest);
      ++m_sampled_calls;
    }
  }
  void end() override {
    using std::chrono::nanoseconds;
    uint64_t ns = static_cast<uint64_t>(std::chrono::duration_cast<nanoseconds>(m_grown).count());
    if (m_sampled_calls > 0) {
      const double mean = static_cast<double>(std::chrono::duration_cast<nanoseconds>(m_sampled).count()) /
                          static_cast<double>(m_sampled_calls);
      ns += static_cast<uint64_t>(mean * static_cast<double>(m_calls));
    }
    m.spent_ns += ns;
  }

 private:
  static constexpr uint64_t k_sample = 61;
  static constexpr std::chrono::microseconds k_longest{50};
  // Keep what `e` (whose synchronization is `sync`) adds to the lists.
  void collect(const format::Event& e, const format::Sync& sync) {
    if (sync.match == format::Match::probe) {
      ProbeRecord p;
      p.seq = e.seq;
      p.call = e.call;
      p.site = e.site;
      p.comm = e.comm;
      p.peer = e.peer.value_or(analyzer::k_unknown);
      p.tag = e.tag.value_or(analyzer::k_unknown);
      if (e.status.source) p.status_source = *e.status.source;
      if (e.status.tag) p.status_tag = *e.status.tag;
      p.pending = e.pending;
      m.probes.push_back(p);
    } else if (format::completes_requests(sync.request) && (!e.completed.empty() || e.pending)) {
      m.completions.push_back({e.seq, e.call, e.site});
    }
  }

  RankCollected& m;
  uint64_t m_calls = 0;          // those that grow no list
  uint64_t m_sampled_calls = 0;  // of those, the ones timed
  std::chrono::steady_clock::duration m_sampled{0}, m_grown{0};
};

// Return true when a rank may stop for good inside `call` (header comment):
// blocking sends, receives and probes, blocking collectives, MPI_Wait and
// MPI_Waitall (not Waitany/Waitsome), and the RMA calls that wait for
// other ranks (fence, start, wait).
bool really_blocks(Call c) {
  const format::CallTraits& t = format::call_traits(c);
  if (!t.blocks) return false;
  switch (t.role) {
    case format::Role::send: case format::Role::recv: case format::Role::sendrecv: case format::Role::probe:
    case format::Role::collective:
      return true;
    case format::Role::request:
      return t.request == format::RequestEffect::complete_all;
    case format::Role::rma_sync:
      return format::epoch_step(t.epoch).waits;
    case format::Role::none: case format::Role::env: case format::Role::rma_comm: case format::Role::handle:
    case format::Role::local_access: case format::Role::cuda: case format::Role::local: case format::Role::query: case format::Role::outside: case format::Role::thread:
      return false;
  }
  return false;
}

// A send's mode as replay keeps it (for a Start, its persistent request's).
SendMode send_mode(format::SendMode mode) {
  switch (mode) {
    case format::SendMode::synchronous: return SendMode::sync;
    case format::SendMode::buffered: return SendMode::buffered;
    case format::SendMode::none: case format::SendMode::standard: case format::SendMode::ready:
      return SendMode::standard;
  }
  return SendMode::standard;
}

// Tags of the messages that stand for post/start/complete/wait.
constexpr int32_t k_tag_post = 0;      // MPI_Win_post -> MPI_Win_start
constexpr int32_t k_tag_complete = 1;  // MPI_Win_complete -> MPI_Win_wait (or a successful MPI_Win_test)


// One RMA synchronization call of a rank, as the model keeps it.
struct RmaSync {
  const analyzer::RmaEvent* event = nullptr;
  uint32_t window = 0;          // global window index
  std::vector<uint32_t> peers;  // post/start/complete/wait: world ranks of the epoch's group
};

// Return the RMA synchronization calls of rank `r` on known windows, in seq
// order, each post/start/complete/wait call with the group of its epoch
// (MPI_Win_complete: its MPI_Win_start's; MPI_Win_wait and a successful
// MPI_Win_test: its MPI_Win_post's). Lock and unlock order nothing (the
// run's lock order is one of many); an MPI_Win_test that returned false
// closes nothing (format::epoch_of), as happens_before.cpp pairs epochs.
std::vector<RmaSync> rma_syncs(const analyzer::Context& context, uint32_t r) {
  const analyzer::RankData& data = context.rank(r);
  std::vector<RmaSync> out;
  std::unordered_map<uint32_t, std::vector<uint32_t>> open;  // local window * 2 + exposure -> group
  for (const analyzer::RmaEvent& e : context.replay().rma(r)) {
    const format::EpochStep step = format::epoch_step(e.epoch);
    const bool exposure = step.kind == format::EpochKind::exposure;
    if (step.kind != format::EpochKind::fence && step.kind != format::EpochKind::access && !exposure) continue;
    RmaSync s{&e, context.comms().window(r, e.window), {}};
    if (s.window == analyzer::k_no_comm) continue;
    const uint32_t slot = e.window * 2 + (exposure ? 1 : 0);
    if (step.kind != format::EpochKind::fence && step.opens) {
      if (const format::CommDef* group = data.comm(e.group)) s.peers = group->world_ranks;
      open[slot] = s.peers;
    } else if (step.kind != format::EpochKind::fence) {
      if (auto it = open.find(slot); it != open.end()) {
        s.peers = std::move(it->second);
        open.erase(it);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The events of one rank while it is being built: seq -> index. The seqs
// come in lists (posts, completions, ...), each nearly always ascending
// already; freeze() merges them (sorted_union).
class RankBuilder {
 public:
  enum List : uint32_t { p2p_posts, p2p_done, coll_posts, coll_done, others, k_lists };
  void want(List list, uint64_t seq) { m_lists[list].push_back(seq); }
  void freeze(RankEvents& out) {
    sorted_union(m_lists, m_seqs);
    for (std::vector<uint64_t>& list : m_lists) std::vector<uint64_t>().swap(list);
    out.set_seqs(m_seqs);
  }
  // The model asks in nearly increasing order (a rank's ops by posting, each
  // completion soon after): the search gallops from the last answer.
  uint32_t index(uint64_t seq) const {
    const std::size_t n = m_seqs.size();
    const std::size_t at = std::min(m_last, n);
    std::size_t lo = 0, hi = at;  // the first element >= seq lies in [lo, hi]
    if (at < n && m_seqs[at] < seq) {
      std::size_t bound = 1;
      while (at + bound < n && m_seqs[at + bound] < seq) bound *= 2;
      lo = at + bound / 2 + 1;
      hi = std::min(at + bound, n);
    } else {
      std::size_t bound = 1;
      while (bound <= at && m_seqs[at - bound] >= seq) bound *= 2;
      lo = bound > at ? 0 : at - bound + 1;
      hi = at - bound / 2;
    }
    const auto it = std::lower_bound(m_seqs.begin() + static_cast<std::ptrdiff_t>(lo),
                                     m_seqs.begin() + static_cast<std::ptrdiff_t>(hi), seq);
    m_last = static_cast<std::size_t>(it - m_seqs.begin());
    return it != m_seqs.end() && *it == seq ? static_cast<uint32_t>(m_last) : k_none;
  }

 private:
  std::vector<std::vector<uint64_t>> m_lists = std::vector<std::vector<uint64_t>>(k_lists);
  std::vector<uint64_t> m_seqs;
  mutable std::size_t m_last = 0;  // the last answer's position
};

void name_event(Event& e, Call call, uint32_t site) {
  if (e.call == Call::unspecified) {
    e.call = call;
    e.site = site;
  }
}

}  // namespace

struct Collector::Impl {
  std::mutex mutex;                 // guards the deque's growing, not its elements (one rank per thread)
  std::deque<RankCollected> ranks;  // grows while passes hold references: a deque keeps them valid
  // Return rank `rank`'s collection, made when missing.
  RankCollected& at(uint32_t rank) {
    std::lock_guard lock(mutex);
    if (ranks.size() <= rank) ranks.resize(rank + 1);
    return ranks[rank];
  }
};

Collector::Collector() : m_impl(std::make_unique<Impl>()) {}
Collector::~Collector() = default;

std::unique_ptr<analyzer::RankPass> Collector::rank_pass(const analyzer::RankData& data) {
  RankCollected& rank = m_impl->at(data.rank);
  if (rank.passed) return nullptr;
  rank.passed = true;
  return std::make_unique<CollectPass>(rank);
}

void Collector::save(const analyzer::RankPass& pass, analyzer::WireWriter& out) {
  RankCollected& rank = dynamic_cast<const CollectPass&>(pass).collected();
  out.plain(rank.probes);
  out.plain(rank.completions);
  out.put<uint64_t>(rank.spent_ns);
  free_collected(rank);
}

std::unique_ptr<analyzer::RankPass> Collector::load(const analyzer::RankData& data, analyzer::WireReader& in) {
  RankCollected& rank = m_impl->at(data.rank);
  if (rank.passed) throw std::logic_error(fmt::format("rank {}: collected for the SMT checks twice", data.rank));
  rank.passed = true;
  in.plain(rank.probes);
  in.plain(rank.completions);
  rank.spent_ns = in.get<uint64_t>();
  return std::make_unique<CollectPass>(rank);
}

std::chrono::nanoseconds Collector::spent() const {
  std::lock_guard lock(m_impl->mutex);
  uint64_t ns = 0;
  for (const RankCollected& rank : m_impl->ranks) ns += rank.spent_ns;
  return std::chrono::nanoseconds(ns);
}

void Collector::release() {
  std::lock_guard lock(m_impl->mutex);
  for (RankCollected& rank : m_impl->ranks) free_collected(rank);
}

void sorted_union(std::vector<std::vector<uint64_t>>& lists, std::vector<uint64_t>& out) {
  out.clear();
  std::vector<uint64_t> merged;
  for (std::vector<uint64_t>& list : lists) {
    if (list.empty()) continue;
    if (!std::is_sorted(list.begin(), list.end())) std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    if (out.empty()) {
      out.assign(list.begin(), list.end());
      continue;
    }
    merged.clear();
    merged.reserve(out.size() + list.size());
    std::set_union(out.begin(), out.end(), list.begin(), list.end(), std::back_inserter(merged));
    out.swap(merged);
  }
}

CollKind coll_kind(Call call) {
  switch (format::call_traits(call).flow) {
    case format::Flow::root_to_all: return CollKind::from_root;
    case format::Flow::all_to_root: return CollKind::to_root;
    case format::Flow::scan: return CollKind::scan;
    case format::Flow::exscan: return CollKind::exscan;
    case format::Flow::none: case format::Flow::all_to_all: return CollKind::full;
    // A neighbourhood collective as a full one: MPI may make any collective
    // synchronize every member (MPI-3.1 section 5.14), so a deadlock that
    // needs it is one a correct program must not risk.
    case format::Flow::neighbor: return CollKind::full;
  }
  return CollKind::full;
}

std::string Model::comm_name(uint32_t comm) const {
  return comm < comm_names.size() ? comm_names[comm] : fmt::format("communicator {}", comm);
}

const OpBuffer* Model::buffer(uint32_t op) const {
  const auto it = std::lower_bound(buffers.begin(), buffers.end(), op,
                                   [](const OpBuffer& b, uint32_t v) { return b.op < v; });
  return it != buffers.end() && it->op == op ? &*it : nullptr;
}

std::optional<analyzer::Fit> misfit(const Model& model, uint32_t recv, uint32_t send) {
  if (recv >= model.ops.size() || model.ops[recv].kind != OpKind::recv) return std::nullopt;
  const OpBuffer* room = model.buffer(recv);
  const OpBuffer* sent = model.buffer(send);
  if (!room || !sent || sent->count < 0 || room->count < 0) return std::nullopt;
  analyzer::Fit fit = analyzer::fit_of(sent->signature, sent->bytes, room->signature, room->bytes);
  if (fit.kind == analyzer::Fit::Kind::fine) return std::nullopt;
  return fit;
}

void RankEvents::set_seqs(std::span<const uint64_t> seqs) {
  events.assign(seqs.size(), {});
  seq_high.clear();
  uint32_t high = 0;
  for (std::size_t k = 0; k < seqs.size(); ++k) {
    events[k].seq_low = static_cast<uint32_t>(seqs[k]);
    if (const auto h = static_cast<uint32_t>(seqs[k] >> 32); h != high) {
      seq_high.emplace_back(static_cast<uint32_t>(k), h);
      high = h;
    }
  }
}

Event& RankEvents::add(uint64_t seq) {
  const auto h = static_cast<uint32_t>(seq >> 32);
  if (h != (seq_high.empty() ? 0 : seq_high.back().second)) seq_high.emplace_back(static_cast<uint32_t>(events.size()), h);
  Event& e = events.emplace_back();
  e.seq_low = static_cast<uint32_t>(seq);
  return e;
}

void RankEvents::assign(const RankEvents& from, uint32_t begin, uint32_t end) {
  events.assign(from.events.begin() + begin, from.events.begin() + end);
  seq_high.clear();
  if (from.seq_high.empty() || begin == end) return;
  const uint32_t high = static_cast<uint32_t>(from.seq(begin) >> 32);
  if (high != 0) seq_high.emplace_back(0, high);
  for (const auto& [k, h] : from.seq_high) {
    if (k > begin && k < end) seq_high.emplace_back(k - begin, h);
  }
}

uint32_t RankEvents::first_from(uint64_t seq) const {
  uint32_t lo = 0, hi = static_cast<uint32_t>(events.size());
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (this->seq(mid) < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t RankEvents::many(uint32_t k) const {
  auto it = std::lower_bound(many_posted.begin(), many_posted.end(), std::pair{k, uint32_t{0}});
  return it->second;
}

void link_ops(Model& model, Pace* pace, uint64_t done) {
  // Rank by rank: count each event's posts (in `fill`) and completions (in
  // `first`), then turn the counts into offsets, then fill in op order, the
  // posts in one pass and the completions in another; `fill` is where each
  // event's next one goes. A rank's ops are found as runs of consecutive
  // ops (one run per rank where they come grouped by rank, as build_model
  // makes them), so that one rank's `fill` is alive at a time, not one
  // entry per event of the trace beside the model.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> runs(model.ranks.size());
  for (uint32_t i = 0; i < model.ops.size();) {
    const uint32_t rank = model.ops[i].rank;
    uint32_t j = i + 1;
    while (j < model.ops.size() && model.ops[j].rank == rank) ++j;
    runs[rank].emplace_back(i, j);
    i = j;
  }
  std::vector<uint32_t> fill;
  uint64_t linked = 0;
  for (uint32_t r = 0; r < model.ranks.size(); ++r) {
    RankEvents& rank = model.ranks[r];
    // Call `f` with each op of the rank, in op order.
    const auto each_op = [&](auto&& f) {
      for (const auto& [from, to] : runs[r]) {
        for (uint32_t i = from; i < to; ++i) f(i, model.ops[i]);
      }
    };
    for (Event& e : rank.events) e.first = 0;
    fill.assign(rank.events.size(), 0);
    each_op([&](uint32_t, const Op& op) {
      ++fill[op.post];
      if (op.done != k_none) ++rank.events[op.done].first;
    });
    rank.many_posted.clear();
    uint32_t at = 0;
    for (uint32_t k = 0; k < rank.events.size(); ++k) {
      Event& e = rank.events[k];
      const uint32_t completions = e.first;
      const uint32_t posted = fill[k];
      rank.set_posted(k, posted);
      e.first = at;
      e.waits = completions > 0;
      fill[k] = at;
      at += posted + completions;
    }
    rank.op_ids.assign(at, 0);
    each_op([&](uint32_t i, const Op& op) {
      if (pace != nullptr) pace->at(done + linked++);  // (the deadline too)
      rank.op_ids[fill[op.post]++] = i;
    });
    for (uint32_t k = 0; k < rank.events.size(); ++k) fill[k] = rank.events[k].first + rank.posted(k);
    each_op([&](uint32_t i, const Op& op) {
      if (op.done != k_none) rank.op_ids[fill[op.done]++] = i;
    });
  }
}

void give_back_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void check_world_size(uint32_t world_size) {
  if (world_size < k_max_world) return;
  throw ModelLimit(fmt::format("a world of {} ranks is larger than the model holds ({} ranks at most)", world_size,
                               k_max_world - 1));
}

Model build_model(const analyzer::Context& context, const Collector& collected, const Deadline& deadline) {
  uint64_t ticks = 0;
  const analyzer::Replay& replay = context.replay();
  // When the model is the last reader of the replay's point-to-point ops
  // and matches, each rank's are freed as soon as they are copied here:
  // the model's ops do not come on top of them all (docs/bench.md, the
  // twentieth round, mem37).
  analyzer::Replay* const release = context.releasable_replay();
  const analyzer::CommTable& comms = context.comms();
  Model model;
  model.world_size = context.world_size();
  check_world_size(model.world_size);
  model.ranks.resize(model.world_size);
  for (uint32_t g = 0; g < comms.size(); ++g) model.comm_names.push_back(comms.comm(g).name);

  // (rank, replay index) -> model op, for matches and collective instances.
  std::vector<std::vector<uint32_t>> p2p_op(model.world_size), coll_op(model.world_size);
  std::vector<std::vector<uint32_t>> probe_ops(model.world_size);
  // RMA synchronization: each window's fences form collective instances on a
  // communicator of their own, its post/start/complete/wait calls exchange
  // messages on another; both are named after the window in comm_names.
  std::map<std::pair<uint32_t, bool>, uint32_t> window_comm;  // (window, fence) -> comm
  auto sync_comm = [&](uint32_t window, bool fence) {
    auto [it, fresh] = window_comm.emplace(std::pair{window, fence}, 0);
    if (fresh) {
      it->second = static_cast<uint32_t>(model.comm_names.size());
      model.comm_names.push_back(
          fmt::format("window {} ({})", window + 1, fence ? "fence" : "post/start/complete/wait"));
    }
    return it->second;
  };
  std::map<uint32_t, std::vector<std::vector<uint32_t>>> fence_ops;  // window -> per rank: its fences' ops
  std::vector<uint32_t> pscw_ops;                                      // in posting order per rank
  const std::deque<RankCollected>& all = collected.m_impl->ranks;
  static const RankCollected k_nothing;
  // The ops, counted before they are made (RMA post/start/complete/wait
  // may add a few more): no growing by doubling, whose slack would stay.
  std::size_t ops = 0;
  for (uint32_t r = 0; r < model.world_size; ++r) {
    if (!context.rank(r).present) continue;
    ops += replay.p2p(r).size() + replay.collectives(r).size() + (r < all.size() ? all[r].probes.size() : 0);
  }
  model.ops.reserve(ops);
  // The ranks that posted a wildcard receive: their receives' buffers and
  // those of the sends to them are kept (OpBuffer).
  std::vector<char> wild(model.world_size, 0);
  for (uint32_t r = 0; r < model.world_size; ++r) {
    if (!context.rank(r).present) continue;
    for (const analyzer::P2POp& p : replay.p2p(r)) {
      if (!p.send && !p.cancelled && (p.peer == format::k_any_source || p.tag == format::k_any_tag)) {
        wild[r] = 1;
        break;
      }
    }
  }
  auto keep_buffer = [&](uint32_t r, uint32_t index, uint32_t op) {
    const analyzer::Payload payload = replay.payload({r, index});
    const analyzer::RankData& data = context.rank(r);
    model.buffers.push_back({op, payload.datatype, payload.count,
                             analyzer::signature(data, payload.datatype, payload.count),
                             analyzer::buffer_bytes(data, payload.datatype, payload.count)});
  };
  // By ops made, rank by rank, then by ops linked to their events (2 * ops
  // in all). Not projected with what Prepared builds on the model (Pace's
  // `rest`): on an idle machine 16 x 500k's model and its stages fit the
  // default 5 s budget, and a factor of three for them gave that model up
  // half a second in (docs/bench.md, the sixteenth round together); the
  // deadline checks in Channels, find_cuts and Analysis bound the rest.
  Pace pace(deadline, 2 * ops);
  // Bytes of the replay's ops freed since the heap last gave back its free pages.
  constexpr std::size_t k_give_back_every = std::size_t{64} << 20;
  std::size_t freed = 0;

  for (uint32_t r = 0; r < model.world_size; ++r) {
    if (!context.rank(r).present) continue;
    const RankCollected& mine = r < all.size() ? all[r] : k_nothing;
    const auto& p2p = replay.p2p(r);
    const auto& colls = replay.collectives(r);
    const std::optional<format::Event> blocked = replay.blocked(r);
    RankBuilder builder;
    for (const analyzer::P2POp& op : p2p) {
      builder.want(RankBuilder::p2p_posts, op.seq);
      if (op.done()) builder.want(RankBuilder::p2p_done, op.done_seq());
    }
    for (const analyzer::CollOp& op : colls) {
      builder.want(RankBuilder::coll_posts, op.seq);
      if (op.done_seq != analyzer::k_never) builder.want(RankBuilder::coll_done, op.done_seq);
    }
    for (const ProbeRecord& p : mine.probes) builder.want(RankBuilder::others, p.seq);
    const std::vector<RmaSync> syncs = rma_syncs(context, r);
    for (const RmaSync& s : syncs) builder.want(RankBuilder::others, s.event->seq);
    const bool stopped_inside =
        blocked && (format::call_family(blocked->call) == format::Family::p2p ||
                    format::call_family(blocked->call) == format::Family::request ||
                    format::call_family(blocked->call) == format::Family::coll ||
                    std::any_of(syncs.begin(), syncs.end(),
                                [&](const RmaSync& s) { return s.event->seq == blocked->seq; }));
    if (stopped_inside) builder.want(RankBuilder::others, blocked->seq);
    RankEvents& rank = model.ranks[r];
    builder.freeze(rank);

    p2p_op[r].assign(p2p.size(), k_none);
    for (uint32_t i = 0; i < p2p.size(); ++i) {
      pace.at(model.ops.size());  // (the deadline too)
      const analyzer::P2POp& p = p2p[i];
      Event& post = rank.events[builder.index(p.seq)];
      name_event(post, p.call, p.site);
      if (p.done()) name_event(rank.events[builder.index(p.done_seq())], p.done_call, p.done_site);
      if (p.cancelled || p.peer == format::k_proc_null) continue;
      const uint32_t g = comms.global(r, p.comm);
      if (g == analyzer::k_no_comm) continue;
      Op op;
      op.kind = p.send ? OpKind::send : OpKind::recv;
      op.mode = p.send ? send_mode(p.mode) : SendMode::standard;
      op.rank = r;
      op.post = builder.index(p.seq);
      op.done = p.done() ? builder.index(p.done_seq()) : k_none;
      op.comm = g;
      if (p.send || p.peer != format::k_any_source) {
        auto world = comms.world_rank(r, p.comm, p.peer);
        if (!world) continue;
        op.peer = static_cast<int32_t>(*world);
      } else {
        op.peer = k_any;
      }
      op.tag = p.send || p.tag != format::k_any_tag ? p.tag : k_any;
      p2p_op[r][i] = static_cast<uint32_t>(model.ops.size());
      if (p.send ? static_cast<uint32_t>(op.peer) < wild.size() && wild[static_cast<uint32_t>(op.peer)] != 0 : op.peer == k_any || op.tag == k_any) {
        keep_buffer(r, i, p2p_op[r][i]);
      }
      model.ops.push_back(op);
    }
    coll_op[r].assign(colls.size(), k_none);
    for (uint32_t i = 0; i < colls.size(); ++i) {
      check_deadline(deadline, ticks);
      const analyzer::CollOp& c = colls[i];
      Event& enter = rank.events[builder.index(c.seq)];
      name_event(enter, c.call, c.site);
      Op op;
      op.kind = OpKind::coll;
      op.rank = r;
      op.post = builder.index(c.seq);
      op.done = c.done_seq != analyzer::k_never ? builder.index(c.done_seq) : k_none;
      op.comm = comms.global(r, c.comm);
      coll_op[r][i] = static_cast<uint32_t>(model.ops.size());
      model.ops.push_back(op);
    }
    for (const ProbeRecord& p : mine.probes) {
      Event& at = rank.events[builder.index(p.seq)];
      name_event(at, p.call, p.site);
      const uint32_t g = comms.global(r, p.comm);
      if (g == analyzer::k_no_comm || p.peer == format::k_proc_null) continue;
      Op op;
      op.kind = OpKind::probe;
      op.rank = r;
      op.post = builder.index(p.seq);
      op.done = p.pending ? k_none : op.post;
      op.comm = g;
      if (p.peer == format::k_any_source) {
        op.peer = k_any;
      } else {
        auto world = comms.world_rank(r, p.comm, p.peer);
        if (!world) continue;
        op.peer = static_cast<int32_t>(*world);
      }
      op.tag = p.tag == format::k_any_tag ? k_any : p.tag;
      // The status, kept in `recorded` and `instance` until the links are made below.
      auto source = p.status_source >= 0 ? comms.world_rank(r, p.comm, p.status_source) : std::nullopt;
      op.recorded = source ? *source : k_none;
      op.instance = static_cast<uint32_t>(p.status_tag);
      probe_ops[r].push_back(static_cast<uint32_t>(model.ops.size()));
      model.ops.push_back(op);
    }
    for (const CallRecord& c : mine.completions) {
      const uint32_t k = builder.index(c.seq);
      if (k != k_none) name_event(rank.events[k], c.call, c.site);
    }
    for (const RmaSync& s : syncs) {
      const analyzer::RmaEvent& e = *s.event;
      Op op;
      op.rank = r;
      op.post = builder.index(e.seq);
      op.done = e.pending ? k_none : op.post;
      name_event(rank.events[op.post], e.call, e.site);
      const format::EpochStep step = format::epoch_step(e.epoch);
      if (step.kind == format::EpochKind::fence) {
        op.kind = OpKind::coll;
        op.comm = sync_comm(s.window, true);
        auto& per_rank = fence_ops.try_emplace(s.window, model.world_size).first->second;
        per_rank[r].push_back(static_cast<uint32_t>(model.ops.size()));
        model.ops.push_back(op);
        continue;
      }
      // Post and complete never block (buffered); start and wait take one
      // message from each peer, with its source named: there is no choice.
      const bool send = (step.kind == format::EpochKind::exposure) == step.opens;  // post, complete
      op.kind = send ? OpKind::send : OpKind::recv;
      op.mode = send ? SendMode::buffered : SendMode::standard;
      op.comm = sync_comm(s.window, false);
      op.tag = step.opens ? k_tag_post : k_tag_complete;
      for (uint32_t peer : s.peers) {
        if (peer >= model.world_size) continue;
        op.peer = static_cast<int32_t>(peer);
        pscw_ops.push_back(static_cast<uint32_t>(model.ops.size()));
        model.ops.push_back(op);
      }
    }
    if (stopped_inside) {
      const uint32_t k = builder.index(blocked->seq);
      name_event(rank.events[k], blocked->call, blocked->site);
    }
    rank.limit = 2 * static_cast<uint32_t>(rank.events.size());
    if (stopped_inside) rank.limit = 2 * builder.index(blocked->seq) + 1;
    // The recorded matches of the rank's receives, each send by its place
    // in the replay (rank in `probe`, index in `recorded`) until every
    // rank's ops are made, so that the rank's matches are freed here: not
    // all of them are resident beside the model (link_ops' peak).
    for (uint32_t i = 0; i < p2p.size(); ++i) {
      const uint32_t op = p2p_op[r][i];
      if (op == k_none || model.ops[op].kind != OpKind::recv) continue;
      if (auto send = replay.matched({r, i})) {
        model.ops[op].probe = send->rank;
        model.ops[op].recorded = send->index;
      }
    }
    if (release) {
      freed += p2p.capacity() * sizeof(analyzer::P2POp);
      release->release_p2p(r);  // (`p2p` is read no more)
      release->release_matches(r);
      if (freed >= k_give_back_every) {
        give_back_free_memory();
        freed = 0;
      }
    }
    pace.now(model.ops.size());
  }

  // Recorded matches: the sends' model ops. Then p2p_op is read only for
  // the ranks with probes.
  for (Op& op : model.ops) {
    if (op.kind != OpKind::recv || op.probe == k_none) continue;
    const uint32_t sender = op.probe, index = op.recorded;
    op.probe = k_none;
    op.recorded = sender < p2p_op.size() && index < p2p_op[sender].size() ? p2p_op[sender][index] : k_none;
  }
  for (uint32_t r = 0; r < model.world_size; ++r) {
    if (probe_ops[r].empty()) std::vector<uint32_t>().swap(p2p_op[r]);
  }

  // Posts and completions per event.
  link_ops(model, &pace, ops);
  for (RankEvents& rank : model.ranks) {
    for (Event& e : rank.events) e.may_block = e.waits && really_blocks(e.call);
  }

  // Post/start/complete/wait: the k-th receive of a channel that returned
  // took the channel's k-th message (the pairing of happens_before.cpp).
  {
    using Channel = std::tuple<uint32_t, uint32_t, uint32_t, int32_t>;  // comm, source, destination, tag
    std::map<Channel, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> channels;
    for (uint32_t i : pscw_ops) {
      const Op& o = model.ops[i];
      const auto peer = static_cast<uint32_t>(o.peer);
      if (o.kind == OpKind::send) {
        channels[{o.comm, o.rank, peer, o.tag}].first.push_back(i);
      } else {
        channels[{o.comm, peer, o.rank, o.tag}].second.push_back(i);
      }
    }
    for (const auto& [channel, lists] : channels) {
      const auto& [sends, recvs] = lists;
      for (std::size_t k = 0; k < sends.size() && k < recvs.size(); ++k) {
        if (model.ops[recvs[k]].done != k_none) model.ops[recvs[k]].recorded = sends[k];
      }
    }
  }

  // Probes: the receive after a wildcard probe that takes what it saw.
  // Each probe looks at the rank's receives from the first one posted at or
  // after it (a binary search when they are in posting order, as the
  // analyzer lists them; else from the first), not from the rank's first.
  std::vector<uint32_t> recvs;
  for (uint32_t r = 0; r < model.world_size; ++r) {
    if (probe_ops[r].empty()) continue;
    recvs.clear();
    for (uint32_t q : p2p_op[r]) {
      if (q != k_none && model.ops[q].kind == OpKind::recv) recvs.push_back(q);
    }
    const bool in_order = std::is_sorted(recvs.begin(), recvs.end(), [&](uint32_t a, uint32_t b) {
      return model.ops[a].post < model.ops[b].post;
    });
    // The first receive (in the list's order) posted at or after `post` (`after`: after it) may be at no earlier place.
    auto from = [&](uint32_t post, bool after) -> std::size_t {
      if (!in_order) return 0;
      const auto at = after ? std::upper_bound(recvs.begin(), recvs.end(), post,
                                               [&](uint32_t v, uint32_t q) { return v < model.ops[q].post; })
                            : std::lower_bound(recvs.begin(), recvs.end(), post,
                                               [&](uint32_t q, uint32_t v) { return model.ops[q].post < v; });
      return static_cast<std::size_t>(at - recvs.begin());
    };
    for (uint32_t p : probe_ops[r]) {
      Op& probe = model.ops[p];
      const uint32_t source = probe.recorded;
      const int32_t tag = static_cast<int32_t>(probe.instance);
      probe.recorded = k_none;
      probe.instance = k_none;
      if (source == k_none) continue;
      if (format::call_traits(model.event(r, probe.post).call).resource == format::Resource::message_new) {
        // A matched probe: the receive of its message was posted with it
        // (replay.hpp) and takes exactly what it saw.
        for (std::size_t k = from(probe.post, false); k < recvs.size(); ++k) {
          const uint32_t q = recvs[k];
          if (model.ops[q].post != probe.post) {
            if (in_order && model.ops[q].post > probe.post) break;  // none later
            continue;
          }
          model.ops[q].probe = p;
          probe.recorded = model.ops[q].recorded;
          break;
        }
        continue;
      }
      for (std::size_t k = from(probe.post, true); k < recvs.size(); ++k) {
        Op& recv = model.ops[recvs[k]];
        if (recv.comm != probe.comm || recv.post <= probe.post) continue;
        if ((recv.peer != k_any && recv.peer != static_cast<int32_t>(source)) ||
            (recv.tag != k_any && recv.tag != tag)) {
          continue;
        }
        if (recv.recorded != k_none && model.ops[recv.recorded].rank == source &&
            model.ops[recv.recorded].tag == tag) {
          probe.recorded = recv.recorded;
          const bool narrower = (probe.peer == k_any && recv.peer != k_any) ||
                                (probe.tag == k_any && recv.tag != k_any);
          if (narrower && recv.probe == k_none) {
            recv.probe = p;
            recv.peer = probe.peer;
            recv.tag = probe.tag;
          }
        }
        break;
      }
    }
  }

  // Collective instances.
  for (uint32_t g = 0; g < comms.size(); ++g) {
    const analyzer::GlobalComm& comm = comms.comm(g);
    for (const analyzer::CollInstance& inst : replay.instances(g)) {
      Instance out;
      out.comm = g;
      out.position = inst.position;
      out.members.assign(inst.member_op.size(), k_none);
      bool first = true;
      for (uint32_t m = 0; m < inst.member_op.size(); ++m) {
        if (inst.member_op[m] == analyzer::k_none || m >= comm.world_ranks.size()) continue;
        const uint32_t world = comm.world_ranks[m];
        if (world >= coll_op.size() || inst.member_op[m] >= coll_op[world].size()) continue;
        const uint32_t op = coll_op[world][inst.member_op[m]];
        out.members[m] = op;
        if (first) {
          const analyzer::CollOp& c = replay.collectives(world)[inst.member_op[m]];
          out.call = c.call;
          out.kind = coll_kind(c.call);
          if (out.kind == CollKind::from_root || out.kind == CollKind::to_root) {
            // On an intercommunicator roots are MPI_ROOT, MPI_PROC_NULL or a
            // rank of the other group: modelled as a full collective.
            if (!comm.inter && c.root >= 0 && static_cast<std::size_t>(c.root) < inst.member_op.size()) {
              out.root = static_cast<uint32_t>(c.root);
            } else {
              out.kind = CollKind::full;
            }
          }
          first = false;
        }
      }
      const uint32_t index = static_cast<uint32_t>(model.instances.size());
      for (uint32_t m = 0; m < out.members.size(); ++m) {
        if (out.members[m] == k_none) continue;
        model.ops[out.members[m]].instance = index;
        model.ops[out.members[m]].member = m;
      }
      model.instances.push_back(std::move(out));
    }
  }
  // Fences: the k-th MPI_Win_fence of each member of a window, as a barrier
  // over the window's members (the ranks of the communicator it was created on).
  for (const auto& [window, per_rank] : fence_ops) {
    const analyzer::GlobalWindow& info = comms.window_info(window);
    std::vector<uint32_t> members;
    if (info.comm != analyzer::k_no_comm) members = comms.comm(info.comm).world_ranks;
    std::size_t count = 0;
    for (uint32_t r = 0; r < per_rank.size(); ++r) {
      if (per_rank[r].empty()) continue;
      count = std::max(count, per_rank[r].size());
      if (std::find(members.begin(), members.end(), r) == members.end()) members.push_back(r);
    }
    for (uint32_t k = 0; k < count; ++k) {
      Instance out;
      out.call = Call::Win_fence;
      out.comm = sync_comm(window, true);
      out.position = k;
      out.members.assign(members.size(), k_none);
      const uint32_t index = static_cast<uint32_t>(model.instances.size());
      for (uint32_t m = 0; m < members.size(); ++m) {
        const uint32_t world = members[m];
        if (world >= per_rank.size() || k >= per_rank[world].size()) continue;
        const uint32_t op = per_rank[world][k];
        out.members[m] = op;
        model.ops[op].instance = index;
        model.ops[op].member = m;
      }
      model.instances.push_back(std::move(out));
    }
  }
  // Collective calls without an instance (unknown communicator) wait for nothing.
  return model;
}

std::string event_text(const Model& model, uint32_t rank, uint32_t index) {
  const Event& e = model.event(rank, index);
  return fmt::format("{}:{} {}", rank, model.ranks[rank].seq(index), format::call_name(e.call));
}

std::string op_text(const Model& model, uint32_t op) {
  const Op& o = model.ops[op];
  const std::string where = event_text(model, o.rank, o.post);
  const std::string comm = model.comm_name(o.comm);
  if (format::call_family(model.event(o.rank, o.post).call) == format::Family::rma) {
    // "window 2 (fence)" -> "window 2": the tag and communicator are the model's own.
    const std::string window = comm.substr(0, comm.find(" ("));
    switch (o.kind) {
      case OpKind::send:
        return fmt::format("{} to rank {} ({})", where, o.peer, window);
      case OpKind::recv:
        return fmt::format("{} from rank {} ({})", where, o.peer, window);
      default:
        return fmt::format("{} ({})", where, window);
    }
  }
  switch (o.kind) {
    case OpKind::send:
      return fmt::format("{} to rank {}, tag {}, {}", where, o.peer, o.tag, comm);
    case OpKind::recv:
    case OpKind::probe:
      return fmt::format("{} from {}, {}, {}", where,
                         o.peer == k_any ? std::string("any rank") : fmt::format("rank {}", o.peer),
                         o.tag == k_any ? std::string("any tag") : fmt::format("tag {}", o.tag), comm);
    case OpKind::coll:
      break;
  }
  return where;
}

}  // namespace smtrace::smt
