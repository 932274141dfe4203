// smtrace prove: what else could the recorded run have done? Message races
// with their outcomes, deadlocks that rely on buffering, and the user's
// ordering questions, each answered by the SMT backend (smt_encoder/) with
// a witness schedule or an unsat explanation (docs/cli.md, prove).
#include <charconv>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "smt_encoder/prove.hpp"

namespace smtrace::cli {

namespace {

// Return RANK:SEQ as an event reference, or throw Error.
analyzer::EventRef parse_event(const std::string& text) {
  const auto colon = text.find(':');
  analyzer::EventRef ref;
  auto number = [&](std::string_view part, auto& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), ref.rank) ||
      !number(std::string_view(text).substr(colon + 1), ref.seq)) {
    throw Error(fmt::format("'{}' is not an event: write RANK:SEQ, as `smtrace dump` prints them (0:12)", text));
  }
  return ref;
}

void add_questions(std::vector<smt::Question>& out, const std::vector<std::string>& events, smt::QuestionKind kind) {
  for (std::size_t i = 0; i + 1 < events.size(); i += 2) {
    out.push_back({kind, parse_event(events[i]), parse_event(events[i + 1])});
  }
}

}  // namespace

int run_prove(const ProveOptions& options) {
  smt::ProveOptions prove;
  const auto buffering = smt::buffering_from_name(options.buffering);
  if (!buffering) throw Error(fmt::format("unknown --buffering '{}' (infinite, zero)", options.buffering));
  if (options.format != "text" && options.format != "json") {
    throw Error(fmt::format("unknown --format '{}' (text, json)", options.format));
  }
  if (options.smt_timeout <= 0) throw Error("--smt-timeout must be positive");
  prove.buffering = *buffering;
  prove.smt_timeout_s = options.smt_timeout;
  prove.threads = options.threads;
  prove.races = prove.deadlocks = !options.no_findings;
  prove.emit_smt2 = !options.emit_smt2.empty();
  smt_tuning_from_environment(prove.tuning);
  add_questions(prove.questions, options.can_match, smt::QuestionKind::can_match);
  add_questions(prove.questions, options.can_precede, smt::QuestionKind::can_precede);
  // Files that cannot be written are usage errors before any solving.
  for (const std::string& path : {options.dot, options.emit_smt2, options.output}) {
    if (path.empty()) continue;
    std::ofstream probe(path, std::ios::app);
    if (!probe) throw Error(fmt::format("cannot write {}", path));
  }

  smt::ProveResult result;
  try {
    result = smt::prove(options.dir, prove);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  if (!options.emit_smt2.empty()) write_text_to(options.emit_smt2, result.smt2);
  if (!options.dot.empty()) write_text_to(options.dot, smt::render_dot(result));
  write_report_to(options.output, [&](std::ostream& out) {
    if (options.format == "json") {
      smt::write_json(out, result);
    } else {
      smt::write_text(out, result);
    }
  });
  for (const smt::ProveFinding& f : result.findings) {
    if (f.finding.severity == analyzer::Severity::error) return k_exit_findings;
  }
  return k_exit_ok;
}

}  // namespace smtrace::cli
