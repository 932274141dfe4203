// The content check of pending send buffers: the bytes a non-blocking
// operation reads (an MPI_Isend's buffer, a started persistent send's, a
// non-blocking collective's input) must not change until its request
// completes (MPI-4.0 3.7.2, 3.7.3). Without the load/store runtime the
// tracer cannot see the program's stores, but it can see their effect: it
// hashes the operation's footprint when the operation is posted (or
// started) and again when a call that may complete the request is entered
// (Wait*, Test*, Request_free), or for an RMA operation without a request
// (MPI_Put, the accumulates: their origin buffer, MPI-4.0 12.3) when the
// synchronization call that completes it at the origin is entered (fence,
// complete, unlock, flush...); a different hash is written as a
// BUFFER_MODIFIED record before that call's event (docs/tracer.md,
// "Content check of pending send buffers").
//
// Everything here is plain values (no MPI): the MPI layer passes the event
// and the datatype lookups; unit tests call it directly.
//
// Thread safety: none; the caller serializes (a spin lock in wrappers.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "tracer/watch.hpp"
#include "trace_format/event.hpp"

namespace smtrace::tracer::content {

// Return a 64-bit hash of `n` bytes at `p` (8 bytes a step, not cryptographic).
uint64_t hash_bytes(const void* p, std::size_t n) noexcept;

// The contiguous pieces of a datatype: (offset from an element's start, length).
struct Piece {
  int64_t offset = 0;
  uint64_t length = 0;
};
// Return the pieces of `def` (its flattened runs), or of a basic type of `size` bytes.
using PiecesOf = std::function<bool(uint32_t type, std::vector<Piece>& pieces, int64_t& extent)>;

// Set `out` to the bytes of `count` elements of a dense type (one piece as
// long as its extent) of `extent` bytes at `base`; return false for none:
// a count or extent not above 0, an address in the first page, a range past
// the end of the address space. input_ranges' rule for such a buffer, and
// the tracer's hot paths' (a send or Put of a basic type).
bool dense_range(uint64_t base, int64_t count, int64_t extent, Range& out) noexcept;

// Append to `out` the byte ranges that `e` hands to MPI to read beyond the
// call: the buffers of call_buffers() read (not written or updated: an
// MPI_IN_PLACE buffer is in/out) whose lifetime is the request's, only those
// this rank surely touches (no `maybe`), each element's contiguous pieces
// (holes are not the operation's), merged. Nothing for a zero-byte
// operation, for addresses in the first page, for more than `max_ranges`
// pieces (then `out` is left empty: too fragmented to hash cheaply).
void input_ranges(const format::Event& e, const CommFacts& comm, const PiecesOf& pieces_of, std::vector<Range>& out,
                  std::size_t max_ranges = 4096);

// Return the hash of the bytes of `ranges` (sorted, disjoint): all of them
// when they hold at most `limit` bytes, else a sample: the first limit/2
// and the last limit/2 bytes of the footprint in address order.
uint64_t hash_ranges(const std::vector<Range>& ranges, uint64_t limit) noexcept;

uint64_t hash_ranges(const Range* ranges, std::size_t n, uint64_t limit) noexcept;

// Sorted disjoint ranges, one of them kept in place (a basic type's buffer:
// no allocation per operation).
class Ranges {
 public:
  void assign(const Range* ranges, std::size_t n) {
    m_n = n;
    if (n == 1) m_one = ranges[0];
    else m_many.assign(ranges, ranges + n);
  }
  const Range* data() const { return m_n == 1 ? &m_one : m_many.data(); }
  std::size_t size() const { return m_n; }
  bool empty() const { return m_n == 0; }
  // The hull: [first's lo, last's hi).
  Range hull() const { return {data()[0].lo, data()[m_n - 1].hi}; }

 private:
  std::size_t m_n = 0;
  Range m_one;
  std::vector<Range> m_many;
};

// What the check keeps per pending operation.
struct Pending {
  uint64_t hash = 0;
  Ranges ranges;
  // An RMA operation with a request (MPI_Rput, MPI_Raccumulate...): the
  // window and target rank whose synchronization also completes it.
  bool rma = false;
  uint32_t window = 0;
  int32_t target = 0;
};

// Pending operations' hashes by request, and persistent requests' ranges.
class Table {
 public:
  explicit Table(uint64_t limit = uint64_t{1} << 20) : m_limit(limit) {}
  // `request` was posted reading `ranges` (create), or a persistent request
  // defined for them (define: no hash until started).
  void posted(uint64_t request, const std::vector<Range>& ranges) { posted(request, ranges.data(), ranges.size()); }
  void posted(uint64_t request, const Range* ranges, std::size_t n);
  void define(uint64_t request, std::vector<Range> ranges);
  // MPI_Start of `request`: hash its defined ranges.
  void started(uint64_t request);
  // A call that may complete `request` is entered: return the ranges' hull
  // when the bytes changed since the post (and forget the hash: once per
  // post), else nothing.
  bool changed(uint64_t request, Range& where);
  // `request` completed: forget its hash (a persistent request keeps its ranges).
  void completed(uint64_t request);
  // MPI_Request_free: forget it all.
  void freed(uint64_t request);

  // An RMA operation without a request (MPI_Put, the accumulates) on window
  // `window` to rank `target` was issued reading `ranges`: pending until a
  // synchronization call completes it at the origin (at most k_rma_pending
  // kept: beyond, new ones are not hashed).
  void rma_issued(uint32_t window, int32_t target, const std::vector<Range>& ranges) {
    rma_issued(window, target, ranges.data(), ranges.size());
  }
  void rma_issued(uint32_t window, int32_t target, const Range* ranges, std::size_t n);
  // An RMA operation with a request on `window` to `target` was posted
  // reading `ranges`: pending until its request completes (MPI-4.0 12.3.5)
  // or a synchronization call completes it (MPI-4.0 12.5: an unlock, a
  // flush or a fence completes every operation of the epoch).
  void rma_posted(uint64_t request, uint32_t window, int32_t target, const Range* ranges, std::size_t n);
  // A synchronization call on `window` completes its operations to `target`
  // (every target when `all_targets`) at the origin (format::EpochStep):
  // append the hull of each whose bytes changed to `changed`, forget them
  // (those with a request too).
  void rma_completed(uint32_t window, int32_t target, bool all_targets, std::vector<Range>& changed);
  static constexpr std::size_t k_rma_pending = 1u << 16;

  // Return true while some operation is hashed (the hot paths ask first).
  bool any() const { return !m_pending.empty() || !m_rma.empty(); }
  std::size_t pending() const { return m_pending.size() + m_rma.size(); }

 private:
  struct RmaPending {
    uint32_t window = 0;
    int32_t target = 0;
    Pending p;
  };
  uint64_t m_limit;
  std::unordered_map<uint64_t, Pending> m_pending;
  std::unordered_map<uint64_t, std::vector<Range>> m_defined;
  std::vector<RmaPending> m_rma;  // in issue order
  std::size_t m_rma_requests = 0;  // entries of m_pending with `rma` set
  void erase(std::unordered_map<uint64_t, Pending>::iterator it);
};

}  // namespace smtrace::tracer::content
