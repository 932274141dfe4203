#include "analyzer/report.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include <fmt/core.h>

#include "analyzer/check.hpp"

namespace smtrace::analyzer {

namespace {

// finding.cpp has severity_name() too; the renderers keep their own words so
// that the text never changes behind their documentation.
std::string_view level_name(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "info";
  }
  return "error";
}

std::string_view sarif_level(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "note";
  }
  return "error";
}

std::string event_name(const EventRef& event) { return fmt::format("{}:{}", event.rank, event.seq); }

uint64_t stat(const Result& result, const std::string& name) {
  auto it = result.stats.find(name);
  return it == result.stats.end() ? 0 : it->second;
}

uint64_t rank_count(const Result& result) {
  return result.world_size != 0 ? result.world_size : stat(result, "ranks");
}

// Length of the valid UTF-8 sequence at `text[i]`, or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  uint32_t min = 0;
  uint32_t code = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    min = 0x80;
    code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    min = 0x800;
    code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    min = 0x10000;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// Pretty-printed JSON: two spaces per level, `"key": value`, empty
// containers as {} and []. The caller nests begin/end calls correctly.
class JsonOut {
 public:
  explicit JsonOut(ReportSink& out) : m_out(out) {}

  JsonOut& begin_object() { return open('{'); }
  JsonOut& end_object() { return close('}'); }
  JsonOut& begin_array() { return open('['); }
  JsonOut& end_array() { return close(']'); }

  JsonOut& key(std::string_view name) {
    separate();
    json_quote_to(m_out.buffer(), name);
    m_out += ": ";
    m_after_key = true;
    return *this;
  }
  JsonOut& value(std::string_view text) {
    separate();
    json_quote_to(m_out.buffer(), text);
    m_out.spill();
    return *this;
  }
  JsonOut& value(const char* text) { return value(std::string_view(text)); }
  JsonOut& value(const std::string& text) { return value(std::string_view(text)); }
  JsonOut& value(bool flag) {
    separate();
    m_out += flag ? "true" : "false";
    return *this;
  }
  JsonOut& value(uint64_t number) {
    separate();
    m_out += std::to_string(number);
    return *this;
  }
  JsonOut& value(uint32_t number) { return value(static_cast<uint64_t>(number)); }
  JsonOut& value(int number) {
    separate();
    m_out += std::to_string(number);
    return *this;
  }
  JsonOut& null() {
    separate();
    m_out += "null";
    return *this;
  }
  // Write `"name": "text"` unless `text` is empty.
  JsonOut& optional(std::string_view name, std::string_view text) {
    if (!text.empty()) key(name).value(text);
    return *this;
  }

 private:
  void newline() {
    m_out.buffer() += '\n';
    m_out.buffer().append(2 * m_empty.size(), ' ');
    m_out.spill();
  }
  void separate() {
    if (m_after_key) {
      m_after_key = false;
      return;
    }
    if (m_empty.empty()) return;
    if (!m_empty.back()) m_out += ',';
    m_empty.back() = false;
    newline();
  }
  JsonOut& open(char bracket) {
    separate();
    m_out += bracket;
    m_empty.push_back(true);
    return *this;
  }
  JsonOut& close(char bracket) {
    const bool empty = m_empty.back();
    m_empty.pop_back();
    if (!empty) newline();
    m_out += bracket;
    return *this;
  }

  ReportSink& m_out;
  std::vector<bool> m_empty;  // per open container: nothing written into it yet
  bool m_after_key = false;
};

std::string problem_text(const format::Problem& problem) {
  std::string text = fmt::format("byte {}: ", problem.offset);
  if (problem.rank) text += fmt::format("rank {}: ", *problem.rank);
  if (problem.rank && problem.seq) text += fmt::format("event {}:{}: ", *problem.rank, *problem.seq);
  return text + problem.message;
}

std::string problem_severity(const format::Problem& problem) {
  return problem.severity == format::Problem::Severity::warning ? "warning" : "error";
}

void write_location_json(JsonOut& json, const Location& location) {
  json.begin_object();
  json.key("rank").value(location.event.rank);
  json.key("event").value(event_name(location.event));
  json.key("seq").value(location.event.seq);
  json.key("call").value(location.call);
  json.key("function").value(location.function);
  json.key("file").value(location.file);
  json.key("line").value(location.line);
  json.key("column").value(location.column);
  json.key("note").value(location.note);
  json.end_object();
}

