// Synthetic traces (trace_format/synth.hpp) read back by the reader: no
// problems, the expected events, every message sent is received.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include "trace_format/content.hpp"
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
          CHECK((*e.tag == fmt_ns::k_any_tag || *e.tag == *e.status.tag));
          ++t.received[{*e.status.source, rank, *e.status.tag}];
          break;
        case Call::Irecv:
          ++t.requests_created;
          break;
        case Call::Wait:
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

// The tags of the messages on each (source, destination) channel, in the
// order sent and in the order received (a receive's completion). Equal
// sequences: the recorded matching does not overtake.
struct Channels {
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> sent, received;
};

Channels channels(const fmt_ns::Trace& trace) {
  Channels c;
  for (const fmt_ns::RankTrace& r : trace.ranks) {
    const auto rank = static_cast<int32_t>(r.header.rank);
    const auto receive = [&](const fmt_ns::Status& s) {
      if (s.source) c.received[{*s.source, rank}].push_back(*s.tag);
    };
    for (const fmt_ns::Event& e : r.events) {
      if (e.call == Call::Send || e.call == Call::Isend) c.sent[{rank, *e.peer}].push_back(*e.tag);
      if (e.call == Call::Recv) receive(e.status);
      for (const fmt_ns::CompletedRequest& done : e.completed) receive(done.status);
    }
  }
  return c;
}

// Return how many events of `rank` are `call`.
uint64_t calls_of(const fmt_ns::RankTrace& rank, Call call) {
  uint64_t n = 0;
  for (const fmt_ns::Event& e : rank.events) n += e.call == call;
  return n;
}

