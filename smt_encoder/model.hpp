// The trace as a program for the SMT backend: per rank, the events that
// communicate (they post or complete sends, receives, probes, collective
// calls), in program order, and the operations they post. Everything else a
// rank did is left out: it neither waits for nor releases another rank.
//
// The model fixes each rank's control flow as recorded; what may change is
// the runtime's choices: which send a receive matches, which message a probe
// sees, when things happen. An execution is described by one integer per
// rank, its progress P: events [0, P/2) have returned; when P is odd, event
// (P-1)/2 has been called and not returned. semantics.hpp gives the rules
// (the reference, without a solver); encoder.hpp turns them into SMT.
//
// Modelling decisions:
// - A successful MPI_Test* or MPI_Iprobe is a point the program waited for
//   (it looped until it succeeded) but never a place where a rank may stop
//   for good: a deadlock is claimed only at calls that really block.
// - MPI_Waitany/Waitsome return when the requests recorded as completed are
//   complete; they too are never claimed as a rank's final stop.
// - A receive that follows a wildcard probe with the source and tag the
//   probe returned takes the message the probe saw (MPI guarantees it), so
//   in another execution it takes whatever the probe saw there.
// - Persistent requests post one operation per MPI_Start; their sends are
//   standard mode. Cancelled operations and MPI_PROC_NULL peers are left out.
// - RMA synchronization orders ranks as happens_before.cpp says. The k-th
//   MPI_Win_fence of each member of a window is instance k of a full
//   collective on a communicator of the window's own ("window 3 (fence)"):
//   a barrier, where a rank may stop for good. Post/start/complete/wait are
//   messages on another ("window 3 (post/start/complete/wait)"): MPI_Win_post
//   sends one buffered message (it never blocks) to each origin of its group
//   and MPI_Win_start receives one from each target of its group, returning
//   once all came; MPI_Win_complete sends one to each target of its start's
//   group and MPI_Win_wait (or an MPI_Win_test that returned true; one that
//   returned false is left out) receives one from each origin of its post's
//   group. Every such receive names its source: no choice, no race. Locks,
//   flushes, MPI_Win_create/free and the RMA calls themselves order nothing
//   and are left out.
//
// Thread safety: a Model is a plain value; build_model() reads the Context only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/finding.hpp"
#include "analyzer/signature.hpp"
#include "smt_encoder/id_list.hpp"
#include "trace_format/event.hpp"

namespace smtrace::smt {

inline constexpr uint32_t k_none = std::numeric_limits<uint32_t>::max();

// When the SMT backend's budget runs out (nothing: no limit). Long loops
// look at it now and then and throw BudgetSpent past it.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// Thrown when the budget runs out while building something a question needs
// (the model, the match pairs, the parts, an encoding).
class BudgetSpent : public std::runtime_error {
 public:
  BudgetSpent() : std::runtime_error("budget spent") {}
};

// Throw BudgetSpent when `deadline` has passed; look at the clock only once
// every 65536 calls with the same `ticks`.
inline void check_deadline(const Deadline& deadline, uint64_t& ticks) {
  if (deadline && (++ticks & 0xffff) == 0 && std::chrono::steady_clock::now() > *deadline) throw BudgetSpent();
}

// One stage of building what the questions need (the model, the match
// pairs' passes), `total` units of work (events, ops) long, that gives up
// early: at() throws BudgetSpent past the deadline, and as soon as the pace
// so far says the stage would end well past it (after a sixty-fourth of
// it and a tenth of the time it had, its projected end more than half that
// time beyond the deadline), so that a model that cannot be finished within
// the budget is not built whole and then dropped. A stage that gives up
// ends as one the deadline stopped: every question it served is unknown.
// The projection is a wall-clock one: on a loaded machine it may give up on
// a stage that a lull would have let finish, as the deadline itself may.
class Pace {
 public:
  Pace(const Deadline& deadline, uint64_t total)
      : m_deadline(deadline), m_start(std::chrono::steady_clock::now()), m_total(total) {}
  // Say that `done` units are done; look at the clock only once every 4,096 calls.
  void at(uint64_t done) {
    if (m_deadline && (++m_ticks & 0xfff) == 0) check(done);
  }
  // As at(), looking at the clock now (at the end of a large unit: a rank).
  void now(uint64_t done) {
    if (m_deadline) check(done);
  }

