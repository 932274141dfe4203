// invalid-argument: an MPI call with an argument MPI forbids at that point
// (MPI-3.1 sections 2.5, 3.2-3.9, 5, 11), validated from the recorded
// arguments, so that it is reported also where the program survived
// (MPI_ERRORS_RETURN) and where MPI aborted inside the call (the tracer
// then records the call's entry: the event is pending).
//
// What each call passes follows from the columns of calls.def (role,
// buffers, rooted, op, resource, request effect) and call_buffers(): the
// buffers it uses at this rank with their counts and datatypes, MPI_IN_PLACE
// applied, only those significant at this rank. Rules:
// - communicator: not MPI_COMM_NULL, not freed (Comm_free earlier on this
//   rank), not one the tracer marked invalid (k_invalid_id), not one a call
//   with a request (Comm_idup) made before that request completed (section
//   6.4.2); Comm_free of MPI_COMM_WORLD or MPI_COMM_SELF;
// - ranks: a destination in [0, size) or MPI_PROC_NULL; a source also
//   MPI_ANY_SOURCE; a root in [0, size) on an intracommunicator, MPI_ROOT,
//   MPI_PROC_NULL or a remote rank on an intercommunicator (size: the remote
//   group's there); an RMA target in the window's communicator or
//   MPI_PROC_NULL;
// - tags: a send's in [0, MPI_TAG_UB]; a receive's also MPI_ANY_TAG (the
//   upper bound when the trace recorded it, header option mpi.tag_ub);
// - counts: not negative (buffers, v-collective counts, RMA origin/target,
//   datatype constructors);
// - datatypes: not MPI_DATATYPE_NULL where data moves, not freed, committed
//   when a recorded constructor made them (Type_dup of a committed type is
//   committed, MPI-3.1 section 4.1.10);
// - ops: not MPI_OP_NULL, not freed, defined for the datatype (section
//   5.9.2's table; user ops apply to anything in reductions and are not
//   allowed in accumulates, section 11.3.4; MPI_REPLACE and MPI_NO_OP only
//   in RMA); Compare_and_swap on integer, logical or byte types only;
// - buffers: not NULL with count > 0 and a type that has data;
// - MPI_IN_PLACE: only where the call allows it (section 5.2.1), never on
//   an intercommunicator;
// - communicators made (sections 6.4.2, 7.5.1): a Comm_split color not
//   below MPI_UNDEFINED, a Cart_create grid that fits; across ranks
//   (finish): the groups of one MPI_Comm_create agree, and so do those of
//   one MPI_Comm_create_group, paired member by member;
// - windows: not MPI_WIN_NULL, not freed; disp_unit > 0 at creation;
// - RMA target ranges (section 11.3): the target buffer of an RMA
//   communication call, target_count elements of target_datatype from
//   target_disp x the target's disp_unit, from their true lower to their
//   true upper bound (Footprint::data_span), within [0, size] of the
//   window the target rank created (finish(), rma_ranges: the target's
//   creation is another rank's event); on a dynamic window, from
//   target_disp (an address) within one region of the memory the target
//   attached to it at any time (section 11.2.4); not MPI_PROC_NULL,
//   count 0 or a layout not recorded whole;
// - messages: MPI_Mrecv / MPI_Imrecv not on MPI_MESSAGE_NULL (section 2.5.1);
// - info: MPI_Info_free of MPI_INFO_NULL (MPI-4.0 section 10);
// - buffered sends (MPI-4.0 section 3.6): MPI_Buffer_attach while a buffer
//   is attached; MPI_Bsend, MPI_Ibsend and the MPI_Start of an
//   MPI_Bsend_init request with no buffer attached, or with one smaller
//   than the message alone needs (its data's size, a lower bound of
//   MPI_Pack_size, plus MPI_BSEND_OVERHEAD when the trace recorded it,
//   header option mpi.bsend_overhead); one that fits alone but not beside
//   the earlier messages of the same attached buffer that may still hold
//   their space: those whose matching receive's completion does not happen
//   before it (finish(), held_at_once: the program knows a message was
//   transmitted only once it was received);
// - requests: MPI_Start on MPI_REQUEST_NULL, on a non-persistent request, or
//   on a persistent one still active; any use of a request freed with
//   MPI_Request_free or marked invalid (k_invalid_request); Request_free
//   and Cancel on MPI_REQUEST_NULL. (Freeing an active request is allowed,
//   section 3.7.3: its buffer stays in use, local-concurrency's business.)
// A call that returned an error code (Event.rc) for which no rule above
// names the argument is reported as such.
//
// Values the trace cannot tell from "not recorded" (datatype 0, op 0,
// buffer address 0) are taken as the null handle or NULL only in traces the
// tracer wrote (the header names a tracer version): hand-written traces may
// leave them out. An imported trace says what it lacks (trace_format/
// content.hpp); the rules that read that are off there.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/grouped.hpp"
#include "analyzer/checks/open_requests.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/datatypes.hpp"
#include "analyzer/footprint.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/signature.hpp"
#include "trace_format/content.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;
using format::Role;

std::string comm_text(uint32_t comm) {
  if (comm == format::k_comm_world) return "MPI_COMM_WORLD";
  if (comm == format::k_comm_self) return "MPI_COMM_SELF";
  return fmt::format("communicator {}", comm);
}

// What a rank argument names.
enum class RankUse : uint8_t { dest, source, root, target };

class Pass final : public RankPass {
 public:
  // `open`: the rank's open requests, which request-leak's pass may share
  // (open_requests.hpp).
  // (A loaded pass, which takes no events, has none.)
  explicit Pass(const RankData& data, std::shared_ptr<OpenRequests> open = nullptr)
      : m_data(data), m_open(std::move(open)) {}

