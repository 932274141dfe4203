// Independent jobs on a few threads, as the reader, the synthetic writer,
// the analyzer's loading and the SMT backend's parts run them: how many
// threads, and running one work loop on all of them.
//
// Thread safety: `work` runs concurrently on every thread; it must take its
// jobs from shared state itself (an atomic counter).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace smtrace::format {

// Return the threads to use for `jobs` jobs: `requested` (0: one per core),
// at least 1 and at most `jobs`.
inline unsigned thread_count(unsigned requested, std::size_t jobs) {
  const unsigned wanted = requested ? requested : std::thread::hardware_concurrency();
  return std::max(1u, static_cast<unsigned>(std::min<std::size_t>(wanted, jobs)));
}

// Run `work` on `threads` threads, the calling one among them, and return
// when every one has returned. An exception from the calling thread's run
// is rethrown after the others have been joined.
inline void run_on_threads(unsigned threads, const std::function<void()>& work) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  std::exception_ptr error;
  try {
    work();
  } catch (...) {
    error = std::current_exception();
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace smtrace::format
