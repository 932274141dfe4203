// What a check reports: findings with their locations. Plain values; the
// CLI renders them as text, JSON or SARIF (docs/check-output.md).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::analyzer {

enum class Severity : uint8_t { error, warning, info };

// Return "error", "warning" or "info".
std::string_view severity_name(Severity severity);

// An event named the way every report names it: RANK:SEQ.
struct EventRef {
  uint32_t rank = 0;
  uint64_t seq = 0;
  // Return "RANK:SEQ".
  std::string str() const;
  auto operator<=>(const EventRef&) const = default;
};

// One place a finding points at: an event and its call site.
struct Location {
  EventRef event;
  std::string call;        // "MPI_Recv"
  std::string function;    // from the call site, when symbolized
  std::string file;        // empty when the site is unknown
  uint32_t line = 0;
  uint32_t column = 0;
  std::string note;        // this location's role: "rank 1 waits here for a message from rank 0"
  bool operator==(const Location&) const = default;
};

struct Finding {
  std::string kind;        // the check's name: "deadlock", "collective-mismatch", ...
  Severity severity = Severity::error;
  std::string message;     // one-line headline
  std::vector<Location> locations;  // the first is the primary one
  std::vector<std::string> notes;   // further lines of explanation
  // A finding that only says that something went wrong (a call's error
  // code, a run stopped from outside): dropped when another finding points
  // at one of its events, which says why (drop_superseded).
  bool generic = false;
  bool operator==(const Finding&) const = default;
};

// Return "1 rank", "2 ranks": `n` and `word`, plural unless n is 1 (report
// wording: every count in a message goes through here).
std::string plural(uint64_t n, std::string_view word);
// Return "3", "0 and 2", "0, 1 and 3" for a list of ranks.
std::string rank_list(const std::vector<uint32_t>& ranks);

// Drop the generic findings of `findings` that have an event among the
// locations of a finding that is not generic.
void drop_superseded(std::vector<Finding>& findings);

// Sort `findings` into the order reports use (severity, kind, first
// location, message) and drop exact duplicates.
void sort_findings(std::vector<Finding>& findings);

}  // namespace smtrace::analyzer
