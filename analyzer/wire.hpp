// A plain byte coding for what the analyzer sends between the processes of
// one smtrace-mpi job: the state of the rank passes that run where a rank
// file is read (Check::saves_passes). Fixed-width little-endian integers,
// lengths before strings and vectors; made for the same build on both ends,
// never stored (distributed/record_codec.hpp codes the records the same way).
//
// Thread safety: a WireWriter or WireReader is used from one thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace smtrace::analyzer {

// Appends values to a byte string.
class WireWriter {
 public:
  // Append the integer or enum `value`.
  template <class T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
  void put(T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    m_out.append(bytes, sizeof(T));
  }
  // Append `text` with its length.
  void put(std::string_view text) {
    put(static_cast<uint64_t>(text.size()));
    m_out.append(text);
  }
  // Return the bytes written so far.
  std::string& bytes() { return m_out; }

 private:
  std::string m_out;
};

// Reads values in the order a WireWriter wrote them. Throws
// std::runtime_error when the bytes end early (a bug: the coding never
// leaves the job that wrote it).
class WireReader {
 public:
  explicit WireReader(std::string_view in) : m_in(in) {}
  // Read an integer or enum of type `T`.
  template <class T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  // Read a string.
  std::string text() { return std::string(take(get<uint64_t>())); }
  // Return true when every byte was read.
  bool at_end() const { return m_in.empty(); }

 private:
  std::string_view take(uint64_t n) {
    if (n > m_in.size()) throw std::runtime_error("analyzer wire: the bytes end inside a value");
    const std::string_view out = m_in.substr(0, n);
    m_in.remove_prefix(n);
    return out;
  }
  std::string_view m_in;
};

}  // namespace smtrace::analyzer
