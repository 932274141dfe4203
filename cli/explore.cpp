// smtrace explore: confirm predicted message races on the real program.
//
// 1. Record COMMAND once, as `smtrace record` does (record_run), with its
//    standard output and error kept.
// 2. Run the checks on that trace and ask the SMT backend (smt::prove)
//    which other sends each wildcard receive can match (sat alternatives
//    only: each has a witness schedule that a replay accepted).
// 3. Run COMMAND again once per alternative, at most --max-runs times, with
//    the tracer forcing that one receive to take the alternative's sender
//    (SMTRACE_FORCE, trace_format/force.hpp); every other call runs as the
//    program and MPI decide. Each run is recorded into its own directory and
//    stopped after a timeout (a deadlock).
// 4. Compare each run with the original: exit status, standard output and
//    error (as sets of lines: ranks' lines interleave differently from run
//    to run), how the ranks ended (crash, MPI_Abort), new findings of the
//    checks, and where the calls of a rank first differ (divergence).
//
// A race whose forced run deadlocks, crashes, aborts, changes the output or
// the exit status, or adds an error finding is a message-race error
// "confirmed by re-execution"; a race whose alternatives were all run and
// all behaved the same is info. docs/cli.md (explore) is the user's side.
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/report.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/record.hpp"
#include "smt_encoder/prove.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/force.hpp"

namespace smtrace::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_race = "message-race";

// What a forced run did, worst first: the first that applies names it.
enum class Result : uint8_t {
  deadlock,        // stopped by the timeout
  abort,           // a rank called MPI_Abort (the launcher then kills the others)
  crash,           // a rank or the launcher killed by a signal
  exit_status,     // another exit status
  output_differs,  // other standard output or error
  new_findings,    // the checks found an error the original run did not have
  diverged,        // the calls of a rank differ after the forced match; same results
  same,            // same exit status, output, findings and calls
  not_reached,     // the program never called the forced receive: nothing was tested
  not_run,         // past --max-runs
};

std::string_view result_name(Result result) {
  switch (result) {
    case Result::deadlock: return "deadlock";
    case Result::crash: return "crash";
    case Result::abort: return "abort";
    case Result::exit_status: return "exit-status";
    case Result::output_differs: return "output-differs";
    case Result::new_findings: return "new-findings";
    case Result::diverged: return "diverged";
    case Result::same: return "same";
    case Result::not_reached: return "not-reached";
    case Result::not_run: return "not-run";
  }
  return "?";
}

// Return what the program did under `result`, as the end of a sentence.
std::string_view result_phrase(Result result) {
  switch (result) {
    case Result::deadlock: return "the program deadlocks";
    case Result::crash: return "the program crashes";
    case Result::abort: return "the program calls MPI_Abort";
    case Result::exit_status: return "the exit status changes";
    case Result::output_differs: return "the output differs";
    case Result::new_findings: return "the checks find a new error";
    case Result::diverged: return "the program takes another path, with the same results";
    case Result::same: return "the program does the same";
    case Result::not_reached: return "the program never reached the forced receive";
    case Result::not_run: return "not run (--max-runs)";
  }
  return "?";
}

bool confirms(Result result) {
  switch (result) {
    case Result::deadlock:
    case Result::crash:
    case Result::abort:
    case Result::exit_status:
    case Result::output_differs:
    case Result::new_findings: return true;
    case Result::diverged:
    case Result::same:
    case Result::not_reached:
    case Result::not_run: return false;
  }
  return false;
}

