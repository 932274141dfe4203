#include "tracer/cupti_record.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unwind.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "tracer/handlers.hpp"
#include "tracer/tracer.hpp"

namespace smtrace::tracer::cupti {

using format::Call;
using format::Event;

namespace {

struct Range {
  uintptr_t lo = 0, hi = 0;
};

struct Global {
  std::mutex mutex;  // around state
  CudaState state;
  KernelSite kernel_site = nullptr;
  std::vector<Range> skip;  // code of CUDA libraries and of the tracer
  bool sites = true;
  bool quiet = false;
  std::atomic<bool> on{true};
  std::atomic<bool> any_success{false};  // a CUDA call returned cudaSuccess
};
// Never destroyed: callbacks may come after static destructors. Built on
// first use: cupti.cpp's load-time constructor may run before this file's
// static initializers.
Global& global() {
  static Global* g = new Global;
  return *g;
}

// Set while this thread runs our callback: runtime calls the tracer makes
// itself (cudaFuncGetParamInfo) call back into us and are ignored.
thread_local bool t_inside SMTRACE_FAST_TLS = false;
// The traced CUDA call open on this thread (one at a time: the re-entry guard).
thread_local std::optional<handlers::CallScope> t_scope;
thread_local uint32_t t_correlation = 0;
thread_local Event t_scratch;  // outputs of calls not recorded

constexpr int k_max_frames = 48;

// A value in CUpti_CallbackData::correlationData marking a call we opened.
constexpr uint64_t k_opened = 0x736d7472;  // "smtr"

bool skipped_module(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* prefix : {"libcupti", "libcudart", "libcuda.", "libsmtrace"})
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

int add_module(dl_phdr_info* info, size_t, void* data) {
  auto& out = *static_cast<std::vector<Range>*>(data);
  Dl_info self;
  bool tracer = dladdr(reinterpret_cast<void*>(&add_module), &self) && self.dli_fbase &&
                reinterpret_cast<uintptr_t>(self.dli_fbase) == info->dlpi_addr && info->dlpi_name &&
                *info->dlpi_name;  // the tracer, unless linked into the executable (unit tests)
  if (!tracer && !(info->dlpi_name && skipped_module(info->dlpi_name))) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
      out.push_back({info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
  }
  return 0;
}

bool skipped(uintptr_t pc, const std::vector<Range>& skip) {
  for (const Range& r : skip)
    if (pc >= r.lo && pc < r.hi) return true;
  return false;
}

struct Walk {
  const std::vector<Range>* skip;
  int frame = 0;
  uintptr_t site = 0;
};

_Unwind_Reason_Code walk_step(_Unwind_Context* context, void* arg) {
  Walk& w = *static_cast<Walk*>(arg);
  uintptr_t pc = _Unwind_GetIP(context);
  if (w.frame++ == 0) return _URC_NO_REASON;  // user_site itself
  if (pc && !skipped(pc, *w.skip)) {
    w.site = pc;
    return _URC_END_OF_STACK;
  }
  return w.frame < k_max_frames ? _URC_NO_REASON : _URC_END_OF_STACK;
}

// Return the first frame of this thread's stack outside the skipped modules
// (0 when none is found or call sites are off). Unwinding stops there, not
// at the bottom of the stack as backtrace() would: the frames below the
// CUDA runtime are the program's, and each costs.
uintptr_t user_site() {
  Global& g = global();
  if (!g.sites) return 0;
  Walk w{&g.skip};
  _Unwind_Backtrace(walk_step, &w);
  return w.site;
}

// Return true for the return codes of a process without a usable device.
bool no_device(int rc) {
  switch (rc) {
    case cudaErrorInitializationError:
    case cudaErrorStubLibrary:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
      return true;
    default:
      return false;
  }
}

int return_code(const CUpti_CallbackData& data) {
  return data.functionReturnValue ? static_cast<int>(*static_cast<const cudaError_t*>(data.functionReturnValue)) : 0;
}

void on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  Global& g = global();
  Call call = call_of(cbid);
  if (call == Call::unspecified || t_scope || !handlers::should_trace(call)) return;
  uintptr_t site = user_site();
  handlers::CallScope& s = t_scope.emplace(call, site);
  Translation t;
  {
    std::lock_guard lock(g.mutex);
    t = translate_enter(g.state, cbid, data.functionParams, data.symbolName, s.e);
  }
  if (t.kernel && g.kernel_site) s.e.kernel = g.kernel_site(t.kernel);
  s.enter();
  t_correlation = data.correlationId;
  if (data.correlationData) *data.correlationData = k_opened;
}

void on_exit(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  Global& g = global();
  bool mine = t_scope && data.correlationId == t_correlation &&
              (!data.correlationData || *data.correlationData == k_opened);
  int rc = return_code(data);
  Event& e = mine ? t_scope->out() : t_scratch;
  Translation t;
  {
    std::lock_guard lock(g.mutex);
    t = translate_exit(g.state, cbid, data.functionParams, rc, e);
  }
  if (rc == 0) {
    g.any_success.store(true, std::memory_order_relaxed);
  } else if (no_device(rc) && !g.any_success.load(std::memory_order_relaxed)) {
    switch_off(std::string(data.functionName ? data.functionName : "a CUDA call") + " returned " +
               std::to_string(rc) + " (no usable device or driver)");
  }
  if (!mine) return;
  if (t.not_ready) t_scope->unsuccessful_poll();
  t_scope->leave(rc);
  t_scope.reset();
}

}  // namespace

void configure(ParamSizes sizes, KernelSite kernel_site, Sites sites, Quiet quiet) {
  Global& g = global();
  std::lock_guard lock(g.mutex);
  g.state.set_param_sizes(sizes);
  g.kernel_site = kernel_site;
  g.sites = sites == Sites::on;
  g.quiet = quiet == Quiet::yes;
}

bool other_rank() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name); v && *v) return std::strcmp(v, "0") != 0;
  return false;
}

