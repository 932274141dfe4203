// rma-race: two accesses to the same bytes, at least one of them an RMA
// access and one a write, that happens-before does not order.
//
// Accesses (seed rma-bst-fragment-merge section 2, seed
// rma-strided-merge-flush Table 1 and Figure 8):
// - an RMA call at its origin: Put and Accumulate read the origin buffer
//   (RMA_Read), Get writes it (RMA_Write), the *_accumulate and
//   compare-and-swap calls read the origin (and compare) buffer and write the
//   result buffer; from the call until its local completion;
// - the same call at its target: Get reads the window (RMA_Read), the others
//   write it (RMA_Write; Get_accumulate with MPI_NO_OP reads); from the call
//   until its remote completion, or, for a target only read, its local one
//   (the data is at the origin: MPI-3.1 example 11.21);
// - plain loads and stores (smtrace_load/smtrace_store from the load/store
//   runtime, and the annotations): Local_Read / Local_Write at their seq.
// Completion at the origin: Win_flush_local (this target), Win_flush_local_all,
// the Wait/Test of an R* request, and everything that completes remotely:
// Win_flush (this target), Win_flush_all, Win_unlock (this target),
// Win_unlock_all, Win_fence, Win_complete, Win_free. An access never
// completed lasts to the end of the trace.
//
// Exemptions: accumulate-family accesses with the same basic type and the
// same op (or MPI_NO_OP) are atomic with each other (MPI 3.1 section
// 11.7.1); accumulate-family accesses of one origin to the same location
// are ordered (accumulate_ordering, default rar,raw,war,waw, section
// 11.7.2), whatever their ops; accesses made in two different lock epochs
// on the same target of the same window, at least one of them exclusive,
// never overlap in time (the target's own accesses count when it holds a
// lock on its own window); accesses inside a lock the program built from
// atomic calls, whose critical sections do not overlap in time
// (atomic_guarded).
//
// Ordering is happens-before (happens_before.hpp), not the recorded timing,
// so two puts in one epoch race even if the run separated them.
//
// Method. Every access lands in the memory of one rank, its owner. For each
// owner, each access's lifetime [start, completion] is projected onto the
// owner's timeline: K = the last point of the owner that happens before the
// start, F = the first point the completion happens before
// (HappensBefore::last_key_before / first_key_after). If F(a) <= K(b), a
// happens before b; when a or b is the owner's own event the converse holds
// too, so the projection decides exactly. Accesses are swept in order of K;
// those with the same lifetime (origin, side, completing call, lock epoch,
// atomic kind) share one access tree (access_tree.hpp: disjoint fragments,
// merged and strided as in the seed papers), which is dropped as soon as
// the sweep passes its F. Each new access is checked against the live
// trees; a conflict between two accesses that are both remote to the owner
// is confirmed with HappensBefore::ordered.
//
// Threads (threads.hpp): where a rank's threads are lanes, its timeline
// above is the lane of thread 0 (HappensBefore::on_axis). Projections onto
// it stay sound for retiring classes (F(a) <= K(b) still means a happens
// before b) but decide exactly only for accesses on it: a conflict with an
// access off it is confirmed with HappensBefore::ordered, and a load or
// store off it is a class of its own (later accesses may start before it
// in K order). Classes are per lane of their origin.
//
// A fragment names the newest access that gave it its type (Algorithm 3 of
// the seed keeps the new access's debug information), so a report names
// both call sites. Races are grouped by the pair of call sites; each group
// is one finding with its count.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analyzer/access_tree.hpp"
#include "analyzer/checks/checks.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/footprint.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/wire.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;

constexpr uint64_t k_never = UINT64_MAX;
constexpr uint32_t k_op_cas = 0xffff;   // compare-and-swap's own atomic kind
// Distinct call-site pairs reported per run; further races are counted.
constexpr std::size_t k_max_findings = 200;
// Call-site pairs ordered only through wildcard matches put to the SMT backend per run.
constexpr std::size_t k_max_predictions = 64;

// A buffer of an RMA call (format::call_buffers' answer, what finish()
// reads of it): at the origin an address, at the target a displacement.
struct RmaBuffer {
  uint64_t at = 0;                // origin: the buffer's address; target: its displacement (Buffer::offset)
  int64_t count = 0;
  uint32_t datatype = 0;
  uint8_t flags = 0;              // k_target, k_write, k_remote
  static constexpr uint8_t k_target = 1, k_write = 2, k_remote = 4;
  bool operator==(const RmaBuffer&) const = default;
};

// One RMA communication call as its origin recorded it, with when it
// completed: what finish() reads of the event (its buffers are the pass's
// rma_buffers[first, first + buffers)), not the whole event.
struct RmaOp {
  uint64_t seq = 0;
  uint64_t local_done = k_never;  // seq of the call completing it at the origin
  uint64_t remote_done = k_never; // seq of the call completing it at the target
  uint32_t site = 0;
  uint32_t window = 0;            // rank-local id
  uint32_t op = 0;                // the event's op (accumulates)
  int32_t peer = 0;               // target rank in the window's communicator, when has_peer
  uint32_t lock_epoch = 0;        // origin's lock epoch on (window, target); 0: none
  uint32_t first = 0;             // its first buffer in the pass's rma_buffers
  int64_t t_issue = 0;            // when it was called, and when the call completing it at the
  int64_t t_local_done = 0;       // origin returned (ns since the rank's clock origin; atomic_guarded)
  Call call = Call::unspecified;
  uint8_t buffers = 0;            // how many
  bool has_peer = false;
  bool lock_exclusive = false;
  std::optional<int32_t> target() const { return has_peer ? std::optional<int32_t>(peer) : std::nullopt; }
};

struct WindowMemory {
  uint32_t window = 0;            // rank-local id
  uint64_t base = 0, size = 0;
  int32_t disp_unit = 1;
  bool dynamic = false;
};

// A lock epoch a rank held (for its local accesses: those on its own window).
struct OwnLock {
  uint32_t window = 0;            // rank-local id
  uint32_t thread = 0;            // the thread that took it
  int32_t target = -1;            // rank in the window's communicator; -1: lock_all
  uint64_t open = 0, close = k_never;
  uint32_t epoch = 0;
  bool exclusive = false;
};

struct LocalAccess {
  uint64_t seq = 0;
  uint32_t site = 0;
  uint32_t thread = 0;
  uint32_t run = 0;               // where threads are lanes: its thread's events before it that were not accesses
  Call call = Call::unspecified;
  Strided where;
  bool write = false;
};

// A buffer of a point-to-point or collective call: read (send side) or
// written (receive side) from the call to its completion. What it is
// (BufferShape) apart from when (BufferCall): the calls of a loop repeat
// their shapes (a halo exchange's four), and a shape is kept once for the
// calls that follow it closely (Pass::shape_of).
struct BufferShape {
  uint64_t buf = 0;
  int64_t count = 0;
  uint32_t site = 0;
  uint32_t type = 0;
  Call call = Call::unspecified;
  bool write = false;
  bool operator==(const BufferShape&) const = default;
};

struct BufferCall {
  uint64_t seq = 0;
  uint32_t shape = 0;             // index into the pass's shapes
  uint32_t until = 0;             // the completion's seq after `seq`; k_open, k_far: see Pass::done_of
  static constexpr uint32_t k_open = UINT32_MAX;     // not completed (done: k_never)
  static constexpr uint32_t k_far = UINT32_MAX - 1;  // completed in far_done
};

class Pass final : public RankPass {
 public:
  explicit Pass(const RankData& data) : m_data(data) {}

  void event(const Event& e) override {
    const format::CallTraits& t = format::call_traits(e.call);
    // Before the rank's first window (and with no RMA request open, threads
    // not lanes) only the calls below change the pass: most events of a
    // rank that uses no RMA return here, before the frame of the rest.
    if (windows.empty() && m_by_request.empty() && m_data.header.thread_sync == 0 &&
        !matters_without_window(t))
      return;
    take(e, t);
  }

