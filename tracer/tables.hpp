// Small concurrent tables of the tracer: a spinlock and an open-addressing
// map from handles (MPI handles, return addresses: pointer-sized keys) to
// plain values.
//
// Thread safety: SpinLock and HandleMap are thread safe; each HandleMap has
// its own lock (uncontended: one atomic exchange per operation). A
// LookupCache belongs to one thread (thread_local) and takes no lock on a hit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace smtrace::tracer {

class SpinLock {
 public:
  // Take the lock, spinning while another thread holds it.
  void lock() noexcept {
    while (m_flag.exchange(true, std::memory_order_acquire))
      while (m_flag.load(std::memory_order_relaxed)) __builtin_ia32_pause();
  }
  // Take the lock if it is free; return false at once otherwise.
  bool try_lock() noexcept { return !m_flag.exchange(true, std::memory_order_acquire); }
  // Release the lock.
  void unlock() noexcept { m_flag.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> m_flag{false};
};

// For tables only ever used under another lock.
struct NoLock {
  void lock() noexcept {}
  void unlock() noexcept {}
};

template <class Lock = SpinLock>
class SpinGuard {
 public:
  explicit SpinGuard(Lock& lock) noexcept : m_lock(lock) { m_lock.lock(); }
  ~SpinGuard() { m_lock.unlock(); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

 private:
  Lock& m_lock;
};

// Open-addressing hash map from non-zero pointer-sized keys to `V`, with
// linear probing and tombstones; it grows at 1/2 load. `Lock` = NoLock for
// a map its owner already serializes.
template <class V, class Lock = SpinLock>
class HandleMap {
 public:
  HandleMap() { m_slots.resize(64); }

  // Return true and set `out` when `key` is present.
  bool find(uintptr_t key, V& out) const {
    SpinGuard<Lock> g(m_lock);
    const Slot* s = locate(key);
    if (!s) return false;
    out = s->value;
    return true;
  }
  // Insert or overwrite `key`.
  void insert(uintptr_t key, const V& value) {
    SpinGuard<Lock> g(m_lock);
    bump();
    if (Slot* s = locate(key)) {
      s->value = value;
      return;
    }
    if ((m_used + 1) * 2 > m_slots.size()) rehash(m_size * 4 > m_slots.size() ? m_slots.size() * 2 : m_slots.size());
    place(key, value);
  }
  // Overwrite `key`'s value with `value` when `still(value now)` holds, at
  // once (a thread that made a new handle of that value since is not undone).
  template <class Pred>
  void replace_if(uintptr_t key, Pred still, const V& value) {
    SpinGuard<Lock> g(m_lock);
    Slot* s = locate(key);
    if (!s || !still(s->value)) return;
    bump();
    s->value = value;
  }
  // Remove `key`; return true (and its value in `out`) when it was present.
  bool erase(uintptr_t key, V* out = nullptr) {
    SpinGuard<Lock> g(m_lock);
    Slot* s = locate(key);
    if (!s) return false;
    bump();
    if (out) *out = s->value;
    s->key = k_tombstone;
    --m_size;
    return true;
  }
  // Return the map's generation, which changes with every insert and erase.
  uint64_t generation() const noexcept { return m_generation.load(std::memory_order_acquire); }
  // Return the number of keys.
  std::size_t size() const {
    SpinGuard<Lock> g(m_lock);
    return m_size;
  }
  // Call `f(key, value)` for each entry (under the lock: `f` must not use the map).
  template <class F>
  void for_each(F&& f) const {
    SpinGuard<Lock> g(m_lock);
    for (const auto& s : m_slots)
      if (s.key != k_empty && s.key != k_tombstone) f(s.key, s.value);
  }

 private:
  static constexpr uintptr_t k_empty = 0, k_tombstone = 1;
  struct Slot {
    uintptr_t key = k_empty;
    V value{};
  };
  static std::size_t hash(uintptr_t key) {
    uint64_t h = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
  const Slot* locate(uintptr_t key) const {
    std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = m_slots[i];
      if (s.key == key) return &s;
      if (s.key == k_empty) return nullptr;
    }
  }
  Slot* locate(uintptr_t key) { return const_cast<Slot*>(static_cast<const HandleMap*>(this)->locate(key)); }
  void place(uintptr_t key, const V& value) {
    std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      Slot& s = m_slots[i];
      if (s.key == k_empty || s.key == k_tombstone) {
        if (s.key == k_empty) ++m_used;
        s.key = key;
        s.value = value;
        ++m_size;
        return;
      }
    }
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old;
    old.swap(m_slots);
    m_slots.resize(capacity);
    m_used = m_size = 0;
    for (const auto& s : old)
      if (s.key != k_empty && s.key != k_tombstone) place(s.key, s.value);
  }

  // Under the lock; release: a thread that sees the new generation sees the change.
  void bump() { m_generation.store(m_generation.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  mutable Lock m_lock;
  std::atomic<uint64_t> m_generation{0};
  std::vector<Slot> m_slots;
  std::size_t m_used = 0;  // non-empty slots (keys and tombstones)
  std::size_t m_size = 0;  // keys
};

// One thread's last `N` finds in one HandleMap, valid while the map's
// generation is unchanged: a hit costs no lock and no probe. Any insert or
// erase in the map empties every thread's cache at its next use, so a handle
// freed and reused by MPI is never answered with its old value. Use one
// thread_local LookupCache per map.
template <class V, std::size_t N = 4>
struct LookupCache {
  uint64_t generation = ~uint64_t{0};
  uintptr_t keys[N] = {};  // 0: empty (never a key of a HandleMap)
  V values[N] = {};
  std::size_t next = 0;

  // Return true and set `out` when `map` holds `key`.
  template <class Map>
  bool find(const Map& map, uintptr_t key, V& out) {
    uint64_t g = map.generation();
    if (g == generation) {
      for (std::size_t i = 0; i < N; ++i)
        if (keys[i] == key) {
          out = values[i];
          return true;
        }
    } else {
      for (auto& k : keys) k = 0;
      generation = g;  // what is found below is at least as new as `g`
    }
    if (!map.find(key, out)) return false;
    keys[next] = key;
    values[next] = out;
    next = (next + 1) % N;
    return true;
  }
};

}  // namespace smtrace::tracer
