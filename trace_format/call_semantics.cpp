// The columns of calls.def as a table indexed by call number, and the rules
// that apply them to one event. Where MPI-3.1 decides a case, the section is
// named beside it.
#include "trace_format/call_semantics.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace smtrace::format {
namespace {

constexpr std::size_t k_slots = detail::k_call_slots;

// Where a rooted collective's root is, seen from the calling rank.
enum class RootSide : uint8_t {
  root,     // this rank is the root (its rank, or MPI_ROOT on an intercommunicator)
  member,   // another rank is the root
  none,     // MPI_PROC_NULL: this rank of the root's group takes no part
  unknown,  // no root recorded, or this rank's place is unknown
};

RootSide root_side(const Event& e, const CommPlace& place) {
  if (!e.peer) return RootSide::unknown;
  if (*e.peer == k_root) return RootSide::root;
  if (*e.peer == k_proc_null) return RootSide::none;
  if (place.inter) return RootSide::member;  // the root is in the remote group
  if (!place.rank) return RootSide::unknown;
  return *e.peer == *place.rank ? RootSide::root : RootSide::member;
}

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// buffer_lifetime of every row, by call number, and of a value past the table
// (the last slot): call_buffers asks once per event.
constexpr auto k_lifetimes = [] {
  std::array<Lifetime, k_slots + 1> table{};
  for (std::size_t i = 0; i < k_slots; ++i) table[i] = buffer_lifetime(detail::k_call_table[i]);
  table[k_slots] = buffer_lifetime(CallTraits{});
  return table;
}();

Lifetime lifetime_of(Call call) { return k_lifetimes[std::min(static_cast<std::size_t>(call), k_slots)]; }

// Appends the buffers of one event; the layout functions below say what
// MPI-3.1 chapter 5 (collectives), 3 (point-to-point) and 11 (RMA) make
// each call read and write.
class Emitter {
 public:
  Emitter(const Event& e, const CommPlace& place, std::vector<Buffer>& out, NullBuffers nulls)
      : m_e(e), m_place(place), m_out(out), m_traits(call_traits(e.call)), m_nulls(nulls),
        m_life(lifetime_of(e.call)) {
    m_size_known = place.size > 0;
    m_n = std::max<int64_t>(static_cast<int64_t>(place.size), 1);
  }

