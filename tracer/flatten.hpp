// Datatype flattening: the memory footprint (offset/length runs) and type
// signature of a derived datatype, from a plain description of how it was
// made. Pure: no MPI, so it is unit tested without MPI. The MPI layer fills a
// TypeDescription from PMPI_Type_get_envelope / PMPI_Type_get_contents.
//
// Repeated strides stay compact: a vector of 1000 blocks is one Run with
// count 1000, not 1000 runs.
//
// Thread safety: all functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::tracer {

enum class Combiner : uint8_t {
  contiguous,      // ints: count
  vector,          // ints: count, blocklength, stride (in child extents)
  hvector,         // ints: count, blocklength; addrs: stride (bytes)
  indexed,         // ints: count, blocklengths[count], displs[count] (child extents)
  hindexed,        // ints: count, blocklengths[count]; addrs: displs[count] (bytes)
  indexed_block,   // ints: count, blocklength, displs[count] (child extents)
  hindexed_block,  // ints: count, blocklength; addrs: displs[count] (bytes)
  structure,       // ints: count, blocklengths[count]; addrs: displs; children[count]
  subarray,        // ints: ndims, sizes[n], subsizes[n], starts[n], order (0 C, 1 Fortran)
  resized,         // addrs: lb, extent
  dup,             // nothing
  other,           // unknown: footprint = [lb, lb + extent) from the MPI layer
};

// How a derived datatype was made, as MPI_Type_get_contents tells it, with
// each child already flattened (basic types as basic_type_def gives them).
struct TypeDescription {
  Combiner combiner = Combiner::other;
  std::vector<int64_t> ints;
  std::vector<int64_t> addrs;
  std::vector<const format::DatatypeDef*> children;  // one, or `count` for structure
};

inline constexpr std::size_t k_max_runs = 1024;
inline constexpr std::size_t k_max_signature = 256;

// Return the DatatypeDef of basic type `basic` (a BasicType value) of
// `size` bytes: one run, one signature entry.
format::DatatypeDef basic_type_def(uint32_t basic, uint64_t size);

// Return the flattened DatatypeDef (runs sorted by offset, signature, size,
// lb, extent computed by the MPI rules without sticky LB/UB markers) of the
// type `description` makes; at most `max_runs` runs, else `truncated` with
// one run covering [lb, lb + extent). `id` and `combiner` are left for the
// caller to set.
format::DatatypeDef flatten(const TypeDescription& description, std::size_t max_runs = k_max_runs);

// Return `runs` repeated `times` times, `step` bytes apart, compacted; an
// empty result with `overflow` set when more than `max_runs` runs would be
// needed.
std::vector<format::Run> replicate(const std::vector<format::Run>& runs, uint64_t times, int64_t step,
                                   std::size_t max_runs, bool& overflow);

// Sort `runs` by offset and merge neighbours: adjacent blocks into one,
// equal blocks at a constant stride into one strided run.
void compact(std::vector<format::Run>& runs);

}  // namespace smtrace::tracer
