// Which smtrace-mpi process reads which rank file (distributed/transfer.hpp
// says how the records travel).
#pragma once

#include <cstdint>

namespace smtrace::distributed {

// Return the process (of `processes`) that reads rank `rank` of a trace of
// `world_size` ranks: process 0 with one process; else process 0 reads none
// (it runs the analysis) and processes 1..processes-1 read blocks of
// consecutive ranks, the block sizes differing by at most one.
inline int reader_of(uint32_t rank, uint32_t world_size, int processes) {
  if (processes <= 1 || world_size == 0) return 0;
  const uint64_t readers = static_cast<uint64_t>(processes) - 1;
  return 1 + static_cast<int>(uint64_t{rank} * readers / world_size);
}

}  // namespace smtrace::distributed