// Write generator `name` into `dir` with `ranks` and `iterations`; read it
// back, check what every trace must be and that its matching is complete
// and non-overtaking.
fmt_ns::Trace write_program(const char* name, const fs::path& dir, uint32_t ranks,
                            uint64_t iterations = 0, uint64_t seed = 1) {
  auto o = small(ranks, 1'000);
  o.iterations = iterations;
  o.seed = seed;
  const auto result = fmt_ns::write_synthetic_trace(name, dir, o);
  fmt_ns::Trace trace = read_clean(dir, result);
  CHECK(trace.complete());
  const Traffic t = tally(trace);
  CHECK_FALSE(t.sent.empty());
  CHECK(t.sent == t.received);
  CHECK(t.requests_created == t.requests_completed);
  const Channels c = channels(trace);
  CHECK(c.sent == c.received);
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
    // No generator makes CUDA calls: every header says so (cuda-mpi-race skips the rank).
    for (const auto& rank : trace.ranks) CHECK(fmt_ns::cuda_untraced(rank.header));
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

TEST_CASE("trace_format::write_synthetic_trace::senders") {
  for (uint32_t k : {1u, 2u, 5u, 50u}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      CAPTURE(k);
      CAPTURE(seed);
      SynthTempDir dir;
      const fmt_ns::Trace trace = write_program("senders", dir.path, k + 1, 0, seed);
      CHECK(trace.manifest.command == "smtrace synth senders --k " + std::to_string(k) +
                                          " --seed " + std::to_string(seed));
      // Rank 0: Init, K receives from MPI_ANY_SOURCE, Finalize; the
      // senders: Init, one Send to rank 0, Finalize.
      const auto& receiver = trace.ranks[0].events;
      REQUIRE(receiver.size() == k + 2);
      std::vector<int32_t> order;
      for (uint32_t i = 1; i <= k; ++i) {
        CHECK(receiver[i].call == Call::Recv);
        CHECK(*receiver[i].peer == fmt_ns::k_any_source);
        order.push_back(*receiver[i].status.source);
      }
      std::vector<int32_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (uint32_t i = 0; i < k; ++i) CHECK(sorted[i] == static_cast<int32_t>(i + 1));
      // The seed's property is not the recorded run: the last receive did
      // not take sender K's message.
      if (k > 1) CHECK(order.back() != static_cast<int32_t>(k));
      for (uint32_t rank = 1; rank <= k; ++rank) {
        const auto& events = trace.ranks[rank].events;
        REQUIRE(events.size() == 3);
        CHECK(events[1].call == Call::Send);
        CHECK(*events[1].peer == 0);
      }
    }
  }
}

TEST_CASE("trace_format::write_synthetic_trace::leader") {
  for (uint32_t n : {2u, 3u, 7u, 40u}) {
    for (uint64_t seed : {1u, 5u}) {
      CAPTURE(n);
      CAPTURE(seed);
      SynthTempDir dir;
      const fmt_ns::Trace trace = write_program("leader", dir.path, n, 0, seed);
      const Channels c = channels(trace);
      uint32_t leaders = 0;
      uint64_t messages = 0;
      for (const fmt_ns::RankTrace& r : trace.ranks) {
        const auto rank = static_cast<int32_t>(r.header.rank);
        const int32_t prev = (rank + static_cast<int32_t>(n) - 1) % static_cast<int32_t>(n);
        const int32_t next = (rank + 1) % static_cast<int32_t>(n);
        // Only the ring's links carry messages: candidates (tag 1), then
        // one "elected" (tag 2) as the last message.
        REQUIRE(c.received.count({prev, rank}) == 1);
        const std::vector<int32_t>& tags = c.received.at({prev, rank});
        CHECK(tags.back() == 2);
        CHECK(std::count(tags.begin(), tags.end(), 2) == 1);
        CHECK(tags.size() >= 2);
        messages += tags.size();
        // A rank sends its candidate id first; a rank forwards at most what
        // it received; the leader is the one rank that sends "elected"
        // before receiving it.
        const std::vector<int32_t>& sent = c.sent.at({rank, next});
        CHECK(sent.front() == 1);
        CHECK(sent.size() <= tags.size() + 1);
        for (const fmt_ns::Event& e : r.events) {
          if (e.call == Call::Isend && *e.tag == 2) {
            ++leaders;
            break;
          }
          if (e.call == Call::Wait && *e.completed[0].status.tag == 2) break;
        }
        // Every receive is a wildcard one, posted before the rank's first
        // send, one at a time.
        CHECK(r.events[1].call == Call::Irecv);
        CHECK(calls_of(r, Call::Irecv) == tags.size());
        CHECK(calls_of(r, Call::Wait) == tags.size());
        CHECK(calls_of(r, Call::Waitall) == 1);
        for (const fmt_ns::Event& e : r.events) {
          if (e.call == Call::Irecv) {
            CHECK(*e.peer == fmt_ns::k_any_source);
            CHECK(*e.tag == fmt_ns::k_any_tag);
          }
        }
      }
      CHECK(leaders == 1);
      CHECK(messages >= 2 * n);
      CHECK(messages <= n * (n + 1) / 2 + n);
    }
  }
}

TEST_CASE("trace_format::write_synthetic_trace::router") {
  for (uint32_t n : {3u, 4u, 9u}) {
    for (uint64_t iterations : {0u, 1u, 6u}) {
      CAPTURE(n);
      CAPTURE(iterations);
      SynthTempDir dir;
      const fmt_ns::Trace trace = write_program("router", dir.path, n, iterations);
      const uint64_t rounds = iterations ? iterations : n / 2;
      for (const fmt_ns::RankTrace& r : trace.ranks) {
        CHECK(r.events.size() == 2 + 5 * rounds);
        CHECK(calls_of(r, Call::Waitall) == rounds);
        for (const fmt_ns::Event& e : r.events) {
          if (e.call == Call::Irecv) CHECK(*e.peer == fmt_ns::k_any_source);
        }
      }
      // Both neighbours each round: 2 messages per round on every link.
      const Channels c = channels(trace);
      CHECK(c.sent.size() == 2 * n);
      for (const auto& [link, tags] : c.sent) CHECK(tags.size() == rounds);
    }
  }
}

TEST_CASE("trace_format::write_synthetic_trace::fig6") {
  for (uint64_t iterations : {0u, 1u, 4u}) {
    CAPTURE(iterations);
    SynthTempDir dir;
    const fmt_ns::Trace trace = write_program("fig6", dir.path, 3, iterations);
    const uint64_t it = iterations ? iterations : 1;
    // Each MCAPI call is MPI_Isend or MPI_Irecv + MPI_Wait: rank 0 makes 4
    // calls per iteration, rank 1 3, rank 2 1.
    CHECK(trace.ranks[0].events.size() == 2 + 8 * it);
    CHECK(trace.ranks[1].events.size() == 2 + 6 * it);
    CHECK(trace.ranks[2].events.size() == 2 + 2 * it);
    const Channels c = channels(trace);
    CHECK(c.sent.at({1, 0}).size() == 2 * it);
    CHECK(c.sent.at({2, 0}).size() == it);
    CHECK(c.sent.at({0, 1}).size() == it);
    // Rank 0's last receive of an iteration takes rank 1's second message.
    const auto& rank0 = trace.ranks[0].events;
    for (uint64_t i = 0; i < it; ++i) {
      const fmt_ns::Event& wait = rank0[1 + 8 * i + 7];
      REQUIRE(wait.call == Call::Wait);
      CHECK(*wait.completed[0].status.source == 1);
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
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("senders", dir.path, small(1, 100)), fmt_ns::TraceError);
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("leader", dir.path, small(1, 100)), fmt_ns::TraceError);
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("router", dir.path, small(2, 100)), fmt_ns::TraceError);
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("fig6", dir.path, small(4, 100)), fmt_ns::TraceError);
  auto looped = small(3, 100);
  looped.iterations = 2;
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("senders", dir.path, looped), fmt_ns::TraceError);
  CHECK_THROWS_AS(fmt_ns::write_synthetic_trace("leader", dir.path, looped), fmt_ns::TraceError);
  CHECK(fmt_ns::synth_generators() == std::vector<std::string>{"halo", "pingpong", "wildcard", "senders",
                                                                "leader", "router", "fig6", "masterworker"});
}

