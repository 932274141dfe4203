// CUPTI recording: a CUDA runtime-API callback (CUpti_CallbackData, as CUPTI
// hands it to tracer/cupti.cpp's subscriber, or as a unit test fabricates it)
// becomes one traced call through the handlers, like an MPI call: the ENTER
// callback opens a handlers::CallScope (re-entry guard, start time, for
// blocking calls the pending record), the EXIT callback closes it (rc, end
// time; cudaErrorNotReady queries fold like unsuccessful MPI_Test polls).
// tracer/cupti_translate.hpp fills the event's fields.
//
// Without a GPU CUPTI usually refuses the subscription (tracer/cupti.cpp);
// where it accepts it but the first CUDA calls fail with cudaErrorNoDevice,
// cudaErrorInsufficientDriver, cudaErrorInitializationError or
// cudaErrorStubLibrary before any call succeeded, CUDA tracing switches
// itself off the same way, after recording that call.
//
// The bookkeeping of CudaState (allocations, stream and event ids) runs for
// every callback, recorded or not: calls before MPI_Init, calls made inside
// an MPI call (a CUDA-aware MPI library's own copies, re-entry guard) and
// calls while family cuda is off keep the tables right.
//
// Call sites: a CUPTI callback runs deep inside the CUDA runtime, so the
// call's site is the first frame of the stack outside libcupti, libcudart,
// libcuda and the tracer (modules listed by refresh_modules), found by
// unwinding up to it (about a microsecond a call on a GPU machine's stack
// depth; SMTRACE_CUDA_SITES=0 leaves sites out). A
// runtime linked statically into the program (nvcc's default,
// -cudart static) cannot be told apart from the program: the site is then a
// frame of the runtime, and SMTRACE_STACK_DEPTH > 1 shows the program's frames.
//
// Thread safety: on_runtime_callback may run on any thread at once (one mutex
// around CudaState, then the handlers' own lock; never both held); the
// configuration functions are called before callbacks are enabled.
#pragma once

#include <cupti_callbacks.h>

#include <cstdint>
#include <string>

#include "tracer/cupti_translate.hpp"

namespace smtrace::tracer::cupti {

// Return the CallSite id of code address `address` (Event.kernel of launches).
using KernelSite = uint32_t (*)(uintptr_t address);

// Whether calls get a call site (Sites::off: site 0, no unwinding; SMTRACE_CUDA_SITES=0).
enum class Sites : bool { off, on };
// Whether the notices are printed (SMTRACE_QUIET=1: Quiet::yes).
enum class Quiet : bool { no, yes };

// Set the kernel parameter size source (nullptr: kernel arguments are not
// read), the kernel site resolver (nullptr: Event.kernel stays 0), whether
// calls get call sites and whether notices are printed.
void configure(ParamSizes sizes, KernelSite kernel_site, Sites sites = Sites::on, Quiet quiet = Quiet::no);
// Switch CUDA tracing off for good (callbacks then return at once) with one
// notice on stderr: "smtrace: notice: CUDA tracing off: `why`; MPI tracing
// goes on" (none when quiet, nor on MPI ranks other than 0). Thread safe.
void switch_off(const std::string& why) noexcept;
// Return true while CUDA tracing is on.
bool on() noexcept;
// Return true when the launcher's variables (OMPI_COMM_WORLD_RANK, PMI_RANK,
// PMIX_RANK, SLURM_PROCID) say this process is a rank other than 0.
bool other_rank() noexcept;
// Declare the read-only kernel arguments of `text` (SMTRACE_CUDA_READONLY's
// syntax; "@path" reads them from file `path`); return what could not be
// read ("" when all was fine).
std::string add_readonly(const std::string& text);
// Declare argument `index` of the kernel whose host stub is `func` read-only
// (the annotation API). Thread safe.
void add_readonly_func(const void* func, uint32_t index);
// List the loaded modules whose frames are not call sites (CUDA libraries,
// the tracer); call again after loading more of them.
void refresh_modules();

// Handle one CUPTI_CB_DOMAIN_RUNTIME_API callback `cbid` with `data`.
void on_runtime_callback(CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept;

// Return the number of allocations CudaState holds now.
std::size_t allocations();
// Forget all CUDA state and configuration (unit tests).
void reset_for_tests();

}  // namespace smtrace::tracer::cupti