 private:
  [[gnu::noinline]] void take(const Event& e, const format::CallTraits& t) {
    // Runs of accesses with no other event of their thread between them
    // (sweep: one class per run off the owner's axis).
    if (m_data.header.thread_sync != 0 && t.role != format::Role::local_access) ++m_runs[e.thread];
    if (e.rc != 0 && !e.pending) return;
    if (!windows.empty() && !e.pending) buffers_of(e, t);
    if (t.role == format::Role::local_access) {
      if (e.buf == 0 || e.size == 0 || e.pending) return;
      const uint64_t count = std::max<int64_t>(e.count, 1);
      Strided w{e.buf, e.size, count > 1 ? static_cast<uint64_t>(e.stride) : 0, count};
      if (count > 1 && (e.stride <= 0 || static_cast<uint64_t>(e.stride) < e.size)) {
        // Blocks that touch, overlap or walk down: their hull.
        const int64_t span = e.stride * static_cast<int64_t>(count - 1);
        const uint64_t lo = span < 0 ? e.buf - static_cast<uint64_t>(-span) : e.buf;
        w = Strided{lo, static_cast<uint64_t>(span < 0 ? -span : span) + e.size, 0, 1};
      }
      locals.push_back(LocalAccess{e.seq, e.site, e.thread, m_runs.empty() ? 0 : m_runs[e.thread], e.call, w,
                                   t.buffers == format::BufferLayout::local_write});
      return;
    }
    if (e.pending) return;
    if (t.role == format::Role::rma_comm) {
      RmaOp op;
      op.seq = e.seq;
      op.site = e.site;
      op.window = e.window;
      op.op = e.op;
      op.peer = e.peer.value_or(0);
      op.has_peer = e.peer.has_value();
      op.call = e.call;
      op.t_issue = e.t_start;
      m_call_buffers.clear();
      format::call_buffers(e, {}, m_call_buffers);
      m_op_buffers.clear();
      for (const format::Buffer& b : m_call_buffers) {
        RmaBuffer rb;
        const bool target = b.arg == format::BufferArg::target;
        rb.at = target ? static_cast<uint64_t>(b.offset) : b.addr;
        rb.count = b.count;
        rb.datatype = b.datatype;
        rb.flags = static_cast<uint8_t>((target ? RmaBuffer::k_target : 0) |
                                        (b.access == format::BufferAccess::read ? 0 : RmaBuffer::k_write) |
                                        (b.lifetime == format::Lifetime::rma_remote ? RmaBuffer::k_remote : 0));
        m_op_buffers.push_back(rb);
      }
      op.first = buffers_of_op();
      op.buffers = static_cast<uint8_t>(m_op_buffers.size());
      auto lock = m_locks.find({e.window, e.peer.value_or(-1)});
      if (lock != m_locks.end()) {
        op.lock_epoch = lock->second.first;
        op.lock_exclusive = lock->second.second;
      } else if (auto all = m_lock_all.find(e.window); all != m_lock_all.end()) {
        op.lock_epoch = all->second;
      }
      if (e.request != 0) m_by_request[e.request] = ops.size();
      m_open[e.window].push_back(ops.size());
      ops.push_back(std::move(op));
      return;
    }
    switch (t.resource) {
      case format::Resource::win_new:
        windows.push_back(WindowMemory{e.window, e.win_base, e.win_size, e.disp_unit, false});
        return;
      case format::Resource::win_dynamic:
        windows.push_back(WindowMemory{e.window, 0, 0, 1, true});
        return;
      case format::Resource::win_attach:
        windows.push_back(WindowMemory{e.window, e.win_base, e.win_size, 1, true});
        return;
      case format::Resource::none: case format::Resource::comm_new: case format::Resource::comm_free:
      case format::Resource::group_new: case format::Resource::group_free: case format::Resource::type_new:
      case format::Resource::type_commit: case format::Resource::type_free: case format::Resource::op_new:
      case format::Resource::op_free: case format::Resource::win_free: case format::Resource::win_detach:
      case format::Resource::message_new: case format::Resource::message_free:
      case format::Resource::buffer_attach: case format::Resource::buffer_detach: case format::Resource::info_new:
      case format::Resource::info_free:
        break;
    }
    // Flushes, unlocks, fences, Win_complete and Win_free complete this
    // rank's operations at the origin, and (all but the local flushes) at
    // the target; locks open and close lock epochs.
    const format::EpochStep step = format::epoch_step(t.epoch);
    if (step.completes != format::Completion::none)
      complete(e, step.all_targets ? std::nullopt : e.peer, step.completes == format::Completion::remote);
    if (step.kind == format::EpochKind::passive) {
      const int32_t target = step.all_targets ? -1 : e.peer.value_or(-1);
      if (step.opens) {
        const uint32_t epoch = ++m_epochs;
        const bool exclusive = !step.all_targets && e.lock_type == format::LockType::exclusive;
        if (step.all_targets) m_lock_all[e.window] = epoch;
        else m_locks[{e.window, target}] = {epoch, exclusive};
        if (step.all_targets || e.peer)
          own_locks.push_back(OwnLock{e.window, e.thread, target, e.seq, k_never, epoch, exclusive});
      } else {
        if (step.all_targets) m_lock_all.erase(e.window);
        else m_locks.erase({e.window, target});
        close_own_lock(e.window, target, e.seq);
      }
      return;
    }
    if (format::completes_requests(t.request)) {
      for (const format::CompletedRequest& c : e.completed) {
        auto it = m_by_request.find(c.request);
        if (it == m_by_request.end()) continue;
        RmaOp& op = ops[it->second];
        if (op.local_done == k_never) {
          op.local_done = e.seq;
          op.t_local_done = e.t_start + static_cast<int64_t>(e.duration);
        }
        m_by_request.erase(it);
      }
    }
  }

 public:
  // Every event: where threads are lanes, each one ends a run of accesses.
  EventSet wants() const override { return EventSet::every(); }

  std::vector<RmaOp> ops;
  std::vector<RmaBuffer> rma_buffers;  // the ops' buffers (RmaOp::first): calls with the same buffers may share them
  std::vector<LocalAccess> locals;
  std::vector<WindowMemory> windows;
  std::vector<OwnLock> own_locks;
  std::vector<BufferCall> buffers;  // once the rank has a window: before, no RMA can reach them
  std::vector<BufferShape> shapes;  // the buffers' shapes
  std::unordered_map<uint32_t, uint64_t> far_done;  // buffer -> its completion's seq, where `until` cannot say it

  // Return the seq of the call that completed buffer `i` (k_never: none).
  uint64_t done_of(uint32_t i) const {
    const BufferCall& b = buffers[i];
    if (b.until == BufferCall::k_open) return k_never;
    if (b.until == BufferCall::k_far) return far_done.at(i);
    return b.seq + b.until;
  }
  const BufferShape& shape(uint32_t i) const { return shapes[buffers[i].shape]; }

  // Write or read (Check::save_pass, load_pass) what finish() reads of the
  // pass after its rank's last event: the lists above, whole. The rest
  // (open epochs, requests, runs) is the pass's own, for the events to come.
  template <class Coder, class P>
  static void code(Coder& c, P& p) {
    c.list(p.ops, [](auto& co, auto& op) {
      co(op.seq);
      co(op.local_done);
      co(op.remote_done);
      co(op.site);
      co(op.window);
      co(op.op);
      co(op.peer);
      co(op.lock_epoch);
      co(op.first);
      co(op.t_issue);
      co(op.t_local_done);
      co(op.call);
      co(op.buffers);
      co(op.has_peer);
      co(op.lock_exclusive);
    });
    c.list(p.rma_buffers, [](auto& cb, auto& b) {
      cb(b.at);
      cb(b.count);
      cb(b.datatype);
      cb(b.flags);
    });
    c.list(p.locals, [](auto& cl, auto& a) {
      cl(a.seq);
      cl(a.site);
      cl(a.thread);
      cl(a.run);
      cl(a.call);
      cl(a.where.lo);
      cl(a.where.size);
      cl(a.where.distance);
      cl(a.where.count);
      cl(a.write);
    });
    c.list(p.windows, [](auto& cw, auto& w) {
      cw(w.window);
      cw(w.base);
      cw(w.size);
      cw(w.disp_unit);
      cw(w.dynamic);
    });
    c.list(p.own_locks, [](auto& cl, auto& l) {
      cl(l.window);
      cl(l.thread);
      cl(l.target);
      cl(l.open);
      cl(l.close);
      cl(l.epoch);
      cl(l.exclusive);
    });
    c.list(p.buffers, [](auto& cb, auto& b) {
      cb(b.seq);
      cb(b.shape);
      cb(b.until);
    });
    c.list(p.shapes, [](auto& cs, auto& b) {
      cs(b.buf);
      cs(b.count);
      cs(b.site);
      cs(b.type);
      cs(b.call);
      cs(b.write);
    });
    // By buffer, as a list: the same pass codes to the same bytes.
    std::vector<std::pair<uint32_t, uint64_t>> far(p.far_done.begin(), p.far_done.end());
    std::sort(far.begin(), far.end());
    c.list(far, [](auto& cf, auto& f) {
      cf(f.first);
      cf(f.second);
    });
    if constexpr (!std::is_const_v<P>) p.far_done = {far.begin(), far.end()};
  }

