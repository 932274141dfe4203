// Tables by request id for the per-rank passes: a trace holds millions of
// short-lived non-blocking operations, so a pass keeps what it needs per
// pending request in one of these instead of a node-based hash map.
// Neither has an iteration order a report may depend on: a pass that
// reports from a scan of its table sorts what it collects by a key of its
// own (request-leak by creation seq, local-concurrency and cuda-mpi-race by
// posting order). Thread safety: none (one per rank pass).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace smtrace::analyzer {

// A table by request id of small values: open addressing, linear probing,
// entries in one array. `T` is a small copyable value; a new entry is `T{}`.
template <class T>
class FlatRequestMap {
 public:
  // Return the value of `request`, or nullptr.
  T* find(uint64_t request) {
    if (m_size == 0) return nullptr;
    for (std::size_t i = slot_of(request);; i = (i + 1) & m_mask) {
      Slot& s = m_slots[i];
      if (!s.used) return nullptr;
      if (s.key == request) return &s.value;
    }
  }
  // Return the value of `request`, made (as T{}) when missing.
  T& operator[](uint64_t request) {
    if ((m_size + 1) * 2 > m_slots.size()) grow();
    std::size_t i = slot_of(request);
    for (; m_slots[i].used; i = (i + 1) & m_mask)
      if (m_slots[i].key == request) return m_slots[i].value;
    m_slots[i] = Slot{request, T{}, true};
    ++m_size;
    return m_slots[i].value;
  }
  // Erase the entry of `request`, if any.
  void erase(uint64_t request) { extract(request); }
  // Erase the entry of `request` and return its value; nullopt when missing.
  std::optional<T> extract(uint64_t request) {
    if (m_size == 0) return std::nullopt;
    std::size_t i = slot_of(request);
    for (;; i = (i + 1) & m_mask) {
      if (!m_slots[i].used) return std::nullopt;
      if (m_slots[i].key == request) break;
    }
    std::optional<T> value(std::move(m_slots[i].value));
    // Close the gap: move back each later entry of the run whose home
    // slot is not between the gap and it (backward-shift deletion).
    for (std::size_t j = (i + 1) & m_mask; m_slots[j].used; j = (j + 1) & m_mask) {
      const std::size_t home = slot_of(m_slots[j].key);
      if (((j - home) & m_mask) >= ((j - i) & m_mask)) {
        m_slots[i] = m_slots[j];
        i = j;
      }
    }
    m_slots[i].used = false;
    --m_size;
    return value;
  }
  std::size_t size() const { return m_size; }
  // Call f(request, value) for each entry, in no particular order.
  template <class F>
  void each(F&& f) const {
    for (const Slot& s : m_slots)
      if (s.used) f(s.key, s.value);
  }
  // Erase every entry (and the storage).
  void clear() {
    m_slots.clear();
    m_mask = 0;
    m_size = 0;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    T value{};
    bool used = false;
  };

  std::size_t slot_of(uint64_t request) const {
    uint64_t h = request * 0x9e3779b97f4a7c15ULL;  // request ids are often aligned addresses
    return static_cast<std::size_t>(h ^ (h >> 29)) & m_mask;
  }
  void grow() {
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    m_mask = m_slots.size() - 1;
    m_size = 0;
    for (const Slot& s : old)
      if (s.used) (*this)[s.key] = s.value;
  }

  std::vector<Slot> m_slots;
  std::size_t m_mask = 0;
  std::size_t m_size = 0;
};

// A table by request id whose values hold vectors: the values lie in one
// array (a reference is valid until the next request is added), found
// through a FlatRequestMap of their places, and an erased request's place,
// with its vectors' storage, goes to the next new request. `T` must have a
// `reset(T&)` (found by argument-dependent lookup) that sets a value to its
// defaults, keeping its vectors' storage.
template <class T>
class StableRequestMap {
 public:
  // Return the value of `request`, or nullptr.
  T* find(uint64_t request) {
    const uint32_t* place = m_index.find(request);
    return place ? &m_values[*place - 1] : nullptr;
  }
  // Return the value of `request`, made (with its defaults) when missing.
  T& operator[](uint64_t request) {
    uint32_t& place = m_index[request];  // 1 + the index in m_values; 0: new
    if (place != 0) return m_values[place - 1];
    if (m_free.empty()) {
      m_values.emplace_back();
      m_used.push_back(1);
      place = static_cast<uint32_t>(m_values.size());
      return m_values.back();
    }
    const uint32_t i = m_free.back();
    m_free.pop_back();
    m_used[i] = 1;
    place = i + 1;
    reset(m_values[i]);
    return m_values[i];
  }
  // Erase the entry of `request`, if any, keeping its value's storage.
  void erase(uint64_t request) {
    const std::optional<uint32_t> place = m_index.extract(request);
    if (!place) return;
    const uint32_t i = *place - 1;
    m_used[i] = 0;
    m_free.push_back(i);
  }
  std::size_t size() const { return m_index.size(); }
  // Call f(value) for each entry, in no particular order (the same for the
  // same insertions and erasures, whatever the ids).
  template <class F>
  void each(F&& f) {
    for (std::size_t i = 0; i < m_values.size(); ++i)
      if (m_used[i]) f(m_values[i]);
  }
  // Erase every entry (and the storage).
  void clear() {
    m_index.clear();
    m_values.clear();
    m_used.clear();
    m_free.clear();
  }

 private:
  FlatRequestMap<uint32_t> m_index;
  std::vector<T> m_values;
  std::vector<uint8_t> m_used;   // per place: 1 while a request holds it
  std::vector<uint32_t> m_free;  // places to reuse, last freed first
};

}  // namespace smtrace::analyzer
