// What the exporters need of a trace besides its events, gathered by one run
// of the analyzer: communicators and windows identified across ranks, the
// matched messages of its replay, a common timeline for all ranks, and (when
// asked) the findings of the checks.
//
// Thread safety: collect_view() runs the analyzer (which uses threads of its
// own); the TraceView it returns is a plain value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analyzer/analyze.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/finding.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::exchange {

// One point-to-point message as the replay matched it.
struct Message {
  analyzer::EventRef send;       // the send's posting event (Send, Isend, Start, Sendrecv)
  analyzer::EventRef recv;       // the event where the receive completed (Recv, Wait..., its posting event when blocking)
  bool recv_done = true;         // false: the receive never completed (recv is its posting event)
};

struct TraceView {
  uint32_t world_size = 0;
  analyzer::Result result;       // findings only when collect_view() was asked to run checks
  analyzer::CommTable comms;     // global communicators and windows
  std::vector<Message> messages; // in (sender rank, posting order)
  // Per rank: ns to add to an event's t_start for a timeline common to all
  // ranks (from the ranks' realtime clock origins; 0 when any rank lacks one).
  std::vector<int64_t> time_offset;
  // The latest time of the trace on the common timeline (the end of its
  // last call or termination record): where calls that never returned end.
  int64_t end = 0;
  std::vector<format::RankHeader> headers;  // per rank (default for absent ranks)
  std::vector<bool> present;
};

enum class WithFindings : bool { no, yes };

// Analyze the trace in `dir` for export. With WithFindings::yes the checks
// of `options` run too (the CLI adds the SMT ones through
// options.extra_checks) and their findings land in TraceView::result;
// otherwise only the replay runs. `options.progress` sees the analyzer's
// progress. Throws what analyzer::analyze() throws.
TraceView collect_view(const std::filesystem::path& dir, analyzer::Options options, WithFindings findings);

// Reads the rank files of a trace one at a time with their symbols applied
// (symbols.smt), for the exporters that walk every event.
class RankSource {
 public:
  explicit RankSource(const std::filesystem::path& dir);
  // Return rank `rank`'s file read whole, symbolized (present == false when missing).
  format::RankTrace read(uint32_t rank) const;
  uint32_t world_size() const { return static_cast<uint32_t>(m_files.rank_files.size()); }
  const format::TraceFiles& files() const { return m_files; }
  // Problems met reading symbols.smt.
  const std::vector<format::Problem>& problems() const { return m_problems; }

 private:
  format::TraceFiles m_files;
  std::map<uint32_t, std::vector<format::CallSite>> m_symbols;
  std::vector<format::Problem> m_problems;
};

// Return "file:line (function)", "function" or "" for call site `site` of `rank`.
std::string site_text(const format::RankTrace& rank, uint32_t site);

}  // namespace smtrace::exchange
