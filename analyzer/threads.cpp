#include "analyzer/threads.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

namespace smtrace::analyzer {

using format::ThreadEffect;

std::string RankThreads::lane_name(uint32_t lane) const {
  if (lane >= lanes.size()) return "thread ?";
  const Lane& l = lanes[lane];
  switch (l.kind) {
    case LaneKind::thread: return l.thread == 0 ? "thread 0 (main)" : fmt::format("thread {}", l.thread);
    case LaneKind::task: return fmt::format("OpenMP task {:#x} on thread {}", l.id, l.thread);
    case LaneKind::section: return fmt::format("an OpenMP section on thread {}", l.thread);
  }
  return "thread ?";
}

ThreadCollector::ThreadCollector(RankThreads& out, const format::RankHeader& header) : m(out), m_header(header) {
  m = RankThreads{};
  m_thread_lane[0] = 0;
}

uint32_t ThreadCollector::new_lane(LaneKind kind, uint32_t thread, uint64_t id) {
  Lane l;
  l.kind = kind;
  l.thread = thread;
  l.id = id;
  m.lanes.push_back(l);
  return static_cast<uint32_t>(m.lanes.size() - 1);
}

uint32_t ThreadCollector::thread_lane(uint32_t thread) {
  auto [it, fresh] = m_thread_lane.try_emplace(thread, 0);
  if (fresh) it->second = new_lane(LaneKind::thread, thread, 0);
  return it->second;
}

void ThreadCollector::collect(const format::Event& e) {
  if (!m_started) {
    m_started = true;
    m.modelled = m_header.thread_sync != 0;
  }
  if (!m.modelled) return;
  const ThreadEffect effect = format::thread_effect(e.call);
  auto& nested = m_nested[e.thread];
  uint32_t lane = nested.empty() ? thread_lane(e.thread) : nested.back();
  if (effect == ThreadEffect::task_begin || effect == ThreadEffect::section_begin) {
    lane = new_lane(effect == ThreadEffect::task_begin ? LaneKind::task : LaneKind::section, e.thread, e.buf);
    nested.push_back(lane);
  } else if ((effect == ThreadEffect::task_end || effect == ThreadEffect::section_end) && !nested.empty()) {
    nested.pop_back();
  }
  if (m.lane_of.size() <= e.seq) m.lane_of.resize(e.seq + 1, 0);
  m.lane_of[e.seq] = lane;
  Lane& l = m.lanes[lane];
  if (!l.seen) {
    l.first_seq = e.seq;
    if (m_any && l.kind == LaneKind::thread) {
      l.has_before = true;
      l.before_seq = m_last_seq;
      l.before_lane = m_last_lane;
    }
  }
  l.last_seq = std::max(l.last_seq, e.seq);
  l.seen = true;
  if (!e.pending) {
    m_any = true;
    m_last_seq = e.seq;
    m_last_lane = lane;
  }
  if (effect == ThreadEffect::none) return;
  ThreadEvent t;
  t.seq = e.seq;
  t.t_start = e.t_start;
  t.t_end = e.pending ? std::numeric_limits<int64_t>::max() : e.t_end();
  t.effect = effect;
  t.lane = lane;
  t.thread = e.thread;
  t.object = e.buf;
  t.other = e.recv_buf;
  t.peer = e.peer.value_or(-1);
  t.count = e.count;
  t.dep_addrs = e.displs;
  t.dep_kinds = e.counts;
  t.pending = e.pending;
  m.events.push_back(std::move(t));
}

namespace detail {
uint32_t owner_lane(const RankThreads& t, uint32_t thread) {
  for (uint32_t l = 0; l < t.lanes.size(); ++l)
    if (t.lanes[l].kind == LaneKind::thread && t.lanes[l].thread == thread) return l;
  return 0;
}
}  // namespace detail

namespace {

constexpr uint32_t k_no_node = std::numeric_limits<uint32_t>::max();

// Builds the edges of one rank's thread events on a ThreadGraph.
class EdgeBuilder {
 public:
  EdgeBuilder(const RankThreads& t, ThreadGraph& g) : m_t(t), m_g(g) {}

