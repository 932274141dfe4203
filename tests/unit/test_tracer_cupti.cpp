// The CUPTI tracer without a GPU: fabricated runtime-API callback data (the
// runtime's <call>_params structs, CUpti_CallbackData) through the pure
// translation (tracer/cupti_translate.hpp) and through the recording path
// into a rank file read back with the reader (tracer/cupti_record.hpp),
// polls folded. Empty when the CUDA toolkit was not found.
#if defined(SMTRACE_HAVE_CUPTI)

#include <doctest/doctest.h>
#include <generated_cuda_runtime_api_meta.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "trace_format/reader.hpp"
#include "tracer/cupti_record.hpp"
#include "tracer/cupti_translate.hpp"
#include "tracer/handlers.hpp"

namespace fs = std::filesystem;
namespace cu = smtrace::tracer::cupti;
namespace h = smtrace::tracer::handlers;
using smtrace::format::ArgAccess;
using smtrace::format::Call;
using smtrace::format::CopyKind;
using smtrace::format::Event;
using smtrace::format::MemoryKind;

namespace {

void* ptr(uint64_t v) { return reinterpret_cast<void*>(v); }
template <class T>
T handle(uint64_t v) {
  return reinterpret_cast<T>(v);
}

// A kernel of three parameters: float* (8 bytes), int (4), const float* (8).
void fake_kernel() {}
bool fake_sizes(const void* func, std::vector<uint32_t>& sizes) {
  if (func != reinterpret_cast<const void*>(&fake_kernel)) return false;
  sizes = {8, 4, 8};
  return true;
}

// Translate one call, ENTER then EXIT, as CUPTI would report it.
Event call(cu::CudaState& state, CUpti_CallbackId cbid, const void* params, int rc = 0,
           cu::Translation* exit = nullptr, const char* symbol = nullptr) {
  Event e;
  cu::translate_enter(state, cbid, params, symbol, e);
  cu::Translation t = cu::translate_exit(state, cbid, params, rc, e);
  if (exit) *exit = t;
  return e;
}

}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::cupti::parse_readonly") {
  std::string problems;
  auto r = cu::parse_readonly("scale:1, ns::axpy:0\n# a comment: x:9\naxpy:2\tbad bad:x ::1", problems);
  REQUIRE(r.size() == 3);
  CHECK(r[0] == cu::ReadonlyArg{"scale", 1});
  CHECK(r[1] == cu::ReadonlyArg{"ns::axpy", 0});
  CHECK(r[2] == cu::ReadonlyArg{"axpy", 2});
  CHECK(problems.find("'bad'") != std::string::npos);
  CHECK(problems.find("'bad:x'") != std::string::npos);
  CHECK(problems.find("'::1'") != std::string::npos);
}

TEST_CASE("tracer::cupti::kernel_names") {
  auto names = cu::kernel_names("_Z5scalePfPKfi");
  CHECK(names == std::vector<std::string>{"_Z5scalePfPKfi", "scale(float*, float const*, int)", "scale"});
  auto templated = cu::kernel_names("_Z4fillIfEvPT_i");  // void fill<float>(float*, int)
  CHECK(templated.back() == "fill<float>");
  CHECK(cu::kernel_names("plain_c_kernel") == std::vector<std::string>{"plain_c_kernel"});
}

