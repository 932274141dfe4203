// Predictive races (issue 5, item 3d): rma-race asks the SMT backend about
// accesses ordered only through the message a wildcard receive took. Traces
// built event by event (analyzer_trace_builder.hpp), analyzed with the SMT
// checks registered as `smtrace check` registers them.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "analyzer/analyze.hpp"
#include "smt_encoder/prove.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"

namespace {

using namespace smtrace::test;
namespace smt = smtrace::smt;

constexpr uint64_t k_win = 0x10000;
constexpr int32_t k_tag = 5;

// Add a point-to-point call of `rank`: a send to `peer`, or a receive from
// `peer` (k_any_source allowed) that took the message of `from`.
void p2p(Builder& b, Call call, uint32_t rank, int32_t peer, int32_t from = -1) {
  tf::Event& e = b.add(call, rank);
  e.comm = 0;
  e.peer = peer;
  e.tag = k_tag;
  e.buf = 0x20000;
  e.count = 1;
  e.datatype = k_int;
  if (call == Call::Recv) {
    e.status.source = from;
    e.status.tag = k_tag;
    e.status.count = 4;
  }
}

// The shapes of these tests: rank 1 puts into rank 0's window under a shared
// lock, unlocks and sends; rank 2 sends; rank 0 receives twice (`source`:
// from whom first, -1 any) and loads the element rank 1 wrote in between.
// `late`: rank 2 sends only after a message rank 0 sends after its load.
// `reply`: rank 0 answers the rank its first receive took (1 in the run)
// before the load, and rank 1 receives the answer after its send.
struct Shape {
  int32_t source = tf::k_any_source;
  bool late = false;
  bool reply = false;
};

Builder build(const Shape& shape) {
  Builder b(3);
  for (uint32_t r = 0; r < 3; ++r) b.win_create(r, 1, r == 0 ? k_win : 0, r == 0 ? 32 : 0, 4);
  b.win_sync(Call::Win_lock, 1, 1, 0, tf::LockType::shared);
  b.rma(Call::Put, 1, 1, 0, 0x30000, 1, 2);
  b.win_sync(Call::Win_unlock, 1, 1, 0);
  p2p(b, Call::Send, 1, 0);
  p2p(b, Call::Recv, 0, shape.source, 1);
  if (shape.reply) {
    p2p(b, Call::Send, 0, 1);
    p2p(b, Call::Recv, 1, 0, 0);
  }
  b.access(Call::Load, 0, k_win + 8, 4);
  if (shape.late) {
    p2p(b, Call::Send, 0, 2);
    p2p(b, Call::Recv, 2, 0, 0);
  }
  p2p(b, Call::Send, 2, 0);
  p2p(b, Call::Recv, 0, shape.source == tf::k_any_source ? shape.source : 2, 2);
  for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
  for (uint32_t r = 0; r < 3; ++r) b.add(Call::Finalize, r);
  return b;
}

an::Result run(Builder& b, bool smt = true) {
  an::Options options;
  options.checks = {"rma-race"};
  if (smt) {
    options.extra_checks = smt::check_factories({});
    options.checks.insert("message-race");
  }
  return analyze_trace(b.trace(), options);
}

std::vector<an::Finding> of_kind(const an::Result& r, const std::string& kind) {
  std::vector<an::Finding> out;
  std::copy_if(r.findings.begin(), r.findings.end(), std::back_inserter(out),
               [&](const an::Finding& f) { return f.kind == kind; });
  return out;
}

}  // namespace

TEST_CASE("predictive rma-race: ordered only through a wildcard match that could have been another") {
  Builder b = build({});
  const an::Result r = run(b);
  const auto races = of_kind(r, "rma-race");
  REQUIRE(races.size() == 1);
  const an::Finding& f = races[0];
  CHECK(f.severity == an::Severity::error);
  CHECK(f.message.find("data race in another execution on rank 0's memory") != std::string::npos);
  CHECK(f.message.find("ordered in this run only through the message a wildcard receive took") != std::string::npos);
  REQUIRE(f.locations.size() == 2);
  CHECK(f.locations[0].event == an::EventRef{0, 3});  // the load
  CHECK(f.locations[1].event == an::EventRef{1, 3});  // the Put
  // The witness: rank 0's first receive (0:2) takes rank 2's message (2:2)
  // and returns before rank 1 sends (1:5), so its load (0:3) may come
  // before rank 1's unlock (1:4) returns.
  REQUIRE(f.notes.size() == 3);
  CHECK(f.notes[0] == "in another execution 0:2 takes 2:2 (the run: 1:5)");
  CHECK(f.notes[1] == "then 0:3 can start before 1:4 returns: 0:2 returns before 1:5 is called");
  CHECK(f.notes[2].rfind("witness (", 0) == 0);
  CHECK(r.stats.at("rma_race_predicted_candidates") == 1);
}

TEST_CASE("predictive rma-race: without the SMT checks, or with the source named, nothing is predicted") {
  SUBCASE("rma-race alone has no oracle: the recorded order holds") {
    Builder b = build({});
    const an::Result r = run(b, false);
    CHECK(of_kind(r, "rma-race").empty());
    CHECK(r.stats.count("rma_race_predicted_candidates") == 0);
  }
  SUBCASE("fixed: the receive names rank 1") {
    Builder b = build({1, false});
    const an::Result r = run(b);
    CHECK(of_kind(r, "rma-race").empty());
    CHECK(r.stats.count("rma_race_predicted_candidates") == 0);
  }
}

