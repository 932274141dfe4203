// BiasedLock: the owner's fast path, revocation by another thread or a
// signal handler's try_lock, and mutual exclusion throughout.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tracer/biased_lock.hpp"

using smtrace::tracer::BiasedLock;

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::BiasedLock::owner_and_others_exclude_each_other") {
  BiasedLock lock;
  if (!lock.bias()) {
    MESSAGE("no membarrier here: the lock stays a spinlock");
    CHECK_FALSE(lock.biased());
  }
  const bool was_biased = lock.biased();
  // The owner alone: the fast path, then a try_lock of its own while inside
  // fails, as a signal handler on the owner thread must.
  lock.lock();
  CHECK_FALSE(lock.try_lock());
  lock.unlock();
  CHECK(lock.try_lock());
  lock.unlock();
  CHECK(lock.biased() == was_biased);

  // The owner and three other threads count under the lock; the others
  // revoke the bias at their first lock.
  long counter = 0;  // not atomic: the lock is all that protects it
  std::atomic<bool> go{false};
  constexpr int k_each = 200000;
  std::vector<std::thread> others;
  for (int t = 0; t < 3; ++t) {
    others.emplace_back([&] {
      while (!go.load()) {}
      for (int i = 0; i < k_each; ++i) {
        lock.lock();
        ++counter;
        lock.unlock();
      }
    });
  }
  go.store(true);
  for (int i = 0; i < k_each; ++i) {
    lock.lock();
    ++counter;
    lock.unlock();
  }
  for (auto& t : others) t.join();
  CHECK(counter == 4L * k_each);
  CHECK_FALSE(lock.biased());
  // Revoked for good: the owner goes through the spinlock, its try_lock too.
  lock.lock();
  CHECK_FALSE(lock.try_lock());
  lock.unlock();
  CHECK(lock.try_lock());
  lock.unlock();
}

TEST_CASE("tracer::BiasedLock::try_lock_of_another_thread") {
  BiasedLock lock;
  if (!lock.bias()) return;
  // While the owner is inside, another thread's try_lock (a signal handler's)
  // revokes the bias, waits a bounded time and gives up; once the owner has
  // left, the next one gets the lock and the owner waits for it.
  lock.lock();
  bool got = true;
  std::thread([&] { got = lock.try_lock(); }).join();
  CHECK_FALSE(got);
  CHECK_FALSE(lock.biased());
  lock.unlock();
  std::atomic<int> stage{0};
  std::thread other([&] {
    CHECK(lock.try_lock());
    stage.store(1);
    while (stage.load() != 2) {}
    lock.unlock();
  });
  while (stage.load() != 1) {}
  CHECK_FALSE(lock.try_lock());  // held by the other thread
  stage.store(2);
  lock.lock();  // waits for it
  lock.unlock();
  other.join();
}

TEST_SUITE_END();
