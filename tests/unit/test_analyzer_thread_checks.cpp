// thread-level on small hand-built traces: each level's rule once broken,
// and the uses each level allows, which must stay clean.
#include <doctest/doctest.h>

#include <string>

#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/content.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using smtrace::test::Builder;
using tf::Call;

namespace {

const std::string k_tl = "thread-level";

std::size_t count_of(const an::Result& r) {
  std::size_t n = 0;
  for (const auto& f : r.findings) n += f.kind == k_tl;
  return n;
}

// A barrier of thread `thread` on rank 0 from `start` to `start + length` ns.
tf::Event& call_on(Builder& b, uint32_t thread, int64_t start, uint64_t length, Call call = Call::Barrier) {
  tf::Event& e = b.add(call);
  e.comm = 0;
  e.thread = thread;
  e.t_start = start;
  e.duration = length;
  return e;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::checks::thread_level") {
  SUBCASE("funneled: a call from a second thread, repeated, is one finding with a count") {
    Builder b;
    b.trace().ranks[0].header.thread_level = 1;
    for (int i = 0; i < 3; ++i) {
      tf::Event& e = call_on(b, 1, 100000 + 100 * i, 10);
      e.site = 99;
    }
    const an::Result r = b.run(k_tl);
    REQUIRE(count_of(r) == 1);
    CHECK(r.findings[0].message.find("MPI_THREAD_FUNNELED") != std::string::npos);
    bool counted = false;
    for (const auto& n : r.findings[0].notes) counted = counted || n.find("3 times") != std::string::npos;
    CHECK(counted);
  }
  SUBCASE("single and funneled: the main thread may call") {
    for (int32_t level : {0, 1}) {
      Builder b;
      b.trace().ranks[0].header.thread_level = level;
      call_on(b, 0, 100000, 10);
      CHECK(count_of(b.run(k_tl)) == 0);
    }
  }
  SUBCASE("single: loads, stores and thread events of other threads are no MPI calls") {
    Builder b;
    tf::Event& e = b.annotate(Call::Store, 0x1000, 4);
    e.thread = 2;
    tf::Event& lock = b.add(Call::pthread_mutex_lock);
    lock.thread = 2;
    CHECK(count_of(b.run(k_tl)) == 0);
  }
  SUBCASE("serialized: overlapping calls of two threads") {
    Builder b;
    b.trace().ranks[0].header.thread_level = 2;
    call_on(b, 1, 100000, 500, Call::Recv);
    call_on(b, 2, 100200, 10, Call::Send);
    const an::Result r = b.run(k_tl);
    REQUIRE(count_of(r) == 1);
    CHECK(r.findings[0].message.find("overlap") != std::string::npos);
  }
  SUBCASE("serialized: a call the rank stopped inside overlaps every later call of another thread") {
    Builder b;
    b.trace().ranks[0].header.thread_level = 2;
    call_on(b, 2, 100200, 10, Call::Send);
    tf::Event& stuck = call_on(b, 1, 100000, 0, Call::Recv);
    stuck.pending = true;
    CHECK(count_of(b.run(k_tl)) == 1);
  }
  SUBCASE("serialized: back-to-back calls of two threads, and folded polls, are clean") {
    Builder b;
    b.trace().ranks[0].header.thread_level = 2;
    call_on(b, 1, 100000, 100, Call::Recv);
    call_on(b, 2, 100100, 100, Call::Send);
    tf::Event& polls = call_on(b, 1, 100150, 1000, Call::Iprobe);
    polls.repeat = 50;  // spans the gaps between its polls
    call_on(b, 2, 100500, 10, Call::Send);
    CHECK(count_of(b.run(k_tl)) == 0);
  }
  SUBCASE("multiple: overlapping calls are allowed") {
    Builder b;
    b.trace().ranks[0].header.thread_level = 3;
    call_on(b, 1, 100000, 500, Call::Recv);
    call_on(b, 2, 100200, 10, Call::Send);
    CHECK(count_of(b.run(k_tl)) == 0);
  }
  SUBCASE("an imported trace without a thread level is not checked") {
    Builder b;
    tf::set_lacks(b.trace().ranks[0].header, tf::content_bit(tf::Content::thread_level));
    call_on(b, 1, 100000, 10);
    CHECK(count_of(b.run(k_tl)) == 0);
  }
}

TEST_SUITE_END();
