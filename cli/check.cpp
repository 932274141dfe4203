// smtrace check: run the analyzer's checks on a trace and print a report
// (text, JSON or SARIF; docs/check-output.md), or compare the findings with
// an expectation file (--expect, regression mode).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/expect.hpp"
#include "analyzer/report.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "exchange/html.hpp"
#include "smt_encoder/prove.hpp"

namespace smtrace::cli {

namespace {

std::vector<std::string> all_check_names() {
  std::vector<std::string> names;
  for (const analyzer::RuleInfo& rule : all_check_rules()) names.push_back(rule.name);
  return names;
}

std::string names_text() {
  std::string text;
  for (const std::string& name : all_check_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Turn "--checks a,b" or "--checks all,-c" into the set Options wants
// (empty: all). Unknown names are usage errors that list the valid ones.
// Return the names of a --checks list: comma-separated, spaces trimmed, empty ones left out.
std::vector<std::string> check_list_names(const std::string& list) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    pos = comma + 1;
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) out.push_back(std::move(name));
  }
  return out;
}

std::set<std::string> parse_checks(const std::string& list) {
  const std::vector<std::string> names = all_check_names();
  const std::set<std::string> known(names.begin(), names.end());
  std::set<std::string> chosen;
  std::set<std::string> dropped;
  bool all = false;
  for (std::string name : check_list_names(list)) {
    const bool drop = name.front() == '-';
    if (drop) name.erase(0, 1);
    if (name == "all" && !drop) {
      all = true;
      continue;
    }
    if (!known.contains(name)) {
      throw Error(fmt::format("unknown check '{}' in --checks; checks: {}", name, names_text()));
    }
    (drop ? dropped : chosen).insert(name);
  }
  if (dropped.empty()) return all ? std::set<std::string>{} : chosen;
  // Dropping starts from all checks unless some were named.
  std::set<std::string> out = (chosen.empty() || all) ? known : chosen;
  for (const std::string& name : dropped) out.erase(name);
  if (out.empty()) throw Error("--checks leaves no check to run");
  return out;
}

// The alignment rule when --alignment is not given: collective-misaligned is
// a style rule (a correct program may reach a collective from two places), so
// it runs only when --checks names it (then strict).
std::string default_alignment(const std::string& checks) {
  const std::vector<std::string> names = check_list_names(checks);
  return std::find(names.begin(), names.end(), "collective-misaligned") != names.end() ? "strict" : "off";
}

analyzer::Alignment parse_alignment(const std::string& name) {
  if (name == "strict") return analyzer::Alignment::strict;
  if (name == "weak") return analyzer::Alignment::weak;
  if (name == "off") return analyzer::Alignment::off;
  throw Error(fmt::format("unknown --alignment '{}' (strict, weak, off)", name));
}

std::string list_text(const std::vector<analyzer::RuleInfo>& rules, analyzer::ReportFormat format) {
  std::string out;
  if (format == analyzer::ReportFormat::text) {
    for (const analyzer::RuleInfo& rule : rules) {
      out += fmt::format("{:<24}{:<9}{}\n", rule.name, analyzer::severity_name(rule.severity), rule.description);
    }
    return out;
  }
  out = "[\n";
  for (size_t i = 0; i < rules.size(); ++i) {
    out += fmt::format("  {{\"name\": {}, \"severity\": {}, \"description\": {}}}{}\n",
                       analyzer::json_quote(rules[i].name),
                       analyzer::json_quote(analyzer::severity_name(rules[i].severity)),
                       analyzer::json_quote(rules[i].description), i + 1 < rules.size() ? "," : "");
  }
  return out + "]\n";
}

}  // namespace

