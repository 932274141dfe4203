// The CUDA stream model (analyzer/cuda_streams.hpp) on events built in
// memory, and the cuda-mpi-race check on small JSON traces: the cases of the
// seed paper cuda-aware-mpi-races.txt (Figure 3 and section III-B/III-C).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/checks/checks.hpp"
#include "analyzer/cuda_streams.hpp"
#include "analyzer/rank_data.hpp"
#include "trace_format/content.hpp"
#include "analyzer_json_trace.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"

namespace fmt_ns = smtrace::format;
using smtrace::analyzer::CudaAccess;
using smtrace::analyzer::CudaStreams;
using smtrace::analyzer::StreamItem;
using fmt_ns::Call;

namespace {

constexpr uint64_t k_dev = 0x7f00'0000'0000, k_pinned = 0x7f20'0000'0000, k_host = 0x56'0000'0000;

// Feeds one rank's CUDA events to a model, numbering them.
struct Host {
  CudaStreams model;
  uint64_t seq = 0;
  uint32_t thread = 0;

  CudaStreams::Effect call(Call c, auto&& fill) {
    fmt_ns::Event e;
    e.seq = seq++;
    e.call = c;
    e.thread = thread;
    fill(e);
    return model.apply(e);
  }
  CudaStreams::Effect call(Call c) {
    return call(c, [](fmt_ns::Event&) {});
  }
  void create(uint64_t stream, bool non_blocking = false) {
    call(Call::cudaStreamCreateWithFlags, [&](fmt_ns::Event& e) {
      e.stream = stream;
      e.flags = non_blocking ? fmt_ns::k_stream_non_blocking : 0;
    });
  }
  StreamItem kernel(uint64_t stream, uint64_t addr = k_dev, fmt_ns::ArgAccess access = fmt_ns::ArgAccess::unspecified) {
    auto effect = call(Call::cudaLaunchKernel, [&](fmt_ns::Event& e) {
      e.stream = stream;
      e.args = {{0, addr, 0, access}};
    });
    REQUIRE(effect.item);
    return *effect.item;
  }
  void sync_stream(uint64_t stream, int32_t rc = 0) {
    call(Call::cudaStreamSynchronize, [&](fmt_ns::Event& e) {
      e.stream = stream;
      e.rc = rc;
    });
  }
  void record(uint64_t event, uint64_t stream) {
    call(Call::cudaEventRecord, [&](fmt_ns::Event& e) {
      e.cuda_event = event;
      e.stream = stream;
    });
  }
  void event_call(Call c, uint64_t event, uint64_t stream = 0, int32_t rc = 0) {
    call(c, [&](fmt_ns::Event& e) {
      e.cuda_event = event;
      e.stream = stream;
      e.rc = rc;
    });
  }
  CudaStreams::Effect copy(Call c, uint64_t dst, fmt_ns::MemoryKind dst_kind, uint64_t src, fmt_ns::MemoryKind src_kind,
                           uint64_t stream = 0) {
    return call(c, [&](fmt_ns::Event& e) {
      e.recv_buf = dst;
      e.recv_memory = dst_kind;
      e.buf = src;
      e.memory = src_kind;
      e.size = 64;
      e.stream = stream;
    });
  }
};

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::CudaStreams::work on one stream is ordered") {
  Host h;
  const StreamItem a = h.kernel(0), b = h.kernel(0);
  CHECK(a.stream == b.stream);
  CHECK(b.index == a.index + 1);
  CHECK_FALSE(h.model.finished(a));
  h.call(Call::cudaDeviceSynchronize);
  CHECK(h.model.finished(a));
  CHECK(h.model.finished(b));
  const StreamItem c = h.kernel(0);
  CHECK_FALSE(h.model.finished(c));
}

