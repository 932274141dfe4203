// The HTML report. Everything is escaped on the way out (html_escape);
// the SVG timelines are drawn here, as text, from the events read back from
// the trace: no Graphviz run per finding, no script needed to see them.
#include "exchange/html.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/core.h>

#include "trace_format/reader.hpp"

namespace smtrace::exchange {

namespace fs = std::filesystem;
using analyzer::EventRef;
using analyzer::Finding;
using analyzer::Location;

namespace {

// Neighbours of each involved event drawn for context, on each side.
constexpr uint64_t k_context = 2;
constexpr std::uintmax_t k_max_source_bytes = 8u << 20;

struct DrawnEvent {
  uint64_t seq = 0;
  format::Call call = format::Call::unspecified;
  int64_t start = 0;  // ns on the common timeline of the ranks read
  int64_t end = 0;
  bool pending = false;
};

// The events the pictures need, read back from the rank files.
class EventTimes {
 public:
  EventTimes(const fs::path& dir, const std::vector<Finding>& findings) {
    std::map<uint32_t, std::set<uint64_t>> wanted;
    for (const Finding& finding : findings) {
      for (const Location& location : finding.locations) {
        const uint64_t seq = location.event.seq;
        auto& seqs = wanted[location.event.rank];
        for (uint64_t s = seq > k_context ? seq - k_context : 0; s <= seq + k_context; ++s) seqs.insert(s);
      }
    }
    if (wanted.empty()) return;
    format::TraceFiles files;
    try {
      files = format::find_trace_files(dir);
    } catch (const format::TraceError&) {
      return;  // the report still has everything but the pictures
    }
    std::map<uint32_t, int64_t> origins;
    bool aligned = true;
    for (const auto& [rank, seqs] : wanted) {
      if (rank >= files.rank_files.size()) continue;
      std::error_code ec;
      if (!fs::exists(files.rank_files[rank], ec)) continue;
      format::RankReader reader(files.rank_files[rank], format::recovered_version(files));
      auto& events = m_events[rank];
      int64_t last = 0;
      format::RankReader::Callbacks callbacks;
      callbacks.event = [&, &set = seqs](const format::Event& e) {
        last = std::max(last, e.pending ? e.t_start : e.t_end());
        if (set.contains(e.seq)) events[e.seq] = {e.seq, e.call, e.t_start, e.t_end(), e.pending};
      };
      callbacks.end = [&](const format::Termination& t) { last = std::max(last, t.t); };
      const auto header = reader.header(callbacks);
      if (!header) continue;
      reader.read_all(callbacks);
      m_rank_end[rank] = last;
      origins[rank] = header->realtime_origin_ns;
      aligned = aligned && header->realtime_origin_ns != 0;
    }
    // One timeline for the ranks read (their realtime origins), and calls
    // that never returned last to where the last of them ends.
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (const auto& [rank, origin] : origins) earliest = std::min(earliest, origin);
    int64_t end = 0;
    for (auto& [rank, events] : m_events) {
      const int64_t shift = aligned ? origins[rank] - earliest : 0;
      end = std::max(end, m_rank_end[rank] + shift);
      for (auto& [seq, event] : events) {
        event.start += shift;
        event.end += shift;
      }
    }
    for (auto& [rank, events] : m_events) {
      for (auto& [seq, event] : events) {
        if (event.pending) event.end = std::max(end, event.start);
      }
    }
  }

  const DrawnEvent* find(const EventRef& ref) const {
    auto rank = m_events.find(ref.rank);
    if (rank == m_events.end()) return nullptr;
    auto it = rank->second.find(ref.seq);
    return it == rank->second.end() ? nullptr : &it->second;
  }
  // Return the events of `rank` with seq in [first, last].
  std::vector<const DrawnEvent*> range(uint32_t rank, uint64_t first, uint64_t last) const {
    std::vector<const DrawnEvent*> out;
    auto it = m_events.find(rank);
    if (it == m_events.end()) return out;
    for (auto e = it->second.lower_bound(first); e != it->second.end() && e->first <= last; ++e) {
      out.push_back(&e->second);
    }
    return out;
  }

