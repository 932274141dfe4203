// The JSON document of dump --format json / import-json (absolute coding).
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"

namespace fs = std::filesystem;
namespace fmt_ns = smtrace::format;

namespace {

struct JsonTempDir {
  fs::path path;
  JsonTempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("smtrace-json-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
  }
  ~JsonTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Check that rank 0's events of `t` survive JSON (`json` is to_json(t)) and
// a trace directory (wire encoder -> libprotobuf reader).
void check_one_rank_round_trip(const fmt_ns::Trace& t, const std::string& json) {
  const std::vector<fmt_ns::Event>& events = t.ranks[0].events;
  CHECK(fmt_ns::from_json(json).ranks[0].events == events);
  JsonTempDir dir;
  fmt_ns::write_trace(t, dir.path);
  fmt_ns::Trace read = fmt_ns::read_trace(dir.path);
  CHECK(read.all_problems().empty());
  CHECK(read.ranks[0].events == events);
  CHECK(fmt_ns::to_json(read) == json);
}

// The example of docs/trace-format.md ("JSON document"), kept in step with it.
constexpr const char* k_hand_written = R"({
  "manifest": {"format_version": 2, "world_size": 2, "command": "mpirun -np 2 ./ring"},
  "ranks": [
    {
      "header": {"rank": 0, "world_size": 2, "host": "node1", "clock": "CLOCK_KIND_MONOTONIC"},
      "sites": [{"id": 1, "function": "main", "file": "ring.c", "line": 14}],
      "events": [
        {"seq": "0", "call": "INIT", "t_start": "1000", "duration": "52000"},
        {"seq": "1", "call": "SEND", "t_start": "60000", "duration": "800", "site": 1,
         "peer": 1, "tag": 0, "buf": "140737488347136", "count": "4", "datatype": 7},
        {"seq": "2", "call": "RECV", "t_start": "61000", "pending": true, "site": 1,
         "peer": -1, "tag": -1, "buf": "140737488347200", "count": "4", "datatype": 7}
      ],
      "end": {"kind": "SIGNAL", "signal": 9}
    },
    {
      "header": {"rank": 1, "world_size": 2},
      "comms": [{"id": 2, "world_ranks": [1], "parent": 0}],
      "events": [
        {"seq": "0", "call": "INIT"},
        {"seq": "1", "call": "RECV", "t_start": "59000", "duration": "2000", "peer": 0, "tag": 0,
         "count": "4", "datatype": 7, "status": {"source": 0, "tag": 0, "count": "4"}},
        {"seq": "2", "call": "FINALIZE", "t_start": "70000", "duration": "10"}
      ],
      "end": {"kind": "FINALIZED"},
      "some_future_field": 1
    }
  ]
})";

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::from_json::hand-written document") {
  fmt_ns::Trace t = fmt_ns::from_json(k_hand_written);
  CHECK(t.has_manifest);
  CHECK(t.manifest.world_size == 2);
  CHECK(t.manifest.command == "mpirun -np 2 ./ring");
  REQUIRE(t.ranks.size() == 2);
  const fmt_ns::RankTrace& r0 = t.ranks[0];
  CHECK(r0.present);
  CHECK(r0.header.host == "node1");
  CHECK(r0.header.clock == fmt_ns::ClockKind::monotonic);
  CHECK(r0.header.format_version == fmt_ns::k_format_version);  // absent: this reader's
  REQUIRE(r0.events.size() == 3);
  CHECK(r0.events[1].call == fmt_ns::Call::Send);
  CHECK(r0.events[1].peer == 1);
  CHECK(r0.events[1].tag == 0);
  CHECK(r0.events[1].buf == 140737488347136u);
  CHECK(r0.events[1].t_start == 60000);
  CHECK(r0.events[2].pending);
  CHECK(r0.events[2].peer == fmt_ns::k_any_source);
  CHECK(r0.site(1)->file == "ring.c");
  CHECK(r0.end->kind == fmt_ns::TerminationKind::signal);
  CHECK(r0.comms.at(0).world_ranks == std::vector<uint32_t>{0, 1});
  const fmt_ns::RankTrace& r1 = t.ranks[1];
  CHECK(r1.events[1].status.source == 0);
  CHECK(r1.events[1].status.count == 4);
  CHECK(r1.comms.at(2).world_ranks == std::vector<uint32_t>{1});
  CHECK(r1.comms.at(1).world_ranks == std::vector<uint32_t>{1});
  CHECK(r1.finalized());
}

