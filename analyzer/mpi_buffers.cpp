// The point-to-point and collective tables of mpi_buffers.hpp.
#include "analyzer/mpi_buffers.hpp"

#include <algorithm>
#include <vector>

namespace smtrace::analyzer {

using format::Call;

std::optional<int32_t> comm_rank(const RankData& data, uint32_t comm) {
  if (comm == format::k_comm_world) return static_cast<int32_t>(data.rank);
  if (comm == format::k_comm_self) return 0;
  const format::CommDef* def = data.comm(comm);
  if (!def) return std::nullopt;
  auto at = std::find(def->world_ranks.begin(), def->world_ranks.end(), data.rank);
  if (at == def->world_ranks.end()) return std::nullopt;
  return static_cast<int32_t>(at - def->world_ranks.begin());
}

uint64_t comm_size(const RankData& data, uint32_t comm) {
  if (comm == format::k_comm_world) return data.header.world_size;
  if (comm == format::k_comm_self) return 1;
  const format::CommDef* def = data.comm(comm);
  if (!def) return 0;
  return def->inter ? def->remote_world_ranks.size() : def->world_ranks.size();
}

P2PCall p2p_buffers(const format::Event& e, const BufferSink& sink) {
  switch (e.call) {
    case Call::Send: case Call::Bsend: case Call::Ssend: case Call::Rsend:
      sink(e.buf, e.count, e.datatype, BufferUse::read);
      return P2PCall::blocking;
    case Call::Isend: case Call::Ibsend: case Call::Issend: case Call::Irsend:
      sink(e.buf, e.count, e.datatype, BufferUse::read);
      return P2PCall::nonblocking;
    case Call::Recv: case Call::Sendrecv_replace:
      sink(e.buf, e.count, e.datatype, BufferUse::write);
      return P2PCall::blocking;
    case Call::Irecv:
      sink(e.buf, e.count, e.datatype, BufferUse::write);
      return P2PCall::nonblocking;
    case Call::Sendrecv:
      sink(e.buf, e.count, e.datatype, BufferUse::read);
      sink(e.recv_buf, e.recv_count, e.recv_datatype, BufferUse::write);
      return P2PCall::blocking;
    default:
      return P2PCall::none;
  }
}

void collective_buffers(const format::Event& e, const RankData& data, const Footprint& footprint,
                        const BufferSink& sink) {
  const uint64_t n = comm_size(data, e.comm);
  const std::optional<int32_t> me = comm_rank(data, e.comm);
  const bool root = e.peer && (*e.peer == format::k_root || (me && *e.peer == *me));
  const bool known_root = e.peer && *e.peer != format::k_proc_null;
  auto read = [&](uint64_t buf, int64_t count, uint32_t type) { sink(buf, count, type, BufferUse::read); };
  auto write = [&](uint64_t buf, int64_t count, uint32_t type) { sink(buf, count, type, BufferUse::write); };
  auto times = [](int64_t count, uint64_t k) { return count * static_cast<int64_t>(k); };
  // v/w variants: block i at displs[i] (elements of `type`, or bytes with per-block types).
  auto per_block = [&](uint64_t buf, const std::vector<int64_t>& counts, const std::vector<int64_t>& displs,
                       uint32_t type, const std::vector<uint32_t>& types, BufferUse use) {
    if (buf == 0 && types.empty() && type < format::k_first_derived_id) return;
    for (std::size_t i = 0; i < counts.size() && i < displs.size(); ++i) {
      const uint32_t t = types.empty() ? type : (i < types.size() ? types[i] : 0);
      const int64_t step = types.empty() ? footprint.extent(t) : 1;
      sink(buf + static_cast<uint64_t>(displs[i] * step), counts[i], t, use);
    }
  };
  switch (e.call) {
    case Call::Bcast: case Call::Ibcast:
      if (root) read(e.buf, e.count, e.datatype);
      else if (known_root && me) write(e.buf, e.count, e.datatype);
      break;
    case Call::Reduce: case Call::Ireduce:
      if (!e.in_place) read(e.buf, e.count, e.datatype);
      if (root) write(e.recv_buf, e.recv_count, e.recv_datatype);
      break;
    case Call::Allreduce: case Call::Iallreduce: case Call::Scan: case Call::Iscan:
    case Call::Exscan: case Call::Iexscan:
      if (!e.in_place) read(e.buf, e.count, e.datatype);
      write(e.recv_buf, e.recv_count, e.recv_datatype);
      break;
    case Call::Reduce_scatter_block: case Call::Ireduce_scatter_block:
      if (!e.in_place && n) read(e.buf, times(e.count, n), e.datatype);
      write(e.recv_buf, e.recv_count, e.recv_datatype);
      break;
    case Call::Reduce_scatter: case Call::Ireduce_scatter: {
      int64_t total = 0;
      for (int64_t c : e.recv_counts) total += c;
      if (!e.in_place) read(e.buf, total, e.datatype);
      if (me && static_cast<std::size_t>(*me) < e.recv_counts.size())
        write(e.recv_buf, e.recv_counts[static_cast<std::size_t>(*me)], e.recv_datatype);
      break;
    }
    case Call::Gather: case Call::Igather:
      if (!e.in_place) read(e.buf, e.count, e.datatype);
      if (root && n) write(e.recv_buf, times(e.recv_count, n), e.recv_datatype);
      break;
    case Call::Gatherv: case Call::Igatherv: case Call::Allgatherv: case Call::Iallgatherv:
      if (!e.in_place) read(e.buf, e.count, e.datatype);
      per_block(e.recv_buf, e.recv_counts, e.recv_displs, e.recv_datatype, {}, BufferUse::write);
      break;
    case Call::Scatter: case Call::Iscatter:
      if (root && n) read(e.buf, times(e.count, n), e.datatype);
      if (!e.in_place) write(e.recv_buf, e.recv_count, e.recv_datatype);
      break;
    case Call::Scatterv: case Call::Iscatterv:
      per_block(e.buf, e.counts, e.displs, e.datatype, {}, BufferUse::read);
      if (!e.in_place) write(e.recv_buf, e.recv_count, e.recv_datatype);
      break;
    case Call::Allgather: case Call::Iallgather:
      if (!e.in_place) read(e.buf, e.count, e.datatype);
      if (n) write(e.recv_buf, times(e.recv_count, n), e.recv_datatype);
      break;
    case Call::Alltoall: case Call::Ialltoall:
      if (!e.in_place && n) read(e.buf, times(e.count, n), e.datatype);
      if (n) write(e.recv_buf, times(e.recv_count, n), e.recv_datatype);
      break;
    case Call::Alltoallv: case Call::Ialltoallv:
      if (!e.in_place) per_block(e.buf, e.counts, e.displs, e.datatype, {}, BufferUse::read);
      per_block(e.recv_buf, e.recv_counts, e.recv_displs, e.recv_datatype, {}, BufferUse::write);
      break;
    case Call::Alltoallw: case Call::Ialltoallw:
      if (!e.in_place) per_block(e.buf, e.counts, e.displs, 0, e.datatypes, BufferUse::read);
      per_block(e.recv_buf, e.recv_counts, e.recv_displs, 0, e.recv_datatypes, BufferUse::write);
      break;
    default: break;
  }
}

}  // namespace smtrace::analyzer
