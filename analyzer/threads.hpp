// The threads of one rank as happens-before orders them (issue 15).
//
// A rank whose header says the tracer recorded thread synchronization
// (RankHeader::thread_sync != 0) is split into lanes, each one program
// order: one lane per thread (lane 0 is thread 0, the thread that
// initialized MPI), and one per OpenMP explicit task and per section, which
// run as logical threads of their own wherever the runtime put them (two
// tasks that one thread happened to run one after the other are not
// ordered). A rank with thread_sync == 0 (traces written before thread
// events existed, imported traces) stays one lane: all its threads in one
// program order, in the order their events were written, as before.
//
// What orders lanes is read from format::thread_effect (call_semantics.hpp,
// the one place that says what each thread call means); thread_edges()
// turns the recorded thread events into edges, a release taken at an
// event's start, an acquire at its end:
// - pthread_create -> the created thread's first event; its last event ->
//   pthread_join of it;
// - locks (mutex, rwlock, spin lock, OpenMP lock and critical): a release
//   -> every later acquire of the same object (by recorded time); a shared
//   (reader) acquire only after exclusive releases. Releases of one object
//   are chained through hub nodes, so an acquire needs one edge;
// - condition signal/broadcast and sem_post -> every later condition wait
//   end or sem_wait of the object; a condition wait also releases its mutex
//   at its start and takes it again at its end;
// - barriers (pthread and OpenMP, round `count`): every member's start
//   before every member's end; an OpenMP barrier's end also after every
//   explicit task of the team created before it (and completed: by time);
// - OpenMP fork -> each implicit task's begin; each implicit task's end and
//   each explicit task of the team -> the region's end (join);
// - task creation -> the task's begin; its dependences (in, out, inout;
//   mutexinoutset and inoutset as inout: more order, never a false race)
//   from the end of the sibling it depends on to its begin; taskwait after
//   the children, taskgroup's end after the descendants, created before it;
// - a section's lane starts after what its thread did before, and ends
//   before that thread's next barrier or implicit-task end.
// Not modelled (conservative or left out): untied tasks that move between
// threads, OpenMP ordered and atomic constructs, locks taken with trylock
// (the tracer records only successful acquisitions as acquires).
//
// Thread safety: a collector is fed from its rank's loading thread only; a
// RankThreads is read-only after loading.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer {

enum class LaneKind : uint8_t { thread, task, section };

// One program order of a rank.
struct Lane {
  LaneKind kind = LaneKind::thread;
  uint32_t thread = 0;       // tracer thread id (a task's or section's: the thread that ran it)
  uint64_t id = 0;           // an OpenMP task's id
  uint64_t first_seq = 0, last_seq = 0;
  bool seen = false;         // an event of the lane was read
  // A thread: the event written just before its first one (on lane
  // `before_lane`), after whose start it starts when its creation was not
  // recorded (its start: a long call written before may end later).
  uint64_t before_seq = 0;
  uint32_t before_lane = 0;
  bool has_before = false;
};

// A thread-family event as thread_edges() reads it.
struct ThreadEvent {
  uint64_t seq = 0;
  int64_t t_start = 0, t_end = 0;
  format::ThreadEffect effect = format::ThreadEffect::none;
  uint32_t lane = 0;
  uint32_t thread = 0;
  uint64_t object = 0;       // Event.buf: lock, condition, barrier; OpenMP team or task id
  uint64_t other = 0;        // Event.recv_buf: a condition wait's mutex; a task's parent
  int32_t peer = -1;         // Event.peer: the other thread of create, begin, join
  int64_t count = 0;         // Event.count: a barrier's round; a task's team
  std::vector<int64_t> dep_addrs, dep_kinds;  // a created task's dependences
  bool pending = false;      // the rank stopped inside it
};

struct RankThreads {
  bool modelled = false;              // RankHeader::thread_sync != 0
  std::vector<Lane> lanes{Lane{}};    // lane 0: thread 0 (main)
  std::vector<ThreadEvent> events;    // modelled ranks only, seq order
  std::vector<uint32_t> lane_of;      // modelled ranks only: the lane of each seq

