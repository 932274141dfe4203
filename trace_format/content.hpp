// What a trace holds. A trace that smtrace's tracer recorded holds all of
// it; a trace imported from another format (smtrace import-otf2) lacks what
// that format does not carry, and says so in its rank headers
// (RankHeader.options["trace.lacks"], a comma-separated list of the names
// below), so that the analyzer can skip the checks that need it and `info`
// and the reports can say why (docs/trace-format.md, "Imported traces").
//
// Thread safety: every function here is reentrant and keeps no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace_format/event.hpp"

namespace smtrace::format {

// One kind of content, as a bit of a ContentSet.
enum class Content : uint32_t {
  buffers = 1,            // buffer addresses of MPI calls, window bases and target displacements
  receive_envelope = 2,   // a receive's or probe's source and tag as posted (MPI_ANY_SOURCE, MPI_ANY_TAG)
  type_signatures = 4,    // datatypes and counts (only byte sizes are known)
  thread_level = 8,       // the thread level MPI provided (RankHeader::thread_level)
  topologies = 16,        // the virtual topologies of communicators (CommDef.topology, sources, destinations)
};
using ContentSet = uint32_t;

inline constexpr ContentSet content_bit(Content content) { return static_cast<ContentSet>(content); }

// The header option that lists what a trace lacks, and the one that names
// where an imported trace came from ("otf2:/path/traces.otf2").
inline constexpr std::string_view k_lacks_option = "trace.lacks";
inline constexpr std::string_view k_imported_option = "trace.imported_from";

// The header option that says, with "off", that no CUDA call was traced on
// the rank: the tracer's CUDA part (CUPTI) was not built or not running when
// MPI_Init wrote the header, or a generator (smtrace synth) made the trace.
// A positive statement: a header without it (older traces, imports) may
// hold CUDA events, and its rank is checked for them.
inline constexpr std::string_view k_cuda_option = "cuda.traced";
inline constexpr std::string_view k_cuda_untraced = "off";
// Return true when `header` says that no CUDA call was traced on its rank.
bool cuda_untraced(const RankHeader& header);

// The header option that says, with "before MPI_Init", that the tracer
// started the rank's trace at a call the rank made before MPI_Init (MPI-3.1
// section 8.7 forbids it; Open MPI ends the process there): the trace holds
// that call only, after its end record's place (RankPass::after_end), and
// the header lacks what MPI_Init would have told (library, thread level).
inline constexpr std::string_view k_started_option = "tracing.started";
inline constexpr std::string_view k_started_before_init = "before MPI_Init";
// Return true when `header` says its trace was started before MPI_Init.
bool started_before_init(const RankHeader& header);

// Return the names of `set` ("buffers,receive_envelope"); empty for none.
std::string content_names(ContentSet set);
// Return what `header` says its trace lacks (names not known here are ignored).
ContentSet lacks(const RankHeader& header);
// Record in `header` that its trace lacks `set` (the option is removed when empty).
void set_lacks(RankHeader& header, ContentSet set);
// Return a phrase for people: "no buffer addresses", "no posted source and
// tag of receives", "no type signatures (byte sizes only)", joined with "; ".
std::string describe_lacks(ContentSet set);

}  // namespace smtrace::format
