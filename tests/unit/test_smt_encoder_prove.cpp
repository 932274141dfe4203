// prove() on synthetic traces with long parts (trace_format/synth.hpp): the
// race witnesses kept within Tuning::witness_steps. A witness runs from its
// part's start to the match, so keeping one whole per alternative grows
// with the square of a part's length (synth wildcard --ranks 5 --events 5k:
// 24 GB); past the budget a witness keeps its head. The verdicts, outcomes
// and notes must be the same as with every witness whole.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "smt_encoder/prove.hpp"
#include "smt_encoder/solve.hpp"
#include "trace_format/synth.hpp"

namespace {

namespace fs = std::filesystem;
namespace smt = smtrace::smt;
namespace tf = smtrace::format;

struct TempTrace {
  fs::path path;
  TempTrace(const std::string& name, const tf::SynthOptions& options) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("smtrace-unit-smt-prove-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    tf::write_synthetic_trace(name, path, options);
  }
  ~TempTrace() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

smt::ProveResult run(const fs::path& dir, smt::Buffering buffering, uint64_t witness_steps) {
  smt::ProveOptions o;
  o.threads = 1;
  o.smt_timeout_s = 60;
  o.buffering = buffering;
  o.tuning.witness_steps = witness_steps;
  return smt::prove(dir, o);
}

// Compare the report of `dir` with every witness whole and with `budget` steps.
void compare(const fs::path& dir, smt::Buffering buffering, uint64_t budget) {
  const smt::ProveResult whole = run(dir, buffering, UINT64_MAX);
  const smt::ProveResult cut = run(dir, buffering, budget);
  REQUIRE(whole.unknown == 0);
  CHECK(cut.unknown == 0);
  REQUIRE(whole.races.size() == cut.races.size());
  for (std::size_t i = 0; i < whole.races.size(); ++i) {
    const smt::Race& a = whole.races[i];
    const smt::Race& b = cut.races[i];
    CHECK(a.receive == b.receive);
    REQUIRE(a.alternatives.size() == b.alternatives.size());
    for (std::size_t j = 0; j < a.alternatives.size(); ++j) {
      CHECK(a.alternatives[j].send == b.alternatives[j].send);
      CHECK(a.alternatives[j].verdict == b.alternatives[j].verdict);
      CHECK(a.alternatives[j].outcome == b.alternatives[j].outcome);
      CHECK(a.alternatives[j].outcome_known == b.alternatives[j].outcome_known);
      CHECK(a.alternatives[j].alone == b.alternatives[j].alone);
    }
  }
  // Same findings and notes (the notes give each witness's whole length);
  // a cut witness is the head of the whole one.
  REQUIRE(whole.findings.size() == cut.findings.size());
  uint64_t omitted = 0, kept = 0;
  for (std::size_t i = 0; i < whole.findings.size(); ++i) {
    const smt::ProveFinding& a = whole.findings[i];
    const smt::ProveFinding& b = cut.findings[i];
    CHECK(a.finding.kind == b.finding.kind);
    CHECK(a.finding.severity == b.finding.severity);
    CHECK(a.finding.message == b.finding.message);
    CHECK(a.finding.notes == b.finding.notes);
    REQUIRE(a.witness.has_value() == b.witness.has_value());
    if (!a.witness) continue;
    CHECK(a.witness->omitted == 0);
    CHECK(a.witness->replayed);
    CHECK(b.witness->replayed);
    CHECK(b.witness->outcome == a.witness->outcome);
    CHECK(b.witness->schedule.size() + b.witness->omitted == a.witness->schedule.size());
    const auto& sa = a.witness->schedule;
    const auto& sb = b.witness->schedule;
    REQUIRE(sb.size() <= sa.size());
    for (std::size_t k = 0; k < sb.size(); ++k) {
      CHECK(sb[k].action == sa[k].action);
      CHECK(sb[k].event == sa[k].event);
      CHECK(sb[k].receive == sa[k].receive);
      CHECK(sb[k].send == sa[k].send);
    }
    if (b.witness->omitted) {
      ++omitted;
      CHECK(sb.size() <= smt::k_witness_head);
    } else {
      kept += sb.size();
    }
  }
  CHECK(omitted > 0);  // the budget was reached
  CHECK(kept <= std::max<uint64_t>(budget, whole.findings.empty() ? 0 : whole.findings[0].witness->schedule.size()));
  CHECK(smt::render_text(whole) == smt::render_text(cut));
}

}  // namespace

TEST_CASE("smt prove: race witnesses past the budget keep their head; verdicts and notes the same") {
  SUBCASE("wildcard (every outcome harmless)") {
    tf::SynthOptions o;
    o.ranks = 4;
    o.events = 300;
    o.threads = 1;
    const TempTrace trace("wildcard", o);
    compare(trace.path, smt::Buffering::infinite, 2000);
    compare(trace.path, smt::Buffering::zero, 2000);
  }
  SUBCASE("fig6 (alternatives that deadlock or leave a message unreceived)") {
    tf::SynthOptions o;
    o.ranks = 3;
    o.iterations = 40;
    o.threads = 1;
    const TempTrace trace("fig6", o);
    compare(trace.path, smt::Buffering::infinite, 500);
    compare(trace.path, smt::Buffering::zero, 500);
  }
}