TEST_CASE("trace_format::to_json::round trip") {
  fmt_ns::Trace t = fmt_ns::from_json(k_hand_written);
  const std::string json = fmt_ns::to_json(t);
  CHECK(json.find("\"world_size\"") != std::string::npos);  // proto field names
  CHECK(json.find("\"CLOCK_KIND_MONOTONIC\"") != std::string::npos);
  CHECK(json.find("\"comms\"") != std::string::npos);
  fmt_ns::Trace back = fmt_ns::from_json(json);
  CHECK(back.manifest == t.manifest);
  REQUIRE(back.ranks.size() == t.ranks.size());
  for (std::size_t i = 0; i < t.ranks.size(); ++i) {
    CHECK(back.ranks[i].header == t.ranks[i].header);
    CHECK(back.ranks[i].events == t.ranks[i].events);
    CHECK(back.ranks[i].sites == t.ranks[i].sites);
    CHECK(back.ranks[i].comms == t.ranks[i].comms);
    CHECK(back.ranks[i].end == t.ranks[i].end);
  }
  SUBCASE("one rank") {
    fmt_ns::Trace one = fmt_ns::from_json(fmt_ns::to_json(t, 1u));
    CHECK_FALSE(one.ranks[0].present);
    CHECK(one.ranks[1].present);
  }
  SUBCASE("through a trace directory") {
    JsonTempDir dir;
    fmt_ns::write_trace(t, dir.path);
    fmt_ns::Trace read = fmt_ns::read_trace(dir.path);
    CHECK(read.all_problems().empty());
    for (std::size_t i = 0; i < t.ranks.size(); ++i) {
      CHECK(read.ranks[i].events == t.ranks[i].events);
      CHECK(read.ranks[i].comms == t.ranks[i].comms);
    }
    CHECK(fmt_ns::to_json(read) == json);
  }
}

TEST_CASE("trace_format::to_json::strided accesses") {
  // Loads and stores as the load/store runtime writes them: `count` blocks
  // of `size` bytes, `stride` apart; an event without stride (as in traces
  // written before the field existed) reads as stride 0.
  constexpr const char* k_accesses = R"({
    "ranks": [{
      "header": {"rank": 0, "world_size": 1},
      "sites": [{"id": 1, "function": "main", "file": "stencil.c", "line": 9}],
      "events": [
        {"seq": "0", "call": "LOAD", "site": 1, "stack": [2], "buf": "4096", "size": "8",
         "count": "100", "stride": "-16"},
        {"seq": "1", "call": "STORE", "t_start": "5", "buf": "8192", "size": "4"},
        {"seq": "2", "call": "ANNOTATE_WRITE", "t_start": "6", "buf": "8192", "size": "4",
         "count": "3", "stride": "32"}
      ]
    }]
  })";
  fmt_ns::Trace t = fmt_ns::from_json(k_accesses);
  REQUIRE(t.ranks.size() == 1);
  const std::vector<fmt_ns::Event>& events = t.ranks[0].events;
  REQUIRE(events.size() == 3);
  CHECK(events[0].call == fmt_ns::Call::Load);
  CHECK(events[0].buf == 4096);
  CHECK(events[0].size == 8);
  CHECK(events[0].count == 100);
  CHECK(events[0].stride == -16);
  CHECK(events[1].call == fmt_ns::Call::Store);
  CHECK(events[1].stride == 0);
  CHECK(events[2].stride == 32);

  const std::string json = fmt_ns::to_json(t);
  CHECK(json.find("\"LOAD\"") != std::string::npos);
  CHECK(json.find("\"stride\"") != std::string::npos);
  check_one_rank_round_trip(t, json);
}

