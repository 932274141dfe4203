// `smtrace check --format html`: the findings as one self-contained HTML
// page (inline CSS, a small inline script, inline SVG; nothing fetched from
// the network). Findings are grouped by kind; each shows its headline, its
// locations with a few lines of source around each (when the file can be
// read), its notes, and a small timeline (SVG) of the ranks and events
// involved, with their neighbours in program order for context.
//
// Thread safety: reentrant; reads the rank files of the ranks involved.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/analyze.hpp"
#include "analyzer/report.hpp"

namespace smtrace::exchange {

struct HtmlContext {
  std::vector<analyzer::RuleInfo> rules;  // descriptions of the kinds
  std::string title;                      // shown at the top (the trace directory)
  int source_lines = 3;                   // lines of source shown before and after each location
};

// Write `result`, the analysis of the trace in `dir`, as an HTML page to
// `out`, as it is rendered; render_html returns the same bytes.
// Events are read back from `dir` for the timelines; a rank file that is
// missing or damaged leaves its events out of the pictures, not the report.
void write_html(std::ostream& out, const analyzer::Result& result, const std::filesystem::path& dir,
                const HtmlContext& context);
std::string render_html(const analyzer::Result& result, const std::filesystem::path& dir, const HtmlContext& context);

// Return `text` with &, <, >, " and ' escaped for HTML text and attribute values.
std::string html_escape(std::string_view text);

}  // namespace smtrace::exchange
