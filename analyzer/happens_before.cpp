#include "analyzer/happens_before.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <ostream>
#include <unordered_map>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>

#include "analyzer/check.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/threads.hpp"

namespace smtrace::analyzer {

using format::Flow;

namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                 boost::no_property, boost::no_property,
                                                 uint32_t, uint32_t>;

// Vector clocks cost nodes x ranks x 4 bytes; above this many entries,
// ordered() searches the graph instead.
constexpr uint64_t k_max_clock_entries = uint64_t{1} << 26;

// RMA calls that order ranks: fences, and the calls of post/start/complete/
// wait (general active target synchronization; a successful MPI_Win_test
// counts as a wait, format::epoch_of). Lock and unlock order nothing: the
// run's lock order is one of many.
bool orders_ranks(const RmaEvent& e) {
  const format::EpochKind kind = format::epoch_step(e.epoch).kind;
  return kind == format::EpochKind::fence || kind == format::EpochKind::access ||
         kind == format::EpochKind::exposure;
}

// Window creation and MPI_Win_free, which order like a barrier over the
// window's members (every entry before every return). Creation: no member
// can address a window before every member described its memory (base,
// size, disp_unit reach every member during the call), so the stores a
// target made before creating the window precede every remote access to
// it. Free: "the memory of a window may be freed after MPI_Win_free
// returns" (MPI-3.1 section 11.2.5, with its advice that free has barrier
// semantics), so every access to it precedes every member's return.
// docs/checks.md (rma-race) gives the decision.
enum class WindowLife : uint8_t { none, create, free };
WindowLife window_life(const RmaEvent& e) {
  switch (format::call_traits(e.call).resource) {
    case format::Resource::win_new: case format::Resource::win_dynamic: return WindowLife::create;
    case format::Resource::win_free: return WindowLife::free;
    case format::Resource::none: case format::Resource::comm_new: case format::Resource::comm_free:
    case format::Resource::group_new: case format::Resource::group_free: case format::Resource::type_new:
    case format::Resource::type_commit: case format::Resource::type_free: case format::Resource::op_new:
    case format::Resource::op_free: case format::Resource::win_attach: case format::Resource::win_detach:
    case format::Resource::message_new: case format::Resource::message_free: case format::Resource::buffer_attach:
    case format::Resource::buffer_detach: case format::Resource::info_new: case format::Resource::info_free:
      return WindowLife::none;
  }
  return WindowLife::none;
}

}  // namespace

struct HappensBefore::Impl {
  uint32_t world_size = 0;
  // Lanes: one program order each (threads.hpp). A rank is one lane unless
  // its thread synchronization was recorded; then one per thread, task and
  // section. Global lane ids: lane_base[rank] + the rank's own lane.
  std::vector<uint32_t> lane_base;                 // per rank; [world_size] = lane count
  std::vector<uint32_t> lane_rank;                 // per lane
  std::vector<const RankThreads*> threads;         // per rank, modelled ones only (else nullptr)
  uint32_t lane_count = 0;
  std::vector<uint32_t> node_base;                 // first node of each lane; [lane_count] = first hub
  // Per lane: keys of its nodes, ascending. An event has two points: its
  // start (key 2 seq) and its end (key 2 seq + 1); a blocking collective
  // needs both, or its entry -> hub -> exit edges would close a cycle.
  std::vector<std::vector<uint64_t>> node_seq;
  uint32_t node_count = 0;
  uint64_t cross = 0;
  Graph graph;
  std::vector<uint32_t> topo;                       // empty when cyclic
  bool cyclic = false;

  mutable std::once_flag clocks_once;
  mutable std::vector<uint32_t> clocks;             // node x lane, when small enough