TEST_CASE("tracer::cupti::CudaState") {
  cu::CudaState s;
  SUBCASE("allocations") {
    s.add_allocation(0x1000, 0x100, MemoryKind::device);
    s.add_allocation(0x2000, 0, MemoryKind::pinned);
    CHECK(s.kind_of(0x1000) == MemoryKind::device);
    CHECK(s.kind_of(0x10ff) == MemoryKind::device);
    CHECK(s.kind_of(0x1100) == MemoryKind::unspecified);
    CHECK(s.kind_of(0x1100, MemoryKind::pageable) == MemoryKind::pageable);
    CHECK(s.kind_of(0x2000) == MemoryKind::pinned);
    CHECK(s.kind_of(0xfff) == MemoryKind::unspecified);
    CHECK(s.kind_of(0, MemoryKind::pageable) == MemoryKind::unspecified);
    CHECK(s.remove_allocation(0x1000) == MemoryKind::device);
    CHECK(s.find(0x1010) == nullptr);
    CHECK(s.remove_allocation(0x1000) == MemoryKind::unspecified);
  }
  SUBCASE("streams") {
    CHECK(s.stream_id(nullptr, false) == smtrace::format::k_legacy_stream);
    CHECK(s.stream_id(nullptr, true) == smtrace::format::k_per_thread_stream);
    CHECK(s.stream_id(ptr(1), true) == smtrace::format::k_legacy_stream);     // cudaStreamLegacy
    CHECK(s.stream_id(ptr(2), false) == smtrace::format::k_per_thread_stream);  // cudaStreamPerThread
    CHECK(s.new_stream(ptr(0xa0)) == 2);
    CHECK(s.stream_id(ptr(0xa0), false) == 2);
    CHECK(s.stream_id(ptr(0xb0), false) == 3);  // never seen created: a new id
    s.drop_stream(ptr(0xa0));
    CHECK(s.new_stream(ptr(0xa0)) == 4);  // a reused handle is a new stream
  }
  SUBCASE("events") {
    CHECK(s.new_event(ptr(0xe0)) == 1);
    CHECK(s.event_id(ptr(0xe0)) == 1);
    CHECK(s.event_id(ptr(0xe8)) == 2);
    s.drop_event(ptr(0xe0));
    CHECK(s.new_event(ptr(0xe0)) == 3);
  }
}

TEST_CASE("tracer::cupti::translate allocations") {
  cu::CudaState s;
  void* out = ptr(0x7000'0000);
  cudaMalloc_v3020_params malloc_params{&out, 4096};
  Event e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params);
  CHECK(cu::call_of(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020) == Call::cudaMalloc);
  CHECK(e.buf == 0x7000'0000);
  CHECK(e.size == 4096);
  CHECK(e.memory == MemoryKind::device);
  CHECK(s.kind_of(0x7000'0fff) == MemoryKind::device);

  void* managed = ptr(0x8000'0000);
  cudaMallocManaged_v6000_params managed_params{&managed, 64, 1 /* cudaMemAttachGlobal */};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, &managed_params);
  CHECK(e.memory == MemoryKind::managed);
  CHECK(e.flags == 1);

  void* host = ptr(0x9000'0000);
  cudaHostAlloc_v3020_params host_params{&host, 128, 4 /* cudaHostAllocWriteCombined */};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, &host_params);
  CHECK(e.memory == MemoryKind::pinned);
  CHECK(e.flags == 4);
  CHECK(s.kind_of(0x9000'0010) == MemoryKind::pinned);

  // A failed allocation records no pointer and tracks nothing.
  void* failed = ptr(0xa000'0000);
  cudaMalloc_v3020_params failed_params{&failed, 8};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &failed_params, 2 /* cudaErrorMemoryAllocation */);
  CHECK(e.buf == 0);
  CHECK(e.rc == 2);
  CHECK(s.kind_of(0xa000'0000) == MemoryKind::unspecified);

  cudaFree_v3020_params free_params{ptr(0x7000'0000)};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &free_params);
  CHECK(e.buf == 0x7000'0000);
  CHECK(e.memory == MemoryKind::device);  // read at ENTER, before the free
  CHECK(s.kind_of(0x7000'0000) == MemoryKind::unspecified);
  cudaFreeHost_v3020_params free_host{ptr(0x9000'0000)};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, &free_host);
  CHECK(e.memory == MemoryKind::pinned);
  CHECK(s.allocations() == 1);  // the managed one
}

TEST_CASE("tracer::cupti::translate streams and events") {
  cu::CudaState s;
  cudaStream_t stream = handle<cudaStream_t>(0x5100);
  cudaStreamCreateWithFlags_v5000_params create{&stream, 1 /* cudaStreamNonBlocking */};
  Event e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, &create);
  CHECK(e.stream == 2);
  CHECK(e.flags == smtrace::format::k_stream_non_blocking);

  cudaEvent_t event = handle<cudaEvent_t>(0xe100);
  cudaEventCreate_v3020_params event_create{&event};
  CHECK(cu::call_of(CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020) == Call::unspecified);  // bookkeeping only
  call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, &event_create);

  cudaEventRecord_v3020_params record{event, stream};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &record);
  CHECK(e.cuda_event == 1);
  CHECK(e.stream == 2);
  cudaEventRecord_ptsz_v7000_params record_pt{event, nullptr};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000, &record_pt);
  CHECK(e.stream == smtrace::format::k_per_thread_stream);

  cudaStreamWaitEvent_v3020_params wait{nullptr, event, 0};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &wait);
  CHECK(cu::call_of(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020) == Call::cudaStreamWaitEvent);
  CHECK(e.stream == smtrace::format::k_legacy_stream);
  CHECK(e.cuda_event == 1);

  cu::Translation t;
  cudaEventQuery_v3020_params query{event};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &query, 600, &t);
  CHECK(t.not_ready);
  CHECK(e.rc == smtrace::format::k_cuda_not_ready);
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &query, 0, &t);
  CHECK_FALSE(t.not_ready);
  cudaStreamQuery_v3020_params squery{stream};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, &squery, 600, &t);
  CHECK(t.not_ready);
  CHECK(e.stream == 2);

  CHECK(cu::call_of(CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020) == Call::cudaDeviceSynchronize);
  cudaStreamSynchronize_ptsz_v7000_params sync_pt{nullptr};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, &sync_pt);
  CHECK(e.stream == smtrace::format::k_per_thread_stream);

  cudaStreamDestroy_v5050_params destroy{stream};
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050, &destroy);
  CHECK(e.stream == 2);  // read at ENTER
  cudaEventDestroy_v3020_params event_destroy{event};
  call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020, &event_destroy);
  // The runtime hands the same handles out again: new ids.
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, &create);
  CHECK(e.stream == 3);
  call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, &event_create);
  e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &record);
  CHECK(e.cuda_event == 2);
}