// One alternative of one race, and what its run showed.
struct Alternative {
  std::size_t race = 0;            // index into ProveResult::races
  analyzer::EventRef receive, send;
  format::ForceTarget target;      // the alternative's receive
  std::vector<format::ForceTarget> witness;  // every forced receive: the witness's wildcard matches up to it
  bool predicted_bad = false;      // prove's witness ends in a deadlock or a message never received
  std::string name;                // run-K; empty when not run
  Result result = Result::not_run;
  std::string what;                // one line: what happened
  std::string output;              // how stdout/stderr differ ("" when they do not)
  std::string divergence;          // where the calls first differ ("" when they do not)
  std::vector<std::string> new_findings;
  RunResult run;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string shorten(std::string text, std::size_t width = 80) {
  if (text.size() > width) text = text.substr(0, width - 3) + "...";
  return text;
}

// Return how the lines of `forced` differ from `original`'s as multisets, in
// a few words; "" when they are the same.
std::string lines_difference(std::string_view stream, const std::string& original, const std::string& forced) {
  const std::vector<std::string> a = sorted_lines(original);
  const std::vector<std::string> b = sorted_lines(forced);
  std::vector<std::string> only_a, only_b;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
  if (only_a.empty() && only_b.empty()) return "";
  std::string text = fmt::format("{}: {} line{} only in the original run, {} only in this one", stream, only_a.size(),
                                 only_a.size() == 1 ? "" : "s", only_b.size());
  if (!only_a.empty()) text += fmt::format("; original: `{}`", shorten(only_a.front()));
  if (!only_b.empty()) text += fmt::format("; this run: `{}`", shorten(only_b.front()));
  return text;
}

// The calls of a rank whose order the program decides (not polls, not
// accesses), with what they were posted with.
struct CallKey {
  uint64_t seq = 0;
  std::string text;
};

std::vector<CallKey> call_keys(const format::RankTrace& rank) {
  std::vector<CallKey> keys;
  for (const format::Event& e : rank.events) {
    const format::CallTraits& traits = format::call_traits(e.call);
    if (traits.poll) continue;
    switch (traits.role) {
      case format::Role::env:
      case format::Role::send:
      case format::Role::recv:
      case format::Role::sendrecv:
      case format::Role::probe:
      case format::Role::collective:
      case format::Role::rma_comm:
      case format::Role::rma_sync: break;
      case format::Role::none:
      case format::Role::request:
      case format::Role::handle:
      case format::Role::local_access:
      case format::Role::cuda:
      case format::Role::local:
      case format::Role::query: case format::Role::outside:
      case format::Role::thread: continue;
    }
    std::string text(format::call_name(e.call));
    if (e.peer) text += fmt::format(" peer {}", rank_name(*e.peer));
    if (e.recv_peer) text += fmt::format(" source {}", rank_name(*e.recv_peer));
    if (e.tag) text += fmt::format(" tag {}", tag_name(*e.tag));
    keys.push_back({e.seq, std::move(text)});
  }
  return keys;
}

// Return where the calls of the forced run first differ from the original's,
// lowest rank first; "" when they do not.
std::string divergence(const format::Trace& original, const format::Trace& forced) {
  const std::size_t ranks = std::min(original.ranks.size(), forced.ranks.size());
  for (std::size_t r = 0; r < ranks; ++r) {
    if (!original.ranks[r].present || !forced.ranks[r].present) continue;
    const std::vector<CallKey> a = call_keys(original.ranks[r]);
    const std::vector<CallKey> b = call_keys(forced.ranks[r]);
    const std::size_t n = std::min(a.size(), b.size());
    std::size_t i = 0;
    while (i < n && a[i].text == b[i].text) ++i;
    if (i == a.size() && i == b.size()) continue;
    if (i == n) {
      return a.size() > b.size()
                 ? fmt::format("rank {} stops after {} calls; the original went on with {} (event {}:{})", r, n,
                               a[i].text, r, a[i].seq)
                 : fmt::format("rank {} goes on after the original's last call with {} (event {}:{})", r, b[i].text,
                               r, b[i].seq);
    }
    return fmt::format("rank {} calls {} (event {}:{}) where the original called {} (event {}:{})", r, b[i].text, r,
                       b[i].seq, a[i].text, r, a[i].seq);
  }
  return "";
}

// A finding as it compares across runs (sequence numbers differ).
std::string finding_key(const analyzer::Finding& f) {
  std::string key = fmt::format("{}|{}", f.kind, analyzer::severity_name(f.severity));
  if (!f.locations.empty()) {
    const analyzer::Location& l = f.locations.front();
    key += fmt::format("|{}|{}|{}:{}", l.event.rank, l.call, l.file, l.line);
  }
  return key;
}

// Return the ordinal of wildcard receive `ref` among its rank's (force.hpp),
// or nothing when it is not one that can be forced.
std::optional<uint64_t> wildcard_ordinal(const format::Trace& trace, const analyzer::EventRef& ref) {
  if (ref.rank >= trace.ranks.size()) return std::nullopt;
  uint64_t ordinal = 0;
  for (const format::Event& e : trace.ranks[ref.rank].events) {
    if (e.seq > ref.seq) break;
    if (!format::is_counted_wildcard(e)) continue;
    ++ordinal;
    if (e.seq == ref.seq) return ordinal;
  }
  return std::nullopt;
}

// Return the rank of world rank `world` in the communicator of `ref`.
std::optional<int32_t> source_in_comm(const format::Trace& trace, const analyzer::EventRef& ref, uint32_t world) {
  const format::RankTrace& rank = trace.ranks[ref.rank];
  const format::Event* e = rank.find(ref.seq);
  if (!e) return std::nullopt;
  const auto comm = rank.comms.find(e->comm);
  if (comm == rank.comms.end()) return std::nullopt;
  const auto& members = comm->second.world_ranks;
  const auto it = std::find(members.begin(), members.end(), world);
  if (it == members.end()) return std::nullopt;
  return static_cast<int32_t>(it - members.begin());
}

analyzer::Options check_options() {
  analyzer::Options options;
  options.check_errors = analyzer::CheckErrors::report;
  return options;
}

// Run alternative `alt` (its target set) and say what it did.
void run_alternative(Alternative& alt, const ExploreOptions& options, const fs::path& dir, double timeout_s,
                     const format::Trace& original, const RunResult& original_run,
                     const std::set<std::string>& original_findings) {
  RecordOptions record;
  record.output = (dir / alt.name).string();
  record.force = true;
  record.quiet = true;
  record.command = options.command;
  RunSettings settings;
  settings.vars = {{"SMTRACE_FORCE", format::force_text(alt.witness)}};
  settings.stdout_file = dir / (alt.name + ".stdout");
  settings.stderr_file = dir / (alt.name + ".stderr");
  settings.timeout_s = timeout_s;
  settings.report = false;
  alt.run = record_run(record, settings);

  std::optional<format::Trace> forced;
  if (alt.run.traced) {
    try {
      forced = format::read_trace(alt.run.dir);
    } catch (const format::TraceError&) {
    }
  }
  bool reached = false;
  bool aborted = false;
  std::optional<std::pair<uint32_t, int>> signaled;  // a rank killed by a signal, and which

  if (forced) {
    if (alt.target.rank < forced->ranks.size()) {
      for (const format::TracerNote& note : forced->ranks[alt.target.rank].notes) {
        reached = reached || format::parse_forced_note(note.message) == alt.target.ordinal;
      }
    }
    for (uint32_t r = 0; r < forced->ranks.size(); ++r) {
      const format::RankTrace& rank = forced->ranks[r];
      if (!rank.end) continue;
      aborted = aborted || rank.end->kind == format::TerminationKind::aborted;
      if (rank.end->kind != format::TerminationKind::signal) continue;
      // The launcher ends the other ranks with SIGTERM or SIGKILL: name
      // the rank that died of something else.
      const bool cleanup = rank.end->signal == SIGTERM || rank.end->signal == SIGKILL;
      if (!signaled || (!cleanup && (signaled->second == SIGTERM || signaled->second == SIGKILL))) {
        signaled = std::pair<uint32_t, int>(r, rank.end->signal);
      }
    }
  }
  const std::string out_a = read_file(dir / "original.stdout");
  const std::string err_a = read_file(dir / "original.stderr");
  alt.output = lines_difference("stdout", out_a, read_file(settings.stdout_file));
  if (const std::string err = lines_difference("stderr", err_a, read_file(settings.stderr_file)); !err.empty()) {
    alt.output += (alt.output.empty() ? "" : "; ") + err;
  }
  if (forced) alt.divergence = divergence(original, *forced);
  if (forced && !alt.run.timed_out) {
    try {
      const analyzer::Result checked = analyzer::analyze(alt.run.dir, check_options());
      for (const analyzer::Finding& f : checked.findings) {
        if (f.severity == analyzer::Severity::error && !original_findings.contains(finding_key(f))) {
          alt.new_findings.push_back(fmt::format("{}: {}", f.kind, f.message));
        }
      }
    } catch (const std::exception& e) {
      alt.new_findings.push_back(fmt::format("the checks failed on this run's trace: {}", e.what()));
    }
  }

  const std::string keep = fmt::format(" (run kept in {})", alt.run.dir.string());
  if (!reached) {
    alt.result = Result::not_reached;
    alt.what = fmt::format("the program never called its wildcard receive {} on rank {}{}: it took another path "
                           "before the forced point, so this alternative was not tested{}",
                           alt.target.ordinal, alt.target.rank,
                           alt.run.timed_out ? fmt::format(" (and was stopped after {:.1f} s)", timeout_s) : "",
                           alt.divergence.empty() ? "" : "; " + alt.divergence);
  } else if (alt.run.timed_out) {
    alt.result = Result::deadlock;
    alt.what = fmt::format("the program deadlocks: it was still running after {:.1f} s and was stopped", timeout_s);
  } else if (aborted) {
    alt.result = Result::abort;
    alt.what = fmt::format("the program calls MPI_Abort (exit status {})", alt.run.exit_code);
  } else if (signaled || alt.run.signal != 0) {
    alt.result = Result::crash;
    alt.what = signaled ? fmt::format("the program crashes: rank {} was killed by {} (exit status {})",
                                      signaled->first, format::signal_name(signaled->second), alt.run.exit_code)
                        : fmt::format("the program crashes: killed by {}", format::signal_name(alt.run.signal));
  } else if (alt.run.exit_code != original_run.exit_code) {
    alt.result = Result::exit_status;
    alt.what = fmt::format("the exit status changes from {} to {}", original_run.exit_code, alt.run.exit_code);
  } else if (!alt.output.empty()) {
    alt.result = Result::output_differs;
    alt.what = "the output differs: " + alt.output;
  } else if (!alt.new_findings.empty()) {
    alt.result = Result::new_findings;
    alt.what = fmt::format("the checks find {} new error{}: {}", alt.new_findings.size(),
                           alt.new_findings.size() == 1 ? "" : "s", alt.new_findings.front());
  } else if (!alt.divergence.empty()) {
    alt.result = Result::diverged;
    alt.what = "same exit status and output, but the program took another path after the forced match: " +
               alt.divergence;
  } else {
    alt.result = Result::same;
    alt.what = "same exit status, output, findings and calls";
  }
  alt.what += keep;
}

std::string alternative_line(const Alternative& alt) {
  const std::string others =
      alt.witness.size() > 1 ? fmt::format(", and {} earlier wildcard receive{} as the witness has them",
                                           alt.witness.size() - 1, alt.witness.size() == 2 ? "" : "s")
                             : "";
  return fmt::format("{} takes {} (rank {}'s wildcard receive {} forced to source {}{}): {}: {}", alt.receive.str(),
                     alt.send.str(), alt.target.rank, alt.target.ordinal, alt.target.source, others,
                     result_name(alt.result), alt.what);
}

// Rewrite the message-race finding of each race by what its runs showed.
// Confirmed: some run deadlocked, crashed, aborted, changed the exit status
// or the output, or added an error finding. Info: every alternative ran,
// reached the forced receive and behaved the same, and each whose witness
// predicted a bad end took another path (the witness assumed the program
// repeats its recorded calls; it did not). Otherwise prove's severity
// stands, with what the runs showed in the notes.
void update_findings(std::vector<analyzer::Finding>& findings, const std::vector<Alternative>& alternatives) {
  for (analyzer::Finding& f : findings) {
    if (f.kind != k_race || f.locations.empty()) continue;
    std::vector<const Alternative*> mine;
    for (const Alternative& alt : alternatives) {
      if (alt.receive == f.locations.front().event) mine.push_back(&alt);
    }
    if (mine.empty()) continue;
    std::size_t run = 0, not_run = 0, untested = 0, diverged = 0, unrefuted = 0;
    const Alternative* confirmed = nullptr;
    for (const Alternative* alt : mine) {
      if (alt->result == Result::not_run) ++not_run;
      else ++run;
      if (alt->result == Result::not_reached) ++untested;
      if (alt->result == Result::diverged) ++diverged;
      if (alt->predicted_bad && alt->result == Result::same) ++unrefuted;
      if (confirms(alt->result) && !confirmed) confirmed = alt;
    }
    const std::string proved_message = f.message;
    // prove's suggestion to re-execute has been followed.
    std::erase_if(f.notes,
                  [](const std::string& note) { return note.starts_with("proved for the communication only"); });
    const std::string what = f.message.starts_with("wildcard probe") ? "wildcard probe" : "wildcard receive";
    if (confirmed) {
      f.severity = analyzer::Severity::error;
      f.message = fmt::format("{} can take the message of {} instead, and then {} (confirmed by re-execution)", what,
                              confirmed->send.str(), result_phrase(confirmed->result));
      f.notes.push_back("prove: " + proved_message);
    } else if (not_run == 0 && untested == 0 && unrefuted == 0) {
      f.severity = analyzer::Severity::info;
      f.message = fmt::format(
          "{} can take {} other message{}; re-executed with each forced, the program behaved the same (same exit "
          "status and output, no new error{})",
          what, mine.size(), mine.size() == 1 ? "" : "s",
          diverged ? fmt::format("; {} took another path after the forced match", diverged) : "");
      f.notes.push_back("prove: " + proved_message);
    } else {
      f.notes.push_back(fmt::format("explore: {} of {} alternatives run{}{}, none changed what the program did{}", run,
                                    mine.size(),
                                    untested ? fmt::format(" ({} never reached the forced receive)", untested) : "",
                                    not_run ? fmt::format(", {} not run (--max-runs)", not_run) : "",
                                    unrefuted ? "; prove's predicted bad end was not seen, yet the run followed the "
                                                "recorded calls: the witness stands"
                                              : ""));
    }
    for (const Alternative* alt : mine) {
      if (alt->result == Result::not_run) continue;
      f.notes.push_back("explore: " + alternative_line(*alt));
      // prove's note on the alternative's send said what the trace's calls
      // would do; say what the program did.
      for (std::size_t i = 1; i < f.locations.size(); ++i) {
        if (f.locations[i].event != alt->send || !f.locations[i].note.starts_with("can be taken instead")) continue;
        f.locations[i].note = fmt::format("can be taken instead; re-executed with it forced, {} ({})",
                                          result_phrase(alt->result), alt->name);
      }
    }
  }
  analyzer::sort_findings(findings);
}

std::string explore_json(const std::vector<Alternative>& alternatives, const ExploreOptions& options,
                         const fs::path& dir, const RunResult& original, double timeout_s, uint64_t unforcible) {
  std::string out;
  JsonWriter json(out, Pretty::yes, 1);
  json.begin_object();
  json.key("command").value(shell_join(options.command));
  json.key("directory").value(dir.string());
  json.key("original").begin_object();
  json.key("trace").value(original.dir.string());
  json.key("exit_status").value(original.exit_code);
  json.end_object();
  json.key("timeout_s").value(std::round(timeout_s * 10) / 10);
  json.key("max_runs").value(options.max_runs);
  uint64_t run = 0, not_run = 0, confirmed = 0;
  for (const Alternative& alt : alternatives) {
    if (alt.result == Result::not_run) ++not_run;
    else ++run;
    if (confirms(alt.result)) ++confirmed;
  }
  json.key("runs").value(run);
  json.key("not_run").value(not_run);
  json.key("not_forcible").value(unforcible);
  json.key("confirmed").value(confirmed);
  json.key("alternatives").begin_array();
  for (const Alternative& alt : alternatives) {
    json.begin_object();
    json.key("receive").value(alt.receive.str());
    json.key("send").value(alt.send.str());
    json.key("force").value(format::force_text(alt.witness));
    json.key("result").value(result_name(alt.result));
    json.key("confirmed").value(confirms(alt.result));
    if (alt.result != Result::not_run) {
      json.key("trace").value(alt.run.dir.string());
      json.key("exit_status").value(alt.run.exit_code);
      json.key("timed_out").value(alt.run.timed_out);
      json.key("output").value(alt.output);
      json.key("divergence").value(alt.divergence);
      json.key("new_findings").begin_array();
      for (const std::string& f : alt.new_findings) json.value(f);
      json.end_array();
      json.key("what").value(alt.what);
    }
    json.end_object();
  }
  json.end_array();
  json.end_object();
  return out;
}

}  // namespace

