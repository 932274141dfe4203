// libFuzzer target: `smtrace import-json` (from_json, write_trace) and
// reading the written trace back (read_trace, to_json). A document that is
// not a trace is a TraceError; one that is must round-trip without a crash.
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_util.hpp"
#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace tf = smtrace::format;
  static smtrace::fuzz::ScratchDir scratch("import-json");
  tf::Trace trace;
  try {
    trace = tf::from_json(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tf::TraceError&) {
    return 0;
  }
  try {
    tf::write_trace(trace, scratch.fresh());
    tf::ReadOptions options;
    options.threads = 1;
    tf::Trace back = tf::read_trace(scratch.path(), options);
    (void)tf::to_json(back);
  } catch (const tf::TraceError&) {
    // A document with no rank at all writes no trace to read back.
  }
  return 0;
}
