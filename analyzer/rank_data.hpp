// What the analyzer keeps of one rank file besides the events themselves:
// header, end, definitions, problems. Events are streamed past the checks
// (check.hpp) and never all held in memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::analyzer {

struct RankData {
  uint32_t rank = 0;
  bool present = false;          // the file existed and its header was read
  std::string file;
  format::RankHeader header;
  std::optional<format::Termination> end;
  bool truncated = false;        // the reader stopped before a clean end
  uint64_t events = 0;           // events read
  uint64_t last_seq = 0;         // seq of the last event read (0 when none)
  std::unordered_map<uint32_t, format::CallSite> sites;
  std::unordered_map<uint32_t, format::CommDef> comms;       // rank-local ids; 0 world, 1 self
  std::unordered_map<uint32_t, format::DatatypeDef> datatypes;
  std::vector<format::Problem> problems;

  // Return true when the rank reached MPI_Finalize.
  bool finalized() const { return end && end->kind == format::TerminationKind::finalized; }
  // Return true when the rank's trace holds every access it captured.
  bool accesses_kept() const { return !end || end->accesses_lost == 0; }
  // Return the call site `id`, or nullptr.
  const format::CallSite* site(uint32_t id) const;
  // Return the communicator (or group) `id` as this rank defined it, or nullptr.
  const format::CommDef* comm(uint32_t id) const;
  // Return the datatype `id` (derived only: ids >= k_first_derived_id), or nullptr.
  const format::DatatypeDef* datatype(uint32_t id) const;
};

}  // namespace smtrace::analyzer
