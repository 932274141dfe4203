// What a check or the replay keeps per request id while the request is
// pending. A trace holds millions of short-lived non-blocking operations:
// this hash map keeps the nodes of erased entries (and the vectors inside their values)
// for the next insertions instead of freeing and allocating them again.
// Iteration order is that of the std::unordered_map underneath (a reused
// node goes where a new one would). Thread safety: none (one per rank pass).
// FlatRequestMap (below) is faster, for a pass that never iterates.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace smtrace::analyzer {

// `T` must have a `reset(T&)` (found by argument-dependent lookup) that sets
// a value to its defaults, keeping its vectors' storage.
template <class T>
class RequestMap {
 public:
  using Map = std::unordered_map<uint64_t, T>;
  using iterator = typename Map::iterator;
  using const_iterator = typename Map::const_iterator;

  RequestMap() = default;
  // A copy has the entries, not the nodes kept.
  RequestMap(const RequestMap& other) : m_map(other.m_map) {}
  RequestMap& operator=(const RequestMap& other) {
    if (this != &other) {
      m_map = other.m_map;
      m_spare.clear();
    }
    return *this;
  }
  RequestMap(RequestMap&&) noexcept = default;
  RequestMap& operator=(RequestMap&&) noexcept = default;
  ~RequestMap() = default;

  // Return the value of `request`, made (with its defaults) when missing.
  T& operator[](uint64_t request) {
    if (m_spare.empty()) return m_map[request];
    // One lookup: insert a kept node; when `request` is there already, the
    // node goes back (the map is then as a find would have left it).
    typename Map::node_type node = std::move(m_spare.back());
    m_spare.pop_back();
    node.key() = request;
    auto placed = m_map.insert(std::move(node));
    if (!placed.inserted) {
      m_spare.push_back(std::move(placed.node));
      return placed.position->second;
    }
    reset(placed.position->second);
    return placed.position->second;
  }
  iterator find(uint64_t request) { return m_map.find(request); }
  iterator begin() { return m_map.begin(); }
  iterator end() { return m_map.end(); }
  const_iterator begin() const { return m_map.begin(); }
  const_iterator end() const { return m_map.end(); }
  std::size_t size() const { return m_map.size(); }
  // Erase the entry at `it`, keeping its node for a later insertion.
  void erase(iterator it) {
    if (m_spare.size() < k_max_spare) m_spare.push_back(m_map.extract(it));
    else m_map.erase(it);
  }
  // Erase the entry of `request`, if any.
  void erase(uint64_t request) {
    if (auto it = m_map.find(request); it != m_map.end()) erase(it);
  }
  // Erase every entry (and the nodes kept).
  void clear() {
    m_map.clear();
    m_spare.clear();
  }

 private:
  static constexpr std::size_t k_max_spare = 256;
  Map m_map;
  std::vector<typename Map::node_type> m_spare;
};

// A table by request id for a pass whose results do not depend on the
// order of its entries (it looks them up, or sorts what it collects by a
// key that tells them apart): open addressing, linear probing, entries in
// one array. `T` is a small copyable value; a new entry is `T{}`. Thread
// safety: none (one per rank pass).
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
  void erase(uint64_t request) {
    if (m_size == 0) return;
    std::size_t i = slot_of(request);
    for (;; i = (i + 1) & m_mask) {
      if (!m_slots[i].used) return;
      if (m_slots[i].key == request) break;
    }
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

}  // namespace smtrace::analyzer
