// local-concurrency: a buffer in use by a pending non-blocking operation is
// touched by something else on the same rank before the operation completes.
//
// Rules (MPI 3.1 sections 3.7.2, 5.12 and 11.3): while an operation is
// pending, its send buffer may be read by other calls (MPI >= 3.0 allows
// concurrent reads) but not written; its receive buffer may be neither read
// nor written, which also makes two pending receives into overlapping memory
// an error.
//
// Each rank keeps the byte footprints of its pending operations in one map
// of disjoint segments (segment_map.hpp), each segment counting how many pending operations
// read and how many write it. Posting, completing and checking an access
// touch O(log n + segments in the range) entries. Which operation owns a
// conflicting segment is looked up only when a conflict is found (rare).
//
// A conflict is reported when the pending operation completes (so the report
// can name the completing call) or at the end of the rank. A send freed
// with MPI_Request_free while active stays pending to the end of the rank
// (nothing in the trace completes it); finish() drops its conflicts with
// accesses that the completion of its matching receive happens before (the
// program learned of the delivery, MPI-3.1 section 3.7.3).
//
// Threads: on a rank whose thread synchronization was recorded
// (threads.hpp: its threads are lanes of happens-before), an access by one
// thread conflicts with another thread's operation whenever happens-before
// orders it neither before the posting call nor after the completing one,
// wherever the two fell in the recorded order; the pass keeps such a rank's
// accesses and operation lifetimes, and finish() compares those of
// different threads (a conflict found in the recorded order that
// happens-before orders is dropped). Elsewhere the threads of a rank are
// one program order, in the order their events were written.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/footprint.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/request_map.hpp"
#include "analyzer/segment_map.hpp"
#include "analyzer/wire.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;
using format::RequestEffect;

// More blocks than this in one buffer: its hull is used instead (may report
// a conflict between interleaved buffers that do not really overlap).
constexpr std::size_t k_max_blocks = 4096;
// Conflicts kept per pending operation, and reported per rank.
constexpr std::size_t k_max_conflicts_per_op = 4;
constexpr std::size_t k_max_reports = 64;

using Mode = AccessMode;

struct Block {
  uint64_t lo = 0, hi = 0;  // [lo, hi)
  Mode mode = Mode::read;
};

struct Conflict {
  uint64_t seq = 0;
  uint32_t site = 0;
  Call call = Call::unspecified;
  Mode access = Mode::read;
  bool receive_post = false;  // the access is another receive being posted
  bool op_writes = false;     // the pending operation writes the bytes in conflict
  uint64_t lo = 0, hi = 0;     // the first overlapping bytes
};

// A pending (or persistent) operation, apart from its blocks and conflicts.
struct OpHead {
  uint64_t seq = 0;                    // posting event (the Start for persistent ones)
  uint64_t order = 0;                  // when active: activations before it on the rank, + 1
  uint64_t free_seq = 0;               // Request_free while active
  uint32_t site = 0;
  uint32_t free_site = 0;
  Call call = Call::unspecified;       // the creating call (Isend, Recv_init...)
  Call post_call = Call::unspecified;  // Isend..., or Start/Startall
  bool persistent = false;
  bool active = false;
  bool freed = false;
  uint32_t piece = 0;                  // one block, active: what SegmentMap::add gave for it
};

// An operation of several blocks (or none), or of one with conflicts: the
// table's Many (request_map.hpp).
struct PendingOp : OpHead {
  std::vector<Block> blocks;           // sorted, disjoint per mode
  std::vector<Conflict> conflicts;
};

// The pending operations by request id. One of one block (a contiguous
// buffer: most posts) and no conflict is the table's small One, no
// vector; its first conflict makes it a PendingOp (Pass::find_owner).
using Ops = BlockRequestMap<OpHead, Block, PendingOp>;
using OneBlockOp = Ops::One;

std::span<const Block> blocks_of(const PendingOp& op) { return op.blocks; }
std::span<const Block> blocks_of(const OneBlockOp& op) { return {&op.block, 1}; }

// Set `op` to a new operation's defaults, keeping its vectors' storage (StableRequestMap).
void reset(PendingOp& op) {
  static_cast<OpHead&>(op) = OpHead{};
  op.blocks.clear();
  op.conflicts.clear();
}

// What a rank whose threads are lanes keeps: each access, and each
// operation's lifetime from its posting to its completion.
struct Touch {
  uint64_t seq = 0;
  uint32_t site = 0;
  Call call = Call::unspecified;
  bool receive_post = false;
  std::vector<Block> blocks;
};
struct Lifetime {
  Call op_call = Call::unspecified, post_call = Call::unspecified, done_call = Call::unspecified;
  uint64_t post_seq = 0, done_seq = 0;
  uint32_t post_site = 0, done_site = 0;
  bool done = false, freed = false;
  std::vector<Block> blocks;
};

// One conflict, ready to report.
struct Record {
  Call op_call = Call::unspecified, post_call = Call::unspecified;
  uint64_t post_seq = 0;
  uint32_t post_site = 0;
  uint64_t op_lo = 0, op_hi = 0;
  Conflict conflict;
  Call done_call = Call::unspecified;  // unspecified: never completed
  uint64_t done_seq = 0;
  uint32_t done_site = 0;
  bool freed = false;
};

