// Forcing a wildcard match: what `smtrace explore` asks the tracer to do
// (SMTRACE_FORCE, docs/tracer.md) and what the tracer leaves in the trace
// about it. The tracer and the CLI both read this header, so that both count
// wildcard receives the same way.
//
// A rank's wildcard receives are numbered 1, 2, ... in call order: every
// call whose role is recv, sendrecv or probe, posted with MPI_ANY_SOURCE
// (a persistent MPI_Recv_init excepted: its source is fixed once for every
// MPI_Start), on any communicator; a poll (MPI_Iprobe) counts only when it
// found a message (flag true), so that a polling loop is one receive however
// often it polled. `RANK:N=SOURCE` forces rank RANK's N-th wildcard receive
// to take SOURCE (a rank of that receive's communicator) instead of
// MPI_ANY_SOURCE; every other call runs as the program wrote it.
//
// Thread safety: everything here is reentrant and keeps no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::format {

struct ForceTarget {
  uint32_t rank = 0;     // world rank
  uint64_t ordinal = 0;  // the rank's N-th wildcard receive, from 1
  int32_t source = 0;    // rank in the receive's communicator
  bool operator==(const ForceTarget&) const = default;
};

// Return the targets of `text` ("RANK:N=SOURCE[,RANK:N=SOURCE...]"), or
// nothing with `error` set to what is wrong and where.
std::optional<std::vector<ForceTarget>> parse_force(std::string_view text, std::string& error);
// Return `targets` written the way parse_force reads them.
std::string force_text(const std::vector<ForceTarget>& targets);

// How a call counts among a rank's wildcard receives.
enum class WildcardCount : uint8_t {
  no,          // not a wildcard receive (or not one that can be forced)
  at_call,     // counts when called (receives, probes, sendrecvs)
  if_matched,  // counts when it found a message (polls: MPI_Iprobe)
};
// Return how a call of `call` posted with source `posted` counts.
WildcardCount wildcard_count(Call call, std::optional<int32_t> posted);
// Return the source `event` was posted with (recv_peer for a sendrecv).
std::optional<int32_t> posted_source(const Event& event);
// Return true when recorded `event` is one of its rank's numbered wildcard
// receives (a poll only when its flag is set).
bool is_counted_wildcard(const Event& event);

// The TracerNote a rank writes when it reaches its forced receive (before
// the receive's event, so a run that blocks in it keeps the note):
// "forced: wildcard receive N (MPI_Recv) takes source S instead of MPI_ANY_SOURCE".
std::string forced_note(uint64_t ordinal, Call call, int32_t source);
// Return the ordinal of a note written by forced_note, or nothing.
std::optional<uint64_t> parse_forced_note(std::string_view message);

}  // namespace smtrace::format
