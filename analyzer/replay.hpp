// Replay of the recorded run: point-to-point operations matched as MPI
// matched them (receive statuses plus the non-overtaking rule), requests
// followed from creation to completion (only the outstanding ones are kept), collectives grouped into instances
// per communicator, RMA synchronization calls listed for the RMA checks.
//
// Matching: a receive whose status says (source S, tag T) on communicator C
// took the earliest send from S to it on C with tag T that no earlier
// receive took, in the sender's posting order (MPI's non-overtaking rule).
// Receives are taken in the receiver's posting order. A receive that never
// completed has no status; it is matched only when exactly one unmatched
// send can reach it (or left unmatched).
//
// Calls that returned an error code (MPI_ERRORS_RETURN) post nothing: failed
// sends, collectives, Starts and RMA calls are left out; failed receives are
// kept (a truncated receive still took its message).
//
// Thread safety: collect() is called from one thread per rank; replay()
// matches on the options' threads (by rank, the same matches whatever their
// number) and is called from one thread; the rest is read-only after it.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/threads.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer {

class WireReader;
class WireWriter;

inline constexpr uint64_t k_never = std::numeric_limits<uint64_t>::max();
inline constexpr int32_t k_unknown = std::numeric_limits<int32_t>::min();
inline constexpr uint32_t k_none = std::numeric_limits<uint32_t>::max();

// One send or receive (a Sendrecv gives one of each, same seq; each Start of
// a persistent request gives one, posted at the Start).
struct P2POp {
  uint64_t seq = 0;               // the posting event
  uint32_t done_delta = k_none;   // completing event's seq - seq (0 for blocking calls); k_none: never
  uint32_t site = 0;              // call site of the posting event
  uint32_t done_site = 0;
  uint32_t comm = 0;              // rank-local communicator id
  int32_t peer = 0;               // dest or source as posted (rank in comm; k_any_source, k_proc_null)
  int32_t tag = 0;                // as posted (k_any_tag)
  int32_t status_source = k_unknown;  // receives: actual source (rank in comm) from the status
  int32_t status_tag = k_unknown;
  format::Call call = format::Call::unspecified;       // posting call (Isend, Recv, Sendrecv, Start...)
  format::Call done_call = format::Call::unspecified;  // completing call (Wait...; == call when blocking)
  // What it sends or receives: an index into its rank's payloads, kept
  // here (in the bits left beside the flags) rather than in a vector beside
  // the ops; k_payload_aside: the index is kept aside (Replay::payload reads it).
  uint32_t payload_slot : 24 = 0;
  bool send : 1 = false;
  bool cancelled : 1 = false;
  bool posted_pending : 1 = false;    // the rank stopped inside the posting call
  bool cancel_asked : 1 = false;      // MPI_Cancel was called on its request while it was active
  // A send's mode: the posting call's (calls.def), for a Start the mode of
  // the persistent request's init (MPI_Bsend_init: buffered).
  format::SendMode mode : 3 = format::SendMode::none;

  bool done() const { return done_delta != k_none; }
  // Return the seq of the event that completed it, or k_never.
  uint64_t done_seq() const { return done() ? seq + done_delta : k_never; }
};
// 48 bytes, its payload index included: the analyzer keeps one per send and
// receive, for the whole trace (most of check's memory; the kernel's
// clearing of those fresh pages is a sixth of its CPU time on large traces).
static_assert(sizeof(P2POp) == 48);
static_assert(static_cast<uint8_t>(format::SendMode::ready) < 8, "P2POp::mode has 3 bits");
// P2POp::payload_slot's largest value: the index is kept aside from it on.
inline constexpr uint32_t k_payload_aside = (uint32_t{1} << 24) - 1;

// What a send or receive carries: `count` elements of `datatype` (a
// rank-local id: the sender's or the receiver's). Replay keeps one per
// distinct (datatype, count) of a rank.
struct Payload {
  uint32_t datatype = 0;
  int64_t count = 0;
  bool operator==(const Payload&) const = default;
};

