#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "trace_format/parallel.hpp"

namespace tf = smtrace::format;

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::run_on_threads::every job once") {
  for (unsigned threads : {1u, 2u, 4u}) {
    std::vector<std::atomic<int>> runs(100);
    tf::run_on_threads(threads, runs.size(), [&](std::size_t i) { ++runs[i]; });
    for (const auto& n : runs) CHECK(n.load() == 1);
  }
  tf::run_on_threads(3, 0, [](std::size_t) { FAIL("no job to run"); });
}

TEST_CASE("trace_format::run_on_threads::an exception on a worker reaches the caller") {
  // The caller's jobs take 1 ms each; a worker's first job throws. The error
  // comes from a thread other than the caller's, and the pool stops handing
  // out jobs: far fewer than the 1000 jobs run (each thread finishes the job
  // it holds; 100 leaves the exception 0.1 s to be kept, under any load).
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> started{0};
  auto job = [&](std::size_t i) {
    ++started;
    if (std::this_thread::get_id() != caller) throw std::logic_error("job " + std::to_string(i) + " failed on a worker");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  CHECK_THROWS_WITH_AS(tf::run_on_threads(2, 1000, job), doctest::Contains("failed on a worker"), std::logic_error);
  CHECK(started.load() < 100);
}

TEST_CASE("trace_format::run_on_threads::an exception on the calling thread") {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> after{0};
  std::atomic<bool> caller_started{false};
  auto job = [&](std::size_t i) {
    if (std::this_thread::get_id() == caller) {
      caller_started = true;
      if (i < 500) throw std::runtime_error("caller's job");
    } else {
      // On a loaded machine the worker could otherwise take every job
      // before the caller takes one (then nothing throws): it waits for the
      // caller's first job (at most 10 s).
      for (int n = 0; !caller_started && n < 10000; ++n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ++after;
  };
  CHECK_THROWS_WITH_AS(tf::run_on_threads(2, 1000, job), "caller's job", std::runtime_error);
  CHECK(after.load() < 1000);
}

TEST_CASE("trace_format::run_on_threads::the first of several exceptions") {
  // Every job throws; one exception comes out and the pool stops.
  std::atomic<int> thrown{0};
  auto job = [&](std::size_t i) {
    ++thrown;
    throw std::out_of_range(std::to_string(i));
  };
  CHECK_THROWS_AS(tf::run_on_threads(4, 10000, job), std::out_of_range);
  CHECK(thrown.load() <= 4 * 2);
}

TEST_CASE("trace_format::run_on_threads::the work-loop form rethrows a worker's exception") {
  const std::thread::id caller = std::this_thread::get_id();
  auto work = [&] {
    if (std::this_thread::get_id() != caller) throw std::bad_alloc();
  };
  CHECK_THROWS_AS(tf::run_on_threads(3, work), std::bad_alloc);
}

TEST_CASE("trace_format::run_steps_on_threads::every job of every step once, each step after the one before") {
  for (unsigned threads : {1u, 2u, 4u}) {
    CAPTURE(threads);
    constexpr std::size_t k_steps = 3, k_jobs = 17;
    std::vector<std::atomic<int>> runs(k_steps * k_jobs);
    std::vector<std::atomic<std::size_t>> returned(k_steps);
    std::atomic<bool> early{false};
    tf::run_steps_on_threads(threads, k_steps, k_jobs, [&](std::size_t step, std::size_t i) {
      if (step > 0 && returned[step - 1].load() != k_jobs) early = true;
      if (i % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a slow job holds its step
      ++runs[step * k_jobs + i];
      ++returned[step];
    });
    for (const auto& n : runs) CHECK(n.load() == 1);
    CHECK_FALSE(early.load());
  }
  tf::run_steps_on_threads(3, 2, 0, [](std::size_t, std::size_t) { FAIL("no job to run"); });
  tf::run_steps_on_threads(3, 0, 4, [](std::size_t, std::size_t) { FAIL("no job to run"); });
}

TEST_CASE("trace_format::run_steps_on_threads::an exception in a step: no later step starts, the caller gets it") {
  for (unsigned threads : {1u, 2u, 4u}) {
    CAPTURE(threads);
    std::atomic<int> later{0};
    auto job = [&](std::size_t step, std::size_t i) {
      if (step == 0 && i == 3) throw std::logic_error("step 0 job 3 failed");
      if (step > 0) ++later;
    };
    CHECK_THROWS_WITH_AS(tf::run_steps_on_threads(threads, 3, 8, job), "step 0 job 3 failed", std::logic_error);
    CHECK(later.load() == 0);
  }
}

TEST_SUITE_END();
