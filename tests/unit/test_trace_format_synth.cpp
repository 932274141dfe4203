// Synthetic traces (trace_format/synth.hpp) read back by the reader: no
// problems, the expected events, every message sent is received.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>

#include <unistd.h>

#include "trace_format/reader.hpp"
#include "trace_format/synth.hpp"

namespace fs = std::filesystem;
namespace fmt_ns = smtrace::format;
using fmt_ns::Call;

namespace {

struct SynthTempDir {
  fs::path path;
  SynthTempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("smtrace-synth-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
  }
  ~SynthTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

fmt_ns::SynthOptions small(uint32_t ranks, uint64_t events) {
  fmt_ns::SynthOptions o;
  o.ranks = ranks;
  o.events = events;
  o.threads = 2;
  return o;
}

// Messages per (source, destination, tag) in world ranks.
using Key = std::tuple<int32_t, int32_t, int32_t>;
struct Traffic {
  std::map<Key, uint64_t> sent, received;
  std::map<Call, uint64_t> calls;
  uint64_t count(Call call) const {
    auto it = calls.find(call);
    return it == calls.end() ? 0 : it->second;
  }
  uint64_t requests_created = 0, requests_completed = 0;
};

Traffic tally(const fmt_ns::Trace& trace) {
  Traffic t;
  for (const fmt_ns::RankTrace& r : trace.ranks) {
    const auto rank = static_cast<int32_t>(r.header.rank);
    for (const fmt_ns::Event& e : r.events) {
      ++t.calls[e.call];
      switch (e.call) {
        case Call::Send:
        case Call::Isend:
          ++t.sent[{rank, *e.peer, *e.tag}];
          if (e.request) ++t.requests_created;
          break;
        case Call::Recv:
          REQUIRE(e.status.source);
          // A posted source or tag is either the actual one or a wildcard.
          CHECK((*e.peer == fmt_ns::k_any_source || *e.peer == *e.status.source));
          CHECK(*e.tag == *e.status.tag);
          ++t.received[{*e.status.source, rank, *e.status.tag}];
          break;
        case Call::Irecv:
          ++t.requests_created;
          break;
        case Call::Waitall:
          for (const fmt_ns::CompletedRequest& c : e.completed) {
            ++t.requests_completed;
            if (c.status.source) ++t.received[{*c.status.source, rank, *c.status.tag}];
          }
          break;
        default:
          break;
      }
    }
  }
  return t;
}

// Read `dir` and check what every synthetic trace must be.
fmt_ns::Trace read_clean(const fs::path& dir, const fmt_ns::SynthResult& result) {
  fmt_ns::Trace trace = fmt_ns::read_trace(dir);
  for (const fmt_ns::Problem& p : trace.all_problems()) CHECK_MESSAGE(false, p.to_string());
  CHECK(trace.has_manifest);
  CHECK(trace.manifest.world_size == result.ranks);
  REQUIRE(trace.ranks.size() == result.ranks);
  uint64_t events = 0, bytes = 0;
  for (const fmt_ns::RankTrace& r : trace.ranks) {
    REQUIRE(r.present);
    CHECK_FALSE(r.truncated);
    REQUIRE(r.end);
    CHECK(r.end->events == r.events.size());
    CHECK(r.end->last_seq + 1 == r.events.size());
    for (std::size_t i = 0; i < r.events.size(); ++i) {
      CHECK(r.events[i].seq == i);
      CHECK(r.site(r.events[i].site) != nullptr);
    }
    events += r.events.size();
    bytes += r.bytes;
  }
  CHECK(events == result.events);
  CHECK(bytes == result.bytes);
  return trace;
}

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::write_synthetic_trace::halo") {
  // 4 ranks: a 2x2 torus, each neighbour twice (west = east); 6: 2x3;
  // 3: a ring of 3; 1: collectives only.
  for (uint32_t ranks : {4u, 6u, 3u, 1u}) {
    CAPTURE(ranks);
    SynthTempDir dir;
    const auto result = fmt_ns::write_synthetic_trace("halo", dir.path, small(ranks, 3'000));
    const fmt_ns::Trace trace = read_clean(dir.path, result);
    CHECK(trace.complete());

    const uint64_t it = result.iterations;
    const uint64_t directions = ranks == 1 ? 0 : ranks == 3 ? 2 : 4;
    const uint64_t allreduces = (it + 9) / 10, barriers = it / 100;
    const uint64_t per_rank = 2 + it * (2 * directions + 1) + allreduces + barriers;
    CHECK(result.events == ranks * per_rank);
    CHECK(result.events <= ranks * 3'000);
    CHECK(result.events + ranks * 20 >= ranks * 3'000);  // whole iterations only

    const Traffic t = tally(trace);
    CHECK(t.sent == t.received);
    CHECK(t.requests_created == t.requests_completed);
    CHECK(t.count(Call::Isend) == ranks * it * directions);
    CHECK(t.count(Call::Waitall) == ranks * it);
    CHECK(t.count(Call::Allreduce) == ranks * allreduces);
    CHECK(t.count(Call::Barrier) == ranks * barriers);
    CHECK(t.count(Call::Bcast) == 0);
  }
}

TEST_CASE("trace_format::write_synthetic_trace::chunks and determinism") {
  SynthTempDir a, b;
  auto o = small(2, 40'000);  // about 1.7 MB per rank: many 64 KiB chunks
  const auto result = fmt_ns::write_synthetic_trace("halo", a.path, o);
  o.threads = 1;
  fmt_ns::write_synthetic_trace("halo", b.path, o);
  const fmt_ns::Trace trace = read_clean(a.path, result);
  CHECK(trace.ranks[0].chunks > 20);
  for (uint32_t rank : {0u, 1u}) {
    const std::string name = fmt_ns::rank_file_name(rank);
    CHECK(file_bytes(a.path / name) == file_bytes(b.path / name));
  }
  o.seed = 2;
  fmt_ns::write_synthetic_trace("halo", b.path, o);
  CHECK(file_bytes(a.path / "rank-0.smt") != file_bytes(b.path / "rank-0.smt"));
}

TEST_CASE("trace_format::write_synthetic_trace::planted deadlock") {
  SynthTempDir dir;
  auto o = small(4, 2'000);
  o.bug = fmt_ns::SynthBug::deadlock;
  const auto result = fmt_ns::write_synthetic_trace("halo", dir.path, o);
  const fmt_ns::Trace trace = read_clean(dir.path, result);
  CHECK_FALSE(trace.complete());
  for (const fmt_ns::RankTrace& r : trace.ranks) {
    CHECK(r.end->kind == fmt_ns::TerminationKind::signal);
    const fmt_ns::Event& last = r.events.back();
    CHECK(last.call == Call::Waitall);
    CHECK(last.pending);
    CHECK(last.requests.size() == 4);  // the receives of the last iteration
    CHECK(last.completed.empty());
  }
  // Every message sent was received; the last receives have no sender.
  const Traffic t = tally(trace);
  CHECK(t.sent == t.received);
  CHECK(t.requests_created == t.requests_completed + 4 * 4);
}

TEST_CASE("trace_format::write_synthetic_trace::planted collective mismatch") {
  SynthTempDir dir;
  auto o = small(4, 2'000);
  o.bug = fmt_ns::SynthBug::collective_mismatch;
  const auto result = fmt_ns::write_synthetic_trace("halo", dir.path, o);
  const fmt_ns::Trace trace = read_clean(dir.path, result);
  CHECK(trace.complete());
  const uint64_t allreduces = (result.iterations + 9) / 10;
  for (const fmt_ns::RankTrace& r : trace.ranks) {
    uint64_t bcasts = 0, allreduce = 0;
    for (const fmt_ns::Event& e : r.events) {
      bcasts += e.call == Call::Bcast;
      allreduce += e.call == Call::Allreduce;
    }
    const bool last = r.header.rank == 3;
    CHECK(bcasts == (last ? 1 : 0));
    CHECK(allreduce == allreduces - bcasts);
  }
}

TEST_CASE("trace_format::write_synthetic_trace::pingpong and wildcard") {
  for (const char* name : {"pingpong", "wildcard"}) {
    for (uint32_t ranks : {2u, 5u}) {
      CAPTURE(name);
      CAPTURE(ranks);
      SynthTempDir dir;
      const auto result = fmt_ns::write_synthetic_trace(name, dir.path, small(ranks, 1'000));
      const fmt_ns::Trace trace = read_clean(dir.path, result);
      CHECK(trace.complete());
      const Traffic t = tally(trace);
      CHECK_FALSE(t.sent.empty());
      CHECK(t.sent == t.received);
    }
  }
}

TEST_CASE("trace_format::write_synthetic_trace::refused options") {
  SynthTempDir dir;
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("nope", dir.path, small(2, 100)), fmt_ns::TraceError);
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("halo", dir.path, small(0, 100)), fmt_ns::TraceError);
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("wildcard", dir.path, small(1, 100)), fmt_ns::TraceError);
  auto o = small(2, 100);
  o.bug = fmt_ns::SynthBug::deadlock;
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("pingpong", dir.path, o), fmt_ns::TraceError);
  o.ranks = 1;
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("halo", dir.path, o), fmt_ns::TraceError);
  CHECK(fmt_ns::synth_generators() == std::vector<std::string>{"halo", "pingpong", "wildcard"});
}
