#include "tracer/cupti_translate.hpp"

#include <cxxabi.h>
#include <generated_cuda_runtime_api_meta.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace smtrace::tracer::cupti {

using format::Call;
using format::CopyKind;
using format::Event;
using format::MemoryKind;

std::vector<ReadonlyArg> parse_readonly(const std::string& text, std::string& problems) {
  std::vector<ReadonlyArg> out;
  std::size_t i = 0;
  auto complain = [&](const std::string& word) {
    problems += (problems.empty() ? "" : "; ") + std::string("SMTRACE_CUDA_READONLY: '") + word +
                "' is not kernel:index";
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    std::size_t end = text.find_first_of(", \t\r\n#", i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    i = end;
    // The index follows the last colon: C++ names hold "::".
    std::size_t colon = word.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == word.size() || word[colon - 1] == ':') {
      complain(word);
      continue;
    }
    char* stop = nullptr;
    unsigned long index = std::strtoul(word.c_str() + colon + 1, &stop, 10);
    if (*stop != '\0' || index > 1023) {
      complain(word);
      continue;
    }
    out.push_back({word.substr(0, colon), static_cast<uint32_t>(index)});
  }
  return out;
}

std::vector<std::string> kernel_names(const std::string& symbol) {
  std::vector<std::string> names{symbol};
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                   std::free);
  if (status != 0 || !demangled) return names;
  std::string full = demangled.get();
  names.push_back(full);
  // Cut the parameter list (the last top-level parenthesis) and a return
  // type (templates' demangled names start with one).
  std::string base = full;
  int depth = 0;
  for (std::size_t k = base.size(); k-- > 0;) {
    if (base[k] == ')') ++depth;
    if (base[k] == '(' && --depth == 0) {
      base.resize(k);
      break;
    }
  }
  depth = 0;
  for (std::size_t k = 0; k < base.size(); ++k) {
    if (base[k] == '<') ++depth;
    if (base[k] == '>') --depth;
    if (base[k] == ' ' && depth == 0) {
      base.erase(0, k + 1);
      break;
    }
  }
  if (base != full) names.push_back(base);
  return names;
}

void CudaState::add_readonly(const std::string& kernel, uint32_t index) {
  m_readonly_names.emplace(kernel, index);
  m_kernels.clear();  // cached read-only flags are stale
}

void CudaState::add_readonly_func(const void* func, uint32_t index) {
  m_readonly_funcs.emplace(func, index);
  m_kernels.erase(func);
}

void CudaState::add_allocation(uint64_t base, uint64_t size, MemoryKind kind) {
  m_allocations[base] = Allocation{base, size, kind};
}

MemoryKind CudaState::remove_allocation(uint64_t base) {
  auto it = m_allocations.find(base);
  if (it == m_allocations.end()) return MemoryKind::unspecified;
  MemoryKind kind = it->second.kind;
  m_allocations.erase(it);
  return kind;
}

const CudaState::Allocation* CudaState::find(uint64_t addr) const {
  auto it = m_allocations.upper_bound(addr);
  if (it == m_allocations.begin()) return nullptr;
  --it;
  const Allocation& a = it->second;
  // A zero-byte allocation still owns its base address.
  return addr - a.base < std::max<uint64_t>(a.size, 1) ? &a : nullptr;
}

MemoryKind CudaState::kind_of(uint64_t addr, MemoryKind otherwise) const {
  if (addr == 0) return MemoryKind::unspecified;
  const Allocation* a = find(addr);
  return a ? a->kind : otherwise;
}

namespace {
// cudaStreamLegacy and cudaStreamPerThread (driver_types.h), as handles.
const void* const k_handle_legacy = reinterpret_cast<const void*>(0x1);
const void* const k_handle_per_thread = reinterpret_cast<const void*>(0x2);
}  // namespace

uint64_t CudaState::stream_id(const void* handle, bool per_thread) {
  if (handle == nullptr) return per_thread ? format::k_per_thread_stream : format::k_legacy_stream;
  if (handle == k_handle_legacy) return format::k_legacy_stream;
  if (handle == k_handle_per_thread) return format::k_per_thread_stream;
  auto [it, added] = m_streams.try_emplace(handle, m_next_stream);
  if (added) ++m_next_stream;
  return it->second;
}

