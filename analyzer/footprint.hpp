// The bytes a buffer argument covers: (address, count, datatype) as strided
// blocks, from the rank's recorded datatype definitions (their flattened
// runs) and the sizes of predefined types.
//
// Predefined types: the trace records their ids, not their sizes; sizes come
// from the LP64 table below (what Open MPI and MPICH use on x86-64 and
// aarch64 Linux).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/access_tree.hpp"
#include "analyzer/rank_data.hpp"

namespace smtrace::analyzer {

// Return the size in bytes of predefined type `type` (a BasicType value), 0
// when unknown or when the type has no data (MPI_UB, MPI_LB).
uint64_t basic_type_size(uint32_t type);

class Footprint {
 public:
  // More blocks than this for one buffer: its hull is used instead (a
  // conservative footprint: it may overlap bytes the type skips).
  static constexpr uint64_t k_max_pieces = 4096;

  explicit Footprint(const RankData& data) : m_data(data) {}

  // Return the extent of `type` in bytes (0 when unknown).
  int64_t extent(uint32_t type) const;
  // Return true when the footprint of `type` is known (predefined with a
  // size, or a recorded derived type with its runs).
  bool known(uint32_t type) const;
  // Append to `out` the blocks of `count` elements of `type` at `base`, as
  // few strided pieces as the type allows (one for a contiguous buffer or a
  // vector type). `base` 0 (MPI_BOTTOM) makes the type's offsets absolute
  // addresses. Nothing is appended for an unknown type or count <= 0.
  void add(std::vector<Strided>& out, uint64_t base, int64_t count, uint32_t type) const;

 private:
  const RankData& m_data;
};

}  // namespace smtrace::analyzer
