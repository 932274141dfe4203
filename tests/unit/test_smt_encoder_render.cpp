// The reports of `smtrace prove` (smt_encoder/render.cpp) on a hand-made
// ProveResult: write_text / write_json write as they go, in chunks, the
// bytes that render_text / render_json return.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "tests/unit/recording_stream.hpp"
#include "smt_encoder/prove.hpp"

namespace {

namespace an = smtrace::analyzer;
namespace smt = smtrace::smt;

smt::Witness witness(size_t steps, smt::Outcome outcome) {
  smt::Witness w;
  w.outcome = outcome;
  w.replayed = true;
  for (size_t i = 0; i < steps; ++i) {
    smt::Step s;
    s.action = i % 3 == 2 ? smt::StepAction::match : smt::StepAction::call;
    s.event = {static_cast<uint32_t>(i % 4), i};
    s.call = i % 2 ? "MPI_Recv" : "MPI_Send";
    s.receive = {1, i};
    s.send = {0, i};
    w.schedule.push_back(s);
  }
  w.matches = {{{1, 2}, {0, 1}, false}, {{2, 5}, {3, 4}, true}};
  if (outcome == smt::Outcome::deadlock) w.cycle = {{{0, 7}, "MPI_Recv", {1}}, {{1, 8}, "MPI_Recv", {0, 2}}};
  w.omitted = 3;
  return w;
}

// Findings, questions of every verdict and races, each with enough steps
// that the report runs to several chunks.
smt::ProveResult sample() {
  smt::ProveResult result;
  result.trace = "/tmp/a \"trace\"";
  result.world_size = 4;
  result.complete = true;
  result.smt_timeout_s = 2.5;
  for (int i = 0; i < 3; ++i) {
    smt::ProveFinding f;
    f.finding.kind = "message-race";
    f.finding.severity = i == 0 ? an::Severity::error : an::Severity::warning;
    f.finding.message = "receive 1:" + std::to_string(i) + " can match another send\t\xc3\xa9";
    an::Location l;
    l.event = {1, static_cast<uint64_t>(i)};
    l.call = "MPI_Recv";
    l.file = "src/race.c";
    l.line = 10;
    f.finding.locations = {l, l};
    f.finding.notes = {"note one", "note \"two\""};
    if (i != 2) f.witness = witness(2000, i == 0 ? smt::Outcome::deadlock : smt::Outcome::unmatched);
    result.findings.push_back(f);
  }
  smt::Answer sat{{smt::QuestionKind::can_match, {1, 2}, {0, 1}}, smt::Verdict::sat, witness(3000, smt::Outcome::match), {}, {}};
  smt::Answer unsat{{smt::QuestionKind::can_precede, {0, 1}, {1, 2}}, smt::Verdict::unsat, std::nullopt,
                    {"0:1 happens after 1:2", "by the barrier"}, {}};
  smt::Answer unknown{{smt::QuestionKind::can_match, {2, 3}, {0, 4}}, smt::Verdict::unknown, std::nullopt, {}, "timeout"};
  result.answers = {sat, unsat, unknown};
  smt::Race race;
  race.receive = {1, 2};
  race.recorded = an::EventRef{0, 1};
  race.alternatives = {{{2, 1}, smt::Verdict::sat, smt::Outcome::deadlock, true, false},
                       {{3, 1}, smt::Verdict::unsat, smt::Outcome::harmless, false, true}};
  result.races = {race, smt::Race{{2, 2}, std::nullopt, {}}};
  result.stats = {{"events", 1234}, {"parts", 2}};
  result.unknown = 1;
  result.undecided = {"part 1: out of memory"};
  return result;
}

}  // namespace

TEST_SUITE_BEGIN("smt");

TEST_CASE("smt render: write_json / write_text give render_json / render_text's bytes, in chunks") {
  const smt::ProveResult result = sample();
  const std::string json = smt::render_json(result);
  const std::string text = smt::render_text(result);
  smtrace::test::RecordingStream json_out, text_out;
  smt::write_json(json_out.out, result);
  smt::write_text(text_out.out, result);
  CHECK(json_out.buf.text == json);
  CHECK(text_out.buf.text == text);
  CHECK(json.size() > 4 * an::ReportSink::k_chunk);
  CHECK(text.size() > an::ReportSink::k_chunk);
  CHECK(json_out.buf.largest_write() < static_cast<std::streamsize>(an::ReportSink::k_chunk + 4096));
  CHECK(text_out.buf.largest_write() < static_cast<std::streamsize>(an::ReportSink::k_chunk + 4096));
  // The shape's landmarks, in order.
  const size_t findings = json.find("\n  \"findings\": [\n    {\"kind\": \"message-race\"");
  const size_t questions = json.find("\n  \"questions\": [\n    {\"question\": \"can-match\"");
  const size_t races = json.find("\n  \"races\": [\n    {\"receive\": \"1:2\", \"recorded\": \"0:1\"");
  CHECK(findings != std::string::npos);
  CHECK(questions > findings);
  CHECK(races > questions);
  CHECK(json.ends_with("  \"undecided\": [\"part 1: out of memory\"],\n  \"stats\": {\"events\": 1234, \"parts\": 2}\n}\n"));
  CHECK(json.find("\"witness\": null") != std::string::npos);
  CHECK(json.find(" \"omitted_steps\": 3}") != std::string::npos);
  // Text: the findings as check prints them, the questions, the SUMMARY last.
  CHECK(text.starts_with("src/race.c:10: error: receive 1:0 can match another send"));
  CHECK(text.find("can-match 1:2 0:1: sat\n  witness (3000 steps, replayed):\n     0. call 0:0 MPI_Send\n") !=
        std::string::npos);
  CHECK(text.find("  because: by the barrier\n") != std::string::npos);
  CHECK(text.find("  unknown: timeout (not a proof either way)\n") != std::string::npos);
  CHECK(text.ends_with("smtrace: note: undecided: part 1: out of memory\n"
                       "SUMMARY: 1 error, 2 warnings in 4 ranks, 1234 events (trace complete)\n"));
}

TEST_CASE("smt render: an empty result") {
  smt::ProveResult result;
  std::ostringstream out;
  smt::write_json(out, result);
  CHECK(out.str() == smt::render_json(result));
  CHECK(out.str().find("\"findings\": [],\n  \"questions\": [],\n  \"races\": [],\n") != std::string::npos);
  std::ostringstream text;
  smt::write_text(text, result);
  CHECK(text.str() == "SUMMARY: 0 errors, 0 warnings in 0 ranks, 0 events (trace incomplete)\n");
}

TEST_SUITE_END();