  void run() {
    threads();
    locks();
    barriers();
    openmp();
  }

 private:
  uint32_t start(const ThreadEvent& e) { return m_g.node(e.lane, 2 * e.seq); }
  std::optional<uint32_t> end(const ThreadEvent& e) {
    if (e.pending) return std::nullopt;
    return m_g.node(e.lane, 2 * e.seq + 1);
  }
  void to_end(uint32_t from, const ThreadEvent& e) {
    if (auto x = end(e)) m_g.edge(from, *x);
  }

  // pthread_create -> the created thread's first event; its last event ->
  // pthread_join. A thread whose creation was not recorded starts after the
  // start of the event written just before its first one (what one program
  // order would have put before it). Every edge here and below leads from a
  // point to a later one in recorded time (where the run's clock agrees),
  // so they close no cycle.
  void threads() {
    std::map<uint32_t, uint32_t> lane_of_thread;
    for (uint32_t l = 0; l < m_t.lanes.size(); ++l)
      if (m_t.lanes[l].kind == LaneKind::thread && m_t.lanes[l].seen) lane_of_thread[m_t.lanes[l].thread] = l;
    std::map<uint32_t, bool> created;
    for (const ThreadEvent& e : m_t.events) {
      if (e.peer < 0) continue;
      auto it = lane_of_thread.find(static_cast<uint32_t>(e.peer));
      if (it == lane_of_thread.end()) continue;
      const Lane& other = m_t.lanes[it->second];
      if (e.effect == ThreadEffect::create) {
        created[other.thread] = true;
        m_g.edge(start(e), m_g.node(it->second, 2 * other.first_seq));
      } else if (e.effect == ThreadEffect::join) {
        to_end(m_g.node(it->second, 2 * other.last_seq + 1), e);
      }
    }
    for (const auto& [thread, l] : lane_of_thread) {
      const Lane& lane = m_t.lanes[l];
      if (thread == 0 || created.count(thread) || !lane.has_before) continue;
      m_g.edge(m_g.node(lane.before_lane, 2 * lane.before_seq), m_g.node(l, 2 * lane.first_seq));
    }
  }

  struct Chain {
    uint32_t all = k_no_node;   // the last hub every release feeds
    uint32_t excl = k_no_node;  // the last hub exclusive releases feed
  };

