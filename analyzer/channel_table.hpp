// The replay's table of point-to-point channels: (communicator, sender,
// receiver, tag) to the queue of sends posted on it that no receive took
// yet. A queue is its first and last send; the links between its sends are
// kept by the caller (one per send, see Replay::replay), so that the table
// holds a few words per channel however many sends it carries.
// Open addressing with linear probing, entries in one array; no erase (the
// replay makes a channel once and keeps it). Thread safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace smtrace::analyzer {

struct ChannelKey {
  uint32_t comm = 0;  // global communicator index
  uint32_t from = 0;  // world ranks
  uint32_t to = 0;
  int32_t tag = 0;
  bool operator==(const ChannelKey&) const = default;
};

class ChannelTable {
 public:
  static constexpr uint32_t k_empty = std::numeric_limits<uint32_t>::max();
  // The sends of one channel still to be received (indices into the
  // sender's operations), k_empty for none.
  struct Queue {
    uint32_t head = k_empty;
    uint32_t tail = k_empty;
  };

  // Return the queue of `key`, made empty when missing.
  Queue& operator[](const ChannelKey& key) {
    if ((m_size + 1) * 2 > m_slots.size()) grow();
    std::size_t i = slot_of(key);
    for (; m_slots[i].used; i = (i + 1) & m_mask)
      if (m_slots[i].key == key) return m_slots[i].queue;
    m_slots[i] = Slot{key, Queue{}, true};
    ++m_size;
    return m_slots[i].queue;
  }
  // Return the queue of `key`, or nullptr.
  Queue* find(const ChannelKey& key) {
    if (m_size == 0) return nullptr;
    for (std::size_t i = slot_of(key);; i = (i + 1) & m_mask) {
      Slot& s = m_slots[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.queue;
    }
  }
  std::size_t size() const { return m_size; }
  // Call f(key, queue) for each channel, in no particular order.
  template <class F>
  void each(F&& f) {
    for (Slot& s : m_slots)
      if (s.used) f(static_cast<const ChannelKey&>(s.key), s.queue);
  }

 private:
  struct Slot {
    ChannelKey key;
    Queue queue;
    bool used = false;
  };

  std::size_t slot_of(const ChannelKey& k) const {
    uint64_t h = (uint64_t{k.comm} << 32 | k.from) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.to} << 32 | static_cast<uint32_t>(k.tag)) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<std::size_t>(h ^ (h >> 31)) & m_mask;
  }
  void grow() {
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    m_mask = m_slots.size() - 1;
    m_size = 0;
    for (const Slot& s : old)
      if (s.used) (*this)[s.key] = s.queue;
  }

  std::vector<Slot> m_slots;
  std::size_t m_mask = 0;
  std::size_t m_size = 0;
};

}  // namespace smtrace::analyzer