 private:
  std::map<uint32_t, std::map<uint64_t, DrawnEvent>> m_events;
  std::map<uint32_t, int64_t> m_rank_end;
};

std::string human_duration(int64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.1f} us", v / 1e3);
  if (ns < 1000000000) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string_view severity_class(analyzer::Severity severity) { return analyzer::severity_name(severity); }

// A small timeline of one finding: a lane per rank involved, its located
// events (numbered as the list below the picture) and their neighbours.
std::string timeline_svg(const Finding& finding, const EventTimes& times) {
  std::vector<uint32_t> ranks;
  for (const Location& location : finding.locations) ranks.push_back(location.event.rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());

  struct Bar {
    const DrawnEvent* event;
    uint32_t rank;
    int number;  // 1-based location number; 0 for context
  };
  std::vector<Bar> bars;
  std::set<std::pair<uint32_t, uint64_t>> seen;
  for (std::size_t i = 0; i < finding.locations.size(); ++i) {
    const EventRef& ref = finding.locations[i].event;
    const DrawnEvent* e = times.find(ref);
    if (e == nullptr) continue;
    bars.push_back({e, ref.rank, static_cast<int>(i + 1)});
    seen.insert({ref.rank, ref.seq});
  }
  if (bars.empty()) return {};
  for (const Location& location : finding.locations) {
    const EventRef& ref = location.event;
    const uint64_t first = ref.seq > k_context ? ref.seq - k_context : 0;
    for (const DrawnEvent* e : times.range(ref.rank, first, ref.seq + k_context)) {
      if (seen.insert({ref.rank, e->seq}).second) bars.push_back({e, ref.rank, 0});
    }
  }
  // The window is the located events' span with a margin; neighbours are
  // clipped to it (an MPI_Init of a second would squash everything else).
  int64_t t0 = std::numeric_limits<int64_t>::max(), t1 = std::numeric_limits<int64_t>::min();
  for (const Bar& bar : bars) {
    if (bar.number == 0) continue;
    t0 = std::min(t0, bar.event->start);
    t1 = std::max(t1, bar.event->end);
  }
  const int64_t margin = std::max<int64_t>((t1 - t0) / 3, 2000);
  t0 -= margin;
  t1 += margin;
  std::erase_if(bars, [&](const Bar& bar) { return bar.event->end < t0 || bar.event->start > t1; });

  constexpr int k_left = 70, k_width = 620, k_lane = 44, k_top = 8;
  const int height = k_top + static_cast<int>(ranks.size()) * k_lane + 26;
  const double span = static_cast<double>(t1 - t0);
  auto x = [&](int64_t t) { return k_left + static_cast<double>(t - t0) / span * k_width; };
  auto lane_y = [&](uint32_t rank) {
    const auto at = std::lower_bound(ranks.begin(), ranks.end(), rank) - ranks.begin();
    return k_top + static_cast<int>(at) * k_lane;
  };

  std::string svg = fmt::format(
      "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"timeline of the events of this finding\">\n",
      k_left + k_width + 30, height, k_left + k_width + 30, height);
  svg += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
         "orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" class=\"arrowhead\"/></marker></defs>\n";
  for (uint32_t rank : ranks) {
    const int y = lane_y(rank);
    svg += fmt::format("<text class=\"lane-label\" x=\"4\" y=\"{}\">rank {}</text>\n", y + 25, rank);
    svg += fmt::format("<line class=\"lane\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", k_left, y + 21,
                       k_left + k_width, y + 21);
  }
  // Context first, so that the located events are drawn over them.
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return (a.number != 0) < (b.number != 0); });
  std::map<int, std::pair<double, double>> centers;  // location number -> bar center
  for (const Bar& bar : bars) {
    const int y = lane_y(bar.rank);
    const double left = x(std::max(bar.event->start, t0));
    const double width = std::max(4.0, x(std::min(bar.event->end, t1)) - left);
    const std::string name(format::call_name(bar.event->call));
    const std::string tip = fmt::format("{}:{} {}{} ({})", bar.rank, bar.event->seq, name,
                                        bar.event->pending ? " never returned" : "",
                                        human_duration(bar.event->end - bar.event->start));
    std::string cls = bar.number != 0 ? fmt::format("ev hit {}", severity_class(finding.severity)) : "ev";
    if (bar.event->pending) cls += " pending";
    svg += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" rx=\"2\"><title>{}</title></rect>\n",
                       cls, left, y + 14, width, html_escape(tip));
    if (bar.number != 0) {
      svg += fmt::format("<text class=\"ev-label\" x=\"{:.1f}\" y=\"{}\">{} {}:{}</text>\n", left, y + 10,
                         html_escape(name), bar.rank, bar.event->seq);
      centers[bar.number] = {left + std::min(width, 12.0) / 2, static_cast<double>(y + 21)};
    }
  }
  // The locations in the finding's order, linked.
  for (auto it = centers.begin(); it != centers.end(); ++it) {
    auto next = std::next(it);
    if (next == centers.end()) break;
    svg += fmt::format("<line class=\"link\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                       "marker-end=\"url(#arrow)\"/>\n",
                       it->second.first, it->second.second, next->second.first, next->second.second);
  }
  for (const auto& [number, center] : centers) {
    svg += fmt::format("<circle class=\"num {}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\"/><text class=\"num-label\" "
                       "x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                       severity_class(finding.severity), center.first, center.second, center.first,
                       center.second + 3.5, number);
  }
  const int axis = k_top + static_cast<int>(ranks.size()) * k_lane + 4;
  svg += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", k_left, axis,
                     k_left + k_width, axis);
  svg += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\">{} shown</text>\n", k_left, axis + 16,
                     human_duration(t1 - t0));
  svg += "</svg>\n";
  return svg;
}