  // Releases (at an event's start) before later acquires (at an end) of the
  // same object, in recorded time; at equal times releases first.
  void locks() {
    struct Point {
      int64_t time;
      bool acquire;
      uint64_t seq;
      uint32_t index;
      uint8_t part;  // a condition wait: 0 its mutex, 1 its condition
      bool operator<(const Point& o) const {
        return std::tie(time, acquire, seq, part) < std::tie(o.time, o.acquire, o.seq, o.part);
      }
    };
    std::vector<Point> points;
    for (uint32_t i = 0; i < m_t.events.size(); ++i) {
      const ThreadEvent& e = m_t.events[i];
      switch (e.effect) {
        case ThreadEffect::release: case ThreadEffect::signal:
          points.push_back({e.t_start, false, e.seq, i, 0});
          break;
        case ThreadEffect::acquire: case ThreadEffect::acquire_shared: case ThreadEffect::take_signal:
          if (!e.pending) points.push_back({e.t_end, true, e.seq, i, 0});
          break;
        case ThreadEffect::wait_signal:
          points.push_back({e.t_start, false, e.seq, i, 0});
          if (!e.pending) {
            points.push_back({e.t_end, true, e.seq, i, 0});
            points.push_back({e.t_end, true, e.seq, i, 1});
          }
          break;
        case ThreadEffect::none: case ThreadEffect::create: case ThreadEffect::begin: case ThreadEffect::end:
        case ThreadEffect::join: case ThreadEffect::barrier: case ThreadEffect::fork:
        case ThreadEffect::implicit_begin: case ThreadEffect::implicit_end: case ThreadEffect::join_team:
        case ThreadEffect::team_barrier: case ThreadEffect::taskwait: case ThreadEffect::taskgroup:
        case ThreadEffect::task_create: case ThreadEffect::task_begin: case ThreadEffect::task_end:
        case ThreadEffect::section_begin: case ThreadEffect::section_end:
          break;
      }
    }
    std::stable_sort(points.begin(), points.end());
    std::map<uint64_t, Chain> chains;
    std::map<std::pair<uint32_t, uint64_t>, bool> held_shared;  // (lane, lock) -> taken shared
    for (const Point& p : points) {
      const ThreadEvent& e = m_t.events[p.index];
      const bool cond_wait = e.effect == ThreadEffect::wait_signal;
      const uint64_t object = cond_wait && p.part == 0 ? e.other : e.object;
      Chain& c = chains[object];
      if (!p.acquire) {
        bool shared = false;
        if (e.effect == ThreadEffect::release) {
          auto it = held_shared.find({e.lane, object});
          if (it != held_shared.end()) {
            shared = it->second;
            held_shared.erase(it);
          }
        }
        const uint32_t from = start(e);
        const uint32_t all = m_g.hub();
        m_g.edge(from, all);
        if (c.all != k_no_node) m_g.edge(c.all, all);
        if (!shared) {
          const uint32_t excl = m_g.hub();
          m_g.edge(from, excl);
          if (c.excl != k_no_node) m_g.edge(c.excl, excl);
          c.excl = excl;
          m_g.edge(excl, all);
        }
        c.all = all;
        continue;
      }
      const bool shared = e.effect == ThreadEffect::acquire_shared;
      if (e.effect == ThreadEffect::acquire || shared) held_shared[{e.lane, object}] = shared;
      if (cond_wait && p.part == 0) held_shared[{e.lane, object}] = false;
      const uint32_t from = shared ? c.excl : c.all;
      if (from != k_no_node) to_end(from, e);
    }
  }

  // Barrier rounds: every member's start before every member's end, through
  // one hub. An OpenMP team barrier also waits for the team's explicit
  // tasks created before it.
  void barriers() {
    std::map<std::tuple<bool, uint64_t, int64_t>, std::vector<uint32_t>> rounds;
    for (uint32_t i = 0; i < m_t.events.size(); ++i) {
      const ThreadEvent& e = m_t.events[i];
      if (e.effect == ThreadEffect::barrier || e.effect == ThreadEffect::team_barrier)
        rounds[{e.effect == ThreadEffect::team_barrier, e.object, e.count}].push_back(i);
    }
    for (const auto& [key, members] : rounds) {
      const uint32_t hub = m_g.hub();
      int64_t first_end = std::numeric_limits<int64_t>::max();
      for (uint32_t i : members) {
        const ThreadEvent& e = m_t.events[i];
        m_g.edge(start(e), hub);
        to_end(hub, e);
        first_end = std::min(first_end, e.t_end);
      }
      if (std::get<0>(key)) {
        m_team_barriers.push_back({std::get<1>(key), hub, first_end});
      }
    }
  }

  struct TeamBarrier {
    uint64_t team;
    uint32_t hub;
    int64_t first_end;  // the first member's departure
  };
  struct Task {
    const ThreadEvent* create = nullptr;
    const ThreadEvent* begin = nullptr;
    const ThreadEvent* end = nullptr;
  };

