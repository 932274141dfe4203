// A list that keeps up to N values in place (SmallList), and IdList, a list
// of op indices that keeps up to two: the model's posts and completions per
// event and the match pairs per op, which are mostly one index each (a send
// posted, one candidate send), without a heap block per list. 16 bytes,
// against std::vector's 24 plus a block of at least 32. It has the part of
// std::vector's interface that the backend uses; values are trivially
// copyable.
//
// Thread safety: a plain value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <vector>

namespace smtrace::smt {

template <class T, uint32_t N>
class SmallList {
  static_assert(std::is_trivially_copyable_v<T> && N >= 1 && N * sizeof(T) >= sizeof(T*));

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallList() = default;
  SmallList(std::initializer_list<T> values) {
    reserve(static_cast<uint32_t>(values.size()));
    for (const T& v : values) push_back(v);
  }
  SmallList(const SmallList& other) { copy_from(other); }
  SmallList(SmallList&& other) noexcept { take(other); }
  SmallList& operator=(const SmallList& other) {
    if (this != &other) {
      clear();
      copy_from(other);
    }
    return *this;
  }
  SmallList& operator=(SmallList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~SmallList() { release(); }

  uint32_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  T* data() { return on_heap() ? m_heap : m_inline; }
  const T* data() const { return on_heap() ? m_heap : m_inline; }
  iterator begin() { return data(); }
  iterator end() { return data() + m_size; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + m_size; }
  T& operator[](uint32_t i) { return data()[i]; }
  const T& operator[](uint32_t i) const { return data()[i]; }
  const T& front() const { return data()[0]; }
  const T& back() const { return data()[m_size - 1]; }

  void push_back(const T& value) {
    if (m_size == capacity()) grow(m_size * 2);
    data()[m_size++] = value;
  }
  void reserve(uint32_t n) {
    if (n > capacity()) grow(n);
  }
  // Keep the first `n` indices, or add zeros up to `n`.
  void resize(std::size_t n) {
    const auto size = static_cast<uint32_t>(n);
    reserve(size);
    std::fill(data() + std::min(m_size, size), data() + size, T{});
    m_size = size;
  }
  // Drop every index (the storage stays).
  void clear() { m_size = 0; }
  // Remove [first, last); return where the next index now is.
  iterator erase(const_iterator first, const_iterator last) {
    T* at = begin() + (first - begin());
    std::copy(last, const_iterator(end()), at);
    m_size -= static_cast<uint32_t>(last - first);
    return at;
  }
  std::vector<T> vector() const { return {begin(), end()}; }

  friend bool operator==(const SmallList& a, const SmallList& b) {
    return a.m_size == b.m_size && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const SmallList& a, const std::vector<T>& b) {
    return a.m_size == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  // Remove the indices for which `pred` holds (std::erase_if's rule); return how many.
  template <class Pred>
  friend uint32_t erase_if(SmallList& list, Pred pred) {
    T* kept = std::remove_if(list.begin(), list.end(), pred);
    const auto gone = static_cast<uint32_t>(list.end() - kept);
    list.m_size -= gone;
    return gone;
  }

 private:
  static constexpr uint32_t k_inline = N;
  bool on_heap() const { return m_capacity > k_inline; }
  uint32_t capacity() const { return m_capacity; }
  void grow(uint32_t n) {
    if (n <= k_inline) return;
    T* block = new T[n];
    std::memcpy(static_cast<void*>(block), data(), m_size * sizeof(T));
    if (on_heap()) delete[] m_heap;
    m_heap = block;
    m_capacity = n;
  }
  void release() {
    if (on_heap()) delete[] m_heap;
    m_capacity = k_inline;
    m_size = 0;
  }
  void copy_from(const SmallList& other) {
    reserve(other.m_size);
    std::memcpy(static_cast<void*>(data()), other.data(), other.m_size * sizeof(T));
    m_size = other.m_size;
  }
  void take(SmallList& other) {
    m_size = other.m_size;
    m_capacity = other.m_capacity;
    if (other.on_heap()) {
      m_heap = other.m_heap;
    } else {
      std::memcpy(static_cast<void*>(m_inline), other.m_inline, sizeof(m_inline));
    }
    other.m_size = 0;
    other.m_capacity = k_inline;
  }

  uint32_t m_size = 0;
  uint32_t m_capacity = k_inline;
  union {
    T m_inline[N] = {};
    T* m_heap;
  };
};

using IdList = SmallList<uint32_t, 2>;
static_assert(sizeof(IdList) == 16);

}  // namespace smtrace::smt