// Return "tag 5", or "any tag" for a receive posted with MPI_ANY_TAG (a
// send's tag -1 is an invalid tag, not a wildcard).
std::string tag_text(const P2POp& op);

// A P2POp by position: Replay::p2p(rank)[index].
struct OpRef {
  uint32_t rank = k_none;
  uint32_t index = k_none;
  bool valid() const { return rank != k_none; }
  bool operator==(const OpRef&) const = default;
};

struct CollOp {
  uint64_t seq = 0;               // entry (the blocking call, or the non-blocking start)
  uint64_t done_seq = k_never;    // completion
  uint64_t request = 0;
  uint32_t site = 0;
  uint32_t comm = 0;              // rank-local communicator id
  int32_t root = k_unknown;       // rooted collectives: root as given (rank in comm)
  uint32_t op = 0;                // reductions
  uint32_t datatype = 0;          // send side (recv side for the root of Gather...)
  int64_t count = 0;
  uint64_t signature_bytes = 0;   // bytes this rank contributes (0 when unknown)
  std::vector<uint32_t> stack;    // call stack (site ids), innermost first
  format::Call call = format::Call::unspecified;
  bool pending = false;           // the rank stopped inside it
  bool in_place = false;
};

// The n-th collective on one communicator: what each member called there.
struct CollInstance {
  uint32_t comm = 0;                     // global comm index
  uint32_t position = 0;                 // n
  std::vector<uint32_t> member_op;       // per comm rank: index into Replay::collectives(world rank), k_none if it never got there
};

// A request still outstanding at the end of its rank's trace.
struct Outstanding {
  enum class Kind : uint8_t { p2p, coll, other } kind = Kind::other;
  uint64_t request = 0;
  uint32_t index = 0;             // into p2p(rank) or collectives(rank)
};

// An RMA synchronization or communication call, for the RMA checks.
struct RmaEvent {
  uint64_t seq = 0;
  uint32_t site = 0;
  uint32_t window = 0;            // rank-local window id
  int32_t peer = k_unknown;       // target where the call has one
  uint32_t group = 0;             // PSCW group (rank-local CommDef id)
  uint32_t assert_flags = 0;
  format::LockType lock_type = format::LockType::unspecified;
  format::Call call = format::Call::unspecified;
  // What it does to epochs (format::epoch_of): a Win_test that returned
  // true as wait, one that returned false as none.
  format::EpochEffect epoch = format::EpochEffect::none;
  bool pending = false;
};

class Replay {
 public:
  Replay();
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // Size the per-rank state before loading starts (rank passes of distinct
  // ranks then never touch shared containers).
  void reserve_ranks(uint32_t world_size);
  // Return the pass that collects rank `data.rank`'s operations while loading.
  std::unique_ptr<RankPass> rank_pass(const RankData& data);
  // smtrace-mpi: append rank `rank`'s state as its rank pass left it (after
  // end(): ops, payloads, collectives, RMA calls, outstanding requests, the
  // pending event, the lanes) to `out`, where the rank was read; load_rank
  // reads it on the analyzing process, in place of running the pass there.
  void save_rank(uint32_t rank, WireWriter& out) const;
  void load_rank(uint32_t rank, WireReader& in);
  // Match, group and complete once every rank is loaded.
  void replay(const Context& context);