void write_stats_json(JsonOut& json, const Result& result) {
  json.begin_object();
  for (const auto& [name, value] : result.stats) json.key(name).value(value);
  json.end_object();
}

// A SARIF artifact URI: an absolute path becomes a file:// URI, a relative
// one stays relative (resolved by the viewer against the repository root);
// both percent-encoded.
std::string artifact_uri(std::string_view path) {
  std::string out = path.starts_with('/') ? "file://" : "";
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                       (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' || c == '~' ||
                       c == '/';
    if (plain) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", byte);
    }
  }
  return out;
}

void write_sarif_location(JsonOut& json, const Location& location, std::optional<int> id) {
  json.begin_object();
  if (id) json.key("id").value(*id);
  if (!location.file.empty()) {
    json.key("physicalLocation").begin_object();
    json.key("artifactLocation").begin_object().key("uri").value(artifact_uri(location.file)).end_object();
    if (location.line != 0) {
      json.key("region").begin_object();
      json.key("startLine").value(location.line);
      if (location.column != 0) json.key("startColumn").value(location.column);
      json.end_object();
    }
    json.end_object();
  }
  if (!location.function.empty()) {
    json.key("logicalLocations").begin_array().begin_object();
    json.key("name").value(location.function);
    json.key("kind").value("function");
    json.end_object().end_array();
  }
  json.key("message").begin_object().key("text").value(location_description(location)).end_object();
  json.key("properties").begin_object();
  json.key("rank").value(location.event.rank);
  json.key("event").value(event_name(location.event));
  json.optional("call", location.call);
  json.end_object();
  json.end_object();
}

}  // namespace

std::string location_where(const Location& location) {
  if (location.file.empty()) return {};
  if (location.line == 0) return location.file;
  if (location.column == 0) return fmt::format("{}:{}", location.file, location.line);
  return fmt::format("{}:{}:{}", location.file, location.line, location.column);
}

std::string location_description(const Location& location) {
  std::string text = fmt::format("rank {} (event {})", location.event.rank, event_name(location.event));
  if (!location.call.empty()) text += " in " + location.call;
  if (location.file.empty() && !location.function.empty()) text += " called from " + location.function;
  if (!location.note.empty()) text += ": " + location.note;
  return text;
}

std::string skipped_text(const SkippedCheck& skipped) {
  return fmt::format("check {} did not run: {}", skipped.check, skipped.reason);
}

std::optional<ReportFormat> report_format(std::string_view name) {
  if (name == "text") return ReportFormat::text;
  if (name == "json") return ReportFormat::json;
  if (name == "sarif") return ReportFormat::sarif;
  return std::nullopt;
}

std::vector<RuleInfo> check_rules() {
  std::vector<RuleInfo> rules;
  for (const auto& check : all_checks()) {
    rules.push_back(
        {std::string(check->name()), check->severity(), std::string(check->description()), check->needs()});
  }
  return rules;
}

Counts count_findings(const Result& result) {
  Counts counts;
  for (const Finding& finding : result.findings) {
    switch (finding.severity) {
      case Severity::error: ++counts.errors; break;
      case Severity::warning: ++counts.warnings; break;
      case Severity::info: ++counts.infos; break;
    }
  }
  return counts;
}

std::string summary_line(const Result& result) {
  const Counts counts = count_findings(result);
  std::string line = "SUMMARY: " + plural(counts.errors, "error") + ", " + plural(counts.warnings, "warning");
  if (counts.infos != 0) line += ", " + plural(counts.infos, "info");
  if (!result.problems.empty()) line += ", " + plural(result.problems.size(), "read problem");
  line += fmt::format(" in {}, {} ({})", plural(rank_count(result), "rank"), plural(stat(result, "events"), "event"),
                      result.complete ? "trace complete" : "trace incomplete");
  return line;
}