  void run() {
    switch (m_traits.buffers) {
      case BufferLayout::none: return;
      case BufferLayout::send:
        if (origin_read(m_traits, m_e.peer) == OriginRead::block)
          add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype);
        return;
      case BufferLayout::recv:
        if (m_e.peer != k_proc_null) add(BufferArg::buf, BufferAccess::write, m_e.buf, m_e.count, m_e.datatype);
        return;
      case BufferLayout::sendrecv:  // each half: nothing with MPI_PROC_NULL
        if (m_e.peer != k_proc_null) add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype);
        if (m_e.recv_peer != k_proc_null)
          add(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_count, m_e.recv_datatype);
        return;
      case BufferLayout::copy:  // Pack, Unpack: read one buffer, write the other
        add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype);
        add(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_count, m_e.recv_datatype);
        return;
      case BufferLayout::sendrecv_replace: {
        const bool sends = m_e.peer != k_proc_null, receives = m_e.recv_peer != k_proc_null;
        if (sends || receives)
          add(BufferArg::buf, sends && receives ? BufferAccess::update : sends ? BufferAccess::read : BufferAccess::write,
              m_e.buf, m_e.count, m_e.datatype);
        return;
      }
      case BufferLayout::bcast: bcast(); return;
      case BufferLayout::reduce: reduce(); return;
      case BufferLayout::allreduce:
        send_side(m_e.count);
        recv_side(m_e.recv_count, false);
        return;
      case BufferLayout::reduce_scatter_block: reduce_scatter_block(); return;
      case BufferLayout::reduce_scatter: reduce_scatter(); return;
      case BufferLayout::gather: gather(false); return;
      case BufferLayout::gatherv: gather(true); return;
      case BufferLayout::scatter: scatter(false); return;
      case BufferLayout::scatterv: scatter(true); return;
      case BufferLayout::allgather:
        send_side(m_e.count);
        recv_side(m_e.recv_count * m_n, !m_size_known);
        return;
      case BufferLayout::allgatherv:
        send_side(m_e.count);
        blocks(BufferArg::recv_buf, recv_access(), m_e.recv_buf, m_e.recv_counts, m_e.recv_displs, m_e.recv_datatype,
               nullptr, false);
        return;
      case BufferLayout::alltoall:
        if (!m_e.in_place) add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count * m_n, m_e.datatype, !m_size_known);
        recv_side(m_e.recv_count * m_n, !m_size_known);
        return;
      case BufferLayout::alltoallv:
      case BufferLayout::alltoallw: {
        const bool w = m_traits.buffers == BufferLayout::alltoallw;
        if (!m_e.in_place)
          blocks(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.counts, m_e.displs, m_e.datatype,
                 w ? &m_e.datatypes : nullptr, false);
        blocks(BufferArg::recv_buf, recv_access(), m_e.recv_buf, m_e.recv_counts, m_e.recv_displs, m_e.recv_datatype,
               w ? &m_e.recv_datatypes : nullptr, false);
        return;
      }
      case BufferLayout::put: rma(BufferAccess::read, BufferAccess::write); return;
      case BufferLayout::get: rma(BufferAccess::write, BufferAccess::read); return;
      case BufferLayout::accumulate: rma(BufferAccess::read, BufferAccess::update); return;
      case BufferLayout::get_accumulate:
      case BufferLayout::fetch_and_op:
      case BufferLayout::compare_and_swap: fetching_rma(); return;
      case BufferLayout::local_read: local(BufferAccess::read); return;
      case BufferLayout::local_write: local(BufferAccess::write); return;
      case BufferLayout::reduce_local:
        add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype);
        add(BufferArg::recv_buf, BufferAccess::update, m_e.recv_buf, m_e.count, m_e.datatype);
        return;
      case BufferLayout::neighbor_allgather:
      case BufferLayout::neighbor_allgatherv:
      case BufferLayout::neighbor_alltoall:
      case BufferLayout::neighbor_alltoallv:
      case BufferLayout::neighbor_alltoallw:
        neighbors();
        return;
    }
  }

 private:
  void add(BufferArg arg, BufferAccess access, uint64_t addr, int64_t count, uint32_t type, bool maybe = false,
           int64_t offset = 0, OffsetUnit unit = OffsetUnit::elements, int32_t peer = -1) {
    // Address 0 is NULL, or MPI_IN_PLACE recorded as no buffer, unless a
    // derived datatype makes it MPI_BOTTOM with absolute addresses.
    if (addr == 0 && type < k_first_derived_id && arg != BufferArg::target && m_nulls == NullBuffers::skip) return;
    Buffer& b = m_out.emplace_back();  // (in place: no copy of a Buffer)
    b.arg = arg;
    b.access = access;
    // A target that is only read (Get, Rget, a fetch with MPI_NO_OP) is read
    // by the time the data is at the origin: when the call completes
    // locally (MPI-3.1 section 11.3.5, example 11.21: after MPI_Wait on an
    // MPI_Rget the get is complete). A written target waits for remote
    // completion.
    b.lifetime = arg != BufferArg::target ? m_life : access == BufferAccess::read ? m_life : Lifetime::rma_remote;
    b.addr = addr;
    b.offset = offset;
    b.unit = unit;
    b.count = count;
    b.datatype = type;
    b.peer = peer;
    b.maybe = maybe;
  }

  // v and w collectives: block i (for member i) at displs[i], in elements of
  // `type`, or in bytes with a datatype per block (`types`).
  // `members` (neighbourhood collectives): block i is neighbour i's, none
  // for an MPI_PROC_NULL neighbour.
  void blocks(BufferArg arg, BufferAccess access, uint64_t addr, const std::vector<int64_t>& counts,
              const std::vector<int64_t>& displs, uint32_t type, const std::vector<uint32_t>* types, bool maybe,
              const std::vector<int32_t>* members = nullptr) {
    for (std::size_t i = 0; i < counts.size() && i < displs.size(); ++i) {
      int32_t peer = static_cast<int32_t>(i);
      if (members) {
        if (i >= members->size() || (*members)[i] == k_proc_null) continue;
        peer = (*members)[i];
      }
      const uint32_t t = types ? (i < types->size() ? (*types)[i] : 0) : type;
      add(arg, access, addr, counts[i], t, maybe, displs[i], types ? OffsetUnit::bytes : OffsetUnit::elements, peer);
    }
  }

  // MPI_IN_PLACE as the send buffer: the receive buffer holds the input.
  BufferAccess recv_access() const { return m_e.in_place ? BufferAccess::update : BufferAccess::write; }

  void send_side(int64_t count, bool maybe = false) {
    if (!m_e.in_place) add(BufferArg::buf, BufferAccess::read, m_e.buf, count, m_e.datatype, maybe);
  }
  void recv_side(int64_t count, bool maybe) {
    add(BufferArg::recv_buf, recv_access(), m_e.recv_buf, count, m_e.recv_datatype, maybe);
  }

  // The send side of Reduce and Gather: every rank of an intracommunicator
  // (the root too, unless in place); on an intercommunicator the remote
  // group, not the root's (MPI-3.1 sections 5.2.2, 5.5, 5.9.1).
  bool contributes(RootSide side) const {
    return !m_e.in_place && side != RootSide::none && !(side == RootSide::root && m_place.inter);
  }

  void bcast() {
    switch (root_side(m_e, m_place)) {
      case RootSide::root: add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype); return;
      case RootSide::member: add(BufferArg::buf, BufferAccess::write, m_e.buf, m_e.count, m_e.datatype); return;
      case RootSide::unknown: add(BufferArg::buf, BufferAccess::write, m_e.buf, m_e.count, m_e.datatype, true); return;
      case RootSide::none: return;
    }
  }

  void reduce() {
    const RootSide side = root_side(m_e, m_place);
    if (contributes(side)) add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype);
    if (side == RootSide::root || side == RootSide::unknown) recv_side(m_e.recv_count, side == RootSide::unknown);
  }

  // Reduce_scatter_block: `count` (= recvcount) elements per member. In
  // place, the input (n blocks) is taken from the receive buffer and the
  // result lands in its first block (MPI-3.1 section 5.10.1).
  void reduce_scatter_block() {
    const bool maybe = !m_size_known;
    if (!m_e.in_place) {
      add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count * m_n, m_e.datatype, maybe);
      add(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_count, m_e.recv_datatype);
      return;
    }
    add(BufferArg::recv_buf, BufferAccess::update, m_e.recv_buf, m_e.recv_count, m_e.recv_datatype);
    if (m_n > 1)
      add(BufferArg::recv_buf, BufferAccess::read, m_e.recv_buf, m_e.recv_count * (m_n - 1), m_e.recv_datatype, maybe,
          m_e.recv_count);
  }

  // Reduce_scatter: the input is sum(recvcounts) elements; this rank's
  // result is recvcounts[rank] elements at the start of the receive buffer.
  // In place the input is taken from the receive buffer (MPI-3.1 section
  // 5.10.1): its first block is read and written, the rest read.
  void reduce_scatter() {
    const int64_t total = sum(m_e.recv_counts);
    const bool mine_known =
        m_place.rank && *m_place.rank >= 0 && static_cast<std::size_t>(*m_place.rank) < m_e.recv_counts.size();
    const int64_t mine = mine_known ? m_e.recv_counts[static_cast<std::size_t>(*m_place.rank)] : total;
    if (!m_e.in_place) {
      add(BufferArg::buf, BufferAccess::read, m_e.buf, total, m_e.datatype);
      add(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, mine, m_e.recv_datatype, !mine_known);
      return;
    }
    add(BufferArg::recv_buf, BufferAccess::update, m_e.recv_buf, mine, m_e.recv_datatype, !mine_known);
    if (mine_known && total > mine)
      add(BufferArg::recv_buf, BufferAccess::read, m_e.recv_buf, total - mine, m_e.recv_datatype, false, mine);
  }

  // Gather(v): each member's send buffer; the root's receive buffer, n
  // blocks (recvbuf, recvcount(s), displs significant at the root only).
  void gather(bool v) {
    const RootSide side = root_side(m_e, m_place);
    if (contributes(side)) add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype);
    if (side != RootSide::root && side != RootSide::unknown) return;
    const bool maybe = side == RootSide::unknown;
    if (v) {
      blocks(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_counts, m_e.recv_displs,
             m_e.recv_datatype, nullptr, maybe);
    } else {
      add(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_count * m_n, m_e.recv_datatype,
          maybe || !m_size_known);
    }
  }

  // Scatter(v): the root's send buffer, n blocks; each member's receive
  // buffer (the root's too unless MPI_IN_PLACE; on an intercommunicator the
  // remote group's).
  void scatter(bool v) {
    const RootSide side = root_side(m_e, m_place);
    if (side == RootSide::root || side == RootSide::unknown) {
      const bool maybe = side == RootSide::unknown;
      if (v) {
        blocks(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.counts, m_e.displs, m_e.datatype, nullptr, maybe);
      } else {
        add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count * m_n, m_e.datatype, maybe || !m_size_known);
      }
    }
    if (!m_e.in_place && side != RootSide::none && !(side == RootSide::root && m_place.inter))
      add(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_count, m_e.recv_datatype);
  }

  // Neighbourhood collectives (MPI-3.1 section 7.6): block i of the send
  // buffer goes to destination i (allgather: the whole send buffer to each),
  // block i of the receive buffer comes from source i; a neighbour that is
  // MPI_PROC_NULL (a Cartesian edge) takes and leaves its block untouched.
  // Without the neighbours, the first block of each side, as maybe.
  void neighbors() {
    const std::vector<int32_t>* sources = m_place.sources;
    const std::vector<int32_t>* dests = m_place.destinations;
    auto real = [](const std::vector<int32_t>* list) {
      return !list || std::any_of(list->begin(), list->end(), [](int32_t r) { return r != k_proc_null; });
    };
    const BufferLayout layout = m_traits.buffers;
    const bool w = layout == BufferLayout::neighbor_alltoallw;
    const bool v = w || layout == BufferLayout::neighbor_alltoallv;
    if (layout == BufferLayout::neighbor_allgather || layout == BufferLayout::neighbor_allgatherv) {
      if (real(dests)) add(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype, !dests);
    } else if (v) {
      blocks(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.counts, m_e.displs, m_e.datatype,
             w ? &m_e.datatypes : nullptr, !dests, dests);
    } else {
      uniform_blocks(BufferArg::buf, BufferAccess::read, m_e.buf, m_e.count, m_e.datatype, dests);
    }
    if (v || layout == BufferLayout::neighbor_allgatherv) {
      blocks(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_counts, m_e.recv_displs,
             m_e.recv_datatype, w ? &m_e.recv_datatypes : nullptr, !sources, sources);
    } else {
      uniform_blocks(BufferArg::recv_buf, BufferAccess::write, m_e.recv_buf, m_e.recv_count, m_e.recv_datatype,
                     sources);
    }
  }

  // Block i of `count` elements at offset i * count, one per neighbour of
  // `members` (MPI_PROC_NULL ones skipped); unknown neighbours: block 0, maybe.
  void uniform_blocks(BufferArg arg, BufferAccess access, uint64_t addr, int64_t count, uint32_t type,
                      const std::vector<int32_t>* members) {
    if (!members) {
      add(arg, access, addr, count, type, true);
      return;
    }
    for (std::size_t i = 0; i < members->size(); ++i) {
      if ((*members)[i] == k_proc_null) continue;
      add(arg, access, addr, count, type, false, count * static_cast<int64_t>(i), OffsetUnit::elements,
          (*members)[i]);
    }
  }

  // Put, Get, Accumulate: the origin buffer, and the target's window memory.
  void rma(BufferAccess origin, BufferAccess target) {
    if (m_e.peer == k_proc_null) return;
    add(BufferArg::buf, origin, m_e.buf, m_e.count, m_e.datatype);
    add_target(target, m_e.target_count, m_e.target_datatype);
  }

  // Get_accumulate, Fetch_and_op, Compare_and_swap: the origin buffer (and
  // compare buffer) read, the result buffer written, the target read and
  // written. With MPI_NO_OP the origin buffer is ignored and the target
  // only read (MPI-3.1 section 11.3.4). Fetch_and_op and Compare_and_swap
  // move one element of Event.datatype.
  void fetching_rma() {
    if (m_e.peer == k_proc_null) return;
    const bool single = m_traits.buffers != BufferLayout::get_accumulate;
    const bool no_op = m_traits.op == Combine::accumulate && m_e.op == k_op_no_op;
    if (!no_op) add(BufferArg::buf, BufferAccess::read, m_e.buf, single ? 1 : m_e.count, m_e.datatype);
    if (m_traits.buffers == BufferLayout::compare_and_swap)
      add(BufferArg::compare_buf, BufferAccess::read, m_e.compare_buf, 1, m_e.datatype);
    if (single) {
      add(BufferArg::result_buf, BufferAccess::write, m_e.result_buf, 1, m_e.datatype);
    } else {
      add(BufferArg::result_buf, BufferAccess::write, m_e.result_buf, m_e.result_count, m_e.result_datatype);
    }
    add_target(no_op ? BufferAccess::read : BufferAccess::update, single ? 1 : m_e.target_count,
               single ? m_e.datatype : m_e.target_datatype);
  }

  void add_target(BufferAccess access, int64_t count, uint32_t type) {
    add(BufferArg::target, access, 0, count, type, false, static_cast<int64_t>(m_e.target_disp),
        OffsetUnit::disp_units, m_e.peer.value_or(-1));
  }

  void local(BufferAccess access) {
    Buffer b;
    b.arg = BufferArg::local;
    b.access = access;
    b.addr = m_e.buf;
    b.count = m_e.count;
    b.size = m_e.size;
    b.stride = m_e.stride;
    m_out.push_back(b);
  }

  const Event& m_e;
  const CommPlace& m_place;
  std::vector<Buffer>& m_out;
  const CallTraits& m_traits;
  NullBuffers m_nulls;
  Lifetime m_life;
  bool m_size_known = false;
  int64_t m_n = 1;
};

}  // namespace

