// libFuzzer target: the OTF2 importer (import_otf2, `smtrace import-otf2`)
// on an archive laid out from the input (tests/fuzz/otf2_layout.hpp: the
// input cut into the anchor file, the global definitions and each
// location's event and local definition files). The importer must never
// crash, leak or throw, and a trace it says it wrote must be one the reader
// reads: read_trace may report problems of the trace but may not refuse it.
#include <cstdint>

#include "exchange/otf2.hpp"
#include "tests/fuzz/otf2_layout.hpp"
#include "trace_format/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace tf = smtrace::format;
  static smtrace::fuzz::ScratchDir scratch("otf2");
  const auto& dir = scratch.fresh();
  const auto anchor = smtrace::fuzz::write_otf2_archive(data, size, dir / "archive");
  const smtrace::exchange::Otf2Import result = smtrace::exchange::import_otf2(anchor, dir / "out");
  for (const tf::Problem& p : result.problems) (void)p.to_string();
  if (result.written) {
    tf::ReadOptions options;
    options.threads = 1;
    try {
      const tf::Trace trace = tf::read_trace(dir / "out", options);
      for (const tf::Problem& p : trace.all_problems()) (void)p.to_string();
    } catch (const tf::TraceError&) {
      __builtin_trap();  // the importer wrote a trace the reader refuses
    }
  }
  return 0;
}
