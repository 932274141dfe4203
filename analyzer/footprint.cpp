#include "analyzer/footprint.hpp"

#include <algorithm>
#include <limits>

#include "analyzer/datatypes.hpp"

namespace smtrace::analyzer {

namespace {

// Return the piece of run `r` of one element at `element` (a negative stride
// walks down: the piece starts at its lowest block).
Strided piece(uint64_t element, const format::Run& r) {
  const uint64_t blocks = std::max<uint64_t>(r.count, 1);
  int64_t first = r.offset;
  uint64_t distance = static_cast<uint64_t>(r.stride);
  if (r.stride < 0) {
    first = r.offset + static_cast<int64_t>(blocks - 1) * r.stride;
    distance = static_cast<uint64_t>(-r.stride);
  }
  const uint64_t lo = element + static_cast<uint64_t>(first);
  // Blocks that touch or overlap (or a single one) are one block.
  if (blocks == 1 || r.length >= distance) return Strided{lo, (blocks - 1) * distance + r.length, 0, 1};
  return Strided{lo, r.length, distance, blocks};
}

}  // namespace

int64_t Footprint::extent(uint32_t type) const {
  if (type < format::k_first_derived_id) return static_cast<int64_t>(basic_type_size(type));
  const format::DatatypeDef* def = m_data.datatype(type);
  return def ? def->extent : 0;
}

bool Footprint::known(uint32_t type) const {
  if (type < format::k_first_derived_id) return basic_type_size(type) > 0;
  const format::DatatypeDef* def = m_data.datatype(type);
  return def && !def->runs.empty();
}

std::optional<DataSpan> Footprint::data_span(int64_t count, uint32_t type) const {
  if (count <= 0) return std::nullopt;
  // One element: [lo, hi), the elements `ext` apart.
  int64_t lo = 0, hi = 0, ext = 0;
  if (type < format::k_first_derived_id) {
    const auto size = static_cast<int64_t>(basic_type_size(type));
    if (size == 0) return std::nullopt;
    ext = size;
    hi = size;
    // (The table's size of a pair type is its extent, padding included.)
    if (type_class(type) == TypeClass::pair) {
      const auto [a, b] = pair_parts(type);
      hi = std::min<int64_t>(size, static_cast<int64_t>(basic_type_size(a) + basic_type_size(b)));
    }
  } else {
    const format::DatatypeDef* def = m_data.datatype(type);
    if (!def || def->truncated || def->runs.empty()) return std::nullopt;
    lo = std::numeric_limits<int64_t>::max();
    hi = std::numeric_limits<int64_t>::min();
    for (const format::Run& r : def->runs) {
      if (r.length == 0) continue;
      const Strided p = piece(0, r);
      const auto first = static_cast<int64_t>(p.lo);
      lo = std::min(lo, first);
      hi = std::max(hi, first + static_cast<int64_t>((p.count - 1) * p.distance + p.size));
    }
    if (lo >= hi) return std::nullopt;
    ext = def->extent;
  }
  __extension__ typedef __int128 Int128;
  const Int128 last = static_cast<Int128>(count - 1) * ext;  // where the last element starts
  const Int128 first = static_cast<Int128>(lo) + std::min<Int128>(0, last);
  const Int128 end = static_cast<Int128>(hi) + std::max<Int128>(0, last);
  if (first < std::numeric_limits<int64_t>::min() || end > std::numeric_limits<int64_t>::max()) return std::nullopt;
  return DataSpan{static_cast<int64_t>(first), static_cast<int64_t>(end)};
}

void Footprint::add_derived(std::vector<Strided>& out, uint64_t base, int64_t count, uint32_t type) const {
  if (count <= 0) return;
  const auto n = static_cast<uint64_t>(count);
  const format::DatatypeDef* def = m_data.datatype(type);
  if (!def || def->runs.empty()) return;
  const auto ext = static_cast<uint64_t>(def->extent);
  const auto& runs = def->runs;
  // One run: elements back to back either extend one block (a contiguous
  // type) or continue the run's stride (a vector whose extent is its
  // stride times its count): one piece in all.
  if (runs.size() == 1) {
    const Strided p = piece(base, runs[0]);
    if (p.count == 1 && p.size == ext) {
      out.push_back(Strided{p.lo, n * ext, 0, 1});
      return;
    }
    if (p.count > 1 && p.size <= p.distance && p.distance * p.count == ext) {
      out.push_back(Strided{p.lo, p.size, p.distance, p.count * n});
      return;
    }
    if (p.count == 1 && p.size < ext) {
      out.push_back(Strided{p.lo, p.size, n > 1 ? ext : 0, n});
      return;
    }
  }
  if (n * runs.size() > k_max_pieces || n > k_max_pieces) {
    // Too many pieces: the hull.
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    for (const format::Run& r : runs) {
      const Strided p = piece(0, r);
      const auto lo = static_cast<int64_t>(p.lo);
      first = std::min(first, lo);
      last = std::max(last, lo + static_cast<int64_t>((p.count - 1) * p.distance + p.size));
    }
    const uint64_t lo = base + static_cast<uint64_t>(first);
    const uint64_t hi = base + (n - 1) * ext + static_cast<uint64_t>(last);
    if (hi > lo) out.push_back(Strided{lo, hi - lo, 0, 1});
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    for (const format::Run& r : runs) {
      const Strided p = piece(base + i * ext, r);
      if (p.size > 0) out.push_back(p);
    }
  }
}

}  // namespace smtrace::analyzer