TEST_CASE("trace_format::write_synthetic_trace::masterworker") {
  for (const auto& [ranks, tasks] : {std::pair{4u, 60u}, std::pair{2u, 5u}, std::pair{16u, 200u}}) {
    CAPTURE(ranks);
    SynthTempDir dir;
    const fmt_ns::Trace trace = write_program("masterworker", dir.path, ranks, tasks);
    // Rank 0: a receive from any source and an answer per task and per worker (the stop).
    const auto& master = trace.ranks[0].events;
    CHECK(master.size() == 2 + 2 * (tasks + ranks - 1));
    uint64_t worker_events = 0, stops = 0;
    for (const fmt_ns::Event& e : master) {
      if (e.call == Call::Recv) CHECK(*e.peer == fmt_ns::k_any_source);
      if (e.call == Call::Send && *e.tag == 3) ++stops;
    }
    CHECK(stops == ranks - 1);
    for (uint32_t w = 1; w < ranks; ++w) {
      const auto& events = trace.ranks[w].events;
      worker_events += events.size();
      // Each worker ends with its stop message, received with MPI_ANY_TAG.
      REQUIRE(events.size() >= 4);
      const fmt_ns::Event& last = events[events.size() - 2];
      CHECK(last.call == Call::Recv);
      CHECK(*last.tag == fmt_ns::k_any_tag);
      CHECK(*last.status.tag == 3);
    }
    // Every task's request and answer, plus the last request and the stop.
    CHECK(worker_events == 2 * (ranks - 1) + 2 * (tasks + ranks - 1));
    if (ranks == 4) CHECK(master.size() + worker_events == 260);
  }
}
