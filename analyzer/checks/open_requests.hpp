// The requests open on one rank (created, or persistent and defined, and
// neither completed nor freed), kept once for the passes of request-leak
// (which reports those left at the end) and invalid-argument (which asks,
// at an MPI_Start, whether the request is a non-persistent one still
// active): one insertion and one erasure per request where each pass had
// its own table.
//
// Each pass that reads the table calls apply() with every event whose
// call has a request effect; the first call for an event changes the
// table, the others find it done (the Sequencer's EventScope tells one
// event from the next). apply() is idempotent, so outside a scope (a unit
// test feeding a pass by hand) applying it twice changes nothing either.
// What a pass reads of an entry does not depend on whether the event at
// hand was applied yet: an MPI_Start changes only `active`, which
// invalid-argument does not read here. Thread safety: none per table (one
// rank's passes run on one thread); OpenRequestBooks::of is safe to call
// from several threads (open_requests.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "analyzer/cuda_streams.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/rank_data.hpp"
#include "analyzer/request_map.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer::checks {

struct OpenRequest {
  uint64_t seq = 0;  // the creating event
  uint32_t site = 0;
  format::Call call = format::Call::unspecified;
  bool persistent = false;
  bool active = false;  // persistent: started and not completed since
};

// cuda-mpi-race's part of an entry: the buffers of an MPI operation with
// bytes while it is pending (or, persistent, defined). Its own rules
// (cuda_mpi_race.cpp): it is made by the pass at a post with bytes, pending
// posts included; a free leaves it pending to the end (not persistent any
// more); a completion, or MPI_Request_get_status with flag true, ends it
// (a persistent one stays, inactive); a post of its id with bytes replaces it.
struct PendingBuffers {
  CudaAccess block;   // the first block (the only one, mostly)
  uint64_t seq = 0;   // the posting event (of a persistent one: the last MPI_Start)
  uint64_t order = 0; // when active: activations before it on the rank, + 1
  uint32_t site = 0;
  uint32_t more = 0;  // 0: one block; else 1 + the index of all its blocks in OpenRequests' list
  format::Call call = format::Call::unspecified;
  bool active = false;
  bool persistent = false;
};

// One slot of the table: whose it is (request-leak's and invalid-argument's
// open request, cuda-mpi-race's pending buffers, or both).
struct RequestEntry {
  OpenRequest open;
  PendingBuffers buffers;
  bool is_open = false;      // `open` holds (request-leak's rules)
  bool has_buffers = false;  // `buffers` holds (cuda-mpi-race's rules)
};

class OpenRequests {
 public:
  // Apply what event `e` does to the rank's requests (once per event in an
  // EventScope). Calls that failed or never returned change nothing.
  // (Inline in the passes: invalid-argument's, which comes first, does
  // the work for about every request event.)
  [[gnu::always_inline]] void apply(const format::Event& e) {
    const uint64_t scope = detail::t_scope.event == &e ? detail::t_scope.serial : 0;
    if (scope != 0 && scope == m_applied) return;
    m_applied = scope;
    m_made = nullptr;
    if (e.rc != 0 || e.pending) return;
    switch (format::call_traits(e.call).request) {
      case format::RequestEffect::create:
        if (e.request != 0) made(e.request, OpenRequest{e.seq, e.site, e.call, false, true});
        return;
      case format::RequestEffect::persistent:
        if (e.request != 0) made(e.request, OpenRequest{e.seq, e.site, e.call, true, false});
        return;
      case format::RequestEffect::start:
        if (e.requests.empty()) set_active(e.request);
        for (uint64_t r : e.requests) set_active(r);
        return;
      case format::RequestEffect::free:
        // The open request goes; buffers stay pending, not persistent any more.
        m_open.settle(e.request, [this](RequestEntry& s) {
          close(s);
          s.buffers.persistent = false;
          return s.has_buffers;
        });
        return;
      case format::RequestEffect::complete_all: case format::RequestEffect::complete_any:
      case format::RequestEffect::complete_some:
        // One search per request: a persistent one stays, inactive.
        for (const format::CompletedRequest& c : e.completed) {
          m_open.settle(c.request, [this](RequestEntry& s) {
            s.open.active = false;
            if (!s.open.persistent) close(s);
            complete_buffers(s);
            return s.is_open || s.has_buffers;
          });
        }
        return;
      case format::RequestEffect::query:
        // MPI_Request_get_status leaves the request allocated; with flag
        // true its operation is complete (buffers only).
        if (e.flag.value_or(false)) {
          m_open.settle(e.request, [this](RequestEntry& s) {
            complete_buffers(s);
            return s.is_open || s.has_buffers;
          });
        }
        return;
      case format::RequestEffect::none: case format::RequestEffect::cancel:
        return;
    }
  }
  // Return the open request `request`, or nullptr.
  const OpenRequest* find(uint64_t request) {
    const RequestEntry* s = m_open.find(request);
    return s && s->is_open ? &s->open : nullptr;
  }
  // The number of open requests.
  std::size_t size() const { return m_opened; }
  // Call f(request, entry) for each open request, in no particular order.
  template <class F>
  void each(F&& f) const {
    m_open.each([&](uint64_t request, const RequestEntry& s) {
      if (s.is_open) f(request, s.open);
    });
  }