TEST_CASE("tracer::cupti::translate copies") {
  cu::CudaState s;
  s.add_allocation(0x7000'0000, 1024, MemoryKind::device);
  s.add_allocation(0x9000'0000, 1024, MemoryKind::pinned);
  s.add_allocation(0x8000'0000, 1024, MemoryKind::managed);
  SUBCASE("HostToDevice from pageable memory") {
    cudaMemcpy_v3020_params p{ptr(0x7000'0010), ptr(0x5555'0000), 256, cudaMemcpyHostToDevice};
    Event e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &p);
    CHECK(e.recv_buf == 0x7000'0010);
    CHECK(e.buf == 0x5555'0000);
    CHECK(e.size == 256);
    CHECK(e.copy_kind == CopyKind::host_to_device);
    CHECK(e.memory == MemoryKind::pageable);
    CHECK(e.recv_memory == MemoryKind::device);
    CHECK(e.stream == smtrace::format::k_legacy_stream);
  }
  SUBCASE("DeviceToHost async into pinned memory") {
    cudaStream_t st = handle<cudaStream_t>(0x5100);
    cudaMemcpyAsync_v3020_params p{ptr(0x9000'0000), ptr(0x7000'0000), 64, cudaMemcpyDeviceToHost, st};
    Event e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
    CHECK(e.copy_kind == CopyKind::device_to_host);
    CHECK(e.memory == MemoryKind::device);
    CHECK(e.recv_memory == MemoryKind::pinned);
    CHECK(e.stream == 2);
  }
  SUBCASE("cudaMemcpyDefault: kinds only from the allocations") {
    cudaMemcpy_ptds_v7000_params p{ptr(0x8000'0000), ptr(0x1234), 8, cudaMemcpyDefault};
    Event e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, &p);
    CHECK(e.copy_kind == CopyKind::inferred);
    CHECK(e.recv_memory == MemoryKind::managed);
    CHECK(e.memory == MemoryKind::unspecified);
    CHECK(e.stream == smtrace::format::k_per_thread_stream);
  }
  SUBCASE("memset") {
    cudaMemsetAsync_v3020_params p{ptr(0x7000'0100), 0, 32, nullptr};
    Event e = call(s, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &p);
    CHECK(cu::call_of(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020) == Call::cudaMemsetAsync);
    CHECK(e.buf == 0x7000'0100);
    CHECK(e.size == 32);
    CHECK(e.memory == MemoryKind::device);
  }
}

TEST_CASE("tracer::cupti::translate kernel launches") {
  cu::CudaState s;
  s.add_allocation(0x7000'0000, 1024, MemoryKind::device);
  s.add_allocation(0x8000'0000, 1024, MemoryKind::managed);
  void* out = ptr(0x7000'0040);    // inside the device allocation
  int n = 0x7000'0000;              // 4 bytes: never a pointer
  void* in = ptr(0x8000'0000);     // the managed allocation
  void* values[] = {&out, &n, &in};
  cudaStream_t st = handle<cudaStream_t>(0x5100);
  cudaLaunchKernel_v7000_params p{reinterpret_cast<const void*>(&fake_kernel), dim3(1), dim3(32), values, 0, st};
  const char* symbol = "_Z6kernelPfiPKf";
  auto launch = [&] {
    Event e;
    cu::Translation t = cu::translate_enter(s, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &p, symbol, e);
    CHECK(t.call == Call::cudaLaunchKernel);
    CHECK(t.kernel == reinterpret_cast<uintptr_t>(&fake_kernel));
    return e;
  };
  SUBCASE("without parameter sizes no argument is read") {
    CHECK(launch().args.empty());
  }
  SUBCASE("pointer arguments inside allocations, default access") {
    s.set_param_sizes(fake_sizes);
    Event e = launch();
    CHECK(e.stream == 2);
    REQUIRE(e.args.size() == 2);
    CHECK(e.args[0] == smtrace::format::KernelArg{0, 0x7000'0040, 0, ArgAccess::unspecified});
    CHECK(e.args[1] == smtrace::format::KernelArg{2, 0x8000'0000, 0, ArgAccess::unspecified});
    out = ptr(0x6000'0000);  // not an allocation: not an argument
    CHECK(launch().args.size() == 1);
  }
  SUBCASE("read-only by name (SMTRACE_CUDA_READONLY) and by function (annotation API)") {
    s.set_param_sizes(fake_sizes);
    s.add_readonly("kernel", 2);
    Event e = launch();
    REQUIRE(e.args.size() == 2);
    CHECK(e.args[0].access == ArgAccess::unspecified);
    CHECK(e.args[1].access == ArgAccess::read);
    s.add_readonly_func(reinterpret_cast<const void*>(&fake_kernel), 0);
    e = launch();
    CHECK(e.args[0].access == ArgAccess::read);
  }
  SUBCASE("cudaLaunchKernelExC: the stream from the launch configuration") {
    s.set_param_sizes(fake_sizes);
    cudaLaunchConfig_t config{};
    config.stream = nullptr;
    cudaLaunchKernelExC_ptsz_v11060_params ex{&config, reinterpret_cast<const void*>(&fake_kernel), values};
    Event e;
    cu::translate_enter(s, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, &ex, symbol, e);
    CHECK(e.stream == smtrace::format::k_per_thread_stream);
    CHECK(e.args.size() == 2);
  }
}

namespace {

struct CudaTrace {
  fs::path dir;
  bool started = false;
  explicit CudaTrace(const std::string& name) {
    dir = fs::temp_directory_path() / ("smtrace-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(dir);
    smtrace::tracer::StartInfo info;
    info.options.dir = dir.string();
    info.options.quiet = true;
    info.install_handlers = false;
    started = h::start(info);
    cu::reset_for_tests();
  }
  ~CudaTrace() {
    h::reset_for_tests();
    cu::reset_for_tests();
    fs::remove_all(dir);
  }
};

uint32_t g_correlation = 0;

// Report runtime call `cbid` with `params` to the recording path: ENTER,
// then EXIT with `rc`, as CUPTI does.
void report(CUpti_CallbackId cbid, const void* params, int rc = 0, const char* symbol = nullptr) {
  CUpti_CallbackData d{};
  uint64_t correlation_data = 0;
  cudaError_t result = static_cast<cudaError_t>(rc);
  d.functionParams = params;
  d.symbolName = symbol;
  d.correlationData = &correlation_data;
  d.correlationId = ++g_correlation;
  d.callbackSite = CUPTI_API_ENTER;
  cu::on_runtime_callback(cbid, d);
  d.callbackSite = CUPTI_API_EXIT;
  d.functionReturnValue = &result;
  cu::on_runtime_callback(cbid, d);
}

uint32_t fake_site(uintptr_t address) { return static_cast<uint32_t>(address & 0xff) + 1000; }

}  // namespace

TEST_CASE("tracer::cupti::recording: bookkeeping while not tracing") {
  // Not tracing (as before MPI_Init): nothing is recorded, but the tables
  // fill, so that later calls resolve an allocation made before MPI_Init.
  cu::reset_for_tests();
  void* early = ptr(0x6000'0000);
  cudaMallocHost_v3020_params early_params{&early, 512};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, &early_params);
  CHECK(cu::allocations() == 1);
}

TEST_CASE("tracer::cupti::recording through the handlers") {
  CudaTrace t("cupti-record");
  REQUIRE(t.started);
  cu::configure(fake_sizes, fake_site);
  CHECK(cu::add_readonly("kernel:2, nonsense").find("'nonsense'") != std::string::npos);

  void* d_buf = ptr(0x7000'0000);
  cudaMalloc_v3020_params malloc_params{&d_buf, 4096};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params);
  cudaStream_t stream = handle<cudaStream_t>(0x5100);
  cudaStreamCreateWithFlags_v5000_params create{&stream, 1};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, &create);
  cudaEvent_t event = handle<cudaEvent_t>(0xe100);
  cudaEventCreate_v3020_params event_create{&event};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, &event_create);  // not recorded

  int n = 4;
  void* values[] = {&d_buf, &n, &d_buf};
  cudaLaunchKernel_v7000_params launch{reinterpret_cast<const void*>(&fake_kernel), dim3(1), dim3(1), values, 0,
                                       stream};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch, 0, "_Z6kernelPfiPKf");
  cudaEventRecord_v3020_params record{event, stream};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &record);
  // A polling loop: 50 not-ready queries, then the ready one.
  cudaEventQuery_v3020_params query{event};
  for (int i = 0; i < 50; ++i) report(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &query, 600);
  report(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &query, 0);
  std::vector<char> host(64);
  cudaMemcpy_v3020_params copy{host.data(), d_buf, host.size(), cudaMemcpyDeviceToHost};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &copy);
  cudaFree_v3020_params free_params{d_buf};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &free_params);
  h::finish(smtrace::format::TerminationKind::finalized, 0, "", true);

  auto r = smtrace::format::read_rank_file(t.dir / "rank-0.smt");
  for (const auto& p : r.problems) MESSAGE(p.to_string());
  CHECK(r.problems.empty());
  std::vector<Call> calls;
  for (const Event& e : r.events) calls.push_back(e.call);
  CHECK(calls == std::vector<Call>{Call::cudaMalloc, Call::cudaStreamCreateWithFlags, Call::cudaLaunchKernel,
                                   Call::cudaEventRecord, Call::cudaEventQuery, Call::cudaEventQuery,
                                   Call::cudaEventQuery, Call::cudaMemcpy, Call::cudaFree});
  REQUIRE(r.events.size() == 9);
  CHECK(r.events[0].buf == 0x7000'0000);
  CHECK(r.events[0].memory == MemoryKind::device);
  CHECK(r.events[1].stream == 2);
  CHECK(r.events[1].flags == 1);
  const Event& k = r.events[2];
  CHECK(k.stream == 2);
  CHECK(k.kernel == fake_site(reinterpret_cast<uintptr_t>(&fake_kernel)));
  REQUIRE(k.args.size() == 2);
  CHECK(k.args[0] == smtrace::format::KernelArg{0, 0x7000'0000, 0, ArgAccess::unspecified});
  CHECK(k.args[1] == smtrace::format::KernelArg{2, 0x7000'0000, 0, ArgAccess::read});
  CHECK(r.events[3].cuda_event == 1);
  // The first poll, the 49 folded after it, the successful one.
  CHECK(r.events[4].rc == 600);
  CHECK(r.events[4].repeat <= 1);
  CHECK(r.events[5].rc == 600);
  CHECK(r.events[5].repeat == 49);
  CHECK(r.events[5].cuda_event == 1);
  CHECK(r.events[6].rc == 0);
  const Event& c = r.events[7];
  CHECK_FALSE(c.pending);
  CHECK(c.copy_kind == CopyKind::device_to_host);
  CHECK(c.memory == MemoryKind::device);
  CHECK(c.recv_memory == MemoryKind::pageable);
  CHECK(c.size == 64);
  CHECK(r.events[8].memory == MemoryKind::device);
  for (const Event& e : r.events) CHECK(e.thread == 0);
}

TEST_CASE("tracer::cupti::recording: calls inside another traced call are not recorded") {
  CudaTrace t("cupti-nested");
  REQUIRE(t.started);
  void* d_buf = ptr(0x7000'0000);
  cudaMalloc_v3020_params malloc_params{&d_buf, 16};
  {
    // A CUDA-aware MPI library's own allocation, inside MPI_Send's wrapper.
    h::CallScope s(Call::Send, 0x401000);
    s.enter();
    report(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params);
    s.leave(0);
  }
  h::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  auto r = smtrace::format::read_rank_file(t.dir / "rank-0.smt");
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].call == Call::Send);
  CHECK(cu::allocations() == 1);  // still tracked
}

TEST_CASE("tracer::cupti::recording: the kernel is a CallSite (handlers::site_id)") {
  CudaTrace t("cupti-kernel-site");
  REQUIRE(t.started);
  cu::configure(nullptr, h::site_id);
  cudaLaunchKernel_v7000_params launch{reinterpret_cast<const void*>(&fake_kernel), dim3(1), dim3(1), nullptr, 0,
                                       nullptr};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch);
  report(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch);
  h::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  auto r = smtrace::format::read_rank_file(t.dir / "rank-0.smt");
  CHECK(r.problems.empty());
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].kernel != 0);
  CHECK(r.events[1].kernel == r.events[0].kernel);
  REQUIRE(r.sites.count(r.events[0].kernel) == 1);
  CHECK(r.sites.at(r.events[0].kernel).offset != 0);
  CHECK(r.events[0].stream == smtrace::format::k_legacy_stream);
  CHECK(h::site_id(0x1234) == 0);  // not recording any more
}

TEST_CASE("tracer::cupti::recording: no usable device switches CUDA tracing off") {
  CudaTrace t("cupti-no-device");
  REQUIRE(t.started);
  cu::configure(nullptr, nullptr, cu::Sites::on, cu::Quiet::yes);
  REQUIRE(cu::on());
  void* out = nullptr;
  cudaMalloc_v3020_params malloc_params{&out, 64};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params, 100 /* cudaErrorNoDevice */);
  CHECK_FALSE(cu::on());
  out = ptr(0x7000'0000);
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params);  // ignored now
  CHECK(cu::allocations() == 0);
  h::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  auto r = smtrace::format::read_rank_file(t.dir / "rank-0.smt");
  REQUIRE(r.events.size() == 1);  // the failing call itself
  CHECK(r.events[0].rc == 100);
  CHECK(r.events[0].buf == 0);
}

TEST_CASE("tracer::cupti::recording: a failure after a success keeps tracing on") {
  CudaTrace t("cupti-later-failure");
  REQUIRE(t.started);
  cu::configure(nullptr, nullptr, cu::Sites::on, cu::Quiet::yes);
  void* out = ptr(0x7000'0000);
  cudaMalloc_v3020_params malloc_params{&out, 64};
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params);
  report(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &malloc_params, 3 /* cudaErrorInitializationError */);
  CHECK(cu::on());
}

TEST_SUITE_END();

#endif  // SMTRACE_HAVE_CUPTI