  static uint64_t start(uint64_t seq) { return 2 * seq; }
  static uint64_t end(uint64_t seq) { return 2 * seq + 1; }
  uint32_t lane_of(uint32_t rank, uint64_t seq) const {
    const RankThreads* t = threads[rank];
    return lane_base[rank] + (t ? t->lane(seq) : 0);
  }
  uint32_t lane_of(EventRef x) const { return lane_of(x.rank, x.seq); }
  // Return the node of the point `key` of lane `lane` (a listed point).
  uint32_t node_on(uint32_t lane, uint64_t key) const {
    const auto& seqs = node_seq[lane];
    auto it = std::lower_bound(seqs.begin(), seqs.end(), key);
    return node_base[lane] + static_cast<uint32_t>(it - seqs.begin());
  }
  uint32_t node_of(uint32_t rank, uint64_t key) const { return node_on(lane_of(rank, key / 2), key); }
  uint32_t lane_of_node(uint32_t node) const {
    auto it = std::upper_bound(node_base.begin(), node_base.begin() + lane_count, node);
    return static_cast<uint32_t>(it - node_base.begin()) - 1;
  }
  uint32_t rank_of_node(uint32_t node) const { return lane_rank[lane_of_node(node)]; }
  bool is_event(uint32_t node) const { return node < node_base[lane_count]; }
  EventRef event_of(uint32_t node) const {
    const uint32_t l = lane_of_node(node);
    return {lane_rank[l], node_seq[l][node - node_base[l]] / 2};
  }
  // The entry node of `x`: the last node of its lane at or before its end.
  std::optional<uint32_t> entry_node(EventRef x) const {
    const uint32_t l = lane_of(x);
    const auto& sx = node_seq[l];
    auto ix = std::upper_bound(sx.begin(), sx.end(), end(x.seq));
    if (ix == sx.begin()) return std::nullopt;
    return node_base[l] + static_cast<uint32_t>(ix - sx.begin()) - 1;
  }
  // The position in its lane of the exit node of `x`: the first node at or after its start.
  std::optional<uint32_t> exit_position(EventRef x) const {
    const auto& sx = node_seq[lane_of(x)];
    auto ix = std::lower_bound(sx.begin(), sx.end(), start(x.seq));
    if (ix == sx.end()) return std::nullopt;
    return static_cast<uint32_t>(ix - sx.begin());
  }

  void compute_clocks() const {
    const uint64_t entries = uint64_t{node_count} * lane_count;
    if (cyclic || entries > k_max_clock_entries) return;
    clocks.assign(entries, 0);
    for (uint32_t v : topo) {
      uint32_t* own = &clocks[uint64_t{v} * lane_count];
      if (is_event(v)) {
        const uint32_t l = lane_of_node(v);
        own[l] = std::max(own[l], v - node_base[l] + 1);
      }
      for (auto e : boost::make_iterator_range(boost::out_edges(v, graph))) {
        uint32_t* next = &clocks[uint64_t{boost::target(e, graph)} * lane_count];
        for (uint32_t l = 0; l < lane_count; ++l) next[l] = std::max(next[l], own[l]);
      }
    }
  }

  // Return true when node `from` reaches node `to` (breadth-first search).
  bool reaches(uint32_t from, uint32_t to) const {
    std::vector<bool> seen(node_count, false);
    std::deque<uint32_t> todo{from};
    seen[from] = true;
    while (!todo.empty()) {
      const uint32_t v = todo.front();
      todo.pop_front();
      if (v == to) return true;
      for (auto e : boost::make_iterator_range(boost::out_edges(v, graph))) {
        const uint32_t w = boost::target(e, graph);
        if (!seen[w]) {
          seen[w] = true;
          todo.push_back(w);
        }
      }
    }
    return false;
  }
};

HappensBefore::HappensBefore() : m_impl(std::make_unique<Impl>()) {}
HappensBefore::~HappensBefore() = default;