void write_diagnostics(std::ostream& stream, const Result& result) {
  ReportSink out(stream);
  for (const Finding& finding : result.findings) {
    const std::string head = finding.locations.empty() ? std::string() : location_where(finding.locations.front());
    out.format("{}: {}: {} [{}]\n", head.empty() ? "smtrace" : head, level_name(finding.severity), finding.message,
               finding.kind);
    // Every location gets its line, the primary one included: the headline
    // says where, this line says which rank, event and call.
    for (const Location& location : finding.locations) {
      const std::string at = location_where(location);
      out.format("{}: note: {}\n", at.empty() ? "smtrace" : at, location_description(location));
    }
    for (const std::string& note : finding.notes) out.format("smtrace: note: {}\n", note);
  }
  for (const format::Problem& problem : result.problems) {
    out.format("{}: warning: {}\n", problem.file.empty() ? "smtrace" : problem.file, problem_text(problem));
  }
  for (const SkippedCheck& skipped : result.skipped) out.format("smtrace: note: {}\n", skipped_text(skipped));
  for (const std::string& note : result.notes) out.format("smtrace: note: {}\n", note);
}

void write_text(std::ostream& stream, const Result& result) {
  write_diagnostics(stream, result);
  ReportSink out(stream);
  out += summary_line(result);
  out += '\n';
}

std::string render_text(const Result& result) {
  std::ostringstream out;
  write_text(out, result);
  return std::move(out).str();
}

void write_json(std::ostream& stream, const Result& result) {
  const Counts counts = count_findings(result);
  ReportSink out(stream);
  JsonOut json(out);
  json.begin_object();
  json.key("schema").value("smtrace-check");
  json.key("format_version").value(k_report_format_version);
  json.key("tool").begin_object();
  json.key("name").value("smtrace");
  json.key("version").value(SMTRACE_VERSION);
  json.end_object();
  json.key("complete").value(result.complete);
  json.key("ranks").value(rank_count(result));
  json.key("summary").begin_object();
  json.key("errors").value(counts.errors);
  json.key("warnings").value(counts.warnings);
  json.key("infos").value(counts.infos);
  json.key("problems").value(static_cast<uint64_t>(result.problems.size()));
  json.end_object();

  json.key("findings").begin_array();
  for (const Finding& finding : result.findings) {
    json.begin_object();
    json.key("kind").value(finding.kind);
    json.key("severity").value(level_name(finding.severity));
    json.key("message").value(finding.message);
    json.key("locations").begin_array();
    for (const Location& location : finding.locations) write_location_json(json, location);
    json.end_array();
    json.key("notes").begin_array();
    for (const std::string& note : finding.notes) json.value(note);
    json.end_array();
    json.end_object();
  }
  json.end_array();

  json.key("notes").begin_array();
  for (const std::string& note : result.notes) json.value(note);
  json.end_array();

  json.key("problems").begin_array();
  for (const format::Problem& problem : result.problems) {
    json.begin_object();
    json.key("severity").value(problem_severity(problem));
    json.key("file").value(problem.file);
    json.key("offset").value(problem.offset);
    json.key("rank");
    if (problem.rank) {
      json.value(*problem.rank);
    } else {
      json.null();
    }
    json.key("seq");
    if (problem.seq) {
      json.value(*problem.seq);
    } else {
      json.null();
    }
    json.key("message").value(problem.message);
    json.end_object();
  }
  json.end_array();

  json.key("skipped_checks").begin_array();
  for (const SkippedCheck& skipped : result.skipped) {
    json.begin_object();
    json.key("check").value(skipped.check);
    json.key("reason").value(skipped.reason);
    json.end_object();
  }
  json.end_array();

  json.key("stats");
  write_stats_json(json, result);
  json.end_object();
  out += '\n';
}

std::string render_json(const Result& result) {
  std::ostringstream out;
  write_json(out, result);
  return std::move(out).str();
}

