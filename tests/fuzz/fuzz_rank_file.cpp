// libFuzzer target: the rank-file reader (read_rank_file and the streaming
// RankReader) on arbitrary bytes. It must never crash, throw or allocate
// beyond what the file's size allows (run.sh sets -malloc_limit_mb).
#include <cstdint>

#include "tests/fuzz/fuzz_util.hpp"
#include "trace_format/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace tf = smtrace::format;
  smtrace::fuzz::MemoryFile file(data, size);
  tf::RankTrace rank = tf::read_rank_file(file.path());
  for (const tf::Problem& p : rank.problems) (void)p.to_string();
  for (const tf::Event& e : rank.events) (void)rank.site(e.site);

  // The streaming reader must agree on the events it hands out.
  tf::RankReader reader(file.path());
  uint64_t events = 0;
  tf::RankReader::Callbacks cb;
  cb.event = [&](const tf::Event&) { ++events; };
  if (reader.header(cb)) reader.read_all(cb);
  if (events != rank.events.size()) __builtin_trap();
  return 0;
}