TEST_CASE("predictive rma-race: an execution that reuses what the recorded status gave is no witness") {
  // The other match's execution answers rank 1 (the recorded source) before
  // the load; a program that answers status.MPI_SOURCE answers rank 2 there.
  Builder b = build({tf::k_any_source, false, true});
  const an::Result r = run(b);
  const auto races = of_kind(r, "rma-race");
  REQUIRE(races.size() == 1);
  CHECK(races[0].severity == an::Severity::info);
  CHECK(races[0].message.find("whether another match lets them overlap is undecided (in the execution found, 0:3 "
                              "MPI_Send to rank 1") != std::string::npos);
  CHECK(races[0].message.find("names rank 1, the source of the message 0:2 took in the recorded run") !=
        std::string::npos);
}

TEST_CASE("predictive rma-race: the other match is infeasible, so the candidate is proved ordered") {
  // Rank 2 sends only after rank 0's load: the first wildcard receive can
  // only take rank 1's message in every execution.
  Builder b = build({tf::k_any_source, true});
  const an::Result r = run(b);
  CHECK(of_kind(r, "rma-race").empty());
  CHECK(r.stats.at("rma_race_predicted_candidates") == 1);
}

TEST_CASE("predictive rma-race: smtrace prove reports it with the witness") {
  Builder b = build({});
  const fs::path dir = fs::temp_directory_path() / ("smtrace-unit-predict-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  tf::write_trace(b.trace(), dir);
  smt::ProveOptions options;
  options.threads = 1;
  const smt::ProveResult result = smt::prove(dir, options);
  fs::remove_all(dir);
  const auto it = std::find_if(result.findings.begin(), result.findings.end(),
                               [](const smt::ProveFinding& f) { return f.finding.kind == "rma-race"; });
  REQUIRE(it != result.findings.end());
  CHECK(it->verdict == smt::Verdict::sat);
  REQUIRE(it->witness);
  CHECK(it->witness->replayed);
  const bool other = std::any_of(it->witness->matches.begin(), it->witness->matches.end(), [](const smt::MatchRef& m) {
    return m.receive == an::EventRef{0, 2} && m.send == an::EventRef{2, 2};
  });
  CHECK(other);
}

namespace {

// Rank 0 receives twice from MPI_ANY_SOURCE, into room for `first_count`
// elements of `first_type`, then 3 elements of `second_type`; rank 1 sends
// 1 x MPI_INT, rank 2 3 elements of `second_type`; the run took rank 1's
// message first (nd_trunc_any, nd_type_any).
Builder fan_in_buffers(int64_t first_count, uint32_t first_type, uint32_t second_type) {
  Builder b(3);
  const auto message = [&](Call call, uint32_t rank, int32_t peer, int32_t from, int64_t count, uint32_t type) {
    tf::Event& e = b.add(call, rank);
    e.comm = 0;
    e.peer = peer;
    e.tag = k_tag;
    e.buf = 0x20000;
    e.count = count;
    e.datatype = type;
    if (call == Call::Recv) {
      e.status.source = from;
      e.status.tag = k_tag;
      e.status.count = from == 1 ? 4 : 12;
    }
  };
  message(Call::Send, 1, 0, -1, 1, k_int);
  message(Call::Send, 2, 0, -1, 3, second_type);
  message(Call::Recv, 0, tf::k_any_source, 1, first_count, first_type);
  message(Call::Recv, 0, tf::k_any_source, 2, 3, second_type);
  for (uint32_t r = 0; r < 3; ++r) b.add(Call::Finalize, r);
  return b;
}

an::Result run_races(Builder& b) {
  an::Options options;
  options.extra_checks = smt::check_factories({});
  options.checks = {"message-race", "type-mismatch"};
  return analyze_trace(b.trace(), options);
}

}  // namespace

TEST_CASE("message-race: another match whose message does not fit the receive's buffer is an error") {
  constexpr uint32_t k_float = 13;
  SUBCASE("truncated: 3 ints into room for 1") {
    Builder b = fan_in_buffers(1, k_int, k_int);
    const an::Result r = run_races(b);
    CHECK(of_kind(r, "type-mismatch").empty());  // the recorded matches fit
    const auto races = of_kind(r, "message-race");
    REQUIRE(!races.empty());
    CHECK(races[0].severity == an::Severity::error);
    CHECK(races[0].message.find("which does not fit its buffer (message truncated)") != std::string::npos);
    CHECK(races[0].locations[0].event == an::EventRef{0, 1});
  }
  SUBCASE("another type: 3 floats into room for ints") {
    Builder b = fan_in_buffers(3, k_int, k_float);
    const auto races = of_kind(run_races(b), "message-race");
    REQUIRE(!races.empty());
    CHECK(races[0].severity == an::Severity::error);
    CHECK(races[0].message.find("has another type signature than its buffer") != std::string::npos);
  }
  SUBCASE("fixed: room for every message either receive can take") {
    Builder b = fan_in_buffers(3, k_int, k_int);
    for (const an::Finding& f : of_kind(run_races(b), "message-race")) CHECK(f.severity == an::Severity::info);
  }
}
