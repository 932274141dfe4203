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
#include <span>
#include <utility>
#include <vector>

#include "analyzer/flat_map.hpp"

namespace smtrace::analyzer {

// Request ids are often aligned addresses: multiply, then fold the high
// bits down.
struct RequestIdHash {
  std::size_t operator()(uint64_t request) const {
    const uint64_t h = request * 0x9e3779b97f4a7c15ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// A table by request id of small values (flat_map.hpp). `T` is a small
// copyable value; a new entry is `T{}`.
template <class T>
using FlatRequestMap = FlatMap<uint64_t, T, RequestIdHash>;

// A table by request id of small values, for the tables that take an
// insertion and an erasure per request. The tracer numbers a rank's
// requests in creation order and most live briefly, so the ids live at
// once are mostly a few consecutive ones: each id has one slot of a
// direct-mapped window (the id modulo its size), and an id whose slot
// another live id holds goes to a FlatRequestMap beside it. An insertion,
// search or erasure in the window is one slot: no hashing, probing or
// shifting. The window grows with the ids alive at once (grow()). Any ids
// work (ids that share slots, aligned addresses say, go to the table
// beside). A reference is valid until the next insertion (which may grow
// the window). `T` is a small copyable value; a new entry is
// `T{}`. each() visits the window in slot order, then the table beside:
// no order a report may depend on.
template <class T>
class RequestMap {
 public:
  // Return the value of `request`, or nullptr.
  [[gnu::always_inline]] T* find(uint64_t request) {
    Slot& s = m_window[request & m_mask];
    if (s.used && s.request == request) return &s.value;
    return m_others.size() == 0 ? nullptr : m_others.find(request);
  }
  // Return the value of `request`, made (as T{}) when missing. A reference
  // is valid until the next insertion.
  [[gnu::always_inline]] T& operator[](uint64_t request) { return get<false>(request); }
  // Return the value of `request` set to T{}, made when missing (one
  // store of T{} either way).
  [[gnu::always_inline]] T& renew(uint64_t request) { return get<true>(request); }
  // Erase the entry of `request`, if any.
  void erase(uint64_t request) {
    Slot& s = m_window[request & m_mask];
    if (s.used && s.request == request) {
      s.used = false;
      --m_in_window;
    } else if (m_others.size() != 0) {
      m_others.erase(request);
    }
  }
  // Erase the entry of `request` and return its value; nullopt when missing.
  [[gnu::always_inline]] std::optional<T> extract(uint64_t request) {
    Slot& s = m_window[request & m_mask];
    if (s.used && s.request == request) {
      s.used = false;
      --m_in_window;
      return std::optional<T>(std::move(s.value));
    }
    if (m_others.size() == 0) return std::nullopt;
    return m_others.extract(request);
  }
  // Call keep(value) for the value of `request`, if any, and erase the
  // entry unless keep returned true.
  template <class F>
  void settle(uint64_t request, F&& keep) {
    Slot& s = m_window[request & m_mask];
    if (s.used && s.request == request) {
      if (!keep(s.value)) {
        s.used = false;
        --m_in_window;
      }
      return;
    }
    if (m_others.size() != 0) m_others.settle(request, keep);
  }
  std::size_t size() const { return m_in_window + m_others.size(); }
  // Call f(request, value) for each entry, in no particular order.
  template <class F>
  void each(F&& f) const {
    if (m_in_window != 0)
      for (const Slot& s : m_window)
        if (s.used) f(s.request, s.value);
    m_others.each(f);
  }
  // Erase every entry (and the storage).
  void clear() {
    m_window.assign(k_first_window, Slot{});
    m_mask = k_first_window - 1;
    m_in_window = 0;
    m_others.clear();
  }

 private:
  struct Slot {
    uint64_t request = 0;
    T value{};
    bool used = false;
  };
  static constexpr std::size_t k_first_window = 16;
  static constexpr std::size_t k_max_window = 1024;
  // operator[] (`reset` false) and renew (true).
  template <bool reset>
  [[gnu::always_inline]] T& get(uint64_t request) {
    Slot* s = &m_window[request & m_mask];
    if (s->used && s->request == request) {
      if constexpr (reset) s->value = T{};
      return s->value;
    }
    if (m_others.size() != 0) {
      if (T* other = m_others.find(request)) {
        if constexpr (reset) *other = T{};
        return *other;
      }
    }
    if (s->used) {
      if (!grow()) return m_others[request];
      s = &m_window[request & m_mask];
      if (s->used) return m_others[request];
    }
    s->request = request;
    s->value = T{};
    s->used = true;
    ++m_in_window;
    return s->value;
  }
  // Double the window when an insertion found its slot held and the
  // window is a quarter full or more (the live ids outgrew it), up to
  // k_max_window; return false when it did not. Entries move to their
  // slots in the new window (an entry whose slot another took goes
  // beside); those beside stay there.
  [[gnu::noinline]] bool grow() {
    if (m_window.size() >= k_max_window || m_in_window * 4 < m_window.size()) return false;
    std::vector<Slot> old(m_window.size() * 2);
    old.swap(m_window);
    m_mask = m_window.size() - 1;
    m_in_window = 0;
    for (const Slot& s : old) {
      if (!s.used) continue;
      Slot& to = m_window[s.request & m_mask];
      if (to.used) {
        m_others[s.request] = s.value;
        continue;
      }
      to = s;
      ++m_in_window;
    }
    return true;
  }
  std::vector<Slot> m_window = std::vector<Slot>(k_first_window);
  uint64_t m_mask = k_first_window - 1;
  std::size_t m_in_window = 0;
  FlatRequestMap<T> m_others;
};

// A table by request id whose values hold vectors: the values lie in one
// array (a reference is valid until the next request is added), found
// through a RequestMap of their places, and an erased request's place,
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
  // Return the value of `request` set to its defaults (operator[] then
  // reset), resetting it once: a new place is made with its defaults, a
  // reused or present one is reset.
  T& renew(uint64_t request) {
    uint32_t& place = m_index[request];
    if (place == 0 && m_free.empty()) {
      m_values.emplace_back();
      m_used.push_back(1);
      place = static_cast<uint32_t>(m_values.size());
      return m_values.back();
    }
    if (place == 0) {
      place = m_free.back() + 1;
      m_free.pop_back();
      m_used[place - 1] = 1;
    }
    reset(m_values[place - 1]);
    return m_values[place - 1];
  }
  // Erase the entry of `request`, if any, keeping its value's storage.
  void erase(uint64_t request) {
    const std::optional<uint32_t> place = m_index.extract(request);
    if (!place) return;
    const uint32_t i = *place - 1;
    m_used[i] = 0;
    m_free.push_back(i);
  }
  // Call keep(value) for the value of `request`, if any, and erase the
  // entry (as erase) unless keep returned true: one search of the index
  // where the entry goes. While keep runs, find(request) does not find it.
  template <class F>
  void settle(uint64_t request, F&& keep) {
    const std::optional<uint32_t> place = m_index.extract(request);
    if (!place) return;
    const uint32_t i = *place - 1;
    if (keep(m_values[i])) {
      m_index[request] = *place;
      return;
    }
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
  RequestMap<uint32_t> m_index;     // request -> 1 + its place in m_values
  std::vector<T> m_values;
  std::vector<uint8_t> m_used;   // per place: 1 while a request holds it
  std::vector<uint32_t> m_free;  // places to reuse, last freed first
};

// A table by request id of pending operations whose value is one block or
// many, for the passes that keep the buffers of each (local-concurrency,
// cuda-mpi-race). An operation of one block (a contiguous buffer: most
// posts) is a small `One` (its `Head` and the block) in a RequestMap, no
// vector; the others (several blocks, or none) are `Many` values in a
// StableRequestMap. `Many` derives from `Head`, holds `std::vector<Block>
// blocks` and has the `reset(Many&)` StableRequestMap asks for. A request
// id is in one of the two tables: making an entry of one shape erases the
// id from the other. Callbacks take `One&` or `Many&` (generic lambdas);
// blocks() gives either's blocks. References are valid until the next
// entry is made. (renew, visit and settle are inline: they run per event.)
template <class Head, class Block, class Many>
class BlockRequestMap {
 public:
  struct One : Head {
    Block block{};
  };

  static std::span<const Block> blocks(const One& op) { return {&op.block, 1}; }
  static std::span<const Block> blocks(const Many& op) { return op.blocks; }

  // Make the entry of `request` a new operation of `blocks` (one: a One;
  // else a Many, reset, with them) and call f on it.
  template <class F>
  [[gnu::always_inline]] void renew(uint64_t request, std::span<const Block> blocks, F&& f) {
    if (blocks.size() == 1) {
      if (m_many.size() != 0) m_many.erase(request);
      One& op = m_one.renew(request);
      op.block = blocks.front();
      f(op);
      return;
    }
    if (m_one.size() != 0) m_one.erase(request);
    Many& op = m_many.renew(request);
    op.blocks.assign(blocks.begin(), blocks.end());
    f(op);
  }
  // Call f on the entry of `request`, if any; return whether there was one.
  template <class F>
  [[gnu::always_inline]] bool visit(uint64_t request, F&& f) {
    if (One* one = m_one.size() != 0 ? m_one.find(request) : nullptr) {
      f(*one);
      return true;
    }
    if (Many* many = m_many.size() != 0 ? m_many.find(request) : nullptr) {
      f(*many);
      return true;
    }
    return false;
  }
  // Call keep on the entry of `request`, if any, and erase it unless keep
  // returned true (one search of each table at most).
  template <class F>
  [[gnu::always_inline]] void settle(uint64_t request, F&& keep) {
    bool one = false;
    m_one.settle(request, [&](One& op) {
      one = true;
      return keep(op);
    });
    if (!one && m_many.size() != 0) m_many.settle(request, keep);
  }
  // Erase the entry of `request`, if any.
  void erase(uint64_t request) {
    if (m_one.size() != 0) m_one.erase(request);
    if (m_many.size() != 0) m_many.erase(request);
  }
  // Return the entry of `request` as a Many: a One moves to the table of
  // Many (its head and its block; the Many's other vectors reset). nullptr
  // when there is none.
  Many* to_many(uint64_t request) {
    if (const std::optional<One> one = m_one.size() != 0 ? m_one.extract(request) : std::nullopt) {
      Many& op = m_many.renew(request);
      static_cast<Head&>(op) = *one;
      op.blocks.assign(1, one->block);
      return &op;
    }
    return m_many.size() != 0 ? m_many.find(request) : nullptr;
  }
  std::size_t size() const { return m_one.size() + m_many.size(); }
  // Call f(request, const One&) for each One, in no particular order.
  template <class F>
  void each_one(F&& f) const {
    if (m_one.size() != 0) m_one.each(f);
  }
  // Call f(Many&) for each Many, in no particular order.
  template <class F>
  void each_many(F&& f) {
    m_many.each(f);
  }

 private:
  RequestMap<One> m_one;
  StableRequestMap<Many> m_many;
};

}  // namespace smtrace::analyzer