void HappensBefore::build(const Context& context, Matches matches) {
  Impl& m = *m_impl;
  const Replay& replay = context.replay();
  const CommTable& comms = context.comms();
  m.world_size = context.world_size();
  m.lane_base.assign(m.world_size + 1, 0);
  m.threads.assign(m.world_size, nullptr);
  m.lane_rank.clear();
  for (uint32_t r = 0; r < m.world_size; ++r) {
    m.lane_base[r] = static_cast<uint32_t>(m.lane_rank.size());
    uint32_t lanes = 1;
    if (context.rank(r).present && replay.threads(r).modelled) {
      m.threads[r] = &replay.threads(r);
      lanes = static_cast<uint32_t>(m.threads[r]->lanes.size());
    }
    m.lane_rank.insert(m.lane_rank.end(), lanes, r);
  }
  m.lane_count = static_cast<uint32_t>(m.lane_rank.size());
  m.lane_base[m.world_size] = m.lane_count;
  m.node_seq.assign(m.lane_count, {});

  // Nodes: every event that communicates, on its lane.
  for (uint32_t r = 0; r < m.world_size; ++r) {
    if (!context.rank(r).present) continue;
    auto point = [&](uint64_t key) { m.node_seq[m.lane_of(r, key / 2)].push_back(key); };
    for (const P2POp& op : replay.p2p(r)) {
      if (op.send) {
        point(Impl::start(op.seq));
      } else if (op.done()) {
        point(Impl::end(op.done_seq()));
      }
    }
    for (const CollOp& op : replay.collectives(r)) {
      point(Impl::start(op.seq));
      if (op.done_seq != k_never) point(Impl::end(op.done_seq));
    }
    for (const RmaEvent& e : replay.rma(r)) {
      if (!orders_ranks(e) && window_life(e) == WindowLife::none) continue;
      point(Impl::start(e.seq));
      if (!e.pending) point(Impl::end(e.seq));
    }
    if (m.threads[r])
      thread_points(*m.threads[r], [&](uint32_t lane, uint64_t key) { m.node_seq[m.lane_base[r] + lane].push_back(key); });
  }
  for (auto& seqs : m.node_seq) {
    std::sort(seqs.begin(), seqs.end());
    seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  }
  m.node_base.assign(m.lane_count + 1, 0);
  uint32_t next = 0;
  for (uint32_t l = 0; l < m.lane_count; ++l) {
    m.node_base[l] = next;
    next += static_cast<uint32_t>(m.node_seq[l].size());
  }
  m.node_base[m.lane_count] = next;

  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (uint32_t l = 0; l < m.lane_count; ++l) {
    for (uint32_t i = 1; i < m.node_seq[l].size(); ++i) {
      edges.emplace_back(m.node_base[l] + i - 1, m.node_base[l] + i);
    }
  }
  const std::size_t program_edges = edges.size();

  // A send's posting happens before its receive's completion.
  for (uint32_t r = 0; r < m.world_size; ++r) {
    const auto& ops = replay.p2p(r);
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].send) continue;
      auto other = replay.matched({r, i});
      if (!other) continue;
      const P2POp& recv = replay.p2p(other->rank)[other->index];
      if (!recv.done()) continue;
      if (matches == Matches::deterministic && recv.peer == format::k_any_source) continue;
      edges.emplace_back(m.node_of(r, Impl::start(ops[i].seq)),
                         m.node_of(other->rank, Impl::end(recv.done_seq())));
    }
  }

  // Collectives through one hub node per instance (2n edges, not n^2).
  uint32_t hubs = next;
  auto new_hub = [&] { return hubs++; };
  for (uint32_t g = 0; g < comms.size(); ++g) {
    const GlobalComm& comm = comms.comm(g);
    for (const CollInstance& inst : replay.instances(g)) {
      // The kind of flow is the call of the first member present.
      Flow flow = Flow::none;
      int32_t root = k_unknown;
      for (std::size_t k = 0; k < inst.member_op.size(); ++k) {
        if (inst.member_op[k] == k_none) continue;
        const CollOp& op = replay.collectives(comm.world_ranks[k])[inst.member_op[k]];
        flow = format::call_traits(op.call).flow;
        root = op.root;
        break;
      }
      // Which members' entries feed the instance and which exits it
      // precedes (format::Flow); scans chain one hub per member; a
      // neighbourhood collective orders each member after its sources.
      bool all_enter = false, all_exit = false, chain = false, neighbor = false;
      switch (flow) {
        case Flow::none: continue;
        case Flow::all_to_all: all_enter = all_exit = true; break;
        case Flow::all_to_root: all_enter = true; break;
        case Flow::root_to_all: all_exit = true; break;
        case Flow::scan: case Flow::exscan: chain = true; break;
        case Flow::neighbor: neighbor = true; break;
      }
      auto entry = [&](std::size_t k) -> std::optional<uint32_t> {
        if (inst.member_op[k] == k_none) return std::nullopt;
        const uint32_t w = comm.world_ranks[k];
        return m.node_of(w, Impl::start(replay.collectives(w)[inst.member_op[k]].seq));
      };
      auto exit = [&](std::size_t k) -> std::optional<uint32_t> {
        if (inst.member_op[k] == k_none) return std::nullopt;
        const uint32_t w = comm.world_ranks[k];
        const CollOp& op = replay.collectives(w)[inst.member_op[k]];
        if (op.done_seq == k_never) return std::nullopt;
        return m.node_of(w, Impl::end(op.done_seq));
      };
      const std::size_t n = inst.member_op.size();
      if (neighbor) {
        // Member k receives from its sources (its own CommDef's list, ranks
        // in the communicator; MPI-3.1 section 7.6): their entries precede
        // its exit. Unknown sources order nothing.
        for (std::size_t k = 0; k < n; ++k) {
          const auto x = exit(k);
          if (!x || comm.inter) continue;
          const uint32_t w = comm.world_ranks[k];
          const format::CommDef* def = context.rank(w).comm(replay.collectives(w)[inst.member_op[k]].comm);
          if (!def) continue;
          for (int32_t source : def->sources) {
            if (source < 0 || static_cast<std::size_t>(source) >= n) continue;
            if (auto e = entry(static_cast<std::size_t>(source))) edges.emplace_back(*e, *x);
          }
        }
        continue;
      }
      if (comm.inter) {
        // Intercommunicator (MPI-3.1 section 5.2.2): data flows between the
        // groups. All-to-all: each group's exits follow the other group's
        // entries. Rooted: the member that passed MPI_ROOT sends to (or
        // receives from) the other group; MPI_PROC_NULL members take no part.
        std::optional<std::size_t> root_member;
        for (std::size_t k = 0; k < n; ++k) {
          if (inst.member_op[k] == k_none) continue;
          if (replay.collectives(comm.world_ranks[k])[inst.member_op[k]].root == format::k_root) root_member = k;
        }
        auto group_edges = [&](auto&& feeds, auto&& fed) {
          const uint32_t hub = new_hub();
          for (std::size_t k = 0; k < n; ++k) {
            if (feeds(k)) {
              if (auto e = entry(k)) edges.emplace_back(*e, hub);
            }
            if (fed(k)) {
              if (auto x = exit(k)) edges.emplace_back(hub, *x);
            }
          }
        };
        if (all_enter && all_exit) {
          for (const bool first : {true, false}) {
            auto in_first = [&](std::size_t k) { return (k < comm.first_group) == first; };
            group_edges(in_first, [&](std::size_t k) { return !in_first(k); });
          }
        } else if (root_member) {
          auto other = [&](std::size_t k) { return !comm.same_group(k, *root_member); };
          auto is_root = [&](std::size_t k) { return k == *root_member; };
          if (all_exit) group_edges(is_root, other);   // root to all
          else group_edges(other, is_root);            // all to root
        }
        continue;
      }
      if (chain) {
        uint32_t prev = k_none;
        for (std::size_t k = 0; k < n; ++k) {
          const uint32_t hub = new_hub();
          if (prev != k_none) edges.emplace_back(prev, hub);
          if (flow == Flow::exscan && prev != k_none) {
            if (auto x = exit(k)) edges.emplace_back(prev, *x);
          }
          if (auto e = entry(k)) edges.emplace_back(*e, hub);
          if (flow == Flow::scan) {
            if (auto x = exit(k)) edges.emplace_back(hub, *x);
          }
          prev = hub;
        }
        continue;
      }
      const uint32_t hub = new_hub();
      for (std::size_t k = 0; k < n; ++k) {
        const bool is_root = root >= 0 && static_cast<std::size_t>(root) == k;
        if (all_enter || is_root) {
          if (auto e = entry(k)) edges.emplace_back(*e, hub);
        }
        if (all_exit || is_root) {
          if (auto x = exit(k)) edges.emplace_back(hub, *x);
        }
      }
    }
  }

  // Fences: the k-th fence of each member of a window, as a barrier; the
  // window's creation and its MPI_Win_free too (window_life).
  {
    std::unordered_map<uint64_t, uint32_t> fence_hub;  // (window, k) -> hub
    constexpr uint32_t k_create_slot = UINT32_MAX, k_free_slot = UINT32_MAX - 1;
    for (uint32_t r = 0; r < m.world_size; ++r) {
      std::unordered_map<uint32_t, uint32_t> count;
      for (const RmaEvent& e : replay.rma(r)) {
        const WindowLife life = window_life(e);
        if (e.epoch != format::EpochEffect::fence && life == WindowLife::none) continue;
        const uint32_t w = comms.window(r, e.window);
        if (w == k_no_comm) continue;
        const uint32_t slot = life == WindowLife::create ? k_create_slot
                              : life == WindowLife::free ? k_free_slot
                                                         : count[w]++;
        const uint64_t key = (uint64_t{w} << 32) | slot;
        auto [it, fresh] = fence_hub.emplace(key, 0);
        if (fresh) it->second = new_hub();
        edges.emplace_back(m.node_of(r, Impl::start(e.seq)), it->second);
        if (!e.pending) edges.emplace_back(it->second, m.node_of(r, Impl::end(e.seq)));
      }
    }
  }

  // Post/start/complete/wait: the k-th post of target t whose group holds
  // origin o matches the k-th start of o whose group holds t (post -> start
  // returns); o's complete of that epoch precedes t's wait returning. Lock
  // and unlock order nothing: the run's lock order is one of many.
  {
    struct Epoch {
      uint64_t open = 0, close = 0;  // post/start seq, wait/complete seq
      bool closed = false, open_done = false;
    };
    // (window, target, origin) -> target's exposure epochs, origin's access epochs
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<std::vector<Epoch>, std::vector<Epoch>>> pairs;
    for (uint32_t r = 0; r < m.world_size; ++r) {
      const RankData& data = context.rank(r);
      std::unordered_map<uint32_t, std::vector<uint32_t>> open_group;  // local window -> group members
      for (const RmaEvent& e : replay.rma(r)) {
        const format::EpochStep step = format::epoch_step(e.epoch);
        const bool exposure = step.kind == format::EpochKind::exposure;
        if (!exposure && step.kind != format::EpochKind::access) continue;
        const bool opens = step.opens;
        const uint32_t w = comms.window(r, e.window);
        if (w == k_no_comm) continue;
        // One key per kind: a rank may have an exposure and an access epoch at once.
        const uint32_t slot = e.window * 2 + (exposure ? 1 : 0);
        if (opens) {
          const format::CommDef* group = data.comm(e.group);
          open_group[slot] = group ? group->world_ranks : std::vector<uint32_t>{};
          for (uint32_t peer : open_group[slot]) {
            auto key = exposure ? std::make_tuple(w, r, peer) : std::make_tuple(w, peer, r);
            auto& list = exposure ? pairs[key].first : pairs[key].second;
            list.push_back({e.seq, 0, false, !e.pending});
          }
        } else {
          for (uint32_t peer : open_group[slot]) {
            auto key = exposure ? std::make_tuple(w, r, peer) : std::make_tuple(w, peer, r);
            auto& list = exposure ? pairs[key].first : pairs[key].second;
            if (!list.empty() && !list.back().closed) {
              list.back().close = e.seq;
              list.back().closed = !e.pending;
            }
          }
          open_group.erase(slot);
        }
      }
    }
    for (const auto& [key, lists] : pairs) {
      const uint32_t target = std::get<1>(key), origin = std::get<2>(key);
      const auto& [exposures, accesses] = lists;
      for (std::size_t k = 0; k < exposures.size() && k < accesses.size(); ++k) {
        const Epoch& post = exposures[k];
        const Epoch& start = accesses[k];
        if (start.open_done) {
          edges.emplace_back(m.node_of(target, Impl::start(post.open)),
                             m.node_of(origin, Impl::end(start.open)));
        }
        if (start.close && post.closed) {
          edges.emplace_back(m.node_of(origin, Impl::start(start.close)),
                             m.node_of(target, Impl::end(post.close)));
        }
      }
    }
  }

  // Thread synchronization within ranks whose threads are lanes (threads.hpp).
  for (uint32_t r = 0; r < m.world_size; ++r) {
    if (!m.threads[r]) continue;
    struct Adapter final : ThreadGraph {
      Impl& m;
      uint32_t base;
      std::vector<std::pair<uint32_t, uint32_t>>& edges;
      uint32_t& hubs;
      Adapter(Impl& impl, uint32_t b, std::vector<std::pair<uint32_t, uint32_t>>& e, uint32_t& h)
          : m(impl), base(b), edges(e), hubs(h) {}
      uint32_t node(uint32_t lane, uint64_t key) override { return m.node_on(base + lane, key); }
      uint32_t hub() override { return hubs++; }
      void edge(uint32_t from, uint32_t to) override { edges.emplace_back(from, to); }
    } adapter(m, m.lane_base[r], edges, hubs);
    thread_edges(*m.threads[r], adapter);
  }

  m.node_count = hubs;
  m.cross = edges.size() - program_edges;
  m.graph = Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), m.node_count);
  edges.clear();
  edges.shrink_to_fit();

  m.topo.clear();
  m.topo.reserve(m.node_count);
  try {
    boost::topological_sort(m.graph, std::back_inserter(m.topo));
    std::reverse(m.topo.begin(), m.topo.end());
    m.cyclic = false;
  } catch (const boost::not_a_dag&) {
    m.topo.clear();
    m.cyclic = true;
  }
}