  void event(const Event& e) override {
    const format::CallTraits& t = format::call_traits(e.call);
    // Family::none: a call this build does not know (call_known is false).
    if (t.family == format::Family::none || t.family == format::Family::cuda) return;
    if (!m_header_read) {  // the header is read before the first event, and stays
      m_header_read = true;
      m_recorded = !m_data.header.tracer_version.empty();
      m_lacks = format::lacks(m_data.header);
      m_tag_ub = header_number("mpi.tag_ub");
      m_bsend_overhead = header_number("mpi.bsend_overhead").value_or(0);
      m_world_size = m_data.header.world_size;
    }
    m_event = &e;
    m_found = false;
    switch (t.role) {
      case Role::send:
        comm(e.comm);
        rank(e.peer, RankUse::dest, e.comm);
        tag(e.tag, false);
        buffers(e, t);
        if (t.mode == format::SendMode::buffered) buffered(e, t);
        break;
      case Role::recv:
        // MPI_Mrecv, MPI_Imrecv name a message, not a communicator: not
        // MPI_MESSAGE_NULL (a null handle is an erroneous argument, MPI-3.1
        // section 2.5.1; the tracer records its communicator as null too).
        if (t.resource != format::Resource::message_free) comm(e.comm);
        else if (e.message == format::k_message_null && e.comm == format::k_null_id && m_recorded)
          add("null message", "the message is MPI_MESSAGE_NULL", {},
              {"a message from MPI_Mprobe or MPI_Improbe is received once: MPI_Mrecv and MPI_Imrecv set the "
               "handle to MPI_MESSAGE_NULL"});
        envelope(e.peer, e.tag, e.comm);
        buffers(e, t);
        break;
      case Role::sendrecv:
        comm(e.comm);
        rank(e.peer, RankUse::dest, e.comm);
        tag(e.tag, false);
        envelope(e.recv_peer, e.recv_tag, e.comm);
        buffers(e, t);
        break;
      case Role::probe:
        comm(e.comm);
        envelope(e.peer, e.tag, e.comm);
        break;
      case Role::collective:
        comm(e.comm);
        if (t.flow == format::Flow::neighbor) topology(e.comm);
        if (t.rooted) rank(e.peer, RankUse::root, e.comm);
        if (!lacks(format::Content::buffers)) in_place(e);
        buffers(e, t);
        if (t.op == format::Combine::reduce && !lacks(format::Content::type_signatures)) reduction_op(e);
        break;
      case Role::rma_comm:
        window(e.window);
        rank(e.peer, RankUse::target, window_comm(e.window));
        buffers(e, t);
        if (!lacks(format::Content::type_signatures)) rma_types(e, t);
        if (!m_found) rma_range(e);
        break;
      case Role::rma_sync: {
        window(e.window);
        if (e.peer) rank(e.peer, RankUse::target, window_comm(e.window));
        const format::EpochEffect epoch = format::call_traits(e.call).epoch;
        if (epoch == format::EpochEffect::post || epoch == format::EpochEffect::start) group(e.group);
        // (Section 11.5.5: assert is 0 or an OR of MPI_MODE_* constants.)
        if (e.assert_flags & format::assert_flag::other)
          add("assert", "the assert argument has bits that are none of the MPI_MODE_* constants");
        if (e.call == Call::Win_lock && e.lock_type == format::LockType::unspecified && m_recorded)
          add("lock type", "lock_type is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED");
        break;
      }
      case Role::request: requests(e, t); break;
      case Role::handle: handle(e, t); break;
      case Role::env:
        if (e.call == Call::Abort) comm(e.comm);
        break;
      case Role::local:  // Pack, Unpack, Reduce_local
        buffers(e, t);
        if (t.op == format::Combine::reduce && !lacks(format::Content::type_signatures)) reduction_op(e);
        break;
      case Role::none: case Role::local_access: case Role::cuda: case Role::query: case Role::outside: case Role::thread: break;
    }
    // (rc first: most calls return MPI_SUCCESS.)
    if (e.rc != 0 && !e.pending && !m_found) error_code(e);
    effects(e, t);
  }

  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) {
      return t.family != format::Family::none && t.family != format::Family::cuda;
    });
  }

  std::vector<RawProblem> problems;

 private:
  // aliased(): the bytes [lo, hi) of a call's buffer `buffer` (an index
  // into its EventBuffers).
  struct Block {
    uint64_t lo = 0, hi = 0;
    uint32_t buffer = 0;
  };
  // The two blocks reaching farthest among those added, of two different
  // buffers.
  struct Reach {
    struct Far {
      uint64_t hi = 0;
      uint32_t buffer = UINT32_MAX;  // none yet
    };
    Far top, other;  // other: the farthest of a buffer other than top's
    void add(const Block& x) {
      if (x.buffer == top.buffer) {
        top.hi = std::max(top.hi, x.hi);
      } else if (x.hi > top.hi) {
        other = top;
        top = Far{x.hi, x.buffer};
      } else if (x.hi > other.hi) {
        other = Far{x.hi, x.buffer};
      }
    }
    // A block added of a buffer other than x's that reaches past x's start.
    const Far* past(const Block& x) const {
      for (const Far* f : {&top, &other})
        if (f->buffer != UINT32_MAX && f->buffer != x.buffer && f->hi > x.lo) return f;
      return nullptr;
    }
  };
  static constexpr std::size_t k_max_alias_blocks = std::size_t{1} << 16;
  std::vector<Block> m_blocks;
  std::vector<Strided> m_pieces;  // overlapping()

 public:
  // The buffered messages that fit the attached buffer alone, in call
  // order, and the attached buffers they went into (finish() counts what
  // they hold together: held_at_once).
  struct AttachPeriod {
    uint64_t seq = 0;  // the MPI_Buffer_attach
    uint32_t site = 0;
    uint64_t bytes = 0;
  };
  struct BufferedSend {
    uint64_t seq = 0;  // the MPI_Bsend, MPI_Ibsend or MPI_Start
    uint32_t site = 0;
    Call call = Call::unspecified;
    uint64_t needed = 0;   // data bytes + MPI_BSEND_OVERHEAD
    uint32_t attach = 0;   // index in attaches
  };
  std::vector<AttachPeriod> attaches;
  std::vector<BufferedSend> buffered_sends;
  // Each MPI_Comm_create and MPI_Comm_create_group on an intracommunicator,
  // with its group's world ranks (and the tag), for the rules across ranks
  // (finish).
  struct GroupArg {
    uint64_t seq = 0;
    uint32_t site = 0;
    uint32_t comm = 0;  // rank-local
    Call call = Call::Comm_create;
    int32_t tag = 0;    // Comm_create_group's
    std::vector<uint32_t> group;
  };
  std::vector<GroupArg> group_args;
  // The windows this rank created (Win_create, Win_allocate,
  // Win_allocate_shared with their memory; Win_create_dynamic with the
  // memory it attached: `attached`), and the target range of each RMA
  // communication call, for the rule across ranks (finish: the target's
  // window is the target rank's).
  struct WindowShape {
    uint64_t seq = 0;  // the creation
    uint32_t site = 0;
    Call call = Call::unspecified;
    uint32_t window = 0;  // rank-local
    uint64_t size = 0;
    int32_t disp_unit = 0;
    bool dynamic = false;  // Win_create_dynamic (size 0, disp_unit 1: target_disp is an address)
  };
  std::vector<WindowShape> window_shapes;
  // The memory this rank attached to its dynamic windows (MPI_Win_attach),
  // whenever: a region detached later still counts (no false alarm from an
  // order the trace cannot fix).
  struct AttachedMemory {
    uint32_t window = 0;  // rank-local
    uint64_t base = 0, size = 0;
  };
  std::vector<AttachedMemory> attached;
  // Whether this rank's trace ends cleanly: a rank cut short may have
  // attached memory after its last recorded event.
  bool whole() const { return m_data.end.has_value() && !m_data.truncated; }
  // The target ranges, one entry per call site, window, target and target
  // layout (count, datatype, data span): of its calls, the first with the
  // smallest target_disp and the first with the largest. The target's
  // disp_unit is positive, so those two reach furthest below and above
  // the target's window: they alone are judged (finish), whatever the
  // number of calls (a loop over displacements keeps two).
  struct RmaCall {
    uint64_t seq = 0;
    int64_t disp = 0;  // target_disp, in the target's disp units
    bool pending = false;
  };
  struct RmaRange {
    uint32_t site = 0;
    Call call = Call::unspecified;
    uint32_t window = 0;  // rank-local
    int32_t target = 0;   // in the window's communicator
    int64_t count = 0;    // of `datatype`, at the target
    uint32_t datatype = 0;
    DataSpan span;        // the bytes they hold data in, from the displacement
    RmaCall low, high;
    bool same_place(const RmaRange& o) const {
      return site == o.site && call == o.call && window == o.window && target == o.target && count == o.count &&
             datatype == o.datatype && span == o.span;
    }
  };
  std::vector<RmaRange> rma_ranges;

 private:
  // --- reporting

  void error_code(const Event& e) {
    add("error code", fmt::format("the call failed with error code {}", e.rc), {},
        {"MPI reported an error that smtrace cannot name from the recorded arguments"});
    if (!problems.empty()) problems.back().generic = true;
  }

  void add(std::string problem, std::string message, std::optional<RawSite> related = {},
           std::vector<std::string> notes = {}) {
    m_found = true;
    if (problems.size() >= k_max_per_rank) return;
    RawProblem p;
    p.problem = std::move(problem);
    p.message = fmt::format("{}: {}", format::call_name(m_event->call), message);
    p.sites.push_back(raw_site(m_data.rank, *m_event, m_event->pending ? "the call never returned" : "called here"));
    if (related) p.sites.push_back(std::move(*related));
    p.notes = std::move(notes);
    problems.push_back(std::move(p));
  }

  // --- handles

  void comm(uint32_t id) {
    // Most calls: a communicator that is neither null nor invalid, on a
    // rank that freed none (the table is not hashed into then).
    if (id != format::k_null_id && id != format::k_invalid_id && !m_comm_rules) return;
    comm_rules(id);
  }

  void comm_rules(uint32_t id) {
    if (id == format::k_null_id) return add("null comm", "the communicator is MPI_COMM_NULL");
    if (id == format::k_invalid_id) return add("invalid comm", "the communicator is invalid (freed or never created)");
    for (const UnreadyComm& u : m_unready_comms) {
      if (u.comm == id)
        return add("comm not ready",
                   fmt::format("{} is used before the {} that makes it completes", comm_text(id),
                               format::call_name(u.made.call)),
                   u.made,
                   {"the new communicator of a non-blocking constructor may be used only once its request "
                    "completes (MPI-3.1 section 6.4.2, MPI_COMM_IDUP)"});
    }
    if (auto it = m_freed_comms.find(id); it != m_freed_comms.end())
      add("freed comm", fmt::format("{} was freed by {} ({}:{})", comm_text(id), format::call_name(it->second.call),
                                    m_data.rank, it->second.seq),
          it->second);
  }

  void window(uint32_t id) {
    // (An OTF2 import without smtrace's attributes, which also lacks the
    // type signatures, knows a call's window only from an RMA record.)
    if (id == 0) {
      if (!lacks(format::Content::type_signatures)) add("null window", "the window is MPI_WIN_NULL");
      return;
    }
    if (id == format::k_invalid_id) return add("invalid window", "the window is invalid (freed or never created)");
    if (auto it = m_freed_windows.find(id); it != m_freed_windows.end())
      add("freed window", fmt::format("window {} was freed by MPI_Win_free ({}:{})", id, m_data.rank, it->second.seq),
          it->second);
  }

  // Return the communicator of window `id` (the one it was created on), or
  // k_null_id when unknown.
  uint32_t window_comm(uint32_t id) const {
    auto it = m_window_comm.find(id);
    return it == m_window_comm.end() ? format::k_null_id : it->second;
  }

  void group(uint32_t id) {
    if (id == format::k_null_id) return add("null group", "the group is MPI_GROUP_NULL");
    if (id == format::k_invalid_id) return add("invalid group", "the group is invalid (freed or never created)");
    if (auto it = m_freed_groups.find(id); it != m_freed_groups.end())
      add("freed group", fmt::format("group {} was freed by MPI_Group_free ({}:{})", id, m_data.rank, it->second.seq),
          it->second);
  }

  // A neighborhood collective needs a communicator with a virtual
  // topology (MPI-3.1 section 7.6): never MPI_COMM_WORLD or MPI_COMM_SELF,
  // nor a recorded intracommunicator whose definition has none (the
  // tracer asks MPI_Topo_test of each, but of those MPI_Comm_idup makes).
  void topology(uint32_t id) {
    // (Imports before the topologies bit existed did not say they lack them.)
    if (!m_recorded || lacks(format::Content::topologies) ||
        m_data.header.options.count(std::string(format::k_imported_option)))
      return;
    bool none = id == format::k_comm_world || id == format::k_comm_self;
    if (const format::CommDef* def = m_data.comm(id); !none && def)
      none = !def->inter && def->topology == format::Topology::none && !m_idup_comms.count(id);
    if (none) add("no topology", fmt::format("{} has no virtual topology (Cartesian, graph or distributed graph)",
                                             comm_text(id)));
  }

  // MPI_Cart_create's dims (counts): none negative, and a grid no larger
  // than the communicator (MPI-3.1 section 7.5.1).
  void cart_dims(const Event& e) {
    uint64_t grid = 1;
    for (std::size_t k = 0; k < e.counts.size(); ++k) {
      if (e.counts[k] < 0) return add("cart dims", fmt::format("dims[{}] = {} is negative", k, e.counts[k]));
      grid = std::min<uint64_t>(grid * static_cast<uint64_t>(e.counts[k]), uint64_t{1} << 40);
    }
    const format::CommPlace place = comm_place(m_data, e.comm);
    if (place.size > 0 && grid > place.size)
      add("cart dims", fmt::format("the grid of {} is larger than {} ({})", plural(grid, "rank"), comm_text(e.comm),
                                   plural(place.size, "rank")));
  }

  // The ranks of MPI_Group_incl / _excl (counts: the ranks) and of
  // MPI_Group_range_incl / _excl (counts: (first, last, stride) triplets):
  // each must be a rank of the input group, all of them distinct, and no
  // stride 0 (MPI-3.1 section 6.3.2). The first wrong one is reported.
  void group_ranks(const Event& e) {
    if (e.count < 0) return add("count", fmt::format("n = {} is negative", e.count));
    const format::CommDef* def = m_data.comm(e.group);
    if (e.counts.empty() || !def) return;
    const int64_t size = static_cast<int64_t>(def->world_ranks.size());
    const bool ranges = e.call == Call::Group_range_incl || e.call == Call::Group_range_excl;
    std::unordered_map<int64_t, std::string> seen;  // rank -> where it was named
    // Take rank `r`, named at `where`; return false once it is wrong.
    auto take = [&](int64_t r, const std::string& where) {
      if (r < 0 || r >= size) {
        add("group rank", fmt::format("{} is rank {}, out of range for the group ({})", where, r,
                                      plural(static_cast<uint64_t>(size), "rank")));
        return false;
      }
      auto [it, fresh] = seen.try_emplace(r, where);
      if (!fresh) {
        add("group rank repeated", fmt::format("rank {} is named twice ({} and {}): the ranks must be distinct", r,
                                               it->second, where));
        return false;
      }
      return true;
    };
    if (!ranges) {
      for (std::size_t k = 0; k < e.counts.size(); ++k) {
        if (!take(e.counts[k], fmt::format("ranks[{}]", k))) return;
      }
      return;
    }
    for (std::size_t k = 0; k + 2 < e.counts.size(); k += 3) {
      const int64_t first = e.counts[k], last = e.counts[k + 1], stride = e.counts[k + 2];
      const std::string where = fmt::format("ranges[{}] = ({}, {}, {})", k / 3, first, last, stride);
      if (stride == 0) return add("group range stride", fmt::format("{} has stride 0", where));
      // Its ranks: first, first + stride, ... while not past last (none
      // when first lies beyond last in the stride's direction). At most
      // size + 1 of them are taken: one more is out of range or repeated.
      int64_t taken = 0;
      for (int64_t r = first; (stride > 0 ? r <= last : r >= last) && taken <= size; r += stride, ++taken) {
        if (!take(r, where)) return;
      }
    }
  }

  // A datatype argument that describes `count` elements of data (a buffer
  // or a constructor's old type: `for_data` is false there, where an
  // uncommitted type is fine).
  void datatype(uint32_t id, int64_t count, bool for_data) {
    // A predefined datatype other than MPI_DATATYPE_NULL passes every rule.
    if (id != k_type_null && id < format::k_first_derived_id) return;
    datatype_rules(id, count, for_data);
  }

  void datatype_rules(uint32_t id, int64_t count, bool for_data) {
    if (lacks(format::Content::type_signatures)) return;
    if (id == k_type_null) {
      if (m_recorded && count > 0) add("null datatype", "the datatype is MPI_DATATYPE_NULL");
      return;
    }
    if (id == format::k_invalid_id) return add("invalid datatype", "the datatype is invalid (freed or never created)");
    if (id < format::k_first_derived_id) return;
    if (auto it = m_freed_types.find(id); it != m_freed_types.end()) {
      return add("freed datatype",
                 fmt::format("datatype {} was freed by MPI_Type_free ({}:{})", id, m_data.rank, it->second.seq),
                 it->second);
    }
    if (!for_data || m_committed.count(id)) return;
    auto made = m_created_types.find(id);
    if (made == m_created_types.end()) return;  // not made by a recorded constructor: its state is unknown
    add("uncommitted datatype",
        fmt::format("datatype {} ({}) is used without MPI_Type_commit", id, format::call_name(made->second.call)),
        made->second, {"a derived datatype must be committed before it is used in communication (MPI-3.1 section 4.1.9)"});
  }

  void op(uint32_t id) {
    if (id == k_op_null) {
      // (OTF2 holds no op: an import without smtrace's attributes, which
      // also lacks the type signatures, does not know it.)
      if (m_recorded && !lacks(format::Content::type_signatures)) add("null op", "the op is MPI_OP_NULL");
      return;
    }
    if (id == format::k_invalid_id) return add("invalid op", "the op is invalid (freed or never created)");
    if (auto it = m_freed_ops.find(id); it != m_freed_ops.end())
      add("freed op", fmt::format("user op {} was freed by MPI_Op_free ({}:{})", id, m_data.rank, it->second.seq),
          it->second);
  }

  // --- values

  void rank(const std::optional<int32_t>& value, RankUse use, uint32_t comm_id) {
    if (!value) return;
    const int32_t v = *value;
    // Most ranks: one of MPI_COMM_WORLD's (the wildcards and MPI_PROC_NULL,
    // MPI_ROOT are negative), which every rule of rank_rules lets pass.
    if (v >= 0 && comm_id == format::k_comm_world && static_cast<uint64_t>(v) < m_world_size) return;
    rank_rules(v, use, comm_id);
  }

  void rank_rules(int32_t v, RankUse use, uint32_t comm_id) {
    const bool has_comm = comm_id != format::k_null_id && comm_id != format::k_invalid_id;
    const format::CommPlace place = has_comm ? comm_place(m_data, comm_id) : format::CommPlace{};
    const char* what = use == RankUse::dest ? "destination" : use == RankUse::source ? "source"
                       : use == RankUse::root ? "root" : "target";
    if (v == format::k_proc_null) {
      if (use == RankUse::root && has_comm && !place.inter && place.size > 0)
        add("root", fmt::format("root MPI_PROC_NULL on the intracommunicator {}", comm_text(comm_id)), {},
            {"MPI_PROC_NULL and MPI_ROOT are roots on intercommunicators only"});
      return;
    }
    if (v == format::k_any_source) {
      if (use != RankUse::source)
        add("rank", fmt::format("{} rank MPI_ANY_SOURCE (-1): only receives and probes take a wildcard", what));
      return;
    }
    if (v == format::k_root) {
      if (use != RankUse::root || (has_comm && place.size > 0 && !place.inter))
        add("rank", fmt::format("{} rank MPI_ROOT on {}: MPI_ROOT is a root on an intercommunicator only", what,
                                comm_text(comm_id)));
      return;
    }
    if (v < 0) return add("rank", fmt::format("{} rank {} is negative", what, v));
    if (!has_comm || place.size == 0) return;
    if (static_cast<uint64_t>(v) >= place.size) {
      const std::string where = use == RankUse::target
                                    ? fmt::format("the window's communicator ({})", comm_text(comm_id))
                                    : comm_text(comm_id);
      add("rank", fmt::format("{} rank {} is out of range for {} ({}{})", what, v, where,
                              place.inter ? "remote group of " : "", plural(place.size, "rank")));
    }
  }

  // The source and tag a receive or probe was posted with (an imported
  // trace may not hold them: it gives the matched message's).
  void envelope(const std::optional<int32_t>& source, const std::optional<int32_t>& tag_value, uint32_t comm_id) {
    if (lacks(format::Content::receive_envelope)) return;
    rank(source, RankUse::source, comm_id);
    tag(tag_value, true);
  }

  void tag(const std::optional<int32_t>& value, bool receive) {
    if (!value) return;
    const int32_t v = *value;
    // Most tags: in [0, MPI_TAG_UB].
    if (v >= 0 && (!m_tag_ub || static_cast<uint64_t>(v) <= *m_tag_ub)) return;
    tag_rules(v, receive);
  }

  void tag_rules(int32_t v, bool receive) {
    if (receive && v == format::k_any_tag) return;
    if (v < 0) {
      add("tag", fmt::format("tag {} is invalid: tags are 0 to MPI_TAG_UB{}", v,
                             receive ? " or MPI_ANY_TAG" : " (MPI_ANY_TAG is for receives only)"));
      return;
    }
    if (m_tag_ub && static_cast<uint64_t>(v) > *m_tag_ub)
      add("tag", fmt::format("tag {} is above MPI_TAG_UB ({})", v, *m_tag_ub));
  }

  // The header option `key` as a number (nullopt: absent or not a number).
  std::optional<uint64_t> header_number(const char* key) const {
    auto it = m_data.header.options.find(key);
    if (it == m_data.header.options.end()) return std::nullopt;
    try {
      return std::stoull(it->second);
    } catch (...) {
      return std::nullopt;
    }
  }

  // Counts, datatypes and NULL buffers of every buffer the call uses here.
  // A send's or a receive's one buffer is read from the event (one_buffer:
  // what event_call_buffers would give), without the memo. (Inline in
  // event(): sends and receives, most events, call it.)
  [[gnu::always_inline]] void buffers(const Event& e, const format::CallTraits& t) {
    if (one_buffer(t.buffers)) {
      buffer(e.buf, e.count, e.datatype, format::BufferArg::buf);
      if (t.buffers == format::BufferLayout::recv && e.datatype >= format::k_first_derived_id && !m_found)
        overlapping(e.count, e.datatype, "the receive buffer");
      return;
    }
    bool negative = false;
    for (const format::Buffer& b : event_call_buffers(e, m_data)) {
      if (b.maybe || b.arg == format::BufferArg::local) continue;
      if (b.count < 0) {
        if (negative) continue;  // (one finding per call)
        negative = true;
        // The count as the call was given it, not the buffer's total (an
        // MPI_Alltoall's sendcount, not sendcount times the ranks).
        const int64_t given = b.arg == format::BufferArg::recv_buf ? e.recv_count
                              : b.arg == format::BufferArg::buf    ? e.count
                                                                   : 0;
        add("count", fmt::format("count {} is negative", given < 0 ? given : b.count));
        continue;
      }
      buffer(b.addr, b.count, b.datatype, b.arg);
      // (An accumulate's target is updated element by element, atomically: not a receive.)
      if (b.datatype >= format::k_first_derived_id && writes(b.access) && !m_found &&
          !(b.arg == format::BufferArg::target && b.access == format::BufferAccess::update))
        overlapping(b.count, b.datatype, buffer_name(e, b.arg, b.access));
    }
    if (!m_found && t.role != Role::local && m_recorded && !lacks(format::Content::buffers) &&
        !lacks(format::Content::type_signatures))
      aliased(e);
  }

  // MPI-3.1 section 2.3: an OUT or INOUT argument may not alias another
  // argument of the same call. Sections 3.10 (MPI_Sendrecv: "the send
  // buffer and receive buffer must be disjoint"), 5.2.1 (the collectives:
  // MPI_IN_PLACE is how they share), 5.5 (Gatherv's blocks: no location
  // "written more than once") and 11.3.4 (Get_accumulate's origin and
  // result) say it of each. Only the bytes the call touches count (a
  // datatype's holes do not); two reads may share bytes. Pack and Unpack
  // (Role::local) are left out: their output is recorded as the whole
  // buffer, not the bytes written. Calls of one buffer never come here.
  void aliased(const Event& e) {
    const EventBuffers& call = event_buffers(e, m_data);
    if (call.buffers.size() < 2 ||
        std::none_of(call.buffers.begin(), call.buffers.end(),
                     [](const BufferBytes& b) { return writes(b.buffer.access); }))
      return;
    std::vector<Block>& blocks = m_blocks;
    blocks.clear();
    for (uint32_t i = 0; i < call.buffers.size(); ++i) {
      const BufferBytes& b = call.buffers[i];
      // MPI_Compare_and_swap's compare buffer, only read, may be its result
      // buffer: section 11.3.4 asks only the origin and result buffers to be
      // disjoint (the compare-exchange idiom passes one variable for both).
      if (b.buffer.arg == format::BufferArg::compare_buf) continue;
      for (uint32_t k = b.first; k < b.last; ++k)
        if (!add_blocks(call.pieces[k], i)) return;  // too many to compare: no finding
    }
    std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.lo < b.lo; });
    // Sweeping by start, the blocks before reaching farthest: of every
    // buffer and of the written ones, each the farthest two of different
    // buffers (a block overlaps another buffer's iff the farthest of the
    // buffers other than its own reaches past its start).
    Reach any, written;
    for (const Block& x : blocks) {
      const bool w = writes(call.buffers[x.buffer].buffer.access);
      if (const Reach::Far* hit = (w ? any : written).past(x)) {
        const BufferBytes& a = call.buffers[std::min(hit->buffer, x.buffer)];  // in the call's order
        const BufferBytes& b = call.buffers[std::max(hit->buffer, x.buffer)];
        const std::string_view first = buffer_name(e, a.buffer.arg, a.buffer.access),
                               second = buffer_name(e, b.buffer.arg, b.buffer.access);
        add("aliased buffers",
            first == second
                ? fmt::format("two blocks of {} share byte {:#x}", first, x.lo)
                : fmt::format("{} and {} share byte {:#x}", first, second, x.lo),
            {},
            {format::call_traits(e.call).role == Role::sendrecv
                 ? "the send and receive buffers of MPI_Sendrecv must be disjoint (MPI-3.1 section 3.10); "
                   "MPI_Sendrecv_replace sends and receives in one buffer"
                 : "an output argument may not alias another argument of the same call (MPI-3.1 section 2.3); a "
                   "collective that reads and writes one buffer takes MPI_IN_PLACE"});
        return;
      }
      any.add(x);
      if (w) written.add(x);
    }
  }

  // MPI-3.1 section 4.1: "A datatype may specify overlapping entries. The
  // use of such a datatype in a receive operation is erroneous", even where
  // the message is too short to write an entry twice; sections 11.3.1 and
  // 11.3.2 say it of MPI_Put's target and MPI_Get's origin. `count`
  // elements of derived type `type` are checked as a whole: elements whose
  // extent is less than their span can overlap each other too.
  void overlapping(int64_t count, uint32_t type, std::string_view name) {
    // Any base but 0 (MPI_BOTTOM: absolute offsets) gives the same pattern.
    constexpr uint64_t k_base = uint64_t{1} << 62;
    if (count <= 0 || lacks(format::Content::type_signatures)) return;
    const format::DatatypeDef* def = m_data.datatype(type);
    if (!def || def->truncated || def->runs.empty()) return;
    std::optional<uint64_t> shared;
    // A run's blocks closer than their length (Footprint merges them into one).
    for (const format::Run& r : def->runs) {
      const uint64_t distance = r.stride < 0 ? static_cast<uint64_t>(-r.stride) : static_cast<uint64_t>(r.stride);
      if (r.count < 2 || r.length <= distance) continue;
      const int64_t lowest = r.stride < 0 ? r.offset + static_cast<int64_t>(r.count - 1) * r.stride : r.offset;
      shared = std::min(shared.value_or(UINT64_MAX), k_base + static_cast<uint64_t>(lowest) + distance);
    }
    const Footprint footprint(m_data);
    std::vector<Strided>& pieces = m_pieces;
    pieces.clear();
    if (!shared) footprint.add(pieces, k_base, count, type);
    if (pieces.size() == 1) {
      // One piece (a contiguous or vector type: most): its blocks overlap iff longer than their distance.
      const Strided& p = pieces[0];
      if (p.count > 1 && p.size > p.distance) shared = p.lo + p.distance;
    } else if (pieces.size() > 1) {
      std::vector<Block>& blocks = m_blocks;
      blocks.clear();
      for (const Strided& p : pieces)
        if (!add_blocks(p, 0)) return;  // too many to compare: no finding
      std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.lo < b.lo; });
      uint64_t reach = 0;
      for (const Block& x : blocks) {
        if (reach > x.lo) {
          shared = x.lo;
          break;
        }
        reach = std::max(reach, x.hi);
      }
    }
    if (!shared) return;
    const int64_t extent = footprint.extent(type);
    const uint64_t at = *shared - k_base;
    add("overlapping entries",
        fmt::format("{} has {} {} of {}, which {} overlapping entries: byte {} from its start is written twice", name,
                    count, count == 1 ? "element" : "elements", basic_type_name(type),
                    count > 1 && extent > 0 && at >= static_cast<uint64_t>(extent) ? "as laid out have"
                                                                                  : "has",
                    at),
        {},
        {"a datatype with overlapping entries may not describe a buffer MPI writes into (MPI-3.1 section 4.1), "
         "even where the message is too short to write an entry twice"});
  }

  // Append the blocks of piece `p` of buffer `buffer` to m_blocks (for
  // aliased() and overlapping()); false when they would pass
  // k_max_alias_blocks, too many to compare.
  bool add_blocks(const Strided& p, uint32_t buffer) {
    if (p.size == 0) return true;
    if (p.count > k_max_alias_blocks - m_blocks.size()) return false;
    for (uint64_t j = 0; j < p.count; ++j)
      m_blocks.push_back(Block{p.lo + j * p.distance, p.lo + j * p.distance + p.size, buffer});
    return true;
  }

  // "the send buffer", "the origin buffer", ... for a finding on buffer
  // argument `arg` of call `e`, which `access`es it (Event.buf: a send's
  // or a receive's, an RMA call's origin).
  static std::string_view buffer_name(const Event& e, format::BufferArg arg, format::BufferAccess access) {
    switch (arg) {
      case format::BufferArg::buf:
        return format::call_traits(e.call).role == Role::rma_comm ? "the origin buffer"
               : writes(access)                                    ? "the receive buffer"
                                                                   : "the send buffer";
      case format::BufferArg::recv_buf: return "the receive buffer";
      case format::BufferArg::result_buf: return "the result buffer";
      case format::BufferArg::compare_buf: return "the compare buffer";
      case format::BufferArg::target: return "the target buffer";
      case format::BufferArg::local: break;
    }
    return "a buffer";
  }

  // One buffer argument of the call: `count` (negative ones are reported
  // once per call) elements of `type` at `addr`.
  [[gnu::always_inline]] void buffer(uint64_t addr, int64_t count, uint32_t type, format::BufferArg arg) {
    if (count < 0) return add("count", fmt::format("count {} is negative", count));
    datatype(type, count, true);
    // Address 0 is NULL only where the tracer recorded the address.
    if (arg == format::BufferArg::target || addr != 0 || count == 0 || !m_recorded || lacks(format::Content::buffers))
      return;
    if (type < format::k_first_derived_id && basic_type_size(type) > 0)
      add("null buffer", fmt::format("the buffer is NULL with count {} of {}", count, basic_type_name(type)));
  }

  // MPI_IN_PLACE: where format::in_place_use allows it (MPI-3.1 section
  // 5.2.1), never on an intercommunicator. That every member of an
  // Allreduce, Allgather, ... passes it or none does is collective-mismatch's.
  void in_place(const Event& e) {
    if (!e.in_place) return;
    const format::CommPlace place = comm_place(m_data, e.comm);
    if (place.inter) return add("in place", "MPI_IN_PLACE on an intercommunicator");
    const format::InPlaceUse use = format::in_place_use(e.call);
    if (use == format::InPlaceUse::never) return add("in place", "MPI_IN_PLACE is not allowed here");
    if (use == format::InPlaceUse::root_only && e.peer && place.rank && *e.peer >= 0 && *e.peer != *place.rank)
      add("in place", fmt::format("MPI_IN_PLACE at rank {} of {}, which is not the root ({})", *place.rank,
                                  comm_text(e.comm), *e.peer),
          {}, {"only the root passes MPI_IN_PLACE to MPI_Reduce, MPI_Gather(v) and MPI_Scatter(v)"});
  }

  void reduction_op(const Event& e) {
    op(e.op);
    if (e.op == k_op_null) return;
    // The datatype of the reduction: the send side's, the receive side's in place.
    const uint32_t type = !e.in_place && e.datatype != k_type_null ? e.datatype : e.recv_datatype;
    if (type >= format::k_first_derived_id || type == k_type_null) return;
    if (op_fits(e.op, type, OpUse::reduction) == OpFit::does_not_fit)
      add("op type", fmt::format("{} is not defined for {} ({})", op_name(e.op), basic_type_name(type),
                                 type_class_name(type_class(type))),
          {}, {"MPI-3.1 section 5.9.2 lists the datatypes each predefined op applies to"});
  }

  // The op and datatypes of an RMA call (MPI-3.1 sections 11.3.4, 11.3.4.x).
  void rma_types(const Event& e, const format::CallTraits& t) {
    if (e.peer == format::k_proc_null) return;
    if (t.op == format::Combine::swap) {
      const Makeup m = basic_makeup(m_data, e.datatype);
      if (e.datatype >= format::k_first_derived_id)
        return add("rma type", "MPI_Compare_and_swap takes a predefined datatype only");
      if (m.kind != Makeup::Kind::one) return;
      const TypeClass c = type_class(m.type);
      if (c != TypeClass::c_integer && c != TypeClass::fortran_integer && c != TypeClass::logical &&
          c != TypeClass::byte && c != TypeClass::multi_language)
        add("rma type", fmt::format("MPI_Compare_and_swap is not defined for {} ({})", basic_type_name(m.type),
                                    type_class_name(c)),
            {}, {"its datatype must be a C or Fortran integer, logical, multi-language or byte type (MPI-3.1 section "
                 "11.3.4)"});
      return;
    }
    if (t.op != format::Combine::accumulate) return;
    op(e.op);
    if (e.op == k_op_null) return;
    const OpUse use = t.buffers == format::BufferLayout::accumulate ? OpUse::accumulate : OpUse::fetch_accumulate;
    if (t.buffers == format::BufferLayout::fetch_and_op && e.datatype >= format::k_first_derived_id)
      return add("rma type", "MPI_Fetch_and_op takes a predefined datatype only");
    const uint32_t type = t.buffers == format::BufferLayout::fetch_and_op ? e.datatype : e.target_datatype;
    const Makeup m = basic_makeup(m_data, type);
    if (m.kind == Makeup::Kind::several) {
      return add("rma type",
                 fmt::format("the datatype of an accumulate mixes {} and {}", basic_type_name(m.type),
                             basic_type_name(m.other)),
                 {}, {"an accumulate's datatypes must be made of one predefined datatype (MPI-3.1 section 11.3.4)"});
    }
    if (m.kind != Makeup::Kind::one) return;
    if (e.op >= format::k_first_derived_id)
      return add("op type", fmt::format("{} in an accumulate: user-defined ops are not allowed there", op_name(e.op)),
                 {}, {"accumulates take predefined ops, MPI_REPLACE (and MPI_NO_OP for the fetching ones)"});
    if (op_fits(e.op, m.type, use) == OpFit::does_not_fit)
      add("op type", fmt::format("{} is not defined for {} ({}) in {}", op_name(e.op), basic_type_name(m.type),
                                 type_class_name(type_class(m.type)), format::call_name(e.call)));
  }

  // Keep the target range of RMA communication call `e` (whose other
  // arguments passed) in rma_ranges, for finish(), which knows the
  // target's window. Only where the tracer recorded the displacement and
  // the datatypes; not to MPI_PROC_NULL, nor with a target count of 0 or
  // a span not known for certain (Footprint::data_span).
  void rma_range(const Event& e) {
    if (!m_recorded || lacks(format::Content::buffers) || lacks(format::Content::type_signatures)) return;
    if (!e.peer || *e.peer < 0) return;
    for (const format::Buffer& b : event_call_buffers(e, m_data)) {
      if (b.arg != format::BufferArg::target) continue;
      const std::optional<DataSpan> span = Footprint(m_data).data_span(b.count, b.datatype);
      if (!span) return;
      const RmaCall at{e.seq, b.offset, e.pending};
      RmaRange r{e.site, e.call, e.window, *e.peer, b.count, b.datatype, *span, at, at};
      // (Most calls repeat the place of the call before: no lookup.)
      if (m_last_range >= rma_ranges.size() || !rma_ranges[m_last_range].same_place(r)) {
        auto [it, fresh] = m_range_index.try_emplace(range_key(r), static_cast<uint32_t>(rma_ranges.size()));
        if (fresh) {
          m_last_range = rma_ranges.size();
          rma_ranges.push_back(r);
          return;
        }
        m_last_range = it->second;
      }
      RmaRange& kept = rma_ranges[m_last_range];
      if (at.disp < kept.low.disp) kept.low = at;
      if (at.disp > kept.high.disp) kept.high = at;
      return;
    }
  }
  static std::string range_key(const RmaRange& r) {
    std::string key(sizeof(uint32_t) * 4 + sizeof(int64_t) * 3 + sizeof(Call), '\0');
    char* at = key.data();
    auto put = [&](const auto& v) {
      std::memcpy(at, &v, sizeof v);
      at += sizeof v;
    };
    put(r.site);
    put(r.call);
    put(r.window);
    put(r.target);
    put(r.count);
    put(r.datatype);
    put(r.span.lo);
    put(r.span.hi);
    return key;
  }

  // --- requests

  std::optional<RawSite> freed_request(uint64_t id) const {
    auto it = m_freed_requests.find(id);
    if (it == m_freed_requests.end()) return std::nullopt;
    return it->second;
  }

  // Call `f` with each request `e` names: its array, or its one request
  // when it has no array (none when that is MPI_REQUEST_NULL).
  template <class F>
  static void each_request(const Event& e, const F& f) {
    if (!e.requests.empty()) {
      for (uint64_t id : e.requests) f(id);
    } else if (e.request != 0) {
      f(e.request);
    }
  }

  void requests(const Event& e, const format::CallTraits& t) {
    switch (t.request) {
      case format::RequestEffect::start:
        if (e.requests.empty() && e.request == 0) return add("null request", "the request is MPI_REQUEST_NULL");
        each_request(e, [&](uint64_t id) { start(id); });
        return;
      case format::RequestEffect::complete_all: case format::RequestEffect::complete_any:
      case format::RequestEffect::complete_some:
        // On a rank that freed no request (most), only an invalid one is
        // reported: one test per request.
        if (m_freed_requests.empty()) {
          each_request(e, [&](uint64_t id) {
            if (id == format::k_invalid_request) used_rules(id);
          });
          return;
        }
        each_request(e, [&](uint64_t id) { used(id); });
        return;
      case format::RequestEffect::free: case format::RequestEffect::cancel:
        if (e.request == 0) return add("null request", "the request is MPI_REQUEST_NULL");
        used(e.request);
        return;
      case format::RequestEffect::query: used(e.request); return;  // MPI_REQUEST_NULL is allowed here
      case format::RequestEffect::none: case format::RequestEffect::create: case format::RequestEffect::persistent:
        return;
    }
  }

  void used(uint64_t id) {
    // Most requests: not MPI_REQUEST_NULL, not invalid, on a rank that freed none.
    if (id == 0 || (id != format::k_invalid_request && m_freed_requests.empty())) return;
    used_rules(id);
  }

  void used_rules(uint64_t id) {
    if (id == format::k_invalid_request)
      return add("invalid request", "the request is invalid (freed, completed, or never created)");
    if (m_freed_requests.empty()) return;  // most traces free no request
    if (auto freed = freed_request(id))
      add("freed request", fmt::format("the request was freed by MPI_Request_free ({}:{})", m_data.rank, freed->seq),
          *freed, {"a freed request may not be used again (MPI-3.1 section 3.7.3)"});
  }

  void start(uint64_t id) {
    if (id == 0) return add("null request", "the request is MPI_REQUEST_NULL");
    used(id);
    if (m_found) return;
    auto p = m_persistent.find(id);
    if (p != m_persistent.end()) {
      if (p->second.bsend_bytes) bsend_space(*p->second.bsend_bytes, p->second.made);
      if (p->second.active && !m_found)
        add("active request",
            fmt::format("the persistent request is started again while active (started at {}:{}, not completed since)",
                        m_data.rank, p->second.started.seq),
            p->second.started, {"MPI_Start on an active request is erroneous (MPI-3.1 section 3.9)"});
      return;
    }
    if (const OpenRequest* a = m_open->find(id); a && !a->persistent)
      add("not persistent",
          fmt::format("the request of {} ({}:{}) is not persistent", format::call_name(a->call), m_data.rank,
                      a->seq),
          RawSite{m_data.rank, a->seq, a->call, a->site, "the request is created here"},
          {"MPI_Start and MPI_Startall take persistent requests (MPI_Send_init, ...) only"});
  }

  // --- handles created and freed

  void handle(const Event& e, const format::CallTraits& t) {
    switch (t.resource) {
      case format::Resource::comm_new:
        comm(e.comm);
        if (e.call == Call::Comm_create || e.call == Call::Comm_create_group) group(e.group);
        if ((e.call == Call::Comm_create || (e.call == Call::Comm_create_group && e.tag)) &&
            !comm_place(m_data, e.comm).inter) {
          if (const format::CommDef* g = m_data.comm(e.group))
            group_args.push_back({e.seq, e.site, e.comm, e.call, e.tag.value_or(0), g->world_ranks});
        }
        if (e.call == Call::Comm_split && e.color < -1)  // (the tracer writes MPI_UNDEFINED as -1)
          add("split color", fmt::format("color {} is negative and not MPI_UNDEFINED", e.color));
        if (e.call == Call::Cart_create) cart_dims(e);
        return;
      case format::Resource::comm_free:
        if (e.comm == format::k_comm_world || e.comm == format::k_comm_self)
          return add("free predefined", fmt::format("{} cannot be freed", comm_text(e.comm)));
        comm(e.comm);
        return;
      case format::Resource::group_new:
        if (e.call == Call::Comm_group) {
          comm(e.comm);
        } else if (e.call != Call::Win_get_group) {
          group(e.group);
          group_ranks(e);
        }
        return;
      case format::Resource::group_free: group(e.group); return;
      case format::Resource::type_new:
        if (e.count < 0) add("count", fmt::format("count {} is negative", e.count));
        // Block lengths: the tracer records them only when one is negative.
        for (std::size_t k = 0; k < e.counts.size(); ++k) {
          if (e.counts[k] >= 0) continue;
          add("block length", e.counts.size() == 1
                                  ? fmt::format("blocklength {} is negative", e.counts[k])
                                  : fmt::format("array_of_blocklengths[{}] = {} is negative", k, e.counts[k]));
          break;
        }
        if (e.datatype != k_type_null) datatype(e.datatype, 1, false);
        return;
      case format::Resource::type_commit:
        if (e.datatype == k_type_null && m_recorded) return add("null datatype", "the datatype is MPI_DATATYPE_NULL");
        datatype(e.datatype, 0, false);
        return;
      case format::Resource::type_free:
        if (e.datatype == k_type_null && m_recorded) return add("null datatype", "the datatype is MPI_DATATYPE_NULL");
        if (e.datatype < format::k_first_derived_id)
          return add("free predefined", fmt::format("{} is predefined and cannot be freed", basic_type_name(e.datatype)));
        datatype(e.datatype, 0, false);
        return;
      case format::Resource::op_new: return;
      case format::Resource::op_free:
        if (e.new_datatype != k_op_null && e.new_datatype < format::k_first_derived_id)
          return add("free predefined", fmt::format("{} is predefined and cannot be freed", op_name(e.new_datatype)));
        op(e.new_datatype);
        return;
      case format::Resource::win_new: case format::Resource::win_dynamic:
        comm(e.comm);
        if (t.resource == format::Resource::win_new && m_recorded && !lacks(format::Content::buffers)) {
          // (The size is an MPI_Aint, recorded as its bits.)
          if (static_cast<int64_t>(e.win_size) < 0)
            add("window size", fmt::format("size {} is negative", static_cast<int64_t>(e.win_size)));
          if (e.disp_unit <= 0) add("disp unit", fmt::format("disp_unit {} is not positive", e.disp_unit));
        }
        return;
      case format::Resource::win_free: case format::Resource::win_attach: case format::Resource::win_detach:
        window(e.window);
        return;
      case format::Resource::buffer_attach: return attach(e);
      case format::Resource::buffer_detach:
        if (e.rc == 0 && !e.pending) m_attached.reset();
        return;
      case format::Resource::info_free:
        // (MPI_Info_free sets the handle to MPI_INFO_NULL: a second free of it is this.)
        if (e.new_datatype == 0 && m_recorded) add("null info", "the info is MPI_INFO_NULL");
        return;
      case format::Resource::info_new: case format::Resource::message_new: case format::Resource::message_free:
      case format::Resource::none:
        return;
    }
  }

  // --- buffered sends (MPI-4.0 section 3.6)

  void attach(const Event& e) {
    if (!m_recorded) return;
    if (m_attached)
      add("bsend buffer",
          fmt::format("a buffer is attached already ({} bytes, at {}:{})", m_attached->bytes, m_data.rank,
                      m_attached->site.seq),
          m_attached->site, {"only one buffer can be attached to a process at a time (MPI-4.0 section 3.6)"});
    if (e.rc == 0 && !e.pending && !m_attached)
      m_attached = Attached{e.size, RawSite{m_data.rank, e.seq, e.call, e.site, "the buffer is attached here"}};
  }

  // An MPI_Bsend or MPI_Ibsend (an MPI_Bsend_init is judged at each start).
  void buffered(const Event& e, const format::CallTraits& t) {
    if (t.request == format::RequestEffect::persistent || e.peer == format::k_proc_null || m_found) return;
    if (std::optional<uint64_t> bytes = buffer_bytes(m_data, e.datatype, e.count)) bsend_space(*bytes, {});
  }

  // A buffered message of `bytes` data bytes is sent now; `made`: the
  // MPI_Bsend_init that defined it, if any.
  void bsend_space(uint64_t bytes, std::optional<RawSite> made) {
    if (!m_recorded || lacks(format::Content::buffers)) return;
    const uint64_t needed = bytes + m_bsend_overhead;
    if (!m_attached) {
      add("bsend buffer",
          fmt::format("a buffered send of {} bytes with no buffer attached (MPI_Buffer_attach)", bytes),
          std::move(made),
          {"a buffered send copies its message into the buffer MPI_Buffer_attach gave; with none, or too little "
           "space, the send is erroneous (MPI-4.0 section 3.6)"});
      return;
    }
    if (needed <= m_attached->bytes) {
      if (attaches.empty() || attaches.back().seq != m_attached->site.seq)
        attaches.push_back(AttachPeriod{m_attached->site.seq, m_attached->site.site, m_attached->bytes});
      buffered_sends.push_back(BufferedSend{m_event->seq, m_event->site, m_event->call, needed,
                                            static_cast<uint32_t>(attaches.size() - 1)});
      return;
    }
    add("bsend buffer",
        fmt::format("the message needs at least {} bytes ({} of data{}) but the attached buffer has {}", needed, bytes,
                    m_bsend_overhead ? fmt::format(" + MPI_BSEND_OVERHEAD {}", m_bsend_overhead) : std::string(),
                    m_attached->bytes),
        m_attached->site,
        {"a buffered send needs MPI_Pack_size of its data plus MPI_BSEND_OVERHEAD free in the attached buffer "
         "(MPI-4.0 section 3.6)"});
  }

  // --- what the call did to the rank's handles (calls that returned MPI_SUCCESS)

  [[gnu::always_inline]] void effects(const Event& e, const format::CallTraits& t) {
    if (e.pending || e.rc != 0) return;
    // Calls with no handle resource (most events) make, commit and free none.
    if (t.resource != format::Resource::none) handle_effects(e, format::handle_use(e));
    if (t.request != format::RequestEffect::none) request_effects(e, t);
  }

  void handle_effects(const Event& e, const format::HandleUse& h) {
    switch (h.effect) {
      case format::HandleEffect::create:
        switch (h.kind) {
          case format::HandleKind::comm:
            m_freed_comms.erase(h.id);
            comms_changed();
            // A communicator a call makes with a request (Comm_idup) is not
            // ready until that request completes.
            if (format::call_traits(e.call).request == format::RequestEffect::create && e.request != 0) {
              m_unready_comms.push_back(
                  {h.id, e.request, RawSite{m_data.rank, e.seq, e.call, e.site, "the communicator is made here"}});
              m_idup_comms.insert(h.id);
            }
            comms_changed();
            break;
          case format::HandleKind::group: m_freed_groups.erase(h.id); break;
          case format::HandleKind::datatype:
            m_freed_types.erase(h.id);
            m_created_types[h.id] = RawSite{m_data.rank, e.seq, e.call, e.site, "the datatype is created here"};
            // MPI_Type_dup: the new type is committed if the old one is (MPI-3.1 section 4.1.10).
            if (e.call == Call::Type_dup && (e.datatype < format::k_first_derived_id || m_committed.count(e.datatype)))
              m_committed.insert(h.id);
            break;
          case format::HandleKind::op: m_freed_ops.erase(h.id); break;
          case format::HandleKind::window:
            m_freed_windows.erase(h.id);
            m_window_comm[h.id] = e.comm;
            if (format::call_traits(e.call).resource == format::Resource::win_new && m_recorded &&
                !lacks(format::Content::buffers) && static_cast<int64_t>(e.win_size) >= 0 && e.disp_unit > 0)
              window_shapes.push_back({e.seq, e.site, e.call, h.id, e.win_size, e.disp_unit});
            if (format::call_traits(e.call).resource == format::Resource::win_dynamic && m_recorded &&
                !lacks(format::Content::buffers))
              window_shapes.push_back({e.seq, e.site, e.call, h.id, 0, 1, true});
            break;
          case format::HandleKind::message: case format::HandleKind::buffer: case format::HandleKind::info:
          case format::HandleKind::none:
            break;
        }
        break;
      case format::HandleEffect::commit: m_committed.insert(h.id); break;
      case format::HandleEffect::free: {
        const RawSite freed = raw_site(m_data.rank, e, fmt::format("{} frees it here", format::call_name(e.call)));
        switch (h.kind) {
          case format::HandleKind::comm:
            m_freed_comms[h.id] = freed;
            comms_changed();
            break;
          case format::HandleKind::group: m_freed_groups[h.id] = freed; break;
          case format::HandleKind::datatype:
            m_freed_types[h.id] = freed;
            m_committed.erase(h.id);
            m_created_types.erase(h.id);
            break;
          case format::HandleKind::op: m_freed_ops[h.id] = freed; break;
          case format::HandleKind::window: m_freed_windows[h.id] = freed; break;
          case format::HandleKind::message: case format::HandleKind::buffer: case format::HandleKind::info:
          case format::HandleKind::none:
            break;
        }
        break;
      }
      case format::HandleEffect::attach:
        if (m_recorded && !lacks(format::Content::buffers) && e.win_size > 0 && e.rc == 0)
          attached.push_back({h.id, e.win_base, e.win_size});
        break;
      case format::HandleEffect::detach: case format::HandleEffect::none: break;
    }
  }

  // (Inline in event(): a post or a completion, most events, calls it.)
  [[gnu::always_inline]] void request_effects(const Event& e, const format::CallTraits& t) {
    m_open->apply(e, t);  // (once per event for this pass and request-leak's)
    switch (t.request) {
      // A request handle MPI hands out again after a free or a completion
      // names the new request: what was known of the old one goes.
      case format::RequestEffect::create:
        if (e.request != 0) {
          // (erase on an empty std::unordered_map still hashes)
          if (!m_freed_requests.empty()) m_freed_requests.erase(e.request);
          if (!m_persistent.empty()) m_persistent.erase(e.request);
        }
        break;
      case format::RequestEffect::persistent:
        if (e.request != 0) {
          m_freed_requests.erase(e.request);
          Persistent& p = m_persistent[e.request] = Persistent{};
          if (t.mode == format::SendMode::buffered && e.peer != format::k_proc_null) {
            p.bsend_bytes = buffer_bytes(m_data, e.datatype, e.count);
            p.made = RawSite{m_data.rank, e.seq, e.call, e.site, "the persistent buffered send is made here"};
          }
        }
        break;
      case format::RequestEffect::start:
        each_request(e, [&](uint64_t id) {
          auto p = m_persistent.find(id);
          if (p == m_persistent.end()) return;
          p->second.active = true;
          p->second.started = RawSite{m_data.rank, e.seq, e.call, e.site, "it was started here"};
        });
        break;
      case format::RequestEffect::complete_all: case format::RequestEffect::complete_any:
      case format::RequestEffect::complete_some:
        if (!m_unready_comms.empty()) {
          for (const format::CompletedRequest& c : e.completed) ready(c.request);
        }
        if (m_persistent.empty()) break;  // (most ranks define no persistent request)
        for (const format::CompletedRequest& c : e.completed)
          if (auto p = m_persistent.find(c.request); p != m_persistent.end()) p->second.active = false;
        break;
      case format::RequestEffect::free:
        // A freed Comm_idup request completes unseen: no use of its
        // communicator is blamed from then on.
        if (!m_unready_comms.empty()) ready(e.request);
        if (e.request != 0 && e.request != format::k_invalid_request) {
          m_freed_requests[e.request] = RawSite{m_data.rank, e.seq, e.call, e.site, "MPI_Request_free frees it here"};
          m_persistent.erase(e.request);
        }
        break;
      case format::RequestEffect::none: case format::RequestEffect::cancel: case format::RequestEffect::query: break;
    }
  }

  void ready(uint64_t request) {
    m_unready_comms.erase(std::remove_if(m_unready_comms.begin(), m_unready_comms.end(),
                                         [&](const UnreadyComm& u) { return u.request == request; }),
                          m_unready_comms.end());
    comms_changed();
  }

  static constexpr std::size_t k_max_per_rank = 4096;

  // A communicator made by a call with a request, until that request completes.
  struct UnreadyComm {
    uint32_t comm;
    uint64_t request;
    RawSite made;
  };

  struct Persistent {
    bool active = false;
    RawSite started;
    // An MPI_Bsend_init's: the bytes a start buffers (nullopt: not a
    // buffered send, or its size unknown), and where it was made.
    std::optional<uint64_t> bsend_bytes;
    RawSite made;
  };

  // The buffer MPI_Buffer_attach attached (MPI-4.0 section 3.6).
  struct Attached {
    uint64_t bytes = 0;
    RawSite site;
  };

  const RankData& m_data;
  const Event* m_event = nullptr;
  bool m_found = false;
  bool m_recorded = false;
  // What an imported trace lacks (trace_format/content.hpp): the rules that
  // read it are off (an OTF2 import has no buffer addresses, and without
  // smtrace's attributes records every datatype as MPI_BYTE and no posted
  // receive envelope).
  format::ContentSet m_lacks = 0;
  std::optional<uint64_t> m_tag_ub;  // the header's mpi.tag_ub, read with the header
  uint64_t m_bsend_overhead = 0;     // the header's mpi.bsend_overhead (0: not recorded)
  std::optional<Attached> m_attached;
  uint64_t m_world_size = 0;         // the header's world_size, read with it
  bool m_header_read = false;
  bool lacks(format::Content c) const { return (m_lacks & format::content_bit(c)) != 0; }
  std::unordered_map<uint32_t, RawSite> m_freed_comms, m_freed_groups, m_freed_types, m_freed_ops, m_freed_windows;
  std::unordered_map<uint32_t, RawSite> m_created_types;
  std::vector<UnreadyComm> m_unready_comms;  // (few: Comm_idup's not yet completed)
  // Communicators made with a request (Comm_idup): the tracer does not
  // record their topology.
  std::unordered_set<uint32_t> m_idup_comms;
  // Whether comm_rules has anything to look up: a freed or a not yet ready
  // communicator (most ranks have neither: one test per event).
  bool m_comm_rules = false;
  void comms_changed() { m_comm_rules = !m_freed_comms.empty() || !m_unready_comms.empty(); }
  std::unordered_set<uint32_t> m_committed;
  std::unordered_map<uint32_t, uint32_t> m_window_comm;
  // rma_ranges' places (range_key) and the last one used.
  std::unordered_map<std::string, uint32_t> m_range_index;
  std::size_t m_last_range = SIZE_MAX;
  std::unordered_map<uint64_t, Persistent> m_persistent;
  // The rank's open requests: a non-persistent one there is active, and
  // says where it was created (a RawSite only when a finding names it).
  std::shared_ptr<OpenRequests> m_open;
  std::unordered_map<uint64_t, RawSite> m_freed_requests;
};