uint64_t CudaState::new_stream(const void* handle) {
  uint64_t id = m_next_stream++;
  m_streams[handle] = id;
  return id;
}

void CudaState::drop_stream(const void* handle) { m_streams.erase(handle); }

uint64_t CudaState::event_id(const void* handle) {
  auto [it, added] = m_events.try_emplace(handle, m_next_event);
  if (added) ++m_next_event;
  return it->second;
}

uint64_t CudaState::new_event(const void* handle) {
  uint64_t id = m_next_event++;
  m_events[handle] = id;
  return id;
}

void CudaState::drop_event(const void* handle) { m_events.erase(handle); }

const CudaState::Kernel& CudaState::kernel(const void* func, const char* symbol) {
  auto [it, added] = m_kernels.try_emplace(func);
  Kernel& k = it->second;
  if (!added) return k;
  k.sized = m_param_sizes && m_param_sizes(func, k.sizes);
  if (!k.sized) k.sizes.clear();
  k.readonly.assign(k.sizes.size(), false);
  for (const auto& [f, index] : m_readonly_funcs)
    if (f == func && index < k.readonly.size()) k.readonly[index] = true;
  if (symbol && !m_readonly_names.empty()) {
    for (const std::string& name : kernel_names(symbol))
      for (auto r = m_readonly_names.lower_bound({name, 0}); r != m_readonly_names.end() && r->first == name; ++r)
        if (r->second < k.readonly.size()) k.readonly[r->second] = true;
  }
  return k;
}

void CudaState::kernel_args(const void* func, const char* symbol, void* const* values,
                            std::vector<format::KernelArg>& args) {
  if (!func || !values) return;
  const Kernel& k = kernel(func, symbol);
  for (uint32_t i = 0; i < k.sizes.size(); ++i) {
    if (k.sizes[i] != sizeof(uint64_t) || !values[i]) continue;
    uint64_t value;
    std::memcpy(&value, values[i], sizeof value);  // argument values need not be aligned
    if (!find(value)) continue;
    args.push_back({i, value, 0, k.readonly[i] ? format::ArgAccess::read : format::ArgAccess::unspecified});
  }
}

namespace {

// The per-thread-default-stream variants of the runtime (code compiled with
// --default-stream per-thread calls these): a null stream is that thread's.
bool per_thread(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
      return true;
    default:
      return false;
  }
}

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// The memory kinds of a copy's source and destination: what the recorded
// allocations say, else what the direction given implies (the host side of
// a HostToDevice copy not allocated by CUDA is pageable), else unspecified.
void copy_kinds(const CudaState& state, cudaMemcpyKind kind, Event& e) {
  bool src_host = kind == cudaMemcpyHostToHost || kind == cudaMemcpyHostToDevice;
  bool dst_host = kind == cudaMemcpyHostToHost || kind == cudaMemcpyDeviceToHost;
  e.copy_kind = static_cast<unsigned>(kind) <= cudaMemcpyDefault ? static_cast<CopyKind>(kind + 1) : CopyKind::unspecified;
  e.memory = state.kind_of(e.buf, src_host ? MemoryKind::pageable : MemoryKind::unspecified);
  e.recv_memory = state.kind_of(e.recv_buf, dst_host ? MemoryKind::pageable : MemoryKind::unspecified);
}

// A copy of `p` on stream `stream` (null: the default stream).
template <class P>
void memcpy_enter(CudaState& state, const P& p, cudaStream_t stream, bool per_thread, Event& e) {
  e.recv_buf = addr(p.dst);
  e.buf = addr(p.src);
  e.size = p.count;
  copy_kinds(state, p.kind, e);
  e.stream = state.stream_id(stream, per_thread);
}

// A memset of `p` on stream `stream` (null: the default stream).
template <class P>
void memset_enter(CudaState& state, const P& p, cudaStream_t stream, bool per_thread, Event& e) {
  e.buf = addr(p.devPtr);
  e.size = p.count;
  e.memory = state.kind_of(e.buf);
  e.stream = state.stream_id(stream, per_thread);
}