  // Fork/join of parallel regions, tasks, their dependences, taskwait,
  // taskgroup, and sections.
  void openmp() {
    std::map<uint64_t, Task> tasks;
    for (const ThreadEvent& e : m_t.events) {
      if (e.effect == ThreadEffect::task_create) tasks[e.object].create = &e;
      if (e.effect == ThreadEffect::task_begin) tasks[e.object].begin = &e;
      if (e.effect == ThreadEffect::task_end) tasks[e.object].end = &e;
    }
    auto parent = [&](uint64_t task) -> std::optional<uint64_t> {
      auto it = tasks.find(task);
      if (it == tasks.end() || !it->second.create) return std::nullopt;
      return it->second.create->other;
    };
    // A task's completion -> `to`'s end (when it completed before).
    auto after_task = [&](const Task& t, const ThreadEvent& to) {
      if (!t.end || t.end->t_start > to.t_end) return;
      to_end(start(*t.end), to);
    };
    // Creation and dependences, in creation order among siblings.
    struct DepState {
      std::vector<uint64_t> writers, readers;
    };
    std::map<std::pair<uint64_t, int64_t>, DepState> deps;  // (parent, address)
    for (const ThreadEvent& e : m_t.events) {
      if (e.effect != ThreadEffect::task_create) continue;
      const Task& t = tasks[e.object];
      if (!t.begin) continue;
      to_end(start(e), *t.begin);
      for (std::size_t k = 0; k < e.dep_addrs.size(); ++k) {
        const auto kind = static_cast<format::ThreadDependence>(k < e.dep_kinds.size() ? e.dep_kinds[k] : 3);
        DepState& d = deps[{e.other, e.dep_addrs[k]}];
        auto after = [&](const std::vector<uint64_t>& list) {
          for (uint64_t before : list) {
            const Task& p = tasks[before];
            if (p.end) to_end(start(*p.end), *t.begin);
          }
        };
        after(d.writers);
        if (kind == format::ThreadDependence::in) {
          d.readers.push_back(e.object);
          continue;
        }
        after(d.readers);
        d.writers = {e.object};
        d.readers.clear();
      }
    }
    // Team barriers wait for the team's tasks created before them.
    for (const TeamBarrier& b : m_team_barriers) {
      for (const auto& [id, t] : tasks) {
        if (!t.create || !t.end || static_cast<uint64_t>(t.create->count) != b.team) continue;
        if (t.create->t_start < b.first_end && t.end->t_start <= b.first_end) m_g.edge(start(*t.end), b.hub);
      }
    }
    std::map<uint64_t, uint32_t> fork;  // team -> the start of its latest fork
    std::map<uint64_t, std::vector<const ThreadEvent*>> implicit_ends;  // team -> implicit tasks' ends
    for (const ThreadEvent& e : m_t.events)
      if (e.effect == ThreadEffect::implicit_end) implicit_ends[e.object].push_back(&e);
    std::map<uint32_t, std::vector<const ThreadEvent*>> open_sections;  // thread -> sections ended on it
    for (const ThreadEvent& e : m_t.events) {
      switch (e.effect) {
        case ThreadEffect::fork:
          fork[e.object] = start(e);
          break;
        case ThreadEffect::implicit_begin:
          if (auto it = fork.find(e.object); it != fork.end()) to_end(it->second, e);
          break;
        case ThreadEffect::join_team: {
          auto& ends = implicit_ends[e.object];
          std::erase_if(ends, [&](const ThreadEvent* x) {
            if (x->t_start > e.t_end) return false;
            to_end(start(*x), e);
            return true;
          });
          for (const auto& [id, t] : tasks)
            if (t.create && static_cast<uint64_t>(t.create->count) == e.object) after_task(t, e);
          break;
        }
        case ThreadEffect::taskwait: case ThreadEffect::taskgroup:
          for (const auto& [id, t] : tasks) {
            if (!t.create || t.create->t_start > e.t_start) continue;
            bool awaited = false;
            if (e.effect == ThreadEffect::taskwait) {
              awaited = t.create->other == e.object;
            } else {
              std::optional<uint64_t> up = t.create->other;
              for (int depth = 0; up && depth < 64 && !awaited; ++depth) {
                awaited = *up == e.object;
                up = parent(*up);
              }
            }
            if (awaited) after_task(t, e);
          }
          break;
        case ThreadEffect::section_begin:
          m_g.edge(m_g.node(detail::owner_lane(m_t, e.thread), 2 * e.seq), start(e));
          break;
        case ThreadEffect::section_end:
          open_sections[e.thread].push_back(&e);
          break;
        case ThreadEffect::none: case ThreadEffect::create: case ThreadEffect::begin: case ThreadEffect::end:
        case ThreadEffect::join: case ThreadEffect::acquire: case ThreadEffect::acquire_shared:
        case ThreadEffect::release: case ThreadEffect::signal: case ThreadEffect::take_signal:
        case ThreadEffect::wait_signal: case ThreadEffect::barrier: case ThreadEffect::implicit_end:
        case ThreadEffect::team_barrier: case ThreadEffect::task_create: case ThreadEffect::task_begin:
        case ThreadEffect::task_end:
          break;
      }
      // A section's lane ends before its thread's next barrier or
      // implicit-task end.
      if ((e.effect == ThreadEffect::team_barrier || e.effect == ThreadEffect::implicit_end) &&
          m_t.lanes[e.lane].kind == LaneKind::thread) {
        auto& list = open_sections[e.thread];
        for (const ThreadEvent* s : list) m_g.edge(start(*s), start(e));
        list.clear();
      }
    }
  }

