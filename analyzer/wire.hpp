// A plain byte coding for what the analyzer sends between the processes of
// one smtrace-mpi job: the state of the rank passes that run where a rank
// file is read (Check::saves_passes). Fixed-width little-endian integers,
// lengths before strings and vectors; made for the same build on both ends,
// never stored (distributed/record_codec.hpp codes the records the same way).
// A format::Event is coded as smtrace-mpi's readers code the events they
// send (analyzer/record_coding.hpp: one coding for both).
//
// A record's fields are listed once, in one function over either coder:
//     auto code = [](auto& c, auto& r) { c(r.seq); c(r.site); c.list(r.notes, text); };
// WireWriter's operator() writes a field, WireReader's reads it into place, so
// what is written and what is read can never be listed in different orders.
//
// Thread safety: a WireWriter or WireReader is used from one thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace smtrace::format {
struct Event;
}  // namespace smtrace::format

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
  // The writing side of a coding function: append the field `value`.
  template <class T>
  void operator()(const T& value) {
    put(value);
  }
  // Append the event `event`, whole.
  void operator()(const format::Event& event);
  // Append `items`' count, then each item as `code(*this, item)` writes it.
  template <class T, class Code>
  void list(const std::vector<T>& items, Code&& code) {
    put(static_cast<uint64_t>(items.size()));
    for (const T& item : items) code(*this, item);
  }
  // Append `items`' count, then their bytes as they lie in memory (for
  // trivially copyable items read back by the same build: WireReader::plain).
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void plain(const std::vector<T>& items) {
    put(static_cast<uint64_t>(items.size()));
    m_out.append(reinterpret_cast<const char*>(items.data()), items.size() * sizeof(T));
  }
  // Append whether `value` holds one, then the value as `code` writes it.
  template <class T, class Code>
  void optional(const std::optional<T>& value, Code&& code) {
    put<uint8_t>(value.has_value());
    if (value) code(*this, *value);
  }
  // Return the bytes written so far.
  std::string& bytes() { return m_out; }

 private:
  std::string m_out;
  std::string m_event;  // an event's coding before it is appended (its size is room, not bytes)
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
  // The reading side of a coding function: read the field `value`.
  template <class T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
  void operator()(T& value) {
    value = get<T>();
  }
  void operator()(std::string& value) { value = text(); }
  // Read an event that WireWriter wrote into `event` (every field is set).
  void operator()(format::Event& event);
  // Read what WireWriter::list wrote into `items`, each item with `code`.
  template <class T, class Code>
  void list(std::vector<T>& items, Code&& code) {
    items.resize(get<uint64_t>());
    for (T& item : items) code(*this, item);
  }
  // Read what WireWriter::plain wrote into `items`.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void plain(std::vector<T>& items) {
    const uint64_t n = get<uint64_t>();
    if (n > m_in.size() / sizeof(T)) throw std::runtime_error("analyzer wire: the bytes end inside a value");
    items.resize(n);
    if (n != 0) std::memcpy(static_cast<void*>(items.data()), take(n * sizeof(T)).data(), n * sizeof(T));
  }
  // Read what WireWriter::optional wrote into `value`.
  template <class T, class Code>
  void optional(std::optional<T>& value, Code&& code) {
    value.reset();
    if (get<uint8_t>() != 0) code(*this, value.emplace());
  }
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
