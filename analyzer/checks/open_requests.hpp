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
#include <vector>

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

class OpenRequests {
 public:
  // Apply what event `e` does to the rank's requests (once per event in an
  // EventScope). Calls that failed or never returned change nothing.
  // (Inline in both passes: invalid-argument's, which comes first, does
  // the work for about every request event.)
  [[gnu::always_inline]] void apply(const format::Event& e) {
    if (first(e)) change(e, format::call_traits(e.call));
  }
  // The same, `t` being e.call's traits (a pass that has them).
  [[gnu::always_inline]] void apply(const format::Event& e, const format::CallTraits& t) {
    if (first(e)) change(e, t);
  }
  // Return the open request `request`, or nullptr.
  const OpenRequest* find(uint64_t request) { return m_open.find(request); }
  std::size_t size() const { return m_open.size(); }
  // Call f(request, entry) for each open request, in no particular order.
  template <class F>
  void each(F&& f) const {
    m_open.each(f);
  }

 private:
  // Return true for the first apply() of `e` (every one out of a scope).
  [[gnu::always_inline]] bool first(const format::Event& e) {
    const uint64_t scope = detail::t_scope.event == &e ? detail::t_scope.serial : 0;
    if (scope != 0 && scope == m_applied) return false;
    m_applied = scope;
    return true;
  }
  [[gnu::always_inline]] void change(const format::Event& e, const format::CallTraits& t) {
    if (e.rc != 0 || e.pending) return;
    switch (t.request) {
      case format::RequestEffect::create:
        if (e.request != 0) m_open[e.request] = OpenRequest{e.seq, e.site, e.call, false, true};
        return;
      case format::RequestEffect::persistent:
        if (e.request != 0) m_open[e.request] = OpenRequest{e.seq, e.site, e.call, true, false};
        return;
      case format::RequestEffect::start:
        if (e.requests.empty()) set_active(e.request);
        for (uint64_t r : e.requests) set_active(r);
        return;
      case format::RequestEffect::free:
        m_open.erase(e.request);
        return;
      case format::RequestEffect::complete_all: case format::RequestEffect::complete_any:
      case format::RequestEffect::complete_some:
        // One search per request: a persistent one stays, inactive.
        for (const format::CompletedRequest& c : e.completed) {
          m_open.settle(c.request, [](OpenRequest& o) {
            o.active = false;
            return o.persistent;
          });
        }
        return;
      case format::RequestEffect::none: case format::RequestEffect::cancel:
      case format::RequestEffect::query:  // MPI_Request_get_status leaves the request allocated
        return;
    }
  }
  void set_active(uint64_t request) {
    if (OpenRequest* o = m_open.find(request)) o->active = true;
  }

  RequestMap<OpenRequest> m_open;
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