// Return the record of conflict `c` with operation `op_call` (posted by
// `post_call` at `post_seq`, `post_site`) over `blocks`, not yet completed:
// the buffer named is the hull of the side in conflict (send or receive).
Record record_of(Call op_call, Call post_call, uint64_t post_seq, uint32_t post_site, const std::vector<Block>& blocks,
                 const Conflict& c) {
  Record r;
  r.op_call = op_call;
  r.post_call = post_call;
  r.post_seq = post_seq;
  r.post_site = post_site;
  const Mode side = c.op_writes ? Mode::write : Mode::read;
  r.op_lo = std::numeric_limits<uint64_t>::max();
  for (const Block& b : blocks)
    if (b.mode == side) r.op_lo = std::min(r.op_lo, b.lo), r.op_hi = std::max(r.op_hi, b.hi);
  if (r.op_hi == 0) r.op_lo = 0;
  r.conflict = c;
  return r;
}

bool overlaps(const Block& b, uint64_t lo, uint64_t hi) { return b.lo < hi && lo < b.hi; }

// Append to `out` the blocks of one buffer whose bytes are `pieces`
// (footprint.hpp's strided pieces), block by block (more than
// k_max_blocks blocks: their hull).
void add_blocks(std::vector<Block>& out, std::span<const Strided> pieces, Mode mode) {
  auto push = [&](uint64_t lo, uint64_t hi) {
    if (hi > lo) out.push_back(Block{lo, hi, mode});
  };
  // One block (a contiguous buffer: most calls): itself, as the loops below make it.
  if (pieces.size() == 1 && pieces.front().count == 1) {
    push(pieces.front().lo, pieces.front().lo + pieces.front().size);
    return;
  }
  uint64_t blocks = 0, lo = UINT64_MAX, hi = 0;
  for (const Strided& p : pieces) {
    blocks += p.count;
    lo = std::min(lo, p.lo);
    hi = std::max(hi, p.lo + (p.count - 1) * p.distance + p.size);
  }
  if (blocks > k_max_blocks) {
    push(lo, hi);
    return;
  }
  for (const Strided& p : pieces)
    for (uint64_t j = 0; j < p.count; ++j) push(p.lo + j * p.distance, p.lo + j * p.distance + p.size);
}

// Sort `blocks` (two or more) and merge overlapping or adjacent ones of the same mode.
[[gnu::noinline]] void normalize_many(std::vector<Block>& blocks) {
  std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) {
    return std::tie(a.mode, a.lo, a.hi) < std::tie(b.mode, b.lo, b.hi);
  });
  std::size_t out = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (out > 0 && blocks[out - 1].mode == blocks[i].mode && blocks[i].lo <= blocks[out - 1].hi) {
      blocks[out - 1].hi = std::max(blocks[out - 1].hi, blocks[i].hi);
    } else {
      blocks[out++] = blocks[i];
    }
  }
  blocks.resize(out);
}

// Sort `blocks` and merge overlapping or adjacent ones of the same mode.
inline void normalize(std::vector<Block>& blocks) {
  if (blocks.size() >= 2) normalize_many(blocks);  // one block (most calls): sorted and merged already
}

class Pass final : public RankPass {
 public:
  explicit Pass(const RankData& data)
      : m_data(data) {}

  void event(const Event& e) override {
    if (e.rc != 0) return;  // a failed call touched nothing (or we cannot tell what)
    lanes = m_data.header.thread_sync != 0;
    m_scratch.clear();
    const format::CallTraits& t = format::call_traits(e.call);
    switch (t.request) {
      case RequestEffect::start:
        if (e.requests.empty()) start(e, e.request);
        for (uint64_t r : e.requests) start(e, r);
        return;
      case RequestEffect::free:
        request_free(e);
        return;
      case RequestEffect::complete_all: case RequestEffect::complete_any: case RequestEffect::complete_some:
        if (!e.pending) complete_each(e);
        return;
      case RequestEffect::cancel:
        return;
      case RequestEffect::query:  // MPI_Request_get_status returning true: the operation is complete
        if (!e.pending && e.flag.value_or(false)) complete_one(e, e.request);
        return;
      case RequestEffect::none: case RequestEffect::create: case RequestEffect::persistent:
        break;
    }
    if (t.role == format::Role::local_access) {
      local_access(e, t.buffers == format::BufferLayout::local_read ? Mode::read : Mode::write);
      access(e, false);
      return;
    }
    // An RMA call with a request (MPI_Rput, MPI_Rget...) is checked at the
    // call as one without: what may touch its origin buffer until MPI_Wait
    // or the epoch completes it is rma-race's business (one finding per
    // store, not one of each check).
    const bool posts = t.request == RequestEffect::create && t.role != format::Role::rma_comm;
    const EventBuffers& buffers = event_buffers(e, m_data);
    if (posts && buffers.buffers.size() == 1) {
      // A post of one contiguous buffer (most): its one block, as add_blocks
      // makes it, without m_scratch (std::vector::push_back is out of line).
      const BufferBytes& b = buffers.buffers.front();
      const Strided* p = b.last - b.first == 1 ? &buffers.pieces[b.first] : nullptr;
      if (p && p->count == 1 && p->lo + p->size > p->lo) {
        post_one(e, Block{p->lo, p->lo + p->size, writes(b.buffer.access) ? Mode::write : Mode::read});
        return;
      }
    }
    for (const BufferBytes& b : buffers.buffers)
      add_blocks(m_scratch, std::span<const Strided>(buffers.pieces).subspan(b.first, b.last - b.first),
                 writes(b.buffer.access) ? Mode::write : Mode::read);
    switch (t.request) {
      case RequestEffect::create:
        if (!posts) break;
        post(e, e.call, false, m_scratch);
        return;
      case RequestEffect::persistent:
        if (e.request != 0) define_persistent(e);
        return;
      case RequestEffect::none: case RequestEffect::start: case RequestEffect::complete_all:
      case RequestEffect::complete_any: case RequestEffect::complete_some: case RequestEffect::free:
      case RequestEffect::cancel: case RequestEffect::query:
        break;
    }
    // Blocking calls and RMA calls: their buffers are checked at the call
    // (the epoch or request that completes an RMA call is rma-race's
    // business).
    access(e, false);
    if (lanes && !m_scratch.empty() && (t.family == format::Family::p2p || t.family == format::Family::coll)) {
      blocking_lifetime(e);
    }
  }

