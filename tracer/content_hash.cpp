#include "tracer/content_hash.hpp"

#include <algorithm>
#include <cstring>

#include "trace_format/call_semantics.hpp"

namespace smtrace::tracer::content {

using format::Event;

namespace {

constexpr uint64_t k_first_valid = 4096;  // below: NULL or garbage (as watch.cpp)
constexpr uint64_t k_mul = 0x9E3779B97F4A7C15ull;

__extension__ typedef unsigned __int128 u128;

inline uint64_t mix(uint64_t h, uint64_t v) noexcept {
  const u128 m = static_cast<u128>(h ^ v) * k_mul;
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

// Continue hash `h` over `n` bytes at `p`.
uint64_t hash_more(uint64_t h, const unsigned char* p, std::size_t n) noexcept {
  // Four lanes: independent multiplies, several bytes a cycle. Only when
  // they ran: lanes seeded from h alone would combine into a constant
  // (a ^ b is the seeds' difference), and the hash so far would be lost.
  if (n >= 32) {
    uint64_t a = h, b = h ^ 0x243F6A8885A308D3ull, c = h ^ 0x13198A2E03707344ull, d = h ^ 0xA4093822299F31D0ull;
    while (n >= 32) {
      uint64_t w[4];
      std::memcpy(w, p, 32);
      a = mix(a, w[0]);
      b = mix(b, w[1]);
      c = mix(c, w[2]);
      d = mix(d, w[3]);
      p += 32;
      n -= 32;
    }
    h = mix(mix(a, b), mix(c, d));
  }
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = mix(h, w);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = mix(h, w ^ (static_cast<uint64_t>(n) << 56));
  }
  return h;
}

}  // namespace

uint64_t hash_bytes(const void* p, std::size_t n) noexcept {
  return mix(hash_more(k_mul, static_cast<const unsigned char*>(p), n), n);
}

bool dense_range(uint64_t base, int64_t count, int64_t extent, Range& out) noexcept {
  uint64_t bytes = 0;
  if (count <= 0 || extent <= 0 ||
      __builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(extent), &bytes) ||
      base < k_first_valid || base + bytes < base)
    return false;
  out = {base, base + bytes};
  return true;
}

void input_ranges(const Event& e, const CommFacts& comm, const PiecesOf& pieces_of, std::vector<Range>& out,
                  std::size_t max_ranges) {
  out.clear();
  const format::CommPlace place = comm_place(comm);
  // Scratch kept per thread: no allocation per post once warm.
  thread_local std::vector<format::Buffer> buffers;
  thread_local std::vector<Piece> pieces;
  thread_local std::vector<Range> all;
  buffers.clear();
  all.clear();
  format::call_buffers(e, place, buffers);
  for (const format::Buffer& b : buffers) {
    if (b.lifetime == format::Lifetime::call || b.access != format::BufferAccess::read || b.maybe ||
        b.arg == format::BufferArg::target || b.arg == format::BufferArg::local || b.count <= 0)
      continue;
    int64_t extent = 0;
    pieces.clear();
    if (!pieces_of(b.datatype, pieces, extent)) continue;
    int64_t offset = 0;
    switch (b.unit) {
      case format::OffsetUnit::elements: offset = b.offset * extent; break;
      case format::OffsetUnit::bytes: offset = b.offset; break;
      case format::OffsetUnit::disp_units: continue;  // target memory
    }
    if (pieces.empty()) continue;
    const uint64_t base = b.addr + static_cast<uint64_t>(offset);
    // A dense type (a basic type, a contiguous one): one range.
    if (pieces.size() == 1 && pieces[0].offset == 0 && extent > 0 &&
        pieces[0].length == static_cast<uint64_t>(extent)) {
      if (Range r; dense_range(base, b.count, extent, r)) all.push_back(r);
      continue;
    }
    if (static_cast<uint64_t>(b.count) * pieces.size() > max_ranges) {
      out.clear();
      return;
    }
    for (int64_t k = 0; k < b.count; ++k)
      for (const Piece& p : pieces) {
        if (p.length == 0) continue;
        // Absolute addresses (MPI_BOTTOM) wrap like the machine's.
        const uint64_t lo = base + static_cast<uint64_t>(k * extent + p.offset);
        if (lo < k_first_valid || lo + p.length < lo) continue;
        if (!all.empty() && all.back().hi == lo) all.back().hi = lo + p.length;  // touching the last: merged
        else all.push_back({lo, lo + p.length});
      }
  }
  if (all.size() == 1) out.assign(all.begin(), all.end());
  else if (!all.empty()) out = merge_ranges(all);
}

uint64_t hash_ranges(const std::vector<Range>& ranges, uint64_t limit) noexcept {
  return hash_ranges(ranges.data(), ranges.size(), limit);
}