TEST_CASE("analyzer::CudaStreams::legacy default stream (Figure 3)") {
  SUBCASE("blocking streams: K1 -> K0 -> K2, a sync on K2's stream covers all") {
    Host h;
    h.create(2);
    h.create(3);
    const StreamItem k1 = h.kernel(2), k0 = h.kernel(0), k2 = h.kernel(3);
    h.sync_stream(3);
    CHECK(h.model.finished(k2));
    CHECK(h.model.finished(k0));
    CHECK(h.model.finished(k1));
  }
  SUBCASE("a non-blocking stream is not ordered with the legacy stream") {
    Host h;
    h.create(2, true);
    h.create(3);
    const StreamItem k1 = h.kernel(2), k0 = h.kernel(0);
    h.kernel(3);
    h.sync_stream(3);
    CHECK(h.model.finished(k0));
    CHECK_FALSE(h.model.finished(k1));
  }
  SUBCASE("independent created streams are not ordered") {
    Host h;
    h.create(2);
    h.create(3);
    const StreamItem a = h.kernel(2);
    h.kernel(3);
    h.sync_stream(3);
    CHECK_FALSE(h.model.finished(a));
  }
  SUBCASE("synchronizing the legacy stream covers blocking streams, not non-blocking ones") {
    Host h;
    h.create(2);
    h.create(3, true);
    const StreamItem blocking = h.kernel(2), non_blocking = h.kernel(3);
    h.sync_stream(0);
    CHECK(h.model.finished(blocking));
    CHECK_FALSE(h.model.finished(non_blocking));
  }
  SUBCASE("the per-thread default stream is blocking, one per host thread") {
    Host h;
    const StreamItem mine = h.kernel(1);
    h.thread = 1;
    const StreamItem other = h.kernel(1);
    CHECK(mine.stream != other.stream);
    h.sync_stream(1);  // thread 1's stream only
    CHECK(h.model.finished(other));
    CHECK_FALSE(h.model.finished(mine));
    h.kernel(0);  // legacy work waits for both per-thread streams
    h.sync_stream(0);
    CHECK(h.model.finished(mine));
  }
  SUBCASE("a stream never created counts as non-blocking") {
    Host h;
    const StreamItem a = h.kernel(7);
    h.kernel(0);
    h.sync_stream(0);
    CHECK_FALSE(h.model.finished(a));
    CHECK(h.model.stream_label(a.stream) == "stream s#7");
  }
}

TEST_CASE("analyzer::CudaStreams::explicit synchronization") {
  SUBCASE("queries: cudaSuccess synchronizes, cudaErrorNotReady does not") {
    Host h;
    h.create(2, true);
    const StreamItem a = h.kernel(2);
    h.call(Call::cudaStreamQuery, [](fmt_ns::Event& e) {
      e.stream = 2;
      e.rc = fmt_ns::k_cuda_not_ready;
    });
    CHECK_FALSE(h.model.finished(a));
    h.call(Call::cudaStreamQuery, [](fmt_ns::Event& e) { e.stream = 2; });
    CHECK(h.model.finished(a));
  }
  SUBCASE("events: record + synchronize covers work up to the record only") {
    Host h;
    h.create(2, true);
    const StreamItem before = h.kernel(2);
    h.record(1, 2);
    const StreamItem after = h.kernel(2);
    h.event_call(Call::cudaEventQuery, 1, 0, fmt_ns::k_cuda_not_ready);
    CHECK_FALSE(h.model.finished(before));
    h.event_call(Call::cudaEventSynchronize, 1);
    CHECK(h.model.finished(before));
    CHECK_FALSE(h.model.finished(after));
  }
  SUBCASE("cudaStreamWaitEvent orders another stream's later work") {
    Host h;
    h.create(2, true);
    h.create(3, true);
    const StreamItem producer = h.kernel(2);
    h.record(1, 2);
    h.event_call(Call::cudaStreamWaitEvent, 1, 3);
    h.kernel(3);
    h.record(2, 3);
    CHECK_FALSE(h.model.finished(producer));  // the wait alone tells the host nothing
    h.event_call(Call::cudaEventSynchronize, 2);
    CHECK(h.model.finished(producer));
  }
  SUBCASE("an event never recorded orders nothing") {
    Host h;
    const StreamItem a = h.kernel(0);
    h.event_call(Call::cudaEventSynchronize, 9);
    CHECK_FALSE(h.model.finished(a));
  }
  SUBCASE("cudaFree synchronizes the device") {
    Host h;
    h.create(2, true);
    const StreamItem a = h.kernel(2);
    h.call(Call::cudaFree, [](fmt_ns::Event& e) { e.buf = k_dev; });
    CHECK(h.model.finished(a));
  }
}

