// A trace as Chrome trace-event JSON (the "JSON Array/Object Format" that
// Perfetto's UI and chrome://tracing open): one process per rank (pid =
// world rank), one thread track per traced thread (tid = thread id) and per
// CUDA stream, a complete ("X") slice per call with ts/dur in microseconds on
// the ranks' common timeline, flow arrows ("s" -> "f") from each send to the
// call where its receive completed (the replay's matches), and, with
// findings, an instant event on each finding's locations linked by a flow
// chain in the order the finding lists them. The shape is documented in
// docs/cli.md ("smtrace export").
//
// Thread safety: reentrant; reads rank files one at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

#include "exchange/view.hpp"

namespace smtrace::exchange {

// Track ids: threads keep their id; CUDA stream s of a rank is tid
// k_stream_tid + s.
inline constexpr uint64_t k_stream_tid = 1000000;

struct PerfettoStats {
  uint64_t slices = 0;
  uint64_t flows = 0;          // matched messages drawn
  uint64_t finding_marks = 0;  // instant events of findings
};

// Write the trace of `dir` (whose view is `view`; its findings are marked
// when it has any) as Chrome trace-event JSON to `out`. Call `progress`
// (when not empty) now and then. Throws format::TraceError when a rank
// file cannot be read at all.
PerfettoStats write_perfetto(const std::filesystem::path& dir, const TraceView& view, std::ostream& out,
                             const std::function<void(const std::string&)>& progress = {});

}  // namespace smtrace::exchange