Call base_form(Call call) {
  const CallTraits& t = call_traits(call);
  return t.request == RequestEffect::create && t.twin != Call::unspecified ? t.twin : call;
}

InPlaceUse in_place_use(Call call) {
  const CallTraits& t = call_traits(call);
  switch (t.buffers) {
    case BufferLayout::reduce: case BufferLayout::gather: case BufferLayout::gatherv: case BufferLayout::scatter:
    case BufferLayout::scatterv:
      return InPlaceUse::root_only;
    // Scan and Exscan share Allreduce's layout, but their in-place option is each member's own.
    case BufferLayout::allreduce:
      return t.flow == Flow::scan || t.flow == Flow::exscan ? InPlaceUse::any_member : InPlaceUse::every_member;
    case BufferLayout::reduce_scatter_block: case BufferLayout::reduce_scatter: case BufferLayout::allgather:
    case BufferLayout::allgatherv: case BufferLayout::alltoall: case BufferLayout::alltoallv:
    case BufferLayout::alltoallw:
      return InPlaceUse::every_member;
    case BufferLayout::none: case BufferLayout::bcast: case BufferLayout::send: case BufferLayout::recv:
    case BufferLayout::sendrecv: case BufferLayout::sendrecv_replace: case BufferLayout::put: case BufferLayout::get:
    case BufferLayout::accumulate: case BufferLayout::get_accumulate: case BufferLayout::fetch_and_op:
    case BufferLayout::compare_and_swap: case BufferLayout::local_read: case BufferLayout::local_write:
    case BufferLayout::copy: case BufferLayout::reduce_local:
    case BufferLayout::neighbor_allgather: case BufferLayout::neighbor_allgatherv:
    case BufferLayout::neighbor_alltoall: case BufferLayout::neighbor_alltoallv:
    case BufferLayout::neighbor_alltoallw:
      return InPlaceUse::never;
  }
  return InPlaceUse::never;
}

