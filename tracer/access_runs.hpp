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
// The open runs' instructions sit in one compact array (m_pc, a cache line
// for K = 8), so that finding an access's run does not walk K slots of
// several hundred bytes each (a run holds its call stack).
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
    if (pc == 0) pc = 1;  // 0 marks a free slot
    ++m_tick;
    // The hot path: find the open run of this instruction through the
    // compact m_pc array (one cache line), then continue it.
    for (std::size_t i = 0; i < K; ++i) {
      if (m_pc[i] != pc) continue;
      Slot& s = m_slots[i];
      if (s.run.kind != kind || s.run.size != size || s.origin.depth != origin.depth ||
          s.origin.caller != origin.caller)
        continue;
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
      start(i, kind, pc, addr, size, origin, open);
      return;
    }
    // A new run: in a free slot, else in place of the least recently used.
    std::size_t slot = K;
    for (std::size_t i = 0; i < K && slot == K; ++i)
      if (m_pc[i] == 0) slot = i;
    if (slot == K) {
      slot = 0;
      for (std::size_t i = 1; i < K; ++i)
        if (m_slots[i].used < m_slots[slot].used) slot = i;
      emit(static_cast<const smtrace_access_run&>(m_slots[slot].run));
    }
    start(slot, kind, pc, addr, size, origin, open);
  }

  // Pass every open run to `emit`, oldest first, and close them all.
  template <class Emit>
  void flush(Emit&& emit) {
    for (;;) {
      std::size_t first = K;
      for (std::size_t i = 0; i < K; ++i)
        if (m_pc[i] != 0 && (first == K || m_slots[i].opened < m_slots[first].opened)) first = i;
      if (first == K) return;
      m_pc[first] = 0;
      emit(static_cast<const smtrace_access_run&>(m_slots[first].run));
    }
  }

  // Return the number of open runs.
  std::size_t open_runs() const {
    std::size_t n = 0;
    for (uintptr_t pc : m_pc) n += pc != 0;
    return n;
  }

 private:
  // The fields the hot path reads first, the frames (most of the run) last.
  struct Slot {
    AccessOrigin origin;
    uint64_t used = 0;    // tick of the last access (eviction)
    uint64_t opened = 0;  // tick of the first access (flush order)
    smtrace_access_run run;
  };

  template <class Open>
  void start(std::size_t i, uint32_t kind, uintptr_t pc, uintptr_t addr, uint64_t size, const AccessOrigin& origin,
             Open& open) {
    Slot& s = m_slots[i];
    m_pc[i] = pc;
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

  alignas(64) uintptr_t m_pc[K] = {};  // pc of slot i's open run; 0: slot i is free
  Slot m_slots[K];
  uint64_t m_tick = 0;
};

}  // namespace smtrace::tracer
