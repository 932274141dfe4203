// CUPTI translation: what a CUDA runtime-API callback (CUPTI_CB_DOMAIN_RUNTIME_API,
// its callback id and the runtime's parameter struct, cudaMalloc_v3020_params
// and the like) becomes in the trace. A pure function of the callback and of
// CudaState, the tracer's picture of the process's CUDA objects (allocations
// and their memory kinds, stream and CUDA event ids, kernel parameter sizes,
// read-only kernel arguments), so that unit tests feed it fabricated callback
// data without a GPU. Subscribing and recording are tracer/cupti_record.hpp's
// and tracer/cupti.cpp's business.
//
// Every callback is translated twice: at CUPTI_API_ENTER (inputs, read while
// the objects they name still exist: the kind of a buffer being freed, the
// id of a stream being destroyed) and at CUPTI_API_EXIT (outputs and
// bookkeeping: the new pointer, stream or event; allocations, streams and
// events forgotten once destroyed). Bookkeeping runs whether or not the call
// is recorded (before MPI_Init, family cuda off, inside an MPI call), so that
// later calls resolve their pointers.
//
// Kernel arguments: CUPTI gives cudaLaunchKernel's `func` and `args` (an
// array of pointers to the argument values) but not how many arguments there
// are nor their sizes; CudaState asks a ParamSizes function (in the tracer,
// cudaFuncGetParamInfo of the application's runtime), caches the answer per
// kernel, and takes every 8-byte argument whose value lies inside a recorded
// allocation as a pointer argument. Without sizes no argument is read (the
// array's length is unknown; reading past it could fault). CUPTI does not say
// whether a kernel reads or writes: arguments are ArgAccess::unspecified (the
// analyzer takes a write) unless declared read-only (add_readonly,
// SMTRACE_CUDA_READONLY).
//
// Thread safety: none; the tracer keeps one CudaState under a mutex.
#pragma once

#include <cupti_callbacks.h>
#include <cupti_runtime_cbid.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::tracer::cupti {

// The byte sizes of the parameters of kernel `func` (its host stub, as given
// to cudaLaunchKernel); return false when they cannot be had.
using ParamSizes = bool (*)(const void* func, std::vector<uint32_t>& sizes);

// One `kernel:index` of SMTRACE_CUDA_READONLY.
struct ReadonlyArg {
  std::string kernel;
  uint32_t index = 0;
  bool operator==(const ReadonlyArg&) const = default;
};

// Return the `kernel:index` entries of `text` (separated by commas, blanks or
// new lines; `#` starts a comment to the end of the line); append what cannot
// be read to `problems`.
std::vector<ReadonlyArg> parse_readonly(const std::string& text, std::string& problems);

// Return the names `symbol` (a kernel's mangled name, as CUPTI's symbolName
// gives it) is known by: itself, its demangled form, and that without the
// return type and parameter list ("_Z5scalePfPKfi", "scale(float*, float
// const*, int)", "scale").
std::vector<std::string> kernel_names(const std::string& symbol);

// The tracer's picture of the process's CUDA objects.
class CudaState {
 public:
  struct Allocation {
    uint64_t base = 0;
    uint64_t size = 0;
    format::MemoryKind kind = format::MemoryKind::unspecified;
  };

  // Use `sizes` for kernel parameter sizes (nullptr: kernel arguments are not read).
  void set_param_sizes(ParamSizes sizes) { m_param_sizes = sizes; }
  // Declare argument `index` of kernels named `kernel` (any name of
  // kernel_names) read-only.
  void add_readonly(const std::string& kernel, uint32_t index);
  // Declare argument `index` of the kernel whose host stub is `func` read-only.
  void add_readonly_func(const void* func, uint32_t index);

  // Record allocation [`base`, `base` + `size`) of `kind`.
  void add_allocation(uint64_t base, uint64_t size, format::MemoryKind kind);
  // Forget the allocation starting at `base`; return its kind (unspecified if none).
  format::MemoryKind remove_allocation(uint64_t base);
  // Return the recorded allocation holding `addr`, or nullptr.
  const Allocation* find(uint64_t addr) const;
  // Return the kind of the allocation holding `addr`; `otherwise` when none does.
  format::MemoryKind kind_of(uint64_t addr, format::MemoryKind otherwise = format::MemoryKind::unspecified) const;

  // Return the trace id of stream handle `handle`; `per_thread`: the call
  // is a per-thread-default-stream variant (_ptsz, _ptds), where the null
  // handle means cudaStreamPerThread. A handle never seen gets a new id.
  uint64_t stream_id(const void* handle, bool per_thread);
  // Give stream handle `handle` a new id (created now) and return it.
  uint64_t new_stream(const void* handle);
  // Forget stream handle `handle` (destroyed).
  void drop_stream(const void* handle);
  // Return the trace id of CUDA event `handle` (a new one if never seen).
  uint64_t event_id(const void* handle);
  // Give CUDA event `handle` a new id (created now) and return it.
  uint64_t new_event(const void* handle);
  // Forget CUDA event `handle` (destroyed).
  void drop_event(const void* handle);

  // Append to `args` the pointer arguments of a launch of `func` (named
  // `symbol`, may be null) with argument array `values`.
  void kernel_args(const void* func, const char* symbol, void* const* values, std::vector<format::KernelArg>& args);

  // Return the number of allocations recorded now.
  std::size_t allocations() const { return m_allocations.size(); }

 private:
  struct Kernel {
    bool sized = false;
    std::vector<uint32_t> sizes;
    std::vector<bool> readonly;  // by argument index
  };
  const Kernel& kernel(const void* func, const char* symbol);

  std::map<uint64_t, Allocation> m_allocations;  // by base
  std::unordered_map<const void*, uint64_t> m_streams;
  std::unordered_map<const void*, uint64_t> m_events;
  uint64_t m_next_stream = 2;
  uint64_t m_next_event = 1;
  ParamSizes m_param_sizes = nullptr;
  std::unordered_map<const void*, Kernel> m_kernels;
  std::set<std::pair<std::string, uint32_t>> m_readonly_names;
  std::set<std::pair<const void*, uint32_t>> m_readonly_funcs;
};

// What a translated callback says besides the event's fields.
struct Translation {
  format::Call call = format::Call::unspecified;  // unspecified: nothing to record
  uintptr_t kernel = 0;      // cudaLaunchKernel: the kernel's host stub (for Event.kernel)
  bool not_ready = false;    // a query that returned cudaErrorNotReady (a poll to fold)
};

// Return the call that runtime callback `cbid` is recorded as
// (Call::unspecified for calls not recorded).
format::Call call_of(CUpti_CallbackId cbid);

// Translate the CUPTI_API_ENTER callback `cbid` with parameter struct
// `params` (the runtime's <name>_params) and kernel name `symbol` (may be
// null): fill the inputs of `e`.
Translation translate_enter(CudaState& state, CUpti_CallbackId cbid, const void* params, const char* symbol,
                            format::Event& e);
// Translate the CUPTI_API_EXIT callback `cbid` with `params` and the call's
// cudaError_t `rc`: fill the outputs of `e` (for calls that record at exit)
// and update `state`.
Translation translate_exit(CudaState& state, CUpti_CallbackId cbid, const void* params, int rc, format::Event& e);

}  // namespace smtrace::tracer::cupti