OriginRead origin_read(const CallTraits& t, std::optional<int32_t> peer) {
  switch (t.buffers) {
    case BufferLayout::send: case BufferLayout::put: case BufferLayout::accumulate:
      return peer == k_proc_null ? OriginRead::none : OriginRead::block;
    default: return OriginRead::other;
  }
}

void call_buffers(const Event& e, const CommPlace& place, std::vector<Buffer>& out, NullBuffers nulls) {
  Emitter(e, place, out, nulls).run();
}

namespace {

constexpr EpochStep step_of(EpochEffect effect) {
  EpochStep s;
  auto completes = [&](Completion level, bool all) {
    s.completes = level;
    s.all_targets = all;
  };
  switch (effect) {
    case EpochEffect::none: case EpochEffect::sync: break;
    // A fence ends the epoch before it and starts the next (MPI-3.1 section 11.5.1).
    case EpochEffect::fence:
      s = {EpochKind::fence, true, true, Completion::remote, true, true};
      break;
    case EpochEffect::post: s = {EpochKind::exposure, true, false, Completion::none, false}; break;
    case EpochEffect::start: s = {EpochKind::access, true, false, Completion::none, false, true}; break;
    // Win_complete completes the operations of its access epoch, to every
    // target of the start group (all the window's pending ones).
    case EpochEffect::complete: s = {EpochKind::access, false, true, Completion::remote, true}; break;
    case EpochEffect::wait: s = {EpochKind::exposure, false, true, Completion::none, false, true}; break;
    // As a wait that returns at once (epoch_of turns a successful one into a wait).
    case EpochEffect::test: s = {EpochKind::exposure, false, true, Completion::none, false, false}; break;
    case EpochEffect::lock: s = {EpochKind::passive, true, false, Completion::none, false}; break;
    case EpochEffect::lock_all: s = {EpochKind::passive, true, false, Completion::none, true}; break;
    case EpochEffect::unlock: s = {EpochKind::passive, false, true, Completion::remote, false}; break;
    case EpochEffect::unlock_all: s = {EpochKind::passive, false, true, Completion::remote, true}; break;
    case EpochEffect::flush: completes(Completion::remote, false); break;
    case EpochEffect::flush_all: completes(Completion::remote, true); break;
    case EpochEffect::flush_local: completes(Completion::local, false); break;
    case EpochEffect::flush_local_all: completes(Completion::local, true); break;
    case EpochEffect::free: completes(Completion::remote, true); break;
  }
  return s;
}

// step_of of every EpochEffect, by value (EpochEffect::free is the last).
constexpr auto k_epoch_steps = [] {
  std::array<EpochStep, static_cast<std::size_t>(EpochEffect::free) + 1> steps{};
  for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = step_of(static_cast<EpochEffect>(i));
  return steps;
}();

}  // namespace