void switch_off(const std::string& why) noexcept {
  Global& g = global();
  if (!g.on.exchange(false) || g.quiet || other_rank()) return;
  std::fprintf(stderr, "smtrace: notice: CUDA tracing off: %s; MPI tracing goes on\n", why.c_str());
}

bool on() noexcept { return global().on.load(std::memory_order_relaxed); }

std::string add_readonly(const std::string& text) {
  std::string problems;
  std::string list = text;
  if (!text.empty() && text[0] == '@') {
    std::ifstream in(text.substr(1));
    if (!in) return "SMTRACE_CUDA_READONLY: cannot read " + text.substr(1);
    list.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto entries = parse_readonly(list, problems);
  Global& g = global();
  std::lock_guard lock(g.mutex);
  for (const ReadonlyArg& r : entries) g.state.add_readonly(r.kernel, r.index);
  return problems;
}

void add_readonly_func(const void* func, uint32_t index) {
  Global& g = global();
  std::lock_guard lock(g.mutex);
  g.state.add_readonly_func(func, index);
}

void refresh_modules() {
  Global& g = global();
  std::vector<Range> skip;
  dl_iterate_phdr(add_module, &skip);
  std::lock_guard lock(g.mutex);
  g.skip = std::move(skip);
}

void on_runtime_callback(CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept {
  if (t_inside || (!global().on.load(std::memory_order_relaxed) && !t_scope)) return;
  t_inside = true;
  try {
    if (data.callbackSite == CUPTI_API_ENTER) on_enter(cbid, data);
    else on_exit(cbid, data);
  } catch (...) {
    handlers::count_error();
    if (data.callbackSite == CUPTI_API_EXIT) t_scope.reset();
  }
  t_inside = false;
}

std::size_t allocations() {
  Global& g = global();
  std::lock_guard lock(g.mutex);
  return g.state.allocations();
}

void reset_for_tests() {
  Global& g = global();
  std::lock_guard lock(g.mutex);
  g.state = CudaState{};
  g.kernel_site = nullptr;
  g.sites = true;
  g.quiet = false;
  g.on.store(true);
  g.any_success.store(false);
  t_scope.reset();
}

}  // namespace smtrace::tracer::cupti