void write_sarif(std::ostream& stream, const Result& result, const ReportContext& context) {
  // Rules: the checks in report order, then any kind a finding names that
  // is not among them, so that every ruleIndex is valid.
  std::vector<RuleInfo> rules = context.rules;
  std::map<std::string, int, std::less<>> rule_index;
  for (const RuleInfo& rule : rules) rule_index.emplace(rule.name, static_cast<int>(rule_index.size()));
  for (const Finding& finding : result.findings) {
    if (rule_index.emplace(finding.kind, static_cast<int>(rules.size())).second) {
      rules.push_back({finding.kind, finding.severity, {}});
    }
  }

  ReportSink out(stream);
  JsonOut json(out);
  json.begin_object();
  json.key("$schema").value("https://json.schemastore.org/sarif-2.1.0.json");
  json.key("version").value("2.1.0");
  json.key("runs").begin_array().begin_object();

  json.key("tool").begin_object().key("driver").begin_object();
  json.key("name").value("smtrace");
  json.key("version").value(context.tool_version.empty() ? std::string(SMTRACE_VERSION) : context.tool_version);
  json.key("rules").begin_array();
  for (const RuleInfo& rule : rules) {
    json.begin_object();
    json.key("id").value(rule.name);
    json.key("shortDescription").begin_object();
    json.key("text").value(rule.description.empty() ? rule.name : rule.description);
    json.end_object();
    json.key("defaultConfiguration").begin_object().key("level").value(sarif_level(rule.severity)).end_object();
    json.end_object();
  }
  json.end_array();
  json.end_object().end_object();

  json.key("invocations").begin_array().begin_object();
  json.key("executionSuccessful").value(true);
  json.key("toolExecutionNotifications").begin_array();
  for (const format::Problem& problem : result.problems) {
    json.begin_object();
    json.key("level").value("warning");
    json.key("message").begin_object().key("text").value(problem_text(problem)).end_object();
    if (!problem.file.empty()) {
      json.key("locations").begin_array().begin_object();
      json.key("physicalLocation").begin_object();
      json.key("artifactLocation").begin_object().key("uri").value(artifact_uri(problem.file)).end_object();
      json.key("region").begin_object().key("byteOffset").value(problem.offset).end_object();
      json.end_object();
      json.end_object().end_array();
    }
    json.end_object();
  }
  for (const SkippedCheck& skipped : result.skipped) {
    json.begin_object();
    json.key("level").value("note");
    json.key("message").begin_object().key("text").value(skipped_text(skipped)).end_object();
    json.end_object();
  }
  json.end_array();
  json.end_object().end_array();

  json.key("results").begin_array();
  for (const Finding& finding : result.findings) {
    json.begin_object();
    json.key("ruleId").value(finding.kind);
    json.key("ruleIndex").value(rule_index.find(finding.kind)->second);
    json.key("level").value(sarif_level(finding.severity));
    std::string text = finding.message;
    for (const std::string& note : finding.notes) text += "\n" + note;
    json.key("message").begin_object().key("text").value(text).end_object();
    json.key("locations").begin_array();
    if (!finding.locations.empty()) write_sarif_location(json, finding.locations.front(), std::nullopt);
    json.end_array();
    if (finding.locations.size() > 1) {
      json.key("relatedLocations").begin_array();
      for (size_t i = 1; i < finding.locations.size(); ++i) {
        write_sarif_location(json, finding.locations[i], static_cast<int>(i));
      }
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();

  json.key("properties").begin_object();
  json.key("complete").value(result.complete);
  json.key("ranks").value(rank_count(result));
  json.key("stats");
  write_stats_json(json, result);
  json.end_object();

  json.end_object().end_array();
  json.end_object();
  out += '\n';
}

std::string render_sarif(const Result& result, const ReportContext& context) {
  std::ostringstream out;
  write_sarif(out, result, context);
  return std::move(out).str();
}

void write_report(std::ostream& out, const Result& result, ReportFormat format, const ReportContext& context) {
  switch (format) {
    case ReportFormat::text: write_text(out, result); return;
    case ReportFormat::json: write_json(out, result); return;
    case ReportFormat::sarif: write_sarif(out, result, context); return;
  }
  write_text(out, result);
}

std::string render(const Result& result, ReportFormat format, const ReportContext& context) {
  std::ostringstream out;
  write_report(out, result, format, context);
  return std::move(out).str();
}

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  json_quote_to(out, text);
  return out;
}

void json_quote_to(std::string& out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) {
      const size_t length = utf8_length(text, i);
      if (length == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", byte);
        } else {
          out += c;
        }
    }
    ++i;
  }
  out += '"';
}

}  // namespace smtrace::analyzer