TEST_CASE("analyzer::CudaStreams::implicit synchronization by memory kind") {
  using fmt_ns::MemoryKind;
  SUBCASE("cudaMemcpy with a host side is synchronous, device to device is not") {
    Host h;
    auto effect = h.copy(Call::cudaMemcpy, k_dev, MemoryKind::device, k_host, MemoryKind::pageable);
    CHECK(effect.host_synchronized);
    CHECK(h.model.finished(*effect.item));
    effect = h.copy(Call::cudaMemcpy, k_dev, MemoryKind::device, k_dev + 4096, MemoryKind::device);
    CHECK_FALSE(h.model.finished(*effect.item));
    REQUIRE(effect.device.size() == 2);
    CHECK(effect.device[1] == CudaAccess{k_dev, k_dev + 64, true});
  }
  SUBCASE("cudaMemcpyAsync: pinned is asynchronous, to pageable synchronous, from pageable staged") {
    Host h;
    h.create(2);
    auto pinned = h.copy(Call::cudaMemcpyAsync, k_dev, MemoryKind::device, k_pinned, MemoryKind::pinned, 2);
    CHECK_FALSE(h.model.finished(*pinned.item));
    CHECK(pinned.host.empty());
    auto staged = h.copy(Call::cudaMemcpyAsync, k_dev, MemoryKind::device, k_host, MemoryKind::pageable, 2);
    CHECK_FALSE(h.model.finished(*staged.item));
    REQUIRE(staged.host.size() == 1);
    CHECK(staged.host[0] == CudaAccess{k_host, k_host + 64, false});
    REQUIRE(staged.device.size() == 1);
    CHECK(staged.device[0].write);
    auto to_pageable = h.copy(Call::cudaMemcpyAsync, k_host, MemoryKind::pageable, k_dev, MemoryKind::device, 2);
    CHECK(h.model.finished(*to_pageable.item));
    CHECK(h.model.finished(*pinned.item));  // earlier work on the same stream
  }
  SUBCASE("cudaMemset: asynchronous on device memory, synchronous on pinned memory") {
    Host h;
    h.call(Call::cudaMallocHost, [](fmt_ns::Event& e) {
      e.buf = k_pinned;
      e.size = 4096;
    });
    auto device = h.call(Call::cudaMemset, [](fmt_ns::Event& e) {
      e.buf = k_dev;
      e.size = 16;
      e.memory = MemoryKind::device;
    });
    CHECK_FALSE(h.model.finished(*device.item));
    auto pinned = h.call(Call::cudaMemset, [](fmt_ns::Event& e) {  // kind from the allocation
      e.buf = k_pinned + 8;
      e.size = 16;
    });
    CHECK(h.model.finished(*pinned.item));
    CHECK(h.model.memory_kind(k_pinned + 100, MemoryKind::unspecified) == MemoryKind::pinned);
    CHECK(h.model.memory_kind(k_host, MemoryKind::unspecified) == MemoryKind::pageable);
  }
  SUBCASE("kernel arguments: to the end of the allocation, read only when declared") {
    Host h;
    h.call(Call::cudaMallocManaged, [](fmt_ns::Event& e) {
      e.buf = k_dev;
      e.size = 4096;
    });
    auto effect = h.call(Call::cudaLaunchKernel, [](fmt_ns::Event& e) {
      e.args = {{0, k_dev + 16, 0, fmt_ns::ArgAccess::read},
                {1, k_dev + 1024, 8, fmt_ns::ArgAccess::unspecified},
                {2, k_host, 0, fmt_ns::ArgAccess::write}};
    });
    REQUIRE(effect.device.size() == 3);
    CHECK(effect.device[0] == CudaAccess{k_dev + 16, k_dev + 4096, false});
    CHECK(effect.device[1] == CudaAccess{k_dev + 1024, k_dev + 1032, true});
    CHECK(effect.device[2] == CudaAccess{k_host, k_host + 1, true});
    CHECK(h.model.allocation(k_dev + 4095) != nullptr);
    CHECK(h.model.allocation(k_dev + 4096) == nullptr);
  }
}