TEST_CASE("trace_format::to_json::CUDA events") {
  // CUDA calls as docs/trace-format.md ("CUDA events") describes them: a
  // non-blocking stream, a kernel with two pointer arguments (one declared
  // read), an asynchronous copy, an event recorded and waited for.
  constexpr const char* k_cuda = R"json({
    "ranks": [{
      "header": {"rank": 0, "world_size": 1},
      "sites": [{"id": 1, "function": "main", "file": "app.cu", "line": 20},
                {"id": 2, "function": "axpy(float*, float const*)"}],
      "events": [
        {"seq": "0", "call": "CUDA_MALLOC", "site": 1, "buf": "1099511627776", "size": "4096",
         "memory": "MEMORY_DEVICE"},
        {"seq": "1", "call": "CUDA_STREAM_CREATE_WITH_FLAGS", "stream": "2", "flags": 1},
        {"seq": "2", "call": "CUDA_LAUNCH_KERNEL", "site": 1, "kernel": 2, "stream": "2",
         "args": [{"index": 0, "addr": "1099511627776", "access": "ARG_WRITE"},
                  {"index": 1, "addr": "1099511629824", "size": "1024", "access": "ARG_READ"}]},
        {"seq": "3", "call": "CUDA_MEMCPY_ASYNC", "buf": "1099511627776", "memory": "MEMORY_DEVICE",
         "recv_buf": "4096", "recv_memory": "MEMORY_PINNED", "size": "4096",
         "copy_kind": "COPY_DEVICE_TO_HOST", "stream": "2"},
        {"seq": "4", "call": "CUDA_EVENT_RECORD", "cuda_event": "1", "stream": "2"},
        {"seq": "5", "call": "CUDA_EVENT_QUERY", "cuda_event": "1", "rc": 600, "repeat": 41},
        {"seq": "6", "call": "CUDA_EVENT_SYNCHRONIZE", "cuda_event": "1", "duration": "90"}
      ]
    }]
  })json";
  fmt_ns::Trace t = fmt_ns::from_json(k_cuda);
  const std::vector<fmt_ns::Event>& events = t.ranks[0].events;
  REQUIRE(events.size() == 7);
  CHECK(events[0].call == fmt_ns::Call::cudaMalloc);
  CHECK(events[0].memory == fmt_ns::MemoryKind::device);
  CHECK(events[0].size == 4096);
  CHECK(events[1].stream == 2);
  CHECK(events[1].flags == fmt_ns::k_stream_non_blocking);
  CHECK(events[2].kernel == 2);
  REQUIRE(events[2].args.size() == 2);
  CHECK(events[2].args[0].access == fmt_ns::ArgAccess::write);
  CHECK(events[2].args[0].size == 0);
  CHECK(events[2].args[1] == fmt_ns::KernelArg{1, 1099511629824ULL, 1024, fmt_ns::ArgAccess::read});
  CHECK(events[3].copy_kind == fmt_ns::CopyKind::device_to_host);
  CHECK(events[3].recv_memory == fmt_ns::MemoryKind::pinned);
  CHECK(events[4].cuda_event == 1);
  CHECK(events[5].rc == fmt_ns::k_cuda_not_ready);
  CHECK(events[6].call == fmt_ns::Call::cudaEventSynchronize);
  CHECK(fmt_ns::call_name(events[6].call) == "cudaEventSynchronize");
  CHECK(fmt_ns::call_family(events[6].call) == fmt_ns::Family::cuda);

  const std::string json = fmt_ns::to_json(t);
  CHECK(json.find("\"CUDA_LAUNCH_KERNEL\"") != std::string::npos);
  CHECK(json.find("\"ARG_READ\"") != std::string::npos);
  CHECK(json.find("\"MEMORY_PINNED\"") != std::string::npos);
  CHECK(json.find("\"COPY_DEVICE_TO_HOST\"") != std::string::npos);
  check_one_rank_round_trip(t, json);
}

TEST_CASE("trace_format::to_json::deterministic") {
  fmt_ns::Trace t = fmt_ns::from_json(k_hand_written);
  for (int i = 0; i < 40; ++i) t.ranks[0].header.options["SMTRACE_OPTION_" + std::to_string(i)] = "v";
  const std::string json = fmt_ns::to_json(t);
  CHECK(json.find("SMTRACE_OPTION_0") < json.find("SMTRACE_OPTION_1\""));
  CHECK(json.find("SMTRACE_OPTION_1\"") < json.find("SMTRACE_OPTION_10"));
  CHECK(fmt_ns::to_json(fmt_ns::from_json(json)) == json);
}

TEST_CASE("trace_format::from_json::pre-release ClockKind names") {
  fmt_ns::Trace t = fmt_ns::from_json(
      R"({"ranks": [{"header": {"rank": 0, "clock": "CLOCK_REALTIME", "host": "\"CLOCK_MONOTONIC\""}}]})");
  CHECK(t.ranks[0].header.clock == fmt_ns::ClockKind::realtime);
  CHECK(t.ranks[0].header.host == "\"CLOCK_MONOTONIC\"");
}

TEST_CASE("trace_format::from_json::bad JSON") {
  SUBCASE("syntax error names the position") {
    const std::string bad = "{\n  \"manifest\": {\"world_size\" 2}\n}";
    CHECK_THROWS_WITH_AS(fmt_ns::from_json(bad), doctest::Contains("line 2, column 29"),
                         fmt_ns::TraceError);
  }
  SUBCASE("wrong type") {
    CHECK_THROWS_AS(fmt_ns::from_json(R"({"manifest": {"world_size": "many"}})"),
                    fmt_ns::TraceError);
  }
  SUBCASE("not JSON at all") {
    CHECK_THROWS_WITH_AS(fmt_ns::from_json("rank-0.smt"), doctest::Contains("line 1, column 1"),
                         fmt_ns::TraceError);
  }
  SUBCASE("an absurd rank") {
    CHECK_THROWS_WITH_AS(fmt_ns::from_json(R"({"ranks": [{"header": {"rank": 4000000000}}]})"),
                         doctest::Contains("out of range"), fmt_ns::TraceError);
  }
  SUBCASE("a rank twice") {
    CHECK_THROWS_WITH_AS(
        fmt_ns::from_json(R"({"ranks": [{"header": {"rank": 0}}, {"header": {"rank": 0}}]})"),
        doctest::Contains("rank 0 appears twice"), fmt_ns::TraceError);
  }
}

TEST_SUITE_END();
