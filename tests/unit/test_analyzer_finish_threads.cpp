// type-mismatch's point-to-point half and unmatched-message run their
// finish() over the ranks on the options' threads, each rank into its own
// groups or list, merged in rank order: the same findings, in the same
// order, with the same counts and ranks, on one thread and on several.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "analyzer/report.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "tests/unit/scratch_dir.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using smtrace::test::Builder;
using smtrace::test::k_int;
using tf::Call;

namespace {

constexpr uint32_t k_float = 13;

tf::Event& p2p(Builder& b, Call call, uint32_t rank, int32_t peer, int32_t tag, int64_t count, uint32_t type) {
  tf::Event& e = b.add(call, rank);
  e.comm = 0;
  e.peer = peer;
  e.tag = tag;
  e.buf = 0x1000;
  e.count = count;
  e.datatype = type;
  if (call == Call::Recv) {
    e.status.source = peer;
    e.status.tag = tag;
  }
  return e;
}

// A ring of `ranks` ranks, `rounds` messages each way round, with type
// mismatches and truncations at places that differ by rank and round (more
// than the 200 findings a check lists, the same place on several ranks
// counted once), and sends and receives that match nothing on some ranks.
tf::Trace ring(uint32_t ranks, int rounds) {
  Builder b(ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    const auto next = static_cast<int32_t>((r + 1) % ranks);
    const auto prev = static_cast<int32_t>((r + ranks - 1) % ranks);
    for (int k = 0; k < rounds; ++k) {
      p2p(b, Call::Send, r, next, k, 4, k_int);
      const bool mismatch = (k + static_cast<int>(r)) % 3 == 0;
      const bool truncated = (k * static_cast<int>(r)) % 5 == 1;
      p2p(b, Call::Recv, r, prev, k, truncated ? 2 : 4, mismatch ? k_float : k_int);
    }
    for (uint32_t u = 0; u < r % 3; ++u) p2p(b, Call::Send, r, next, 1000 + static_cast<int32_t>(u), 1, k_int);
    if (r % 2) p2p(b, Call::Recv, r, prev, 2000, 1, k_int);
    b.add(Call::Finalize, r);
  }
  return b.trace();
}

an::Result analyze_on(const std::filesystem::path& dir, unsigned threads) {
  an::Options options;
  options.checks = {"type-mismatch", "unmatched-message"};
  options.threads = threads;
  return an::analyze(dir, options);
}

}  // namespace

TEST_CASE("analyzer::type-mismatch and unmatched-message::the same findings on one thread and on several") {
  const std::filesystem::path dir = smtrace::test::scratch_dir("finish-threads");
  tf::write_trace(ring(7, 150), dir);
  const an::Result one = analyze_on(dir, 1);
  std::size_t type_mismatch = 0, unmatched = 0, repeated = 0;
  for (const an::Finding& f : one.findings) {
    type_mismatch += f.kind == "type-mismatch";
    unmatched += f.kind == "unmatched-message";
    for (const std::string& note : f.notes) repeated += note.find("occurs") != std::string::npos;
  }
  CHECK(type_mismatch == 201);  // 200 places and one finding that counts the rest
  CHECK(unmatched == 6 + 3);  // rank r sends r % 3 messages to nobody; odd ranks wait for tag 2000
  CHECK(repeated > 0);
  const std::string expected = an::render_json(one);
  for (unsigned threads : {2u, 3u, 8u}) {
    CAPTURE(threads);
    CHECK(an::render_json(analyze_on(dir, threads)) == expected);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
