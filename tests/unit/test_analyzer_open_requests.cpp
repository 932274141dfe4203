// analyzer/checks/open_requests.hpp: the table of open requests that
// invalid-argument's and request-leak's passes share.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analyzer/checks/open_requests.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using smtrace::test::Builder;
using smtrace::test::k_int;
using tf::Call;

namespace {

// The findings of kind `kind`, each as one line: message, locations, notes.
std::vector<std::string> lines_of(const an::Result& r, const std::string& kind) {
  std::vector<std::string> out;
  for (const an::Finding& f : r.findings) {
    if (f.kind != kind) continue;
    std::string line = f.message;
    for (const an::Location& l : f.locations) line += " @" + l.event.str() + " " + l.note;
    for (const std::string& n : f.notes) line += " | " + n;
    out.push_back(line);
  }
  return out;
}

tf::Event& post(Builder& b, Call call, uint64_t request) {
  tf::Event& e = b.add(call);
  e.comm = 0;
  e.peer = 0;
  e.tag = 0;
  e.buf = 0x1000 + request * 0x40;
  e.count = 1;
  e.datatype = k_int;
  e.request = request;
  return e;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::OpenRequests::apply is idempotent outside a scope") {
  an::checks::OpenRequests open;
  tf::Event e;
  e.call = Call::Isend;
  e.seq = 1;
  e.request = 7;
  open.apply(e);
  open.apply(e);
  REQUIRE(open.size() == 1);
  CHECK(open.find(7)->seq == 1);
  CHECK(!open.find(7)->persistent);
  tf::Event w;
  w.call = Call::Wait;
  w.seq = 2;
  w.completed.push_back(tf::CompletedRequest{});
  w.completed.back().request = 7;
  open.apply(w);
  open.apply(w);
  CHECK(open.size() == 0);
  SUBCASE("in a scope, the second call for the same event changes nothing") {
    tf::Event s;
    s.call = Call::Send_init;
    s.seq = 3;
    s.request = 9;
    {
      const an::EventScope scope(s);
      open.apply(s);
      s.request = 10;  // (a pass may not change the event: this shows the second call is skipped)
      open.apply(s);
    }
    CHECK(open.size() == 1);
    CHECK(open.find(9) != nullptr);
    CHECK(open.find(10) == nullptr);
  }
  SUBCASE("failed and pending calls change nothing") {
    tf::Event f = e;
    f.rc = 5;
    open.apply(f);
    tf::Event p = e;
    p.pending = true;
    open.apply(p);
    CHECK(open.size() == 0);
  }
}

TEST_CASE("analyzer::OpenRequestBooks::passes of two checks share a rank's table, two of one check do not") {
  an::checks::OpenRequestBooks books;
  an::RankData rank0, rank1;
  const int ia = 0, rl = 0;
  const auto a = books.of(rank0, &ia);
  CHECK(books.of(rank0, &rl) == a);
  CHECK(books.of(rank1, &rl) != a);
  const auto again = books.of(rank0, &ia);  // a second pass of the same check
  CHECK(again != a);
  CHECK(books.of(rank0, &rl) == again);
}

TEST_CASE("analyzer::OpenRequests::shared by invalid-argument and request-leak, the same findings as alone") {
  // Random programs of posts, persistent inits, Starts, completions and
  // frees over a few request ids (so ids are used again), some calls
  // failing: each check's findings with both checks run (one table) equal
  // its findings run alone (a table of its own).
  std::mt19937 rng(19);
  const std::vector<Call> posts = {Call::Isend, Call::Irecv, Call::Send_init, Call::Recv_init};
  std::size_t findings = 0;
  for (int program = 0; program < 120; ++program) {
    Builder t;
    const int n = 10 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = 1 + rng() % 6;
      tf::Event* e = nullptr;
      switch (rng() % 7) {
        case 0: case 1: e = &post(t, posts[rng() % posts.size()], id); break;
        case 2: e = &t.add(Call::Start); e->request = id; break;
        case 3: {
          e = &t.add(Call::Startall);
          e->requests = {id, 1 + rng() % 6};
          break;
        }
        case 4: e = &t.wait(id); break;
        case 5: e = &t.complete(Call::Waitall, {id, 1 + rng() % 6}, {id}); break;
        default: e = &t.add(Call::Request_free); e->request = rng() % 4 == 0 ? 0 : id; break;
      }
      if (rng() % 10 == 0) e->rc = 3;
    }
    an::Options alone_ia, alone_rl, both;
    alone_ia.checks = {"invalid-argument"};
    alone_rl.checks = {"request-leak"};
    both.checks = {"invalid-argument", "request-leak"};
    // (run() adds MPI_Finalize: once, by the first run.)
    const an::Result r_ia = t.run("invalid-argument");
    const an::Result r_rl = smtrace::test::analyze_trace(t.trace(), alone_rl);
    const an::Result r_both = smtrace::test::analyze_trace(t.trace(), both);
    CHECK(lines_of(r_both, "invalid-argument") == lines_of(r_ia, "invalid-argument"));
    CHECK(lines_of(r_both, "request-leak") == lines_of(r_rl, "request-leak"));
    findings += lines_of(r_both, "invalid-argument").size() + lines_of(r_both, "request-leak").size();
  }
  CHECK(findings > 100);
}

