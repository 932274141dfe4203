#include "cli/summary.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "analyzer/finding.hpp"
#include "cli/common.hpp"

namespace smtrace::cli {

uint32_t expected_ranks(const format::Trace& trace) {
  uint32_t expected = trace.has_manifest ? trace.manifest.world_size : 0;
  if (expected == 0) {
    for (const format::RankTrace& rank : trace.ranks) {
      if (rank.present) expected = std::max(expected, rank.header.world_size);
    }
  }
  if (expected == 0) expected = static_cast<uint32_t>(trace.ranks.size());
  return expected;
}

const format::Event* last_pending(const format::RankTrace& rank) {
  const format::Event* found = nullptr;
  for (const format::Event& event : rank.events) {
    if (event.pending && (found == nullptr || event.seq > found->seq)) found = &event;
  }
  return found;
}

std::string end_kind(const format::RankTrace& rank) {
  if (!rank.present) return "missing";
  if (!rank.end) return "none";
  switch (rank.end->kind) {
    case format::TerminationKind::finalized: return "finalized";
    case format::TerminationKind::signal: return "signal";
    case format::TerminationKind::aborted: return "aborted";
    case format::TerminationKind::tracer_stopped: return "tracer_stopped";
    case format::TerminationKind::exit_without_finalize: return "exit_without_finalize";
    case format::TerminationKind::unspecified: break;
  }
  return "none";
}

std::string rank_state(const format::RankTrace& rank, uint32_t world_rank) {
  if (!rank.present) return "missing (no readable rank file)";
  std::string inside;
  if (const format::Event* pending = last_pending(rank)) {
    // A rank stopped inside MPI_Abort has aborted: name the place, not the call again.
    inside = pending->call == format::Call::Abort
                 ? fmt::format("({}:{})", world_rank, pending->seq)
                 : fmt::format("inside {} ({}:{})", format::call_name(pending->call), world_rank, pending->seq);
    const std::string where = site_to_string(rank, rank.site(pending->site));
    if (!where.empty()) inside += " at " + where;
  }
  auto with_inside = [&](std::string text) {
    if (!inside.empty()) text += " " + inside;
    return text;
  };
  if (!rank.end) {
    if (!inside.empty()) return "stopped " + inside;
    if (rank.events.empty()) return "stopped before its first event";
    const format::Event& last = rank.events.back();
    return fmt::format("stopped after {} ({}:{}), no end record", format::call_name(last.call),
                       world_rank, last.seq);
  }
  const format::Termination& end = *rank.end;
  std::string text;
  switch (end.kind) {
    case format::TerminationKind::finalized: text = "finalized"; break;
    case format::TerminationKind::signal: text = with_inside("killed by " + format::signal_name(end.signal)); break;
    case format::TerminationKind::aborted: text = with_inside("aborted (MPI_Abort)"); break;
    case format::TerminationKind::tracer_stopped: text = with_inside("tracer stopped"); break;
    case format::TerminationKind::exit_without_finalize:
      text = with_inside("exited without MPI_Finalize");
      break;
    case format::TerminationKind::unspecified: text = with_inside("ended (unknown kind)"); break;
  }
  if (!end.message.empty()) text += ": " + end.message;
  if (end.dropped != 0) text += fmt::format(" [{} events dropped]", end.dropped);
  if (end.accesses_lost != 0) text += fmt::format(" [accesses of {} threads not all written]", end.accesses_lost);
  return text;
}

bool all_finalized(const format::Trace& trace) {
  const uint32_t expected = expected_ranks(trace);
  if (expected == 0 || trace.ranks.size() < expected) return false;
  for (uint32_t r = 0; r < expected; ++r) {
    if (!trace.ranks[r].present || !trace.ranks[r].finalized()) return false;
  }
  return true;
}

std::string trace_summary(const format::Trace& trace) {
  const uint32_t expected = expected_ranks(trace);
  uint32_t present = 0;
  uint64_t events = 0;
  std::string incomplete;
  for (uint32_t r = 0; r < std::max<uint32_t>(expected, static_cast<uint32_t>(trace.ranks.size())); ++r) {
    const format::RankTrace* rank = r < trace.ranks.size() ? &trace.ranks[r] : nullptr;
    if (rank != nullptr && rank->present) {
      ++present;
      events += rank->events.size();
      if (rank->finalized() && rank->accesses_kept()) continue;
    }
    if (!incomplete.empty()) incomplete += "; ";
    incomplete += fmt::format("rank {} {}", r,
                              rank != nullptr ? rank_state(*rank, r) : std::string("missing (no rank file)"));
  }
  std::string text = fmt::format("{} of {}, {} events, ", present, analyzer::plural(expected, "rank"), events);
  text += incomplete.empty() ? "complete (every rank reached MPI_Finalize)" : "incomplete: " + incomplete;
  const std::size_t problems = trace.all_problems().size();
  if (problems != 0) text += fmt::format("; {} problem(s) while reading (see smtrace info)", problems);
  return text;
}

}  // namespace smtrace::cli