// A table lookup, not the switch: rma-race asks for most events.
EpochStep epoch_step(EpochEffect effect) {
  const auto i = static_cast<std::size_t>(effect);
  return i < k_epoch_steps.size() ? k_epoch_steps[i] : EpochStep{};
}

EpochEffect epoch_of(const Event& e) {
  const EpochEffect effect = call_traits(e.call).epoch;
  if (effect != EpochEffect::test) return effect;
  // MPI-3.1 section 11.5.2: MPI_Win_test returning flag = true has the
  // effect of MPI_Win_wait returning; flag = false has no visible effect.
  return !e.pending && e.flag.value_or(false) ? EpochEffect::wait : EpochEffect::none;
}

Sync sync_of(const Event& e) {
  const CallTraits& t = call_traits(e.call);
  Sync s;
  s.request = t.request;
  s.flow = t.role == Role::collective ? t.flow : Flow::none;
  s.epoch = epoch_of(e);
  s.step = epoch_step(s.epoch);
  const bool posts = t.request != RequestEffect::persistent;
  switch (t.role) {
    case Role::send: s.match = posts ? Match::send : Match::none; break;
    case Role::recv: s.match = posts ? Match::recv : Match::none; break;
    case Role::sendrecv: s.match = Match::send_recv; break;
    // A blocking probe matches once it returns (or is pending, waiting to);
    // a non-blocking one only when it found a message.
    case Role::probe: s.match = t.blocks || e.flag.value_or(false) ? Match::probe : Match::none; break;
    case Role::none: case Role::env: case Role::collective: case Role::rma_comm: case Role::rma_sync:
    case Role::request: case Role::handle: case Role::local_access: case Role::cuda: case Role::local:
    case Role::query: case Role::outside: case Role::thread:
      break;
  }
  return s;
}

