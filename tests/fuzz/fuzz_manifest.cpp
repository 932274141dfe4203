// libFuzzer target: manifest.json of a trace directory, read with a real
// two-rank trace beside it (find_trace_files, read_trace). A damaged manifest
// is a problem of the trace, never a crash; TraceError is the only exception
// (a directory that is no trace at all).
#include <cstdint>

#include "tests/fuzz/fuzz_util.hpp"
#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"

namespace {

namespace tf = smtrace::format;

// Two finalized ranks with a send and a receive, written once.
const tf::Trace& sample() {
  static const tf::Trace trace = [] {
    tf::Trace t;
    t.ranks.resize(2);
    for (uint32_t r = 0; r < 2; ++r) {
      tf::RankTrace& rank = t.ranks[r];
      rank.present = true;
      rank.header.rank = r;
      rank.header.world_size = 2;
      tf::Event e;
      e.call = r == 0 ? tf::Call::Send : tf::Call::Recv;
      e.comm = 0;
      e.peer = static_cast<int32_t>(1 - r);
      e.tag = 0;
      rank.events.push_back(e);
      rank.end = tf::Termination{};
      rank.end->kind = tf::TerminationKind::finalized;
    }
    return t;
  }();
  return trace;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static smtrace::fuzz::ScratchDir scratch("manifest");
  static bool written = false;
  if (!written) {
    tf::write_trace(sample(), scratch.fresh());
    written = true;
  }
  smtrace::fuzz::write_file(scratch.path() / "manifest.json", data, size);
  try {
    tf::ReadOptions options;
    options.threads = 1;
    tf::Trace trace = tf::read_trace(scratch.path(), options);
    for (const tf::Problem& p : trace.all_problems()) (void)p.to_string();
    (void)trace.complete();
  } catch (const tf::TraceError&) {
  }
  return 0;
}