  // Calls on requests, loads and stores, and calls with buffers (the others
  // have none: event_buffers() is empty for them); every event where the
  // rank's threads are lanes (`lanes` is set by the first event).
  EventSet wants() const override {
    if (m_data.header.thread_sync != 0) return EventSet::every();
    return EventSet::of([](const format::CallTraits& t) {
      return t.request != RequestEffect::none || t.role == format::Role::local_access ||
             t.buffers != format::BufferLayout::none;
    });
  }

  // Move the conflicts of operations still pending into the records, in
  // the order the operations were posted (the cap and the deduplication
  // keep the earliest).
  void end() override {
    std::vector<PendingOp*> active;
    m_ops.each_many([&](PendingOp& op) {
      if (op.active) active.push_back(&op);
    });
    std::sort(active.begin(), active.end(), [](const PendingOp* a, const PendingOp* b) { return a->order < b->order; });
    for (PendingOp* op : active) retire(*op, nullptr);
  }

  std::vector<Record> records;
  uint64_t suppressed = 0;
  std::vector<Touch> touches;        // ranks whose threads are lanes only
  std::vector<Lifetime> lifetimes;
  bool lanes = false;

 private:
  // Check the accesses in m_scratch (normalized here) against the pending
  // operations; `receive_post`: they post a receive.
  void access(const Event& e, bool receive_post) {
    normalize(m_scratch);
    if (lanes && !m_scratch.empty()) touches.push_back(Touch{e.seq, e.site, e.call, receive_post, m_scratch});
    if (m_pending.empty()) return;
    for (const Block& b : m_scratch) {
      auto hit = m_pending.conflict(b.lo, b.hi, b.mode);
      if (!hit) continue;
      bool owner_writes = false;
      PendingOp* owner = find_owner(hit->first, hit->second, b.mode, owner_writes);
      if (!owner || owner->conflicts.size() >= k_max_conflicts_per_op) continue;
      bool seen = false;
      for (const Conflict& c : owner->conflicts) seen = seen || (c.site == e.site && c.call == e.call);
      if (seen) continue;
      owner->conflicts.push_back(Conflict{e.seq, e.site, e.call, b.mode,
                                          receive_post && b.mode == Mode::write && owner_writes, owner_writes,
                                          hit->first, hit->second});
    }
  }

  // Return the earliest-posted active operation that forbids an access of
  // `mode` to some of [lo, hi) (of a Startall's, the first in its array);
  // `writes`: it writes those bytes.
  // One of the one-block table is moved to the stable one (it is about
  // to get a conflict).
  PendingOp* find_owner(uint64_t lo, uint64_t hi, Mode mode, bool& writes) {
    PendingOp* best = nullptr;
    uint64_t best_order = 0;  // 0: none yet (active orders are 1 and up)
    std::optional<uint64_t> one;  // the best one's request, when a One
    auto forbids = [&](const Block& b) { return (b.mode == Mode::write || mode == Mode::write) && overlaps(b, lo, hi); };
    m_ops.each_many([&](PendingOp& op) {
      if (!op.active || (best_order != 0 && best_order < op.order)) return;
      for (const Block& b : op.blocks) {
        if (forbids(b)) {
          best = &op;
          best_order = op.order;
          writes = b.mode == Mode::write;
          break;
        }
      }
    });
    m_ops.each_one([&](uint64_t request, const OneBlockOp& op) {
      if (!op.active || (best_order != 0 && best_order < op.order) || !forbids(op.block)) return;
      one = request;
      best_order = op.order;
      writes = op.block.mode == Mode::write;
    });
    if (one) return m_ops.to_many(*one);
    return best;
  }

