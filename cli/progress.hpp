// Progress lines on stderr for the commands that can run long (check,
// record's symbolization, symbolize, export, import-otf2). They are shown on
// a terminal only, never with --quiet, start once the work has run for a
// second (short runs print nothing) and come at most five times a second;
// each overwrites the one before.
//
// Thread safety: operator() and clear() may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace smtrace::cli {

enum class Quiet : bool { no, yes };

class Progress {
 public:
  // Show progress unless `quiet` or stderr is not a terminal.
  explicit Progress(Quiet quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Show `line` ("symbolizing 120/800 call sites") if it is time to.
  void operator()(const std::string& line);
  // Clear the progress line, if one was shown.
  void clear();
  // Return a callback that forwards to this object, or an empty function
  // when nothing would be shown (so that callers can skip formatting).
  std::function<void(const std::string&)> callback();

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex m_mutex;
  Clock::time_point m_start = Clock::now();
  Clock::time_point m_last{};
  bool m_enabled = false;
  bool m_shown = false;
};

}  // namespace smtrace::cli
