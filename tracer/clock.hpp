// Clock: CLOCK_MONOTONIC nanoseconds, read from the CPU's cycle counter (TSC
// on x86-64, CNTVCT on aarch64) where it runs at a constant rate, so that the
// hot path reads no vDSO clock (about 25-45 ns under KVM) but one counter.
//
// Ticks become ns by a linear fit (ClockFit) against CLOCK_MONOTONIC, taken
// at start and refitted from time to time (after 1 ms, then at doubling
// intervals up to every second) on the long baseline since start, so that
// the rate error shrinks as the run goes on. A refit never moves time
// backwards: when the fit is ahead of CLOCK_MONOTONIC it slows down until the
// next refit to catch up; when it is behind it jumps forward. Times in the
// trace thus stay CLOCK_MONOTONIC ns (the format does not change), off by at
// most a few hundred ns early in a run and well below that later.
//
// Thread safety: now() is thread safe and lock free (a seqlock over the fit;
// one thread refits, the others keep the old fit meanwhile). start() is not:
// call it before other threads read the clock. now() is not async-signal
// safe while the same thread refits: signal handlers use monotonic_ns().
#pragma once

#include <atomic>
#include <cstdint>

namespace smtrace::tracer {

// 128-bit products keep tick * rate exact (GCC and Clang on 64-bit targets).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

// Return CLOCK_MONOTONIC in ns (vDSO).
int64_t monotonic_ns() noexcept;

// One reading of both clocks.
struct ClockPoint {
  uint64_t tick = 0;
  int64_t ns = 0;
};

// ns = ns0 + (tick - tick0) * mult / 2^32: a line through (tick0, ns0).
struct ClockFit {
  uint64_t tick0 = 0;
  int64_t ns0 = 0;
  uint64_t mult = 0;  // ns per tick, 32.32 fixed point

  // Return the ns of `tick` (ticks before tick0, as on a core whose counter
  // is a little behind, give times before ns0).
  int64_t at(uint64_t tick) const noexcept {
    auto delta = static_cast<Int128>(static_cast<int64_t>(tick - tick0));
    return ns0 + static_cast<int64_t>((delta * static_cast<Int128>(mult)) >> 32);
  }
};

// Return the 32.32 ns-per-tick rate between `a` and `b` (b later); 0 when
// `b` is not after `a` on both clocks.
uint64_t clock_rate(const ClockPoint& a, const ClockPoint& b) noexcept;

// Return the fit to use from reading `now` on: continuous with `old` at
// now.tick when `old` is ahead of now.ns (at a rate slowed so that it meets
// CLOCK_MONOTONIC after `horizon` more ticks, never below half of `rate`),
// through `now` when `old` is behind; `rate` is the measured 32.32 rate.
ClockFit refit(const ClockFit& old, const ClockPoint& now, uint64_t rate, uint64_t horizon) noexcept;

class Clock {
 public:
  enum class Source { monotonic, counter };

  // Return true when this CPU has a cycle counter at a constant rate
  // (x86-64: invariant TSC in CPUID; aarch64: always).
  static bool counter_usable() noexcept;
  // Return the cycle counter. Inline: the hot path reads it twice per call,
  // and a call around the read added a few ns to each.
  static uint64_t ticks() noexcept {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    asm volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return static_cast<uint64_t>(monotonic_ns());
#endif
  }

  // Use `wanted` (falling back to monotonic when the counter is not usable);
  // with the counter, calibrate against CLOCK_MONOTONIC for about 200 us.
  void start(Source wanted) noexcept;
  // Return CLOCK_MONOTONIC ns.
  int64_t now() noexcept {
    if (m_source.load(std::memory_order_relaxed) != Source::counter) return monotonic_ns();
    uint64_t tick = ticks();
    uint32_t s = m_seq.load(std::memory_order_acquire);
    ClockFit f{m_tick0.load(std::memory_order_relaxed), m_ns0.load(std::memory_order_relaxed),
               m_mult.load(std::memory_order_relaxed)};
    uint64_t refit_at = m_refit_at.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((s & 1) || m_seq.load(std::memory_order_relaxed) != s) return monotonic_ns();  // being refitted
    if (static_cast<int64_t>(tick - refit_at) >= 0) return refit_now(s);
    return f.at(tick);
  }
  // Return the source in use.
  Source source() const noexcept { return m_source.load(std::memory_order_relaxed); }
  // Return the counter's measured rate in Hz (0 with the monotonic source).
  double counter_hz() const noexcept;
  // Return the number of refits so far.
  uint32_t refits() const noexcept { return m_refits.load(std::memory_order_relaxed); }

 private:
  static ClockPoint read_point() noexcept;
  int64_t refit_now(uint32_t seq) noexcept;

  std::atomic<Source> m_source{Source::monotonic};
  std::atomic<uint32_t> m_seq{0};  // odd while a refit writes the fit
  std::atomic<uint64_t> m_tick0{0};
  std::atomic<int64_t> m_ns0{0};
  std::atomic<uint64_t> m_mult{0};
  std::atomic<uint64_t> m_refit_at{0};  // tick of the next refit
  std::atomic<uint32_t> m_refits{0};
  ClockPoint m_first;       // the calibration's first reading
  uint64_t m_interval = 0;  // ticks between refits, doubling up to about 1 s
  uint64_t m_rate = 0;
};

}  // namespace smtrace::tracer