  // Set the fields a post or a persistent definition gives.
  static void define(OpHead& op, const Event& e, Call call, bool persistent) {
    op.call = call;
    op.seq = e.seq;
    op.site = e.site;
    op.post_call = e.call;
    op.persistent = persistent;
  }

  // Post the operation of `e` with footprint `blocks` (checked first):
  // m_scratch, or one block elsewhere (then m_scratch is empty).
  // One block (most posts) that meets no pending segment while they are
  // few: no conflict to look for, and the block goes in with the same test.
  void post(const Event& e, Call call, bool persistent, std::span<const Block> blocks) {
    if (e.request != 0 && blocks.size() == 1) {
      const Block& b = blocks.front();
      if (const uint32_t piece = m_pending.add_apart(b.lo, b.hi, b.mode)) {
        post_placed(e, call, persistent, b, piece);
        return;
      }
    }
    post_checked(e, call, persistent, blocks);
  }

  // Post the operation of `e` of one block `b` (a call of one contiguous
  // buffer): post() in line where the block meets no pending segment while
  // they are few (about every post).
  [[gnu::always_inline]] void post_one(const Event& e, const Block& b) {
    const uint32_t piece = e.request != 0 ? m_pending.add_apart(b.lo, b.hi, b.mode) : 0;
    if (piece != 0) {
      post_placed(e, e.call, false, b, piece);
      return;
    }
    post_checked(e, e.call, false, std::span<const Block>(&b, 1));  // (add_apart changed nothing)
  }

  // Post the operation of `e` whose one block `b` add_apart placed at
  // `piece`: no conflict to look for.
  [[gnu::always_inline]] void post_placed(const Event& e, Call call, bool persistent, const Block& b,
                                          uint32_t piece) {
    if (lanes) touches.push_back(Touch{e.seq, e.site, e.call, b.mode == Mode::write, {b}});
    m_ops.renew(e.request, std::span<const Block>(&b, 1), [&](auto& op) {
      define(op, e, call, persistent);
      op.active = true;
      op.order = ++m_activations;
      op.piece = piece;
      if (lanes) begin_lifetime(e.request, op);
    });
  }

  // Post the operation of `e` with footprint `blocks`, not placed apart:
  // checked against the pending operations first (access, which normalizes
  // m_scratch), then activated.
  void post_checked(const Event& e, Call call, bool persistent, std::span<const Block> blocks) {
    const bool receive = std::any_of(blocks.begin(), blocks.end(), [](const Block& b) { return b.mode == Mode::write; });
    if (blocks.data() != m_scratch.data()) m_scratch.assign(blocks.begin(), blocks.end());
    access(e, receive);
    if (e.request == 0) return;
    m_ops.renew(e.request, m_scratch, [&](auto& op) {
      define(op, e, call, persistent);
      activate(op);
      begin_lifetime(e.request, op);
    });
  }

  // Keep the lifetime of blocking point-to-point or collective call `e`
  // (its buffers in m_scratch, normalized), where threads are lanes: MPI
  // uses them from the call's start to its return, while the rank's other
  // threads run (posted and completed by `e`; a call the rank stopped in
  // never completes).
  void blocking_lifetime(const Event& e) {
    Lifetime l;
    l.op_call = l.post_call = e.call;
    l.post_seq = e.seq;
    l.post_site = e.site;
    if (!e.pending) {
      l.done = true;
      l.done_call = e.call;
      l.done_seq = e.seq;
      l.done_site = e.site;
    }
    l.blocks = m_scratch;
    lifetimes.push_back(std::move(l));
  }

  // Keep `op`'s lifetime (request `request`), where threads are lanes.
  template <class Op>
  void begin_lifetime(uint64_t request, const Op& op) {
    if (!lanes) return;
    Lifetime l;
    l.op_call = op.call;
    l.post_call = op.post_call;
    l.post_seq = op.seq;
    l.post_site = op.site;
    const std::span<const Block> blocks = blocks_of(op);
    l.blocks.assign(blocks.begin(), blocks.end());
    m_lifetime[request] = lifetimes.size();
    lifetimes.push_back(std::move(l));
  }
  void end_lifetime(uint64_t request, const Event* done) {
    const std::size_t* index = m_lifetime.find(request);
    if (!index) return;
    Lifetime& l = lifetimes[*index];
    if (done) {
      l.done = true;
      l.done_seq = done->seq;
      l.done_call = done->call;
      l.done_site = done->site;
    } else {
      l.freed = true;
    }
    m_lifetime.erase(request);
  }

  void define_persistent(const Event& e) {
    normalize(m_scratch);
    m_ops.renew(e.request, m_scratch, [&](OpHead& op) { define(op, e, e.call, true); });
  }

