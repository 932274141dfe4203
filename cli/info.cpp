// smtrace info: a summary of one trace. The JSON shape is a stable
// interface (docs/cli.md): add keys, never rename or remove them.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/summary.hpp"

namespace smtrace::cli {

namespace {

struct RankStats {
  uint32_t rank = 0;
  const format::RankTrace* trace = nullptr;  // null: no slot for this rank
  uint64_t events = 0;
  uint64_t calls = 0;  // events with their folded repeats
  int64_t first = 0;   // ns since the rank's clock origin
  int64_t last = 0;
  bool has_time = false;
  uint64_t problems = 0;

  int64_t duration() const { return has_time ? last - first : 0; }
};

RankStats rank_stats(const format::RankTrace* trace, uint32_t rank) {
  RankStats stats;
  stats.rank = rank;
  stats.trace = trace;
  if (trace == nullptr || !trace->present) return stats;
  stats.events = trace->events.size();
  stats.problems = trace->problems.size();
  for (const format::Event& event : trace->events) {
    stats.calls += std::max<uint32_t>(event.repeat, 1);
    const int64_t end = event.pending ? event.t_start : event.t_end();
    if (!stats.has_time) {
      stats.first = event.t_start;
      stats.last = end;
      stats.has_time = true;
    } else {
      stats.first = std::min(stats.first, event.t_start);
      stats.last = std::max(stats.last, end);
    }
  }
  if (trace->end && stats.has_time && trace->end->t > stats.last) stats.last = trace->end->t;
  return stats;
}

struct Summary {
  uint32_t expected = 0;
  uint32_t present = 0;
  uint64_t events = 0;
  uint64_t calls = 0;
  uint64_t bytes = 0;
  int64_t duration = 0;
  bool duration_aligned = false;  // ranks aligned by their realtime origins
  bool complete = false;
  std::vector<RankStats> ranks;
  std::map<std::string, uint64_t> by_call;
  std::vector<format::Problem> problems;
};

Summary summarize(const format::Trace& trace) {
  Summary summary;
  summary.expected = expected_ranks(trace);
  const uint32_t slots = std::max<uint32_t>(summary.expected, static_cast<uint32_t>(trace.ranks.size()));
  bool aligned = true;
  bool any_time = false;
  int64_t start = 0, end = 0, longest = 0;
  for (uint32_t r = 0; r < slots; ++r) {
    const format::RankTrace* rank = r < trace.ranks.size() ? &trace.ranks[r] : nullptr;
    RankStats stats = rank_stats(rank, r);
    if (rank != nullptr && rank->present) {
      ++summary.present;
      summary.events += stats.events;
      summary.calls += stats.calls;
      summary.bytes += rank->bytes;
      for (const format::Event& event : rank->events) {
        summary.by_call[std::string(format::call_name(event.call))] += 1;
      }
      if (stats.has_time) {
        const int64_t origin = rank->header.realtime_origin_ns;
        if (origin == 0) aligned = false;
        const int64_t s = origin + stats.first, e = origin + stats.last;
        start = any_time ? std::min(start, s) : s;
        end = any_time ? std::max(end, e) : e;
        any_time = true;
        longest = std::max(longest, stats.duration());
      }
    }
    summary.ranks.push_back(stats);
  }
  summary.duration_aligned = any_time && aligned;
  summary.duration = summary.duration_aligned ? end - start : longest;
  summary.complete = summary.present == summary.expected && summary.expected > 0;
  for (const RankStats& stats : summary.ranks) {
    if (stats.trace == nullptr || !stats.trace->finalized() || !stats.trace->accesses_kept()) summary.complete = false;
  }
  summary.problems = trace.all_problems();
  return summary;
}

std::string severity_name(format::Problem::Severity severity) {
  return severity == format::Problem::Severity::warning ? "warning" : "error";
}

// The format version the trace was written in: its first rank header's
// (the manifest's when no rank file has one).
uint32_t written_version(const format::Trace& trace) {
  for (const format::RankTrace& rank : trace.ranks) {
    if (rank.present && !rank.header.recovered) return rank.header.format_version;
  }
  return trace.manifest.format_version != 0 ? trace.manifest.format_version : format::k_format_version;
}

void print_text(const format::Trace& trace, const Summary& summary) {
  std::string out;
  auto line = [&](std::string_view key, const std::string& value) {
    out += fmt::format("{:<10} {}\n", key, value);
  };
  line("trace", trace.dir.string());
  if (trace.has_manifest) {
    if (!trace.manifest.command.empty()) line("command", trace.manifest.command);
    if (!trace.manifest.created_utc.empty()) line("created", trace.manifest.created_utc);
    if (!trace.manifest.job.empty()) line("job", trace.manifest.job);
  }
  const format::RankTrace* first = nullptr;
  for (const format::RankTrace& rank : trace.ranks) {
    if (rank.present) {
      first = &rank;
      break;
    }
  }
  std::string origin = fmt::format("format v{}", written_version(trace));
  if (first != nullptr) {
    if (!first->header.tracer_version.empty()) origin += ", tracer " + first->header.tracer_version;
    if (!first->header.mpi_library.empty()) {
      std::string library = first->header.mpi_library;
      if (auto cut = library.find_first_of(",\n"); cut != std::string::npos) library.resize(cut);
      origin += ", " + library;
    }
  }
  line("recorded", origin);
  const TraceOrigin imported = trace_origin(trace);
  if (!imported.imported_from.empty()) line("imported", imported.imported_from);
  if (imported.lacks != 0) {
    line("lacks", format::describe_lacks(imported.lacks));
    std::string unable;
    for (const std::string& name : checks_unable(imported.lacks)) unable += (unable.empty() ? "" : ", ") + name;
    if (!unable.empty()) line("checks", "cannot run here: " + unable);
  }
  line("ranks", fmt::format("{} present of {} expected", summary.present, summary.expected));
  std::string events = fmt::format("{}", summary.events);
  if (summary.calls != summary.events) events += fmt::format(" ({} calls with folded polls)", summary.calls);
  line("events", events);
  line("duration", human_ns(static_cast<double>(summary.duration)) +
                       (summary.duration_aligned ? " (first event to last, all ranks)"
                                                 : " (longest rank; ranks not aligned in time)"));
  line("size", fmt::format("{} in {} rank files, {:.1f} bytes/event", human_bytes(summary.bytes),
                           summary.present,
                           summary.events ? static_cast<double>(summary.bytes) / static_cast<double>(summary.events) : 0.0));
  uint32_t finalized = 0, lost = 0;
  for (const RankStats& stats : summary.ranks) {
    finalized += stats.trace && stats.trace->finalized() ? 1 : 0;
    lost += stats.trace && stats.trace->end ? stats.trace->end->accesses_lost : 0;
  }
  line("complete", summary.complete ? std::string("yes (every rank reached MPI_Finalize)")
                   : finalized == summary.expected
                       ? fmt::format("no (the last accesses of {} threads were not written)", lost)
                       : fmt::format("no ({} of {} ranks finalized)", finalized, summary.expected));

  out += "\nper rank\n";
  out += fmt::format("  {:>5} {:<16} {:>8} {:>10} {:>12} {:>10}  {}\n", "rank", "host", "pid", "events",
                     "duration", "bytes", "end");
  for (const RankStats& stats : summary.ranks) {
    if (stats.trace == nullptr || !stats.trace->present) {
      out += fmt::format("  {:>5} {:<16} {:>8} {:>10} {:>12} {:>10}  {}\n", stats.rank, "-", "-", "-", "-",
                         "-", "missing (no readable rank file)");
      continue;
    }
    const format::RankTrace& rank = *stats.trace;
    out += fmt::format("  {:>5} {:<16} {:>8} {:>10} {:>12} {:>10}  {}\n", stats.rank, rank.header.host,
                       rank.header.pid, stats.events, human_ns(static_cast<double>(stats.duration())),
                       human_bytes(rank.bytes), rank_state(rank, stats.rank));
  }

  if (!summary.by_call.empty()) {
    out += "\nevents by call\n";
    std::vector<std::pair<std::string, uint64_t>> calls(summary.by_call.begin(), summary.by_call.end());
    std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [name, count] : calls) out += fmt::format("  {:<28} {:>10}\n", name, count);
  }