// Source files read for the snippets, each once.
class Sources {
 public:
  explicit Sources(fs::path trace_dir) : m_trace_dir(std::move(trace_dir)) {}

  // Return lines [line - before, line + after] of `file` (1-based numbers
  // with their text), or nothing when the file cannot be read.
  std::vector<std::pair<uint32_t, std::string>> around(const std::string& file, uint32_t line, int context) {
    const std::vector<std::string>* lines = load(file);
    std::vector<std::pair<uint32_t, std::string>> out;
    if (lines == nullptr || line == 0 || line > lines->size()) return out;
    const uint32_t first = line > static_cast<uint32_t>(context) ? line - static_cast<uint32_t>(context) : 1;
    const uint32_t last = std::min<uint32_t>(static_cast<uint32_t>(lines->size()), line + static_cast<uint32_t>(context));
    for (uint32_t l = first; l <= last; ++l) out.emplace_back(l, (*lines)[l - 1]);
    return out;
  }

 private:
  const std::vector<std::string>* load(const std::string& file) {
    if (auto it = m_files.find(file); it != m_files.end()) return it->second ? &*it->second : nullptr;
    std::optional<std::vector<std::string>> lines;
    // Relative paths (as compiled) are tried from here and from beside the trace.
    for (const fs::path& candidate : {fs::path(file), m_trace_dir.parent_path() / file, m_trace_dir / file}) {
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec) || fs::file_size(candidate, ec) > k_max_source_bytes) continue;
      std::ifstream in(candidate, std::ios::binary);
      if (!in) continue;
      lines.emplace();
      for (std::string text; std::getline(in, text);) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        lines->push_back(std::move(text));
      }
      break;
    }
    auto [it, fresh] = m_files.emplace(file, std::move(lines));
    return it->second ? &*it->second : nullptr;
  }

  fs::path m_trace_dir;
  std::map<std::string, std::optional<std::vector<std::string>>> m_files;
};

std::string anchor_id(std::string_view kind) {
  std::string id = "kind-";
  for (char c : kind) id += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-') ? c : '_';
  return id;
}

