// The calling rank's place in a communicator, and format::call_buffers with
// displacements resolved.
#include "analyzer/mpi_buffers.hpp"

#include <algorithm>
#include <vector>

namespace smtrace::analyzer {

format::CommPlace comm_place(const RankData& data, uint32_t comm) {
  format::CommPlace place;
  if (comm == format::k_comm_world) {
    place.rank = static_cast<int32_t>(data.rank);
    place.size = data.header.world_size;
    return place;
  }
  if (comm == format::k_comm_self) {
    place.rank = 0;
    place.size = 1;
    return place;
  }
  const format::CommDef* def = data.comm(comm);
  if (!def) return place;
  auto at = std::find(def->world_ranks.begin(), def->world_ranks.end(), data.rank);
  if (at != def->world_ranks.end()) place.rank = static_cast<int32_t>(at - def->world_ranks.begin());
  place.size = def->inter ? def->remote_world_ranks.size() : def->world_ranks.size();
  place.inter = def->inter;
  if (def->topology != format::Topology::none) {
    place.sources = &def->sources;
    place.destinations = &def->destinations;
  }
  return place;
}

namespace {

// The storage of this thread's memo (detail::t_scope says what it holds).
struct Memo {
  EventBuffers value;
  std::vector<format::Buffer> raw;  // call_buffers(..., NullBuffers::keep)
  bool raw_one = false;             // raw is compute_raw_one's: one Buffer, Event.buf at offset 0
};
thread_local Memo t_memo;

// Return the serial of the open scope when it is `e`'s, else 0 (which
// no scope has: the memo's entry is then valid for no later call).
uint64_t scope_of(const format::Event& e) {
  const detail::Scope& s = detail::t_scope;
  return s.event == &e ? s.serial : 0;
}

const format::CommPlace k_no_place{};

// The two views of `e`, a call of one_buffer's layouts (`t`: its traits),
// without the general rule: the Buffer call_buffers(..., keep) makes
// (compute_raw_one), and what compute_buffers derives from it
// (compute_value_one). Each fills its own memo only: invalid-argument reads
// such a call's buffer from the event, and the checks that ask for the
// bytes (local-concurrency, cuda-mpi-race) never ask for the raw view, so
// a run of only one kind computes only its own. (Inline in their callers,
// and the memo's vectors kept at their sizes: a send or receive after
// another writes only what differs.)
[[gnu::always_inline]] inline format::BufferAccess one_access(const format::CallTraits& t) {
  return t.buffers == format::BufferLayout::send ? format::BufferAccess::read : format::BufferAccess::write;
}

[[gnu::always_inline]] inline void compute_raw_one(const format::Event& e, const RankData& data,
                                                   const format::CallTraits& t) {
  Memo& m = t_memo;
  if (!m.raw_one) {
    m.raw.assign(1, format::Buffer{});
    m.raw_one = true;
  }
  // (The other fields as a Buffer{} has them: Event.buf, at offset 0.)
  format::Buffer& b = m.raw[0];
  b.access = one_access(t);
  b.lifetime = format::buffer_lifetime(t);
  b.addr = e.buf;
  b.count = e.count;
  b.datatype = e.datatype;
  detail::Scope& s = detail::t_scope;
  s.raw_serial = scope_of(e);
  s.raw_data = &data;
  s.raw = &m.raw;
}

[[gnu::always_inline]] inline void compute_value_one(const format::Event& e, const RankData& data,
                                                     const format::CallTraits& t) {
  EventBuffers& out = t_memo.value;
  out.pieces.clear();
  // What compute_buffers leaves out: NULL (address 0 of a predefined type);
  // a local access has no buffers there.
  if (t.role != format::Role::local_access && (e.buf != 0 || e.datatype >= format::k_first_derived_id)) {
    if (out.buffers.size() != 1) out.buffers.resize(1);
    BufferBytes& bytes = out.buffers[0];
    bytes.buffer =
        CallBuffer{e.buf, e.count, e.datatype, one_access(t), format::buffer_lifetime(t), format::BufferArg::buf};
    bytes.first = 0;
    Footprint(data).add(out.pieces, e.buf, e.count, e.datatype);
    bytes.last = static_cast<uint32_t>(out.pieces.size());
  } else {
    out.buffers.clear();
  }
  detail::Scope& s = detail::t_scope;
  s.buffers_serial = scope_of(e);
  s.buffers_data = &data;
  s.buffers = &out;
}

}  // namespace

namespace detail {

const std::vector<format::Buffer>& compute_raw(const format::Event& e, const RankData& data) {
  const format::CallTraits& t = format::call_traits(e.call);
  if (one_buffer(t.buffers)) {
    compute_raw_one(e, data, t);
    return t_memo.raw;
  }
  std::vector<format::Buffer>& raw = t_memo.raw;
  raw.clear();
  t_memo.raw_one = false;
  // Only rooted and sized layouts need the communicator.
  if (t.role == format::Role::collective) {
    format::call_buffers(e, comm_place(data, e.comm), raw, format::NullBuffers::keep);
  } else {
    format::call_buffers(e, k_no_place, raw, format::NullBuffers::keep);
  }
  Scope& s = t_scope;
  s.raw_serial = scope_of(e);
  s.raw_data = &data;
  s.raw = &raw;
  return raw;
}

const EventBuffers& compute_buffers(const format::Event& e, const RankData& data) {
  const format::CallTraits& t = format::call_traits(e.call);
  if (one_buffer(t.buffers)) {
    compute_value_one(e, data, t);
    return t_memo.value;
  }
  EventBuffers& out = t_memo.value;
  out.buffers.clear();
  out.pieces.clear();
  if (t.buffers != format::BufferLayout::none && t.role != format::Role::local_access) {
    const Footprint footprint(data);
    for (const format::Buffer& b : event_call_buffers(e, data)) {
      if (b.maybe || b.arg == format::BufferArg::target || b.arg == format::BufferArg::local) continue;
      // What NullBuffers::skip leaves out: address 0 of a predefined type,
      // NULL or MPI_IN_PLACE recorded as no buffer.
      if (b.addr == 0 && b.datatype < format::k_first_derived_id) continue;
      int64_t offset = 0;
      switch (b.unit) {
        case format::OffsetUnit::elements: offset = b.offset == 0 ? 0 : b.offset * footprint.extent(b.datatype); break;
        case format::OffsetUnit::bytes: offset = b.offset; break;
        case format::OffsetUnit::disp_units: continue;
      }
      BufferBytes bytes;
      bytes.buffer = CallBuffer{b.addr + static_cast<uint64_t>(offset), b.count, b.datatype, b.access, b.lifetime, b.arg};
      bytes.first = static_cast<uint32_t>(out.pieces.size());
      footprint.add(out.pieces, bytes.buffer.addr, bytes.buffer.count, bytes.buffer.datatype);
      bytes.last = static_cast<uint32_t>(out.pieces.size());
      out.buffers.push_back(bytes);
    }
  }
  Scope& s = t_scope;
  s.buffers_serial = scope_of(e);
  s.buffers_data = &data;
  s.buffers = &out;
  return out;
}

}  // namespace detail

void mpi_buffers(const format::Event& e, const RankData& data, const BufferSink& sink) {
  for (const BufferBytes& b : event_buffers(e, data).buffers) sink(b.buffer);
}

}  // namespace smtrace::analyzer