// A launch of kernel `func` with argument array `args` on `stream`.
void launch_enter(CudaState& state, const void* func, void** args, cudaStream_t stream, bool per_thread,
                  const char* symbol, Event& e, Translation& t) {
  e.stream = state.stream_id(stream, per_thread);
  t.kernel = reinterpret_cast<uintptr_t>(func);
  state.kernel_args(func, symbol, args, e.args);
}

}  // namespace

Call call_of(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: return Call::cudaMalloc;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000: return Call::cudaMallocManaged;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020: return Call::cudaMallocHost;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020: return Call::cudaHostAlloc;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: return Call::cudaFree;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020: return Call::cudaFreeHost;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020: return Call::cudaStreamCreate;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050: return Call::cudaStreamCreateWithFlags;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050: return Call::cudaStreamDestroy;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000: return Call::cudaStreamSynchronize;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000: return Call::cudaStreamQuery;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000: return Call::cudaStreamWaitEvent;
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020: return Call::cudaDeviceSynchronize;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010: return Call::cudaEventRecord;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020: return Call::cudaEventSynchronize;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020: return Call::cudaEventQuery;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: return Call::cudaLaunchKernel;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000: return Call::cudaMemcpy;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: return Call::cudaMemcpyAsync;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000: return Call::cudaMemset;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000: return Call::cudaMemsetAsync;
    default: return Call::unspecified;
  }
}

