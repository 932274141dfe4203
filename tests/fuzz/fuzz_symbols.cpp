// libFuzzer target: the symbols.smt reader on arbitrary bytes, and applying
// what it read to a rank.
#include <cstdint>

#include "tests/fuzz/fuzz_util.hpp"
#include "trace_format/symbols.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace tf = smtrace::format;
  smtrace::fuzz::MemoryFile file(data, size);
  std::vector<tf::Problem> problems;
  auto sites = tf::read_symbols(file.path(), problems);
  for (const tf::Problem& p : problems) (void)p.to_string();
  tf::RankTrace rank;
  rank.present = true;
  for (uint32_t id = 1; id <= 4; ++id) rank.sites[id] = tf::CallSite{};
  for (auto& [r, list] : sites) tf::apply_symbols(rank, list);
  return 0;
}