  uint32_t world_size() const;
  const std::vector<P2POp>& p2p(uint32_t rank) const { return m_p2p.at(rank).ops; }
  // Return what operation `op` sends or receives into (its buffer's count
  // and datatype as posted).
  Payload payload(OpRef op) const {
    const RankP2P& r = m_p2p.at(op.rank);
    if (op.index >= r.ops.size()) return {};
    const P2POp& mine = r.ops[op.index];
    // type-mismatch asks, in op order, each receive's payload and its
    // send's, whose op (in another rank's ops) is a cache miss on a large
    // trace: fetch the send matched to the receive k_ahead ops on early.
    if (!mine.send && op.rank < m_match.size() && op.index + k_ahead < m_match[op.rank].size()) {
      const OpRef ahead = m_match[op.rank][op.index + k_ahead];
      if (ahead.valid() && ahead.rank < m_p2p.size() && ahead.index < m_p2p[ahead.rank].ops.size())
        __builtin_prefetch(&m_p2p[ahead.rank].ops[ahead.index].done_call);  // (the line of its payload and flags)
    }
    const uint32_t slot = mine.payload_slot;
    if (slot == k_payload_aside) [[unlikely]] return payload_aside(r, op.index);
    return r.payloads[slot];
  }
  // Return what `op` matched (the receive of a send, the send of a receive), if anything.
  std::optional<OpRef> matched(OpRef op) const {
    if (op.rank >= m_match.size()) return std::nullopt;
    const std::vector<OpRef>& links = m_match[op.rank];
    const OpRef other = op.index < links.size() ? links[op.index] : OpRef{};
    // (One return of either: GCC 12 then keeps the optional in registers.)
    return other.valid() ? std::optional<OpRef>(other) : std::optional<OpRef>();
  }
  const std::vector<CollOp>& collectives(uint32_t rank) const;
  // Return the instances of global communicator `comm`, in order.
  const std::vector<CollInstance>& instances(uint32_t comm) const;
  // Return the requests still outstanding at the end of rank `rank` (sorted by request).
  const std::vector<Outstanding>& outstanding(uint32_t rank) const;
  const std::vector<RmaEvent>& rma(uint32_t rank) const;
  // Return the event the rank stopped inside (pending), if any.
  std::optional<format::Event> blocked(uint32_t rank) const;
  // For tests: keep payload indices from `index` on aside from the ops, as
  // indices from k_payload_aside on are (call before rank_pass).
  void keep_payloads_aside_from(uint32_t index);
  // Return the number of matched send/receive pairs.
  uint64_t matches() const;
  // Return how many of rank `rank`'s ops matched nothing (matched() is
  // empty for them; 0 for a rank with no ops or before replay()).
  uint64_t unmatched(uint32_t rank) const;
  // Return rank `rank`'s threads as happens-before orders them (threads.hpp).
  const RankThreads& threads(uint32_t rank) const;
  // Free rank `rank`'s point-to-point ops and their payloads (p2p(rank)
  // then is empty, payload() of its ops {}), or what they matched
  // (matched() of its ops then is nullopt), handing their memory back:
  // for the last reader of them (Context::releasable_replay). matches(),
  // unmatched(), the collectives, RMA calls and threads stay.
  void release_p2p(uint32_t rank);
  void release_matches(uint32_t rank);

 private:
  struct Impl;
  // A rank's sends and receives, and the distinct payloads they carry
  // (filled by its rank pass; here so that the readers above inline).
  struct RankP2P {
    std::vector<P2POp> ops;
    std::vector<Payload> payloads;
  };
  // How many ops ahead payload() fetches a receive's send.
  static constexpr uint32_t k_ahead = 16;
  // Return the payload of r.ops[index], whose index is kept aside.
  Payload payload_aside(const RankP2P& r, uint32_t index) const;
  // Size m_p2p and the per-rank state in m_impl for `ranks` ranks.
  void resize_ranks(std::size_t ranks);

  std::vector<RankP2P> m_p2p;                 // per rank
  std::vector<std::vector<OpRef>> m_match;    // per rank, per op: what it matched
  std::unique_ptr<Impl> m_impl;
};

// Return the event that completed the receive matching the send that rank
// `rank` posted at event `seq` (its first send there), or nothing when that
// send matched nothing or its receive never completed.
std::optional<EventRef> receive_completion(const Replay& replay, uint32_t rank, uint64_t seq);

}  // namespace smtrace::analyzer