bool HappensBefore::ordered(EventRef a, EventRef b) const {
  const Impl& m = *m_impl;
  if (a.rank >= m.world_size || b.rank >= m.world_size) return a.rank == b.rank && a.seq < b.seq;
  if (m.lane_of(a) == m.lane_of(b)) return a.seq < b.seq;
  // The path leaves a's lane at its first node at or after a's start, and
  // enters b's lane at its last node at or before b's end.
  const auto pa = m.exit_position(a);
  const auto nb = m.entry_node(b);
  if (!pa || !nb) return false;
  const uint32_t la = m.lane_of(a);
  std::call_once(m.clocks_once, [&] { m.compute_clocks(); });
  if (!m.clocks.empty()) return m.clocks[uint64_t{*nb} * m.lane_count + la] >= *pa + 1;
  return m.reaches(m.node_base[la] + *pa, *nb);
}

int64_t HappensBefore::last_key_before(EventRef x, uint32_t rank) const {
  const Impl& m = *m_impl;
  if (x.rank >= m.world_size || rank >= m.world_size) return x.rank == rank ? static_cast<int64_t>(Impl::end(x.seq)) : -1;
  const uint32_t axis = m.lane_base[rank];  // the rank's first lane (thread 0)
  if (m.lane_of(x) == axis) return static_cast<int64_t>(Impl::end(x.seq));
  std::call_once(m.clocks_once, [&] { m.compute_clocks(); });
  if (m.clocks.empty()) return -1;
  const auto nx = m.entry_node(x);
  if (!nx) return -1;
  const uint32_t count = m.clocks[uint64_t{*nx} * m.lane_count + axis];
  if (count == 0) return -1;
  // The path leaves the axis at that node: events starting at or before it
  // come before it in program order.
  return static_cast<int64_t>(m.node_seq[axis][count - 1]);
}