  // Start the persistent operation of `request` (in either table). The
  // access check may move other operations between the tables (never this
  // one: it is not active), so it is looked up again after it.
  void start(const Event& e, uint64_t request) {
    bool receive = false, go = false;
    m_ops.visit(request, [&](const auto& op) {
      if (!op.persistent || op.active) return;
      go = true;
      const std::span<const Block> blocks = blocks_of(op);
      m_scratch.assign(blocks.begin(), blocks.end());
      receive = format::call_traits(op.call).role == format::Role::recv;
    });
    if (!go) return;
    access(e, receive);
    m_ops.visit(request, [&](auto& op) { restart(op, e, request); });
  }
  template <class Op>
  void restart(Op& op, const Event& e, uint64_t request) {
    if constexpr (std::is_same_v<Op, PendingOp>) op.conflicts.clear();
    op.seq = e.seq;
    op.site = e.site;
    op.post_call = e.call;
    activate(op);
    begin_lifetime(request, op);
  }

  template <class Op>
  void activate(Op& op) {
    op.active = true;
    op.order = ++m_activations;
    const std::span<const Block> blocks = blocks_of(op);
    if (blocks.size() == 1) {
      op.piece = m_pending.add(blocks.front().lo, blocks.front().hi, blocks.front().mode);
      return;
    }
    for (const Block& b : blocks) m_pending.add(b.lo, b.hi, b.mode);
  }

  template <class Op>
  void deactivate(Op& op) {
    op.active = false;
    const std::span<const Block> blocks = blocks_of(op);
    if (blocks.size() == 1) {
      m_pending.remove(blocks.front().lo, blocks.front().hi, blocks.front().mode, op.piece);
      return;
    }
    for (const Block& b : blocks) m_pending.remove(b.lo, b.hi, b.mode);
  }

  // Complete each request that `e` completes: one call per completing
  // event (a Waitall of many), complete() in line.
  [[gnu::noinline]] void complete_each(const Event& e) {
    for (const format::CompletedRequest& c : e.completed) complete(e, c.request);
  }
  [[gnu::noinline]] void complete_one(const Event& e, uint64_t request) { complete(e, request); }
  [[gnu::always_inline]] void complete(const Event& e, uint64_t request) {
    m_ops.settle(request, [&](auto& op) {
      if (op.active) {
        // (A One has no conflicts to retire, most PendingOps none either.)
        if constexpr (std::is_same_v<std::remove_reference_t<decltype(op)>, PendingOp>)
          if (!op.conflicts.empty()) retire(op, &e);
        deactivate(op);
        if (m_lifetime.size() != 0) end_lifetime(request, &e);
      }
      return op.persistent;
    });
  }

  void request_free(const Event& e) {
    bool inactive = false;
    m_ops.visit(e.request, [&](OpHead& op) {
      if (!op.active) inactive = true;
      else keep_freed(op, e);
    });
    if (inactive) m_ops.erase(e.request);
  }
  // The active operation `op` is freed by `e`: it goes on; nothing in the
  // trace says when it ends, so its buffer stays in use until the end.
  void keep_freed(OpHead& op, const Event& e) {
    end_lifetime(e.request, nullptr);
    op.freed = true;
    op.free_seq = e.seq;
    op.free_site = e.site;
    op.persistent = false;
  }

  // Turn `op`'s conflicts into records; `done` is the completing event.
  void retire(PendingOp& op, const Event* done) {
    for (const Conflict& c : op.conflicts) {
      auto key = std::make_tuple(op.site, static_cast<uint16_t>(op.call), c.site, static_cast<uint16_t>(c.call));
      if (!m_reported.insert(key).second) continue;
      if (records.size() >= k_max_reports) {
        ++suppressed;
        continue;
      }
      Record r = record_of(op.call, op.post_call, op.seq, op.site, op.blocks, c);
      if (done) {
        r.done_call = done->call;
        r.done_seq = done->seq;
        r.done_site = done->site;
      } else if (op.freed) {
        r.freed = true;
        r.done_call = Call::Request_free;
        r.done_seq = op.free_seq;
        r.done_site = op.free_site;
      }
      records.push_back(r);
    }
    op.conflicts.clear();
  }

  // Add the bytes of annotated or captured access `e` to m_scratch: `count`
  // blocks `stride` apart (the load/store runtime's merged runs).
  void local_access(const Event& e, Mode mode) {
    if (e.buf == 0 || e.size == 0) return;
    const uint64_t blocks = std::max<int64_t>(e.count, 1);
    const int64_t span = e.stride * static_cast<int64_t>(blocks - 1);
    if (blocks == 1 || blocks > k_max_blocks || e.stride <= 0 || static_cast<uint64_t>(e.stride) <= e.size) {
      const uint64_t lo = span < 0 ? e.buf - static_cast<uint64_t>(-span) : e.buf;
      const uint64_t hi = (span < 0 ? e.buf : e.buf + static_cast<uint64_t>(span)) + e.size;
      m_scratch.push_back(Block{lo, hi, mode});
    } else {
      for (uint64_t k = 0; k < blocks; ++k) {
        const uint64_t lo = e.buf + k * static_cast<uint64_t>(e.stride);
        m_scratch.push_back(Block{lo, lo + e.size, mode});
      }
    }
  }

