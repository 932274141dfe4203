// The watched ranges as the load/store runtime's hot path reads them: a
// fixed array of sorted, disjoint ranges behind a sequence lock, plus their
// hull in two words (smtrace_access_hull: the runtime's is exported as
// smtrace_access_watch_hull, which code instrumented by smtrace's compiler
// plugins tests inline).
//
// Every instrumented access first tests its address against the hull (two
// relaxed loads, two subtractions and a compare: the whole cost while the
// access is outside every watched range's hull); only a hit searches the
// array. Writers (the tracer's MPI wrappers, serialized by the tracer) first
// widen the hull to cover the old and the new ranges, then bump the
// sequence to odd, rewrite the array, bump it to even and narrow the hull
// to the new ranges; readers of the array retry while the sequence is odd
// or changed under them, so they never block and never see a torn array,
// and nothing is ever freed under them (the array is static). Each word of
// the hull moves one way at a time (lo down, hi up while widening), so a
// reader that reads one word before and one after a store still gets a
// hull that covers the ranges of the array it may then see.
//
// A reader racing with a writer may see the old hull with the new array or
// the other way round: an access made by one thread while another thread
// is inside the MPI call that changes the watch set is unordered with that
// call anyway. A thread always sees its own changes.
//
// More ranges than the capacity: neighbours are coarsened into one range
// (a superset: some accesses just outside are then recorded too).
//
// Thread safety: publish() by one thread at a time; the rest from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tracer/access_abi.hpp"

namespace smtrace::tracer {

class RangeTable {
 public:
  // A table whose hull lives in `hull` (the runtime's exported one), or in
  // the table itself (nullptr).
  constexpr explicit RangeTable(smtrace_access_hull* hull = nullptr) noexcept
      : m_hull(hull ? hull : &m_own_hull) {}
  RangeTable(const RangeTable&) = delete;
  RangeTable& operator=(const RangeTable&) = delete;

  static constexpr std::size_t k_capacity = 1024;
  // Accesses of up to this many bytes take the one-compare hull test.
  static constexpr uintptr_t k_max_small = 16;

  // Return true when an access of at most k_max_small bytes at `addr` may
  // touch a watched range (the hull test; exact test: intersects()).
  bool near(uintptr_t addr) const noexcept {
    const uintptr_t lo = word(m_hull->lo).load(std::memory_order_relaxed);
    return addr - lo < word(m_hull->hi).load(std::memory_order_relaxed) - lo;
  }
  // Return true when [addr, addr + size) may touch the hull.
  bool near(uintptr_t addr, std::size_t size) const noexcept {
    const uintptr_t lo = word(m_hull->lo).load(std::memory_order_relaxed);
    const uintptr_t hi = word(m_hull->hi).load(std::memory_order_relaxed);
    if (lo == hi) return false;  // nothing watched
    return addr < hi && addr + size > lo + (k_max_small - 1);
  }

  // Return true when [lo, hi) intersects a watched range.
  bool intersects(uintptr_t lo, uintptr_t hi) const noexcept {
    for (;;) {
      const uint64_t seq = m_seq.load(std::memory_order_acquire);
      if (seq & 1) {
        pause();
        continue;
      }
      const std::size_t n = std::min(m_size.load(std::memory_order_relaxed), k_capacity);
      // The first range that ends after lo; it intersects when it starts before hi.
      std::size_t first = 0, count = n;
      while (count > 0) {
        const std::size_t half = count / 2;
        if (m_hi[first + half].load(std::memory_order_relaxed) <= lo) {
          first += half + 1;
          count -= half + 1;
        } else {
          count = half;
        }
      }
      const bool hit = first < n && m_lo[first].load(std::memory_order_relaxed) < hi;
      std::atomic_thread_fence(std::memory_order_acquire);
      if (m_seq.load(std::memory_order_relaxed) == seq) return hit;
    }
  }

  // Replace the ranges by `ranges[0..n)` (sorted, disjoint, lo < hi).
  void publish(const smtrace_access_range* ranges, std::size_t n) noexcept {
    // The hull of the new ranges (lo = hi = 0: none). lo may wrap below 0
    // for a range starting under 15: the unsigned arithmetic still works.
    const uintptr_t new_lo = n == 0 ? 0 : ranges[0].lo - (k_max_small - 1);
    const uintptr_t new_hi = n == 0 ? 0 : ranges[n - 1].hi;
    std::atomic_ref<uintptr_t> lo(m_hull->lo), hi(m_hull->hi);
    // Widen first: every word only moves outwards, so any mix of old and
    // new words a reader sees covers the old ranges and, once both are
    // stored, the new ones, before the array holds them (the release fence
    // below orders these stores before the array's).
    if (n != 0) {
      const uintptr_t old_lo = lo.load(std::memory_order_relaxed), old_hi = hi.load(std::memory_order_relaxed);
      if (old_lo == old_hi) {  // was empty: {0, new_hi} covers the new ranges too
        hi.store(new_hi, std::memory_order_relaxed);
        lo.store(new_lo, std::memory_order_relaxed);
      } else {
        constexpr uintptr_t k_early = k_max_small - 1;
        lo.store(std::min(old_lo + k_early, new_lo + k_early) - k_early, std::memory_order_relaxed);
        hi.store(std::max(old_hi, new_hi), std::memory_order_relaxed);
      }
    }
    const uint64_t seq = m_seq.load(std::memory_order_relaxed);
    m_seq.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    // Coarsen to the capacity: group g covers ranges [g*n/cap, (g+1)*n/cap).
    const std::size_t groups = std::min(n, k_capacity);
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t from = g * n / groups, to = (g + 1) * n / groups;
      m_lo[g].store(ranges[from].lo, std::memory_order_relaxed);
      m_hi[g].store(ranges[to - 1].hi, std::memory_order_relaxed);
    }
    m_size.store(groups, std::memory_order_relaxed);
    m_seq.store(seq + 2, std::memory_order_release);
    // Narrow to the new hull: the array no longer holds what falls outside.
    lo.store(new_lo, std::memory_order_relaxed);
    hi.store(new_hi, std::memory_order_relaxed);
  }

  // Return the number of ranges in the array (after coarsening).
  std::size_t size() const noexcept { return m_size.load(std::memory_order_relaxed); }

 private:
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  static std::atomic_ref<uintptr_t> word(uintptr_t& w) noexcept { return std::atomic_ref<uintptr_t>(w); }

  smtrace_access_hull* m_hull;
  // The hull test's words, on their own cache line (unless `hull` was given).
  alignas(64) smtrace_access_hull m_own_hull = {0, 0};
  alignas(64) std::atomic<uint64_t> m_seq{0};
  std::atomic<std::size_t> m_size{0};
  std::atomic<uintptr_t> m_lo[k_capacity] = {};
  std::atomic<uintptr_t> m_hi[k_capacity] = {};
};

}  // namespace smtrace::tracer
