// A hash table of small copyable values for the analyzer's per-event paths
// (the replay's channels, the passes' tables by request id): open
// addressing, linear probing, entries in one array, backward-shift erase.
// Iteration order is the array's: a caller that reports from a scan sorts
// what it collects by a key of its own. Thread safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace smtrace::analyzer {

// Hash: `std::size_t Hash{}(const Key&)`, spread over the low bits (the
// table keeps a power-of-two number of slots, k_first_slots at first).
template <class Key, class T, class Hash, std::size_t k_first_slots = 16>
class FlatMap {
 public:
  // Return the value of `key`, or nullptr.
  T* find(const Key& key) {
    if (m_size == 0) return nullptr;
    for (std::size_t i = slot_of(key);; i = (i + 1) & m_mask) {
      Slot& s = m_slots[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  // Return the value of `key`, made (as T{}) when missing.
  T& operator[](const Key& key) {
    if ((m_size + 1) * 2 > m_slots.size()) grow();
    std::size_t i = slot_of(key);
    for (; m_slots[i].used; i = (i + 1) & m_mask)
      if (m_slots[i].key == key) return m_slots[i].value;
    m_slots[i] = Slot{key, T{}, true};
    ++m_size;
    return m_slots[i].value;
  }
  // Erase the entry of `key`, if any.
  void erase(const Key& key) { extract(key); }
  // Erase the entry of `key` and return its value; nullopt when missing.
  std::optional<T> extract(const Key& key) {
    const std::size_t i = slot_with(key);
    if (i == k_missing) return std::nullopt;
    std::optional<T> value(std::move(m_slots[i].value));
    erase_slot(i);
    return value;
  }
  // Call keep(value) for the value of `key`, if any, and erase the entry
  // unless keep returned true: one search where extract and a put back, or
  // find and erase, take two.
  template <class F>
  void settle(const Key& key, F&& keep) {
    const std::size_t i = slot_with(key);
    if (i != k_missing && !keep(m_slots[i].value)) erase_slot(i);
  }
  std::size_t size() const { return m_size; }
  // Call f(key, value) for each entry, in no particular order.
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
    Key key{};
    T value{};
    bool used = false;
  };

  static constexpr std::size_t k_missing = ~std::size_t{0};

  std::size_t slot_of(const Key& key) const { return Hash{}(key) & m_mask; }
  // Return the slot of `key`, or k_missing.
  std::size_t slot_with(const Key& key) const {
    if (m_size == 0) return k_missing;
    for (std::size_t i = slot_of(key);; i = (i + 1) & m_mask) {
      if (!m_slots[i].used) return k_missing;
      if (m_slots[i].key == key) return i;
    }
  }
  // Empty used slot `i`, closing the gap: move back each later entry of
  // the run whose home slot is not between the gap and it (backward-shift
  // deletion).
  void erase_slot(std::size_t i) {
    for (std::size_t j = (i + 1) & m_mask; m_slots[j].used; j = (j + 1) & m_mask) {
      const std::size_t home = slot_of(m_slots[j].key);
      if (((j - home) & m_mask) >= ((j - i) & m_mask)) {
        m_slots[i] = m_slots[j];
        i = j;
      }
    }
    m_slots[i].used = false;
    --m_size;
  }
  void grow() {
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(old.empty() ? k_first_slots : old.size() * 2, Slot{});
    m_mask = m_slots.size() - 1;
    m_size = 0;
    for (const Slot& s : old)
      if (s.used) (*this)[s.key] = s.value;
  }

  std::vector<Slot> m_slots;
  std::size_t m_mask = 0;
  std::size_t m_size = 0;
};

}  // namespace smtrace::analyzer