int64_t HappensBefore::first_key_after(EventRef x, uint32_t rank) const {
  const Impl& m = *m_impl;
  constexpr int64_t never = INT64_MAX;
  if (x.rank >= m.world_size || rank >= m.world_size) return x.rank == rank ? static_cast<int64_t>(Impl::start(x.seq)) : never;
  const uint32_t axis = m.lane_base[rank];
  const uint32_t lx = m.lane_of(x);
  if (lx == axis) return static_cast<int64_t>(Impl::start(x.seq));
  std::call_once(m.clocks_once, [&] { m.compute_clocks(); });
  if (m.clocks.empty()) return never;
  const auto px = m.exit_position(x);
  if (!px) return never;
  // Clocks along a lane never decrease: the first node of the axis whose
  // clock has seen px is found by binary search.
  const uint32_t base = m.node_base[axis];
  const auto& sr = m.node_seq[axis];
  uint32_t lo = 0, hi = static_cast<uint32_t>(sr.size());
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (m.clocks[uint64_t{base + mid} * m.lane_count + lx] >= *px + 1) hi = mid;
    else lo = mid + 1;
  }
  if (lo == sr.size()) return never;
  // Events of the axis that end at or after that node's key come after it.
  return static_cast<int64_t>(sr[lo]);
}

