// Threads as lanes of happens-before (analyzer/threads.hpp) through the
// rma-race and local-concurrency checks, on hand-built one-rank traces:
// each race between threads found, and each synchronization that orders it
// clean; a rank without recorded thread synchronization keeps one program
// order.
#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "analyzer/threads.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/call_semantics.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using smtrace::test::Builder;
using tf::Call;

namespace {

constexpr uint64_t k_base = 0x1000;     // rank 0's window memory
constexpr uint64_t k_origin = 0x9000;   // the origin buffer of the Put
constexpr uint32_t k_win = 1;

std::size_t count_of(const an::Result& r, const std::string& kind) {
  std::size_t n = 0;
  for (const auto& f : r.findings) n += f.kind == kind;
  return n;
}

bool notes_have(const an::Result& r, const std::string& kind, const std::string& text) {
  for (const auto& f : r.findings) {
    if (f.kind != kind) continue;
    if (f.message.find(text) != std::string::npos) return true;
    for (const auto& n : f.notes)
      if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

// One rank whose threads are told apart (thread_sync `sync`).
class Threads {
 public:
  explicit Threads(uint32_t sync = tf::thread_sync::pthreads) {
    b.trace().ranks[0].header.thread_sync = sync;
    b.win_create(0, k_win, k_base, 64);
  }
  tf::Event& on(uint32_t thread, Call call) {
    tf::Event& e = b.add(call);
    e.thread = thread;
    return e;
  }
  tf::Event& sync(uint32_t thread, Call call, uint64_t object, int64_t count = 0, uint64_t other = 0) {
    tf::Event& e = on(thread, call);
    e.buf = object;
    e.count = count;
    e.recv_buf = other;
    return e;
  }
  tf::Event& peer(uint32_t thread, Call call, int32_t other) {
    tf::Event& e = on(thread, call);
    e.peer = other;
    return e;
  }
  // MPI_Win_lock(shared, self), MPI_Put into its own window, MPI_Win_unlock by `thread`.
  void put(uint32_t thread) {
    b.win_sync(Call::Win_lock, 0, k_win, 0, tf::LockType::shared).thread = thread;
    b.rma(Call::Put, 0, k_win, 0, k_origin, 1, 0).thread = thread;
    b.win_sync(Call::Win_unlock, 0, k_win, 0).thread = thread;
  }
  tf::Event& load(uint32_t thread) {
    tf::Event& e = b.access(Call::Load, 0, k_base, 4);
    e.thread = thread;
    return e;
  }
  tf::Event& store(uint32_t thread) {
    tf::Event& e = b.access(Call::Store, 0, k_base, 4);
    e.thread = thread;
    return e;
  }
  an::Result run(const std::string& check = "rma-race") {
    b.win_sync(Call::Win_free, 0, k_win);
    return b.run(check);
  }
  Builder b;
};

// Thread 0 creates thread 1, which puts into the window; thread 0 loads
// the window memory, written after thread 1's unlock; `between` adds what
// the threads do between the unlock and the load.
an::Result pthread_case(uint32_t sync, const std::function<void(Threads&)>& between,
                        const std::function<void(Threads&)>& after = {}) {
  Threads t(sync);
  t.peer(0, Call::pthread_create, 1);
  t.peer(1, Call::thread_begin, 0);
  t.put(1);
  between(t);
  t.load(0);
  if (after) after(t);
  t.on(1, Call::thread_end);
  t.peer(0, Call::pthread_join, 1);
  return t.run();
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::threads::pthreads") {
  const std::string race = "rma-race";
  SUBCASE("a load of thread 0 written after thread 1's unlock races with its Put") {
    const an::Result r = pthread_case(tf::thread_sync::pthreads, [](Threads&) {});
    REQUIRE(count_of(r, race) == 1);
    CHECK(notes_have(r, race, "thread 1"));
    CHECK(notes_have(r, race, "thread 0 (main)"));
    CHECK(notes_have(r, race, "no thread synchronization or MPI call orders them"));
  }
  SUBCASE("without recorded thread synchronization the rank stays one program order") {
    const an::Result r = pthread_case(0, [](Threads&) {});
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("mutex unlock -> lock orders them") {
    const an::Result r = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_mutex_unlock, 0x50);
      t.sync(0, Call::pthread_mutex_lock, 0x50);
    });
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("a lock of another mutex does not") {
    const an::Result r = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_mutex_unlock, 0x50);
      t.sync(0, Call::pthread_mutex_lock, 0x60);
    });
    CHECK(count_of(r, race) == 1);
  }
  SUBCASE("a reader lock after a reader unlock does not; after a writer's unlock it does") {
    const an::Result shared = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_rwlock_rdlock, 0x70);
      t.sync(1, Call::pthread_rwlock_unlock, 0x70);
      t.sync(0, Call::pthread_rwlock_rdlock, 0x70);
    });
    CHECK(count_of(shared, race) == 1);
    const an::Result writer = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_rwlock_wrlock, 0x70);
      t.sync(1, Call::pthread_rwlock_unlock, 0x70);
      t.sync(0, Call::pthread_rwlock_rdlock, 0x70);
    });
    CHECK(count_of(writer, race) == 0);
  }
  SUBCASE("join orders them") {
    Threads t;
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.put(1);
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    t.load(0);
    CHECK(count_of(t.run(), race) == 0);
  }
  SUBCASE("create orders what came before it") {
    Threads t;
    t.store(0);
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.put(1);
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    CHECK(count_of(t.run(), race) == 0);
  }
  SUBCASE("condition signal -> wait orders them") {
    const an::Result r = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_cond_signal, 0x80);
      t.sync(0, Call::pthread_cond_wait, 0x80, 0, 0x50);
    });
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("semaphore post -> wait orders them") {
    const an::Result r = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::sem_post, 0x90);
      t.sync(0, Call::sem_wait, 0x90);
    });
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("a barrier round orders them") {
    const an::Result r = pthread_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_barrier_wait, 0xa0, 0);
      t.sync(0, Call::pthread_barrier_wait, 0xa0, 0);
    });
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("the Put of thread 1 and an earlier store of thread 0 race") {
    Threads t;
    t.peer(0, Call::pthread_create, 1);
    t.store(0);
    t.peer(1, Call::thread_begin, 0);
    t.put(1);
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    const an::Result r = t.run();
    CHECK(count_of(r, race) == 1);
  }
  SUBCASE("runs of stores: one thread's before its own Put are ordered, another thread's race") {
    for (const uint32_t thread : {1u, 2u}) {
      Threads t;
      t.peer(0, Call::pthread_create, 1);
      t.peer(0, Call::pthread_create, 2);
      t.peer(1, Call::thread_begin, 0);
      t.peer(2, Call::thread_begin, 0);
      for (uint64_t k = 0; k < 4; ++k) t.store(thread).buf = k_base + 16 * k;
      t.put(1);
      for (uint64_t k = 0; k < 4; ++k) t.store(thread).buf = k_base + 32 + 4 * k;
      t.on(1, Call::thread_end);
      t.on(2, Call::thread_end);
      t.peer(0, Call::pthread_join, 1);
      t.peer(0, Call::pthread_join, 2);
      CHECK(count_of(t.run(), race) == (thread == 1 ? 0 : 1));
    }
  }
  SUBCASE("two accesses of one thread stay in program order") {
    Threads t;
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.put(1);
    t.load(1);
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    CHECK(count_of(t.run(), race) == 0);
  }
}