 private:
  void check(uint64_t done) const {
    using Seconds = std::chrono::duration<double>;
    const auto t = std::chrono::steady_clock::now();
    if (t > *m_deadline) throw BudgetSpent();
    if (done == 0 || done * 64 < m_total) return;
    const double spent = Seconds(t - m_start).count();
    const double had = Seconds(*m_deadline - m_start).count();
    if (spent < had / 10) return;  // too short a while to tell a pace on a loaded machine
    if (spent * static_cast<double>(m_total) / static_cast<double>(done) > had * 1.5) throw BudgetSpent();
  }

  Deadline m_deadline;
  std::chrono::steady_clock::time_point m_start;
  uint64_t m_total;
  uint64_t m_ticks = 0;
};

inline constexpr int32_t k_any = -1;  // any source, any tag

enum class OpKind : uint8_t { send, recv, probe, coll };
enum class SendMode : uint8_t { standard, sync, buffered };
// What a member of a collective waits for before it returns:
// full: every member's call (barrier, allreduce, allgather, alltoall, reduce_scatter);
// from_root: the root's call (bcast, scatter); to_root: the root waits for every call
// (reduce, gather); scan: members 0..i; exscan: members 0..i-1.
enum class CollKind : uint8_t { full, from_root, to_root, scan, exscan };

// World ranks below it: Op keeps them in 24 bits (build_model builds no
// model of a larger world).
inline constexpr uint32_t k_max_world = uint32_t{1} << 24;

// One per send, receive, probe and collective call of the trace (0.9 per
// communicating event of a halo exchange): its kind and mode share a 32-bit
// word with its rank, a send's, receive's or probe's `tag` one with a
// collective call's `member`, and a receive's `probe` one with a collective
// call's `instance` (no op has both of a pair; read each only for its kind:
// a collective call's tag is its member, a send's probe is k_none), 32
// bytes in place of 44 (the model's largest part: docs/bench.md, the
// twenty-fourth round).
struct Op {
  OpKind kind : 4 = OpKind::send;
  SendMode mode : 4 = SendMode::standard;  // send
  uint32_t rank : 24 = 0;     // world rank that posts it
  uint32_t post = 0;          // index of the posting event in the rank's events
  uint32_t done = k_none;     // index of the event that waits for it (k_none: none)
  uint32_t comm = 0;          // global communicator index
  int32_t peer = 0;           // send: destination world rank; recv/probe: source world rank or k_any
  union {
    int32_t tag = 0;          // send, recv, probe (recv/probe: k_any for MPI_ANY_TAG)
    uint32_t member;          // coll: its rank in the instance's communicator
  };
  uint32_t recorded = k_none; // recv/probe: the send it took (saw) in the recorded run
  union {
    uint32_t probe = k_none;  // recv: the wildcard probe whose message it takes
    uint32_t instance;        // coll: index into Model::instances
  };
};
static_assert(sizeof(Op) == 32);

// One per communicating event of the trace, 16 bytes: its seq and the
// number of ops it posts are read through RankEvents (seq(), posted()),
// which keeps what does not fit here for the few events that need it.
struct Event {
  uint32_t seq_low = 0;  // the seq's low 32 bits (RankEvents::seq)
  uint32_t site = 0;
  // Its ops in RankEvents::op_ids: from `first`, posted() ops posted here
  // (in posting order), then up to the next event's `first` (the list's end
  // for the last) the ops that must be complete before it returns.
  uint32_t first = 0;
  format::Call call = format::Call::unspecified;
  uint16_t few_posted : 14 = 0;  // ops posted here, k_many_posted for that many or more (RankEvents::posted)
  bool waits : 1 = false;        // it has a return point of its own (something to wait for)
  bool may_block : 1 = false;    // a rank may stop here for good (see the header comment)
};
static_assert(sizeof(Event) == 16);  // one per communicating event of the trace

inline constexpr uint32_t k_many_posted = (uint32_t{1} << 14) - 1;

struct Instance {
  CollKind kind = CollKind::full;
  format::Call call = format::Call::unspecified;
  uint32_t comm = 0;                 // global communicator
  uint32_t position = 0;             // the n-th collective on it
  uint32_t root = 0;                 // member index (rooted kinds)
  std::vector<uint32_t> members;     // op per rank in the communicator (k_none: never called)
};

struct RankEvents {
  std::vector<Event> events;
  std::vector<uint32_t> op_ids;  // the events' ops, one after the other (Event::first)
  // Progress at the end of the recording: 2 * events.size(), or 2k+1 when
  // the rank stopped inside event k (it never returned).
  uint32_t limit = 0;
  // Where the seqs' high 32 bits change (ascending seqs): (index of the
  // first event with them, the high bits); empty while every seq is below 2^32.
  std::vector<std::pair<uint32_t, uint32_t>> seq_high;
  // The events that post k_many_posted ops or more: (index, count), ascending.
  std::vector<std::pair<uint32_t, uint32_t>> many_posted;