TEST_CASE("analyzer::OpenRequests::with cuda-mpi-race beside them, the same findings as alone") {
  // (cuda-mpi-race keeps its own table of pending operations: chk26 kept
  // them in this table's slots, which measured no gain, docs/bench.md.)
  // Random programs on device memory: posts (one and two blocks, pending
  // ones among them), persistent inits, Starts, completions,
  // MPI_Request_get_status, frees, over a few request ids, kernels that
  // write and device synchronizations, some calls failing: each of the
  // three checks' findings with all three run (one table) equal its
  // findings run alone (one table for two of them).
  constexpr uint64_t k_dev = 0x7f00'0000'0000;
  std::mt19937 rng(26);
  const std::vector<Call> posts = {Call::Isend, Call::Irecv, Call::Send_init, Call::Recv_init, Call::Iallreduce};
  const std::vector<std::string> kinds = {"cuda-mpi-race", "request-leak", "invalid-argument"};
  std::size_t races = 0, findings = 0;
  for (int program = 0; program < 150; ++program) {
    Builder t;
    tf::Event& m = t.add(Call::cudaMalloc);
    m.buf = k_dev;
    m.size = 8192;
    const int n = 10 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = 1 + rng() % 6;
      const uint64_t at = k_dev + 64 * (rng() % 16);
      tf::Event* e = nullptr;
      switch (rng() % 10) {
        case 0: case 1: {
          const Call call = posts[rng() % posts.size()];
          e = &t.buf(call, at, 4, k_int, id);
          if (call == Call::Iallreduce) {
            e->peer.reset();
            e->recv_buf = k_dev + 64 * (rng() % 16);
            e->recv_count = 4;
            e->recv_datatype = k_int;
          }
          if (rng() % 8 == 0) e->pending = true;
          break;
        }
        case 2: e = &t.add(Call::Start); e->request = id; break;
        case 3: e = &t.add(Call::Startall); e->requests = {id, 1 + rng() % 6}; break;
        case 4: e = &t.wait(id); break;
        case 5: e = &t.complete(Call::Waitall, {id, 1 + rng() % 6}, {id}); break;
        case 6:
          e = &t.add(Call::Request_get_status);
          e->request = id;
          e->flag = rng() % 2 == 0;
          break;
        case 7: e = &t.add(Call::Request_free); e->request = rng() % 4 == 0 ? 0 : id; break;
        case 8:
          e = &t.add(Call::cudaLaunchKernel);
          e->args = {{0, at, 8, tf::ArgAccess::unspecified}};
          break;
        default: e = &t.add(Call::cudaDeviceSynchronize); break;
      }
      if (rng() % 10 == 0) e->rc = 3;
    }
    an::Options all;
    all.checks = {kinds.begin(), kinds.end()};
    // (run() adds MPI_Finalize: once, by the first run.)
    const an::Result first = t.run(kinds[0]);
    const an::Result together = smtrace::test::analyze_trace(t.trace(), all);
    for (const std::string& kind : kinds) {
      an::Options alone;
      alone.checks = {kind};
      const an::Result r = kind == kinds[0] ? first : smtrace::test::analyze_trace(t.trace(), alone);
      CHECK(lines_of(together, kind) == lines_of(r, kind));
      findings += lines_of(together, kind).size();
    }
    races += lines_of(together, "cuda-mpi-race").size();
  }
  CHECK(races > 50);
  CHECK(findings > 150);
}

TEST_SUITE_END();
