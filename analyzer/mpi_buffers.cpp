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

void mpi_buffers(const format::Event& e, const RankData& data, const Footprint& footprint, const BufferSink& sink) {
  const format::CallTraits& t = format::call_traits(e.call);
  if (t.buffers == format::BufferLayout::none || t.role == format::Role::local_access) return;
  // Only rooted and sized layouts need the communicator.
  const format::CommPlace place = t.role == format::Role::collective ? comm_place(data, e.comm) : format::CommPlace{};
  thread_local std::vector<format::Buffer> scratch;
  scratch.clear();
  format::call_buffers(e, place, scratch);
  for (const format::Buffer& b : scratch) {
    if (b.maybe || b.arg == format::BufferArg::target || b.arg == format::BufferArg::local) continue;
    int64_t offset = 0;
    switch (b.unit) {
      case format::OffsetUnit::elements: offset = b.offset == 0 ? 0 : b.offset * footprint.extent(b.datatype); break;
      case format::OffsetUnit::bytes: offset = b.offset; break;
      case format::OffsetUnit::disp_units: continue;
    }
    sink(CallBuffer{b.addr + static_cast<uint64_t>(offset), b.count, b.datatype, b.access, b.lifetime, b.arg});
  }
}

}  // namespace smtrace::analyzer
