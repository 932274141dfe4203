// Rendering a Result as text, JSON and SARIF (analyzer/report.hpp), on
// hand-made Results: no trace, no checks.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "analyzer/report.hpp"
#include "tests/unit/recording_stream.hpp"

using namespace smtrace::analyzer;

namespace {

Location at(uint32_t rank, uint64_t seq, std::string call, std::string file, uint32_t line, uint32_t column,
            std::string note) {
  Location location;
  location.event = {rank, seq};
  location.call = std::move(call);
  location.function = "main";
  location.file = std::move(file);
  location.line = line;
  location.column = column;
  location.note = std::move(note);
  return location;
}

// Two ranks receiving from each other, a leak without a site, a read problem.
Result sample() {
  Result result;
  Finding deadlock;
  deadlock.kind = "deadlock";
  deadlock.severity = Severity::error;
  deadlock.message = "ranks 0 and 1 wait for each other";
  deadlock.locations.push_back(at(0, 2, "MPI_Recv", "src/hang.c", 12, 5, "waits for a message from rank 1"));
  deadlock.locations.push_back(at(1, 2, "MPI_Recv", "src/hang.c", 12, 0, "waits for a message from rank 0"));
  deadlock.notes.push_back("the cycle: 0 -> 1 -> 0");
  Finding leak;
  leak.kind = "resource-leak";
  leak.severity = Severity::warning;
  leak.message = "communicator comm#2 is never freed";
  Location unknown;
  unknown.event = {1, 1};
  unknown.call = "MPI_Comm_split";
  leak.locations.push_back(unknown);
  result.findings = {deadlock, leak};
  smtrace::format::Problem problem;
  problem.severity = smtrace::format::Problem::Severity::error;
  problem.file = "t/rank-0.smt";
  problem.offset = 112;
  problem.rank = 0;
  problem.message = "chunk cut short";
  result.problems.push_back(problem);
  result.stats = {{"events", 12}, {"matches", 3}};
  result.world_size = 2;
  result.complete = false;
  return result;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// sample() with its findings repeated until every report runs to several
// of ReportSink's chunks, with text that needs escaping.
Result large_sample() {
  Result result = sample();
  const std::vector<Finding> findings = result.findings;
  for (int i = 0; i < 2000; ++i) {
    for (Finding finding : findings) {
      finding.message += " \"#" + std::to_string(i) + "\"\t\x01 \xc3\xa9 \xff";
      result.findings.push_back(std::move(finding));
    }
  }
  result.notes.push_back("a note");
  result.skipped.push_back({"rma-race", "the trace has no buffer addresses"});
  return result;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::render_text::diagnostics") {
  const std::string text = render_text(sample());
  const std::string expected =
      "src/hang.c:12:5: error: ranks 0 and 1 wait for each other [deadlock]\n"
      "src/hang.c:12:5: note: rank 0 (event 0:2) in MPI_Recv: waits for a message from rank 1\n"
      "src/hang.c:12: note: rank 1 (event 1:2) in MPI_Recv: waits for a message from rank 0\n"
      "smtrace: note: the cycle: 0 -> 1 -> 0\n"
      "smtrace: warning: communicator comm#2 is never freed [resource-leak]\n"
      "smtrace: note: rank 1 (event 1:1) in MPI_Comm_split\n"
      "t/rank-0.smt: warning: byte 112: rank 0: chunk cut short\n"
      "SUMMARY: 1 error, 1 warning, 1 read problem in 2 ranks, 12 events (trace incomplete)\n";
  CHECK(text == expected);

  SUBCASE("a clean complete trace") {
    Result clean;
    clean.world_size = 4;
    clean.complete = true;
    clean.stats["events"] = 1234;
    CHECK(render_text(clean) == "SUMMARY: 0 errors, 0 warnings in 4 ranks, 1234 events (trace complete)\n");
  }
  SUBCASE("a function but no file") {
    Result result;
    Finding finding;
    finding.kind = "request-leak";
    finding.message = "request never completed";
    Location location;
    location.event = {3, 9};
    location.call = "MPI_Isend";
    location.function = "exchange";
    finding.locations.push_back(location);
    result.findings.push_back(finding);
    CHECK(contains(render_text(result), "smtrace: note: rank 3 (event 3:9) in MPI_Isend called from exchange\n"));
  }
}

TEST_CASE("analyzer::count_findings::by_severity") {
  Result result = sample();
  Finding info;
  info.kind = "x";
  info.severity = Severity::info;
  result.findings.push_back(info);
  const Counts counts = count_findings(result);
  CHECK(counts.errors == 1);
  CHECK(counts.warnings == 1);
  CHECK(counts.infos == 1);
  CHECK(contains(summary_line(result), "1 error, 1 warning, 1 info, 1 read problem"));
}

TEST_CASE("analyzer::render_json::shape") {
  const std::string json = render_json(sample());
  CHECK(json.starts_with("{\n  \"schema\": \"smtrace-check\",\n  \"format_version\": 1,\n"));
  CHECK(json.ends_with("}\n"));
  CHECK(contains(json, "\"kind\": \"deadlock\""));
  CHECK(contains(json, "\"kind\": \"resource-leak\""));
  CHECK(contains(json, "\"severity\": \"warning\""));
  CHECK(contains(json, "\"event\": \"1:2\""));
  CHECK(contains(json, "\"call\": \"MPI_Recv\""));
  CHECK(contains(json, "\"file\": \"src/hang.c\""));
  CHECK(contains(json, "\"line\": 12,"));
  CHECK(contains(json, "\"column\": 5,"));
  CHECK(contains(json, "\"notes\": [\n        \"the cycle: 0 -> 1 -> 0\"\n      ]"));
  CHECK(contains(json, "\"complete\": false"));
  CHECK(contains(json, "\"ranks\": 2"));
  CHECK(contains(json, "\"matches\": 3"));
  CHECK(contains(json, "\"offset\": 112"));
  CHECK(contains(json, "\"seq\": null"));
  CHECK(contains(json, "\"errors\": 1"));

  SUBCASE("no findings: empty arrays and no kind key at all") {
    Result clean;
    clean.complete = true;
    const std::string text = render_json(clean);
    CHECK(contains(text, "\"findings\": [],"));
    CHECK(contains(text, "\"problems\": [],"));
    CHECK(contains(text, "\"stats\": {}\n}"));
    CHECK_FALSE(contains(text, "\"kind\":"));
  }
}

TEST_CASE("analyzer::json_quote::escapes") {
  CHECK(json_quote("plain") == "\"plain\"");
  CHECK(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_quote("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
  CHECK(json_quote(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\\u007f\"");
  CHECK(json_quote(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
  SUBCASE("UTF-8 passes, invalid bytes become U+FFFD") {
    CHECK(json_quote("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\"");
    CHECK(json_quote("a\xff" "b") == "\"a\\ufffdb\"");
    CHECK(json_quote("\xc3") == "\"\\ufffd\"");                 // cut short
    CHECK(json_quote("\xc0\xaf") == "\"\\ufffd\\ufffd\"");       // overlong
    CHECK(json_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
  }
}

TEST_CASE("analyzer::render_sarif::shape") {
  ReportContext context;
  context.tool_version = "9.9.9";
  context.rules = {{"deadlock", Severity::error, "ranks blocked forever"},
                   {"resource-leak", Severity::warning, "handles never freed"}};
  Result result = sample();
  result.findings[0].locations[0].file = "/abs/my dir/hang.c";
  Finding other;
  other.kind = "custom-kind";
  other.severity = Severity::info;
  other.message = "a kind the rules do not list";
  result.findings.push_back(other);
  const std::string sarif = render_sarif(result, context);

  CHECK(contains(sarif, "\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\""));
  CHECK(contains(sarif, "\"version\": \"2.1.0\""));
  CHECK(contains(sarif, "\"name\": \"smtrace\""));
  CHECK(contains(sarif, "\"version\": \"9.9.9\""));
  CHECK(contains(sarif, "\"id\": \"deadlock\""));
  CHECK(contains(sarif, "\"text\": \"ranks blocked forever\""));
  CHECK(contains(sarif, "\"defaultConfiguration\": {\n"));
  CHECK(contains(sarif, "\"ruleId\": \"deadlock\",\n          \"ruleIndex\": 0,\n          \"level\": \"error\""));
  CHECK(contains(sarif, "\"ruleId\": \"resource-leak\",\n          \"ruleIndex\": 1,\n          \"level\": \"warning\""));
  // A kind without a rule gets one of its own, after the listed ones.
  CHECK(contains(sarif, "\"ruleId\": \"custom-kind\",\n          \"ruleIndex\": 2,\n          \"level\": \"note\""));
  CHECK(contains(sarif, "\"uri\": \"file:///abs/my%20dir/hang.c\""));
  CHECK(contains(sarif, "\"uri\": \"src/hang.c\""));
  CHECK(contains(sarif, "\"startLine\": 12"));
  CHECK(contains(sarif, "\"startColumn\": 5"));
  CHECK(contains(sarif, "\"relatedLocations\": ["));
  CHECK(contains(sarif, "\"text\": \"ranks 0 and 1 wait for each other\\nthe cycle: 0 -> 1 -> 0\""));
  CHECK(contains(sarif, "\"text\": \"rank 1 (event 1:2) in MPI_Recv: waits for a message from rank 0\""));
  CHECK(contains(sarif, "\"byteOffset\": 112"));
  CHECK(contains(sarif, "\"executionSuccessful\": true"));
}

TEST_CASE("analyzer::report_format::names") {
  CHECK(report_format("text") == ReportFormat::text);
  CHECK(report_format("json") == ReportFormat::json);
  CHECK(report_format("sarif") == ReportFormat::sarif);
  CHECK_FALSE(report_format("xml").has_value());
  CHECK(render(sample(), ReportFormat::text, {}) == render_text(sample()));
}

TEST_CASE("analyzer::write_report::the bytes of render, in chunks") {
  const Result result = large_sample();
  const ReportContext context{"1.2.3", check_rules()};
  for (const ReportFormat format : {ReportFormat::text, ReportFormat::json, ReportFormat::sarif}) {
    CAPTURE(static_cast<int>(format));
    const std::string whole = render(result, format, context);
    smtrace::test::RecordingStream stream;
    write_report(stream.out, result, format, context);
    CHECK(stream.buf.text == whole);
    CHECK(whole.size() > 4 * ReportSink::k_chunk);
    // Written as it goes: no write holds much more than a chunk.
    CHECK(stream.buf.largest_write() < static_cast<std::streamsize>(ReportSink::k_chunk + 4096));
    CHECK(stream.buf.writes.size() >= 4);
  }
  smtrace::test::RecordingStream text, json, sarif;
  write_text(text.out, result);
  write_json(json.out, result);
  write_sarif(sarif.out, result, context);
  CHECK(text.buf.text == render_text(result));
  CHECK(json.buf.text == render_json(result));
  CHECK(sarif.buf.text == render_sarif(result, context));
  // The string versions of the small sample, and its text against the
  // diagnostics + SUMMARY split that prove's text report relies on.
  std::ostringstream diagnostics;
  write_diagnostics(diagnostics, sample());
  CHECK(diagnostics.str() + summary_line(sample()) + "\n" == render_text(sample()));
  std::ostringstream small;
  write_json(small, sample());
  CHECK(small.str() == render_json(sample()));
}

TEST_CASE("analyzer::ReportSink::chunks, flush, order") {
  std::ostringstream out;
  {
    ReportSink sink(out);
    sink += "ab";
    sink += 'c';
    sink.format("{}-{}", 1, "x");
    CHECK(out.str().empty());  // still buffered
    sink.flush();
    CHECK(out.str() == "abc1-x");
    sink += std::string(ReportSink::k_chunk, 'y');  // a full chunk goes at once
    CHECK(out.str().size() == 6 + ReportSink::k_chunk);
    sink += "tail";
  }
  CHECK(out.str().size() == 10 + ReportSink::k_chunk);
  CHECK(out.str().ends_with("ytail"));
}

TEST_CASE("analyzer::json_quote_to::as json_quote") {
  for (const std::string& text : {std::string(), std::string("plain"), std::string("q\"b\\n\n\x7f\x01"),
                                 std::string("\xc3\xa9\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82")}) {
    std::string out = "prefix";
    json_quote_to(out, text);
    CHECK(out == "prefix" + json_quote(text));
  }
}

TEST_CASE("analyzer::check_rules::every_check") {
  const std::vector<RuleInfo> rules = check_rules();
  REQUIRE(rules.size() == check_names().size());
  for (size_t i = 0; i < rules.size(); ++i) CHECK(rules[i].name == check_names()[i]);
}

TEST_SUITE_END();
