// The replay's matching runs on the options' threads (analyzer/replay.cpp):
// the same analysis on one thread and on several gives the same matches and
// the same report bytes, on synthetic traces of every generator, with and
// without their bugs.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "analyzer/analyze.hpp"
#include "analyzer/report.hpp"
#include "trace_format/synth.hpp"
#include "tests/unit/scratch_dir.hpp"

namespace fs = std::filesystem;
namespace fmt_ns = smtrace::format;

namespace {

smtrace::analyzer::Result analyze_on(const fs::path& dir, unsigned threads) {
  smtrace::analyzer::Options options;
  options.threads = threads;
  return smtrace::analyzer::analyze(dir, options);
}

void same_on_any_threads(const std::string& generator, fmt_ns::SynthBug bug) {
  CAPTURE(generator);
  CAPTURE(static_cast<int>(bug));
  const fs::path dir = smtrace::test::scratch_dir("replay-threads-" + generator);
  fmt_ns::SynthOptions o;
  o.ranks = generator == "fig6" ? 3 : 6;
  o.events = 600;
  o.bug = bug;
  o.threads = 2;
  fmt_ns::write_synthetic_trace(generator, dir, o);
  const auto one = analyze_on(dir, 1);
  const std::string expected = smtrace::analyzer::render_json(one);
  CHECK(one.stats.at("matches") > 0);
  for (unsigned threads : {2u, 3u, 8u}) {
    CAPTURE(threads);
    const auto many = analyze_on(dir, threads);
    CHECK(many.stats.at("matches") == one.stats.at("matches"));
    CHECK(smtrace::analyzer::render_json(many) == expected);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace

TEST_CASE("analyzer::Replay::replay::the same matches and report on one thread and on several") {
  for (const std::string& generator : fmt_ns::synth_generators()) {
    same_on_any_threads(generator, fmt_ns::SynthBug::none);
  }
  same_on_any_threads("halo", fmt_ns::SynthBug::deadlock);
  same_on_any_threads("halo", fmt_ns::SynthBug::collective_mismatch);
}
