// Datatype flattening without MPI: footprints as compact runs, signatures,
// size, lb and extent, for each constructor and nested ones.
#include <doctest/doctest.h>

#include "tracer/flatten.hpp"

using smtrace::format::DatatypeDef;
using smtrace::format::Run;
using smtrace::format::TypeCount;
using namespace smtrace::tracer;

namespace {

constexpr uint32_t k_int = 7, k_double = 14;
const DatatypeDef g_int = basic_type_def(k_int, 4);
const DatatypeDef g_double = basic_type_def(k_double, 8);

DatatypeDef make(Combiner c, std::vector<int64_t> ints, std::vector<int64_t> addrs,
                 std::vector<const DatatypeDef*> children, std::size_t max_runs = k_max_runs) {
  TypeDescription d;
  d.combiner = c;
  d.ints = std::move(ints);
  d.addrs = std::move(addrs);
  d.children = std::move(children);
  return flatten(d, max_runs);
}

}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::flatten::contiguous") {
  auto t = make(Combiner::contiguous, {3}, {}, {&g_int});
  CHECK(t.runs == std::vector<Run>{{0, 12, 1, 0}});
  CHECK(t.size == 12);
  CHECK(t.lb == 0);
  CHECK(t.extent == 12);
  CHECK(t.signature == std::vector<TypeCount>{{k_int, 3}});
  CHECK_FALSE(t.truncated);
}

TEST_CASE("tracer::flatten::vector") {
  SUBCASE("1000 blocks are one strided run") {
    auto t = make(Combiner::vector, {1000, 1, 4}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{0, 4, 1000, 16}});
    CHECK(t.size == 4000);
    CHECK(t.extent == 999 * 16 + 4);
    CHECK(t.signature == std::vector<TypeCount>{{k_int, 1000}});
  }
  SUBCASE("blocks of two") {
    auto t = make(Combiner::vector, {3, 2, 4}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{0, 8, 3, 16}});
    CHECK(t.extent == 40);
  }
  SUBCASE("stride equal to the block is contiguous") {
    auto t = make(Combiner::vector, {4, 4, 4}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{0, 64, 1, 0}});
  }
  SUBCASE("hvector with a byte stride") {
    auto t = make(Combiner::hvector, {5, 1}, {24}, {&g_double});
    CHECK(t.runs == std::vector<Run>{{0, 8, 5, 24}});
    CHECK(t.extent == 4 * 24 + 8);
  }
}

TEST_CASE("tracer::flatten::indexed") {
  SUBCASE("irregular blocks") {
    auto t = make(Combiner::indexed, {2, 1, 2, 0, 3}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{0, 4, 1, 0}, {12, 8, 1, 0}});
    CHECK(t.size == 12);
    CHECK(t.extent == 20);
  }
  SUBCASE("equal blocks at a constant distance become one strided run") {
    auto t = make(Combiner::indexed_block, {3, 1, 0, 2, 4}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{0, 4, 3, 8}});
  }
  SUBCASE("hindexed, out of order") {
    auto t = make(Combiner::hindexed, {2, 1, 1}, {16, 0}, {&g_double});
    CHECK(t.runs == std::vector<Run>{{0, 8, 2, 16}});
    CHECK(t.lb == 0);
    CHECK(t.extent == 24);
  }
}

TEST_CASE("tracer::flatten::struct") {
  auto t = make(Combiner::structure, {2, 1, 1}, {0, 8}, {&g_int, &g_double});
  CHECK(t.runs == std::vector<Run>{{0, 4, 1, 0}, {8, 8, 1, 0}});
  CHECK(t.size == 12);
  CHECK(t.extent == 16);
  CHECK(t.signature == std::vector<TypeCount>{{k_int, 1}, {k_double, 1}});
}

TEST_CASE("tracer::flatten::subarray") {
  SUBCASE("C order") {
    // 4 x 6 ints, the 2 x 3 block at (1, 2): rows of 3 ints, 6 ints apart.
    auto t = make(Combiner::subarray, {2, 4, 6, 2, 3, 1, 2, 0}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{(6 + 2) * 4, 12, 2, 24}});
    CHECK(t.size == 24);
    CHECK(t.lb == 0);
    CHECK(t.extent == 96);
  }
  SUBCASE("Fortran order") {
    auto t = make(Combiner::subarray, {2, 4, 6, 2, 3, 1, 2, 1}, {}, {&g_int});
    CHECK(t.runs == std::vector<Run>{{(1 + 4 * 2) * 4, 8, 3, 16}});
    CHECK(t.extent == 96);
  }
}

TEST_CASE("tracer::flatten::resized") {
  auto r = make(Combiner::resized, {}, {0, 16}, {&g_int});
  CHECK(r.runs == std::vector<Run>{{0, 4, 1, 0}});
  CHECK(r.extent == 16);
  auto c = make(Combiner::contiguous, {10}, {}, {&r});
  CHECK(c.runs == std::vector<Run>{{0, 4, 10, 16}});
  CHECK(c.extent == 160);
}

TEST_CASE("tracer::flatten::nested") {
  auto inner = make(Combiner::vector, {3, 1, 2}, {}, {&g_int});  // {0,4,3,8}, extent 20
  REQUIRE(inner.runs == std::vector<Run>{{0, 4, 3, 8}});
  SUBCASE("vector of vectors: one run per copy") {
    auto t = make(Combiner::vector, {2, 1, 2}, {}, {&inner});
    CHECK(t.runs == std::vector<Run>{{0, 4, 3, 8}, {40, 4, 3, 8}});
    CHECK(t.size == 24);
    CHECK(t.extent == 60);
    CHECK(t.signature == std::vector<TypeCount>{{k_int, 6}});
  }
  SUBCASE("a stride that continues the inner one stays one run") {
    auto resized = make(Combiner::resized, {}, {0, 24}, {&inner});
    auto t = make(Combiner::contiguous, {5}, {}, {&resized});
    CHECK(t.runs == std::vector<Run>{{0, 4, 15, 8}});
  }
  SUBCASE("struct of a vector and a double") {
    auto t = make(Combiner::structure, {2, 1, 1}, {0, 64}, {&inner, &g_double});
    CHECK(t.runs == std::vector<Run>{{0, 4, 3, 8}, {64, 8, 1, 0}});
    CHECK(t.signature == std::vector<TypeCount>{{k_int, 3}, {k_double, 1}});
  }
}

TEST_CASE("tracer::flatten::truncated") {
  std::vector<int64_t> ints = {200};
  for (int i = 0; i < 200; ++i) ints.push_back(1 + i % 3);       // block lengths
  for (int i = 0; i < 200; ++i) ints.push_back(i * i % 7 + i * 9);  // irregular displacements
  auto t = make(Combiner::indexed, ints, {}, {&g_int}, 16);
  CHECK(t.truncated);
  REQUIRE(t.runs.size() == 1);
  CHECK(t.runs[0].offset == t.lb);
  CHECK(t.runs[0].length == static_cast<uint64_t>(t.extent));
}

TEST_CASE("tracer::flatten::compact") {
  std::vector<Run> runs = {{8, 4, 1, 0}, {0, 4, 1, 0}, {4, 4, 1, 0}, {20, 2, 1, 0}, {30, 2, 1, 0}, {40, 2, 1, 0}};
  compact(runs);
  CHECK(runs == std::vector<Run>{{0, 12, 1, 0}, {20, 2, 3, 10}});
}

TEST_SUITE_END();
