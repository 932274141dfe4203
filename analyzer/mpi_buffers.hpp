// The buffers an MPI call reads and writes at the calling rank, addresses
// resolved: format::call_buffers (which says what each call touches, and
// for how long) given this rank's place in the call's communicator, blocks
// at their displacements (extents from the rank's datatypes), with their
// bytes. Shared by local-concurrency, cuda-mpi-race and rma-race: computed
// once per event for all of them (EventScope).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "analyzer/footprint.hpp"
#include "analyzer/rank_data.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer {

// Return rank `data`'s place in communicator `comm`: its rank there (if
// known), the size (the remote group's for an intercommunicator; 0 when
// unknown), whether it is an intercommunicator, and a topology's neighbours
// (pointers into `data`'s CommDef: valid while `data` is).
format::CommPlace comm_place(const RankData& data, uint32_t comm);

// Return true when format::call_buffers gives every call of layout
// `layout` one buffer, whatever the event: Event.buf at offset 0, Event.count
// elements of Event.datatype, BufferArg::buf, never `maybe` (the sends and
// receives, their persistent inits, Mrecv, Imrecv: most events). A reader
// of event_call_buffers that needs only these fields of such a call may
// read the event instead (invalid-argument does: the memo is then not
// computed for it).
constexpr bool one_buffer(format::BufferLayout layout) {
  return layout == format::BufferLayout::send || layout == format::BufferLayout::recv;
}

// One buffer (or block of one) of an MPI call at the calling rank.
struct CallBuffer {
  uint64_t addr = 0;  // where it starts
  int64_t count = 0;  // elements of `datatype`
  uint32_t datatype = 0;
  format::BufferAccess access = format::BufferAccess::read;
  format::Lifetime lifetime = format::Lifetime::call;
  format::BufferArg arg = format::BufferArg::buf;
};
using BufferSink = std::function<void(const CallBuffer& buffer)>;

// Return true when `access` writes (an update reads and writes: for
// conflicts it counts as a write).
constexpr bool writes(format::BufferAccess access) { return access != format::BufferAccess::read; }

// One buffer of an MPI call and its bytes: Footprint::add's pieces
// EventBuffers::pieces[first, last).
struct BufferBytes {
  CallBuffer buffer;
  uint32_t first = 0, last = 0;
};
// The buffers of one MPI call at the calling rank, and their bytes.
struct EventBuffers {
  std::vector<BufferBytes> buffers;
  std::vector<Strided> pieces;
};

namespace detail {
// This thread's open EventScope: its event (nullptr: none) and its serial,
// one more than the scope before's (an event object is reused for the next
// event: what was computed in another scope is not this one's); and the
// memo: what event_buffers and event_call_buffers last computed on this
// thread, valid while the scope it was computed in (its serial; 0: none)
// is open, for the rank data it was computed for.
struct Scope {
  const format::Event* event = nullptr;
  uint64_t serial = 0;
  uint64_t buffers_serial = 0;
  const RankData* buffers_data = nullptr;
  const EventBuffers* buffers = nullptr;
  uint64_t raw_serial = 0;
  const RankData* raw_data = nullptr;
  const std::vector<format::Buffer>* raw = nullptr;
};
inline thread_local Scope t_scope;
// Compute into this thread's memo (mpi_buffers.cpp).
const EventBuffers& compute_buffers(const format::Event& e, const RankData& data);
const std::vector<format::Buffer>& compute_raw(const format::Event& e, const RankData& data);
}  // namespace detail

// Return the buffers MPI call `e` reads or writes at rank `data`
// (format::call_buffers): those it is sure of (a buffer that matters only if
// this rank is a root it cannot place is left out), at this rank (not an
// RMA call's target memory), of MPI calls (not annotated or captured
// accesses); v/w collectives give one buffer per block, at its
// displacement. Each with its bytes (Footprint(data).add: none for an
// unknown datatype or a count <= 0).
// Computed once per event while an EventScope of `e` is open on this
// thread (the checks' passes of one event share it), else on every call.
// The result is valid until the next call of it or of event_call_buffers
// on this thread.
inline const EventBuffers& event_buffers(const format::Event& e, const RankData& data);

// Return format::call_buffers(e, place, out, NullBuffers::keep) into an
// empty `out`, `place` being comm_place(data, e.comm) for a collective and
// no place otherwise: every buffer MPI call `e` names, NULL ones included
// (invalid-argument's view). Computed once per event in an EventScope, as
// event_buffers (which is derived from it); valid until the next call of
// either on this thread.
inline const std::vector<format::Buffer>& event_call_buffers(const format::Event& e, const RankData& data);

// Marks `e` as the event being handed to the rank passes of this thread:
// event_buffers() of `e` is computed at most once while it lives. `e` must
// not change meanwhile. Not nested. (Inline: the Sequencer opens one per
// event.)
class EventScope {
 public:
  explicit EventScope(const format::Event& e) {
    detail::t_scope.event = &e;
    ++detail::t_scope.serial;
  }
  ~EventScope() { detail::t_scope.event = nullptr; }
  EventScope(const EventScope&) = delete;
  EventScope& operator=(const EventScope&) = delete;
};

// (The memo's hits, most calls, inline.)
inline const EventBuffers& event_buffers(const format::Event& e, const RankData& data) {
  const detail::Scope& s = detail::t_scope;
  if (s.event == &e && s.buffers_serial == s.serial && s.buffers_data == &data) return *s.buffers;
  return detail::compute_buffers(e, data);
}

inline const std::vector<format::Buffer>& event_call_buffers(const format::Event& e, const RankData& data) {
  const detail::Scope& s = detail::t_scope;
  if (s.event == &e && s.raw_serial == s.serial && s.raw_data == &data) return *s.raw;
  return detail::compute_raw(e, data);
}

// Call `sink` for each buffer of event_buffers(e, data) (without its bytes).
void mpi_buffers(const format::Event& e, const RankData& data, const BufferSink& sink);

}  // namespace smtrace::analyzer
