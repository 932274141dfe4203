// thread-level on small hand-built traces: each level's rule once broken,
// and the uses each level allows, which must stay clean.
#include <doctest/doctest.h>

#include <functional>
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

bool has_note(const an::Result& r, const std::string& text) {
  for (const auto& f : r.findings) {
    for (const auto& n : f.notes)
      if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

// Thread 0 creates threads 1 and 2, each makes call `call` on
// communicator 0; `between` runs after thread 1's call, before thread 2's
// begin; both are joined.
an::Result two_threads(int32_t level, Call call, const std::function<void(Builder&)>& between,
                       uint32_t sync = tf::thread_sync::pthreads) {
  Builder b;
  b.trace().ranks[0].header.thread_level = level;
  b.trace().ranks[0].header.thread_sync = sync;
  tf::Event& init = b.add(Call::Init_thread);
  init.t_start = 10;
  init.duration = 10;
  int64_t t = 1000;
  const auto thread_event = [&](uint32_t thread, Call c, int32_t peer) {
    tf::Event& e = b.add(c);
    e.thread = thread;
    e.peer = peer;
    e.t_start = t;
    e.duration = 1;
    t += 100;
  };
  thread_event(0, Call::pthread_create, 1);
  thread_event(0, Call::pthread_create, 2);
  thread_event(1, Call::thread_begin, 0);
  call_on(b, 1, t, 10, call);
  t += 100;
  if (between) between(b);
  t += 100000;
  thread_event(2, Call::thread_begin, 0);
  call_on(b, 2, t, 10, call);  // long after thread 1's call: no overlap in time
  t += 100;
  thread_event(1, Call::thread_end, -1);
  thread_event(2, Call::thread_end, -1);
  thread_event(0, Call::pthread_join, 1);
  thread_event(0, Call::pthread_join, 2);
  return b.run(k_tl);
}


// Two ranks: the threaded one (rank 0 when `receives`, else rank 1) runs
// threads 1 and 2, each posting one point-to-point call of one channel
// (tag 7): receives from rank 1 of `first` and `second` ints, or sends to
// rank 0 of that many; the other rank, single-threaded, makes the matching
// calls in the same order. `barrier`: a pthread barrier orders thread 1's
// call before thread 2's. `sync`: the threaded rank's thread_sync.
an::Result crossed_case(bool receives, int64_t first, int64_t second, bool barrier,
                        uint32_t sync = tf::thread_sync::pthreads, int32_t level = 3) {
  Builder b(2);
  const uint32_t threaded = receives ? 0 : 1, other = 1 - threaded;
  b.trace().ranks[threaded].header.thread_level = level;
  b.trace().ranks[threaded].header.thread_sync = sync;
  const Call mine = receives ? Call::Recv : Call::Send, theirs = receives ? Call::Send : Call::Recv;
  const auto thread_event = [&](uint32_t thread, Call c, int32_t peer) {
    tf::Event& e = b.add(c, threaded);
    e.thread = thread;
    e.peer = peer;
  };
  const auto point_to_point = [&](uint32_t rank, Call c, uint32_t thread, int64_t count) {
    tf::Event& e = b.p2p(c, rank, static_cast<int32_t>(1 - rank), 0x1000 * (thread + 1));
    e.thread = thread;
    e.tag = 7;
    e.count = count;
  };
  const auto barrier_of = [&](uint32_t thread) {
    tf::Event& e = b.add(Call::pthread_barrier_wait, threaded);
    e.thread = thread;
    e.buf = 0x70;
    e.count = 1;
  };
  thread_event(0, Call::pthread_create, 1);
  thread_event(0, Call::pthread_create, 2);
  thread_event(1, Call::thread_begin, 0);
  thread_event(2, Call::thread_begin, 0);
  point_to_point(threaded, mine, 1, first);
  if (barrier) {
    barrier_of(1);
    barrier_of(2);
  }
  point_to_point(threaded, mine, 2, second);
  thread_event(1, Call::thread_end, -1);
  thread_event(2, Call::thread_end, -1);
  thread_event(0, Call::pthread_join, 1);
  thread_event(0, Call::pthread_join, 2);
  point_to_point(other, theirs, 0, first);
  point_to_point(other, theirs, 0, second);
  return b.run(k_tl);
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
  SUBCASE("serialized, threads recorded: calls apart in time but not ordered by any synchronization") {
    const an::Result r = two_threads(2, Call::Send, {});
    REQUIRE(count_of(r) == 1);
    CHECK(r.findings[0].message.find("not ordered by any thread synchronization") != std::string::npos);
    CHECK(r.findings[0].locations.size() == 3);  // both calls and MPI_Init_thread
  }
  SUBCASE("serialized, threads recorded: a mutex, or a join, orders the calls") {
    const auto mutex = [](Builder& b) {
      tf::Event& unlock = b.add(Call::pthread_mutex_unlock);
      unlock.thread = 1;
      unlock.buf = 0x50;
      unlock.t_start = 5000;
      tf::Event& lock = b.add(Call::pthread_mutex_lock);
      lock.thread = 2;
      lock.buf = 0x50;
      lock.t_start = 6000;
    };
    CHECK(count_of(two_threads(2, Call::Send, mutex)) == 0);
    Builder b;
    b.trace().ranks[0].header.thread_level = 2;
    b.trace().ranks[0].header.thread_sync = tf::thread_sync::pthreads;
    tf::Event& create = b.add(Call::pthread_create);
    create.peer = 1;
    b.add(Call::thread_begin).thread = 1;
    call_on(b, 1, 1000, 10, Call::Send);
    b.add(Call::thread_end).thread = 1;
    b.add(Call::pthread_join).peer = 1;
    call_on(b, 0, 5000, 10, Call::Recv);
    CHECK(count_of(b.run(k_tl)) == 0);
  }
  SUBCASE("serialized, threads not recorded: only the timing counts") {
    CHECK(count_of(two_threads(2, Call::Send, {}, 0)) == 0);
  }
  SUBCASE("multiple: collectives of two threads on one communicator that nothing orders") {
    const an::Result r = two_threads(3, Call::Barrier, {});
    REQUIRE(count_of(r) == 1);
    CHECK(r.findings[0].message.find("collectives on the same communicator") != std::string::npos);
    CHECK(has_note(r, "MPI-3.1 section 12.4.2"));
  }
  SUBCASE("multiple: point-to-point calls of two threads, and ordered collectives, are clean") {
    CHECK(count_of(two_threads(3, Call::Send, {})) == 0);
    const auto barrier = [](Builder& b) {
      for (uint32_t thread : {1u, 2u}) {
        tf::Event& e = b.add(Call::pthread_barrier_wait);
        e.thread = thread;
        e.buf = 0x70;
        e.count = 1;
        e.t_start = 5000;
        e.duration = 10;
      }
    };
    CHECK(count_of(two_threads(3, Call::Barrier, barrier)) == 0);
  }
  SUBCASE("multiple: two threads waiting on the same request, unordered, and ordered by a join") {
    const auto wait_on = [](Builder& b, uint32_t thread, int64_t start) {
      tf::Event& w = call_on(b, thread, start, 10, Call::Wait);
      w.requests = {7};
    };
    for (const bool joined : {false, true}) {
      Builder b;
      b.trace().ranks[0].header.thread_level = 3;
      b.trace().ranks[0].header.thread_sync = tf::thread_sync::pthreads;
      tf::Event& irecv = call_on(b, 0, 100, 10, Call::Irecv);
      irecv.request = 7;
      irecv.peer = 1;
      irecv.tag = 0;
      tf::Event& create = b.add(Call::pthread_create);
      create.peer = 1;
      b.add(Call::thread_begin).thread = 1;
      wait_on(b, 1, 1000);
      b.add(Call::thread_end).thread = 1;
      if (joined) b.add(Call::pthread_join).peer = 1;
      wait_on(b, 0, 5000);
      if (!joined) b.add(Call::pthread_join).peer = 1;
      const an::Result r = b.run(k_tl);
      CAPTURE(joined);
      CHECK(count_of(r) == (joined ? 0u : 1u));
      if (!joined && count_of(r) == 1) CHECK(r.findings[0].message.find("the same request") != std::string::npos);
    }
  }
  SUBCASE("multiple: collectives on two communicators are clean") {
    Builder b;
    b.trace().ranks[0].header.thread_level = 3;
    b.trace().ranks[0].header.thread_sync = tf::thread_sync::pthreads;
    call_on(b, 1, 1000, 10);
    call_on(b, 2, 1000, 10).comm = 1;
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

TEST_CASE("analyzer::checks::thread_level crossed matches (MPI-3.1 section 3.5)") {
  SUBCASE("two threads' receives of one channel, the other order truncating") {
    const an::Result r = crossed_case(true, 1, 2, false);
    REQUIRE(count_of(r) == 1);
    CHECK(r.findings[0].message.find("can take each other's message") != std::string::npos);
    CHECK(r.findings[0].message.find("2 x MPI_INT does not fit the receive buffer of 1 x MPI_INT") !=
          std::string::npos);
    CHECK(has_note(r, "MPI-3.1 section 3.5"));
    REQUIRE(r.findings[0].locations.size() == 3);
    CHECK(r.findings[0].locations[2].event.rank == 1);  // the send of the message that does not fit
  }
  SUBCASE("two threads' sends of one channel, received in the other order") {
    const an::Result r = crossed_case(false, 1, 2, false);
    REQUIRE(count_of(r) == 1);
    CHECK(r.findings[0].message.find("send to rank 0 messages that either of its receives can take") !=
          std::string::npos);
    CHECK(r.findings[0].locations[0].event.rank == 1);
  }
  SUBCASE("clean: either order fits, a barrier orders the threads, or nothing tells the threads apart") {
    for (const bool receives : {true, false}) {
      CAPTURE(receives);
      CHECK(count_of(crossed_case(receives, 2, 2, false)) == 0);
      CHECK(count_of(crossed_case(receives, 1, 2, true)) == 0);
      CHECK(count_of(crossed_case(receives, 1, 2, false, 0)) == 0);
    }
  }
  SUBCASE("the larger message first: the later, smaller receive can take it") {
    CHECK(count_of(crossed_case(true, 2, 1, false)) == 1);
    CHECK(count_of(crossed_case(false, 2, 1, false)) == 1);
  }
  SUBCASE("clean: matched probes, each thread's MPI_Mrecv sized to the message its MPI_Mprobe took") {
    Builder b(2);
    b.trace().ranks[0].header.thread_level = 3;
    b.trace().ranks[0].header.thread_sync = tf::thread_sync::pthreads;
    for (uint32_t thread : {1u, 2u}) {
      tf::Event& create = b.add(Call::pthread_create, 0);
      create.peer = static_cast<int32_t>(thread);
      b.add(Call::thread_begin, 0).thread = thread;
    }
    for (uint32_t thread : {1u, 2u}) {
      tf::Event& probe = b.p2p(Call::Mprobe, 0, 1, 0);
      probe.thread = thread;
      probe.tag = 7;
      probe.message = 100 + thread;
      probe.status.source = 1;
      probe.status.tag = 7;
    }
    for (uint32_t thread : {1u, 2u}) {
      tf::Event& mrecv = b.p2p(Call::Mrecv, 0, 1, 0x1000 * thread);
      mrecv.thread = thread;
      mrecv.message = 100 + thread;
      mrecv.count = thread;
    }
    for (int64_t count : {1, 2}) {
      tf::Event& send = b.p2p(Call::Send, 1, 0, 0x5000);
      send.tag = 7;
      send.count = count;
    }
    CHECK(count_of(b.run(k_tl)) == 0);
  }
  SUBCASE("not MPI_THREAD_MULTIPLE: thread-level's other rules judge the threads") {
    const an::Result r = crossed_case(true, 1, 2, false, tf::thread_sync::pthreads, 2);
    for (const auto& f : r.findings) CHECK(f.message.find("each other's message") == std::string::npos);
  }
}

TEST_SUITE_END();
