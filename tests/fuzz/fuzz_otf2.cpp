// libFuzzer target: the OTF2 importer (import_otf2, `smtrace import-otf2`)
// on an archive laid out from the input. An archive is a directory of
// files, so the input is cut into files at each occurrence of the separator
// k_separator (tests/fuzz/README.md, "The otf2 target's input"):
//
//   section 0       ARCHIVE/traces.otf2     the anchor file
//   section 1       ARCHIVE/traces.def      the global definitions
//   section 2 + 2k  ARCHIVE/traces/k.evt    location k's events
//   section 3 + 2k  ARCHIVE/traces/k.def    location k's local definitions
//
// (sections past k_max_locations are ignored; a missing one is a missing
// file). The importer must never crash, leak or throw, and a trace it says
// it wrote must be one the reader reads: read_trace may report problems of
// the trace but may not refuse it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "exchange/otf2.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "trace_format/reader.hpp"

namespace {

namespace fs = std::filesystem;
namespace tf = smtrace::format;

// Separates the files of the archive in the input; tests/fuzz/otf2_seeds.sh
// writes the seeds with it. Not a byte string an OTF2 file is likely to hold.
constexpr std::string_view k_separator = "\n==smtrace-fuzz-otf2-file==\n";
constexpr std::size_t k_max_locations = 16;

fs::path section_path(const fs::path& archive, std::size_t index) {
  if (index == 0) return archive / "traces.otf2";
  if (index == 1) return archive / "traces.def";
  const std::size_t location = (index - 2) / 2;
  return archive / "traces" / (std::to_string(location) + ((index - 2) % 2 == 0 ? ".evt" : ".def"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static smtrace::fuzz::ScratchDir scratch("otf2");
  const fs::path& dir = scratch.fresh();
  const fs::path archive = dir / "archive";
  fs::create_directories(archive / "traces");

  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t begin = 0;
  for (std::size_t index = 0; index < 2 + 2 * k_max_locations; ++index) {
    const std::size_t end = std::min(input.find(k_separator, begin), input.size());
    smtrace::fuzz::write_file(section_path(archive, index), data + begin, end - begin);
    if (end == input.size()) break;
    begin = end + k_separator.size();
  }

  const smtrace::exchange::Otf2Import result = smtrace::exchange::import_otf2(archive / "traces.otf2", dir / "out");
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
