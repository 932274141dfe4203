// A fresh path under the temporary directory for a unit test's files (not
// created; anything left there from before is removed).
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace smtrace::test {

// Return temp/smtrace-unit-PID-N-`name`, N counting up within the process.
inline std::filesystem::path scratch_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("smtrace-unit-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(counter++) + "-" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace smtrace::test
