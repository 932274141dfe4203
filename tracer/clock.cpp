#include "tracer/clock.hpp"

#include <ctime>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace smtrace::tracer {

namespace {
constexpr int64_t k_calibration_ns = 200'000;  // first fit: 200 us
constexpr int64_t k_first_interval_ns = 1'000'000;
constexpr int64_t k_max_interval_ns = 1'000'000'000;

// Ticks in `ns` at 32.32 rate `rate` (ns per tick).
uint64_t ticks_in(int64_t ns, uint64_t rate) {
  return rate ? static_cast<uint64_t>((static_cast<Uint128>(ns) << 32) / rate) : 0;
}
}  // namespace

int64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t clock_rate(const ClockPoint& a, const ClockPoint& b) noexcept {
  if (b.tick <= a.tick || b.ns <= a.ns) return 0;
  auto ns = static_cast<Uint128>(b.ns - a.ns) << 32;
  return static_cast<uint64_t>(ns / (b.tick - a.tick));
}

ClockFit refit(const ClockFit& old, const ClockPoint& now, uint64_t rate, uint64_t horizon) noexcept {
  int64_t cont = old.at(now.tick);
  if (cont <= now.ns || horizon == 0) return ClockFit{now.tick, now.ns, rate};
  // Ahead: keep time continuous, slow down to meet CLOCK_MONOTONIC `horizon`
  // ticks from now: slope = rate - ahead / horizon, at least rate / 2.
  auto ahead = static_cast<Uint128>(cont - now.ns) << 32;
  auto slow = ahead / horizon;
  uint64_t mult = slow >= rate / 2 ? rate - rate / 2 : rate - static_cast<uint64_t>(slow);
  return ClockFit{now.tick, cont, mult};
}

bool Clock::counter_usable() noexcept {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1u;  // invariant TSC: constant rate, runs in all C-states
#elif defined(__aarch64__)
  return true;  // the generic timer runs at a constant frequency
#else
  return false;
#endif
}

ClockPoint Clock::read_point() noexcept {
  // The counter read before and after the clock: its midpoint stands for
  // the moment the clock was read.
  uint64_t before = ticks();
  int64_t ns = monotonic_ns();
  uint64_t after = ticks();
  return ClockPoint{before + (after - before) / 2, ns};
}

void Clock::start(Source wanted) noexcept {
  m_source.store(Source::monotonic, std::memory_order_relaxed);
  if (wanted != Source::counter || !counter_usable()) return;
  m_first = read_point();
  ClockPoint p;
  do {
    p = read_point();
  } while (p.ns - m_first.ns < k_calibration_ns);
  m_rate = clock_rate(m_first, p);
  if (m_rate == 0) return;  // the counter did not move: keep the vDSO clock
  m_interval = ticks_in(k_first_interval_ns, m_rate);
  m_tick0.store(p.tick, std::memory_order_relaxed);
  m_ns0.store(p.ns, std::memory_order_relaxed);
  m_mult.store(m_rate, std::memory_order_relaxed);
  m_refit_at.store(p.tick + m_interval, std::memory_order_relaxed);
  m_refits.store(0, std::memory_order_relaxed);
  m_seq.store(0, std::memory_order_release);
  m_source.store(Source::counter, std::memory_order_release);
}

int64_t Clock::refit_now(uint32_t seq) noexcept {
  // One thread refits; the others go on with the old fit meanwhile.
  if (!m_seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire)) return monotonic_ns();
  ClockFit old{m_tick0.load(std::memory_order_relaxed), m_ns0.load(std::memory_order_relaxed),
               m_mult.load(std::memory_order_relaxed)};
  ClockPoint p = read_point();
  if (uint64_t rate = clock_rate(m_first, p)) m_rate = rate;  // the long baseline since start
  if (m_interval < ticks_in(k_max_interval_ns, m_rate)) m_interval *= 2;
  ClockFit f = refit(old, p, m_rate, m_interval);
  m_tick0.store(f.tick0, std::memory_order_relaxed);
  m_ns0.store(f.ns0, std::memory_order_relaxed);
  m_mult.store(f.mult, std::memory_order_relaxed);
  m_refit_at.store(p.tick + m_interval, std::memory_order_relaxed);
  m_refits.fetch_add(1, std::memory_order_relaxed);
  m_seq.store(seq + 2, std::memory_order_release);
  return f.ns0;
}

double Clock::counter_hz() const noexcept {
  if (source() != Source::counter || m_rate == 0) return 0;
  return 1e9 * 4294967296.0 / static_cast<double>(m_rate);
}

}  // namespace smtrace::tracer
