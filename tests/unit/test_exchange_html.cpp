// exchange/html: one self-contained page: findings by kind, escaped text,
// an SVG timeline per finding, source lines around each location, the
// checks that did not run; nothing fetched from elsewhere.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "exchange/html.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "tests/unit/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace tf = smtrace::format;
namespace an = smtrace::analyzer;
namespace ex = smtrace::exchange;
using tf::Call;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_SUITE_BEGIN("exchange");

TEST_CASE("exchange::render_html::a self-contained page of the findings") {
  const fs::path dir = smtrace::test::scratch_dir("html");
  fs::create_directories(dir);
  // A source file beside the trace, named as the call sites name it.
  {
    std::ofstream source(dir / "prog.c");
    for (int line = 1; line <= 30; ++line) source << "line " << line << (line == 11 ? " <call & \"quote\">" : "") << "\n";
  }
  smtrace::test::Builder b(2);
  for (uint32_t r = 0; r < 2; ++r) {
    tf::Event& stuck = b.add(Call::Recv, r);  // seq 1: line 11
    stuck.comm = 0;
    stuck.peer = 1 - static_cast<int32_t>(r);
    stuck.tag = 1;
    stuck.pending = true;
    b.unfinalize(r);
    for (auto& [id, site] : b.trace().ranks[r].sites) site.file = (dir / "prog.c").string();
  }
  const fs::path trace = dir / "trace";
  tf::write_trace(b.trace(), trace);
  an::Result result = an::analyze(trace);
  REQUIRE(result.findings.size() == 1);
  result.findings[0].notes.push_back("a note with <b>markup</b>");
  result.skipped.push_back({"rma-race", "the trace has no buffer addresses"});

  const std::string html = ex::render_html(result, trace, {an::check_rules(), "my <trace>", 2});
  std::ostringstream written;  // the stream version: the same bytes
  ex::write_html(written, result, trace, {an::check_rules(), "my <trace>", 2});
  CHECK(written.str() == html);
  CHECK(html.starts_with("<!DOCTYPE html>"));
  CHECK(html.find("<title>smtrace report: my &lt;trace&gt;</title>") != std::string::npos);
  CHECK(html.find("id=\"kind-deadlock\"") != std::string::npos);
  CHECK(count(html, "<details class=\"finding error\"") == 1);
  CHECK(count(html, "<svg class=\"timeline\"") == 1);
  CHECK(count(html, "class=\"ev hit error pending\"") == 2);  // both receives never returned
  CHECK(html.find("a note with &lt;b&gt;markup&lt;/b&gt;") != std::string::npos);
  CHECK(html.find("<b>markup</b>") == std::string::npos);
  // Lines 9..13 around line 11, the located one marked, its text escaped.
  CHECK(html.find("<span class=\"l hit\"><span class=\"n\">11</span>line 11 &lt;call &amp; &quot;quote&quot;&gt;</span>") !=
        std::string::npos);
  CHECK(html.find("<span class=\"n\">9</span>") != std::string::npos);
  CHECK(html.find("<span class=\"n\">14</span>") == std::string::npos);
  CHECK(html.find("rma-race</b>: the trace has no buffer addresses") != std::string::npos);
  CHECK(html.find("data-smtrace-ready") != std::string::npos);
  // Self-contained: nothing to fetch.
  for (const char* remote : {"http://", "https://", "src=\"", "<link", "@import"}) {
    CAPTURE(remote);
    CHECK((html.find(remote) == std::string::npos ||
           std::string(remote) == "http://"));  // the SVG namespace is a name, not a fetch
  }
  CHECK(count(html, "http://") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  fs::remove_all(dir);
}

TEST_CASE("exchange::render_html::no findings") {
  an::Result result;
  const std::string html = ex::render_html(result, "/nonexistent", {});
  CHECK(html.find("No findings.") != std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);
}

TEST_CASE("exchange::html_escape") {
  CHECK(ex::html_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
}

TEST_SUITE_END();
