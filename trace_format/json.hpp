// The JSON document of `smtrace dump --format json` and `smtrace
// import-json`: protobuf's JSON mapping of smtrace.v1.TraceDocument, with
// events in absolute coding (docs/trace-format.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "trace_format/reader.hpp"

namespace smtrace::format {

// Return `trace` as a TraceDocument in JSON (present ranks only; `rank`
// selects one when given).
std::string to_json(const Trace& trace, std::optional<uint32_t> rank = std::nullopt);
// Parse a TraceDocument; throw TraceError (with protobuf's message and the
// position) when it is not one. Unknown fields are ignored.
Trace from_json(std::string_view json);

// Write `trace` as a trace directory at `dir` (created; existing rank files
// are replaced): manifest, one rank file per present rank, each event a
// complete record (pending events stay pending).
void write_trace(const Trace& trace, const std::filesystem::path& dir);

// Write `rank` as the rank file `file` (replaced): header, then sealed chunks
// of about 64 KiB holding its definitions, events (each complete; pending
// ones stay pending), notes and termination, in format version
// k_format_version whatever `rank.header` says. Throw TraceError when it
// cannot be written.
void write_rank_file(const RankTrace& rank, const std::filesystem::path& file);

}  // namespace smtrace::format