TEST_CASE("analyzer::threads::openmp") {
  const std::string race = "rma-race";
  constexpr uint64_t k_team = 0x77;
  // A parallel region of threads 0 and 1; `body` runs inside it.
  auto region = [&](uint32_t sync, const std::function<void(Threads&)>& body) {
    Threads t(sync);
    t.sync(0, Call::omp_parallel_begin, k_team);
    t.sync(0, Call::omp_implicit_task_begin, k_team);
    t.sync(1, Call::omp_implicit_task_begin, k_team);
    body(t);
    t.sync(1, Call::omp_implicit_task_end, k_team);
    t.sync(0, Call::omp_implicit_task_end, k_team);
    t.sync(0, Call::omp_parallel_end, k_team);
    return t.run();
  };
  SUBCASE("two implicit tasks of one team race on window memory") {
    const an::Result r = region(tf::thread_sync::libgomp, [](Threads& t) {
      t.store(0);
      t.put(1);
    });
    REQUIRE(count_of(r, race) == 1);
    CHECK(notes_have(r, race, "thread 1"));
    CHECK(notes_have(r, race, "thread 0 (main)"));
  }
  SUBCASE("a team barrier separates them") {
    const an::Result r = region(tf::thread_sync::ompt, [](Threads& t) {
      t.store(0);
      t.sync(0, Call::omp_barrier, k_team, 1);
      t.sync(1, Call::omp_barrier, k_team, 1);
      t.put(1);
    });
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("a critical section (OpenMP mutex) orders them") {
    const an::Result r = region(tf::thread_sync::ompt, [](Threads& t) {
      t.sync(0, Call::omp_mutex_acquired, 0xc0);
      t.store(0);
      t.sync(0, Call::omp_mutex_released, 0xc0);
      t.sync(1, Call::omp_mutex_acquired, 0xc0);
      t.put(1);
      t.sync(1, Call::omp_mutex_released, 0xc0);
    });
    CHECK(count_of(r, race) == 0);
  }
  SUBCASE("fork and join order the region after what came before and before what follows") {
    Threads t(tf::thread_sync::ompt);
    t.store(0);
    t.sync(0, Call::omp_parallel_begin, k_team);
    t.sync(0, Call::omp_implicit_task_begin, k_team);
    t.sync(1, Call::omp_implicit_task_begin, k_team);
    t.put(1);
    t.sync(1, Call::omp_implicit_task_end, k_team);
    t.sync(0, Call::omp_implicit_task_end, k_team);
    t.sync(0, Call::omp_parallel_end, k_team);
    t.load(0);
    CHECK(count_of(t.run(), race) == 0);
  }
  // Tasks A (a store) and B (a Put) of parent task 0x1, both run by thread 1
  // one after the other; `deps`: A out, B in on the window's address.
  auto tasks = [&](bool deps, bool wait) {
    Threads t(tf::thread_sync::ompt);
    tf::Event& a = t.sync(0, Call::omp_task_create, 0xa, static_cast<int64_t>(k_team), 0x1);
    tf::Event& bt = t.sync(0, Call::omp_task_create, 0xb, static_cast<int64_t>(k_team), 0x1);
    if (deps) {
      a.displs = {static_cast<int64_t>(k_base)};
      a.counts = {static_cast<int64_t>(tf::ThreadDependence::out)};
      bt.displs = {static_cast<int64_t>(k_base)};
      bt.counts = {static_cast<int64_t>(tf::ThreadDependence::in)};
    }
    t.sync(1, Call::omp_task_begin, 0xa);
    t.store(1);
    t.sync(1, Call::omp_task_end, 0xa);
    t.sync(1, Call::omp_task_begin, 0xb);
    t.put(1);
    t.sync(1, Call::omp_task_end, 0xb);
    if (wait) {
      t.sync(0, Call::omp_taskwait, 0x1);
      t.load(0);
    }
    return t.run();
  };
  SUBCASE("tasks without dependences race though one thread ran both") {
    const an::Result r = tasks(false, false);
    REQUIRE(count_of(r, race) == 1);
    CHECK(notes_have(r, race, "OpenMP task 0xa on thread 1"));
    CHECK(notes_have(r, race, "OpenMP task 0xb on thread 1"));
  }
  SUBCASE("a dependence orders them") { CHECK(count_of(tasks(true, false), race) == 0); }
  SUBCASE("taskwait orders the children before the parent's load") { CHECK(count_of(tasks(true, true), race) == 0); }
  SUBCASE("sections are logical threads of their own") {
    const an::Result r = region(tf::thread_sync::ompt, [](Threads& t) {
      t.on(1, Call::omp_section_begin);
      t.store(1);
      t.on(1, Call::omp_section_end);
      t.on(1, Call::omp_section_begin);
      t.put(1);
      t.on(1, Call::omp_section_end);
    });
    CHECK(count_of(r, race) == 1);
    CHECK(notes_have(r, race, "an OpenMP section on thread 1"));
  }
}

TEST_CASE("analyzer::threads::local_concurrency") {
  const std::string lc = "local-concurrency";
  constexpr uint64_t k_buf = 0x5000;
  // Thread 1 receives into k_buf (Irecv + Wait); thread 0 stores to it,
  // written after the Wait; `between` adds what comes between.
  auto recv_case = [&](uint32_t sync, const std::function<void(Threads&)>& between) {
    Threads t(sync);
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.b.buf(Call::Irecv, k_buf, 1, smtrace::test::k_int, 1).thread = 1;
    t.b.wait(1).thread = 1;
    between(t);
    t.store(0).buf = k_buf;
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    return t.run(lc);
  };
  SUBCASE("a store of thread 0 written after thread 1's Wait is concurrent with the receive") {
    const an::Result r = recv_case(tf::thread_sync::pthreads, [](Threads&) {});
    REQUIRE(count_of(r, lc) == 1);
    CHECK(notes_have(r, lc, "thread 1 posts the operation and thread 0 (main) of rank 0 touches the buffer"));
  }
  SUBCASE("one program order without recorded thread synchronization") {
    CHECK(count_of(recv_case(0, [](Threads&) {}), lc) == 0);
  }
  SUBCASE("a mutex after the Wait orders them") {
    const an::Result r = recv_case(tf::thread_sync::pthreads, [](Threads& t) {
      t.sync(1, Call::pthread_mutex_unlock, 0x50);
      t.sync(0, Call::pthread_mutex_lock, 0x50);
    });
    CHECK(count_of(r, lc) == 0);
  }
  SUBCASE("a request completed by another thread orders through the completing thread") {
    // Thread 1 posts an Isend and hands the request to thread 2, which
    // waits for it. Thread 0 synchronizes with thread 1 after the Isend
    // (found: the send may still be pending) or with thread 2 after the
    // Wait (clean).
    for (const bool after_wait : {false, true}) {
      Threads t;
      t.peer(0, Call::pthread_create, 1);
      t.peer(0, Call::pthread_create, 2);
      t.peer(1, Call::thread_begin, 0);
      t.peer(2, Call::thread_begin, 0);
      t.b.buf(Call::Isend, k_buf, 1, smtrace::test::k_int, 7).thread = 1;
      if (!after_wait) t.sync(1, Call::pthread_mutex_unlock, 0x50);
      t.sync(1, Call::sem_post, 0x90);
      t.sync(2, Call::sem_wait, 0x90);
      t.b.wait(7).thread = 2;
      if (after_wait) t.sync(2, Call::pthread_mutex_unlock, 0x50);
      t.sync(0, Call::pthread_mutex_lock, 0x50);
      t.store(0).buf = k_buf;
      t.on(1, Call::thread_end);
      t.on(2, Call::thread_end);
      t.peer(0, Call::pthread_join, 1);
      t.peer(0, Call::pthread_join, 2);
      CHECK(count_of(t.run(lc), lc) == (after_wait ? 0 : 1));
    }
  }
  SUBCASE("a store of another thread recorded before the posting, unsynchronized, conflicts") {
    Threads t;
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.store(0).buf = k_buf;
    t.b.buf(Call::Irecv, k_buf, 1, smtrace::test::k_int, 1).thread = 1;
    t.b.wait(1).thread = 1;
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    CHECK(count_of(t.run(lc), lc) == 1);
  }
}

TEST_SUITE_END();

TEST_CASE("analyzer::threads::local_concurrency_blocking") {
  // A blocking call uses its buffers from its call to its return: thread 1
  // receives into k_buf with MPI_Recv, thread 0 then calls `second` on it,
  // synchronized with thread 1 after the receive (`locked`) or not.
  const std::string lc = "local-concurrency";
  constexpr uint64_t k_buf = 0x5000;
  auto blocking_case = [&](Call second, bool locked) {
    Threads t;
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.b.buf(Call::Recv, k_buf, 1).thread = 1;
    if (locked) {
      t.sync(1, Call::pthread_mutex_unlock, 0x50);
      t.sync(0, Call::pthread_mutex_lock, 0x50);
    }
    tf::Event& e = t.b.buf(second, k_buf, 1);
    e.thread = 0;
    e.tag = 5;  // no message between the two calls (a match would order them)
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    return t.run(lc);
  };
  SUBCASE("an MPI_Send of thread 0 reads the buffer thread 1's MPI_Recv writes") {
    const an::Result r = blocking_case(Call::Send, false);
    REQUIRE(count_of(r, lc) == 1);
    CHECK(notes_have(r, lc, "thread 1 is inside MPI_Recv and thread 0 (main) of rank 0 touches the buffer"));
    CHECK(notes_have(r, lc, "while that call is in progress on another thread"));
  }
  SUBCASE("two receives into it: one finding for the pair") {
    CHECK(count_of(blocking_case(Call::Recv, false), lc) == 1);
  }
  SUBCASE("a mutex after the receive orders them") {
    CHECK(count_of(blocking_case(Call::Send, true), lc) == 0);
    CHECK(count_of(blocking_case(Call::Recv, true), lc) == 0);
  }
  SUBCASE("two threads' sends of one buffer only read it") {
    Threads t;
    t.peer(0, Call::pthread_create, 1);
    t.peer(1, Call::thread_begin, 0);
    t.b.buf(Call::Send, k_buf, 1).thread = 1;
    t.b.buf(Call::Send, k_buf, 1).thread = 0;
    t.on(1, Call::thread_end);
    t.peer(0, Call::pthread_join, 1);
    CHECK(count_of(t.run(lc), lc) == 0);
  }
  SUBCASE("one program order without recorded thread synchronization") {
    Threads t(0);
    t.b.buf(Call::Recv, k_buf, 1).thread = 1;
    t.b.buf(Call::Recv, k_buf, 1).thread = 0;
    CHECK(count_of(t.run(lc), lc) == 0);
  }
}

TEST_CASE("analyzer::threads::keys_after_end") {
  // Thread 0 creates thread 1; thread 0's MPI_Send (seq 2) is followed by
  // thread 1's MPI_Recv (seq 3, not ordered after it), thread 0's unlock
  // (seq 4) and thread 1's lock of the same mutex (seq 5), then thread 1's
  // MPI_Send (seq 6, ordered after seq 2 through the mutex).
  tf::RankHeader header;
  header.thread_sync = tf::thread_sync::pthreads;
  an::RankThreads threads;
  an::ThreadCollector collector(threads, header);
  const auto event = [&](uint64_t seq, uint32_t thread, Call call, int32_t peer = -1, uint64_t object = 0) {
    tf::Event e;
    e.seq = seq;
    e.thread = thread;
    e.call = call;
    e.t_start = static_cast<int64_t>(seq) * 10;
    e.duration = 5;
    if (peer >= 0) e.peer = peer;
    e.buf = object;
    collector.event(e);
  };
  event(0, 0, Call::pthread_create, 1);
  event(1, 1, Call::thread_begin, 0);
  event(2, 0, Call::Send);
  event(3, 1, Call::Recv);
  event(4, 0, Call::pthread_mutex_unlock, -1, 0x50);
  event(5, 1, Call::pthread_mutex_lock, -1, 0x50);
  event(6, 1, Call::Send);
  REQUIRE(threads.modelled);
  const uint32_t lane0 = threads.lane(2), lane1 = threads.lane(3);
  REQUIRE(lane0 != lane1);
  const std::vector<uint64_t> after = an::keys_after_end(threads, 2);
  REQUIRE(after.size() == threads.lanes.size());
  CHECK(after[lane0] == 5);          // thread 0 after its Send's end
  CHECK(2 * 3 < after[lane1]);       // thread 1's Recv can start while the Send blocks
  CHECK(2 * 6 >= after[lane1]);      // its Send after the lock cannot
  CHECK(after[lane1] == 2 * 5 + 1);  // the lock's end takes the unlock
  // Nothing orders thread 0 after thread 1's Recv (no join).
  const std::vector<uint64_t> from_recv = an::keys_after_end(threads, 3);
  CHECK(from_recv[lane1] == 7);
  CHECK(from_recv[lane0] == std::numeric_limits<uint64_t>::max());
  // A rank whose threads are not told apart is one order.
  tf::RankHeader one;
  an::RankThreads single;
  an::ThreadCollector single_collector(single, one);
  tf::Event e;
  e.call = Call::Send;
  single_collector.event(e);
  CHECK(an::keys_after_end(single, 4) == std::vector<uint64_t>{9});
}