namespace {

std::string kernel_json(uint64_t stream, uint64_t addr, const char* access = "ARG_ACCESS_UNSPECIFIED") {
  return R"({"call": "CUDA_LAUNCH_KERNEL", "stream": ")" + std::to_string(stream) + R"(", "args": [{"addr": ")" +
         std::to_string(addr) + R"(", "access": ")" + access + R"("}]})";
}
std::string malloc_json(uint64_t addr) {
  return R"({"call": "CUDA_MALLOC", "buf": ")" + std::to_string(addr) + R"(", "size": "4096"})";
}
const std::string k_dev_s = std::to_string(k_dev);

smtrace::test::JsonRank one_rank(std::vector<std::string> events) {
  smtrace::test::JsonRank r;
  r.events = std::move(events);
  return r;
}

std::size_t races(const smtrace::analyzer::Result& result) {
  std::size_t n = 0;
  for (const auto& f : result.findings) n += f.kind == "cuda-mpi-race";
  return n;
}

// `n` receives into device memory, 16 bytes apart, then one kernel writing
// all of it (a pointer argument without a size: to the allocation's end),
// with the request ids `ids` in posting order; `one_line`: the receives are
// one line of the program (a loop).
smtrace::analyzer::Result receives_then_kernel(const std::vector<uint64_t>& ids, bool one_line) {
  smtrace::test::Builder t;
  fmt_ns::Event& m = t.add(Call::cudaMalloc);  // seq 1
  m.buf = k_dev;
  m.size = 4096;
  uint32_t site = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {  // seq 2...
    fmt_ns::Event& e = t.buf(Call::Irecv, k_dev + 16 * i, 4, smtrace::test::k_int, ids[i]);
    if (i == 0) site = e.site;
    if (one_line) e.site = site;
  }
  t.add(Call::cudaLaunchKernel).args = {{0, k_dev, 0, fmt_ns::ArgAccess::unspecified}};
  t.unfinalize();
  return t.run("cuda-mpi-race");
}

}  // namespace

TEST_CASE("analyzer::cuda-mpi-race::pending operations in posting order, not by request id") {
  SUBCASE("one finding per pair of sites: the earliest-posted receive's") {
    for (const auto& ids : smtrace::test::id_orders(3)) {
      CAPTURE(ids[0]);
      const auto result = receives_then_kernel(ids, true);
      REQUIRE(races(result) == 1);
      CHECK(result.findings[0].locations[0].event == smtrace::analyzer::EventRef{0, 2});
    }
  }
  SUBCASE("more races than are reported: the earliest posted") {
    for (const auto& ids : smtrace::test::id_orders(70)) {
      CAPTURE(ids[0]);
      const auto result = receives_then_kernel(ids, false);
      REQUIRE(races(result) == 64);
      for (uint64_t i = 0; i < 64; ++i)
        CHECK(result.findings[i].locations[0].event == smtrace::analyzer::EventRef{0, i + 2});
      CHECK(result.findings[63].notes.back() == "6 more CUDA/MPI races on rank 0 are not reported");
    }
  }
}