namespace {
struct ThreadRow {
  Call call;
  ThreadEffect effect;
};
// The thread family's calls and what each orders (ThreadEffect's comments).
constexpr ThreadRow k_thread_rows[] = {
    {Call::pthread_create, ThreadEffect::create},
    {Call::thread_begin, ThreadEffect::begin},
    {Call::thread_end, ThreadEffect::end},
    {Call::pthread_join, ThreadEffect::join},
    {Call::pthread_mutex_lock, ThreadEffect::acquire},
    {Call::pthread_mutex_unlock, ThreadEffect::release},
    {Call::pthread_rwlock_rdlock, ThreadEffect::acquire_shared},
    {Call::pthread_rwlock_wrlock, ThreadEffect::acquire},
    {Call::pthread_rwlock_unlock, ThreadEffect::release},
    {Call::pthread_spin_lock, ThreadEffect::acquire},
    {Call::pthread_spin_unlock, ThreadEffect::release},
    {Call::pthread_cond_signal, ThreadEffect::signal},
    {Call::pthread_cond_broadcast, ThreadEffect::signal},
    {Call::pthread_cond_wait, ThreadEffect::wait_signal},
    {Call::pthread_barrier_wait, ThreadEffect::barrier},
    {Call::sem_post, ThreadEffect::signal},
    {Call::sem_wait, ThreadEffect::take_signal},
    {Call::omp_parallel_begin, ThreadEffect::fork},
    {Call::omp_parallel_end, ThreadEffect::join_team},
    {Call::omp_implicit_task_begin, ThreadEffect::implicit_begin},
    {Call::omp_implicit_task_end, ThreadEffect::implicit_end},
    {Call::omp_barrier, ThreadEffect::team_barrier},
    {Call::omp_taskwait, ThreadEffect::taskwait},
    {Call::omp_taskgroup_end, ThreadEffect::taskgroup},
    {Call::omp_task_create, ThreadEffect::task_create},
    {Call::omp_task_begin, ThreadEffect::task_begin},
    {Call::omp_task_end, ThreadEffect::task_end},
    {Call::omp_mutex_acquired, ThreadEffect::acquire},
    {Call::omp_mutex_released, ThreadEffect::release},
    {Call::omp_section_begin, ThreadEffect::section_begin},
    {Call::omp_section_end, ThreadEffect::section_end},
};

constexpr std::array<ThreadEffect, k_slots> k_thread_table = [] {
  std::array<ThreadEffect, k_slots> table{};
  for (const ThreadRow& row : k_thread_rows) table[static_cast<std::size_t>(row.call)] = row.effect;
  return table;
}();
}  // namespace

