// The baseline of bench/check_throughput.sh: read every rank file of a trace
// with the streaming RankReader, ranks in parallel, and do nothing with the
// events but count them. What `smtrace check` costs above this is analysis.
//
//   bench_read_trace DIR [THREADS]   prints "events N problems P seconds S"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

#include "trace_format/parallel.hpp"
#include "trace_format/reader.hpp"

namespace fmt_ns = smtrace::format;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_read_trace DIR [THREADS]\n");
    return 2;
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    const fmt_ns::TraceFiles files = fmt_ns::find_trace_files(argv[1]);
    unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2]))
                                : std::thread::hardware_concurrency();
    threads = std::clamp<unsigned>(threads, 1, static_cast<unsigned>(std::max<std::size_t>(1, files.present.size())));
    std::atomic<uint64_t> events{0}, problems{files.problems.size()};
    fmt_ns::run_on_threads(threads, files.present.size(), [&](std::size_t i) {
      fmt_ns::RankReader reader(files.rank_files[files.present[i]], fmt_ns::recovered_version(files));
      uint64_t n = 0, p = 0;
      fmt_ns::RankReader::Callbacks cb;
      cb.event = [&](const fmt_ns::Event&) { ++n; };
      cb.problem = [&](const fmt_ns::Problem&) { ++p; };
      if (reader.header(cb)) reader.read_all(cb);
      events += n;
      problems += p;
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("events %llu problems %llu seconds %.3f\n", static_cast<unsigned long long>(events.load()),
                static_cast<unsigned long long>(problems.load()), seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_read_trace: %s\n", e.what());
    return 2;
  }
}