TEST_CASE("analyzer::cuda-mpi-race::collectives and persistent requests") {
  const std::string allreduce = R"({"call": "ALLREDUCE", "comm": 0, "buf": ")" + k_dev_s +
                                R"(", "count": "16", "datatype": 7, "recv_buf": ")" + std::to_string(k_dev + 64) +
                                R"(", "recv_count": "16", "recv_datatype": 7})";
  SUBCASE("a kernel, then MPI_Allreduce on its output") {
    auto result = smtrace::test::analyze_json(
        "cuda-allreduce", {one_rank({R"({"call": "INIT"})", malloc_json(k_dev), kernel_json(0, k_dev), allreduce,
                                     R"({"call": "FINALIZE"})"})},
        {"cuda-mpi-race"});
    CHECK(races(result) == 1);
  }
  SUBCASE("synchronized first: clean") {
    auto result = smtrace::test::analyze_json(
        "cuda-allreduce-ok",
        {one_rank({R"({"call": "INIT"})", malloc_json(k_dev), kernel_json(0, k_dev),
                   R"({"call": "CUDA_DEVICE_SYNCHRONIZE"})", allreduce, R"({"call": "FINALIZE"})"})},
        {"cuda-mpi-race"});
    CHECK(races(result) == 0);
  }
  SUBCASE("a started persistent receive, a kernel reading its buffer, then the wait") {
    const std::string init = R"({"call": "RECV_INIT", "buf": ")" + k_dev_s +
                             R"(", "count": "4", "datatype": 7, "peer": 0, "tag": 0, "comm": 1, "request": "5"})";
    const std::string send = R"({"call": "SEND", "buf": "4096", "count": "4", "datatype": 7, "peer": 0, "tag": 0, "comm": 1})";
    const std::string wait = R"({"call": "WAIT", "requests": ["5"], "completed": [{"request": "5"}]})";
    auto with = [&](const std::string& kernel_before_wait) {
      return smtrace::test::analyze_json(
          "cuda-persistent",
          {one_rank({R"({"call": "INIT"})", malloc_json(k_dev), init, R"({"call": "START", "request": "5"})",
                     kernel_before_wait, send, wait, kernel_json(0, k_dev), R"({"call": "REQUEST_FREE", "request": "5"})",
                     R"({"call": "FINALIZE"})"})},
          {"cuda-mpi-race"});
    };
    CHECK(races(with(kernel_json(0, k_dev, "ARG_READ"))) == 1);  // reading a pending receive buffer
    CHECK(races(with(kernel_json(0, k_dev + 4096))) == 0);      // other memory
  }
}

TEST_CASE("analyzer::cuda-mpi-race::operations with several buffers, and request ids used again") {
  // An MPI_Iallreduce keeps two blocks (send and receive), the first inline
  // and the second in a spare list; a later post with the same request id
  // keeps only its own.
  smtrace::test::Builder t;
  fmt_ns::Event& m = t.add(Call::cudaMalloc);  // seq 1
  m.buf = k_dev;
  m.size = 8192;
  auto iallreduce = [&](uint64_t send, uint64_t recv, uint64_t request) {
    fmt_ns::Event& e = t.buf(Call::Iallreduce, send, 4, smtrace::test::k_int, request);
    e.peer.reset();
    e.recv_buf = recv;
    e.recv_count = 4;
    e.recv_datatype = smtrace::test::k_int;
  };
  auto kernel_writes = [&](uint64_t addr) {
    t.add(Call::cudaLaunchKernel).args = {{0, addr, 8, fmt_ns::ArgAccess::unspecified}};
    t.add(Call::cudaDeviceSynchronize);
  };
  iallreduce(k_dev, k_dev + 1024, 5);              // seq 2
  kernel_writes(k_dev + 1024);                     // seq 3, 4: races with the receive side
  t.wait(5);                                       // seq 5
  t.buf(Call::Isend, k_dev + 2048, 4, smtrace::test::k_int, 5);  // seq 6: id 5 again, one block
  kernel_writes(k_dev + 1024);                     // seq 7, 8: the Iallreduce is done: fine
  kernel_writes(k_dev + 2048);                     // seq 9, 10: races with the Isend
  t.wait(5);                                       // seq 11
  iallreduce(k_dev + 4096, k_dev + 5120, 6);       // seq 12
  t.add(Call::Request_free).request = 6;           // seq 13: goes on, pending to the end
  t.buf(Call::Isend, k_dev + 6144, 4, smtrace::test::k_int, 6);  // seq 14: id 6 again
  kernel_writes(k_dev + 5120);                     // seq 15, 16: the table forgot the freed one's blocks
  kernel_writes(k_dev + 6144);                     // seq 17, 18: races with the second Isend
  t.wait(6);                                       // seq 19
  const auto result = t.run("cuda-mpi-race");
  REQUIRE(races(result) == 3);
  const auto& f = result.findings;
  CHECK(f[0].locations[0].event == smtrace::analyzer::EventRef{0, 2});
  CHECK(f[0].locations[1].event == smtrace::analyzer::EventRef{0, 3});
  CHECK(f[0].message.find("MPI_Iallreduce receives into") != std::string::npos);
  CHECK(f[1].locations[0].event == smtrace::analyzer::EventRef{0, 6});
  CHECK(f[1].locations[1].event == smtrace::analyzer::EventRef{0, 9});
  CHECK(f[2].locations[0].event == smtrace::analyzer::EventRef{0, 14});
  CHECK(f[2].locations[1].event == smtrace::analyzer::EventRef{0, 17});
}