ThreadEffect thread_effect(Call call) {
  const auto i = static_cast<std::size_t>(call);
  return i < k_thread_table.size() ? k_thread_table[i] : ThreadEffect::none;
}

HandleUse handle_use(const Event& e) {
  HandleUse h;
  switch (call_traits(e.call).resource) {
    case Resource::none: break;
    case Resource::comm_new: h = {HandleKind::comm, HandleEffect::create, e.new_comm}; break;
    case Resource::comm_free: h = {HandleKind::comm, HandleEffect::free, e.comm}; break;
    // Groups share the communicator id space of the rank file (CommDef.is_group).
    case Resource::group_new: h = {HandleKind::group, HandleEffect::create, e.new_comm}; break;
    case Resource::group_free: h = {HandleKind::group, HandleEffect::free, e.group}; break;
    case Resource::type_new: h = {HandleKind::datatype, HandleEffect::create, e.new_datatype}; break;
    case Resource::type_commit: h = {HandleKind::datatype, HandleEffect::commit, e.datatype}; break;
    case Resource::type_free: h = {HandleKind::datatype, HandleEffect::free, e.datatype}; break;
    case Resource::op_new: h = {HandleKind::op, HandleEffect::create, e.new_datatype}; break;
    case Resource::op_free: h = {HandleKind::op, HandleEffect::free, e.new_datatype}; break;
    case Resource::win_new: case Resource::win_dynamic: h = {HandleKind::window, HandleEffect::create, e.window}; break;
    case Resource::win_free: h = {HandleKind::window, HandleEffect::free, e.window}; break;
    case Resource::win_attach: h = {HandleKind::window, HandleEffect::attach, e.window}; break;
    case Resource::win_detach: h = {HandleKind::window, HandleEffect::detach, e.window}; break;
    case Resource::message_new:
      if (e.message > k_message_no_proc && !e.pending && (call_traits(e.call).blocks || e.flag.value_or(false)))
        h = {HandleKind::message, HandleEffect::create, static_cast<uint32_t>(e.message)};
      break;
    case Resource::message_free:
      if (e.message > k_message_no_proc) h = {HandleKind::message, HandleEffect::free, static_cast<uint32_t>(e.message)};
      break;
    case Resource::buffer_attach: h = {HandleKind::buffer, HandleEffect::attach, 1}; break;
    case Resource::buffer_detach: h = {HandleKind::buffer, HandleEffect::detach, 1}; break;
    case Resource::info_new: h = {HandleKind::info, HandleEffect::create, e.new_datatype}; break;
    case Resource::info_free: h = {HandleKind::info, HandleEffect::free, e.new_datatype}; break;
  }
  return h;
}

}  // namespace smtrace::format
