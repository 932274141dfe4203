// The watched ranges as the load/store runtime's hot path reads them: a
// fixed array of sorted, disjoint ranges behind a sequence lock, plus their
// hull in two words.
//
// Every instrumented access first tests its address against the hull (two
// relaxed loads, a subtraction and a compare: the whole cost while the
// access is outside every watched range's hull); only a hit searches the
// array. Writers (the tracer's MPI wrappers, serialized by the tracer) bump
// the sequence to odd, rewrite the array, bump it to even and then move the
// hull; readers retry while the sequence is odd or changed under them, so
// they never block and never see a torn array, and nothing is ever freed
// under them (the array is static).
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
  static constexpr std::size_t k_capacity = 1024;
  // Accesses of up to this many bytes take the one-compare hull test.
  static constexpr uintptr_t k_max_small = 16;

  // Return true when an access of at most k_max_small bytes at `addr` may
  // touch a watched range (the hull test; exact test: intersects()).
  bool near(uintptr_t addr) const noexcept {
    return addr - m_base.load(std::memory_order_relaxed) < m_span.load(std::memory_order_relaxed);
  }
  // Return true when [addr, addr + size) may touch the hull.
  bool near(uintptr_t addr, std::size_t size) const noexcept {
    const uintptr_t base = m_base.load(std::memory_order_relaxed);
    const uintptr_t span = m_span.load(std::memory_order_relaxed);
    if (span == 0) return false;
    const uintptr_t lo = base + k_max_small - 1, hi = base + span;
    return addr < hi && addr + size > lo;
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
    if (n == 0) {
      m_span.store(0, std::memory_order_relaxed);
      m_base.store(0, std::memory_order_relaxed);
    } else {
      // base may wrap below 0 for a range starting under 15: the unsigned
      // subtraction in near() still works.
      const uintptr_t base = ranges[0].lo - (k_max_small - 1);
      m_base.store(base, std::memory_order_relaxed);
      m_span.store(ranges[n - 1].hi - base, std::memory_order_relaxed);
    }
  }

  // Return the number of ranges in the array (after coarsening).
  std::size_t size() const noexcept { return m_size.load(std::memory_order_relaxed); }

 private:
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  // The hull test's words first, on their own cache line.
  alignas(64) std::atomic<uintptr_t> m_base{0};
  std::atomic<uintptr_t> m_span{0};
  alignas(64) std::atomic<uint64_t> m_seq{0};
  std::atomic<std::size_t> m_size{0};
  std::atomic<uintptr_t> m_lo[k_capacity] = {};
  std::atomic<uintptr_t> m_hi[k_capacity] = {};
};

}  // namespace smtrace::tracer