int run_explore(const ExploreOptions& options) {
  if (options.command.empty()) throw Error("no COMMAND given: smtrace explore [OPTIONS] -- COMMAND...");
  const auto format = analyzer::report_format(options.format);
  if (!format) throw Error(fmt::format("unknown --format '{}' (text, json, sarif)", options.format));
  if (options.smt_timeout <= 0) throw Error("--smt-timeout must be positive");
  if (options.timeout < 0) throw Error("--timeout must be 0 (from the original run) or positive");

  std::error_code ec;
  const fs::path given =
      options.output.empty() ? fs::path(timestamped_name("smtrace-explore")) : fs::path(options.output);
  fs::path dir = fs::absolute(given, ec);
  if (ec) throw Error(fmt::format("{}: {}", options.output, ec.message()));
  dir = dir.lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  // -f removes only what explore writes.
  prepare_output_dir(
      dir, options.force,
      [](const std::string& name) { return name.starts_with("original") || name.starts_with("run-"); },
      "explore's runs");
  auto say = [&](const std::string& line) {
    if (!options.quiet) fmt::print(stderr, "smtrace: explore: {}\n", line);
  };

  // 1. The original run.
  RecordOptions record;
  record.output = (dir / "original").string();
  record.force = true;
  record.quiet = true;
  record.command = options.command;
  RunSettings settings;
  settings.vars = {{"SMTRACE_FORCE", ""}};  // a user's own setting would make every run forced
  settings.stdout_file = dir / "original.stdout";
  settings.stderr_file = dir / "original.stderr";
  settings.report = false;
  const RunResult original_run = record_run(record, settings);
  if (!original_run.started) return original_run.exit_code;
  if (!original_run.traced) {
    std::string err = read_file(settings.stderr_file);
    if (err.size() > 2000) err = "..." + err.substr(err.size() - 2000);
    throw Error(fmt::format("the run of '{}' (exit status {}) wrote no trace; its standard error ({}):\n{}",
                            options.command[0], original_run.exit_code, settings.stderr_file.string(), err));
  }
  say(fmt::format("original run: exit status {} after {:.1f} s, trace in {}", original_run.exit_code,
                  original_run.wall_s, original_run.dir.string()));

  // 2. Its findings, and what each wildcard receive could have matched.
  const format::Trace original = read_trace_or_throw(original_run.dir);
  analyzer::Result checked;
  try {
    checked = analyzer::analyze(original_run.dir, check_options());
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  std::set<std::string> original_findings;
  for (const analyzer::Finding& f : checked.findings) original_findings.insert(finding_key(f));
  smt::ProveOptions prove;
  prove.smt_timeout_s = options.smt_timeout;
  prove.harmless_races = true;
  smt_tuning_from_environment(prove.tuning);
  smt::ProveResult proved;
  try {
    proved = smt::prove(original_run.dir, prove);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  for (const smt::ProveFinding& f : proved.findings) checked.findings.push_back(f.finding);

  std::vector<Alternative> alternatives;
  uint64_t unforcible = 0;
  for (std::size_t i = 0; i < proved.races.size(); ++i) {
    const smt::Race& race = proved.races[i];
    const std::optional<uint64_t> ordinal = wildcard_ordinal(original, race.receive);
    for (const smt::Race::Alternative& a : race.alternatives) {
      if (a.verdict != smt::Verdict::sat) continue;
      const std::optional<int32_t> source = source_in_comm(original, race.receive, a.send.rank);
      if (!ordinal || !source) {
        ++unforcible;
        continue;
      }
      Alternative alt;
      alt.race = i;
      alt.receive = race.receive;
      alt.send = a.send;
      alt.target = {race.receive.rank, *ordinal, *source};
      alt.predicted_bad = a.outcome_known && a.outcome != smt::Outcome::harmless;
      alternatives.push_back(std::move(alt));
    }
  }
  // The witness of each alternative that will run: the forced run follows
  // its wildcard matches up to the alternative's (the alternative may need
  // other receives to take other messages first).
  smt::ProveOptions ask;
  ask.smt_timeout_s = options.smt_timeout;
  ask.races = ask.deadlocks = ask.harmless_races = false;
  ask.tuning = prove.tuning;
  const std::size_t runnable = std::min<std::size_t>(alternatives.size(), options.max_runs);
  for (std::size_t i = 0; i < runnable; ++i) {
    ask.questions.push_back({smt::QuestionKind::can_match, alternatives[i].receive, alternatives[i].send});
  }
  smt::ProveResult witnesses;
  try {
    if (!ask.questions.empty()) witnesses = smt::prove(original_run.dir, ask);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  for (std::size_t i = 0; i < runnable; ++i) {
    Alternative& alt = alternatives[i];
    alt.witness = {alt.target};
    if (i >= witnesses.answers.size() || !witnesses.answers[i].witness) continue;
    std::vector<format::ForceTarget> targets;
    for (const smt::Step& step : witnesses.answers[i].witness->schedule) {
      if (step.action != smt::StepAction::match) continue;
      if (step.receive == alt.receive) break;
      const auto ordinal = wildcard_ordinal(original, step.receive);
      const auto source = source_in_comm(original, step.receive, step.send.rank);
      // A matched probe and the receive it posts match at one call: one target.
      const auto same_call = [&](const format::ForceTarget& t) {
        return ordinal && t.rank == step.receive.rank && t.ordinal == *ordinal;
      };
      if (ordinal && source && std::none_of(targets.begin(), targets.end(), same_call)) {
        targets.push_back({step.receive.rank, *ordinal, *source});
      }
    }
    targets.push_back(alt.target);
    alt.witness = std::move(targets);
  }

  const double timeout_s = options.timeout > 0 ? options.timeout : 2 * original_run.wall_s + 5;
  say(fmt::format("{} wildcard receive{} with {} other possible match{}; running {} (timeout {:.1f} s each)",
                  proved.races.size(), proved.races.size() == 1 ? "" : "s", alternatives.size(),
                  alternatives.size() == 1 ? "" : "es", std::min<std::size_t>(alternatives.size(), options.max_runs),
                  timeout_s));

  // 3. One forced run per alternative.
  std::size_t runs = 0;
  for (Alternative& alt : alternatives) {
    if (runs >= options.max_runs) break;
    alt.name = fmt::format("run-{}", ++runs);
    run_alternative(alt, options, dir, timeout_s, original, original_run, original_findings);
    say(fmt::format("{}: {}", alt.name, alternative_line(alt)));
  }

  // 4. The report: check's, with the races rewritten and the runs added.
  update_findings(checked.findings, alternatives);
  // Each run is in the notes of its race's finding; one line sums them up.
  std::vector<std::string> lines;
  uint64_t not_run = 0, confirmed = 0;
  for (const Alternative& alt : alternatives) {
    if (alt.result == Result::not_run) ++not_run;
    if (confirms(alt.result)) ++confirmed;
  }
  lines.push_back(fmt::format("smtrace: explore: {} alternative{} run ({} confirmed a race), {} not run (--max-runs "
                              "{}){}; original run: exit status {}, trace in {}",
                              runs, runs == 1 ? "" : "s", confirmed, not_run, options.max_runs,
                              unforcible ? fmt::format(", {} that explore cannot force", unforcible) : "",
                              original_run.exit_code, original_run.dir.string()));
  const analyzer::ReportContext context{SMTRACE_VERSION, all_check_rules()};
  std::string report = analyzer::render(checked, *format, context);
  if (*format == analyzer::ReportFormat::text) {
    // The explore lines go right before the SUMMARY line, which stays last.
    const auto summary = report.rfind("SUMMARY:");
    std::string block;
    for (const std::string& line : lines) block += line + "\n";
    report.insert(summary == std::string::npos ? report.size() : summary, block);
  } else if (*format == analyzer::ReportFormat::json) {
    const auto end = report.rfind('}');
    report.insert(end, ",\n  \"explore\": " + explore_json(alternatives, options, dir, original_run, timeout_s,
                                                            unforcible) + "\n");
    // The object's last member ended with a newline of its own.
    const auto doubled = report.rfind("\n,\n  \"explore\"");
    if (doubled != std::string::npos) report.erase(doubled, 1);
  }
  std::fwrite(report.data(), 1, report.size(), stdout);
  std::fflush(stdout);
  return analyzer::count_findings(checked).errors > 0 ? k_exit_findings : k_exit_ok;
}

}  // namespace smtrace::cli