  // cuda-mpi-race's side. The entry that apply() made for event `e` (a
  // post or persistent init that returned, with a request), or nullptr;
  // valid until the table next changes.
  RequestEntry* made() const { return m_made; }
  // The entry of `request`, made (holding nothing) when missing.
  RequestEntry& entry(uint64_t request) { return m_open[request]; }
  // The pending buffers of `request`, or nullptr.
  PendingBuffers* buffers(uint64_t request) {
    RequestEntry* s = m_open.find(request);
    return s && s->has_buffers ? &s->buffers : nullptr;
  }
  // Give `s` the buffers `blocks` (not empty), replacing any it held; the
  // other fields are the caller's to set.
  PendingBuffers& set_buffers(RequestEntry& s, const std::vector<CudaAccess>& blocks) {
    if (!s.has_buffers) {
      s.has_buffers = true;
      ++m_buffered;
    }
    PendingBuffers& b = s.buffers;
    b.block = blocks.front();
    if (blocks.size() == 1) {
      release(b);
      return b;
    }
    if (b.more == 0) {
      if (m_more_free.empty()) {
        m_more.emplace_back();
        b.more = static_cast<uint32_t>(m_more.size());
      } else {
        b.more = m_more_free.back();
        m_more_free.pop_back();
      }
    }
    m_more[b.more - 1].assign(blocks.begin(), blocks.end());
    return b;
  }
  // The blocks of `b`: [first, last).
  std::pair<const CudaAccess*, const CudaAccess*> blocks(const PendingBuffers& b) const {
    if (b.more == 0) return {&b.block, &b.block + 1};
    const std::vector<CudaAccess>& v = m_more[b.more - 1];
    return {v.data(), v.data() + v.size()};
  }
  // The number of entries with pending buffers.
  std::size_t buffered() const { return m_buffered; }
  // Call f(buffers) for each entry with pending buffers, in no particular order.
  template <class F>
  void each_buffers(F&& f) const {
    if (m_buffered == 0) return;
    m_open.each([&](uint64_t, const RequestEntry& s) {
      if (s.has_buffers) f(s.buffers);
    });
  }

 private:
  void made(uint64_t request, const OpenRequest& o) {
    RequestEntry& s = m_open[request];
    if (!s.is_open) ++m_opened;
    s.open = o;
    s.is_open = true;
    m_made = &s;
  }
  void set_active(uint64_t request) {
    if (RequestEntry* s = m_open.find(request); s && s->is_open) s->open.active = true;
  }
  void close(RequestEntry& s) {
    if (s.is_open) --m_opened;
    s.is_open = false;
  }
  // A completion of `s`'s operation, for its buffers: a persistent one stays, inactive.
  void complete_buffers(RequestEntry& s) {
    if (!s.has_buffers) return;
    if (s.buffers.persistent) {
      s.buffers.active = false;
      return;
    }
    s.has_buffers = false;
    --m_buffered;
    release(s.buffers);
  }
  void release(PendingBuffers& b) {
    if (b.more == 0) return;
    m_more_free.push_back(b.more);
    b.more = 0;
  }

  FlatRequestMap<RequestEntry> m_open;
  std::vector<std::vector<CudaAccess>> m_more;  // the blocks of buffers with more than one, by `more` - 1
  std::vector<uint32_t> m_more_free;            // `more` values to reuse
  std::size_t m_buffered = 0;      // entries with has_buffers
  std::size_t m_opened = 0;        // entries with is_open
  RequestEntry* m_made = nullptr;  // the entry the last apply() made, if any
  uint64_t m_applied = 0;  // the EventScope serial of the event applied last (0: none, or out of a scope)
};

// One OpenRequests per rank, for the checks that share them (registry.cpp
// gives request-leak and invalid-argument the same books).
class OpenRequestBooks {
 public:
  // Return the table of rank `data` for a pass of check `who`: the one a
  // pass of another check holds, else a new one (so two passes of one
  // check for the same rank never share one).
  std::shared_ptr<OpenRequests> of(const RankData& data, const void* who);

 private:
  struct Held {
    std::weak_ptr<OpenRequests> book;
    std::vector<const void*> takers;  // the checks whose passes hold it
  };
  std::mutex m_mutex;
  std::map<const RankData*, Held> m_books;
};

}  // namespace smtrace::analyzer::checks
