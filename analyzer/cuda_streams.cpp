// The stream model of cuda_streams.hpp. The implicit synchronizations follow
// the CUDA runtime's "API synchronization behavior" notes as the seed paper
// reads them (section III-B: where CUDA says "may be synchronous", assume it
// is not, so that a race is reported rather than missed). docs/checks.md,
// "cuda-mpi-race", has the table.
#include "analyzer/cuda_streams.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trace_format/call_semantics.hpp"

namespace smtrace::analyzer {

using format::Call;
using format::Event;
using format::MemoryKind;

namespace {

bool on_host(MemoryKind kind) { return kind == MemoryKind::pageable || kind == MemoryKind::pinned; }

// The kind an allocating call gives its memory when the event does not say
// (cudaMallocHost and cudaHostAlloc: pinned host memory).
MemoryKind allocated_kind(Call call) {
  if (call == Call::cudaMalloc) return MemoryKind::device;
  if (call == Call::cudaMallocManaged) return MemoryKind::managed;
  return MemoryKind::pinned;
}

}  // namespace

void CudaStreams::join(Clock& into, const Clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

uint32_t CudaStreams::stream(uint64_t id, uint32_t thread) {
  const uint32_t owner = id == format::k_per_thread_stream ? thread : 0;
  auto [it, fresh] = m_stream_of.try_emplace({id, owner}, static_cast<uint32_t>(m_streams.size()));
  if (fresh) {
    Stream s;
    s.id = id;
    s.thread = owner;
    // A stream used without its creation in the trace (the tracer started
    // late, or a library created it): assume non-blocking, which orders
    // least and so hides no race.
    s.blocking = id == format::k_per_thread_stream;
    m_streams.push_back(s);
  }
  return it->second;
}

StreamItem CudaStreams::issue(uint32_t s) {
  Stream& st = m_streams[s];
  if (st.id == format::k_legacy_stream) {
    // Figure 3 (ii): legacy default stream work waits for the earlier work
    // of every blocking stream.
    for (const Stream& other : m_streams)
      if (other.blocking) join(st.clock, other.clock);
  } else if (st.blocking) {
    // Figure 3 (i): blocking streams' later work waits for the legacy
    // default stream's earlier work (of any host thread).
    auto legacy = m_stream_of.find({format::k_legacy_stream, 0});
    if (legacy != m_stream_of.end()) join(st.clock, m_streams[legacy->second].clock);
  }
  if (st.clock.size() <= s) st.clock.resize(s + 1, 0);
  return StreamItem{s, ++st.clock[s]};
}

void CudaStreams::host_join(const Clock& clock) {
  join(m_host, clock);
}

void CudaStreams::host_join_all() {
  for (const Stream& s : m_streams) join(m_host, s.clock);
}

CudaStreams::Effect CudaStreams::apply(const Event& e) {
  Effect out;
  if (format::call_family(e.call) != format::Family::cuda || e.rc != 0) return out;
  switch (e.call) {
    case Call::cudaMalloc: case Call::cudaMallocManaged: case Call::cudaMallocHost: case Call::cudaHostAlloc:
      if (e.buf != 0 && e.size != 0) {
        const MemoryKind kind = e.memory != MemoryKind::unspecified ? e.memory : allocated_kind(e.call);
        m_allocations[e.buf] = CudaAllocation{e.buf, e.buf + e.size, kind, e.seq};
      }
      return out;
    case Call::cudaFree: case Call::cudaFreeHost:
      // Section III-B: cudaFree synchronizes the device with the host.
      host_join_all();
      out.host_synchronized = true;
      m_allocations.erase(e.buf);
      return out;
    case Call::cudaStreamCreate: case Call::cudaStreamCreateWithFlags: {
      // A new creation of an id the model knows (hand-written traces may
      // reuse one) starts a fresh stream.
      m_stream_of.erase({e.stream, 0});
      const uint32_t s = stream(e.stream, 0);
      m_streams[s].blocking = (e.flags & format::k_stream_non_blocking) == 0 &&
                              e.stream != format::k_legacy_stream;
      return out;
    }
    case Call::cudaStreamSynchronize: case Call::cudaStreamQuery: {
      const uint32_t s = stream(e.stream, e.thread);
      host_join(m_streams[s].clock);
      // Section IV-A e): synchronizing the legacy default stream also
      // waits for every blocking stream.
      if (m_streams[s].id == format::k_legacy_stream)
        for (const Stream& other : m_streams)
          if (other.blocking) host_join(other.clock);
      out.host_synchronized = true;
      return out;
    }
    case Call::cudaStreamWaitEvent: {
      auto ev = m_events.find(e.cuda_event);
      if (ev != m_events.end()) join(m_streams[stream(e.stream, e.thread)].clock, ev->second);
      return out;
    }
    case Call::cudaDeviceSynchronize:
      host_join_all();
      out.host_synchronized = true;
      return out;
    case Call::cudaEventRecord: {
      const uint32_t s = stream(e.stream, e.thread);
      out.item = issue(s);  // a marker on the stream, with the legacy stream's ordering
      m_events[e.cuda_event] = m_streams[s].clock;
      return out;
    }
    case Call::cudaEventSynchronize: case Call::cudaEventQuery: {
      // An event never recorded counts as done and orders nothing.
      auto ev = m_events.find(e.cuda_event);
      if (ev != m_events.end()) {
        host_join(ev->second);
        out.host_synchronized = true;
      }
      return out;
    }
    case Call::cudaLaunchKernel:
      kernel(e, out);
      return out;
    case Call::cudaMemcpy: case Call::cudaMemcpyAsync:
      copy(e, out);
      return out;
    case Call::cudaMemset: case Call::cudaMemsetAsync: {
      const uint32_t s = stream(e.stream, e.thread);
      out.item = issue(s);
      if (e.size != 0) out.device.push_back(CudaAccess{e.buf, e.buf + e.size, true});
      // Section III-C: cudaMemset is asynchronous except on pinned host
      // memory; cudaMemsetAsync always is.
      if (e.call == Call::cudaMemset && memory_kind(e.buf, e.memory) == MemoryKind::pinned) {
        host_join(m_streams[s].clock);
        out.host_synchronized = true;
      }
      return out;
    }
    // cudaStreamDestroy returns at once; work already on the stream goes on.
    case Call::cudaStreamDestroy:
      return out;
    // Not CUDA (the family test above returned already).
    case Call::unspecified:
#define SMTRACE_CALL(ID, MpiName, number, family, ...) SMTRACE_CASE_UNLESS_CUDA_##family(MpiName)
#include "trace_format/calls.def"
#undef SMTRACE_CALL
      return out;
  }
  return out;
}

void CudaStreams::kernel(const Event& e, Effect& out) {
  const uint32_t s = stream(e.stream, e.thread);
  out.item = issue(s);
  for (const format::KernelArg& a : e.args) {
    if (a.addr == 0) continue;
    uint64_t hi = a.addr + a.size;
    if (a.size == 0) {
      // To the end of the allocation; an address outside every recorded
      // allocation: at least the byte it points at.
      const CudaAllocation* at = allocation(a.addr);
      hi = at ? at->hi : a.addr + 1;
    }
    out.device.push_back(CudaAccess{a.addr, hi, a.access != format::ArgAccess::read});
  }
}

void CudaStreams::copy(const Event& e, Effect& out) {
  // A pointer the event and the allocations say nothing about: the side the
  // copy kind gives it.
  auto kind_of = [&](uint64_t addr, MemoryKind recorded, bool device_side) {
    if (recorded == MemoryKind::unspecified && !allocation(addr) && device_side) return MemoryKind::device;
    return memory_kind(addr, recorded);
  };
  using format::CopyKind;
  const CopyKind k = e.copy_kind;
  const MemoryKind src = kind_of(e.buf, e.memory, k == CopyKind::device_to_host || k == CopyKind::device_to_device);
  const MemoryKind dst =
      kind_of(e.recv_buf, e.recv_memory, k == CopyKind::host_to_device || k == CopyKind::device_to_device);
  const uint32_t s = stream(e.stream, e.thread);
  out.item = issue(s);
  const CudaAccess read{e.buf, e.buf + e.size, false};
  const CudaAccess write{e.recv_buf, e.recv_buf + e.size, true};
  bool synchronous = false;
  if (e.call == Call::cudaMemcpy) {
    // Synchronous with the host except device to device (managed memory
    // counts as device memory).
    synchronous = on_host(src) || on_host(dst);
  } else if (src == MemoryKind::pageable && !on_host(dst)) {
    // Staged: the host copies the pageable source before the call returns;
    // the transfer to the device runs on the stream.
    if (e.size != 0) {
      out.host.push_back(read);
      out.device.push_back(write);
    }
    return;
  } else {
    // To pageable memory, or host to host: returns when the copy is done.
    synchronous = dst == MemoryKind::pageable || (on_host(src) && on_host(dst));
  }
  if (e.size != 0) {
    out.device.push_back(read);
    out.device.push_back(write);
  }
  if (synchronous) {
    host_join(m_streams[s].clock);
    out.host_synchronized = true;
  }
}

const CudaAllocation* CudaStreams::allocation(uint64_t addr) const {
  auto it = m_allocations.upper_bound(addr);
  if (it == m_allocations.begin()) return nullptr;
  --it;
  return addr < it->second.hi ? &it->second : nullptr;
}

MemoryKind CudaStreams::memory_kind(uint64_t addr, MemoryKind recorded) const {
  if (recorded != MemoryKind::unspecified) return recorded;
  const CudaAllocation* at = allocation(addr);
  return at ? at->kind : MemoryKind::pageable;
}

std::string CudaStreams::stream_label(uint32_t s) const {
  if (s >= m_streams.size()) return "?";
  const Stream& st = m_streams[s];
  if (st.id == format::k_legacy_stream) return "the legacy default stream";
  if (st.id == format::k_per_thread_stream) return fmt::format("the per-thread default stream of thread {}", st.thread);
  return fmt::format("stream s#{}", st.id);
}

}  // namespace smtrace::analyzer
