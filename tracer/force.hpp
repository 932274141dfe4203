// Forcing wildcard matches (SMTRACE_FORCE, docs/tracer.md): the tracer's
// side of `smtrace explore`. A receive, probe or sendrecv that the program
// posted with MPI_ANY_SOURCE and that SMTRACE_FORCE names (the rank's N-th
// wildcard receive: trace_format/force.hpp) is handed to MPI with the named
// source instead; its event still records the posted MPI_ANY_SOURCE and,
// in its status, the source that matched. Reaching it writes a TracerNote
// (format::forced_note) before the call's event, so a run that blocks in
// the forced receive keeps the note.
//
// Thread safety: Forcer is thread safe (one atomic counter); wildcard
// receives of several threads are numbered in the order they call.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_format/event.hpp"
#include "trace_format/force.hpp"

namespace smtrace::tracer {

class Forcer {
 public:
  // Keep the targets of world rank `rank` from `targets`.
  void configure(const std::vector<format::ForceTarget>& targets, uint32_t rank);
  // Return true when some receive of this rank is to be forced.
  bool armed() const { return !m_targets.empty(); }

  struct Decision {
    uint64_t ordinal = 0;  // the receive's number (0: not a counted wildcard receive)
    std::optional<int32_t> source;  // the source to use instead of MPI_ANY_SOURCE
  };
  // Number a call of `call` posted with source `posted`, before it runs,
  // and say whether to force it. A poll is numbered as the receive it
  // would be if it found a message; call polled() after it.
  Decision on_call(format::Call call, std::optional<int32_t> posted);
  // Count a poll decided by on_call that found a message (`matched`).
  void polled(format::Call call, std::optional<int32_t> posted, bool matched);

 private:
  std::vector<format::ForceTarget> m_targets;  // this rank's
  std::atomic<uint64_t> m_count{0};            // wildcard receives counted so far
};

namespace force {

// Arm the process's Forcer for world rank `rank` from SMTRACE_FORCE's value
// `text` (already checked by parse_options; empty: nothing forced).
void start(const std::string& text, uint32_t rank);
// Return true when start armed the Forcer (some receive of this rank is forced).
bool armed() noexcept;
// The hook of the receive wrappers, before PMPI: when `event` (inputs
// gathered, posted source MPI_ANY_SOURCE) is the forced receive, set
// `source` (the argument handed to PMPI) to the forced rank and note it.
void apply(const format::Event& event, int& source) noexcept;
// The hook of the poll wrappers, after PMPI: `matched` is the flag.
void polled(const format::Event& event, bool matched) noexcept;

}  // namespace force
}  // namespace smtrace::tracer
