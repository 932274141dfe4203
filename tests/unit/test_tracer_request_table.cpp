#include <doctest/doctest.h>

#include "tracer/request_table.hpp"

using smtrace::tracer::RequestInfo;
using smtrace::tracer::RequestTable;

TEST_SUITE_BEGIN("tracer");

namespace {
RequestInfo info(uint64_t id) {
  RequestInfo r;
  r.id = id;
  return r;
}
}  // namespace

TEST_CASE("tracer::RequestTable::one handle value, several requests") {
  RequestTable t;
  const uintptr_t empty = 0x1000;  // the library's predefined completed request
  SUBCASE("distinct handles keep one request each") {
    t.add(0x2000, info(1));
    t.add(0x3000, info(2));
    CHECK_FALSE(t.shared());
    RequestInfo r;
    REQUIRE(t.find(0x3000, r));
    CHECK(r.id == 2);
    CHECK(t.remove(0x3000, 2));
    CHECK_FALSE(t.find(0x3000, r));
  }
  SUBCASE("the k-th listing of a value takes the k-th oldest request") {
    t.add(empty, info(1));
    t.add(empty, info(2));
    t.add(empty, info(3));
    CHECK(t.shared());
    RequestInfo r;
    REQUIRE(t.find(empty, r, 0));
    CHECK(r.id == 1);
    REQUIRE(t.find(empty, r, 2));
    CHECK(r.id == 3);
    CHECK_FALSE(t.find(empty, r, 3));
  }
  SUBCASE("completing the oldest promotes the next") {
    t.add(empty, info(1));
    t.add(empty, info(2));
    CHECK(t.remove(empty, 1));
    RequestInfo r;
    REQUIRE(t.find(empty, r));
    CHECK(r.id == 2);
    CHECK_FALSE(t.shared());
    CHECK(t.remove(empty, 2));
    CHECK_FALSE(t.find(empty, r));
  }
  SUBCASE("completing a newer one keeps the oldest") {
    t.add(empty, info(1));
    t.add(empty, info(2));
    t.add(empty, info(3));
    CHECK(t.remove(empty, 2));
    CHECK_FALSE(t.remove(empty, 2));
    RequestInfo r;
    REQUIRE(t.find(empty, r, 1));
    CHECK(r.id == 3);
  }
  SUBCASE("forget drops them all") {
    t.add(empty, info(1));
    t.add(empty, info(2));
    t.forget(empty);
    RequestInfo r;
    CHECK_FALSE(t.find(empty, r));
    CHECK_FALSE(t.find(empty, r, 1));
    CHECK_FALSE(t.shared());
  }
}

TEST_CASE("request table: a freed handle keeps its id until the value is made again") {
  RequestTable t;
  const uintptr_t h = 0x1234;
  uint64_t id = 0;
  t.add(h, info(7));
  CHECK_FALSE(t.freed(h, id));
  t.free(h, 7);
  RequestInfo r;
  CHECK_FALSE(t.find(h, r));
  REQUIRE(t.freed(h, id));  // a Wait on a copy of the freed handle names request 7
  CHECK(id == 7);
  SUBCASE("a new request of the value clears it") {
    t.add(h, info(8));
    CHECK_FALSE(t.freed(h, id));
    CHECK(t.remove(h, 8));
    CHECK_FALSE(t.freed(h, id));
  }
  SUBCASE("forget clears it") {
    t.forget(h);
    CHECK_FALSE(t.freed(h, id));
  }
  SUBCASE("freeing one of two requests of a value leaves the other outstanding") {
    t.add(h, info(9));
    t.add(h, info(10));
    t.free(h, 9);
    CHECK_FALSE(t.freed(h, id));
    REQUIRE(t.find(h, r));
    CHECK(r.id == 10);
  }
  SUBCASE("freeing a request that is not outstanding remembers nothing") {
    t.free(0x99, 3);
    CHECK_FALSE(t.freed(0x99, id));
  }
}

TEST_SUITE_END();
