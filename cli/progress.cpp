#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/core.h>

namespace smtrace::cli {

Progress::Progress(Quiet quiet) : m_enabled(quiet == Quiet::no && ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { clear(); }

void Progress::operator()(const std::string& line) {
  if (!m_enabled) return;
  std::lock_guard lock(m_mutex);
  const auto now = Clock::now();
  if (now - m_start < std::chrono::seconds(1) || now - m_last < std::chrono::milliseconds(200)) return;
  m_last = now;
  m_shown = true;
  fmt::print(stderr, "\r\x1b[Ksmtrace: {}", line);
  std::fflush(stderr);
}

void Progress::clear() {
  std::lock_guard lock(m_mutex);
  if (m_shown) {
    fmt::print(stderr, "\r\x1b[K");
    std::fflush(stderr);
  }
  m_shown = false;
}

std::function<void(const std::string&)> Progress::callback() {
  if (!m_enabled) return {};
  return [this](const std::string& line) { (*this)(line); };
}

}  // namespace smtrace::cli
