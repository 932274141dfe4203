// exchange/perfetto: the JSON parses, has the shape Perfetto reads
// (perfetto_schema.hpp), a track per rank and thread, a slice per event, a
// flow per matched message bound to its slices, and the findings marked.
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "exchange/perfetto.hpp"
#include "exchange/view.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "tests/unit/perfetto_schema.hpp"
#include "tests/unit/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace tf = smtrace::format;
namespace ex = smtrace::exchange;
using tf::Call;

// Rank 0 sends twice to rank 1 (thread 1 sends the second), which receives
// both; then both ranks block in a receive nobody sends (a deadlock).
tf::Trace two_messages_and_a_deadlock() {
  smtrace::test::Builder b(2);
  b.trace().ranks[0].header.thread_level = 3;  // two threads of rank 0 call MPI: MPI_THREAD_MULTIPLE
  for (int k = 0; k < 2; ++k) {
    tf::Event& send = b.add(Call::Send, 0);
    send.comm = 0;
    send.peer = 1;
    send.tag = k;
    send.thread = static_cast<uint32_t>(k);
    tf::Event& recv = b.add(Call::Recv, 1);
    recv.comm = 0;
    recv.peer = 0;
    recv.tag = k;
    recv.status.source = 0;
    recv.status.tag = k;
  }
  for (uint32_t r = 0; r < 2; ++r) {
    tf::Event& stuck = b.add(Call::Recv, r);
    stuck.comm = 0;
    stuck.peer = 1 - static_cast<int32_t>(r);
    stuck.tag = 99;
    stuck.pending = true;
    b.unfinalize(r);
  }
  return b.trace();
}

fs::path write(const tf::Trace& trace) {
  const fs::path dir = smtrace::test::scratch_dir("perfetto");
  tf::write_trace(trace, dir);
  return dir;
}

}  // namespace

TEST_SUITE_BEGIN("exchange");

TEST_CASE("exchange::write_perfetto::the JSON has Perfetto's shape") {
  const fs::path dir = write(two_messages_and_a_deadlock());
  for (const ex::WithFindings findings : {ex::WithFindings::no, ex::WithFindings::yes}) {
    CAPTURE(findings == ex::WithFindings::yes);
    const ex::TraceView view = ex::collect_view(dir, {}, findings);
    std::ostringstream out;
    const ex::PerfettoStats stats = ex::write_perfetto(dir, view, out);
    const nlohmann::json doc = nlohmann::json::parse(out.str());
    const auto errors = smtrace::test::perfetto_schema_errors(doc);
    for (const std::string& e : errors) INFO(e);
    CHECK(errors.empty());

    std::set<std::pair<int64_t, int64_t>> tracks;
    int slices = 0, flows = 0, marks = 0, pending = 0;
    for (const auto& e : doc["traceEvents"]) {
      if (e["ph"] == "X") {
        ++slices;
        tracks.insert({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
        if (e["args"].value("pending", false)) ++pending;
      }
      if (e["ph"] == "s" && e["cat"] == "message") ++flows;
      if (e["ph"] == "i" && e["cat"] == "finding") ++marks;
    }
    CHECK(slices == 8);  // per rank: Init, two sends or receives, the stuck receive
    CHECK(stats.slices == 8);
    CHECK(tracks == std::set<std::pair<int64_t, int64_t>>{{0, 0}, {0, 1}, {1, 0}});
    CHECK(flows == 2);
    CHECK(stats.flows == 2);
    CHECK(pending == 2);
    if (findings == ex::WithFindings::yes) {
      CHECK(marks == 2);  // the deadlock's two locations
      CHECK(stats.finding_marks == 2);
    } else {
      CHECK(marks == 0);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("exchange::perfetto_schema_errors::catches what Perfetto would reject") {
  using nlohmann::json;
  const json slice = {{"ph", "X"}, {"name", "MPI_Send"}, {"cat", "p2p"}, {"pid", 0}, {"tid", 0}, {"ts", 1.0},
                      {"dur", 2.0}};
  json doc = {{"displayTimeUnit", "ns"}, {"traceEvents", json::array({slice})}};
  CHECK(smtrace::test::perfetto_schema_errors(doc).empty());
  json negative = slice;
  negative["dur"] = -1.0;
  doc["traceEvents"] = json::array({negative});
  CHECK_FALSE(smtrace::test::perfetto_schema_errors(doc).empty());
  const json lonely = {{"ph", "s"}, {"name", "message"}, {"cat", "message"}, {"id", 1}, {"pid", 0}, {"tid", 0},
                       {"ts", 1.5}};
  doc["traceEvents"] = json::array({slice, lonely});
  CHECK_FALSE(smtrace::test::perfetto_schema_errors(doc).empty());  // no finish
  json unbound = lonely;
  unbound["ph"] = "f";
  unbound["bp"] = "e";
  unbound["ts"] = 50.0;
  doc["traceEvents"] = json::array({slice, lonely, unbound});
  CHECK_FALSE(smtrace::test::perfetto_schema_errors(doc).empty());  // the finish encloses no slice
  unbound["ts"] = 2.5;
  doc["traceEvents"] = json::array({slice, lonely, unbound});
  CHECK(smtrace::test::perfetto_schema_errors(doc).empty());
}

TEST_SUITE_END();