uint64_t hash_ranges(const Range* first, std::size_t n_ranges, uint64_t limit) noexcept {
  const Range* const last = first + n_ranges;
  struct {
    const Range *b, *e;
    const Range* begin() const { return b; }
    const Range* end() const { return e; }
  } ranges{first, last};
  uint64_t total = 0;
  for (const Range& r : ranges) total += r.hi - r.lo;
  uint64_t h = k_mul;
  if (total <= limit) {
    for (const Range& r : ranges)
      h = hash_more(h, reinterpret_cast<const unsigned char*>(static_cast<uintptr_t>(r.lo)), r.hi - r.lo);
    return mix(h, total);
  }
  // A sample: the footprint's first limit/2 and last limit/2 bytes.
  const uint64_t head = limit / 2, tail = limit - head;
  uint64_t at = 0;  // bytes of the footprint before r
  for (const Range& r : ranges) {
    const uint64_t n = r.hi - r.lo;
    // The part of [at, at + n) in [0, head) or [total - tail, total).
    const uint64_t a0 = at, a1 = std::min(at + n, head);
    if (a1 > a0)
      h = hash_more(h, reinterpret_cast<const unsigned char*>(static_cast<uintptr_t>(r.lo + (a0 - at))), a1 - a0);
    const uint64_t b0 = std::max(at, total - tail), b1 = at + n;
    if (b1 > b0 && b0 >= a1)
      h = hash_more(h, reinterpret_cast<const unsigned char*>(static_cast<uintptr_t>(r.lo + (b0 - at))), b1 - b0);
    at += n;
  }
  return mix(h, total);
}

void Table::posted(uint64_t request, const Range* ranges, std::size_t n) {
  if (request == 0 || n == 0) return;
  Pending& p = m_pending[request];
  if (p.rma) --m_rma_requests;
  p.hash = hash_ranges(ranges, n, m_limit);
  p.ranges.assign(ranges, n);
  p.rma = false;
}

void Table::rma_posted(uint64_t request, uint32_t window, int32_t target, const Range* ranges, std::size_t n) {
  if (request == 0 || n == 0) return;
  posted(request, ranges, n);
  Pending& p = m_pending[request];
  p.rma = true;
  p.window = window;
  p.target = target;
  ++m_rma_requests;
}

void Table::erase(std::unordered_map<uint64_t, Pending>::iterator it) {
  if (it->second.rma) --m_rma_requests;
  m_pending.erase(it);
}

void Table::define(uint64_t request, std::vector<Range> ranges) {
  if (request == 0) return;
  if (ranges.empty()) m_defined.erase(request);
  else m_defined[request] = std::move(ranges);
}

void Table::started(uint64_t request) {
  auto it = m_defined.find(request);
  if (it == m_defined.end()) return;
  posted(request, it->second);
}

bool Table::changed(uint64_t request, Range& where) {
  auto it = m_pending.find(request);
  if (it == m_pending.end()) return false;
  const Ranges& r = it->second.ranges;
  if (hash_ranges(r.data(), r.size(), m_limit) == it->second.hash) return false;
  where = r.hull();
  erase(it);
  return true;
}

void Table::rma_issued(uint32_t window, int32_t target, const Range* ranges, std::size_t n) {
  if (n == 0 || m_rma.size() >= k_rma_pending) return;
  RmaPending& r = m_rma.emplace_back();
  r.window = window;
  r.target = target;
  r.p.hash = hash_ranges(ranges, n, m_limit);
  r.p.ranges.assign(ranges, n);
}

void Table::rma_completed(uint32_t window, int32_t target, bool all_targets, std::vector<Range>& changed) {
  auto done = [&](const RmaPending& r) {
    if (r.window != window || (!all_targets && r.target != target)) return false;
    if (hash_ranges(r.p.ranges.data(), r.p.ranges.size(), m_limit) != r.p.hash) changed.push_back(r.p.ranges.hull());
    return true;
  };
  m_rma.erase(std::remove_if(m_rma.begin(), m_rma.end(), done), m_rma.end());
  if (m_rma_requests == 0) return;
  for (auto it = m_pending.begin(); it != m_pending.end();) {
    const Pending& p = it->second;
    if (!p.rma || p.window != window || (!all_targets && p.target != target)) {
      ++it;
      continue;
    }
    if (hash_ranges(p.ranges.data(), p.ranges.size(), m_limit) != p.hash) changed.push_back(p.ranges.hull());
    --m_rma_requests;
    it = m_pending.erase(it);
  }
}

void Table::completed(uint64_t request) {
  if (auto it = m_pending.find(request); it != m_pending.end()) erase(it);
}

void Table::freed(uint64_t request) {
  completed(request);
  m_defined.erase(request);
}

}  // namespace smtrace::tracer::content