class InvalidArgument final : public Check {
 public:
  std::string_view name() const override { return "invalid-argument"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "an MPI call with an argument MPI forbids: rank, root, tag or count out of range, a null, freed or "
           "uncommitted handle, an op undefined for the datatype, a NULL buffer, a misused request";
  }
  explicit InvalidArgument(std::shared_ptr<OpenRequestBooks> books) : m_books(std::move(books)) {}
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override {
    return std::make_unique<Pass>(data, m_books->of(data, this));
  }
  // finish() groups each rank's problems and counts its buffered messages
  // held at once (with the replay's matches and happens-before).
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override {
    save_pass_problems<Pass>(pass, out);
    code_across_ranks(out, dynamic_cast<const Pass&>(pass));
  }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    auto pass = load_pass_problems<Pass>(data, in);
    code_across_ranks(in, dynamic_cast<Pass&>(*pass));
    return pass;
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    Grouped grouped(std::string(name()), severity());
    const TargetWindows windows = target_windows(ctx, passes);
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      auto* pass = dynamic_cast<Pass*>(passes[rank].get());
      if (!pass) continue;
      if (auto problem = held_at_once(ctx, rank, *pass)) pass->problems.push_back(std::move(*problem));
      std::vector<RawProblem> ranges = rma_ranges(ctx, windows, rank, *pass);
      for (RawProblem& problem : pass->problems) {
        // A call that failed (MPI_ERRORS_RETURN) at a call site whose
        // target ranges leave the window is named by the range, not as a
        // failure alone (rma_ranges names one call of the site: its
        // others failed for the same reason).
        if (problem.generic && std::any_of(ranges.begin(), ranges.end(), [&](const RawProblem& r) {
              return r.sites[0].site == problem.sites[0].site && r.sites[0].call == problem.sites[0].call;
            }))
          continue;
        grouped.add(ctx, std::move(problem));
      }
      for (RawProblem& problem : ranges) grouped.add(ctx, std::move(problem));
    }
    comm_create_groups(ctx, passes, grouped);
    comm_create_group_groups(ctx, passes, grouped);
    grouped.emit(out);
  }

 private:
  // What finish() reads of a pass besides its problems: the buffered
  // sends and the groups of MPI_Comm_create(_group). P: Pass when loading, const
  // Pass when saving.
  template <class Coder, class P>
  static void code_across_ranks(Coder& c, P& p) {
    c.list(p.window_shapes, [](auto& cw, auto& w) {
      cw(w.seq);
      cw(w.site);
      cw(w.call);
      cw(w.window);
      cw(w.size);
      cw(w.disp_unit);
      cw(w.dynamic);
    });
    c.list(p.attached, [](auto& ca, auto& a) {
      ca(a.window);
      ca(a.base);
      ca(a.size);
    });
    c.list(p.rma_ranges, [](auto& cr, auto& r) {
      cr(r.site);
      cr(r.call);
      cr(r.window);
      cr(r.target);
      cr(r.count);
      cr(r.datatype);
      cr(r.span.lo);
      cr(r.span.hi);
      for (auto* call : {&r.low, &r.high}) {
        cr(call->seq);
        cr(call->disp);
        cr(call->pending);
      }
    });
    c.list(p.group_args, [](auto& cg, auto& g) {
      cg(g.seq);
      cg(g.site);
      cg(g.comm);
      cg(g.call);
      cg(g.tag);
      cg.list(g.group, [](auto& cr, auto& rank) { cr(rank); });
    });
    c.list(p.attaches, [](auto& ca, auto& a) {
      ca(a.seq);
      ca(a.site);
      ca(a.bytes);
    });
    c.list(p.buffered_sends, [](auto& cb, auto& b) {
      cb(b.seq);
      cb(b.site);
      cb(b.call);
      cb(b.needed);
      cb(b.attach);
    });
  }

  // Each rank's windows, by global window index: its creation, and for a
  // dynamic window the memory attached to it, merged into disjoint regions
  // sorted by address (two adjacent attachments are one region).
  struct TargetWindow {
    const Pass::WindowShape* shape = nullptr;
    std::vector<std::pair<uint64_t, uint64_t>> regions;  // [base, end)
  };
  using TargetWindows = std::vector<std::unordered_map<uint32_t, TargetWindow>>;
  static TargetWindows target_windows(const Context& ctx, const std::vector<std::unique_ptr<RankPass>>& passes) {
    TargetWindows out(passes.size());
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      const auto* pass = dynamic_cast<const Pass*>(passes[rank].get());
      if (!pass) continue;
      for (const Pass::WindowShape& w : pass->window_shapes) {
        const uint32_t g = ctx.comms().window(rank, w.window);
        // (A dynamic window of a rank cut short is not judged: what it attached is not known.)
        if (g != k_no_comm && (!w.dynamic || pass->whole())) out[rank].emplace(g, TargetWindow{&w, {}});
      }
      for (const Pass::AttachedMemory& a : pass->attached) {
        const uint32_t g = ctx.comms().window(rank, a.window);
        const auto it = g == k_no_comm ? out[rank].end() : out[rank].find(g);
        if (it == out[rank].end() || !it->second.shape->dynamic) continue;
        const uint64_t end = a.base + a.size < a.base ? UINT64_MAX : a.base + a.size;
        it->second.regions.emplace_back(a.base, end);
      }
      for (auto& [g, w] : out[rank]) {
        auto& r = w.regions;
        std::sort(r.begin(), r.end());
        std::size_t kept = 0;
        for (std::size_t i = 0; i < r.size(); ++i) {
          if (kept > 0 && r[i].first <= r[kept - 1].second) r[kept - 1].second = std::max(r[kept - 1].second, r[i].second);
          else r[kept++] = r[i];
        }
        r.resize(kept);
      }
    }
    return out;
  }

  // The RMA communication calls of rank `rank` whose target range lies
  // outside the target's window (MPI-3.1 section 11.3: the target buffer,
  // target_count elements of target_datatype at target_disp times the
  // target's disp_unit from its window's start, must fit in the window;
  // Open MPI: MPI_ERR_RMA_RANGE). The target's window is the target rank's
  // own creation of the same window (its size and disp_unit); a target
  // whose creation is not in the trace, or a dynamic window, is not judged.
  static std::vector<RawProblem> rma_ranges(const Context& ctx, const TargetWindows& windows, uint32_t rank,
                                            const Pass& pass) {
    std::vector<RawProblem> out;
    const CommTable& comms = ctx.comms();
    for (const Pass::RmaRange& r : pass.rma_ranges) {
      const uint32_t g = comms.window(rank, r.window);
      if (g == k_no_comm || comms.window_info(g).comm == k_no_comm) continue;
      const GlobalComm& comm = comms.comm(comms.window_info(g).comm);
      const std::optional<uint32_t> target = comm.peer(rank, r.target);
      if (!target || *target >= windows.size()) continue;
      auto shape = windows[*target].find(g);
      if (shape == windows[*target].end()) continue;
      const Pass::WindowShape& w = *shape->second.shape;
      if (w.dynamic) {
        for (const Pass::RmaCall* c : {&r.low, &r.high}) {
          if (c == &r.high && r.high.seq == r.low.seq) break;
          if (!in_attached(shape->second.regions, *c, r.span))
            out.push_back(dynamic_problem(rank, r, *c, shape->second, *target));
        }
        if (out.size() >= k_max_ranges) break;
        continue;
      }
      // The call reaching furthest above the window, and the one furthest below.
      __extension__ typedef __int128 Int128;
      const auto begin = [&](const Pass::RmaCall& c) { return static_cast<Int128>(c.disp) * w.disp_unit + r.span.lo; };
      const auto end = [&](const Pass::RmaCall& c) { return static_cast<Int128>(c.disp) * w.disp_unit + r.span.hi; };
      if (end(r.high) > static_cast<Int128>(w.size)) out.push_back(range_problem(rank, r, r.high, w, *target));
      if (begin(r.low) < 0 && (r.low.seq != r.high.seq || end(r.high) <= static_cast<Int128>(w.size)))
        out.push_back(range_problem(rank, r, r.low, w, *target));
      if (out.size() >= k_max_ranges) break;
    }
    std::sort(out.begin(), out.end(), [](const RawProblem& a, const RawProblem& b) {
      return a.sites[0].seq < b.sites[0].seq;
    });
    return out;
  }

  // The problem of call `c` of `r` (rank `rank`), whose target range is
  // outside window `w` of world rank `target`.
  static RawProblem range_problem(uint32_t rank, const Pass::RmaRange& r, const Pass::RmaCall& c,
                                  const Pass::WindowShape& w, uint32_t target) {
    __extension__ typedef __int128 Int128;
    const Int128 at = static_cast<Int128>(c.disp) * w.disp_unit;
    const auto bytes = [](Int128 v) {
      // (Beyond int64_t only with a displacement near its limits.)
      return v < INT64_MIN || v > INT64_MAX ? std::string(v < 0 ? "-2^63" : "2^63")
                                            : std::to_string(static_cast<int64_t>(v));
    };
    RawProblem p;
    p.problem = "rma range";
    p.message = fmt::format("{}: target_disp {} x disp_unit {} with {} x {} reaches bytes [{}, {}) of target rank {}'s "
                            "window, outside its {}",
                            format::call_name(r.call), c.disp, w.disp_unit, r.count, basic_type_name(r.datatype),
                            bytes(at + r.span.lo), bytes(at + r.span.hi), r.target, plural(w.size, "byte"));
    p.sites.push_back(RawSite{rank, c.seq, r.call, r.site, c.pending ? "the call never returned" : "called here"});
    p.sites.push_back(RawSite{target, w.seq, w.call, w.site,
                              fmt::format("the target creates its window here, {} with disp_unit {}",
                                          plural(w.size, "byte"), w.disp_unit)});
    p.notes.push_back(
        "the target buffer, target_count elements of target_datatype at target_disp x disp_unit (the target's) "
        "from the start of the target's window, must lie within the window (MPI-3.1 section 11.3; "
        "MPI_ERR_RMA_RANGE)");
    return p;
  }
  static constexpr std::size_t k_max_ranges = 4096;  // per rank, as a pass's problems

  // Whether the target bytes of call `c` (target_disp, an address at the
  // target, plus `span`) lie within one region of `regions` (MPI-3.1
  // section 11.2.4: an access to a dynamic window must be to memory the
  // target attached).
  static bool in_attached(const std::vector<std::pair<uint64_t, uint64_t>>& regions, const Pass::RmaCall& c,
                          const DataSpan& span) {
    __extension__ typedef __int128 Int128;
    const Int128 lo = static_cast<Int128>(static_cast<uint64_t>(c.disp)) + span.lo;
    const Int128 hi = static_cast<Int128>(static_cast<uint64_t>(c.disp)) + span.hi;
    auto it = std::upper_bound(regions.begin(), regions.end(), lo, [](Int128 v, const auto& r) {
      return v < static_cast<Int128>(r.first);
    });
    if (it == regions.begin()) return false;
    --it;
    return lo >= static_cast<Int128>(it->first) && hi <= static_cast<Int128>(it->second);
  }

  // The problem of call `c` of `r` (rank `rank`), whose target bytes lie
  // outside the memory world rank `target` attached to dynamic window `w`.
  static RawProblem dynamic_problem(uint32_t rank, const Pass::RmaRange& r, const Pass::RmaCall& c,
                                    const TargetWindow& w, uint32_t target) {
    const auto at = static_cast<uint64_t>(c.disp);
    RawProblem p;
    p.problem = "rma range";
    std::string regions;
    constexpr std::size_t k_shown = 4;
    for (std::size_t i = 0; i < w.regions.size() && i < k_shown; ++i)
      regions += fmt::format("{}[{:#x}, {:#x})", i ? ", " : "", w.regions[i].first, w.regions[i].second);
    if (w.regions.size() > k_shown) regions += fmt::format(" and {} more", w.regions.size() - k_shown);
    p.message = fmt::format(
        "{}: target address {:#x} with {} x {} reaches bytes [{:#x}, {:#x}) of target rank {}'s dynamic window, {}",
        format::call_name(r.call), at, r.count, basic_type_name(r.datatype), at + static_cast<uint64_t>(r.span.lo),
        at + static_cast<uint64_t>(r.span.hi), r.target,
        w.regions.empty() ? std::string("to which it attaches no memory")
                          : fmt::format("outside the memory it attaches ({})", regions));
    p.sites.push_back(RawSite{rank, c.seq, r.call, r.site, c.pending ? "the call never returned" : "called here"});
    p.sites.push_back(RawSite{target, w.shape->seq, w.shape->call, w.shape->site,
                              "the target creates its dynamic window here"});
    p.notes.push_back(
        "the target buffer of an RMA call on a dynamic window, at target_disp (an address at the target, from "
        "MPI_Get_address), must lie within memory the target attached with MPI_Win_attach (MPI-3.1 section "
        "11.2.4)");
    return p;
  }

  // MPI_Comm_create on an intracommunicator (MPI-3.1 section 6.4.2): each
  // rank passes a subgroup of the communicator's group, and every member
  // of a non-empty group passes that same group (the same ranks in the
  // same order). The k-th MPI_Comm_create on a communicator of each member
  // is one call; a member whose trace ends before it says nothing.
  struct GroupAt {
    uint32_t rank;
    const Pass::GroupArg* arg;
  };
  static void comm_create_groups(const Context& ctx, const std::vector<std::unique_ptr<RankPass>>& passes,
                                 Grouped& grouped) {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<GroupAt>> calls;  // (global comm, k) -> the members' calls
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      const auto* pass = dynamic_cast<const Pass*>(passes[rank].get());
      if (!pass) continue;
      std::map<uint32_t, uint32_t> made;  // global comm -> calls so far
      for (const Pass::GroupArg& arg : pass->group_args) {
        if (arg.call != Call::Comm_create) continue;
        const uint32_t g = ctx.comms().global(rank, arg.comm);
        if (g != k_no_comm) calls[{g, made[g]++}].push_back({rank, &arg});
      }
    }
    for (const auto& [key, members] : calls) {
      if (auto p = group_disagreement(ctx.comms().comm(key.first), members)) grouped.add(ctx, std::move(*p));
    }
  }

  // Return "the group of 2 ranks 0 and 1", or MPI_GROUP_EMPTY, for the
  // world ranks `group` of a communicator creation's group argument.
  static std::string group_text(const std::vector<uint32_t>& group) {
    return group.empty() ? std::string("MPI_GROUP_EMPTY")
                         : "the group of " + plural(group.size(), "rank") + " " + rank_list(group);
  }

  // Return the first problem of one MPI_Comm_create on `comm`, whose
  // members made `members`, if any.
  static std::optional<RawProblem> group_disagreement(const GlobalComm& comm, const std::vector<GroupAt>& members) {
    auto site = [](const GroupAt& at, std::string note) {
      return RawSite{at.rank, at.arg->seq, Call::Comm_create, at.arg->site, std::move(note)};
    };
    for (const GroupAt& at : members) {
      for (const uint32_t s : at.arg->group) {
        if (std::find(comm.world_ranks.begin(), comm.world_ranks.end(), s) == comm.world_ranks.end()) {
          return RawProblem{"comm create group",
                            fmt::format("MPI_Comm_create: rank {} passes {}, which holds rank {} outside {}", at.rank,
                                        group_text(at.arg->group), s, comm.name),
                            {site(at, "passes this group")}, {}};
        }
        auto other = std::find_if(members.begin(), members.end(), [&](const GroupAt& o) { return o.rank == s; });
        if (other == members.end() || other->arg->group == at.arg->group) continue;
        return RawProblem{"comm create group",
                          fmt::format("MPI_Comm_create on {}: rank {} passes {}, but rank {}, a member of it, passes {}",
                                      comm.name, at.rank, group_text(at.arg->group), s, group_text(other->arg->group)),
                          {site(at, "passes this group"), site(*other, "passes another group")},
                          {"every member of a non-empty group must pass the same group, its ranks in the same order "
                           "(MPI-3.1 section 6.4.2)"}};
      }
    }
    return std::nullopt;
  }

  // MPI_Comm_create_group (MPI-3.1 section 6.4.2): collective over the
  // group it is passed, whose members all pass the same group and tag.
  // Only the members call it, so calls are paired member by member: the
  // i-th call of rank a on a communicator with a tag whose group holds
  // rank b is the one of b's calls there with that tag whose group holds a,
  // the i-th of those (the same pairing from b's side). A pair whose groups
  // differ is reported once (from its lower rank); a member that never
  // makes the call says nothing (its trace may end first; a call whose tag
  // differs is not paired).
  static void comm_create_group_groups(const Context& ctx, const std::vector<std::unique_ptr<RankPass>>& passes,
                                       Grouped& grouped) {
    // (global comm, tag) -> per rank: its calls there
    std::map<std::pair<uint32_t, int32_t>, std::map<uint32_t, std::vector<const Pass::GroupArg*>>> calls;
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      const auto* pass = dynamic_cast<const Pass*>(passes[rank].get());
      if (!pass) continue;
      for (const Pass::GroupArg& arg : pass->group_args) {
        if (arg.call != Call::Comm_create_group) continue;
        const uint32_t g = ctx.comms().global(rank, arg.comm);
        if (g != k_no_comm) calls[{g, arg.tag}][rank].push_back(&arg);
      }
    }
    auto holds = [](const Pass::GroupArg& arg, uint32_t rank) {
      return std::find(arg.group.begin(), arg.group.end(), rank) != arg.group.end();
    };
    // Return the i-th call of `of` whose group holds `rank`, or nullptr.
    auto nth_holding = [&](const std::vector<const Pass::GroupArg*>& of, uint32_t rank, std::size_t i) {
      for (const Pass::GroupArg* arg : of) {
        if (holds(*arg, rank) && i-- == 0) return arg;
      }
      return static_cast<const Pass::GroupArg*>(nullptr);
    };
    for (const auto& [key, ranks] : calls) {
      const GlobalComm& comm = ctx.comms().comm(key.first);
      for (const auto& [a, mine] : ranks) {
        for (const Pass::GroupArg* arg : mine) {
          for (const uint32_t b : arg->group) {
            if (b <= a) continue;
            auto theirs = ranks.find(b);
            if (theirs == ranks.end()) continue;
            std::size_t i = 0;  // a's calls before this one whose group holds b
            for (const Pass::GroupArg* earlier : mine) {
              if (earlier == arg) break;
              i += holds(*earlier, b) ? 1 : 0;
            }
            const Pass::GroupArg* other = nth_holding(theirs->second, a, i);
            if (!other || other->group == arg->group) continue;
            grouped.add(ctx, RawProblem{
                "comm create group",
                fmt::format("MPI_Comm_create_group on {} with tag {}: rank {} passes {}, but rank {}, a member of "
                            "it, passes {}",
                            comm.name, key.second, a, group_text(arg->group), b, group_text(other->group)),
                {RawSite{a, arg->seq, Call::Comm_create_group, arg->site, "passes this group"},
                 RawSite{b, other->seq, Call::Comm_create_group, other->site, "passes another group"}},
                {"every member of the group must pass the same group, its ranks in the same order, and the same "
                 "tag (MPI-3.1 section 6.4.2)"}});
            break;  // one problem per call
          }
        }
      }
    }
  }

  // Return true when the message that rank `rank`'s buffered send at `seq`
  // sent was received before event `before` of the rank: the completion
  // of its matching receive happens before it. Until then the message may
  // still hold its space in the attached buffer: MPI frees it once the
  // message is transmitted, which a program cannot observe sooner.
  static bool received_before(const Context& ctx, uint32_t rank, uint64_t seq, uint64_t before) {
    const std::optional<EventRef> done = receive_completion(ctx.replay(), rank, seq);
    return done && ctx.happens_before().ordered(*done, {rank, before});
  }

  // The first buffered send of `pass` (rank `rank`) whose message does not
  // fit beside the earlier buffered messages of the same attached buffer
  // that may still hold their space (received_before: the worst case that
  // MPI-4.0 section 3.6 leaves the program, as zero buffering is for
  // potential-deadlock): a problem, or nothing. Past k_max_held messages
  // held at once the rank is not judged further (no report).
  static std::optional<RawProblem> held_at_once(const Context& ctx, uint32_t rank, const Pass& pass) {
    constexpr std::size_t k_max_held = 4096;
    std::vector<const Pass::BufferedSend*> held;
    uint64_t held_bytes = 0;
    uint32_t attach = UINT32_MAX;
    for (const Pass::BufferedSend& b : pass.buffered_sends) {
      if (b.attach != attach) {
        held.clear();
        held_bytes = 0;
        attach = b.attach;
      }
      std::erase_if(held, [&](const Pass::BufferedSend* h) {
        if (!received_before(ctx, rank, h->seq, b.seq)) return false;
        held_bytes -= h->needed;
        return true;
      });
      const Pass::AttachPeriod& a = pass.attaches[b.attach];
      if (held_bytes + b.needed > a.bytes) {
        RawProblem p;
        p.problem = "bsend buffer held";
        p.message = fmt::format(
            "{}: the message needs {} bytes of the attached buffer ({} bytes), but {} earlier buffered message{} of "
            "this rank may still hold {} of them",
            format::call_name(b.call), b.needed, a.bytes, held.size(), held.size() == 1 ? "" : "s", held_bytes);
        p.sites.push_back(RawSite{rank, b.seq, b.call, b.site, "called here"});
        p.sites.push_back(RawSite{rank, held.front()->seq, held.front()->call, held.front()->site,
                                  "an earlier buffered message, not known to be received before the call"});
        p.sites.push_back(RawSite{rank, a.seq, Call::Buffer_attach, a.site, "the buffer is attached here"});
        p.notes.push_back(
            "a buffered message holds its space until MPI has transmitted it, which the program knows only once "
            "the message was received; a buffered send that finds too little space is erroneous (MPI-4.0 "
            "section 3.6): attach a buffer for all the messages that can be pending at once");
        return p;
      }
      if (held.size() >= k_max_held) return std::nullopt;
      held.push_back(&b);
      held_bytes += b.needed;
    }
    return std::nullopt;
  }

  std::shared_ptr<OpenRequestBooks> m_books;
};

}  // namespace

std::unique_ptr<Check> make_invalid_argument(std::shared_ptr<OpenRequestBooks> books) {
  return std::make_unique<InvalidArgument>(books ? std::move(books) : std::make_shared<OpenRequestBooks>());
}

}  // namespace smtrace::analyzer::checks