  if (!summary.problems.empty()) {
    out += fmt::format("\nproblems while reading ({})\n", summary.problems.size());
    for (const format::Problem& problem : summary.problems) {
      out += fmt::format("  {}: {}\n", severity_name(problem.severity), problem.to_string());
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void print_json(const format::Trace& trace, const Summary& summary) {
  std::string out;
  JsonWriter json(out);
  json.begin_object();
  json.key("dir").value(trace.dir.string());
  json.key("format_version").value(written_version(trace));
  json.key("ranks").value(summary.present);
  json.key("expected_ranks").value(summary.expected);
  json.key("events").value(summary.events);
  json.key("calls").value(summary.calls);
  json.key("complete").value(summary.complete);
  json.key("duration_ns").value(summary.duration);
  json.key("duration_aligned").value(summary.duration_aligned);
  json.key("bytes").value(summary.bytes);
  json.key("bytes_per_event")
      .value(summary.events ? static_cast<double>(summary.bytes) / static_cast<double>(summary.events) : 0.0);
  json.key("manifest").begin_object();
  json.key("present").value(trace.has_manifest);
  json.key("command").value(trace.manifest.command);
  json.key("created_utc").value(trace.manifest.created_utc);
  json.key("tracer_version").value(trace.manifest.tracer_version);
  json.key("mpi_library").value(trace.manifest.mpi_library);
  json.key("job").value(trace.manifest.job);
  json.end_object();
  const TraceOrigin imported = trace_origin(trace);
  json.key("imported_from").value(imported.imported_from);
  json.key("lacks").begin_array();
  const std::string lacks = format::content_names(imported.lacks);
  for (std::string_view name = lacks; !name.empty();) {
    const auto comma = name.find(',');
    json.value(name.substr(0, comma));
    name = comma == std::string_view::npos ? std::string_view() : name.substr(comma + 1);
  }
  json.end_array();
  json.key("checks_unable").begin_array();
  for (const std::string& check : checks_unable(imported.lacks)) json.value(check);
  json.end_array();

  json.key("per_rank").begin_array();
  for (const RankStats& stats : summary.ranks) {
    const format::RankTrace* rank = stats.trace;
    const bool present = rank != nullptr && rank->present;
    json.begin_object();
    json.key("rank").value(stats.rank);
    json.key("present").value(present);
    json.key("file").value(rank != nullptr ? rank->file : std::string());
    json.key("host").value(present ? rank->header.host : std::string());
    json.key("pid").value(present ? rank->header.pid : 0u);
    json.key("events").value(stats.events);
    json.key("calls").value(stats.calls);
    json.key("duration_ns").value(stats.duration());
    json.key("bytes").value(rank != nullptr ? rank->bytes : uint64_t{0});
    json.key("chunks").value(rank != nullptr ? rank->chunks : uint64_t{0});
    json.key("truncated").value(rank != nullptr && rank->truncated);
    json.key("finalized").value(rank != nullptr && rank->finalized());
    json.key("end").value(rank != nullptr ? end_kind(*rank) : std::string("missing"));
    json.key("signal").value(present && rank->end ? rank->end->signal : 0);
    json.key("message").value(present && rank->end ? rank->end->message : std::string());
    json.key("state").value(rank != nullptr ? rank_state(*rank, stats.rank) : std::string("missing"));
    json.key("pending");
    const format::Event* pending = present ? last_pending(*rank) : nullptr;
    if (pending == nullptr) {
      json.null();
    } else {
      json.begin_object();
      json.key("event").value(fmt::format("{}:{}", stats.rank, pending->seq));
      json.key("seq").value(pending->seq);
      json.key("call").value(format::call_name(pending->call));
      const format::CallSite* site = rank->site(pending->site);
      json.key("function").value(site ? site->function : std::string());
      json.key("file").value(site ? site->file : std::string());
      json.key("line").value(site ? site->line : 0u);
      json.end_object();
    }
    json.key("problems").value(stats.problems);
    json.end_object();
  }
  json.end_array();

  json.key("events_by_call").begin_object();
  for (const auto& [name, count] : summary.by_call) json.key(name).value(count);
  json.end_object();

  json.key("problems").begin_array();
  for (const format::Problem& problem : summary.problems) {
    json.begin_object();
    json.key("severity").value(severity_name(problem.severity));
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
    json.key("text").value(problem.to_string());
    json.end_object();
  }
  json.end_array();
  json.end_object();
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace

int run_info(const InfoOptions& options) {
  const format::Trace trace = read_trace_or_throw(options.dir, true, options.engine.read_trace);
  const Summary summary = summarize(trace);
  if (options.format == OutputFormat::json) {
    print_json(trace, summary);
  } else {
    print_text(trace, summary);
  }
  return k_exit_ok;
}

}  // namespace smtrace::cli
