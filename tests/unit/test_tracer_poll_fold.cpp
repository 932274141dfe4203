// Poll folding: identical unsuccessful polls fold into one summary event.
#include <doctest/doctest.h>

#include "tracer/poll_fold.hpp"

using smtrace::format::Call;
using smtrace::format::Event;
using namespace smtrace::tracer;

namespace {
Event poll(int64_t t, uint64_t request = 1, uint32_t site = 3) {
  Event e;
  e.call = Call::Test;
  e.site = site;
  e.t_start = t;
  e.duration = 5;
  e.requests = {request};
  e.flag = false;
  return e;
}
}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::poll_fold::folds_identical_polls") {
  PollFolder f;
  Event first = poll(100);
  CHECK_FALSE(f.fold(first, poll_key(first)));  // no run yet: the caller writes it
  f.start(first, poll_key(first));
  for (int i = 1; i <= 1000; ++i) {
    Event p = poll(100 + 10 * i);
    CHECK(f.fold(p, poll_key(p)));
  }
  Event summary;
  REQUIRE(f.take_summary(summary));
  CHECK(summary.repeat == 1000);
  CHECK(summary.t_start == 110);
  CHECK(summary.duration == (100 + 10 * 1000 + 5) - 110);
  CHECK(summary.requests == std::vector<uint64_t>{1});
  CHECK(summary.flag == false);
  CHECK_FALSE(f.active());
  CHECK_FALSE(f.take_summary(summary));
}

TEST_CASE("tracer::poll_fold::different_polls_break_the_run") {
  PollFolder f;
  Event first = poll(0);
  f.start(first, poll_key(first));
  SUBCASE("another request") {
    Event p = poll(10, 2);
    CHECK_FALSE(f.fold(p, poll_key(p)));
  }
  SUBCASE("another site") {
    Event p = poll(10, 1, 4);
    CHECK_FALSE(f.fold(p, poll_key(p)));
  }
  SUBCASE("another call") {
    Event p = poll(10);
    p.call = Call::Testall;
    CHECK_FALSE(f.fold(p, poll_key(p)));
  }
  SUBCASE("another thread") {
    Event p = poll(10);
    p.thread = 1;
    CHECK_FALSE(f.fold(p, poll_key(p)));
  }
  Event summary;
  CHECK_FALSE(f.take_summary(summary));  // nothing folded: the first poll alone
}

TEST_SUITE_END();