Translation translate_enter(CudaState& state, CUpti_CallbackId cbid, const void* params, const char* symbol,
                            Event& e) {
  Translation t;
  t.call = call_of(cbid);
  if (t.call == Call::unspecified || !params) return t;
  const bool pt = per_thread(cbid);
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
      e.size = static_cast<const cudaMalloc_v3020_params*>(params)->size;
      e.memory = MemoryKind::device;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000: {
      const auto& p = *static_cast<const cudaMallocManaged_v6000_params*>(params);
      e.size = p.size;
      e.flags = p.flags;
      e.memory = MemoryKind::managed;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
      e.size = static_cast<const cudaMallocHost_v3020_params*>(params)->size;
      e.memory = MemoryKind::pinned;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020: {
      const auto& p = *static_cast<const cudaHostAlloc_v3020_params*>(params);
      e.size = p.size;
      e.flags = p.flags;
      e.memory = MemoryKind::pinned;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
      e.buf = addr(static_cast<const cudaFree_v3020_params*>(params)->devPtr);
      e.memory = state.kind_of(e.buf);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020:
      e.buf = addr(static_cast<const cudaFreeHost_v3020_params*>(params)->ptr);
      e.memory = state.kind_of(e.buf);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000:
      e.flags = static_cast<const cudaStreamCreateWithFlags_v5000_params*>(params)->flags;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050:
      e.flags = static_cast<const cudaStreamCreateWithPriority_v5050_params*>(params)->flags;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:  // same layout as v5050's
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050:
      e.stream = state.stream_id(static_cast<const cudaStreamDestroy_v5050_params*>(params)->stream, false);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
      e.stream = state.stream_id(static_cast<const cudaStreamSynchronize_v3020_params*>(params)->stream, pt);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000:
      e.stream = state.stream_id(static_cast<const cudaStreamQuery_v3020_params*>(params)->stream, pt);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000: {
      const auto& p = *static_cast<const cudaStreamWaitEvent_v3020_params*>(params);
      e.stream = state.stream_id(p.stream, pt);
      e.cuda_event = state.event_id(p.event);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000: {
      const auto& p = *static_cast<const cudaEventRecord_v3020_params*>(params);
      e.cuda_event = state.event_id(p.event);
      e.stream = state.stream_id(p.stream, pt);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010: {
      const auto& p = *static_cast<const cudaEventRecordWithFlags_v11010_params*>(params);
      e.cuda_event = state.event_id(p.event);
      e.stream = state.stream_id(p.stream, pt);
      e.flags = p.flags;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
      e.cuda_event = state.event_id(static_cast<const cudaEventSynchronize_v3020_params*>(params)->event);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020:
      e.cuda_event = state.event_id(static_cast<const cudaEventQuery_v3020_params*>(params)->event);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
      const auto& p = *static_cast<const cudaLaunchKernel_v7000_params*>(params);
      launch_enter(state, p.func, p.args, p.stream, pt, symbol, e, t);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto& p = *static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
      launch_enter(state, p.func, p.args, p.config ? p.config->stream : nullptr, pt, symbol, e, t);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000:
      memcpy_enter(state, *static_cast<const cudaMemcpy_v3020_params*>(params), nullptr, pt, e);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: {
      const auto& p = *static_cast<const cudaMemcpyAsync_v3020_params*>(params);
      memcpy_enter(state, p, p.stream, pt, e);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000:
      memset_enter(state, *static_cast<const cudaMemset_v3020_params*>(params), nullptr, pt, e);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000: {
      const auto& p = *static_cast<const cudaMemsetAsync_v3020_params*>(params);
      memset_enter(state, p, p.stream, pt, e);
      break;
    }
    default:
      break;
  }
  return t;
}

namespace {
// Record a new allocation at *`out` of `size` bytes and `kind` in `state` and `e`.
void allocated(CudaState& state, void* const* out, uint64_t size, MemoryKind kind, Event& e) {
  if (!out || !*out) return;
  e.buf = addr(*out);
  state.add_allocation(e.buf, size, kind);
}

// Give the stream created at *`out` its id in `state` and `e`.
void created_stream(CudaState& state, bool ok, const cudaStream_t* out, Event& e) {
  if (ok && out) e.stream = state.new_stream(*out);
}

// Give the CUDA event created at *`out` its id in `state`.
void created_event(CudaState& state, bool ok, const cudaEvent_t* out) {
  if (ok && out) state.new_event(*out);
}
}  // namespace

Translation translate_exit(CudaState& state, CUpti_CallbackId cbid, const void* params, int rc, Event& e) {
  Translation t;
  t.call = call_of(cbid);
  if (!params) return t;
  const bool ok = rc == 0;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
      if (ok) {
        const auto& p = *static_cast<const cudaMalloc_v3020_params*>(params);
        allocated(state, p.devPtr, p.size, MemoryKind::device, e);
      }
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
      if (ok) {
        const auto& p = *static_cast<const cudaMallocManaged_v6000_params*>(params);
        allocated(state, p.devPtr, p.size, MemoryKind::managed, e);
      }
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
      if (ok) {
        const auto& p = *static_cast<const cudaMallocHost_v3020_params*>(params);
        allocated(state, p.ptr, p.size, MemoryKind::pinned, e);
      }
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
      if (ok) {
        const auto& p = *static_cast<const cudaHostAlloc_v3020_params*>(params);
        allocated(state, p.pHost, p.size, MemoryKind::pinned, e);
      }
      break;
    // Stream-ordered allocations are not recorded (no call number) but
    // tracked, so that kernels and copies resolve pointers into them.
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
      if (ok) {
        const auto& p = *static_cast<const cudaMallocAsync_v11020_params*>(params);
        Event scratch;
        allocated(state, p.devPtr, p.size, MemoryKind::device, scratch);
      }
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
      if (ok) state.remove_allocation(addr(static_cast<const cudaFreeAsync_v11020_params*>(params)->devPtr));
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
      if (ok) state.remove_allocation(addr(static_cast<const cudaFree_v3020_params*>(params)->devPtr));
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020:
      if (ok) state.remove_allocation(addr(static_cast<const cudaFreeHost_v3020_params*>(params)->ptr));
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020:
      created_stream(state, ok, static_cast<const cudaStreamCreate_v3020_params*>(params)->pStream, e);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000:
      created_stream(state, ok, static_cast<const cudaStreamCreateWithFlags_v5000_params*>(params)->pStream, e);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050:
      created_stream(state, ok, static_cast<const cudaStreamCreateWithPriority_v5050_params*>(params)->pStream, e);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050:
      if (ok) state.drop_stream(static_cast<const cudaStreamDestroy_v5050_params*>(params)->stream);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020:
      created_event(state, ok, static_cast<const cudaEventCreate_v3020_params*>(params)->event);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020:
      created_event(state, ok, static_cast<const cudaEventCreateWithFlags_v3020_params*>(params)->event);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020:
      if (ok) state.drop_event(static_cast<const cudaEventDestroy_v3020_params*>(params)->event);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020:
      t.not_ready = rc == format::k_cuda_not_ready;
      break;
    default:
      break;
  }
  e.rc = rc;
  return t;
}

}  // namespace smtrace::tracer::cupti