 private:
  // Keep the buffers of point-to-point call or collective `e` (persistent
  // requests are left out), and complete those of the requests it completes.
  void buffers_of(const Event& e, const format::CallTraits& t) {
    if (format::completes_requests(t.request)) {
      complete_buffers(e);
      return;
    }
    const bool p2p = t.role == format::Role::send || t.role == format::Role::recv || t.role == format::Role::sendrecv;
    if ((!p2p && t.role != format::Role::collective) || t.request == format::RequestEffect::persistent) return;
    const std::size_t first = buffers.size();
    mpi_buffers(e, m_data, [&](const CallBuffer& b) {
      if (b.count > 0)
        buffers.push_back({e.seq, shape_of({b.addr, b.count, e.site, b.datatype, e.call, writes(b.access)}), 0});
    });
    if (t.request != format::RequestEffect::create || (t.role == format::Role::collective && e.request == 0)) return;
    for (std::size_t i = first; i < buffers.size(); ++i) {
      buffers[i].until = BufferCall::k_open;
      m_buffer_requests[e.request].push_back(i);
    }
  }

  // Return where the buffers of an RMA call (m_op_buffers) start in
  // rma_buffers: those of a call seen lately with the same buffers (a
  // small table by hash, as shape_of), else appended there.
  uint32_t buffers_of_op() {
    uint64_t h = m_op_buffers.size();
    for (const RmaBuffer& b : m_op_buffers) {
      h = (h ^ b.at) * 0x9e3779b97f4a7c15ull;
      h = (h ^ static_cast<uint64_t>(b.count)) * 0xc2b2ae3d27d4eb4full;
      h = (h ^ (uint64_t{b.datatype} << 8 | b.flags)) * 0x165667b19e3779f9ull;
    }
    uint32_t& slot = m_recent_ops[(h ^ h >> 29) % m_recent_ops.size()];
    if (slot != 0 && slot - 1 + m_op_buffers.size() <= rma_buffers.size() &&
        std::equal(m_op_buffers.begin(), m_op_buffers.end(), rma_buffers.begin() + (slot - 1)))
      return slot - 1;
    const auto first = static_cast<uint32_t>(rma_buffers.size());
    rma_buffers.insert(rma_buffers.end(), m_op_buffers.begin(), m_op_buffers.end());
    slot = first + 1;
    return first;
  }

  // Return the index of shape `s` in `shapes`: one seen lately (a small
  // table by hash, of the last shape per slot), else a new one. A shape may
  // be kept twice; never more often than the buffers it stands for.
  uint32_t shape_of(const BufferShape& s) {
    uint64_t h = s.buf * 0x9e3779b97f4a7c15ull;
    h ^= static_cast<uint64_t>(s.count) + (uint64_t{s.site} << 32 | s.type) * 0xc2b2ae3d27d4eb4full;
    h ^= (static_cast<uint64_t>(s.call) << 1 | s.write) * 0x165667b19e3779f9ull;
    uint32_t& slot = m_recent_shapes[(h ^ h >> 29) % m_recent_shapes.size()];
    if (slot != 0 && shapes[slot - 1] == s) return slot - 1;
    shapes.push_back(s);
    slot = static_cast<uint32_t>(shapes.size());
    return slot - 1;
  }

  // Set the completion of buffer `i` to `done`.
  void set_done(std::size_t i, uint64_t done) {
    BufferCall& b = buffers[i];
    if (done >= b.seq && done - b.seq < BufferCall::k_far) {
      b.until = static_cast<uint32_t>(done - b.seq);
      return;
    }
    b.until = BufferCall::k_far;
    far_done[static_cast<uint32_t>(i)] = done;
  }

  // Complete the buffers of the requests completion call `e` completes.
  void complete_buffers(const Event& e) {
    for (const format::CompletedRequest& c : e.completed) {
      auto it = m_buffer_requests.find(c.request);
      if (it == m_buffer_requests.end()) continue;
      for (std::size_t i : it->second) set_done(i, e.seq);
      m_buffer_requests.erase(it);
    }
  }

  // Complete the open operations on `window` (to `target` only, if given):
  // at the origin, and at the target too when `remote`.
  void complete(const Event& e, std::optional<int32_t> target, bool remote) {
    auto it = m_open.find(e.window);
    if (it == m_open.end()) return;
    auto& open = it->second;
    std::size_t kept = 0;
    for (std::size_t index : open) {
      RmaOp& op = ops[index];
      const bool hit = !target || op.target() == target;
      if (hit) {
        if (op.local_done == k_never) {
          op.local_done = e.seq;
          op.t_local_done = e.t_start + static_cast<int64_t>(e.duration);
        }
        if (remote && op.remote_done == k_never) op.remote_done = e.seq;
      }
      if (op.remote_done == k_never) open[kept++] = index;
    }
    open.resize(kept);
  }

  // Return true when a call of row `t` changes the pass on a rank with no
  // window yet, no RMA request open and threads not lanes: local accesses
  // (kept whatever comes), RMA calls, the calls that make a window, and
  // those that open or close epochs or locks. (The others only add buffers,
  // which are kept once the rank has a window, or complete RMA requests.)
  static bool matters_without_window(const format::CallTraits& t) {
    return t.role == format::Role::local_access || t.role == format::Role::rma_comm ||
           t.resource == format::Resource::win_new || t.resource == format::Resource::win_dynamic ||
           t.resource == format::Resource::win_attach || t.epoch != format::EpochEffect::none;
  }

  void close_own_lock(uint32_t window, int32_t target, uint64_t seq) {
    for (OwnLock& l : own_locks)
      if (l.window == window && l.target == target && l.close == k_never) l.close = seq;
  }

  uint32_t m_epochs = 0;
  std::vector<format::Buffer> m_call_buffers;                                 // an RMA call's, reused
  std::unordered_map<uint32_t, uint32_t> m_runs;                              // thread -> events that were not accesses
  std::map<std::pair<uint32_t, int32_t>, std::pair<uint32_t, bool>> m_locks;  // (window, target) -> epoch
  std::map<uint32_t, uint32_t> m_lock_all;                                    // window -> epoch
  std::unordered_map<uint64_t, std::size_t> m_by_request;
  std::unordered_map<uint32_t, std::vector<std::size_t>> m_open;              // window -> ops not remotely complete
  std::unordered_map<uint64_t, std::vector<std::size_t>> m_buffer_requests;   // request -> its buffers
  std::array<uint32_t, 256> m_recent_shapes{};                                // by hash: 1 + a shape's index; 0: none
  std::array<uint32_t, 256> m_recent_ops{};    // by hash: 1 + where a call's buffers start in rma_buffers; 0: none
  std::vector<RmaBuffer> m_op_buffers;         // the RMA call's at hand
  const RankData& m_data;
};

// local: a load or store; origin, target: an RMA call's two sides; buffer: a
// point-to-point or collective call's buffer on its own rank (typed
// Local_Read/Local_Write: it conflicts with RMA accesses only, since one
// rank's own calls and loads are local-concurrency's business).
enum class Side : uint8_t { local, origin, target, buffer };

