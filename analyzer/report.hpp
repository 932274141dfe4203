// Rendering an analysis Result as a report: text for people (compiler-style
// diagnostics), JSON for programs, SARIF 2.1.0 for code-scanning views.
// The shapes are documented in docs/check-output.md; they are stable (JSON
// and SARIF keys are only ever added).
//
// Thread safety: every function here is reentrant and keeps no state.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/finding.hpp"
#include "trace_format/content.hpp"

namespace smtrace::analyzer {

// The version of the JSON report's shape ("format_version"); raised only
// when a key changes meaning or goes away, never when one is added.
inline constexpr int k_report_format_version = 1;

enum class ReportFormat : uint8_t { text, json, sarif };

// Return the format named `name` ("text", "json", "sarif"), or nothing.
std::optional<ReportFormat> report_format(std::string_view name);

// What a report says about one check (SARIF's rules, `check --list`).
struct RuleInfo {
  std::string name;         // "deadlock"
  Severity severity = Severity::error;
  std::string description;  // one line
  format::ContentSet needs = 0;  // what it cannot run without (Check::needs)
};

// Return a RuleInfo for every check, in report order (from all_checks()).
std::vector<RuleInfo> check_rules();

// What a report needs besides the Result.
struct ReportContext {
  std::string tool_version;      // SARIF's tool.driver.version; empty: this build's
  std::vector<RuleInfo> rules;   // SARIF's rules; kinds not listed get a rule of their own
};

// A buffer in front of an ostream for the renderers: text is appended to a
// string that goes to the stream whenever it holds k_chunk bytes, and at
// flush() or destruction, so that a report is written as it is rendered and
// never held whole in memory. Write errors are the stream's state.
class ReportSink {
 public:
  static constexpr size_t k_chunk = size_t{64} << 10;

  explicit ReportSink(std::ostream& out) : m_out(out) { m_buffer.reserve(k_chunk + 1024); }
  ReportSink(const ReportSink&) = delete;
  ReportSink& operator=(const ReportSink&) = delete;
  ~ReportSink() { flush(); }

  ReportSink& operator+=(std::string_view text) {
    m_buffer.append(text);
    return spill();
  }
  ReportSink& operator+=(char c) {
    m_buffer += c;
    return spill();
  }
  // Append fmt::format(pattern, args...).
  template <typename... Args>
  ReportSink& format(fmt::format_string<Args...> pattern, Args&&... args) {
    fmt::format_to(std::back_inserter(m_buffer), pattern, std::forward<Args>(args)...);
    return spill();
  }
  // The buffer itself, for code that appends in place (json_quote_to);
  // call spill() after.
  std::string& buffer() { return m_buffer; }
  ReportSink& spill() {
    if (m_buffer.size() >= k_chunk) flush();
    return *this;
  }
  void flush() {
    if (m_buffer.empty()) return;
    m_out.write(m_buffer.data(), static_cast<std::streamsize>(m_buffer.size()));
    m_buffer.clear();
  }

 private:
  std::ostream& m_out;
  std::string m_buffer;
};

// Return the finding counts of `result` by severity.
struct Counts {
  uint64_t errors = 0;
  uint64_t warnings = 0;
  uint64_t infos = 0;
};
Counts count_findings(const Result& result);

// Return the SUMMARY line of `result`, without a newline:
// "SUMMARY: 2 errors, 1 warning in 4 ranks, 1234 events (trace complete)".
std::string summary_line(const Result& result);

// The renderers write to `out` as they go (write_*); render_* return the
// same bytes as a string, for tests and small reports.

// Write `result` as compiler-style diagnostics, one headline per finding,
// ending with the SUMMARY line (docs/check-output.md, "Text").
void write_text(std::ostream& out, const Result& result);
std::string render_text(const Result& result);
// Write what write_text writes before the SUMMARY line (prove's text
// report puts its questions between the two).
void write_diagnostics(std::ostream& out, const Result& result);

// Write `result` as a pretty-printed JSON object (docs/check-output.md, "JSON").
void write_json(std::ostream& out, const Result& result);
std::string render_json(const Result& result);

// Write `result` as a SARIF 2.1.0 log with one run (docs/check-output.md, "SARIF").
void write_sarif(std::ostream& out, const Result& result, const ReportContext& context);
std::string render_sarif(const Result& result, const ReportContext& context);

// Write `result` rendered in `format`.
void write_report(std::ostream& out, const Result& result, ReportFormat format, const ReportContext& context);
std::string render(const Result& result, ReportFormat format, const ReportContext& context);

// Return where `location` is as compilers write it: "FILE:LINE:COL",
// "FILE:LINE" or "FILE"; empty when its file is unknown.
std::string location_where(const Location& location);
// Return "rank R (event R:SEQ) in MPI_Xxx[ called from FUNCTION][: NOTE]",
// the function only where no file says where the call is.
std::string location_description(const Location& location);
// Return the note line a report prints for a check that did not run:
// "check rma-race did not run: the trace has no buffer addresses (...)".
std::string skipped_text(const SkippedCheck& skipped);

// Return `text` as a JSON string literal: quotes, backslashes and control
// characters escaped, invalid UTF-8 bytes replaced by U+FFFD.
std::string json_quote(std::string_view text);
// Append json_quote(text) to `out`.
void json_quote_to(std::string& out, std::string_view text);

}  // namespace smtrace::analyzer
