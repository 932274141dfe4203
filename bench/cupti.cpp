// The CUPTI tracer's cost per CUDA runtime call, without a GPU: CPU ns per
// call of the translation + recording path (tracer/cupti_record.hpp), fed
// fabricated runtime-API callback data (ENTER then EXIT, as CUPTI reports a
// call), against a baseline of the same loop calling an empty callback.
//   bench_cupti [calls]
// Rows: kernel launch (3 parameters, 2 pointer arguments resolved against 64
// allocations), cudaMemcpyAsync, cudaStreamSynchronize (blocking: a pending
// record, then its completion), cudaEventQuery returning cudaErrorNotReady
// (folded polls), cudaMemcpyAsync while not recording (bookkeeping only).
// Columns: the empty callback (baseline), the translation alone (no
// handlers), the whole path, the whole path without call sites
// (SMTRACE_CUDA_SITES=0), and traced minus empty. Best of 5 rounds of thread
// CPU time. The call site search unwinds the stack up to the first frame
// outside the CUDA libraries and the tracer; here that frame is the
// benchmark's own (the tracer is linked in), so the figure is a floor: under
// CUPTI the unwinder also walks the libcupti and libcudart frames.
//
// Not measured: CUPTI's own dispatch (the runtime calling into libcupti and
// libcupti into the subscriber), which needs a GPU; on one, time a program
// with and without SMTRACE_CUDA=off (docs/tracer.md "CUDA (CUPTI)").
#include <generated_cuda_runtime_api_meta.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_clock.h"
#include "tracer/cupti_record.hpp"
#include "tracer/cupti_translate.hpp"
#include "tracer/handlers.hpp"

namespace cu = smtrace::tracer::cupti;
namespace h = smtrace::tracer::handlers;

namespace {

void kernel_stub() {}
bool sizes(const void*, std::vector<uint32_t>& out) {
  out = {8, 4, 8};
  return true;
}

// The baseline: what a subscriber that does nothing costs in this loop.
__attribute__((noinline)) void empty_callback(CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept {
  asm volatile("" : : "r"(cbid), "r"(&data) : "memory");
}

using Callback = void (*)(CUpti_CallbackId, const CUpti_CallbackData&) noexcept;

// Return the best CPU ns per call of `n` calls `cbid` with `params` reported
// to `callback` (ENTER and EXIT returning `rc`).
double per_call(Callback callback, CUpti_CallbackId cbid, const void* params, int rc, long n) {
  double best = 1e18;
  cudaError_t result = static_cast<cudaError_t>(rc);
  uint64_t correlation_data = 0;
  CUpti_CallbackData d{};
  d.functionParams = params;
  d.functionReturnValue = &result;
  d.correlationData = &correlation_data;
  d.symbolName = "_Z6kernelPfiPKf";
  for (int round = 0; round < 5; ++round) {
    int64_t t0 = bench_cpu_ns();
    for (long i = 0; i < n; ++i) {
      d.correlationId = static_cast<uint32_t>(i + 1);
      d.callbackSite = CUPTI_API_ENTER;
      callback(cbid, d);
      d.callbackSite = CUPTI_API_EXIT;
      callback(cbid, d);
    }
    double ns = static_cast<double>(bench_cpu_ns() - t0) / static_cast<double>(n);
    if (ns < best) best = ns;
  }
  return best;
}

__attribute__((noinline)) void translate_only(CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept {
  static cu::CudaState* state = [] {
    auto* s = new cu::CudaState;
    s->set_param_sizes(sizes);
    for (uint64_t k = 0; k < 64; ++k) s->add_allocation(0x7000'0000 + k * 0x10000, 0x1000, smtrace::format::MemoryKind::device);
    return s;
  }();
  static smtrace::format::Event e;
  if (data.callbackSite == CUPTI_API_ENTER) {
    e.args.clear();
    cu::translate_enter(*state, cbid, data.functionParams, data.symbolName, e);
  } else {
    cu::translate_exit(*state, cbid, data.functionParams, 0, e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long n = bench_arg(argc, argv, 1, 200000);
  smtrace::tracer::StartInfo info;
  const char* tmp = std::getenv("TMPDIR");
  info.options.dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/smtrace-bench-cupti";
  info.options.quiet = true;
  info.install_handlers = false;
  if (!h::start(info)) return 1;
  cu::configure(sizes, h::site_id);

  // 64 device allocations, as the program would have made them.
  for (uint64_t k = 0; k < 64; ++k) {
    void* out = reinterpret_cast<void*>(0x7000'0000 + k * 0x10000);
    cudaMalloc_v3020_params p{&out, 0x1000};
    CUpti_CallbackData d{};
    cudaError_t ok = cudaSuccess;
    d.functionParams = &p;
    d.functionReturnValue = &ok;
    d.callbackSite = CUPTI_API_ENTER;
    cu::on_runtime_callback(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, d);
    d.callbackSite = CUPTI_API_EXIT;
    cu::on_runtime_callback(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, d);
  }
  void* a = reinterpret_cast<void*>(0x7000'0000);
  void* b = reinterpret_cast<void*>(0x7001'0040);
  int count = 256;
  void* values[] = {&a, &count, &b};
  cudaStream_t stream = nullptr;
  cudaEvent_t event = reinterpret_cast<cudaEvent_t>(0xe100);
  cudaLaunchKernel_v7000_params launch{reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(256), values, 0,
                                       stream};
  static char host[4096];
  cudaMemcpyAsync_v3020_params copy{host, a, sizeof host, cudaMemcpyDeviceToHost, stream};
  cudaStreamSynchronize_v3020_params sync{stream};
  cudaEventQuery_v3020_params query{event};

  struct Row {
    const char* name;
    CUpti_CallbackId cbid;
    const void* params;
    int rc;
  } rows[] = {
      {"cudaLaunchKernel (2 pointer args)", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch, 0},
      {"cudaMemcpyAsync", CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &copy, 0},
      {"cudaStreamSynchronize (blocking)", CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &sync, 0},
      {"cudaEventQuery not ready (folded)", CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &query, 600},
  };
  std::printf("%-36s %9s %9s %9s %9s %9s\n", "call (ENTER+EXIT), CPU ns", "empty", "translate", "traced", "no sites",
              "overhead");
  for (const Row& r : rows) {
    double base = per_call(empty_callback, r.cbid, r.params, r.rc, n);
    double translate = per_call(translate_only, r.cbid, r.params, r.rc, n);
    cu::configure(sizes, h::site_id, cu::Sites::on);
    double traced = per_call(cu::on_runtime_callback, r.cbid, r.params, r.rc, n);
    cu::configure(sizes, h::site_id, cu::Sites::off);
    double no_sites = per_call(cu::on_runtime_callback, r.cbid, r.params, r.rc, n);
    std::printf("%-36s %9.1f %9.1f %9.1f %9.1f %9.1f\n", r.name, base, translate, traced, no_sites, traced - base);
  }
  h::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  // Not recording (before MPI_Init, after MPI_Finalize, family cuda off):
  // the callback only keeps the tables.
  double base = per_call(empty_callback, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &copy, 0, n);
  double off = per_call(cu::on_runtime_callback, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &copy, 0, n);
  std::printf("%-36s %9.1f %9s %9.1f %9s %9.1f\n", "cudaMemcpyAsync, not recording", base, "-", off, "-", off - base);
  std::remove((info.options.dir + "/rank-0.smt").c_str());
  std::remove((info.options.dir + "/manifest.json").c_str());
  std::remove(info.options.dir.c_str());
}
