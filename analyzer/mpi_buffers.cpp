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
};
thread_local Memo t_memo;

// Return the serial of the open scope when it is `e`'s, else 0 (which
// no scope has: the memo's entry is then valid for no later call).
uint64_t scope_of(const format::Event& e) {
  const detail::Scope& s = detail::t_scope;
  return s.event == &e ? s.serial : 0;
}

const format::CommPlace k_no_place{};

}  // namespace

namespace detail {

const std::vector<format::Buffer>& compute_raw(const format::Event& e, const RankData& data) {
  std::vector<format::Buffer>& raw = t_memo.raw;
  raw.clear();
  // Only rooted and sized layouts need the communicator.
  if (format::call_traits(e.call).role == format::Role::collective) {
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
  EventBuffers& out = t_memo.value;
  out.buffers.clear();
  out.pieces.clear();
  const format::CallTraits& t = format::call_traits(e.call);
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
