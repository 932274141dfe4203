// What the load/store runtime watches, decided from the traced MPI calls:
// window memory from MPI_Win_create/allocate/attach until MPI_Win_free or
// detach, the buffers of pending RMA operations until the epoch completes
// them (flush, unlock, fence, complete) or their request does, and the
// buffers of pending non-blocking point-to-point and collective operations
// until their request completes. The runtime only needs the union of all
// those ranges; this file keeps who owns each range, so that a completion
// removes exactly its own.
//
// Everything here is plain values (no MPI): the MPI layer turns handles into
// ids and datatypes into TypeExtent, unit tests call it directly.
//
// Thread safety: none; the tracer serializes calls (access.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::tracer {

// A half-open address range [lo, hi).
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const Range&) const = default;
};

// The facts about a datatype that a buffer's hull needs: where the bytes of
// one element lie relative to its start (true lower bound, true upper
// bound), and the extent from one element to the next.
struct TypeExtent {
  int64_t true_lb = 0;
  int64_t true_ub = 0;
  int64_t extent = 0;
  bool known = false;
};
// Return the TypeExtent of a datatype id (a BasicType value or a DatatypeDef id).
using ExtentOf = std::function<TypeExtent(uint32_t type)>;

// Return the TypeExtent of a flattened derived datatype.
TypeExtent extent_of(const format::DatatypeDef& def);

// The calling rank's place in an operation's communicator.
struct CommFacts {
  int32_t rank = -1;  // -1: unknown (every buffer counts)
  int32_t size = 0;   // remote size for an intercommunicator
  bool inter = false;
  // A topology's neighbours (format::CommPlace), owned by the tracer's
  // tables for the rest of the run; nullptr: none or unknown.
  const std::vector<int32_t>* sources = nullptr;
  const std::vector<int32_t>* destinations = nullptr;
};

// The place of the calling rank in its communicator, as call_buffers takes it.
format::CommPlace comm_place(const CommFacts& comm);

// Append to `out` the ranges of the buffers that `e` hands to MPI beyond
// the call (format::call_buffers: non-blocking and persistent point-to-point
// and collective operations, RMA origin buffers), including those only
// significant at a root when this rank's place is unknown, skipping empty
// buffers and addresses in the first page (NULL). Hulls: a datatype with
// holes is watched whole.
void buffer_ranges(const format::Event& e, const CommFacts& comm, const ExtentOf& extent_of, std::vector<Range>& out);

// The owners of watched ranges and their union.
class WatchSet {
 public:
  // Window memory: `window`'s memory (or an attached region) at `base`.
  void window_memory(uint32_t window, uint64_t base, uint64_t size);
  // MPI_Win_detach: stop watching the region attached at `base`.
  void window_detach(uint32_t window, uint64_t base);
  // MPI_Win_free: stop watching the window's memory and its pending operations.
  void window_free(uint32_t window);
  // A one-sided operation on `window` to `target` (request-based: `request`
  // != 0) started with origin-side buffers `ranges`.
  void rma_started(uint32_t window, int32_t target, uint64_t request, const std::vector<Range>& ranges);
  // The operations on `window` to `target` (all targets: nullopt) completed.
  void rma_completed(uint32_t window, std::optional<int32_t> target);
  // A non-blocking operation with request `request` started with `ranges`
  // (`send`: a point-to-point send).
  void request_started(uint64_t request, const std::vector<Range>& ranges, bool send = false);
  // A persistent request `request` was created for `ranges`; MPI_Start
  // (request_started with no ranges) watches them until completion.
  void persistent_defined(uint64_t request, const std::vector<Range>& ranges, bool send = false);
  // Requests completed: their ranges are no longer in use (a persistent
  // request's stay defined for its next start).
  void requests_completed(const std::vector<uint64_t>& requests);
  // MPI_Request_free: forget `request` (active or persistent), except an
  // active send's ranges: the send goes on (MPI-3.1 section 3.7.3) and no
  // call of the rank ends it, so they stay watched to the end of the run
  // (once each: a range already kept so is not added again), and a store
  // to them is recorded for the analyzer, which asks whether the receive
  // was known complete by then. An active receive freed is forgotten: the
  // analyzer gives it no end, so every later access would count.
  void request_freed(uint64_t request);

  // Return the union of the watched ranges: sorted, disjoint, non-empty.
  const std::vector<Range>& ranges();
  // Return the number of owned ranges (not merged).
  std::size_t owned() const { return m_entries.size(); }

 private:
  enum class Owner : uint8_t { window, rma, request, freed_send };
  struct Entry {
    Range range;
    Owner owner;
    uint32_t window = 0;
    int32_t target = 0;
    uint64_t request = 0;
    bool send = false;  // Owner::request: a point-to-point send's
  };
  struct Persistent {
    std::vector<Range> ranges;
    bool send = false;
  };
  void add(const Entry& entry);
  template <class Pred>
  void remove_if(Pred&& pred);

  std::vector<Entry> m_entries;
  std::vector<Range> m_union;
  bool m_stale = false;  // something was removed: m_union must be rebuilt
  std::unordered_map<uint64_t, Persistent> m_persistent;
};

// Return `ranges` sorted and merged (touching ranges merge too).
std::vector<Range> merge_ranges(std::vector<Range> ranges);

}  // namespace smtrace::tracer