  const RankData& m_data;
  Ops m_ops;                          // by request id
  uint64_t m_activations = 0;
  SegmentMap m_pending;                // footprints of the active ops
  std::vector<Block> m_scratch;        // reused for each event
  std::set<std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>> m_reported;
  FlatRequestMap<std::size_t> m_lifetime;  // active request -> its lifetime
};

// Return the first bytes where access blocks `touch` (reading or writing)
// and operation blocks `op` may not meet: a receive buffer (written) with
// anything, a send buffer (read) with a write; `op_writes` says which.
std::optional<std::pair<uint64_t, uint64_t>> clash(const std::vector<Block>& touch, const std::vector<Block>& op,
                                                   bool& op_writes, Mode& access) {
  for (const Block& a : touch)
    for (const Block& b : op) {
      if (!overlaps(b, a.lo, a.hi) || (b.mode == Mode::read && a.mode == Mode::read)) continue;
      op_writes = b.mode == Mode::write;
      access = a.mode;
      return std::make_pair(std::max(a.lo, b.lo), std::min(a.hi, b.hi));
    }
  return std::nullopt;
}

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

// The coding of a pass's results (after end()), for WireWriter and WireReader alike.
template <class Coder, class P>
void code_pass(Coder& c, P& p) {
  auto blocks = [](auto& cb, auto& b) {
    cb(b.lo);
    cb(b.hi);
    cb(b.mode);
  };
  c.list(p.records, [](auto& cr, auto& r) {
    cr(r.op_call);
    cr(r.post_call);
    cr(r.post_seq);
    cr(r.post_site);
    cr(r.op_lo);
    cr(r.op_hi);
    cr(r.conflict.seq);
    cr(r.conflict.site);
    cr(r.conflict.call);
    cr(r.conflict.access);
    cr(r.conflict.receive_post);
    cr(r.conflict.op_writes);
    cr(r.conflict.lo);
    cr(r.conflict.hi);
    cr(r.done_call);
    cr(r.done_seq);
    cr(r.done_site);
    cr(r.freed);
  });
  c(p.suppressed);
  c.list(p.touches, [&](auto& ct, auto& t) {
    ct(t.seq);
    ct(t.site);
    ct(t.call);
    ct(t.receive_post);
    ct.list(t.blocks, blocks);
  });
  c.list(p.lifetimes, [&](auto& cl, auto& l) {
    cl(l.op_call);
    cl(l.post_call);
    cl(l.done_call);
    cl(l.post_seq);
    cl(l.done_seq);
    cl(l.post_site);
    cl(l.done_site);
    cl(l.done);
    cl(l.freed);
    cl.list(l.blocks, blocks);
  });
  c(p.lanes);
}

