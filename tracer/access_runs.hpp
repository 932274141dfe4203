// Run-length merging of one thread's watched accesses, in the load/store
// runtime: a loop over window memory becomes one run (count blocks of size
// bytes, stride apart) instead of one event per iteration.
//
// A run is keyed by (kind, pc, size, shadow-stack depth, caller): the same
// instruction reached the same way. An access with a run's key continues it
// when it lands at first + count * stride; the second access of a run fixes
// the stride (0 for a repeated address, negative for a loop running down).
// An access with a run's key that does not continue it ends that run (it is
// emitted) and starts a new one.
//
// A thread keeps up to K runs open at once, so that interleaved streams
// (b[i] = a[i-1] + a[i+1]: two loads and a store per iteration) each merge;
// with all K open a new key evicts the run used least recently. Emitting
// runs out of order is harmless: every open run is flushed before the
// thread's next MPI event, so runs only move among accesses made between
// the same two MPI calls of one thread, which MPI does not order either.
//
// Thread safety: none; each thread owns its RunSet.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/access_abi.hpp"

namespace smtrace::tracer {

// Where an access comes from, beyond its instruction.
struct AccessOrigin {
  uint32_t depth = 0;     // shadow-stack depth
  uintptr_t caller = 0;   // innermost shadow-stack frame (0 without one)
};

template <std::size_t K>
class RunSet {
 public:
  static_assert(K > 0 && K <= 32);

  // Add an access of `size` bytes at `addr` by instruction `pc`. A run that
  // ends is passed to `emit(const smtrace_access_run&)`; a run that opens is
  // passed to `open(smtrace_access_run&)` to fill t_start and the stack.
  template <class Emit, class Open>
  void add(uint32_t kind, uintptr_t pc, uintptr_t addr, uint64_t size, const AccessOrigin& origin, Emit&& emit,
           Open&& open) {
    ++m_tick;
    std::size_t free_slot = K, oldest = K;
    for (std::size_t i = 0; i < K; ++i) {
      if (!(m_open & (1u << i))) {
        if (free_slot == K) free_slot = i;
        continue;
      }
      Slot& s = m_slots[i];
      if (s.run.pc == pc && s.run.kind == kind && s.run.size == size && s.origin.depth == origin.depth &&
          s.origin.caller == origin.caller) {
        s.used = m_tick;
        smtrace_access_run& r = s.run;
        if (r.count == 1) {
          r.stride = static_cast<int64_t>(addr - r.addr);
          r.count = 2;
          return;
        }
        if (addr == r.addr + static_cast<uintptr_t>(r.stride) * r.count) {
          ++r.count;
          return;
        }
        emit(static_cast<const smtrace_access_run&>(r));
        start(s, kind, pc, addr, size, origin, open);
        return;
      }
      if (oldest == K || s.used < m_slots[oldest].used) oldest = i;
    }
    if (free_slot == K) {
      emit(static_cast<const smtrace_access_run&>(m_slots[oldest].run));
      free_slot = oldest;
    }
    m_open |= 1u << free_slot;
    start(m_slots[free_slot], kind, pc, addr, size, origin, open);
  }

  // Pass every open run to `emit`, oldest first, and close them all.
  template <class Emit>
  void flush(Emit&& emit) {
    while (m_open) {
      std::size_t first = K;
      for (std::size_t i = 0; i < K; ++i)
        if ((m_open & (1u << i)) && (first == K || m_slots[i].opened < m_slots[first].opened)) first = i;
      m_open &= ~(1u << first);
      emit(static_cast<const smtrace_access_run&>(m_slots[first].run));
    }
  }

  // Return the number of open runs.
  std::size_t open_runs() const { return static_cast<std::size_t>(__builtin_popcount(m_open)); }

 private:
  struct Slot {
    smtrace_access_run run;
    AccessOrigin origin;
    uint64_t used = 0;    // tick of the last access (eviction)
    uint64_t opened = 0;  // tick of the first access (flush order)
  };

  template <class Open>
  void start(Slot& s, uint32_t kind, uintptr_t pc, uintptr_t addr, uint64_t size, const AccessOrigin& origin,
             Open& open) {
    s.run.kind = kind;
    s.run.pc = pc;
    s.run.addr = addr;
    s.run.size = size;
    s.run.count = 1;
    s.run.stride = 0;
    s.run.t_start = 0;
    s.run.depth = 0;
    s.origin = origin;
    s.used = s.opened = m_tick;
    open(s.run);
  }

  Slot m_slots[K];
  uint32_t m_open = 0;  // bit i: slot i holds an open run
  uint64_t m_tick = 0;
};

}  // namespace smtrace::tracer
