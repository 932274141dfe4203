// The CUPTI subscriber of libsmtrace.so (built when the CUDA toolkit is
// found): at load time, in a program that uses the CUDA runtime, it opens
// libcupti with dlopen, subscribes to the runtime-API callbacks and hands
// each to tracer/cupti_record.hpp. Events are written once MPI_Init started
// tracing; calls before that only fill the tables (allocations, streams).
//
// Why dlopen and not a link to libcupti: libsmtrace.so is preloaded into
// every MPI program, most of which never touch CUDA; a DT_NEEDED libcupti
// would load it (tens of MB) into each of them and stop the tracer from
// loading where libcupti is missing.
//
// When CUDA tracing cannot run (libcupti not found, cuptiSubscribe fails:
// no GPU, no driver, another CUPTI subscriber such as a profiler) it
// switches itself off with one notice on stderr; MPI tracing goes on.
//
// SMTRACE_CUDA: auto (default: on when libcudart.so is loaded), on (also a
// runtime linked statically), off. SMTRACE_CUDA_READONLY: read-only kernel
// arguments (docs/tracer.md "CUDA (CUPTI)"). SMTRACE_CUPTI_LIBRARY: the
// libcupti to open.
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tracer/cupti_record.hpp"
#include "tracer/handlers.hpp"
#include "tracer/options.hpp"
#include "tracer/tracer.hpp"

#ifndef SMTRACE_CUPTI_LIBRARY
#define SMTRACE_CUPTI_LIBRARY "libcupti.so"
#endif

namespace smtrace::tracer::cupti {
namespace {

using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using EnableDomainFn = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
using ResultStringFn = CUptiResult (*)(CUptiResult, const char**);
using FuncParamInfoFn = int (*)(const void*, size_t, size_t*, size_t*);

FuncParamInfoFn g_param_info = nullptr;


int find_cudart(dl_phdr_info* info, size_t, void* found) {
  const char* name = info->dlpi_name;
  if (name && std::strstr(name, "libcudart.so")) *static_cast<bool*>(found) = true;
  return 0;
}

// The parameter sizes of a kernel, from the application's runtime
// (cudaFuncGetParamInfo, CUDA 12.4 and later): indices until the runtime
// says there is none.
bool param_sizes(const void* func, std::vector<uint32_t>& sizes) {
  if (!g_param_info) return false;
  for (size_t i = 0; i < 1024; ++i) {
    size_t offset = 0, size = 0;
    if (g_param_info(func, i, &offset, &size) != 0) return true;
    sizes.push_back(static_cast<uint32_t>(size));
  }
  return true;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    on_runtime_callback(cbid, *static_cast<const CUpti_CallbackData*>(data));
}

std::string cupti_error(void* lib, CUptiResult rc) {
  auto result_string = reinterpret_cast<ResultStringFn>(dlsym(lib, "cuptiGetResultString"));
  const char* text = nullptr;
  if (result_string && result_string(rc, &text) == CUPTI_SUCCESS && text) return text;
  return "CUPTI error " + std::to_string(static_cast<int>(rc));
}

__attribute__((constructor)) void start_cupti() {
  Options options = parse_options([](const char* name) { return std::getenv(name); });
  if (options.disable || !options.records(format::Family::cuda)) return;
  const char* mode = std::getenv("SMTRACE_CUDA");
  std::string how = mode && *mode ? mode : "auto";
  if (how == "off" || how == "0") return;
  if (how != "on" && how != "1") {
    bool cudart = false;
    dl_iterate_phdr(find_cudart, &cudart);
    if (!cudart) return;  // not a CUDA program (or a static runtime: SMTRACE_CUDA=on)
  }
  g_param_info = reinterpret_cast<FuncParamInfoFn>(dlsym(RTLD_DEFAULT, "cudaFuncGetParamInfo"));
  const char* sites = std::getenv("SMTRACE_CUDA_SITES");
  configure(&param_sizes, &handlers::site_id, sites && std::strcmp(sites, "0") == 0 ? Sites::off : Sites::on,
            options.quiet ? Quiet::yes : Quiet::no);
  const char* path = std::getenv("SMTRACE_CUPTI_LIBRARY");
  void* lib = nullptr;
  for (const char* candidate : {path, SMTRACE_CUPTI_LIBRARY, "libcupti.so.13", "libcupti.so"})
    if (candidate && *candidate && (lib = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  if (!lib) {
    switch_off(std::string("cannot load libcupti: ") + dlerror());
    return;
  }
  auto subscribe = reinterpret_cast<SubscribeFn>(dlsym(lib, "cuptiSubscribe"));
  auto enable_domain = reinterpret_cast<EnableDomainFn>(dlsym(lib, "cuptiEnableDomain"));
  if (!subscribe || !enable_domain) {
    switch_off("libcupti lacks cuptiSubscribe or cuptiEnableDomain");
    return;
  }
  if (const char* readonly = std::getenv("SMTRACE_CUDA_READONLY"); readonly && *readonly) {
    std::string problems = add_readonly(readonly);
    if (!problems.empty() && !options.quiet && !other_rank()) std::fprintf(stderr, "smtrace: warning: %s\n", problems.c_str());
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult rc = subscribe(&subscriber, on_callback, nullptr);
  if (rc != CUPTI_SUCCESS) {
    switch_off("cuptiSubscribe: " + cupti_error(lib, rc) + " (no GPU or driver, or another CUPTI client)");
    return;
  }
  refresh_modules();
  rc = enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (rc != CUPTI_SUCCESS) {
    switch_off("cuptiEnableDomain: " + cupti_error(lib, rc));
    return;
  }
  // From here CUDA calls are traced while on(): MPI_Init's header says so (no cuda.traced=off).
  handlers::set_cuda_tracing(&on);
  if (!g_param_info && !options.quiet && !other_rank())
    std::fprintf(stderr,
                 "smtrace: notice: cudaFuncGetParamInfo not found (CUDA runtime before 12.4, or linked "
                 "statically): kernel pointer arguments are not recorded\n");
}

}  // namespace
}  // namespace smtrace::tracer::cupti

// The annotation API's read-only kernel argument (include/smtrace/annotate.h).
extern "C" SMTRACE_EXPORT void smtrace_cuda_readonly_impl(const void* kernel, unsigned index) {
  smtrace::tracer::cupti::add_readonly_func(kernel, index);
}
