// The happens-before relation of a replayed trace, on Boost.Graph behind
// this class (no Boost type in the interface).
//
// Nodes are the points where events communicate (a send's start, a
// receive's completion, collective entries and exits, fences; each event has
// a start and an end point); program order between them is an edge from each node to
// the next node of its lane, so events in between are ordered implicitly by
// seq. A lane is a whole rank, or, where the rank's thread synchronization
// was recorded (RankHeader::thread_sync), one of its threads, OpenMP tasks
// or sections, with the edges of its thread events (threads.hpp). An MPI
// event sits on the lane of the thread that made it: a request posted by
// one thread and completed by another orders through the completing
// thread's lane. Edges between ranks: a send's posting to its receive's completion;
// for a collective only what the MPI standard guarantees: a barrier (and
// allreduce, allgather, alltoall, reduce_scatter: every output depends on
// every input) orders every member's entry before every member's exit; a
// broadcast or scatter orders the root's entry before each exit; a reduce or
// gather each entry before the root's exit; scan orders ranks <= i before i,
// exscan ranks < i (a chain of hub nodes). RMA: fence as a barrier over the
// window's members; post -> the matching start's return, complete -> the
// matching wait's return (k-th epoch of each target/origin pair); window
// creation and MPI_Win_free as barriers over the window's members (a window
// is addressable only once every member described its memory, and its
// memory is free again once MPI_Win_free returns: MPI-3.1 section 11.2).
// Lock/unlock and flush order nothing between ranks: the lock order of the
// run is only one of the possible ones (the RMA checks treat lock epochs).
// Probes add no edge (a probe does not consume the message).
//
// Collective instances are joined through one hub node each (2n edges, not
// n^2); hubs are nodes without an event. The graph is a Boost CSR graph
// (about 8 bytes per edge); ordered() uses vector clocks (one entry per
// lane) computed on first use when nodes x lanes is small enough, else a
// graph search.
//
// Thread safety: const members may be called concurrently after build().
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "analyzer/finding.hpp"

namespace smtrace::analyzer {

class Context;

class HappensBefore {
 public:
  HappensBefore();
  ~HappensBefore();
  HappensBefore(const HappensBefore&) = delete;
  HappensBefore& operator=(const HappensBefore&) = delete;

  // Which recorded matches become edges: all of them, or only those of
  // receives that named their source (deterministic: the edges of receives
  // posted with MPI_ANY_SOURCE are left out). The rma-race check compares
  // the two to find accesses ordered only through a wildcard match.
  enum class Matches : uint8_t { all, deterministic };

  // Build the graph from `context.replay()`.
  void build(const Context& context, Matches matches = Matches::all);

  // Return true when event `a` happens before event `b` (a != b): a path
  // leads from a's start to b's end. Events need not be nodes: any event of
  // a lane is placed by its seq. Two calls of one collective instance are
  // thus ordered both ways (they overlap).
  bool ordered(EventRef a, EventRef b) const;
  // Return true when neither happens before the other.
  bool concurrent(EventRef a, EventRef b) const { return !ordered(a, b) && !ordered(b, a); }

  // Projections onto one rank's timeline, in point keys (an event at seq s
  // has its start at key 2s and its end at key 2s + 1). If
  // first_key_after(a, r) <= last_key_before(b, r), a happens before b
  // through rank r's program order; when a or b is an event of rank r, the
  // converse holds too.
  // Return the largest key k of rank `rank` such that every event of that
  // rank starting at or before k happens before `x` or is x (for an event
  // of `rank`: its own end key); -1 when there is none.
  int64_t last_key_before(EventRef x, uint32_t rank) const;
  // Return the smallest key k of rank `rank` such that `x` happens before
  // every event of that rank ending at or after k, or is that event (for an
  // event of `rank`: its own start key); INT64_MAX when none.
  int64_t first_key_after(EventRef x, uint32_t rank) const;
  // Return true when `x` lies on its rank's axis, the timeline the
  // projections above use: the whole rank, or for a rank whose threads are
  // lanes (threads.hpp) the lane of thread 0. On the axis they decide
  // exactly; off it they are sound bounds only.
  bool on_axis(EventRef x) const;
  // Return true when the projections above follow the graph exactly (vector
  // clocks fit in memory); when false they are the trivial bounds (-1 and
  // INT64_MAX), which order nothing.
  bool exact_projections() const;

  uint64_t nodes() const;
  uint64_t edges() const;          // program-order and cross-rank edges
  uint64_t cross_edges() const;
  // Return the events of a cycle if the recorded relation has one (a trace
  // that cannot have happened: damaged or mismatched), else empty.
  std::vector<EventRef> cycle() const;
  // Write the graph in Graphviz DOT, event nodes labelled RANK:SEQ, hubs as points.
  void write_dot(std::ostream& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace smtrace::analyzer
