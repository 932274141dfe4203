// The watch set of load/store capture (tracer/watch.hpp): which buffers each
// call hands to MPI, who owns each watched range, and their union.
#include <doctest/doctest.h>

#include <vector>

#include "tracer/watch.hpp"

using namespace smtrace::tracer;
using smtrace::format::Call;
using smtrace::format::Event;

namespace {

constexpr uint32_t k_int = 1;     // a basic type of 4 bytes in these tests
constexpr uint32_t k_double = 2;  // 8 bytes
constexpr uint32_t k_vector = 64; // a derived type: 3 blocks of 4 bytes, 16 apart (extent 40)

TypeExtent fake_extent(uint32_t type) {
  switch (type) {
    case k_int: return {0, 4, 4, true};
    case k_double: return {0, 8, 8, true};
    case k_vector: return {0, 36, 40, true};
    default: return {};
  }
}

std::vector<Range> ranges_of(const Event& e, CommFacts comm = {0, 2}) {
  std::vector<Range> out;
  buffer_ranges(e, comm, fake_extent, out);
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::buffer_ranges::point_to_point_and_rma") {
  Event e;
  e.call = Call::Isend;
  e.buf = 0x10000;
  e.count = 10;
  e.datatype = k_int;
  CHECK(ranges_of(e) == std::vector<Range>{{0x10000, 0x10028}});

  SUBCASE("derived type: the hull, from the first byte to the last") {
    e.datatype = k_vector;
    e.count = 2;
    CHECK(ranges_of(e) == std::vector<Range>{{0x10000, 0x10000 + 40 + 36}});
  }
  SUBCASE("empty, NULL and unknown types are skipped") {
    e.count = 0;
    CHECK(ranges_of(e).empty());
    e.count = 4;
    e.buf = 8;
    CHECK(ranges_of(e).empty());
    e.buf = 0x10000;
    e.datatype = 99;
    CHECK(ranges_of(e).empty());
  }
  SUBCASE("a garbage count does not watch the address space") {
    e.count = int64_t{1} << 60;
    CHECK(ranges_of(e).empty());
  }
  SUBCASE("Get_accumulate: origin and result buffers") {
    e.call = Call::Get_accumulate;
    e.result_buf = 0x20000;
    e.result_count = 2;
    e.result_datatype = k_double;
    CHECK(ranges_of(e) == std::vector<Range>{{0x10000, 0x10028}, {0x20000, 0x20010}});
  }
  SUBCASE("Compare_and_swap: one element of each of three buffers") {
    e.call = Call::Compare_and_swap;
    e.compare_buf = 0x30000;
    e.result_buf = 0x20000;
    CHECK(ranges_of(e) == std::vector<Range>{{0x10000, 0x10004}, {0x30000, 0x30004}, {0x20000, 0x20004}});
  }
}

TEST_CASE("tracer::buffer_ranges::collectives") {
  Event e;
  e.buf = 0x10000;
  e.count = 4;
  e.datatype = k_int;
  e.recv_buf = 0x20000;
  e.recv_count = 4;
  e.recv_datatype = k_int;
  e.peer = 0;  // root

  SUBCASE("Ireduce: the receive buffer only at the root") {
    e.call = Call::Ireduce;
    CHECK(ranges_of(e, {0, 2}) == std::vector<Range>{{0x10000, 0x10010}, {0x20000, 0x20010}});
    CHECK(ranges_of(e, {1, 2}) == std::vector<Range>{{0x10000, 0x10010}});
    CHECK(ranges_of(e, {-1, 2}).size() == 2);  // rank unknown: both
  }
  SUBCASE("Iallreduce in place: the receive buffer only") {
    e.call = Call::Iallreduce;
    e.in_place = true;
    CHECK(ranges_of(e) == std::vector<Range>{{0x20000, 0x20010}});
  }
  SUBCASE("Igather: root receives one block per rank") {
    e.call = Call::Igather;
    CHECK(ranges_of(e, {0, 3}) == std::vector<Range>{{0x10000, 0x10010}, {0x20000, 0x20030}});
  }
  SUBCASE("Ialltoallv: per-peer blocks at their displacements") {
    e.call = Call::Ialltoallv;
    e.counts = {1, 2};
    e.displs = {0, 4};
    e.recv_counts = {1, 1};
    e.recv_displs = {2, 0};
    CHECK(ranges_of(e) == std::vector<Range>{
                              {0x10000, 0x10004}, {0x10010, 0x10018}, {0x20008, 0x2000c}, {0x20000, 0x20004}});
  }
  SUBCASE("Ialltoallw: byte displacements, a type per peer") {
    e.call = Call::Ialltoallw;
    e.counts = {1};
    e.displs = {8};
    e.datatypes = {k_double};
    e.recv_counts = {2};
    e.recv_displs = {4};
    e.recv_datatypes = {k_int};
    CHECK(ranges_of(e) == std::vector<Range>{{0x10008, 0x10010}, {0x20004, 0x2000c}});
  }
}

TEST_CASE("tracer::extent_of::runs") {
  smtrace::format::DatatypeDef def;
  def.extent = 40;
  def.runs = {{4, 4, 3, 12}, {0, 2, 1, 0}};  // bytes 4..8, 16..20, 28..32, and 0..2
  const TypeExtent t = extent_of(def);
  CHECK(t.known);
  CHECK(t.true_lb == 0);
  CHECK(t.true_ub == 32);
  CHECK(t.extent == 40);

  SUBCASE("negative stride") {
    def.runs = {{20, 4, 3, -8}};  // 20..24, 12..16, 4..8
    const TypeExtent n = extent_of(def);
    CHECK(n.true_lb == 4);
    CHECK(n.true_ub == 24);
  }
}

TEST_CASE("tracer::merge_ranges::touching_and_overlapping") {
  CHECK(merge_ranges({{30, 40}, {10, 20}, {20, 25}, {35, 50}, {60, 60}}) == std::vector<Range>{{10, 25}, {30, 50}});
  CHECK(merge_ranges({}).empty());
}

TEST_CASE("tracer::WatchSet::owners") {
  WatchSet w;
  w.window_memory(1, 0x1000, 0x100);
  CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}});

  SUBCASE("RMA origin buffers until their target's flush") {
    w.rma_started(1, 2, 0, {{0x8000, 0x8010}});
    w.rma_started(1, 3, 0, {{0x8010, 0x8020}});
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}, {0x8000, 0x8020}});
    w.rma_completed(1, 2);
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}, {0x8010, 0x8020}});
    w.rma_completed(2, std::nullopt);  // another window: nothing
    CHECK(w.owned() == 2);
    w.rma_completed(1, std::nullopt);
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}});
  }
  SUBCASE("request-based RMA completes by its request too") {
    w.rma_started(1, 2, 77, {{0x8000, 0x8010}});
    w.requests_completed({77});
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}});
  }
  SUBCASE("overlapping owners: a completion removes only its own") {
    w.request_started(5, {{0x1080, 0x1200}});
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1200}});
    w.requests_completed({5});
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}});
  }
  SUBCASE("persistent requests: watched while started") {
    w.persistent_defined(9, {{0x9000, 0x9040}});
    CHECK(w.owned() == 1);
    w.request_started(9, {});
    CHECK(w.ranges().size() == 2);
    w.requests_completed({9});
    CHECK(w.ranges().size() == 1);
    w.request_started(9, {});  // restarted: watched again
    CHECK(w.ranges().size() == 2);
    w.request_freed(9);
    CHECK(w.ranges().size() == 1);
    w.request_started(9, {});  // freed: unknown
    CHECK(w.ranges().size() == 1);
  }
  SUBCASE("an active send freed stays watched, once per range; a receive does not") {
    w.request_started(11, {{0x9000, 0x9040}}, true);
    w.request_started(12, {{0xa000, 0xa040}});
    w.request_freed(11);
    w.request_freed(12);
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}, {0x9000, 0x9040}});
    w.requests_completed({11});  // (the id handed out again): not that send
    CHECK(w.ranges().size() == 2);
    w.request_started(13, {{0x9000, 0x9040}}, true);  // the same buffer sent and freed again
    w.request_freed(13);
    CHECK(w.owned() == 2);
    w.persistent_defined(14, {{0xb000, 0xb010}}, true);
    w.request_started(14, {});
    w.request_freed(14);  // a started persistent send: the same
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}, {0x9000, 0x9040}, {0xb000, 0xb010}});
    w.window_free(0);
    CHECK(w.ranges().size() == 3);
  }
  SUBCASE("detach and free") {
    w.window_memory(2, 0x4000, 0x10);
    w.window_memory(2, 0x5000, 0x10);
    w.rma_started(2, 0, 0, {{0x8000, 0x8004}});
    w.window_detach(2, 0x4000);
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}, {0x5000, 0x5010}, {0x8000, 0x8004}});
    w.window_free(2);
    CHECK(w.ranges() == std::vector<Range>{{0x1000, 0x1100}});
  }
  SUBCASE("empty ranges are not owned") {
    w.window_memory(3, 0x7000, 0);
    CHECK(w.owned() == 1);
  }
}

TEST_SUITE_END();
