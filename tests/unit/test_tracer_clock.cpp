#include <doctest/doctest.h>

#include <cstdint>

#include "tracer/clock.hpp"

namespace tr = smtrace::tracer;

namespace {
constexpr uint64_t k_one = uint64_t{1} << 32;  // 1 ns per tick in 32.32
}

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::ClockFit::at") {
  SUBCASE("one ns per tick") {
    tr::ClockFit f{1000, 5000, k_one};
    CHECK(f.at(1000) == 5000);
    CHECK(f.at(1500) == 5500);
  }
  SUBCASE("a 3 GHz counter") {
    tr::ClockFit f{0, 0, k_one / 3};
    CHECK(f.at(3'000'000'000ull) == doctest::Approx(1'000'000'000).epsilon(1e-8));
  }
  SUBCASE("ticks before tick0 give times before ns0") {
    tr::ClockFit f{1000, 5000, k_one / 2};
    CHECK(f.at(900) == 4950);
  }
  SUBCASE("a day of ticks does not overflow") {
    tr::ClockFit f{0, 0, k_one / 4};  // 4 GHz
    uint64_t day = 4'000'000'000ull * 86400;
    CHECK(f.at(day) == doctest::Approx(86400e9).epsilon(1e-9));
  }
}

TEST_CASE("tracer::clock_rate") {
  CHECK(tr::clock_rate({0, 0}, {3000, 1000}) == k_one / 3);
  CHECK(tr::clock_rate({100, 50}, {300, 450}) == 2 * k_one);
  CHECK(tr::clock_rate({100, 50}, {100, 450}) == 0);  // the counter did not move
  CHECK(tr::clock_rate({100, 50}, {300, 50}) == 0);
}

TEST_CASE("tracer::refit") {
  const uint64_t rate = k_one;  // measured: 1 ns per tick
  SUBCASE("behind: jump to the reading") {
    tr::ClockFit old{0, 0, k_one / 2};  // too slow: at tick 1000 it says 500
    tr::ClockFit f = tr::refit(old, {1000, 1000}, rate, 1000);
    CHECK(f.tick0 == 1000);
    CHECK(f.ns0 == 1000);
    CHECK(f.mult == rate);
  }
  SUBCASE("ahead: continuous, meets the reference after the horizon") {
    tr::ClockFit old{0, 0, 2 * k_one};  // too fast: at tick 1000 it says 2000
    tr::ClockFit f = tr::refit(old, {1000, 1900}, rate, 1000);
    CHECK(f.ns0 == 2000);  // time never goes back
    CHECK(f.at(1000) == old.at(1000));
    CHECK(f.at(2000) == 2900);  // reference: 1900 + 1000
    CHECK(f.mult < rate);
  }
  SUBCASE("far ahead: slowed to half the rate, never stopped") {
    tr::ClockFit old{0, 0, 10 * k_one};
    tr::ClockFit f = tr::refit(old, {1000, 1000}, rate, 100);
    CHECK(f.ns0 == 10000);
    CHECK(f.mult == rate / 2);
    CHECK(f.at(1100) > f.at(1000));
  }
}

TEST_CASE("tracer::Clock::now") {
  tr::Clock clock;
  SUBCASE("monotonic source") {
    clock.start(tr::Clock::Source::monotonic);
    CHECK(clock.source() == tr::Clock::Source::monotonic);
    CHECK(clock.counter_hz() == 0);
    int64_t a = clock.now();
    CHECK(clock.now() >= a);
  }
  SUBCASE("counter source stays near CLOCK_MONOTONIC and never goes back") {
    clock.start(tr::Clock::Source::counter);
    if (!tr::Clock::counter_usable()) {
      CHECK(clock.source() == tr::Clock::Source::monotonic);
      return;
    }
    REQUIRE(clock.source() == tr::Clock::Source::counter);
    MESSAGE("counter at " << clock.counter_hz() / 1e6 << " MHz");
    int64_t start = tr::monotonic_ns(), last = clock.now(), worst = 0;
    while (tr::monotonic_ns() - start < 40'000'000) {  // 40 ms: refits after 1, 3, 7, 15, 31 ms
      int64_t before = tr::monotonic_ns();
      int64_t t = clock.now();
      int64_t after = tr::monotonic_ns();
      REQUIRE(t >= last);
      last = t;
      // Outside [before, after] by how much (a preemption between the reads
      // widens the window rather than failing the test).
      int64_t off = t < before ? before - t : t > after ? t - after : 0;
      if (off > worst) worst = off;
    }
    MESSAGE("largest difference to CLOCK_MONOTONIC: " << worst << " ns, refits: " << clock.refits());
    CHECK(clock.refits() >= 3);
    // Within 50 us on a quiet machine; a calibration sample preempted on a
    // loaded CI runner (seen: 1.4 ms with 5 jobs on 2 cores) must not fail
    // the suite, but a broken fit (seconds off) must.
    WARN(worst < 50'000);
    CHECK(worst < 20'000'000);
  }
}

TEST_SUITE_END();
