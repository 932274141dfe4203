// Which buffers an MPI point-to-point call or collective reads and writes at
// the calling rank: send sides read, receive sides written, for collectives
// only where significant at this rank (MPI 3.1 section 5.1). Shared by
// local-concurrency, cuda-mpi-race and rma-race.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "analyzer/footprint.hpp"
#include "analyzer/rank_data.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer {

enum class BufferUse : uint8_t { read, write };

// Receives one buffer: `count` elements of `type` at `buf`, read or written.
using BufferSink = std::function<void(uint64_t buf, int64_t count, uint32_t type, BufferUse use)>;

// Return rank `data`'s rank in communicator `comm`, if known.
std::optional<int32_t> comm_rank(const RankData& data, uint32_t comm);
// Return the size of communicator `comm` (the remote group's for an
// intercommunicator) as rank `data` defined it, 0 when unknown.
uint64_t comm_size(const RankData& data, uint32_t comm);

enum class P2PCall : uint8_t { none, blocking, nonblocking };

// Call `sink` for each buffer point-to-point call `e` touches (send sides
// read, receive sides written: MPI_Send and its modes, MPI_Recv,
// MPI_Sendrecv(_replace), and their non-blocking forms; persistent requests
// are not included) and return whether the call blocks; none for other calls.
P2PCall p2p_buffers(const format::Event& e, const BufferSink& sink);

// Call `sink` for each buffer collective `e` (blocking or not) touches at
// rank `data`; nothing for other calls. v/w variants give one buffer per
// block, at its displacement (`footprint` gives the extents).
void collective_buffers(const format::Event& e, const RankData& data, const Footprint& footprint,
                        const BufferSink& sink);

}  // namespace smtrace::analyzer
