// A list of op indices that keeps up to two in place: the model's posts and
// completions per event and the match pairs per op, which are mostly one
// index each (a send posted, one candidate send), without a heap block per
// list. 16 bytes, against std::vector's 24 plus a block of at least 32.
// It has the part of std::vector's interface that the backend uses.
//
// Thread safety: a plain value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <vector>

namespace smtrace::smt {

class IdList {
 public:
  using value_type = uint32_t;
  using iterator = uint32_t*;
  using const_iterator = const uint32_t*;

  IdList() = default;
  IdList(std::initializer_list<uint32_t> ids) {
    reserve(static_cast<uint32_t>(ids.size()));
    for (uint32_t id : ids) push_back(id);
  }
  IdList(const IdList& other) { copy_from(other); }
  IdList(IdList&& other) noexcept { take(other); }
  IdList& operator=(const IdList& other) {
    if (this != &other) {
      clear();
      copy_from(other);
    }
    return *this;
  }
  IdList& operator=(IdList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~IdList() { release(); }

  uint32_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  uint32_t* data() { return on_heap() ? m_heap : m_inline; }
  const uint32_t* data() const { return on_heap() ? m_heap : m_inline; }
  iterator begin() { return data(); }
  iterator end() { return data() + m_size; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + m_size; }
  uint32_t& operator[](uint32_t i) { return data()[i]; }
  uint32_t operator[](uint32_t i) const { return data()[i]; }
  uint32_t front() const { return data()[0]; }
  uint32_t back() const { return data()[m_size - 1]; }

  void push_back(uint32_t id) {
    if (m_size == capacity()) grow(m_size * 2);
    data()[m_size++] = id;
  }
  void reserve(uint32_t n) {
    if (n > capacity()) grow(n);
  }
  // Keep the first `n` indices, or add zeros up to `n`.
  void resize(std::size_t n) {
    const auto size = static_cast<uint32_t>(n);
    reserve(size);
    std::fill(data() + std::min(m_size, size), data() + size, 0u);
    m_size = size;
  }
  // Drop every index (the storage stays).
  void clear() { m_size = 0; }
  // Remove [first, last); return where the next index now is.
  iterator erase(const_iterator first, const_iterator last) {
    uint32_t* at = begin() + (first - begin());
    std::copy(last, const_iterator(end()), at);
    m_size -= static_cast<uint32_t>(last - first);
    return at;
  }
  std::vector<uint32_t> vector() const { return {begin(), end()}; }

  friend bool operator==(const IdList& a, const IdList& b) {
    return a.m_size == b.m_size && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const IdList& a, const std::vector<uint32_t>& b) {
    return a.m_size == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  // Remove the indices for which `pred` holds (std::erase_if's rule); return how many.
  template <class Pred>
  friend uint32_t erase_if(IdList& list, Pred pred) {
    uint32_t* kept = std::remove_if(list.begin(), list.end(), pred);
    const auto gone = static_cast<uint32_t>(list.end() - kept);
    list.m_size -= gone;
    return gone;
  }

 private:
  static constexpr uint32_t k_inline = 2;
  bool on_heap() const { return m_capacity > k_inline; }
  uint32_t capacity() const { return m_capacity; }
  void grow(uint32_t n) {
    if (n <= k_inline) return;
    auto* block = new uint32_t[n];
    std::memcpy(block, data(), m_size * sizeof(uint32_t));
    if (on_heap()) delete[] m_heap;
    m_heap = block;
    m_capacity = n;
  }
  void release() {
    if (on_heap()) delete[] m_heap;
    m_capacity = k_inline;
    m_size = 0;
  }
  void copy_from(const IdList& other) {
    reserve(other.m_size);
    std::memcpy(data(), other.data(), other.m_size * sizeof(uint32_t));
    m_size = other.m_size;
  }
  void take(IdList& other) {
    m_size = other.m_size;
    m_capacity = other.m_capacity;
    if (other.on_heap()) {
      m_heap = other.m_heap;
    } else {
      std::memcpy(m_inline, other.m_inline, sizeof(m_inline));
    }
    other.m_size = 0;
    other.m_capacity = k_inline;
  }

  uint32_t m_size = 0;
  uint32_t m_capacity = k_inline;
  union {
    uint32_t m_inline[k_inline] = {};
    uint32_t* m_heap;
  };
};

static_assert(sizeof(IdList) == 16);

}  // namespace smtrace::smt
