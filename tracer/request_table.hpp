// The ids of the requests a rank has outstanding, by handle value.
//
// MPI may hand one handle value to several operations at once: Open MPI
// returns the same predefined, already completed request for every
// operation that completed when it was started (receives from and sends to
// MPI_PROC_NULL, some zero-count and one-process non-blocking collectives),
// so a handle value alone does not name an operation. The table keeps, per
// handle value, the outstanding requests in creation order; a completion
// call that lists a value k times (after k - 1 earlier positions with the
// same value) takes the k-th oldest of them, so distinct operations keep
// distinct ids.
//
// A handle value that MPI_Request_free freed keeps its id (freed()) until a
// call creates a request of that value again or the handle is forgotten: a
// completion call on a copy of the freed handle (erroneous, MPI-3.1 section
// 3.7.3: the handle is no longer valid) then names the freed request, not a
// new one, so the analyzer sees the use after free.
//
// Thread safety: thread safe (one spinlock, taken once per operation).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tracer/tables.hpp"

namespace smtrace::tracer {

struct RequestInfo {
  uint64_t id = 0;
  uint64_t elem_size = 0;  // receive datatype size, to turn bytes into a count
  bool receive = false;
  bool persistent = false;
};

class RequestTable {
 public:
  // Add `info` as the newest outstanding request of handle value `handle`.
  void add(uintptr_t handle, const RequestInfo& info) {
    SpinGuard<> g(m_lock);
    if (m_freed.size() != 0) m_freed.erase(handle);
    RequestInfo first;
    if (!m_first.find(handle, first)) {
      m_first.insert(handle, info);
      return;
    }
    m_more[handle].push_back(info);
    ++m_more_count;
  }
  // Return true and set `out` to the outstanding request of `handle` that
  // `skip` older ones precede (0: the oldest).
  bool find(uintptr_t handle, RequestInfo& out, std::size_t skip = 0) const {
    SpinGuard<> g(m_lock);
    if (skip == 0) return m_first.find(handle, out);
    if (m_more_count == 0) return false;
    auto it = m_more.find(handle);
    if (it == m_more.end() || skip > it->second.size()) return false;
    out = it->second[skip - 1];
    return true;
  }
  // Remove request `id` of `handle`; return true when it was outstanding.
  bool remove(uintptr_t handle, uint64_t id) {
    SpinGuard<> g(m_lock);
    RequestInfo first;
    if (!m_first.find(handle, first)) return false;
    auto more = m_more_count ? m_more.find(handle) : m_more.end();
    if (first.id == id) {
      if (more == m_more.end()) {
        m_first.erase(handle);
        return true;
      }
      m_first.insert(handle, more->second.front());
      more->second.erase(more->second.begin());
      --m_more_count;
      if (more->second.empty()) m_more.erase(more);
      return true;
    }
    if (more == m_more.end()) return false;
    auto& list = more->second;
    auto at = std::find_if(list.begin(), list.end(), [&](const RequestInfo& r) { return r.id == id; });
    if (at == list.end()) return false;
    list.erase(at);
    --m_more_count;
    if (list.empty()) m_more.erase(more);
    return true;
  }
  // MPI_Request_free freed request `id` of `handle`: remove it, and when no
  // other request of that value is outstanding, remember the value as freed.
  void free(uintptr_t handle, uint64_t id) {
    const bool outstanding = remove(handle, id);
    SpinGuard<> g(m_lock);
    RequestInfo other;
    if (outstanding && !m_first.find(handle, other)) m_freed.insert(handle, id);
  }
  // Return true and set `id` when `handle` has no outstanding request and
  // was last freed by MPI_Request_free as request `id`.
  bool freed(uintptr_t handle, uint64_t& id) const {
    SpinGuard<> g(m_lock);
    RequestInfo other;
    return m_freed.size() != 0 && !m_first.find(handle, other) && m_freed.find(handle, id);
  }
  // Remove every request of `handle` (the handle was freed or reused unseen).
  void forget(uintptr_t handle) {
    SpinGuard<> g(m_lock);
    m_first.erase(handle);
    if (m_freed.size() != 0) m_freed.erase(handle);
    if (m_more_count == 0) return;
    if (auto it = m_more.find(handle); it != m_more.end()) {
      m_more_count -= it->second.size();
      m_more.erase(it);
    }
  }
  // Return true when some handle value has more than one outstanding request.
  bool shared() const {
    SpinGuard<> g(m_lock);
    return m_more_count > 0;
  }

 private:
  mutable SpinLock m_lock;
  HandleMap<RequestInfo, NoLock> m_first;  // the oldest per handle value
  std::unordered_map<uintptr_t, std::vector<RequestInfo>> m_more;  // the others, oldest first
  std::size_t m_more_count = 0;
  HandleMap<uint64_t, NoLock> m_freed;  // freed handle values without an outstanding request
};

}  // namespace smtrace::tracer
