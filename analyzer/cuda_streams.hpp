// The CUDA stream model of one rank: each stream a timeline of device work
// in happens-before terms, and what the host knows has finished.
//
// After "CUDA-aware MPI races" (Schwitanski et al., seed
// cuda-aware-mpi-races.txt), sections III-A to III-C: the host issues work
// onto streams; work on one stream runs in issue order; the legacy default
// stream (id 0) waits for the earlier work of every blocking stream and every
// blocking stream's later work waits for it (Figure 3); non-blocking streams
// (cudaStreamNonBlocking) take no part in that; the per-thread default
// stream (id 1, one per host thread) is a blocking stream like a created one.
// Synchronization tells the host that work finished: explicitly
// (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, a
// cudaEventQuery or cudaStreamQuery that returned cudaSuccess; between
// streams cudaStreamWaitEvent) or implicitly by the calls and memory kinds of
// section III-B/III-C (docs/checks.md, "cuda-mpi-race", lists each choice).
//
// Clocks: each stream has a vector clock over the streams (entry s = how
// many items of stream s are ordered before, itself included); an item's
// position on its stream is its own entry. The host keeps the join of the
// clocks it synchronized with, so "has item k of stream s finished, as far
// as the host knows" is `host[s] >= k`: O(1). Host threads are one program
// order (seq), as in local-concurrency.
//
// Thread safety: none; one instance per rank, fed from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::analyzer {

// A byte range a CUDA call or an MPI call reads or writes.
struct CudaAccess {
  uint64_t lo = 0, hi = 0;  // [lo, hi)
  bool write = false;
  bool operator==(const CudaAccess&) const = default;
};

// A position on a stream timeline: item `index` (from 1) of stream `stream`
// (the model's own stream number, see CudaStreams::stream_label()).
struct StreamItem {
  uint32_t stream = 0;
  uint64_t index = 0;
  bool operator==(const StreamItem&) const = default;
};

// A recorded allocation (cudaMalloc, cudaMallocManaged, cudaMallocHost,
// cudaHostAlloc).
struct CudaAllocation {
  uint64_t lo = 0, hi = 0;
  format::MemoryKind kind = format::MemoryKind::unspecified;
  uint64_t seq = 0;  // the allocating event
};

class CudaStreams {
 public:
  // What one CUDA call did.
  struct Effect {
    std::optional<StreamItem> item;   // the work it put on a stream, if any
    std::vector<CudaAccess> device;   // that work's accesses (run on the stream)
    std::vector<CudaAccess> host;     // accesses the host made during the call (staged copies)
    bool host_synchronized = false;   // the host learned that some work finished
  };

  // Apply CUDA event `e` (family cuda; other events are ignored), in seq
  // order, and return what it did. Calls that failed (rc other than
  // cudaSuccess) do nothing, except that a query's cudaErrorNotReady is
  // simply no synchronization.
  Effect apply(const format::Event& e);

  // Return true when the host knows that `item` finished.
  bool finished(StreamItem item) const { return known_done(item.stream) >= item.index; }
  // Return the last item of stream `stream` the host knows finished (0: none).
  uint64_t known_done(uint32_t stream) const {
    return stream < m_host.size() ? m_host[stream] : 0;
  }
  // Return the number of streams seen so far (the model's stream numbers are 0..n-1).
  uint32_t streams() const { return static_cast<uint32_t>(m_streams.size()); }
  // Return the trace's name of model stream `stream`: "legacy default
  // stream", "per-thread default stream of thread 2", "stream s#3".
  std::string stream_label(uint32_t stream) const;
  // Return the allocation holding `addr`, or nullptr.
  const CudaAllocation* allocation(uint64_t addr) const;
  // Return where `addr` lives: `recorded` when the event said, else the
  // kind of the allocation holding it, else pageable.
  format::MemoryKind memory_kind(uint64_t addr, format::MemoryKind recorded) const;

 private:
  using Clock = std::vector<uint64_t>;
  struct Stream {
    uint64_t id = 0;          // the trace's stream id
    uint32_t thread = 0;      // per-thread default stream: its host thread
    bool blocking = true;     // takes part in the legacy default stream's ordering
    Clock clock;              // the clock of its last item (and of waits since)
  };

  // Return the model stream of trace stream `id` as used by host thread `thread`.
  uint32_t stream(uint64_t id, uint32_t thread);
  // Put one item on `stream`, ordered after what the legacy rules say;
  // return its position.
  StreamItem issue(uint32_t stream);
  // The host learns that everything ordered before `clock` finished.
  void host_join(const Clock& clock);
  // The host learns that all work of every stream issued so far finished.
  void host_join_all();
  void copy(const format::Event& e, Effect& out);
  void kernel(const format::Event& e, Effect& out);

  static void join(Clock& into, const Clock& from);

  std::vector<Stream> m_streams;
  std::map<std::pair<uint64_t, uint32_t>, uint32_t> m_stream_of;  // (trace id, thread) -> model stream
  std::map<uint64_t, Clock> m_events;                             // CUDA event -> clock of its record
  std::map<uint64_t, CudaAllocation> m_allocations;               // by lo
  Clock m_host;
};

}  // namespace smtrace::analyzer