  // Return the seq of event `k`.
  uint64_t seq(uint32_t k) const {
    uint64_t high = 0;
    if (!seq_high.empty() && seq_high.front().first <= k) {
      auto it = std::upper_bound(seq_high.begin(), seq_high.end(), k,
                                 [](uint32_t i, const std::pair<uint32_t, uint32_t>& h) { return i < h.first; });
      high = std::prev(it)->second;
    }
    return (high << 32) | events[k].seq_low;
  }
  // Make the events, one per seq of `seqs` (ascending), their other fields zero.
  void set_seqs(std::span<const uint64_t> seqs);
  // Append an event of seq `seq` (not below the last one's); return it.
  Event& add(uint64_t seq);
  // Set the events to events [begin, end) of `from`, their seqs with them.
  void assign(const RankEvents& from, uint32_t begin, uint32_t end);
  // Return the index of the first event whose seq is `seq` or more (events.size(): none).
  uint32_t first_from(uint64_t seq) const;
  // Return the number of ops posted at event `k`.
  uint32_t posted(uint32_t k) const {
    const uint32_t few = events[k].few_posted;
    return few < k_many_posted ? few : many(k);
  }
  // Set it (link_ops: in ascending `k`).
  void set_posted(uint32_t k, uint32_t count) {
    events[k].few_posted = static_cast<uint16_t>(std::min(count, k_many_posted));
    if (count >= k_many_posted) many_posted.emplace_back(k, count);
  }

  // Return the ops posted at event `k`, in posting order.
  std::span<const uint32_t> posts(uint32_t k) const { return {op_ids.data() + events[k].first, posted(k)}; }
  // Return the ops that must be complete before event `k` returns (ascending).
  std::span<const uint32_t> completes(uint32_t k) const {
    const uint32_t end = k + 1 < events.size() ? events[k + 1].first : static_cast<uint32_t>(op_ids.size());
    const uint32_t from = events[k].first + posted(k);
    return {op_ids.data() + from, end - from};
  }

 private:
  uint32_t many(uint32_t k) const;
};

// The buffer of a wildcard receive, or of a send to a rank that posted one:
// what another match of the receive would put where (type-mismatch's rule,
// for the matches of other executions). A receive's buffer is an argument of
// the call, given before it matches anything, so it is the same whichever
// message it takes; a wildcard probe has none (the receive after it may be
// sized from the probe's status, and so fits whatever the probe saw).
struct OpBuffer {
  uint32_t op = 0;
  uint32_t datatype = 0;  // as posted (the rank's datatype id)
  int64_t count = 0;
  analyzer::Signature signature;
  std::optional<uint64_t> bytes;
};

struct Model {
  uint32_t world_size = 0;
  std::vector<RankEvents> ranks;
  std::vector<Op> ops;
  std::vector<Instance> instances;
  std::vector<std::string> comm_names;  // per global communicator: "MPI_COMM_WORLD"
  // The buffers of wildcard receives and of the sends to their ranks,
  // ascending by op (none on a trace without wildcard receives; the parts
  // keep none: ask the whole model).
  std::vector<OpBuffer> buffers;

