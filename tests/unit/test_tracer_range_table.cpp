// The load/store runtime's table of watched ranges (tracer/range_table.hpp):
// the hull test, the exact test, coarsening past the capacity, and readers
// racing a publishing thread.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "tracer/range_table.hpp"

using namespace smtrace::tracer;

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::RangeTable::near_and_intersects") {
  auto table = std::make_unique<RangeTable>();
  CHECK_FALSE(table->near(0));
  CHECK_FALSE(table->near(0x1000));
  CHECK_FALSE(table->near(0x1000, 64));
  CHECK_FALSE(table->intersects(0, ~uintptr_t{0}));

  const std::vector<smtrace_access_range> ranges = {{0x1000, 0x1100}, {0x3000, 0x3008}};
  table->publish(ranges.data(), ranges.size());
  CHECK(table->size() == 2);

  SUBCASE("the hull covers every access that may touch a range") {
    CHECK(table->near(0x1000));
    CHECK(table->near(0x1000 - 15));  // a 16-byte access ending in the range
    CHECK_FALSE(table->near(0x1000 - 16));
    CHECK(table->near(0x2000));  // between ranges: near, not in
    CHECK(table->near(0x3007));
    CHECK_FALSE(table->near(0x3008));
    CHECK(table->near(0x0f00, 0x101));  // a long range reaching in
    CHECK_FALSE(table->near(0x0f00, 0x100));
    CHECK_FALSE(table->near(0x3008, 1 << 20));
  }
  SUBCASE("the exact test") {
    CHECK(table->intersects(0x1000, 0x1001));
    CHECK(table->intersects(0x10ff, 0x1100));
    CHECK_FALSE(table->intersects(0x1100, 0x1104));
    CHECK_FALSE(table->intersects(0x0ffc, 0x1000));
    CHECK(table->intersects(0x0ffc, 0x1001));
    CHECK_FALSE(table->intersects(0x2000, 0x2008));
    CHECK(table->intersects(0x2000, 0x4000));
    CHECK(table->intersects(0x3004, 0x300c));
  }
  SUBCASE("publishing nothing empties the table") {
    table->publish(nullptr, 0);
    CHECK(table->size() == 0);
    CHECK_FALSE(table->near(0x1000));
    CHECK_FALSE(table->intersects(0x1000, 0x1001));
  }
}

// The exported hull (smtrace_access_hull) that compiled-in tests read: its
// words as access_abi.hpp defines them, and every hull a reader can see
// while a publish moves the ranges covers the old ranges and the new ones.
TEST_CASE("tracer::RangeTable::external_hull") {
  smtrace_access_hull hull = {0, 0};
  auto table = std::make_unique<RangeTable>(&hull);
  const smtrace_access_range a = {0x100000, 0x100100}, b = {0x900000, 0x900010};
  table->publish(&a, 1);
  CHECK(hull.lo == a.lo - 15);
  CHECK(hull.hi == a.hi);
  CHECK(table->near(a.lo));
  // Inline test of code built by the plugin: addr - lo < hi - lo.
  CHECK(a.lo - hull.lo < hull.hi - hull.lo);
  CHECK_FALSE(b.lo - hull.lo < hull.hi - hull.lo);

  // A reader racing publish(b): whatever pair of words it reads covers a
  // (the old ranges) before the array changes, and b after both moved.
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!stop.load()) {
      const uintptr_t lo = std::atomic_ref<uintptr_t>(hull.lo).load(std::memory_order_relaxed);
      const uintptr_t hi = std::atomic_ref<uintptr_t>(hull.hi).load(std::memory_order_relaxed);
      const bool covers_a = a.lo - lo < hi - lo && a.hi - 1 - lo < hi - lo;
      const bool covers_b = b.lo - lo < hi - lo && b.hi - 1 - lo < hi - lo;
      if (!covers_a && !covers_b && lo != hi) torn.fetch_add(1);
    }
  });
  for (int i = 0; i < 2000; ++i) {
    table->publish(&b, 1);
    table->publish(&a, 1);
  }
  stop.store(true);
  reader.join();
  CHECK(torn.load() == 0);
  table->publish(&b, 1);
  CHECK(hull.lo == b.lo - 15);
  CHECK(hull.hi == b.hi);
  table->publish(nullptr, 0);
  CHECK(hull.lo == 0);
  CHECK(hull.hi == 0);
  CHECK_FALSE(table->near(b.lo));
}

TEST_CASE("tracer::RangeTable::coarsening") {
  auto table = std::make_unique<RangeTable>();
  std::vector<smtrace_access_range> ranges;
  for (uintptr_t i = 0; i < 3 * RangeTable::k_capacity; ++i) ranges.push_back({0x100000 + i * 64, 0x100000 + i * 64 + 8});
  table->publish(ranges.data(), ranges.size());
  CHECK(table->size() == RangeTable::k_capacity);
  // A superset: every range is still found, and some gaps are covered.
  for (const smtrace_access_range& r : ranges) CHECK(table->intersects(r.lo, r.hi));
  CHECK(table->intersects(ranges[0].hi, ranges[1].lo));
  CHECK_FALSE(table->intersects(ranges.back().hi, ranges.back().hi + 8));
}

TEST_CASE("tracer::RangeTable::readers_never_see_a_torn_table") {
  // The writer flips between two sets that both contain [0x1000, 0x1010);
  // readers must always find it, and never find the address between.
  auto table = std::make_unique<RangeTable>();
  std::vector<smtrace_access_range> a, b;
  a.push_back({0x1000, 0x1010});
  for (uintptr_t i = 0; i < 200; ++i) b.push_back({0x800 + i * 0x10, 0x808 + i * 0x10});  // holds [0x1000, 0x1008)
  b.push_back({0x100000, 0x100010});
  table->publish(a.data(), a.size());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!stop.load()) {
      if (!table->intersects(0x1000, 0x1004)) bad.fetch_add(1);
      if (table->intersects(0x2000, 0x2004)) bad.fetch_add(1);
    }
  });
  for (int i = 0; i < 20000; ++i) {
    const auto& set = (i & 1) ? b : a;
    table->publish(set.data(), set.size());
  }
  stop.store(true);
  reader.join();
  CHECK(bad.load() == 0);
}

TEST_SUITE_END();
