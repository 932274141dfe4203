// symbols.smt: call sites symbolized after the run (function, file, line),
// kept next to the rank files so that those stay as the tracer wrote them.
// The file is the magic followed by frames whose payloads are SymbolChunks.
//
// Thread safety: the functions touch only their arguments and files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::format {

// Write `sites_by_rank` (world rank -> its symbolized call sites) as
// `dir`/symbols.smt, replacing the file; throw TraceError when it cannot be written.
void write_symbols(const std::filesystem::path& dir,
                   const std::map<uint32_t, std::vector<CallSite>>& sites_by_rank);

// Read `file` (a symbols.smt) into world rank -> call sites; append any
// damage met to `problems` and keep what could be read.
std::map<uint32_t, std::vector<CallSite>> read_symbols(const std::filesystem::path& file,
                                                       std::vector<Problem>& problems);

// Fill function, file, line and column of `rank`'s sites from `sites`
// (matched by id; fields that `sites` leaves empty are kept).
void apply_symbols(RankTrace& rank, const std::vector<CallSite>& sites);

}  // namespace smtrace::format