  // Return the lane of event `seq` (0 on a rank that is one lane).
  uint32_t lane(uint64_t seq) const { return seq < lane_of.size() ? lane_of[seq] : 0; }
  // Return how reports name lane `lane`: "thread 0 (main)", "thread 2",
  // "OpenMP task 0x10 on thread 1", "an OpenMP section on thread 1".
  std::string lane_name(uint32_t lane) const;
};

// Fills a RankThreads from one rank's events, in seq order.
class ThreadCollector {
 public:
  // `header` is read at the first event (it is filled after the collector is made).
  ThreadCollector(RankThreads& out, const format::RankHeader& header);
  // (Inline: a rank whose thread synchronization was not recorded, most,
  // returns here once started.)
  void event(const format::Event& e) {
    if (m_started && !m.modelled) return;
    collect(e);
  }

 private:
  void collect(const format::Event& e);
  uint32_t thread_lane(uint32_t thread);
  uint32_t new_lane(LaneKind kind, uint32_t thread, uint64_t id);

  RankThreads& m;
  const format::RankHeader& m_header;
  bool m_started = false;
  std::unordered_map<uint32_t, uint32_t> m_thread_lane;           // thread -> its lane
  std::unordered_map<uint32_t, std::vector<uint32_t>> m_nested;   // thread -> task/section lanes running on it
  uint64_t m_last_seq = 0;
  uint32_t m_last_lane = 0;
  bool m_any = false;
};

// The graph thread_edges() adds to: lanes are the rank's own (0..).
class ThreadGraph {
 public:
  virtual ~ThreadGraph() = default;
  // Return the node at point `key` (2 seq: an event's start, 2 seq + 1: its
  // end) of lane `lane`; thread_points() listed it.
  virtual uint32_t node(uint32_t lane, uint64_t key) = 0;
  // Return a new node that is no event's.
  virtual uint32_t hub() = 0;
  virtual void edge(uint32_t from, uint32_t to) = 0;
};

// Call `add(lane, key)` for every point thread_edges() will ask for.
template <class Add>
void thread_points(const RankThreads& t, Add&& add);
// Add the edges of the thread events of `t` (a modelled rank) to `g`.
void thread_edges(const RankThreads& t, ThreadGraph& g);

// Return, per lane of `t`, the smallest point key that follows the end of
// event `seq` by the rank's own order alone (each lane's program order and
// thread_edges(); no message, no other rank): an event of lane l whose start
// key (2 seq) is at least keys[l] cannot start before `seq` returns; an
// event below it can (its thread does not wait for `seq`). UINT64_MAX for a
// lane nothing of which follows. A rank that is one lane: {2 seq + 1}.
// A point a thread event asks for that thread_points() did not list is
// taken at the next listed one, which orders less, never more.
std::vector<uint64_t> keys_after_end(const RankThreads& t, uint64_t seq);

// --- implementation of the template --------------------------------------

namespace detail {
// Return the lane a section started on `thread` leaves from (its thread's lane).
uint32_t owner_lane(const RankThreads& t, uint32_t thread);
}  // namespace detail

template <class Add>
void thread_points(const RankThreads& t, Add&& add) {
  if (!t.modelled) return;
  for (const ThreadEvent& e : t.events) {
    add(e.lane, 2 * e.seq);
    if (!e.pending) add(e.lane, 2 * e.seq + 1);
    if (e.effect == format::ThreadEffect::section_begin) add(detail::owner_lane(t, e.thread), 2 * e.seq);
  }
  for (uint32_t l = 0; l < t.lanes.size(); ++l) {
    const Lane& lane = t.lanes[l];
    if (!lane.seen || lane.kind != LaneKind::thread) continue;
    add(l, 2 * lane.first_seq);
    add(l, 2 * lane.last_seq + 1);
    if (lane.has_before) add(lane.before_lane, 2 * lane.before_seq);
  }
}

}  // namespace smtrace::analyzer
