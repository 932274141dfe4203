// Run-length merging of a thread's watched accesses (tracer/access_runs.hpp):
// loops become strided runs, interleaved streams merge side by side, the
// least recently used run is evicted, flush hands out runs oldest first.
#include <doctest/doctest.h>

#include <vector>

#include "tracer/access_runs.hpp"

using namespace smtrace::tracer;

namespace {

struct Sink {
  std::vector<smtrace_access_run> runs;
  int opened = 0;

  template <std::size_t K>
  void add(RunSet<K>& set, uint32_t kind, uintptr_t pc, uintptr_t addr, uint64_t size, AccessOrigin origin = {}) {
    set.add(
        kind, pc, addr, size, origin, [&](const smtrace_access_run& r) { runs.push_back(r); },
        [&](smtrace_access_run& r) {
          r.t_start = ++opened;
          r.depth = 0;
        });
  }
  template <std::size_t K>
  void flush(RunSet<K>& set) {
    set.flush([&](const smtrace_access_run& r) { runs.push_back(r); });
  }
};

constexpr uint32_t k_load = smtrace_access_load;
constexpr uint32_t k_store = smtrace_access_store;

}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::RunSet::strided_loops") {
  RunSet<4> set;
  Sink sink;
  SUBCASE("a forward loop is one run") {
    for (uintptr_t i = 0; i < 100; ++i) sink.add(set, k_store, 0x400, 0x1000 + i * 8, 8);
    CHECK(set.open_runs() == 1);
    sink.flush(set);
    REQUIRE(sink.runs.size() == 1);
    CHECK(sink.runs[0].kind == k_store);
    CHECK(sink.runs[0].addr == 0x1000);
    CHECK(sink.runs[0].count == 100);
    CHECK(sink.runs[0].stride == 8);
    CHECK(sink.runs[0].size == 8);
    CHECK(sink.runs[0].t_start == 1);
    CHECK(set.open_runs() == 0);
  }
  SUBCASE("a backward loop with gaps, and a repeated address") {
    for (int i = 9; i >= 0; --i) sink.add(set, k_load, 0x400, 0x1000 + static_cast<uintptr_t>(i) * 16, 4);
    for (int i = 0; i < 5; ++i) sink.add(set, k_load, 0x500, 0x2000, 4);
    sink.flush(set);
    REQUIRE(sink.runs.size() == 2);
    CHECK(sink.runs[0].addr == 0x1000 + 9 * 16);
    CHECK(sink.runs[0].count == 10);
    CHECK(sink.runs[0].stride == -16);
    CHECK(sink.runs[1].count == 5);
    CHECK(sink.runs[1].stride == 0);
  }
  SUBCASE("an access off the stride ends the run and starts the next") {
    for (uintptr_t i = 0; i < 3; ++i) sink.add(set, k_store, 0x400, 0x1000 + i * 4, 4);
    sink.add(set, k_store, 0x400, 0x5000, 4);
    sink.add(set, k_store, 0x400, 0x5004, 4);
    CHECK(sink.runs.size() == 1);
    CHECK(sink.runs[0].count == 3);
    sink.flush(set);
    REQUIRE(sink.runs.size() == 2);
    CHECK(sink.runs[1].addr == 0x5000);
    CHECK(sink.runs[1].count == 2);
  }
  SUBCASE("the key: size, kind, and where the instruction was reached from") {
    sink.add(set, k_store, 0x400, 0x1000, 4);
    sink.add(set, k_store, 0x400, 0x1004, 8);
    sink.add(set, k_load, 0x400, 0x1008, 4);
    sink.add(set, k_store, 0x400, 0x100c, 4, {1, 0x999});
    CHECK(set.open_runs() == 4);
    sink.flush(set);
    CHECK(sink.runs.size() == 4);
  }
}

TEST_CASE("tracer::RunSet::interleaved_streams") {
  // b[i] = a[i - 1] + a[i + 1]: two loads and a store per iteration.
  RunSet<4> set;
  Sink sink;
  for (uintptr_t i = 1; i < 50; ++i) {
    sink.add(set, k_load, 0x10, 0x1000 + (i - 1) * 8, 8);
    sink.add(set, k_load, 0x14, 0x1000 + (i + 1) * 8, 8);
    sink.add(set, k_store, 0x18, 0x8000 + i * 8, 8);
  }
  CHECK(sink.runs.empty());
  sink.flush(set);
  REQUIRE(sink.runs.size() == 3);
  CHECK(sink.runs[0].pc == 0x10);  // oldest first
  CHECK(sink.runs[1].pc == 0x14);
  CHECK(sink.runs[2].pc == 0x18);
  for (const smtrace_access_run& r : sink.runs) {
    CHECK(r.count == 49);
    CHECK(r.stride == 8);
  }
}

TEST_CASE("tracer::RunSet::eviction") {
  RunSet<2> set;
  Sink sink;
  sink.add(set, k_store, 0x1, 0x1000, 4);
  sink.add(set, k_store, 0x2, 0x2000, 4);
  sink.add(set, k_store, 0x1, 0x1004, 4);  // 0x1 used last
  sink.add(set, k_store, 0x3, 0x3000, 4);  // evicts 0x2
  REQUIRE(sink.runs.size() == 1);
  CHECK(sink.runs[0].pc == 0x2);
  sink.flush(set);
  REQUIRE(sink.runs.size() == 3);
  CHECK(sink.runs[1].pc == 0x1);
  CHECK(sink.runs[1].count == 2);
  CHECK(sink.runs[2].pc == 0x3);
}

TEST_SUITE_END();