bool HappensBefore::on_axis(EventRef x) const {
  const Impl& m = *m_impl;
  return x.rank < m.world_size && m.lane_of(x) == m.lane_base[x.rank];
}

bool HappensBefore::exact_projections() const {
  const Impl& m = *m_impl;
  std::call_once(m.clocks_once, [&] { m.compute_clocks(); });
  return !m.clocks.empty();
}

uint64_t HappensBefore::nodes() const { return m_impl->node_count; }
uint64_t HappensBefore::edges() const { return boost::num_edges(m_impl->graph); }
uint64_t HappensBefore::cross_edges() const { return m_impl->cross; }

std::vector<EventRef> HappensBefore::cycle() const {
  const Impl& m = *m_impl;
  if (!m.cyclic) return {};
  std::vector<uint32_t> component(m.node_count);
  boost::strong_components(m.graph, boost::make_iterator_property_map(
                                        component.begin(), boost::get(boost::vertex_index, m.graph)));
  std::unordered_map<uint32_t, uint32_t> size;
  for (uint32_t c : component) ++size[c];
  std::vector<EventRef> out;
  for (uint32_t v = 0; v < m.node_count; ++v) {
    if (size[component[v]] > 1 && m.is_event(v)) out.push_back(m.event_of(v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void HappensBefore::write_dot(std::ostream& out) const {
  const Impl& m = *m_impl;
  boost::write_graphviz(out, m.graph, [&](std::ostream& o, uint32_t v) {
    if (m.is_event(v)) {
      const uint32_t l = m.lane_of_node(v);
      const bool end = m.node_seq[l][v - m.node_base[l]] % 2 == 1;
      o << "[label=\"" << m.event_of(v).str() << (end ? " end" : " start") << "\"]";
    } else {
      o << "[label=\"\", shape=point]";
    }
  });
}

}  // namespace smtrace::analyzer