  // Return the trace's name of event `index` of rank `rank`.
  analyzer::EventRef ref(uint32_t rank, uint32_t index) const {
    return {rank, ranks[rank].seq(index)};
  }
  const Event& event(uint32_t rank, uint32_t index) const { return ranks[rank].events[index]; }
  std::span<const uint32_t> posts(uint32_t rank, uint32_t index) const { return ranks[rank].posts(index); }
  std::span<const uint32_t> completes(uint32_t rank, uint32_t index) const { return ranks[rank].completes(index); }
  // Return the posting event of op `op`.
  analyzer::EventRef post_ref(uint32_t op) const { return ref(ops[op].rank, ops[op].post); }
  // Return the name of global communicator `comm`.
  std::string comm_name(uint32_t comm) const;
  // Return the buffer of op `op`, or nullptr when none is kept.
  const OpBuffer* buffer(uint32_t op) const;
};

// Return how the message of send `send` fits the buffer of wildcard receive
// `recv` (ops of the whole model) when the buffers of both are kept and it
// does not fit (a signature that differs, or truncation: MPI-3.1 sections
// 3.3.1, 3.2.4); nothing when it fits or when that is not known.
std::optional<analyzer::Fit> misfit(const Model& model, uint32_t recv, uint32_t send);

// Set every rank's op_ids and its events' `first`, `posted` and `waits`
// from the ops' `post` and `done` (each event's posts and completions in
// op order), each list exactly as long as it needs to be. Tell `pace`, when
// given, of each op linked (`done` + its index).
void link_ops(Model& model, Pace* pace = nullptr, uint64_t done = 0);

// Return true when receive or probe `r` accepts send `s` by its envelope:
// same communicator, sent to r's rank, source and tag allowed by r.
inline bool accepts(const Op& r, const Op& s) {
  return s.kind == OpKind::send && r.comm == s.comm && static_cast<int32_t>(r.rank) == s.peer &&
         (r.peer == k_any || r.peer == static_cast<int32_t>(s.rank)) && (r.tag == k_any || r.tag == s.tag);
}

// Set `out` to the distinct values of `lists`, ascending (each list is left
// sorted and without repeats). Each is sorted only when it is not already: the
// model's per-rank seqs come as a few ascending lists, merged in linear time.
void sorted_union(std::vector<std::vector<uint64_t>>& lists, std::vector<uint64_t>& out);

// Return true when `call` is a collective the model treats (blocking or not).
CollKind coll_kind(format::Call call);

// What the SMT checks collect while the trace streams past: probes (which
// the replay does not keep) and the calls of completing events, a record
// per probe and per completing call (its pass takes only those calls). Its
// time is counted against the SMT checks' budget (prove.cpp, SharedBudget):
// each rank's pass times a sample of its calls (spent()).
class Collector {
 public:
  Collector();
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;
  // Return the pass that collects rank `data.rank` (called before loading),
  // or nullptr when one was made for that rank already: the SMT checks of
  // one analysis share one Collector.
  // Thread safety: rank_pass and load may be called from several loading
  // threads at once (smtrace-mpi's readers, and its process 0).
  std::unique_ptr<analyzer::RankPass> rank_pass(const analyzer::RankData& data);
  // smtrace-mpi (Check::save_pass, load_pass): append what `pass` (one that
  // rank_pass returned, after its end()) collected to `out`, and free it
  // here (a reader keeps none of the ranks it sent); and make rank
  // `data.rank`'s collection here from what save wrote, read from `in`,
  // returning a pass that stands for it. Throw std::logic_error when that
  // rank was collected here already, std::runtime_error when `in` ends early.
  static void save(const analyzer::RankPass& pass, analyzer::WireWriter& out);
  std::unique_ptr<analyzer::RankPass> load(const analyzer::RankData& data, analyzer::WireReader& in);
  // Free what was collected, once build_model has read it (the passes are
  // done: none may be running).
  void release();
  // Return the time the passes spent collecting, summed over the ranks
  // (each pass times every call that grows its list and one in 61 of the
  // others, each of those at most 50 us, counted at their mean; a loaded
  // rank brings the time its pass spent where it was read), once the passes
  // are done.
  std::chrono::nanoseconds spent() const;
  struct Impl;

 private:
  friend Model build_model(const analyzer::Context& context, const Collector& collected, const Deadline& deadline);
  std::unique_ptr<Impl> m_impl;
};

// Thrown by build_model for a trace the model cannot hold whatever the
// budget: a world of k_max_world ranks or more. what() says why.
class ModelLimit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throw ModelLimit when a world of `world_size` ranks is too large for the
// model (Op's 24-bit ranks).
void check_world_size(uint32_t world_size);

// Return the heap's free pages to the system (glibc: malloc_trim). Blocks
// freed in the arenas of the threads that made them (the Collector's lists,
// the reading's buffers, the replay's ops that smtrace-mpi's loading
// threads made) are not reused by the model's blocks, made on another
// thread, and stay resident otherwise: build_model calls it as it frees
// the replay's ops (every 64 MiB freed), prove.cpp once the model is built
// (docs/bench.md, the nineteenth and twenty-fourth rounds). Elsewhere
// nothing.
void give_back_free_memory();

// Return the model of the analyzed trace in `context`, with what `collected`
// saw. Throw BudgetSpent past `deadline`, ModelLimit (check_world_size)
// before anything is built.
Model build_model(const analyzer::Context& context, const Collector& collected, const Deadline& deadline = {});

// Return "1:4 MPI_Recv" for event `index` of `rank`.
std::string event_text(const Model& model, uint32_t rank, uint32_t index);
// Return a short description of op `op`: "MPI_Recv 0:3 from any rank, tag 1".
std::string op_text(const Model& model, uint32_t op);

}  // namespace smtrace::smt
