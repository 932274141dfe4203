// The bytes a buffer argument covers: (address, count, datatype) as strided
// blocks, from the rank's recorded datatype definitions (their flattened
// runs) and the sizes of predefined types.
//
// Predefined types: the trace records their ids, not their sizes; sizes come
// from the LP64 table below (what Open MPI and MPICH use on x86-64 and
// aarch64 Linux).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/access_tree.hpp"
#include "analyzer/rank_data.hpp"

namespace smtrace::analyzer {

namespace detail {
// Sizes of BasicType values on LP64 targets; 0 = unknown or no data.
inline constexpr std::array<uint8_t, 61> k_basic_size = {
    0,                    // unspecified
    1, 1, 1, 1,           // char, signed char, unsigned char, byte
    2, 2, 4, 4,           // short, unsigned short, int, unsigned
    8, 8, 8, 8,           // long, unsigned long, long long, unsigned long long
    4, 8, 16, 4, 1,       // float, double, long double, wchar, bool
    1, 2, 4, 8,           // int8..int64
    1, 2, 4, 8,           // uint8..uint64
    8, 16, 32,            // complex float, double, long double
    8, 16, 16, 8, 8, 32,  // float_int, double_int, long_int, 2int, short_int, long_double_int (extents)
    1, 8, 8, 8,           // packed, aint, offset, count
    0, 0,                 // ub, lb
    // Fortran (gfortran's default kinds, as Open MPI is built for them)
    4, 4, 8, 8, 16, 4, 1,  // integer, real, double precision, complex, double complex, logical, character
    8, 8, 16,              // 2integer, 2real, 2double_precision
    1, 2, 4, 8,            // integer1..integer8
    4, 8, 16,              // real4, real8, real16
    8, 16, 32,             // complex8, complex16, complex32
};
}  // namespace detail

// Return the size in bytes of predefined type `type` (a BasicType value), 0
// when unknown or when the type has no data (MPI_UB, MPI_LB).
inline uint64_t basic_type_size(uint32_t type) {
  return type < detail::k_basic_size.size() ? detail::k_basic_size[type] : 0;
}

// The bytes a buffer holds data in, from its start (the address the call
// is given): [lo, hi), its true lower and upper bound.
struct DataSpan {
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const DataSpan&) const = default;
};

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
  // Return the bytes `count` elements of `type` hold data in, from the
  // start of the first element (MPI-3.1 section 4.1.8's true lower and
  // upper bounds, the elements `extent` apart). Certain bytes only: nullopt
  // when `count` <= 0, the type is unknown or holds no data, its runs are
  // a hull (a truncated footprint: the true bounds are not known), or the
  // span does not fit an int64_t; a pair type (MPI_DOUBLE_INT, ...) ends at
  // the sizes of its two parts, a lower bound of its true upper bound.
  std::optional<DataSpan> data_span(int64_t count, uint32_t type) const;
  // Append to `out` the blocks of `count` elements of `type` at `base`, as
  // few strided pieces as the type allows (one for a contiguous buffer or a
  // vector type). `base` 0 (MPI_BOTTOM) makes the type's offsets absolute
  // addresses. Nothing is appended for an unknown type or count <= 0.
  [[gnu::always_inline]] void add(std::vector<Strided>& out, uint64_t base, int64_t count, uint32_t type) const {
    // A predefined type (most buffers): one block, here (inline wherever used).
    if (type >= format::k_first_derived_id) return add_derived(out, base, count, type);
    const uint64_t size = basic_type_size(type);
    if (count > 0 && size != 0 && base != 0) out.push_back(Strided{base, static_cast<uint64_t>(count) * size, 0, 1});
  }

 private:
  void add_derived(std::vector<Strided>& out, uint64_t base, int64_t count, uint32_t type) const;

  const RankData& m_data;
};

}  // namespace smtrace::analyzer