int run_check(const CheckOptions& options) {
  // html is exchange's (it reads events back for its pictures); the list
  // and the expectation comparison are the text renderer's business then.
  const bool html = options.format == "html";
  const auto format = html ? std::optional<analyzer::ReportFormat>(analyzer::ReportFormat::text)
                           : analyzer::report_format(options.format);
  if (!format) throw Error(fmt::format("unknown --format '{}' (text, json, sarif, html)", options.format));
  const std::vector<analyzer::RuleInfo> rules = all_check_rules();
  if (options.list) {
    write_text_to(options.output, list_text(rules, *format));
    return k_exit_ok;
  }
  if (options.dir.empty()) throw Error("check needs a trace directory DIR (or --list)");

  analyzer::Options analysis;
  analysis.check_errors = analyzer::CheckErrors::report;  // a partial report, then exit 2
  analysis.checks = parse_checks(options.checks);
  analysis.alignment = parse_alignment(options.alignment.empty() ? default_alignment(options.checks) : options.alignment);
  if (options.smt_timeout < 0) throw Error("--smt-timeout must be 0 (off) or positive");
  const auto buffering = smt::buffering_from_name(options.buffering);
  if (!buffering) throw Error(fmt::format("unknown --buffering '{}' (infinite, zero)", options.buffering));
  if (options.smt_timeout > 0) {
    smt::CheckSettings settings;
    settings.smt_timeout_s = options.smt_timeout;
    settings.buffering = *buffering;
    smt_tuning_from_environment(settings.tuning);
    analysis.extra_checks = smt::check_factories(settings);
  } else if (!analysis.checks.empty()) {
    for (const analyzer::RuleInfo& rule : smt::check_rules()) analysis.checks.erase(rule.name);
    if (analysis.checks.empty()) throw Error("--checks names only SMT checks, which --smt-timeout 0 turns off");
  }
  // Read the expectations first: a typo there should not cost an analysis.
  std::vector<analyzer::Expectation> expectations;
  if (!options.expect.empty()) {
    try {
      expectations = analyzer::read_expectations(options.expect);
    } catch (const analyzer::ExpectError& e) {
      throw Error(e.what());
    }
  }

  Progress progress(options.quiet ? Quiet::yes : Quiet::no);
  analysis.progress = progress.callback();
  analyzer::Result result;
  try {
    result = options.engine.analyze ? options.engine.analyze(options.dir, analysis)
                                    : analyzer::analyze(options.dir, analysis);
  } catch (const std::invalid_argument& e) {
    progress.clear();
    throw Error(e.what());
  } catch (...) {
    progress.clear();
    throw;
  }
  progress.clear();

  // A check that failed leaves a partial report: it is printed (the other
  // checks' findings hold), then the failure, and the exit status is 2.
  auto failed = [&](int status) {
    if (result.failures.empty()) return status;
    for (const analyzer::CheckFailure& failure : result.failures) {
      fmt::print(stderr, "smtrace: error: check {} failed: {}; its findings are not in the report\n",
                 failure.check, failure.message);
    }
    return k_exit_usage;
  };
  if (!options.write_expect.empty()) {
    if (!result.failures.empty()) {
      failed(0);
      throw Error(fmt::format("{} not written: the findings are incomplete", options.write_expect));
    }
    write_text_to(options.write_expect, analyzer::write_expectations(result.findings, options.dir.string()));
  }

  const analyzer::ReportContext context{SMTRACE_VERSION, rules};
  auto report = [&](std::ostream& out) {
    if (!html) return analyzer::write_report(out, result, *format, context);
    exchange::write_html(out, result, options.dir, {rules, options.dir.string(), 3});
  };
  if (options.expect.empty()) {
    write_report_to(options.output, report);
    return failed(analyzer::count_findings(result).errors > 0 ? k_exit_findings : k_exit_ok);
  }
  // Regression mode: stdout says how the findings compare; the report
  // itself goes only to -o FILE.
  if (!options.output.empty()) write_report_to(options.output, report);
  const analyzer::Comparison comparison = analyzer::compare(expectations, result.findings);
  write_text_to({}, analyzer::render_comparison(comparison, options.expect));
  return failed(comparison.agree() ? k_exit_ok : k_exit_findings);
}

}  // namespace smtrace::cli