  const RankThreads& m_t;
  ThreadGraph& m_g;
  std::vector<TeamBarrier> m_team_barriers;
};

}  // namespace

void thread_edges(const RankThreads& t, ThreadGraph& g) {
  if (!t.modelled) return;
  EdgeBuilder(t, g).run();
}

std::vector<uint64_t> keys_after_end(const RankThreads& t, uint64_t seq) {
  const uint32_t from_lane = t.lane(seq);
  std::vector<uint64_t> reached(std::max<std::size_t>(t.lanes.size(), from_lane + 1),
                                std::numeric_limits<uint64_t>::max());
  reached[from_lane] = 2 * seq + 1;
  if (!t.modelled) return reached;
  // The lanes' points, ascending, each a node (lane_base[l] + index); hubs after them.
  std::vector<std::vector<uint64_t>> points(reached.size());
  thread_points(t, [&](uint32_t lane, uint64_t key) { points[lane].push_back(key); });
  points[from_lane].push_back(2 * seq + 1);
  std::vector<uint32_t> lane_base(points.size() + 1, 0);
  for (uint32_t l = 0; l < points.size(); ++l) {
    std::sort(points[l].begin(), points[l].end());
    points[l].erase(std::unique(points[l].begin(), points[l].end()), points[l].end());
    lane_base[l + 1] = lane_base[l] + static_cast<uint32_t>(points[l].size());
  }
  struct Graph final : ThreadGraph {
    const std::vector<std::vector<uint64_t>>& points;
    const std::vector<uint32_t>& base;
    std::vector<std::vector<uint32_t>> out;
    Graph(const std::vector<std::vector<uint64_t>>& p, const std::vector<uint32_t>& b)
        : points(p), base(b), out(b.back()) {}
    uint32_t node(uint32_t lane, uint64_t key) override {
      const std::vector<uint64_t>& keys = points[lane];
      const auto at = std::lower_bound(keys.begin(), keys.end(), key);
      if (at == keys.end()) return hub();  // past the lane's last point: orders nothing
      return base[lane] + static_cast<uint32_t>(at - keys.begin());
    }
    uint32_t hub() override {
      out.emplace_back();
      return static_cast<uint32_t>(out.size() - 1);
    }
    void edge(uint32_t from, uint32_t to) override { out[from].push_back(to); }
  } graph(points, lane_base);
  for (uint32_t l = 0; l < points.size(); ++l) {
    for (uint32_t i = lane_base[l]; i + 1 < lane_base[l + 1]; ++i) graph.edge(i, i + 1);
  }
  thread_edges(t, graph);
  std::vector<bool> seen(graph.out.size(), false);
  std::vector<uint32_t> stack{graph.node(from_lane, 2 * seq + 1)};
  seen[stack.back()] = true;
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    if (n < lane_base.back()) {
      const auto lane = static_cast<uint32_t>(std::upper_bound(lane_base.begin(), lane_base.end(), n) -
                                              lane_base.begin() - 1);
      reached[lane] = std::min(reached[lane], points[lane][n - lane_base[lane]]);
    }
    for (uint32_t next : graph.out[n]) {
      if (!seen[next]) {
        seen[next] = true;
        stack.push_back(next);
      }
    }
  }
  return reached;
}

}  // namespace smtrace::analyzer