// Operations of one block and of several are kept in two tables (the
// former without a vector); a request id moves from one to the other when
// a later post with it has the other shape, and a persistent operation of
// one block is started and completed in place.
TEST_CASE("analyzer::cuda-mpi-race::request ids used again across one-block and several-block operations") {
  smtrace::test::Builder t;
  fmt_ns::Event& m = t.add(Call::cudaMalloc);  // seq 1
  m.buf = k_dev;
  m.size = 8192;
  auto kernel_writes = [&](uint64_t addr) {
    t.add(Call::cudaLaunchKernel).args = {{0, addr, 8, fmt_ns::ArgAccess::unspecified}};
    t.add(Call::cudaDeviceSynchronize);
  };
  t.buf(Call::Irecv, k_dev, 4, smtrace::test::k_int, 7);   // seq 2: one block
  t.wait(7);                                               // seq 3
  fmt_ns::Event& e = t.buf(Call::Iallreduce, k_dev + 1024, 4, smtrace::test::k_int, 7);  // seq 4: id 7, two blocks
  e.peer.reset();
  e.recv_buf = k_dev + 2048;
  e.recv_count = 4;
  e.recv_datatype = smtrace::test::k_int;
  kernel_writes(k_dev);                                    // seq 5, 6: the Irecv is done: fine
  kernel_writes(k_dev + 2048);                             // seq 7, 8: races with the Iallreduce
  t.wait(7);                                               // seq 9
  t.buf(Call::Recv_init, k_dev + 3072, 4, smtrace::test::k_int, 7);  // seq 10: one block again
  kernel_writes(k_dev + 3072);                             // seq 11, 12: not started: fine
  t.add(Call::Start).request = 7;                          // seq 13
  kernel_writes(k_dev + 3072);                             // seq 14, 15: races with the started receive
  t.wait(7);                                               // seq 16
  kernel_writes(k_dev + 2048);                             // seq 17, 18: the Iallreduce's blocks are gone: fine
  t.add(Call::Start).request = 7;                          // seq 19: started again
  t.add(Call::Request_free).request = 7;                   // seq 20: goes on, pending to the end
  kernel_writes(k_dev + 3072);                             // seq 21, 22: races with it
  const auto result = t.run("cuda-mpi-race");
  REQUIRE(races(result) == 3);
  const auto& f = result.findings;
  CHECK(f[0].locations[0].event == smtrace::analyzer::EventRef{0, 4});
  CHECK(f[0].locations[1].event == smtrace::analyzer::EventRef{0, 7});
  CHECK(f[1].locations[0].event == smtrace::analyzer::EventRef{0, 13});
  CHECK(f[1].locations[1].event == smtrace::analyzer::EventRef{0, 14});
  CHECK(f[2].locations[0].event == smtrace::analyzer::EventRef{0, 19});
  CHECK(f[2].locations[1].event == smtrace::analyzer::EventRef{0, 21});
}

