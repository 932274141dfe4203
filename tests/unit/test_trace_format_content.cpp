// trace_format/content and the analyzer's use of it: a trace that says it
// lacks buffer addresses skips the checks that need them, and says so.
#include <doctest/doctest.h>

#include "analyzer/analyze.hpp"
#include "analyzer/report.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/content.hpp"

namespace tf = smtrace::format;
namespace an = smtrace::analyzer;

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("format::lacks::round trip through the header option") {
  tf::RankHeader header;
  CHECK(tf::lacks(header) == 0);
  const tf::ContentSet set = tf::content_bit(tf::Content::buffers) | tf::content_bit(tf::Content::type_signatures);
  tf::set_lacks(header, set);
  CHECK(header.options.at("trace.lacks") == "buffers,type_signatures");
  CHECK(tf::lacks(header) == set);
  CHECK(tf::describe_lacks(set) == "no buffer addresses; no type signatures (byte sizes only)");
  header.options["trace.lacks"] = "buffers,something_new";
  CHECK(tf::lacks(header) == tf::content_bit(tf::Content::buffers));
  tf::set_lacks(header, 0);
  CHECK(header.options.count("trace.lacks") == 0);
}

TEST_CASE("analyzer::analyze::skips the checks a trace lacks content for") {
  smtrace::test::Builder b(1);
  b.trace().ranks[0].header.options["trace.lacks"] = "buffers";
  b.trace().ranks[0].header.options["trace.imported_from"] = "otf2:/x/traces.otf2";
  b.add(tf::Call::Finalize);
  const an::Result result = smtrace::test::analyze_trace(b.trace(), {});
  REQUIRE(result.skipped.size() == 3);
  CHECK(result.skipped[0].check == "local-concurrency");
  CHECK(result.skipped[0].reason == "the trace has no buffer addresses (imported from otf2:/x/traces.otf2)");
  const std::string text = an::render_text(result);
  CHECK(text.find("smtrace: note: check rma-race did not run: the trace has no buffer addresses") != std::string::npos);
  CHECK(an::render_json(result).find("\"skipped_checks\": [") != std::string::npos);
  CHECK(an::render_sarif(result, {"1", an::check_rules()}).find("check cuda-mpi-race did not run") != std::string::npos);
  for (const an::RuleInfo& rule : an::check_rules()) {
    const bool buffers = rule.name == "local-concurrency" || rule.name == "rma-race" || rule.name == "cuda-mpi-race";
    CHECK(((rule.needs & tf::content_bit(tf::Content::buffers)) != 0) == buffers);
  }
}

TEST_SUITE_END();
