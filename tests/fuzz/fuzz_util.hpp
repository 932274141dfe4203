// Helpers of the libFuzzer targets: an input as a file the readers can open,
// and a scratch trace directory per process.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace smtrace::fuzz {

namespace fs = std::filesystem;

// The input as a file in memory (memfd): its path is /proc/self/fd/N, which
// the readers open, stat and read like any file. Closed when destroyed.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, std::size_t size) : m_fd(memfd_create("fuzz-input", MFD_CLOEXEC)) {
    if (m_fd < 0) std::abort();
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(m_fd, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  ~MemoryFile() { ::close(m_fd); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  fs::path path() const { return "/proc/self/fd/" + std::to_string(m_fd); }

 private:
  int m_fd;
};

// A directory of this process under /dev/shm (else the temporary
// directory), emptied for each input by fresh().
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    m_path = base / ("smtrace-fuzz-" + name + "-" + std::to_string(::getpid()));
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // Return the directory, emptied.
  const fs::path& fresh() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
    fs::create_directories(m_path);
    return m_path;
  }
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
};

// Write `size` bytes of `data` to `file`.
inline void write_file(const fs::path& file, const uint8_t* data, std::size_t size) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) std::abort();
}

}  // namespace smtrace::fuzz