// CUDA, then MPI: an MPI call's buffers meet stream work still running,
// whether the call has one buffer (kept beside the table) or several, and
// a buffer of no bytes meets nothing.
TEST_CASE("analyzer::cuda-mpi-race::a rank whose header says no CUDA call was traced") {
  const auto check = smtrace::analyzer::checks::make_cuda_mpi_race();
  smtrace::analyzer::RankData data;
  SUBCASE("without the option: the pass wants CUDA calls and MPI calls with buffers") {
    const auto pass = check->rank_pass(data);
    const auto wants = pass->wants();
    CHECK(wants.has(Call::cudaLaunchKernel));
    CHECK(wants.has(Call::Isend));
    CHECK(wants.has(Call::Wait));
  }
  SUBCASE("cuda.traced=off: it wants no event") {
    data.header.options[std::string(fmt_ns::k_cuda_option)] = std::string(fmt_ns::k_cuda_untraced);
    CHECK(check->rank_pass(data)->wants() == smtrace::analyzer::EventSet::none());
  }
  SUBCASE("another value says nothing: checked as before") {
    data.header.options[std::string(fmt_ns::k_cuda_option)] = "on";
    CHECK(check->rank_pass(data)->wants().has(Call::cudaLaunchKernel));
  }
  SUBCASE("the same findings and figures, with and without the option, on MPI calls alone") {
    auto run = [](bool untraced) {
      smtrace::test::Builder t;
      t.buf(Call::Irecv, k_host, 4, smtrace::test::k_int, 5);
      t.buf(Call::Send, k_host, 4);
      t.wait(5);
      if (untraced)
        t.trace().ranks[0].header.options[std::string(fmt_ns::k_cuda_option)] = std::string(fmt_ns::k_cuda_untraced);
      return t.run("cuda-mpi-race");
    };
    const auto with = run(true), without = run(false);
    CHECK(races(with) == 0);
    CHECK(races(without) == 0);
    for (const char* figure : {"cuda_mpi_race_streams", "cuda_mpi_race_device_accesses", "cuda_mpi_race_peak_unfinished"}) {
      CAPTURE(figure);
      CHECK(with.stats.at(figure) == without.stats.at(figure));
    }
  }
}

TEST_CASE("analyzer::cuda-mpi-race::calls of one buffer, of several and of none against unfinished work") {
  smtrace::test::Builder t;
  fmt_ns::Event& m = t.add(Call::cudaMalloc);  // seq 1
  m.buf = k_dev;
  m.size = 8192;
  t.add(Call::cudaLaunchKernel).args = {{0, k_dev + 1024, 8, fmt_ns::ArgAccess::unspecified}};  // seq 2: unfinished
  t.buf(Call::Isend, k_dev + 1024, 0, smtrace::test::k_int, 5);  // seq 3: no bytes
  t.buf(Call::Send, k_dev + 1020, 4);                            // seq 4: [+1020, +1036) reads what it writes
  fmt_ns::Event& e = t.buf(Call::Iallreduce, k_dev + 4096, 2, smtrace::test::k_int, 6);  // seq 5
  e.peer.reset();
  e.recv_buf = k_dev + 1028;
  e.recv_count = 4;
  e.recv_datatype = smtrace::test::k_int;
  t.wait(6);                                                     // seq 6
  t.wait(5);                                                     // seq 7
  t.add(Call::cudaDeviceSynchronize);                            // seq 8
  t.buf(Call::Send, k_dev + 1024, 4);                            // seq 9: the work is done: fine
  const auto result = t.run("cuda-mpi-race");
  REQUIRE(races(result) == 2);
  const auto& f = result.findings;
  CHECK(f[0].locations[0].event == smtrace::analyzer::EventRef{0, 2});
  CHECK(f[0].locations[1].event == smtrace::analyzer::EventRef{0, 4});
  CHECK(f[0].message.find(fmt::format("writes [{:#x}, +8)", k_dev + 1024)) != std::string::npos);
  CHECK(f[0].message.find("MPI_Send sends from it") != std::string::npos);
  CHECK(f[1].locations[1].event == smtrace::analyzer::EventRef{0, 5});
  CHECK(f[1].message.find(fmt::format("writes [{:#x}, +4)", k_dev + 1028)) != std::string::npos);
  CHECK(f[1].message.find("MPI_Iallreduce receives into it") != std::string::npos);
}

TEST_SUITE_END();