// One access as the sweep sees it: a strided piece of memory of `owner`.
struct Item {
  int64_t k = 0, f = 0;           // projections onto the owner's timeline
  uint32_t origin = 0;            // the rank whose call or instruction made it
  uint32_t lane = 0;              // its lane there (threads.hpp; 0 on a rank that is one lane)
  uint64_t start = 0;             // seq of that call on `origin`
  uint64_t done = k_never;        // seq of its completion on `origin`
  uint32_t op = UINT32_MAX;       // index into the origin's ops (RMA); UINT32_MAX: local
  uint32_t local = UINT32_MAX;    // index into the owner's locals (Side::buffer: its buffers)
  Side side = Side::local;
  AccessType type = AccessType::local_read;
  uint32_t atomic = 0;            // accumulate kind (0: not atomic)
  uint64_t lock = 0;              // (global window, target) locked; 0: none
  uint32_t lock_epoch = 0;
  bool lock_exclusive = false;
  Strided where;
};

// Accesses sharing a lifetime: one tree.
struct Class {
  std::unique_ptr<AccessTree> tree;
  int64_t f = 0;
  uint32_t origin = 0;
  uint32_t lane = 0;
  uint64_t done = k_never;
  uint64_t first_start = k_never;
  Side side = Side::local;
  uint32_t atomic = 0;
  uint64_t lock = 0;
  uint32_t lock_epoch = 0;
  bool lock_exclusive = false;
};

// Whether a sweep's accesses count in the stats (rma_race_accesses): the
// recorded order's do, predict()'s sweep again of the same accesses does not.
enum class Counted : uint8_t { no, yes };

// Races are grouped per owner and unordered pair of (origin, site, call, side).
using SiteKey = std::tuple<uint32_t, uint32_t, uint16_t, uint8_t>;
using GroupKey = std::tuple<uint32_t, SiteKey, SiteKey>;

struct RaceGroup {
  uint32_t a = 0, b = 0;          // item indices of the first race seen (a stored, b new); once kept, in m_kept
  uint32_t owner = 0;
  bool kept = false;              // a and b index the owner's kept items
  uint64_t lo = 0, bytes = 0;
  uint64_t count = 0;
};

