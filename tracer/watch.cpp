#include "tracer/watch.hpp"

#include <algorithm>
#include <climits>

namespace smtrace::tracer {

using format::Event;

namespace {

// Below this an address is NULL or garbage: a range there would widen the
// runtime's hull test to most of the address space.
constexpr uint64_t k_first_valid = 4096;
// A hull wider than this comes from a garbage count.
constexpr int64_t k_max_hull = int64_t{1} << 46;

// Append the hull of `count` elements of `type` starting at `buf`.
void add_hull(std::vector<Range>& out, uint64_t buf, int64_t count, const TypeExtent& t) {
  if (!t.known || count <= 0 || t.true_ub <= t.true_lb) return;
  int64_t span = 0;
  if (__builtin_mul_overflow(count - 1, t.extent, &span) || span > k_max_hull || span < -k_max_hull) return;
  // Addresses wrap like the machine's: an absolute datatype (MPI_BOTTOM) has
  // buf 0 and its addresses in true_lb.
  const uint64_t lo = buf + static_cast<uint64_t>(t.true_lb + std::min<int64_t>(0, span));
  const uint64_t hi = buf + static_cast<uint64_t>(t.true_ub + std::max<int64_t>(0, span));
  if (lo < k_first_valid || hi <= lo || hi - lo > static_cast<uint64_t>(k_max_hull)) return;
  out.push_back({lo, hi});
}

void insert_merged(std::vector<Range>& ranges, Range r) {
  // The first range that ends at or after r.lo (touching ranges merge).
  auto first = std::lower_bound(ranges.begin(), ranges.end(), r.lo, [](const Range& x, uint64_t lo) { return x.hi < lo; });
  auto last = first;
  while (last != ranges.end() && last->lo <= r.hi) {
    r.lo = std::min(r.lo, last->lo);
    r.hi = std::max(r.hi, last->hi);
    ++last;
  }
  if (first == last) {
    ranges.insert(first, r);
  } else {
    *first = r;
    ranges.erase(first + 1, last);
  }
}

}  // namespace

TypeExtent extent_of(const format::DatatypeDef& def) {
  TypeExtent t;
  t.known = true;
  t.extent = def.extent;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const format::Run& run : def.runs) {
    const int64_t last = run.offset + static_cast<int64_t>(run.count > 1 ? run.count - 1 : 0) * run.stride;
    lo = std::min({lo, run.offset, last});
    hi = std::max({hi, run.offset + static_cast<int64_t>(run.length), last + static_cast<int64_t>(run.length)});
  }
  if (lo > hi) lo = hi = def.lb;  // no bytes
  t.true_lb = lo;
  t.true_ub = hi;
  return t;
}

format::CommPlace comm_place(const CommFacts& comm) {
  format::CommPlace place;
  if (comm.rank >= 0) place.rank = comm.rank;
  place.size = comm.size > 0 ? static_cast<uint64_t>(comm.size) : 0;
  place.inter = comm.inter;
  place.sources = comm.sources;
  place.destinations = comm.destinations;
  return place;
}

void buffer_ranges(const Event& e, const CommFacts& comm, const ExtentOf& extent_of, std::vector<Range>& out) {
  const format::CommPlace place = comm_place(comm);
  std::vector<format::Buffer> buffers;
  format::call_buffers(e, place, buffers);
  // Watched: what MPI may still touch after the call returns, also where
  // only the root touches it and this rank's place is unknown (maybe).
  for (const format::Buffer& b : buffers) {
    if (b.lifetime == format::Lifetime::call || b.arg == format::BufferArg::target ||
        b.arg == format::BufferArg::local)
      continue;
    const TypeExtent t = extent_of(b.datatype);
    int64_t offset = 0;
    switch (b.unit) {
      case format::OffsetUnit::elements: offset = b.offset * t.extent; break;
      case format::OffsetUnit::bytes: offset = b.offset; break;
      case format::OffsetUnit::disp_units: continue;  // target memory, at another rank
    }
    add_hull(out, b.addr + static_cast<uint64_t>(offset), b.count, t);
  }
}

std::vector<Range> merge_ranges(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (r.lo >= r.hi) continue;
    if (!out.empty() && r.lo <= out.back().hi) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

void WatchSet::add(const Entry& entry) {
  if (entry.range.lo >= entry.range.hi) return;
  m_entries.push_back(entry);
  if (!m_stale) insert_merged(m_union, entry.range);
}

template <class Pred>
void WatchSet::remove_if(Pred&& pred) {
  const std::size_t before = m_entries.size();
  std::erase_if(m_entries, pred);
  if (m_entries.size() != before) m_stale = true;
}

void WatchSet::window_memory(uint32_t window, uint64_t base, uint64_t size) {
  add({{base, base + size}, Owner::window, window, 0, 0});
}

void WatchSet::window_detach(uint32_t window, uint64_t base) {
  remove_if([&](const Entry& x) { return x.owner == Owner::window && x.window == window && x.range.lo == base; });
}

void WatchSet::window_free(uint32_t window) {
  remove_if([&](const Entry& x) { return (x.owner == Owner::window || x.owner == Owner::rma) && x.window == window; });
}

void WatchSet::rma_started(uint32_t window, int32_t target, uint64_t request, const std::vector<Range>& ranges) {
  for (const Range& r : ranges) add({r, Owner::rma, window, target, request});
}

void WatchSet::rma_completed(uint32_t window, std::optional<int32_t> target) {
  remove_if([&](const Entry& x) {
    return x.owner == Owner::rma && x.window == window && (!target || x.target == *target);
  });
}

void WatchSet::request_started(uint64_t request, const std::vector<Range>& ranges, bool send) {
  if (request == 0) return;
  const std::vector<Range>* source = &ranges;
  if (ranges.empty()) {
    auto it = m_persistent.find(request);
    if (it == m_persistent.end()) return;
    source = &it->second.ranges;
    send = it->second.send;
  }
  for (const Range& r : *source) add({r, Owner::request, 0, 0, request, send});
}

void WatchSet::persistent_defined(uint64_t request, const std::vector<Range>& ranges, bool send) {
  if (request != 0) m_persistent[request] = Persistent{ranges, send};
}

void WatchSet::requests_completed(const std::vector<uint64_t>& requests) {
  if (requests.empty()) return;
  remove_if([&](const Entry& x) {
    return x.request != 0 && std::find(requests.begin(), requests.end(), x.request) != requests.end();
  });
}

void WatchSet::request_freed(uint64_t request) {
  if (request == 0) return;
  m_persistent.erase(request);
  for (Entry& x : m_entries) {
    if (x.owner != Owner::request || x.request != request || !x.send) continue;
    const bool kept = std::any_of(m_entries.begin(), m_entries.end(), [&](const Entry& y) {
      return y.owner == Owner::freed_send && y.range == x.range;
    });
    if (!kept) x = Entry{x.range, Owner::freed_send};  // no completion names it now
  }
  remove_if([&](const Entry& x) { return x.owner == Owner::request && x.request == request; });
}

const std::vector<Range>& WatchSet::ranges() {
  if (m_stale) {
    std::vector<Range> all;
    all.reserve(m_entries.size());
    for (const Entry& x : m_entries) all.push_back(x.range);
    m_union = merge_ranges(std::move(all));
    m_stale = false;
  }
  return m_union;
}

}  // namespace smtrace::tracer
