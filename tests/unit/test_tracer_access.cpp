// The tracer's side of load/store capture (tracer/access.hpp) against a fake
// runtime: what each traced call adds to or removes from the watch set, and
// what is published to the runtime.
#include <doctest/doctest.h>

#include <vector>

#include "tracer/access.hpp"

using namespace smtrace::tracer;
using smtrace::format::Call;
using smtrace::format::Event;

namespace {

// The fake runtime: remembers the last published ranges and the tracer.
struct Fake {
  std::vector<Range> published;
  int publishes = 0;
  const smtrace_access_tracer* tracer = nullptr;
};
Fake g_fake;

const smtrace_access_runtime_api k_fake_api = {
    k_smtrace_access_abi,
    [](const smtrace_access_tracer* t) { g_fake.tracer = t; },
    [](const smtrace_access_range* r, size_t n) {
      g_fake.published.clear();
      for (size_t i = 0; i < n; ++i) g_fake.published.push_back({r[i].lo, r[i].hi});
      ++g_fake.publishes;
    },
    [](void (*)(const smtrace_access_run*, void*), void*) {},
    [](uintptr_t*, size_t) -> size_t { return 0; },
    [](uint64_t) {},
    [](void (*)(const smtrace_access_run*, uint64_t, void*), void*) -> uint32_t { return 0; },
};

TypeExtent int_extent(uint32_t) { return {0, 4, 4, true}; }

void after(const Event& e) { access::after_call(e, CommFacts{0, 2}, int_extent); }

Event call(Call c, uint32_t window = 0) {
  Event e;
  e.call = c;
  e.window = window;
  return e;
}

// A one-sided operation on window 1: `count` ints at `buf` to `target`.
Event rma(Call c, int32_t target, uint64_t buf, int64_t count) {
  Event e = call(c, 1);
  e.peer = target;
  e.buf = buf;
  e.count = count;
  e.datatype = 1;
  return e;
}

}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::access::watch_set_through_calls") {
  g_fake = {};
  REQUIRE(access::attach_to(&k_fake_api, 8));
  CHECK(access::attached());
  REQUIRE(g_fake.tracer != nullptr);
  CHECK(g_fake.tracer->frames == 8);
  CHECK(g_fake.published.empty());

  Event win = call(Call::Win_create, 1);
  win.win_base = 0x10000;
  win.win_size = 0x100;
  after(win);
  CHECK(g_fake.published == std::vector<Range>{{0x10000, 0x10100}});

  SUBCASE("Put: the origin buffer until the target's flush") {
    Event put = rma(Call::Put, 1, 0x20000, 4);
    after(put);
    CHECK(g_fake.published == std::vector<Range>{{0x10000, 0x10100}, {0x20000, 0x20010}});
    Event flush = call(Call::Win_flush, 1);
    flush.peer = 0;  // another target: still pending
    after(flush);
    CHECK(g_fake.published.size() == 2);
    flush.peer = 1;
    after(flush);
    CHECK(g_fake.published == std::vector<Range>{{0x10000, 0x10100}});

    SUBCASE("to MPI_PROC_NULL: nothing") {
      put.peer = smtrace::format::k_proc_null;
      after(put);
      CHECK(g_fake.published.size() == 1);
    }
  }
  SUBCASE("fence completes every target") {
    after(rma(Call::Get, 0, 0x20000, 1));
    CHECK(g_fake.published.size() == 2);
    after(call(Call::Win_fence, 1));
    CHECK(g_fake.published.size() == 1);
  }
  SUBCASE("Isend until Wait completes its request") {
    Event isend = call(Call::Isend);
    isend.buf = 0x30000;
    isend.count = 2;
    isend.request = 42;
    after(isend);
    CHECK(g_fake.published.size() == 2);
    const int before = g_fake.publishes;
    after(call(Call::Barrier));  // changes nothing: not published
    CHECK(g_fake.publishes == before);
    Event wait = call(Call::Wait);
    wait.completed.push_back({0, 42, {}});
    after(wait);
    CHECK(g_fake.published.size() == 1);
  }
  SUBCASE("Win_free") {
    after(call(Call::Win_free, 1));
    CHECK(g_fake.published.empty());
  }

  access::detach();
  CHECK_FALSE(access::attached());
  CHECK(g_fake.tracer == nullptr);
  CHECK(g_fake.published.empty());
  after(win);  // detached: ignored
  CHECK(g_fake.published.empty());
}

TEST_CASE("tracer::access::abi_mismatch") {
  smtrace_access_runtime_api other = k_fake_api;
  other.abi = k_smtrace_access_abi + 1;
  CHECK_FALSE(access::attach_to(&other, 8));
  CHECK_FALSE(access::attached());
  CHECK_FALSE(access::attach_to(nullptr, 8));
}

TEST_SUITE_END();