class RmaRace final : public Check {
 public:
  std::string_view name() const override { return "rma-race"; }
  // Accesses are address ranges: without buffer addresses there is nothing to compare.
  format::ContentSet needs() const override { return format::content_bit(format::Content::buffers); }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "two accesses to the same bytes (one of them RMA, one a write) that happens-before does "
           "not order: RMA calls at origin and target, loads and stores";
  }

  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // finish() reads each rank's RMA calls (RmaOp: what it reads of each event), loads and stores,
  // windows, own lock epochs and MPI buffers, and builds its accesses with
  // the comm table, happens-before and the replay's lanes where it runs;
  // the pass itself needs only its rank.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override {
    Pass::code(out, dynamic_cast<const Pass&>(pass));
  }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    auto p = std::make_unique<Pass>(data);
    Pass::code(in, *p);
    return p;
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    m_ctx = &ctx;
    m_passes.clear();
    for (auto& p : passes) m_passes.push_back(static_cast<Pass*>(p.get()));
    m_passes.resize(ctx.world_size(), nullptr);
    bool any_rma = false;
    for (Pass* p : m_passes) any_rma = any_rma || (p && !p->ops.empty());
    if (!any_rma) return;
    m_hb = &ctx.happens_before();
    m_exact = m_hb->exact_projections();
    m_kept.assign(ctx.world_size(), {});
    m_atomics.assign(ctx.world_size(), {});
    for (uint32_t r = 0; r < m_passes.size(); ++r) {
      if (!m_passes[r]) continue;
      const std::vector<RmaOp>& ops = m_passes[r]->ops;
      for (uint32_t i = 0; i < ops.size(); ++i)
        if (format::is_atomic(format::call_traits(ops[i].call).op)) m_atomics[r].push_back(i);
    }
    sort_incoming();
    sweep_all(Counted::yes);
    if (ScheduleOracle* oracle = ctx.schedule_oracle(); oracle && any_wildcard_match(ctx)) predict(*oracle, out);
    report(out);
  }

  void stats(std::map<std::string, uint64_t>& out) const override {
    if (m_accesses == 0) return;
    out["rma_race_accesses"] = m_accesses;
    out["rma_race_peak_nodes"] = m_peak_nodes;
    out["rma_race_nodes"] = m_settled_nodes;
    out["rma_race_node_bytes"] = AccessTree().bytes_per_node();
    if (m_candidates > 0) out["rma_race_predicted_candidates"] = m_candidates;
  }

 private:
  // Return the world rank of member `member` of rank `rank`'s window `window`.
  std::optional<uint32_t> window_member(uint32_t rank, uint32_t window, int32_t member) const {
    const CommTable& comms = m_ctx->comms();
    const uint32_t g = comms.window(rank, window);
    if (g == k_no_comm || member < 0) return std::nullopt;
    const GlobalWindow& win = comms.window_info(g);
    if (win.comm == k_no_comm) return std::nullopt;
    const GlobalComm& comm = comms.comm(win.comm);
    if (static_cast<std::size_t>(member) >= comm.world_ranks.size()) return std::nullopt;
    return comm.world_ranks[static_cast<std::size_t>(member)];
  }

  // Return the world rank owning window memory at the target of `e`, with
  // the window's memory there.
  std::optional<std::pair<uint32_t, const WindowMemory*>> target_of(uint32_t origin, const RmaOp& e) const {
    const CommTable& comms = m_ctx->comms();
    const uint32_t g = comms.window(origin, e.window);
    auto member = e.has_peer ? window_member(origin, e.window, e.peer) : std::nullopt;
    if (!member) return std::nullopt;
    const uint32_t target = *member;
    if (target >= m_passes.size() || !m_passes[target]) return std::nullopt;
    for (const WindowMemory& w : m_passes[target]->windows)
      if (comms.window(target, w.window) == g) return std::make_pair(target, &w);
    return std::nullopt;
  }

  // Return the atomic kind of RMA call `e` whose target is elements of
  // `target_type`: 0 when it is not atomic; else its basic type and op
  // (compare-and-swap: an op of its own).
  static uint32_t atomic_kind(const RankData& data, const RmaOp& e, uint32_t target_type) {
    const format::Combine combine = format::call_traits(e.call).op;
    if (!format::is_atomic(combine)) return 0;
    uint32_t basic = target_type;
    if (basic >= format::k_first_derived_id) {
      const format::DatatypeDef* def = data.datatype(basic);
      if (def && def->signature.size() == 1) basic = def->signature[0].type;
    }
    const uint32_t op = combine == format::Combine::swap ? k_op_cas : e.op;
    return (basic << 16 | (op & 0xffff)) + 1;
  }

  // Return true when atomic kinds `a` and `b` make two accesses atomic with
  // each other: the same basic type, and the same op or MPI_NO_OP.
  static bool atomic_together(uint32_t a, uint32_t b) {
    if (a == 0 || b == 0) return false;
    if (a == b) return true;
    const uint32_t ta = (a - 1) >> 16, tb = (b - 1) >> 16;
    const uint32_t oa = (a - 1) & 0xffff, ob = (b - 1) & 0xffff;
    return ta == tb && (oa == format::k_op_no_op || ob == format::k_op_no_op);
  }

  // Return true when target accesses of `origin_a` and `origin_b` with
  // atomic kinds `a` and `b` are ordered by MPI: accumulate-family calls
  // (the accumulates, Fetch_and_op, Compare_and_swap) from one origin to
  // the same location are, by default (accumulate_ordering rar,raw,war,waw,
  // MPI-3.1 section 11.7.2), whatever their ops. The tracer does not record
  // window info: a window created with accumulate_ordering=none is taken
  // as ordered too (docs/checks.md).
  static bool ordered_accumulates(uint32_t origin_a, uint32_t a, uint32_t origin_b, uint32_t b) {
    return origin_a == origin_b && a != 0 && b != 0;
  }

  void add_items(Item base, const std::vector<Strided>& pieces) {
    for (const Strided& s : pieces) {
      base.where = s;
      m_items.push_back(base);
    }
  }

  // Sort every RMA call made on another rank by the rank that owns its
  // target memory (m_incoming), in order of origin and call: build_items
  // then walks only the calls that reach its owner.
  void sort_incoming() {
    const uint32_t n = m_ctx->world_size();
    m_incoming.assign(n, {});
    for (uint32_t o = 0; o < n; ++o) {
      const Pass* pass = m_passes[o];
      if (!pass) continue;
      for (uint32_t i = 0; i < pass->ops.size(); ++i) {
        const RmaOp& op = pass->ops[i];
        const RmaBuffer* const first = pass->rma_buffers.data() + op.first;
        if (std::none_of(first, first + op.buffers, [](const RmaBuffer& b) { return b.flags & RmaBuffer::k_target; }))
          continue;
        auto target = target_of(o, op);
        if (target && target->first != o) m_incoming[target->first].emplace_back(o, i);
      }
    }
  }

  // Build into m_items the accesses to `owner`'s memory, in the order of
  // the origins, their calls and the calls' buffers, then its MPI buffers,
  // then its loads and stores (the order the sweep's ties and the first race
  // of each group follow). One owner's at a time: the accesses of all
  // owners together were the check's largest state.
  void build_items(uint32_t owner, Counted counted) {
    const uint32_t n = m_ctx->world_size();
    m_items.clear();
    const CommTable& comms = m_ctx->comms();
    std::vector<Strided>& pieces = m_pieces;
    const auto& incoming = m_incoming[owner];
    std::size_t next = 0;
    for (uint32_t o = 0; o < n; ++o) {
      Pass* pass = m_passes[o];
      if (!pass) continue;
      if (o != owner && (next == incoming.size() || incoming[next].first != o)) continue;
      const RankData& data = m_ctx->rank(o);
      const Footprint fp(data);
      auto add_op = [&](uint32_t i) {
        const RmaOp& op = pass->ops[i];
        const RmaBuffer* const first = pass->rma_buffers.data() + op.first;
        const RmaBuffer* const end = first + op.buffers;
        Item item;
        item.origin = o;
        item.start = op.seq;
        item.op = i;
        for (const RmaBuffer* b = first; b != end; ++b)
          if (b->flags & RmaBuffer::k_target) item.atomic = atomic_kind(data, op, b->datatype);
        item.lock_epoch = op.lock_epoch;
        item.lock_exclusive = op.lock_exclusive;
        auto target = target_of(o, op);
        if (op.lock_epoch != 0 && target)
          item.lock = (uint64_t{comms.window(o, op.window)} << 32 | target->first) + 1;
        // Origin buffers (format::call_buffers) until local completion, the
        // target's window memory until remote completion.
        for (const RmaBuffer* bp = first; bp != end; ++bp) {
          const RmaBuffer& b = *bp;
          pieces.clear();
          item.type = b.flags & RmaBuffer::k_write ? AccessType::rma_write : AccessType::rma_read;
          if (!(b.flags & RmaBuffer::k_target)) {
            if (o != owner) continue;
            item.side = Side::origin;
            item.done = op.local_done;
            fp.add(pieces, b.at, b.count, b.datatype);
            add_items(item, pieces);
            continue;
          }
          if (!target || target->first != owner) continue;
          const WindowMemory* mem = target->second;
          item.side = Side::target;
          // A target only read is done when the data is at the origin
          // (format::call_buffers: its lifetime is the origin's).
          item.done = b.flags & RmaBuffer::k_remote ? op.remote_done : op.local_done;
          const uint64_t unit = mem->disp_unit > 0 ? static_cast<uint64_t>(mem->disp_unit) : 1;
          const uint64_t disp = b.at;
          const uint64_t at = mem->dynamic ? disp : mem->base + disp * unit;
          fp.add(pieces, at, b.count, b.datatype);
          add_items(item, pieces);
        }
      };
      if (o == owner) {
        for (uint32_t i = 0; i < pass->ops.size(); ++i) add_op(i);
      } else {
        for (; next < incoming.size() && incoming[next].first == o; ++next) add_op(incoming[next].second);
      }
    }
    Pass* pass = m_passes[owner];
    const uint32_t r = owner;
    if (pass) {
      // Buffers of MPI calls, on their own rank.
      const Footprint fp(m_ctx->rank(r));
      for (uint32_t i = 0; i < pass->buffers.size(); ++i) {
        const BufferShape& call = pass->shape(i);
        Item item;
        item.origin = r;
        item.start = pass->buffers[i].seq;
        item.done = pass->done_of(i);
        item.local = i;
        item.side = Side::buffer;
        item.type = call.write ? AccessType::local_write : AccessType::local_read;
        pieces.clear();
        fp.add(pieces, call.buf, call.count, call.type);
        add_items(item, pieces);
      }
    }
    // Loads and stores, with the lock their rank held on its own window.
    if (pass) {
      // Off the axis, a load or store ends with the last access of its run:
      // no node of its lane lies between them, so the projections and
      // ordered() see them alike, and the run is one class (sweep). The
      // axis is the recorded run's (predict() sweeps these items again).
      const HappensBefore& hb = m_ctx->happens_before();
      std::unordered_map<uint64_t, uint64_t> run_end;  // (thread, run) -> last seq
      if (m_ctx->replay().threads(r).modelled) {
        for (const LocalAccess& a : pass->locals) {
          uint64_t& last = run_end[uint64_t{a.thread} << 32 | a.run];
          last = std::max(last, a.seq);
        }
      }
      for (uint32_t i = 0; i < pass->locals.size(); ++i) {
        const LocalAccess& a = pass->locals[i];
        Item item;
        item.origin = r;
        item.start = item.done = a.seq;
        if (!run_end.empty() && !hb.on_axis({r, a.seq})) item.done = run_end[uint64_t{a.thread} << 32 | a.run];
        item.local = i;
        item.side = Side::local;
        item.type = a.write ? AccessType::local_write : AccessType::local_read;
        item.where = a.where;
        const bool lanes = m_ctx->replay().threads(r).modelled;
        for (const OwnLock& l : pass->own_locks) {
          if (a.seq < l.open || a.seq > l.close) continue;
          // Where threads are told apart, a lock covers its own thread's accesses only.
          if (lanes && l.thread != a.thread) continue;
          if (l.target >= 0 && window_member(r, l.window, l.target) != r) continue;
          for (const WindowMemory& w : pass->windows) {
            if (w.window != l.window || w.dynamic || a.where.lo < w.base || a.where.lo >= w.base + w.size) continue;
            item.lock = (uint64_t{comms.window(r, w.window)} << 32 | r) + 1;
            item.lock_epoch = l.epoch;
            item.lock_exclusive = l.exclusive;
          }
        }
        m_items.push_back(item);
      }
    }
    if (counted == Counted::yes) m_accesses += m_items.size();
    for (Item& it : m_items) it.lane = m_ctx->replay().threads(it.origin).lane(it.start);
    project(owner);
  }

  // Project every access's lifetime onto its owner's timeline under m_hb.
  void project(uint32_t owner) {
    for (Item& it : m_items) {
      it.k = m_hb->last_key_before({it.origin, it.start}, owner);
      it.f = it.done == k_never ? std::numeric_limits<int64_t>::max()
                                : m_hb->first_key_after({it.origin, it.done}, owner);
    }
  }

  // Build, sweep and let go the accesses of each owner in turn, keeping the
  // two of each race group found (m_kept).
  void sweep_all(Counted counted) {
    for (uint32_t owner = 0; owner < m_ctx->world_size(); ++owner) {
      build_items(owner, counted);
      sweep(owner);
      for (auto& [key, g] : m_groups) {
        if (g.owner != owner || g.kept) continue;
        auto& kept = m_kept[owner];
        kept.push_back(m_items[g.a]);
        kept.push_back(m_items[g.b]);
        g.a = static_cast<uint32_t>(kept.size() - 2);
        g.b = static_cast<uint32_t>(kept.size() - 1);
        g.kept = true;
      }
    }
    m_items.clear();
    m_items.shrink_to_fit();
  }

  void sweep(uint32_t owner) {
    auto& items = m_items;
    if (items.empty()) return;
    std::vector<uint32_t> order(items.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const Item& x = items[a];
      const Item& y = items[b];
      return std::make_tuple(x.k, x.side == Side::local, x.start) < std::make_tuple(y.k, y.side == Side::local, y.start);
    });
    std::vector<Class> classes;
    std::map<std::tuple<uint32_t, uint32_t, Side, uint64_t, uint32_t, uint32_t>, uint32_t> class_of;
    std::vector<uint32_t> live;
    AccessTree locals;
    bool locals_run = false;
    std::vector<TreeConflict> conflicts;
    // Nodes held now, and at the end of an epoch: when a class retires or
    // the trace ends (the strided merge keeps up to two accesses apart
    // until a third confirms the stride, so the peak can exceed it by two).
    auto live_nodes = [&] {
      uint64_t total = locals.nodes();
      for (uint32_t c : live) total += classes[c].tree->nodes();
      return total;
    };
    auto count_nodes = [&] { m_peak_nodes = std::max(m_peak_nodes, live_nodes()); };
    auto settle = [&] { m_settled_nodes = std::max(m_settled_nodes, live_nodes()); };
    for (uint32_t index : order) {
      const Item& b = items[index];
      // Retire the classes every later access is ordered after.
      std::size_t kept = 0;
      if (std::any_of(live.begin(), live.end(), [&](uint32_t c) { return classes[c].f <= b.k; })) settle();
      for (uint32_t c : live) {
        if (classes[c].f <= b.k) {
          classes[c].tree.reset();
        } else {
          live[kept++] = c;
        }
      }
      live.resize(kept);
      // A load or store off the owner's axis (another thread's, where
      // threads are lanes) is not ordered by its projection: its run of
      // accesses (build_items) becomes a class, which later accesses probe
      // like an RMA call's.
      if (b.side == Side::local && m_hb->on_axis({b.origin, b.start})) {
        if (!locals_run) locals.clear();
        locals_run = true;
        for (uint32_t c : live) probe(owner, classes[c], index, b);
        locals.insert(b.where, b.type, index, nullptr);
        count_nodes();
        continue;
      }
      locals_run = false;
      const auto key = std::make_tuple(b.origin, b.lane, b.side, b.done, b.atomic, b.lock_epoch);
      auto [it, added] = class_of.try_emplace(key, static_cast<uint32_t>(classes.size()));
      if (added) {
        Class c;
        c.tree = std::make_unique<AccessTree>();
        c.f = b.f;
        c.origin = b.origin;
        c.lane = b.lane;
        c.done = b.done;
        c.side = b.side;
        c.atomic = b.atomic;
        c.lock = b.lock;
        c.lock_epoch = b.lock_epoch;
        c.lock_exclusive = b.lock_exclusive;
        classes.push_back(std::move(c));
        live.push_back(it->second);
      }
      Class& own = classes[it->second];
      if (!own.tree) {
        // A class retired and seen again (its accesses all ordered before):
        // start it afresh.
        own.tree = std::make_unique<AccessTree>();
        own.f = b.f;
        live.push_back(it->second);
      }
      own.first_start = std::min(own.first_start, b.start);
      for (uint32_t c : live)
        if (c != it->second) probe(owner, classes[c], index, b);
      conflicts.clear();
      own.tree->insert(b.where, b.type, index, &conflicts);
      // Two accesses of one class are concurrent (issued before one
      // completion); only atomicity exempts them.
      const bool ordered = own.side == Side::target && ordered_accumulates(own.origin, own.atomic, b.origin, b.atomic);
      if (!atomic_together(own.atomic, b.atomic) && !ordered) {
        for (const TreeConflict& tc : conflicts) record(owner, tc.old_tag, index, tc.lo, tc.bytes);
      }
      count_nodes();
    }
    settle();
  }

  // Check access `b` (item `index`) against the fragments of class `c`.
  void probe(uint32_t owner, const Class& c, uint32_t index, const Item& b) {
    if (atomic_together(c.atomic, b.atomic)) return;
    if (c.side == Side::target && b.side == Side::target && ordered_accumulates(c.origin, c.atomic, b.origin, b.atomic))
      return;
    // Lock epoch ids count per rank: two epochs differ when their ranks do.
    const bool other_epoch = c.origin != b.origin || c.lock_epoch != b.lock_epoch;
    if (c.lock != 0 && c.lock == b.lock && other_epoch && (c.lock_exclusive || b.lock_exclusive)) return;
    bool checked = false, concurrent = true;
    c.tree->query(b.where, [&](const AccessTree::Fragment& frag) {
      if (!conflicts(frag.type, b.type)) return;
      if (!checked) {
        checked = true;
        concurrent = unordered(owner, c, b) && !atomic_guarded(c, b);
      }
      if (!concurrent) return;
      const auto [lo, bytes] = overlap(frag.where, b.where);
      record(owner, frag.tag, index, lo, bytes);
    });
  }

  // Where an accumulate-family call lands: the global window, the target's
  // world rank, and the displacement, count and predefined type there.
  struct AtomicPlace {
    uint32_t window = 0, target = 0;
    uint64_t at = 0;
    int64_t count = 0;
    uint32_t type = 0;
    bool operator==(const AtomicPlace&) const = default;
  };
  std::optional<AtomicPlace> atomic_place(uint32_t origin, const RmaOp& op) const {
    if (!format::is_atomic(format::call_traits(op.call).op)) return std::nullopt;
    const RmaBuffer* const first = m_passes[origin]->rma_buffers.data() + op.first;
    const RmaBuffer* const end = first + op.buffers;
    const RmaBuffer* t = std::find_if(first, end, [](const RmaBuffer& b) { return b.flags & RmaBuffer::k_target; });
    if (t == end || t->datatype >= format::k_first_derived_id) return std::nullopt;
    auto target = target_of(origin, op);
    if (!target) return std::nullopt;
    return AtomicPlace{m_ctx->comms().window(origin, op.window), target->first, t->at, t->count, t->datatype};
  }
  // An atomic call that returns what it found (Compare_and_swap,
  // Fetch_and_op, Get_accumulate: a result buffer), and one that writes
  // its target (not with MPI_NO_OP).
  bool returns_value(uint32_t origin, const RmaOp& op) const {
    const RmaBuffer* const first = m_passes[origin]->rma_buffers.data() + op.first;
    return std::any_of(first, first + op.buffers, [](const RmaBuffer& b) {
      return !(b.flags & RmaBuffer::k_target) && (b.flags & RmaBuffer::k_write);
    });
  }
  bool writes_target(uint32_t origin, const RmaOp& op) const {
    const RmaBuffer* const first = m_passes[origin]->rma_buffers.data() + op.first;
    return std::any_of(first, first + op.buffers, [](const RmaBuffer& b) {
      return (b.flags & RmaBuffer::k_target) && (b.flags & RmaBuffer::k_write);
    });
  }

  // A lock the program built from atomics (MPI-3.1 section 11.7.1: atomic
  // calls on one location are applied one at a time): rank r's access
  // issued at seq `start` and completed at its target by seq `done` lies
  // between an acquire, an atomic call on place P returning what it found
  // and completed before `start` with no release of P between, and a
  // release, the first atomic call on P issued after `done`, which writes
  // it. Call `f(P, from, to)` for each such lock (innermost first, at most
  // a few), `from` and `to` on the monotonic clock: the acquire's
  // completion returned, the release was called; stop when it returns true.
  template <class F>
  bool each_atomic_lock(uint32_t r, uint64_t start, uint64_t done, F&& f) const {
    constexpr std::size_t k_scan = 4096, k_locks = 4;
    const std::vector<RmaOp>& ops = m_passes[r]->ops;
    const std::vector<uint32_t>& atomics = m_atomics[r];  // ops[atomics[i]]: in seq order
    const int64_t origin_ns = m_ctx->rank(r).header.clock_origin_ns;
    const auto before = static_cast<std::size_t>(
        std::lower_bound(atomics.begin(), atomics.end(), start, [&](uint32_t i, uint64_t seq) { return ops[i].seq < seq; }) -
        atomics.begin());
    const auto after = static_cast<std::size_t>(
        std::upper_bound(atomics.begin(), atomics.end(), done, [&](uint64_t seq, uint32_t i) { return seq < ops[i].seq; }) -
        atomics.begin());
    std::vector<AtomicPlace> released;  // places released between a candidate acquire and the access
    std::size_t locks = 0;
    for (std::size_t i = before; i-- > 0 && before - i <= k_scan && locks < k_locks;) {
      const RmaOp& y = ops[atomics[i]];
      const auto place = atomic_place(r, y);
      if (!place) continue;
      const bool released_since = std::find(released.begin(), released.end(), *place) != released.end();
      if (writes_target(r, y)) released.push_back(*place);  // (an acquire writes too: an older one is not it)
      if (released_since || y.local_done == k_never || y.local_done >= start || !returns_value(r, y)) continue;
      for (std::size_t j = after; j < atomics.size() && j - after < k_scan; ++j) {
        const RmaOp& x = ops[atomics[j]];
        if (atomic_place(r, x) != place) continue;
        if (!writes_target(r, x)) break;  // the first atomic call on P after the access must release it
        ++locks;
        if (f(*place, origin_ns + y.t_local_done, origin_ns + x.t_issue)) return true;
        break;
      }
    }
    return false;
  }

  // Return true when target accesses `c` and `b` of two origins each lie
  // inside a lock the program built from atomics on one place
  // (each_atomic_lock) and their two critical sections, acquire completed
  // to release called, do not overlap in time. A correct lock keeps them
  // apart (the second acquire finds the first release's value, so it
  // completes after that release was called); a lock that fails to
  // exclude them lets them overlap, and they are compared as before. Only
  // ranks on one host, whose monotonic clocks are one clock.
  bool atomic_guarded(const Class& c, const Item& b) const {
    if (c.side != Side::target || b.side != Side::target || c.origin == b.origin || c.done == k_never ||
        b.done == k_never)
      return false;
    const format::RankHeader& ha = m_ctx->rank(c.origin).header;
    const format::RankHeader& hb = m_ctx->rank(b.origin).header;
    if (ha.host.empty() || ha.host != hb.host || ha.clock != format::ClockKind::monotonic ||
        hb.clock != format::ClockKind::monotonic)
      return false;
    return each_atomic_lock(c.origin, c.first_start, c.done, [&](const AtomicPlace& place, int64_t from, int64_t to) {
      return each_atomic_lock(b.origin, b.start, b.done, [&](const AtomicPlace& other, int64_t bfrom, int64_t bto) {
        return other == place && (to < bfrom || bto < from);
      });
    });
  }

  // Return true when class `c` and access `b` are not ordered. The sweep's
  // projections are exact when either lies on the owner's timeline.
  bool unordered(uint32_t owner, const Class& c, const Item& b) const {
    const bool on_axis = (c.origin == owner && m_hb->on_axis({c.origin, c.first_start})) ||
                         (b.origin == owner && m_hb->on_axis({b.origin, b.start}));
    if (on_axis && m_exact) return true;
    if (c.origin == b.origin && c.lane == b.lane) {
      // One timeline: ordered when one completes before the other starts.
      return !((c.done != k_never && c.done < b.start) || (b.done != k_never && b.done < c.first_start));
    }
    if (c.done != k_never && m_hb->ordered({c.origin, c.done}, {b.origin, b.start})) return false;
    if (b.done != k_never && m_hb->ordered({b.origin, b.done}, {c.origin, c.first_start})) return false;
    return true;
  }

  // Return true when a receive posted with MPI_ANY_SOURCE took a message
  // (its match is an edge of happens-before that another run may not have).
  static bool any_wildcard_match(const Context& ctx) {
    const Replay& replay = ctx.replay();
    for (uint32_t r = 0; r < ctx.world_size(); ++r) {
      const auto& ops = replay.p2p(r);
      for (uint32_t i = 0; i < ops.size(); ++i) {
        if (!ops[i].send && ops[i].peer == format::k_any_source && replay.matched({r, i})) return true;
      }
    }
    return false;
  }

  // Predictive races (issue 5, 3d): sweep again over happens-before without
  // the matches of wildcard receives. A pair of accesses that races there
  // but not in the recorded order is ordered only through such a match;
  // the SMT backend decides whether another execution lets the later one
  // start before the earlier one ends (a race, with a witness), proves that
  // none does, or cannot tell in its budget (reported as undecided).
  void predict(ScheduleOracle& oracle, std::vector<Finding>& out) {
    const HappensBefore* full = m_hb;
    HappensBefore weak;
    weak.build(*m_ctx, HappensBefore::Matches::deterministic);
    auto confirmed = std::move(m_groups);
    m_groups.clear();
    const uint64_t peak = m_peak_nodes, settled = m_settled_nodes;  // the figures of the recorded order
    m_hb = &weak;
    m_exact = weak.exact_projections();
    sweep_all(Counted::no);
    auto candidates = std::move(m_groups);
    m_groups = std::move(confirmed);
    // The kept items hold the projections of `weak`: nothing reads those after the sweeps.
    m_hb = full;
    m_exact = full->exact_projections();
    m_peak_nodes = peak;
    m_settled_nodes = settled;

    std::vector<ScheduleQuestion> questions;
    std::vector<const std::pair<const GroupKey, RaceGroup>*> asked;
    uint64_t not_asked = 0;
    for (const auto& entry : candidates) {
      const auto& [key, g] = entry;
      if (m_groups.count(key)) continue;
      const Item& x = m_kept[g.owner][g.a];
      const Item& y = m_kept[g.owner][g.b];
      // The recorded order: the access whose end happens before the other's start.
      const Item* first = nullptr;
      const Item* second = nullptr;
      if (x.done != k_never && m_hb->ordered({x.origin, x.done}, {y.origin, y.start})) {
        first = &x;
        second = &y;
      } else if (y.done != k_never && m_hb->ordered({y.origin, y.done}, {x.origin, x.start})) {
        first = &y;
        second = &x;
      } else {
        continue;  // ordered neither way after all (the projections are bounds): nothing to predict
      }
      ++m_candidates;
      if (questions.size() == k_max_predictions) {
        ++not_asked;
        continue;
      }
      questions.push_back({{first->origin, first->done}, {second->origin, second->start},
                           {first->origin, first->start}, {second->origin, second->start}});
      asked.push_back(&entry);
    }
    if (questions.empty()) return;
    const std::vector<ScheduleAnswer> answers = oracle.can_reorder(*m_ctx, questions);
    for (std::size_t i = 0; i < asked.size() && i < answers.size(); ++i) {
      const auto& [key, g] = *asked[i];
      const ScheduleAnswer& a = answers[i];
      if (a.verdict == ScheduleAnswer::Verdict::infeasible) continue;  // ordered in every execution
      if (a.verdict == ScheduleAnswer::Verdict::feasible) {
        m_groups.emplace(key, g);
        m_predicted.emplace(key, a.notes);
        continue;
      }
      Finding f = race_finding(g, true);
      f.severity = Severity::info;
      f.message = fmt::format("possible {}; whether another match lets them overlap is undecided ({})", f.message,
                              a.reason.empty() ? "unknown" : a.reason);
      out.push_back(std::move(f));
    }
    if (not_asked > 0) {
      Finding f;
      f.kind = std::string(name());
      f.severity = Severity::info;
      f.message = fmt::format("{} further pairs of call sites ordered only through wildcard matches were not put to "
                              "the SMT backend (at most {} per run)", not_asked, k_max_predictions);
      out.push_back(std::move(f));
    }
  }

  // Return the first overlapping bytes of `a` and `b` (lo) and how many bytes
  // overlap in all (counted block by block when both are small).
  static std::pair<uint64_t, uint64_t> overlap(const Strided& a, const Strided& b) {
    uint64_t first = UINT64_MAX, bytes = 0;
    auto each = [](const Strided& s, auto&& fn) {
      const uint64_t n = std::min<uint64_t>(s.count, 4096);
      for (uint64_t k = 0; k < n; ++k) fn(s.lo + k * s.distance, s.lo + k * s.distance + s.size);
    };
    each(a, [&](uint64_t alo, uint64_t ahi) {
      each(b, [&](uint64_t blo, uint64_t bhi) {
        const uint64_t lo = std::max(alo, blo), hi = std::min(ahi, bhi);
        if (lo < hi) {
          first = std::min(first, lo);
          bytes += hi - lo;
        }
      });
    });
    return {first == UINT64_MAX ? std::max(a.lo, b.lo) : first, bytes};
  }

  // Return the site and call of item `it`.
  std::pair<uint32_t, Call> site_of(uint32_t owner, const Item& it) const {
    if (it.side == Side::local) {
      const LocalAccess& a = m_passes[owner]->locals[it.local];
      return {a.site, a.call};
    }
    if (it.side == Side::buffer) {
      const BufferShape& b = m_passes[owner]->shape(it.local);
      return {b.site, b.call};
    }
    const RmaOp& e = m_passes[it.origin]->ops[it.op];
    return {e.site, e.call};
  }

  void record(uint32_t owner, uint32_t a, uint32_t b, uint64_t lo, uint64_t bytes) {
    const Item& x = m_items[a];
    const Item& y = m_items[b];
    auto sx = site_of(owner, x), sy = site_of(owner, y);
    auto kx = std::make_tuple(x.origin, sx.first, static_cast<uint16_t>(sx.second), static_cast<uint8_t>(x.side));
    auto ky = std::make_tuple(y.origin, sy.first, static_cast<uint16_t>(sy.second), static_cast<uint8_t>(y.side));
    const auto key = std::make_tuple(owner, std::min(kx, ky), std::max(kx, ky));
    auto [it, added] = m_groups.try_emplace(key);
    RaceGroup& g = it->second;
    if (added) {
      g.a = a;
      g.b = b;
      g.owner = owner;
      g.lo = lo;
      g.bytes = bytes;
    }
    ++g.count;
  }

  // Return "rank R", or "thread T of rank R" where the rank's threads are
  // lanes (threads.hpp), for the rank `rank` that made item `it`.
  std::string rank_text(uint32_t rank, const Item& it) const {
    const RankThreads& t = m_ctx->replay().threads(rank);
    if (!t.modelled) return fmt::format("rank {}", rank);
    return fmt::format("{} of rank {}", t.lane_name(it.lane), rank);
  }

  // Return how report lines describe item `it` of `owner`'s memory.
  std::string describe(uint32_t owner, const Item& it) const {
    if (it.side == Side::local) {
      const LocalAccess& a = m_passes[owner]->locals[it.local];
      if (a.call == Call::Buffer_modified)
        return fmt::format("a change of its bytes on {} before the synchronization call", rank_text(owner, it));
      return fmt::format("a {} on {}", a.write ? "store" : "load", rank_text(owner, it));
    }
    if (it.side == Side::buffer) {
      const BufferShape& b = m_passes[owner]->shape(it.local);
      return fmt::format("{} on {} ({} its {} buffer)", format::call_name(b.call), rank_text(owner, it),
                         b.write ? "writing" : "reading", b.write ? "receive" : "send");
    }
    const RmaOp& e = m_passes[it.origin]->ops[it.op];
    const std::string call(format::call_name(e.call));
    if (it.side == Side::origin)
      return fmt::format("{} on {} ({} its {} buffer)", call, rank_text(it.origin, it),
                         it.type == AccessType::rma_write ? "writing" : "reading",
                         it.type == AccessType::rma_write ? "result" : "origin");
    return fmt::format("{} from {} ({} the window)", call, rank_text(it.origin, it),
                       it.type == AccessType::rma_write ? "writing" : "reading");
  }

  Location locate(uint32_t owner, const Item& it, std::string role) const {
    const auto [site, call] = site_of(owner, it);
    std::string note = fmt::format("{}: {}", role, access_type_name(it.type));
    if (it.side != Side::local) {
      const uint64_t done = it.done;
      if (done == k_never) {
        note += ", never completed";
      } else {
        note += fmt::format(", completed at {}", EventRef{it.origin, done}.str());
      }
    }
    return m_ctx->location({it.origin, it.start}, call, site, note);
  }

  // Return the finding of race group `g` (both call sites, the count); a
  // `predicted` race is one of another execution.
  Finding race_finding(const RaceGroup& g, bool predicted = false) const {
    const Item& x = m_kept[g.owner][g.a];
    const Item& y = m_kept[g.owner][g.b];
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    f.message = fmt::format("data race{} on rank {}'s memory at {:#x} ({} byte{}): {} and {} are {}",
                            predicted ? " in another execution" : "", g.owner, g.lo, g.bytes, g.bytes == 1 ? "" : "s",
                            describe(g.owner, y), describe(g.owner, x),
                            predicted ? "ordered in this run only through the message a wildcard receive took"
                                      : "not ordered");
    f.locations.push_back(locate(g.owner, y, "this access"));
    f.locations.push_back(locate(g.owner, x, "conflicts with this one"));
    if (g.count > 1) f.notes.push_back(fmt::format("{} races between these two call sites", g.count));
    for (const Item* it : {&y, &x}) {
      if (it->side == Side::local && m_passes[g.owner]->locals[it->local].call == Call::Buffer_modified) {
        f.notes.push_back("the tracer's hash of the origin buffer at the RMA call differs from the one when the "
                          "synchronization call that completes it was entered: the buffer must not be updated until "
                          "the operation completes at the origin (MPI-4.0 12.3); the store itself was not seen "
                          "(build with smtrace-cc to see where)");
        break;
      }
    }
    if (x.origin == y.origin && x.lane != y.lane) {
      const RankThreads& t = m_ctx->replay().threads(x.origin);
      f.notes.push_back(fmt::format("{} and {} of rank {}: no thread synchronization or MPI call orders them",
                                    t.lane_name(y.lane), t.lane_name(x.lane), x.origin));
    }
    return f;
  }

  void report(std::vector<Finding>& out) {
    std::size_t emitted = 0;
    uint64_t dropped = 0;
    for (const auto& [key, group] : m_groups) {
      const RaceGroup* g = &group;
      if (emitted == k_max_findings) {
        dropped += g->count;
        continue;
      }
      auto predicted = m_predicted.find(key);
      Finding f = race_finding(*g, predicted != m_predicted.end());
      if (predicted != m_predicted.end()) f.notes.insert(f.notes.end(), predicted->second.begin(), predicted->second.end());
      out.push_back(std::move(f));
      ++emitted;
    }
    if (dropped > 0) {
      Finding f;
      f.kind = std::string(name());
      f.severity = severity();
      f.message = fmt::format("{} further races between other call sites not listed", dropped);
      out.push_back(std::move(f));
    }
  }

  const Context* m_ctx = nullptr;
  const HappensBefore* m_hb = nullptr;
  bool m_exact = true;
  std::vector<Pass*> m_passes;
  std::vector<std::vector<uint32_t>> m_atomics;  // per rank: its accumulate-family calls (ops indices)
  std::vector<Item> m_items;                // the accesses of the owner being swept
  std::vector<std::vector<Item>> m_kept;    // per owner: the two accesses of each race group (RaceGroup::a, b)
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_incoming;  // per owner: (origin, op) reaching it
  std::vector<Strided> m_pieces;
  std::map<GroupKey, RaceGroup> m_groups;
  std::map<GroupKey, std::vector<std::string>> m_predicted;  // races of another execution: the witness notes
  uint64_t m_candidates = 0;  // call-site pairs ordered only through wildcard matches
  uint64_t m_accesses = 0;
  uint64_t m_peak_nodes = 0;
  uint64_t m_settled_nodes = 0;  // the most nodes at an epoch's end
};

}  // namespace

std::unique_ptr<Check> make_rma_race() { return std::make_unique<RmaRace>(); }

}  // namespace smtrace::analyzer::checks