class LocalConcurrency final : public Check {
 public:
  std::string_view name() const override { return "local-concurrency"; }
  // Accesses are address ranges: without buffer addresses there is nothing to compare.
  format::ContentSet needs() const override { return format::content_bit(format::Content::buffers); }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "a buffer of a pending non-blocking operation is read or written before the operation completes";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // finish() reads each rank's records (and, where its threads are lanes,
  // its accesses and lifetimes) and filters them with the replay and
  // happens-before, which the process that runs it builds from every
  // rank's events; the pass itself needs only its rank.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override {
    code_pass(out, dynamic_cast<const Pass&>(pass));
  }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    auto p = std::make_unique<Pass>(data);
    code_pass(in, *p);
    return p;
  }

  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      auto* pass = dynamic_cast<Pass*>(passes[rank].get());
      if (!pass) continue;
      if (pass->lanes) across_threads(context, rank, *pass);
      for (const Record& r : pass->records) {
        if (r.freed && delivered_before(context, rank, r)) continue;
        out.push_back(finding(context, rank, r));
      }
      if (pass->suppressed > 0 && !out.empty() && out.back().kind == name())
        out.back().notes.push_back(fmt::format("{} more conflicts on rank {} are not reported", pass->suppressed, rank));
    }
  }

 private:
  // A send whose request was freed while active (MPI-3.1 section 3.7.3
  // allows it) still reads its buffer until it completes, which the trace
  // never shows. The program can know it only from a message that follows
  // the delivery, the standard's own example: "the arrival of the reply
  // informs the sender that the send has completed". So its buffer is free
  // again for every access that the completion of the matching receive
  // happens before. A freed receive has no such end (the standard advises
  // never to free one): its buffer stays in use.
  static bool delivered_before(const Context& context, uint32_t rank, const Record& r) {
    if (format::call_traits(r.op_call).role != format::Role::send) return false;
    const std::optional<EventRef> done = receive_completion(context.replay(), rank, r.post_seq);
    return done && context.happens_before().ordered(*done, {rank, r.conflict.seq});
  }

  // Where the threads of `rank` are lanes: drop the conflicts that
  // happens-before orders (an access of another thread recorded between
  // posting and completion, but synchronized), and add those of accesses
  // recorded before the posting or after the completion that no
  // synchronization orders. Freed operations keep the one-order rule.
  static void across_threads(const Context& context, uint32_t rank, Pass& pass) {
    const HappensBefore& hb = context.happens_before();
    const RankThreads& threads = context.replay().threads(rank);
    auto concurrent = [&](uint64_t access, uint64_t post, std::optional<uint64_t> done) {
      if (hb.ordered({rank, access}, {rank, post})) return false;
      return !(done && hb.ordered({rank, *done}, {rank, access}));
    };
    std::erase_if(pass.records, [&](const Record& r) {
      if (r.freed) return false;
      const bool done = r.done_call != Call::unspecified;
      return !concurrent(r.conflict.seq, r.post_seq, done ? std::optional<uint64_t>(r.done_seq) : std::nullopt);
    });
    std::set<std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>> seen;
    for (const Record& r : pass.records)
      seen.emplace(r.post_site, static_cast<uint16_t>(r.op_call), r.conflict.site, static_cast<uint16_t>(r.conflict.call));
    // Accesses by lane and by the hull of their blocks, with the running
    // maximum of the hulls' ends: those of other lanes meeting a buffer are
    // found by a binary search and a scan back per lane (a rank whose other
    // threads touch no buffer, MPI_THREAD_FUNNELED's, costs nothing here).
    struct Hull {
      uint64_t lo, hi;
      uint32_t touch;
    };
    struct LaneHulls {
      std::vector<Hull> hulls;
      std::vector<uint64_t> reach;
    };
    std::vector<LaneHulls> by_lane(threads.lanes.size());
    for (uint32_t i = 0; i < pass.touches.size(); ++i) {
      const auto& blocks = pass.touches[i].blocks;
      Hull h{UINT64_MAX, 0, i};
      for (const Block& b : blocks) h.lo = std::min(h.lo, b.lo), h.hi = std::max(h.hi, b.hi);
      const uint32_t lane = threads.lane(pass.touches[i].seq);
      if (lane >= by_lane.size()) by_lane.resize(lane + 1);
      by_lane[lane].hulls.push_back(h);
    }
    for (LaneHulls& lane : by_lane) {
      std::sort(lane.hulls.begin(), lane.hulls.end(), [](const Hull& a, const Hull& b) { return a.lo < b.lo; });
      lane.reach.resize(lane.hulls.size());
      for (std::size_t i = 0; i < lane.hulls.size(); ++i)
        lane.reach[i] = std::max(i ? lane.reach[i - 1] : 0, lane.hulls[i].hi);
    }
    std::vector<uint32_t> near;
    for (const Lifetime& l : pass.lifetimes) {
      if (l.freed || l.blocks.empty()) continue;
      uint64_t lo = UINT64_MAX, hi = 0;
      for (const Block& b : l.blocks) lo = std::min(lo, b.lo), hi = std::max(hi, b.hi);
      near.clear();
      const uint32_t own = threads.lane(l.post_seq);
      for (uint32_t lane = 0; lane < by_lane.size(); ++lane) {
        if (lane == own) continue;
        const std::vector<Hull>& hulls = by_lane[lane].hulls;
        const std::vector<uint64_t>& reach = by_lane[lane].reach;
        auto end = std::lower_bound(hulls.begin(), hulls.end(), hi, [](const Hull& h, uint64_t x) { return h.lo < x; });
        for (auto i = static_cast<std::size_t>(end - hulls.begin()); i-- > 0 && reach[i] > lo;)
          if (hulls[i].hi > lo) near.push_back(hulls[i].touch);
      }
      std::sort(near.begin(), near.end());  // in recorded order: the first conflict of a pair of sites is reported
      for (uint32_t index : near) {
        const Touch& t = pass.touches[index];
        if (t.seq == l.post_seq) continue;
        const bool outside = t.seq < l.post_seq || (l.done && t.seq > l.done_seq);
        if (!outside || threads.lane(t.seq) == threads.lane(l.post_seq)) continue;
        bool op_writes = false;
        Mode mode = Mode::read;
        auto hit = clash(t.blocks, l.blocks, op_writes, mode);
        if (!hit) continue;
        if (!concurrent(t.seq, l.post_seq, l.done ? std::optional<uint64_t>(l.done_seq) : std::nullopt)) continue;
        if (!seen.emplace(l.post_site, static_cast<uint16_t>(l.op_call), t.site, static_cast<uint16_t>(t.call)).second)
          continue;
        // Two blocking calls meet twice (each's lifetime, the other's access): one finding.
        if (l.done && l.done_seq == l.post_seq)
          seen.emplace(t.site, static_cast<uint16_t>(t.call), l.post_site, static_cast<uint16_t>(l.op_call));
        Record r = record_of(l.op_call, l.post_call, l.post_seq, l.post_site, l.blocks,
                             Conflict{t.seq, t.site, t.call, mode, t.receive_post && mode == Mode::write && op_writes,
                                      op_writes, hit->first, hit->second});
        if (l.done) {
          r.done_call = l.done_call;
          r.done_seq = l.done_seq;
          r.done_site = l.done_site;
        }
        pass.records.push_back(r);
      }
    }
  }

  // The finding of a BUFFER_MODIFIED record: the tracer saw the operation's
  // input bytes change before a call that may complete it (its site).
  Finding modified(const Context& context, uint32_t rank, const Record& r, Finding& f) const {
    const Conflict& c = r.conflict;
    const std::string_view op = format::call_name(r.op_call);
    const EventRef at{rank, c.seq};
    f.message = fmt::format("the buffer of {} [{}, +{}) was modified before its completion (the tracer's hash of "
                            "its bytes at the post differs from the one when rank {} entered the completing call)",
                            op, hex(r.op_lo), r.op_hi - r.op_lo, at.str());
    const std::string what = r.post_call == r.op_call
                                 ? fmt::format("{} posts the buffer here", op)
                                 : fmt::format("{} starts {}'s operation here", format::call_name(r.post_call), op);
    f.locations.push_back(context.location(EventRef{rank, r.post_seq}, r.post_call, r.post_site, what));
    f.locations.push_back(context.location(at, c.call, c.site,
                                           fmt::format("the bytes [{}, +{}) differ when this call is entered",
                                                       hex(c.lo), c.hi - c.lo)));
    if (r.done_call != Call::unspecified)
      f.locations.push_back(context.location(EventRef{rank, r.done_seq}, r.done_call, r.done_site,
                                             r.freed ? "the request is freed here, the operation still in flight"
                                                     : "the operation completes here"));
    f.notes.push_back("the sender must not modify the send buffer until the send completes (MPI-4.0 3.7.2, 3.7.3); "
                      "the store itself was not seen (build with smtrace-cc to see where)");
    return f;
  }

  Finding finding(const Context& context, uint32_t rank, const Record& r) const {
    const Conflict& c = r.conflict;
    const std::string_view op = format::call_name(r.op_call);
    const std::string_view access = format::call_name(c.call);
    const EventRef at{rank, c.seq};
    const char* verb = c.receive_post ? "also the receive buffer of"
                       : c.access == Mode::read ? "read by" : "written by";
    std::string ending;
    const bool blocking = !r.freed && r.done_call != Call::unspecified && r.done_seq == r.post_seq;
    if (blocking) {
      ending = "while that call is in progress on another thread";
    } else if (r.freed) {
      ending = fmt::format("while it is in flight (freed by MPI_Request_free at rank {}, so its completion is never seen)",
                           EventRef{rank, r.done_seq}.str());
    } else if (r.done_call != Call::unspecified) {
      ending = fmt::format("before {} completes it (rank {})", format::call_name(r.done_call),
                           EventRef{rank, r.done_seq}.str());
    } else {
      ending = "before it completes (it never completes in the trace)";
    }
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    if (c.call == Call::Buffer_modified) return modified(context, rank, r, f);
    f.message = fmt::format("{}'s buffer [{}, +{}) is {} {} (rank {}) {}", op, hex(r.op_lo), r.op_hi - r.op_lo, verb,
                            access, at.str(), ending);
    const std::string what = blocking ? fmt::format("{} uses the buffer here, from its call to its return", op)
                             : r.post_call == r.op_call
                                 ? fmt::format("{} posts the buffer here", op)
                                 : fmt::format("{} starts {}'s operation here", format::call_name(r.post_call), op);
    f.locations.push_back(context.location(EventRef{rank, r.post_seq}, r.post_call, r.post_site, what));
    f.locations.push_back(context.location(
        at, c.call, c.site,
        fmt::format("{} {} bytes [{}, +{}) of it here", access,
                    c.receive_post ? "receives into" : c.access == Mode::read ? "reads" : "writes", hex(c.lo),
                    c.hi - c.lo)));
    if (r.done_call != Call::unspecified && !blocking)
      f.locations.push_back(context.location(EventRef{rank, r.done_seq}, r.done_call, r.done_site,
                                             r.freed ? "the request is freed here, the operation still in flight"
                                                     : "the operation completes here"));
    const RankThreads& threads = context.replay().threads(rank);
    if (blocking && threads.modelled)
      f.notes.push_back(fmt::format("{} is inside {} and {} of rank {} touches the buffer: no thread synchronization "
                                    "or MPI call orders the access before the call or after its return",
                                    threads.lane_name(threads.lane(r.post_seq)), op,
                                    threads.lane_name(threads.lane(c.seq)), rank));
    else if (threads.modelled && threads.lane(c.seq) != threads.lane(r.post_seq))
      f.notes.push_back(fmt::format("{} posts the operation and {} of rank {} touches the buffer: no thread "
                                    "synchronization or MPI call orders the access before the posting or after the completion",
                                    threads.lane_name(threads.lane(r.post_seq)), threads.lane_name(threads.lane(c.seq)), rank));
    if (c.access == Mode::read && !c.receive_post)
      f.notes.push_back("a pending receive buffer may not be read until the receive completes");
    else if (c.receive_post)
      f.notes.push_back("two pending receives may not share memory");
    else
      f.notes.push_back("a pending buffer may not be written until its operation completes");
    return f;
  }
};

}  // namespace

std::unique_ptr<Check> make_local_concurrency() { return std::make_unique<LocalConcurrency>(); }

}  // namespace smtrace::analyzer::checks
