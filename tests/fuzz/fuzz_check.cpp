// libFuzzer target: `smtrace check` on a one-rank trace whose rank file is
// the input: the reader, the replay, happens-before and every analyzer check
// (the SMT checks are left out: a solver per input is too slow to fuzz).
// Damage must end as problems or findings, never a crash or an exception
// other than TraceError.
#include <cstdint>

#include "analyzer/analyze.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "trace_format/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace tf = smtrace::format;
  static smtrace::fuzz::ScratchDir scratch("check");
  const auto& dir = scratch.fresh();
  smtrace::fuzz::write_file(dir / tf::rank_file_name(0), data, size);
  smtrace::analyzer::Options options;
  options.threads = 1;
  options.happens_before = true;
  try {
    (void)smtrace::analyzer::analyze(dir, options);
  } catch (const tf::TraceError&) {
  }
  return 0;
}
