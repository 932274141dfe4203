// Independent jobs on a few threads, as the reader, the synthetic writer,
// the analyzer's loading and the SMT backend's parts run them: how many
// threads, and running the jobs on all of them.
//
// Errors: an exception thrown on any thread (the calling one or a worker)
// is kept, the first one wins; no job is handed out after it; every thread
// is joined; then it is rethrown on the calling thread. So a bad_alloc or a
// logic_error on a worker reaches the caller (and the CLI's "smtrace:
// error:"), never std::terminate. A worker thread that cannot be started
// (std::system_error, e.g. under a process limit) is not an error: the jobs
// run on the threads that did start, the calling one at least.
//
// Thread safety: `job` (or `work`) runs concurrently on every thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace smtrace::format {

// Return the threads to use for `jobs` jobs: `requested` (0: one per core),
// at least 1 and at most `jobs`.
inline unsigned thread_count(unsigned requested, std::size_t jobs) {
  const unsigned wanted = requested ? requested : std::thread::hardware_concurrency();
  return std::max(1u, static_cast<unsigned>(std::min<std::size_t>(wanted, jobs)));
}

namespace detail {

// The first exception of a pool's threads, and whether one was seen.
class FirstError {
 public:
  void keep(std::exception_ptr error) noexcept {
    std::lock_guard lock(m_mutex);
    if (!m_error) m_error = std::move(error);
    m_failed.store(true, std::memory_order_release);
  }
  bool failed() const noexcept { return m_failed.load(std::memory_order_acquire); }
  void rethrow() const {
    if (m_error) std::rethrow_exception(m_error);
  }

 private:
  std::mutex m_mutex;
  std::exception_ptr m_error;
  std::atomic<bool> m_failed{false};
};

// Run `body` on `threads` threads, the calling one among them, catching on
// each; join all, then rethrow the first exception.
inline void run_pool(unsigned threads, FirstError& errors, const std::function<void()>& body) {
  auto guarded = [&]() noexcept {
    try {
      body();
    } catch (...) {
      errors.keep(std::current_exception());
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads > 0 ? threads - 1 : 0);
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(guarded);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones started (and this one) do the jobs
    }
  }
  guarded();
  for (std::thread& t : pool) t.join();
  errors.rethrow();
}

}  // namespace detail

// Run `job(i)` once for every i in [0, `jobs`) on `threads` threads, the
// calling one among them, and return when all have returned. The first
// exception from any job stops the handing out of jobs (jobs already
// running finish) and is rethrown here once every thread is joined.
inline void run_on_threads(unsigned threads, std::size_t jobs,
                           const std::function<void(std::size_t)>& job) {
  detail::FirstError errors;
  std::atomic<std::size_t> next{0};
  detail::run_pool(threads, errors, [&] {
    for (std::size_t i; !errors.failed() && (i = next.fetch_add(1)) < jobs;) job(i);
  });
}

// Run `job(step, i)` once for every i in [0, `jobs`) of every step in
// [0, `steps`) on `threads` threads started once (the calling one among
// them), and return when all have returned. The steps run in order: no job
// of a step starts before every job of the step before has returned (as
// one run_on_threads per step, without starting the threads again). The
// first exception from any job stops the handing out of jobs, wakes the
// threads waiting for a step, and is rethrown here once every thread is
// joined.
inline void run_steps_on_threads(unsigned threads, std::size_t steps, std::size_t jobs,
                                 const std::function<void(std::size_t, std::size_t)>& job) {
  if (jobs == 0 || steps == 0) return;
  detail::FirstError errors;
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::condition_variable stepped;
  std::vector<std::size_t> finished(steps, 0);  // jobs returned, per step (under `mutex`)
  std::size_t done_steps = 0;                   // steps whose jobs have all returned (under `mutex`)
  detail::run_pool(threads, errors, [&] {
    // Tickets in order: every job of a step is handed out before any of the
    // next, so a thread waits only for jobs that threads already run.
    for (std::size_t t; !errors.failed() && (t = next.fetch_add(1)) < steps * jobs;) {
      const std::size_t step = t / jobs;
      if (step > 0) {
        std::unique_lock lock(mutex);
        stepped.wait(lock, [&] { return done_steps >= step || errors.failed(); });
        if (done_steps < step) return;  // an error: the step before never completes
      }
      try {
        job(step, t % jobs);
      } catch (...) {
        errors.keep(std::current_exception());
        std::lock_guard lock(mutex);  // (so that no waiter misses the wake-up)
        stepped.notify_all();
        return;
      }
      std::lock_guard lock(mutex);
      if (++finished[step] == jobs) {
        ++done_steps;
        stepped.notify_all();
      }
    }
  });
}

// Run `work` on `threads` threads, the calling one among them, and return
// when every one has returned; `work` takes its jobs from shared state
// itself. The first exception from any thread is rethrown here once every
// thread is joined. Prefer the form with job numbers, which also stops
// handing out jobs after an error.
inline void run_on_threads(unsigned threads, const std::function<void()>& work) {
  detail::FirstError errors;
  detail::run_pool(threads, errors, work);
}

}  // namespace smtrace::format