constexpr const char* k_style = R"css(
:root { --error: #b3261e; --warning: #b45309; --info: #1d4ed8; --muted: #5f6368; --line: #dadce0; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0;
       color: #202124; background: #f8f9fa; }
header { background: #202124; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; }
header .summary { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; color: #e8eaed; }
main { max-width: 1100px; margin: 0 auto; padding: 18px 28px 40px; }
nav.kinds { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0 16px; }
nav.kinds a { text-decoration: none; border: 1px solid var(--line); background: #fff; border-radius: 14px;
              padding: 3px 12px; color: #202124; font-size: 14px; }
nav.kinds a .count { font-weight: 600; margin-left: 6px; }
.controls { display: flex; gap: 16px; align-items: center; font-size: 14px; color: var(--muted); margin-bottom: 12px; }
.controls button { font: inherit; padding: 2px 10px; }
section.kind { margin-top: 22px; }
section.kind > h2 { font-size: 18px; margin: 0 0 2px; }
section.kind > p.description { margin: 0 0 10px; color: var(--muted); }
details.finding { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--muted);
                  border-radius: 6px; margin: 10px 0; padding: 8px 14px; }
details.finding.error { border-left-color: var(--error); }
details.finding.warning { border-left-color: var(--warning); }
details.finding.info { border-left-color: var(--info); }
details.finding.hidden { display: none; }
details.finding > summary { cursor: pointer; font-weight: 600; }
.badge { display: inline-block; font-size: 12px; font-weight: 600; text-transform: uppercase; color: #fff;
         border-radius: 3px; padding: 0 6px; margin-right: 8px; vertical-align: 1px; }
.badge.error { background: var(--error); } .badge.warning { background: var(--warning); } .badge.info { background: var(--info); }
.where { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; color: var(--muted); font-weight: 400; }
ol.locations { padding-left: 22px; }
ol.locations li { margin: 6px 0; }
pre.src { background: #f1f3f4; border-radius: 4px; padding: 6px 0; margin: 4px 0 8px; overflow-x: auto;
          font: 12.5px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; }
pre.src span.l { display: block; padding: 0 10px; white-space: pre; }
pre.src span.l.hit { background: #fde68a; }
pre.src span.n { display: inline-block; width: 4.5em; color: var(--muted); user-select: none; }
ul.notes { color: #3c4043; }
svg.timeline { display: block; margin: 8px 0; background: #fff; max-width: 100%; height: auto; }
svg .lane { stroke: var(--line); stroke-width: 1; }
svg .lane-label { font: 12px sans-serif; fill: #3c4043; }
svg .ev { fill: #c4c7c5; }
svg .ev.hit.error { fill: var(--error); } svg .ev.hit.warning { fill: var(--warning); } svg .ev.hit.info { fill: var(--info); }
svg .ev.pending { fill-opacity: 0.55; stroke-dasharray: 4 2; stroke: #202124; }
svg .ev-label { font: 11px sans-serif; fill: #202124; }
svg .link { stroke: #202124; stroke-width: 1.2; stroke-dasharray: 3 3; fill: none; }
svg .arrowhead { fill: #202124; }
svg .num { stroke: #fff; stroke-width: 1.5; }
svg .num.error { fill: var(--error); } svg .num.warning { fill: var(--warning); } svg .num.info { fill: var(--info); }
svg .num-label { font: bold 10px sans-serif; fill: #fff; text-anchor: middle; }
svg .axis { stroke: #9aa0a6; }
svg .axis-label { font: 11px sans-serif; fill: var(--muted); }
svg .axis-label.end { text-anchor: end; }
.empty { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 16px; }
table.problems { border-collapse: collapse; font-size: 13px; }
table.problems td { border-top: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
footer { color: var(--muted); font-size: 12px; margin-top: 30px; }
)css";

// Filters by severity and expands or collapses all; marks the page as
// rendered (data-smtrace-ready, the number of findings) for tests.
constexpr const char* k_script = R"js(
(function () {
  'use strict';
  var findings = document.querySelectorAll('details.finding');
  var boxes = document.querySelectorAll('input[data-severity]');
  function apply() {
    var shown = {};
    boxes.forEach(function (box) { shown[box.getAttribute('data-severity')] = box.checked; });
    findings.forEach(function (f) {
      f.classList.toggle('hidden', shown[f.getAttribute('data-severity')] === false);
    });
  }
  boxes.forEach(function (box) { box.addEventListener('change', apply); });
  function openAll(open) { findings.forEach(function (f) { f.open = open; }); }
  var expand = document.getElementById('expand-all');
  var collapse = document.getElementById('collapse-all');
  if (expand) expand.addEventListener('click', function () { openAll(true); });
  if (collapse) collapse.addEventListener('click', function () { openAll(false); });
  apply();
  document.body.setAttribute('data-smtrace-ready', String(findings.length));
})();
)js";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

void write_html(std::ostream& out, const analyzer::Result& result, const fs::path& dir, const HtmlContext& context) {
  const EventTimes times(dir, result.findings);
  Sources sources(dir);
  std::map<std::string, std::string> descriptions;
  std::vector<std::string> order;  // kinds in rule order, then any other
  for (const analyzer::RuleInfo& rule : context.rules) {
    descriptions[rule.name] = rule.description;
    order.push_back(rule.name);
  }
  std::map<std::string, std::vector<const Finding*>> by_kind;
  for (const Finding& finding : result.findings) {
    by_kind[finding.kind].push_back(&finding);
    if (std::find(order.begin(), order.end(), finding.kind) == order.end()) order.push_back(finding.kind);
  }
  const analyzer::Counts counts = analyzer::count_findings(result);
  const std::string title = context.title.empty() ? dir.string() : context.title;

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">\n"
      << "<title>smtrace report: " << html_escape(title) << "</title>\n<style>" << k_style << "</style>\n</head>\n<body>\n";
  out << "<header><h1>smtrace check: " << html_escape(title) << "</h1>\n<div class=\"summary\">"
      << html_escape(analyzer::summary_line(result)) << "</div></header>\n<main>\n";

  if (result.findings.empty()) {
    out << "<p class=\"empty\">No findings.</p>\n";
  } else {
    out << "<nav class=\"kinds\" aria-label=\"finding kinds\">\n";
    for (const std::string& kind : order) {
      auto it = by_kind.find(kind);
      if (it == by_kind.end()) continue;
      out << "<a href=\"#" << anchor_id(kind) << "\">" << html_escape(kind) << "<span class=\"count\">"
          << it->second.size() << "</span></a>\n";
    }
    out << "</nav>\n<div class=\"controls\">Show:";
    for (const auto& [severity, count] : {std::pair<std::string_view, uint64_t>{"error", counts.errors},
                                          {"warning", counts.warnings},
                                          {"info", counts.infos}}) {
      out << " <label><input type=\"checkbox\" checked data-severity=\"" << severity << "\"> " << severity << "s ("
          << count << ")</label>";
    }
    out << " <button type=\"button\" id=\"expand-all\">expand all</button>"
        << "<button type=\"button\" id=\"collapse-all\">collapse all</button></div>\n";
  }

  int number = 0;
  for (const std::string& kind : order) {
    auto it = by_kind.find(kind);
    if (it == by_kind.end()) continue;
    out << "<section class=\"kind\" id=\"" << anchor_id(kind) << "\">\n<h2>" << html_escape(kind) << " ("
        << it->second.size() << ")</h2>\n";
    if (auto d = descriptions.find(kind); d != descriptions.end() && !d->second.empty()) {
      out << "<p class=\"description\">" << html_escape(d->second) << "</p>\n";
    }
    for (const Finding* finding : it->second) {
      ++number;
      const std::string_view severity = analyzer::severity_name(finding->severity);
      const std::string where = finding->locations.empty() ? std::string()
                                                           : analyzer::location_where(finding->locations.front());
      out << "<details class=\"finding " << severity << "\" data-severity=\"" << severity << "\" id=\"finding-"
          << number << "\" open>\n<summary><span class=\"badge " << severity << "\">" << severity << "</span>"
          << html_escape(finding->message);
      if (!where.empty()) out << " <span class=\"where\">" << html_escape(where) << "</span>";
      out << "</summary>\n";
      out << timeline_svg(*finding, times);
      out << "<ol class=\"locations\">\n";
      for (const Location& location : finding->locations) {
        const std::string at = analyzer::location_where(location);
        out << "<li>";
        if (!at.empty()) out << "<span class=\"where\">" << html_escape(at) << "</span> ";
        out << html_escape(analyzer::location_description(location));
        const auto lines = sources.around(location.file, location.line, context.source_lines);
        if (!lines.empty()) {
          out << "\n<pre class=\"src\">";
          for (const auto& [line, text] : lines) {
            out << "<span class=\"l" << (line == location.line ? " hit" : "") << "\"><span class=\"n\">" << line
                << "</span>" << html_escape(text) << "</span>";
          }
          out << "</pre>";
        }
        out << "</li>\n";
      }
      out << "</ol>\n";
      if (!finding->notes.empty()) {
        out << "<ul class=\"notes\">\n";
        for (const std::string& note : finding->notes) out << "<li>" << html_escape(note) << "</li>\n";
        out << "</ul>\n";
      }
      out << "</details>\n";
    }
    out << "</section>\n";
  }

  if (!result.skipped.empty()) {
    out << "<section class=\"kind\" id=\"skipped\"><h2>Checks that did not run</h2>\n<ul>\n";
    for (const analyzer::SkippedCheck& skipped : result.skipped) {
      out << "<li><b>" << html_escape(skipped.check) << "</b>: " << html_escape(skipped.reason) << "</li>\n";
    }
    out << "</ul></section>\n";
  }
  if (!result.problems.empty()) {
    out << "<section class=\"kind\" id=\"problems\"><h2>Problems met while reading (" << result.problems.size()
        << ")</h2>\n<table class=\"problems\">\n";
    for (const format::Problem& problem : result.problems) {
      out << "<tr><td>" << html_escape(problem.file) << "</td><td>" << html_escape(problem.to_string()) << "</td></tr>\n";
    }
    out << "</table></section>\n";
  }
  out << "<footer>smtrace " << SMTRACE_VERSION << " &middot; " << counts.errors << " errors, " << counts.warnings
      << " warnings, " << counts.infos << " infos</footer>\n</main>\n<script>" << k_script << "</script>\n</body>\n</html>\n";
}

std::string render_html(const analyzer::Result& result, const fs::path& dir, const HtmlContext& context) {
  std::ostringstream out;
  write_html(out, result, dir, context);
  return std::move(out).str();
}

}  // namespace smtrace::exchange
