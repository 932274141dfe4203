// OTF2 (Open Trace Format 2, the format of Score-P, Vampir, Scalasca) in and
// out. Built only when the OTF2 library is found (SMTRACE_WITH_OTF2,
// SMTRACE_HAVE_OTF2).
//
// Export: one location group (process) per rank, one location per traced
// thread, Enter/Leave of a region per call (MPI paradigm; CUDA and smtrace's
// access calls as regions of their own paradigms) and inside it OTF2's MPI
// records: MpiSend/MpiIsend/MpiRecv/MpiIrecvRequest/MpiIrecv/
// MpiIsendComplete/MpiRequestTest/MpiRequestCancelled for point-to-point,
// MpiCollectiveBegin/End and NonBlockingCollectiveRequest/Complete for
// collectives, RmaWinCreate/Destroy, RmaCollectiveBegin/End, RmaGroupSync,
// Rma*Lock, RmaPut/Get/Atomic for one-sided calls; communicators as Comm
// definitions over groups of world ranks (the analyzer's comm table), windows
// as RmaWin definitions. Each call's call site becomes a CallingContext
// (region = the calling function, SourceCodeLocation = file:line, parent =
// the caller's frame) named by an attribute; further smtrace:: attributes
// keep what OTF2's records lack (event number, posted source and tag,
// datatype, count, op). docs/cli.md ("smtrace export") lists them.
//
// Import: any OTF2 archive with MPI records (Score-P's or ours) becomes a
// trace directory: ranks from the MPI locations, events from the MPI regions
// and the records inside them, communicators from the Comm definitions, call
// sites from the smtrace::call_site attribute or else the user regions open
// around the call. OTF2 has no buffer addresses, no posted source and tag of
// receives, no datatypes: the trace says what it lacks (trace_format/
// content.hpp) unless smtrace's attributes supply it.
//
// Thread safety: neither function keeps state between calls; the OTF2
// library's error callback is process-wide, so do not run two at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "exchange/view.hpp"
#include "trace_format/content.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::exchange {

struct Otf2ExportStats {
  uint32_t ranks = 0;
  uint32_t locations = 0;
  uint64_t events = 0;    // smtrace events written as regions
  uint64_t records = 0;   // OTF2 event records in all
};

// Write the trace of `dir` (whose view is `view`) as an OTF2 archive in the
// directory `out` (created; its anchor file is out/traces.otf2). Throw
// format::TraceError when the archive cannot be written.
Otf2ExportStats export_otf2(const std::filesystem::path& dir, const TraceView& view,
                            const std::filesystem::path& out,
                            const std::function<void(const std::string&)>& progress = {});

struct Otf2Import {
  // Empty when the archive was read whole; otherwise what stopped the
  // import or damaged it ("traces/3.evt: OTF2 error ..."). The trace
  // directory holds what could be read either way (when `written`).
  std::string error;
  std::vector<format::Problem> problems;  // each damaged location, unknown records, ...
  bool written = false;                   // a trace directory was written to `out`
  uint32_t ranks = 0;
  uint64_t events = 0;
  format::ContentSet lacks = 0;           // what the imported trace lacks
  std::string creator;                    // the archive's creator ("Score-P 8.1", "smtrace 0.1.0")
};

// Import the OTF2 archive `archive` (its anchor file, or a directory with
// exactly one *.otf2 in it) into the trace directory `out` (created; its
// trace files are replaced). Never throws: bad input, unreadable files and
// allocation failures all end in Otf2Import::error. A fuzz target calls
// this on a directory it wrote.
Otf2Import import_otf2(const std::filesystem::path& archive, const std::filesystem::path& out) noexcept;

}  // namespace smtrace::exchange
