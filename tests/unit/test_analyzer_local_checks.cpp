// local-concurrency, request-leak and resource-leak on small hand-written traces.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "analyzer/checks/checks.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/call_semantics.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using tf::Call;

namespace {

using smtrace::test::Builder;
using smtrace::test::k_int;
using smtrace::test::id_orders;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<an::Finding> of_kind(const an::Result& r, const std::string& kind) {
  std::vector<an::Finding> out;
  for (const auto& f : r.findings)
    if (f.kind == kind) out.push_back(f);
  return out;
}

const std::string k_lc = "local-concurrency";

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::LocalConcurrency::send_buffer_written") {
  Builder t;
  t.buf(Call::Isend, 0x1000, 100, k_int, 1);  // seq 1
  t.buf(Call::Recv, 0x1100, 10);              // seq 2: inside [0x1000, 0x1190)
  t.wait(1);                                  // seq 3
  const auto r = t.run(k_lc);
  const auto f = of_kind(r, k_lc);
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == an::Severity::error);
  CHECK(f[0].message == "MPI_Isend's buffer [0x1000, +400) is written by MPI_Recv (rank 0:2) before MPI_Wait "
                        "completes it (rank 0:3)");
  REQUIRE(f[0].locations.size() == 3);
  CHECK(f[0].locations[0].event == an::EventRef{0, 1});
  CHECK(f[0].locations[0].line == 11);
  CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  CHECK(f[0].locations[1].call == "MPI_Recv");
  CHECK(contains(f[0].locations[1].note, "[0x1100, +40)"));
  CHECK(f[0].locations[2].event == an::EventRef{0, 3});
  CHECK(r.has_errors());
}

TEST_CASE("analyzer::LocalConcurrency::send_buffer_reads_are_fine") {
  Builder t;
  t.buf(Call::Isend, 0x1000, 100, k_int, 1);
  t.buf(Call::Isend, 0x1000, 100, k_int, 2);  // the same buffer to another peer
  t.buf(Call::Send, 0x1010, 4);
  t.annotate(Call::Annotate_read, 0x1000, 400);
  t.complete(Call::Waitall, {1, 2}, {1, 2});
  t.annotate(Call::Annotate_write, 0x1000, 400);  // after the wait
  t.buf(Call::Recv, 0x1000, 100);
  CHECK(of_kind(t.run(k_lc), k_lc).empty());
}

TEST_CASE("analyzer::LocalConcurrency::annotated_write") {
  Builder t;
  t.buf(Call::Isend, 0x1000, 100, k_int, 1);
  t.annotate(Call::Annotate_write, 0x118c, 8);  // the last 4 bytes overlap
  t.wait(1);
  const auto f = of_kind(t.run(k_lc), k_lc);
  REQUIRE(f.size() == 1);
  CHECK(contains(f[0].message, "is written by smtrace_annotate_write (rank 0:2) before MPI_Wait"));
  CHECK(contains(f[0].locations[1].note, "[0x118c, +4)"));
}

TEST_CASE("analyzer::LocalConcurrency::strided_stores_from_the_load_store_runtime") {
  // An Irecv into 0x1000..0x1190; a run of 4 stores of 8 bytes, 0x100 apart
  // from 0x0f00, hits it with its second and third blocks; a run whose
  // blocks fall between two receive buffers does not.
  Builder t;
  t.buf(Call::Irecv, 0x1000, 100, k_int, 1);
  t.access(Call::Store, 0, 0x0f00, 8, 4, 0x100);
  t.wait(1);
  CHECK(of_kind(t.run(k_lc), k_lc).size() == 1);

  Builder u;
  u.buf(Call::Irecv, 0x1000, 2, k_int, 1);   // 0x1000..0x1008
  u.buf(Call::Irecv, 0x1010, 2, k_int, 2);   // 0x1010..0x1018
  u.access(Call::Load, 0, 0x1008, 8, 3, 0x10);  // 0x1008, 0x1018, 0x1028: between them
  u.complete(Call::Waitall, {1, 2}, {1, 2});
  CHECK(of_kind(u.run(k_lc), k_lc).empty());
}

TEST_CASE("analyzer::LocalConcurrency::receive_buffer_read") {
  SUBCASE("by a send") {
    Builder t;
    t.buf(Call::Irecv, 0x2000, 10, k_int, 1);
    t.buf(Call::Send, 0x2000, 1);
    t.wait(1);
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Irecv's buffer [0x2000, +40) is read by MPI_Send (rank 0:2) before MPI_Wait "
                          "completes it (rank 0:3)");
  }
  SUBCASE("by an annotation") {
    Builder t;
    t.buf(Call::Irecv, 0x2000, 10, k_int, 1);
    t.annotate(Call::Annotate_read, 0x1ff0, 17);
    t.wait(1);
    CHECK(of_kind(t.run(k_lc), k_lc).size() == 1);
  }
  SUBCASE("next to it is fine") {
    Builder t;
    t.buf(Call::Irecv, 0x2000, 10, k_int, 1);
    t.annotate(Call::Annotate_write, 0x1ff0, 16);
    t.annotate(Call::Annotate_write, 0x2028, 16);
    t.wait(1);
    CHECK(of_kind(t.run(k_lc), k_lc).empty());
  }
}

TEST_CASE("analyzer::LocalConcurrency::overlapping_receives") {
  SUBCASE("overlap") {
    Builder t;
    t.buf(Call::Irecv, 0x3000, 10, k_int, 1);
    t.buf(Call::Irecv, 0x3020, 10, k_int, 2);
    t.complete(Call::Waitall, {1, 2}, {1, 2});
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Irecv's buffer [0x3000, +40) is also the receive buffer of MPI_Irecv (rank 0:2) "
                          "before MPI_Waitall completes it (rank 0:3)");
  }
  SUBCASE("disjoint") {
    Builder t;
    t.buf(Call::Irecv, 0x3000, 10, k_int, 1);
    t.buf(Call::Irecv, 0x3028, 10, k_int, 2);
    t.complete(Call::Waitall, {1, 2}, {1, 2});
    CHECK(of_kind(t.run(k_lc), k_lc).empty());
  }
}

// The few pending buffers keep a hull: a buffer outside it meets none, one
// inside it (a gap that completions left, or a buffer still pending) is
// compared with each.
TEST_CASE("analyzer::LocalConcurrency::buffers posted at rising and falling addresses") {
  SUBCASE("rising, a gap used again, then an overlap") {
    Builder t;
    t.buf(Call::Irecv, 0x1000, 10, k_int, 1);  // seq 1
    t.buf(Call::Irecv, 0x2000, 10, k_int, 2);  // seq 2
    t.buf(Call::Irecv, 0x3000, 10, k_int, 3);  // seq 3
    t.wait(2);                                 // seq 4: a gap inside the hull
    t.buf(Call::Irecv, 0x2000, 10, k_int, 4);  // seq 5: in the gap, no conflict
    t.buf(Call::Irecv, 0x3010, 10, k_int, 5);  // seq 6: meets request 3's buffer
    t.complete(Call::Waitall, {1, 3, 4, 5}, {1, 3, 4, 5});
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Irecv's buffer [0x3000, +40) is also the receive buffer of MPI_Irecv (rank 0:6) "
                          "before MPI_Waitall completes it (rank 0:7)");
  }
  SUBCASE("falling, then a send reading a pending receive buffer") {
    Builder t;
    t.buf(Call::Irecv, 0x9000, 10, k_int, 1);  // seq 1
    t.buf(Call::Irecv, 0x8000, 10, k_int, 2);  // seq 2
    t.buf(Call::Irecv, 0x7000, 10, k_int, 3);  // seq 3
    t.buf(Call::Send, 0x6ff0, 8);              // seq 4: [0x6ff0, 0x7010) reads request 3's buffer
    t.buf(Call::Send, 0x6000, 8);              // seq 5: below the hull
    t.buf(Call::Send, 0xa000, 8);              // seq 6: above it
    t.complete(Call::Waitall, {1, 2, 3}, {1, 2, 3});
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Irecv's buffer [0x7000, +40) is read by MPI_Send (rank 0:4) "
                          "before MPI_Waitall completes it (rank 0:7)");
  }
  SUBCASE("all completed: the hull starts again") {
    Builder t;
    t.buf(Call::Irecv, 0x1000, 10, k_int, 1);  // seq 1
    t.buf(Call::Irecv, 0x5000, 10, k_int, 2);  // seq 2
    t.complete(Call::Waitall, {1, 2}, {1, 2});  // seq 3
    t.buf(Call::Irecv, 0x3000, 10, k_int, 3);  // seq 4
    t.buf(Call::Recv, 0x1000, 10);             // seq 5: outside the new hull, nothing pending there
    t.buf(Call::Recv, 0x3004, 1);              // seq 6: inside request 3's buffer
    t.wait(3);                                 // seq 7
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Irecv's buffer [0x3000, +40) is written by MPI_Recv (rank 0:6) "
                          "before MPI_Wait completes it (rank 0:7)");
  }
}

// A post of one block goes in without the scratch list where it meets no
// pending buffer, and through the general path where it meets one; a post
// of no bytes keeps none.
TEST_CASE("analyzer::LocalConcurrency::posts of one block, of none, and one meeting a pending buffer") {
  Builder t;
  t.buf(Call::Irecv, 0x1000, 4, k_int, 1);   // seq 1: [0x1000, 0x1010)
  t.buf(Call::Irecv, 0x1004, 0, k_int, 2);   // seq 2: no bytes
  t.buf(Call::Isend, 0x1008, 2, k_int, 3);   // seq 3: reads request 1's buffer
  t.buf(Call::Irecv, 0x2000, 4, k_int, 4);   // seq 4: apart
  t.buf(Call::Send, 0x2000, 1);              // seq 5: reads request 4's buffer
  t.complete(Call::Waitall, {1, 2, 3, 4}, {1, 2, 3, 4});  // seq 6
  t.buf(Call::Irecv, 0x1000, 4, k_int, 5);   // seq 7: nothing pending there now
  t.buf(Call::Send, 0x1000, 1);              // seq 8: reads request 5's buffer
  t.wait(5);                                 // seq 9
  const auto f = of_kind(t.run(k_lc), k_lc);
  REQUIRE(f.size() == 3);
  CHECK(f[0].message == "MPI_Irecv's buffer [0x1000, +16) is read by MPI_Isend (rank 0:3) "
                        "before MPI_Waitall completes it (rank 0:6)");
  CHECK(f[1].message == "MPI_Irecv's buffer [0x2000, +16) is read by MPI_Send (rank 0:5) "
                        "before MPI_Waitall completes it (rank 0:6)");
  CHECK(f[2].message == "MPI_Irecv's buffer [0x1000, +16) is read by MPI_Send (rank 0:8) "
                        "before MPI_Wait completes it (rank 0:9)");
}

TEST_CASE("analyzer::LocalConcurrency::derived_footprints") {
  SUBCASE("interleaved vectors do not overlap") {
    Builder t;
    t.vector_type(64, 4, 2, 32);  // ints 0, 2, 4, 6; next element 8 ints on
    t.buf(Call::Irecv, 0x4000, 2, 64, 1);
    t.buf(Call::Irecv, 0x4004, 2, 64, 2);  // ints 1, 3, 5, 7 (and 9...)
    t.complete(Call::Waitall, {1, 2}, {1, 2});
    CHECK(of_kind(t.run(k_lc), k_lc).empty());
  }
  SUBCASE("shifted by a stride they do") {
    Builder t;
    t.vector_type(64, 4, 2, 32);
    t.buf(Call::Irecv, 0x4000, 2, 64, 1);
    t.buf(Call::Irecv, 0x4008, 2, 64, 2);
    t.complete(Call::Waitall, {1, 2}, {1, 2});
    CHECK(of_kind(t.run(k_lc), k_lc).size() == 1);
  }
  SUBCASE("elements repeat at the extent") {
    Builder t;
    t.vector_type(64, 4, 2);  // extent 28: the second element starts at int 7
    t.buf(Call::Irecv, 0x4000, 2, 64, 1);
    t.annotate(Call::Annotate_write, 0x4000 + 7 * 4, 4);
    t.annotate(Call::Annotate_write, 0x4000 + 3 * 4, 4);  // a hole: fine
    t.wait(1);
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  }
}

TEST_CASE("analyzer::LocalConcurrency::wait_first_is_clean") {
  Builder t;
  t.buf(Call::Isend, 0x1000, 100, k_int, 1);
  t.wait(1);
  t.buf(Call::Recv, 0x1000, 100);
  t.buf(Call::Irecv, 0x1000, 100, k_int, 2);
  t.complete(Call::Waitany, {2}, {2});
  t.annotate(Call::Annotate_read, 0x1000, 400);
  CHECK(of_kind(t.run(k_lc), k_lc).empty());
}

TEST_CASE("analyzer::LocalConcurrency::test_that_does_not_complete") {
  Builder t;
  t.buf(Call::Irecv, 0x2000, 10, k_int, 1);
  t.complete(Call::Test, {1}, {});
  t.annotate(Call::Annotate_read, 0x2000, 4);
  t.complete(Call::Test, {1}, {1});
  t.annotate(Call::Annotate_read, 0x2000, 4);
  const auto f = of_kind(t.run(k_lc), k_lc);
  REQUIRE(f.size() == 1);
  CHECK(f[0].message == "MPI_Irecv's buffer [0x2000, +40) is read by smtrace_annotate_read (rank 0:3) before "
                        "MPI_Test completes it (rank 0:4)");
}

TEST_CASE("analyzer::LocalConcurrency::persistent") {
  SUBCASE("inactive requests hold no buffer") {
    Builder t;
    t.buf(Call::Recv_init, 0x5000, 10, k_int, 7);
    t.annotate(Call::Annotate_write, 0x5000, 40);
    t.add(Call::Start).request = 7;
    t.wait(7);
    t.annotate(Call::Annotate_read, 0x5000, 40);
    t.add(Call::Request_free).request = 7;
    CHECK(of_kind(t.run(k_lc), k_lc).empty());
  }
  SUBCASE("started ones do") {
    Builder t;
    t.buf(Call::Recv_init, 0x5000, 10, k_int, 7);
    t.add(Call::Startall).requests = {7};
    t.annotate(Call::Annotate_read, 0x5010, 4);
    t.wait(7);
    t.add(Call::Request_free).request = 7;
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Recv_init's buffer [0x5000, +40) is read by smtrace_annotate_read (rank 0:3) before "
                          "MPI_Wait completes it (rank 0:4)");
    CHECK(f[0].locations[0].event == an::EventRef{0, 2});
    CHECK(f[0].locations[0].call == "MPI_Startall");
  }
}

TEST_CASE("analyzer::LocalConcurrency::request_free_keeps_the_buffer") {
  Builder t;
  t.buf(Call::Isend, 0x1000, 10, k_int, 1);
  t.add(Call::Request_free).request = 1;
  t.buf(Call::Recv, 0x1000, 10);
  const auto f = of_kind(t.run(k_lc), k_lc);
  REQUIRE(f.size() == 1);
  CHECK(contains(f[0].message, "is written by MPI_Recv (rank 0:3) while it is in flight (freed by "
                               "MPI_Request_free at rank 0:2"));
}

TEST_CASE("analyzer::LocalConcurrency::never_completed") {
  Builder t;
  t.buf(Call::Irecv, 0x2000, 10, k_int, 1);
  t.annotate(Call::Annotate_write, 0x2000, 4);
  t.unfinalize();
  const auto f = of_kind(t.run(k_lc), k_lc);
  REQUIRE(f.size() == 1);
  CHECK(contains(f[0].message, "before it completes (it never completes in the trace)"));
  CHECK(f[0].locations.size() == 2);
}

TEST_CASE("analyzer::LocalConcurrency::collectives_and_rma") {
  SUBCASE("Iallreduce receive buffer") {
    Builder t;
    tf::Event& e = t.buf(Call::Iallreduce, 0x1000, 4, k_int, 3);
    e.peer.reset();
    e.recv_buf = 0x2000;
    e.recv_count = 4;
    e.recv_datatype = k_int;
    t.annotate(Call::Annotate_read, 0x1000, 16);  // the send side: fine
    t.annotate(Call::Annotate_read, 0x2000, 16);
    t.wait(3);
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "MPI_Iallreduce's buffer [0x2000, +16) is read by smtrace_annotate_read (rank 0:3)"));
  }
  SUBCASE("blocking collective into a pending send buffer") {
    Builder t;
    t.buf(Call::Isend, 0x1000, 4, k_int, 1);
    tf::Event& e = t.buf(Call::Bcast, 0x1000, 4);
    e.peer = 1;  // rank 0 is not the root: it receives
    t.wait(1);
    CHECK(of_kind(t.run(k_lc), k_lc).size() == 1);
  }
  SUBCASE("Rget origin buffer: rma-race's, not local-concurrency's") {
    // A load or store of a pending R* call's origin buffer is reported once,
    // by rma-race (as for the RMA calls without a request); its buffers are
    // still checked at the call against the pending operations.
    Builder t;
    tf::Event& e = t.buf(Call::Rget, 0x1000, 4, k_int, 9);
    e.window = 1;
    t.annotate(Call::Annotate_read, 0x1004, 4);
    t.wait(9);
    CHECK(of_kind(t.run(k_lc), k_lc).empty());
    Builder u;
    u.buf(Call::Irecv, 0x1000, 4, k_int, 3);
    tf::Event& g = u.buf(Call::Rget, 0x1008, 4, k_int, 9);
    g.window = 1;
    u.wait(9);
    u.wait(3);
    CHECK(of_kind(u.run(k_lc), k_lc).size() == 1);  // two writers of [0x1008, 0x1010) at once
  }
  SUBCASE("in-place Ireduce_scatter reads its whole receive buffer") {
    // MPI-3.1 section 5.10.1: the input (sum of recvcounts) is taken from
    // the receive buffer; this rank's result is its first recvcounts[0].
    Builder t(2);
    t.buf(Call::Irecv, 0x2008, 1, k_int, 1);  // inside the input, past rank 0's block
    tf::Event& e = t.buf(Call::Ireduce_scatter, 0, 0, 0, 2);
    e.peer.reset();
    e.in_place = true;
    e.recv_buf = 0x2000;
    e.recv_counts = {1, 3};
    e.recv_datatype = k_int;
    t.complete(Call::Waitall, {1, 2}, {1, 2});
    const auto f = of_kind(t.run(k_lc), k_lc);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "is read by MPI_Ireduce_scatter"));
  }
  SUBCASE("Get_accumulate with MPI_NO_OP ignores its origin buffer") {
    // MPI-3.1 section 11.3.4: with MPI_NO_OP the origin buffer is ignored.
    for (bool no_op : {true, false}) {
      CAPTURE(no_op);
      Builder t;
      t.buf(Call::Irecv, 0x1000, 4, k_int, 1);
      tf::Event& e = t.buf(Call::Get_accumulate, 0x1000, 4);
      e.window = 1;
      e.op = no_op ? tf::k_op_no_op : 3;
      e.result_buf = 0x3000;
      e.result_count = 4;
      e.result_datatype = k_int;
      t.wait(1);
      CHECK(of_kind(t.run(k_lc), k_lc).size() == (no_op ? 0 : 1));
    }
  }
  SUBCASE("an RMA call to MPI_PROC_NULL touches no buffer") {
    // MPI-3.1 section 11.3: as a point-to-point call to MPI_PROC_NULL.
    for (bool proc_null : {true, false}) {
      CAPTURE(proc_null);
      Builder t;
      t.buf(Call::Irecv, 0x1000, 4, k_int, 1);
      tf::Event& e = t.buf(Call::Put, 0x1000, 4);
      e.window = 1;
      e.peer = proc_null ? tf::k_proc_null : 0;
      t.wait(1);
      CHECK(of_kind(t.run(k_lc), k_lc).size() == (proc_null ? 0 : 1));
    }
  }
}

TEST_CASE("analyzer::LocalConcurrency::reports_follow_posting_order_not_request_ids") {
  SUBCASE("more conflicts left at the end of the rank than are reported: the earliest posted") {
    for (const auto& ids : id_orders(70)) {
      CAPTURE(ids[0]);
      Builder t;
      for (uint64_t i = 0; i < 70; ++i) t.buf(Call::Irecv, 0x10000 + 0x100 * i, 4, k_int, ids[i]);  // seq 1..70
      for (uint64_t i = 0; i < 70; ++i) t.annotate(Call::Annotate_read, 0x10000 + 0x100 * i, 4);
      t.unfinalize();
      const auto f = of_kind(t.run(k_lc), k_lc);
      REQUIRE(f.size() == 64);
      for (uint64_t i = 0; i < 64; ++i) CHECK(f[i].locations[0].event == an::EventRef{0, i + 1});
      // The note goes with the last finding made.
      CHECK(f[63].notes.back() == "6 more conflicts on rank 0 are not reported");
    }
  }
  SUBCASE("one finding per pair of sites: the earliest-posted operation's") {
    for (const auto& ids : id_orders(2)) {
      CAPTURE(ids[0]);
      Builder t;
      t.buf(Call::Irecv, 0x1000, 4, k_int, ids[0]);                    // seq 1
      const uint32_t post_site = t.trace().ranks[0].events.back().site;
      t.buf(Call::Irecv, 0x2000, 4, k_int, ids[1]).site = post_site;   // seq 2: the same line (a loop)
      t.annotate(Call::Annotate_read, 0x2000, 4);                       // seq 3
      const uint32_t read_site = t.trace().ranks[0].events.back().site;
      t.annotate(Call::Annotate_read, 0x1000, 4).site = read_site;     // seq 4: the same line
      t.unfinalize();
      const auto f = of_kind(t.run(k_lc), k_lc);
      REQUIRE(f.size() == 1);
      CHECK(f[0].locations[0].event == an::EventRef{0, 1});
      CHECK(f[0].locations[1].event == an::EventRef{0, 4});
    }
  }
  SUBCASE("operations started by one MPI_Startall: the first in its array owns a conflict with both") {
    for (const auto& ids : id_orders(2)) {
      CAPTURE(ids[0]);
      Builder t;
      t.buf(Call::Recv_init, 0x5000, 10, k_int, ids[0]);  // seq 1
      t.buf(Call::Recv_init, 0x5000, 20, k_int, ids[1]);  // seq 2: more of the same buffer
      t.add(Call::Startall).requests = ids;               // seq 3
      t.annotate(Call::Annotate_read, 0x5000, 4);         // seq 4
      t.complete(Call::Waitall, ids, ids);                // seq 5
      const auto f = of_kind(t.run(k_lc), k_lc);
      REQUIRE(f.size() == 2);
      // Starting the second receive into the first's buffer; then the read, of both.
      CHECK(f[0].message == "MPI_Recv_init's buffer [0x5000, +40) is also the receive buffer of MPI_Startall "
                            "(rank 0:3) before MPI_Waitall completes it (rank 0:5)");
      CHECK(f[1].message == "MPI_Recv_init's buffer [0x5000, +40) is read by smtrace_annotate_read (rank 0:4) "
                            "before MPI_Waitall completes it (rank 0:5)");
    }
  }
}

TEST_CASE("analyzer::LocalConcurrency::findings_do_not_depend_on_other_pending_operations") {
  // The pending buffers' segments live in a small vector while they are few
  // and disjoint, else in an ordered map: random programs over one small
  // region, run once with 20 other operations pending elsewhere all along
  // (the map from the start) and once without (same seqs), find the same.
  std::mt19937_64 random(5);
  for (int program = 0; program < 200; ++program) {
    CAPTURE(program);
    std::vector<an::Finding> found[2];
    const uint64_t seed = random();
    for (int crowded = 0; crowded < 2; ++crowded) {
      std::mt19937_64 pick(seed);
      Builder t;
      for (uint64_t i = 0; i < 20; ++i) {  // seq 1..20
        if (crowded) t.buf(Call::Isend, 0x900000 + 0x100 * i, 4, k_int, 1000 + i);
        else t.annotate(Call::Annotate_read, 0xa00000 + 0x100 * i, 4);
      }
      std::vector<uint64_t> pending;
      for (uint64_t request = 1; request <= 40; ++request) {
        const uint64_t addr = 0x1000 + 8 * (pick() % 16);
        const int64_t count = 1 + static_cast<int64_t>(pick() % 6);
        switch (pick() % 5) {
          case 0: t.buf(Call::Irecv, addr, count, k_int, request); pending.push_back(request); break;
          case 1: t.buf(Call::Isend, addr, count, k_int, request); pending.push_back(request); break;
          case 2: t.annotate(Call::Annotate_read, addr, 4 * static_cast<uint64_t>(count)); break;
          case 3: t.annotate(Call::Annotate_write, addr, 4 * static_cast<uint64_t>(count)); break;
          default:
            if (pending.empty()) {
              t.annotate(Call::Annotate_read, 0xb00000, 4);
            } else {
              const std::size_t k = pick() % pending.size();
              t.wait(pending[k]);
              pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
            }
        }
      }
      if (crowded) {
        std::vector<uint64_t> others;
        for (uint64_t i = 0; i < 20; ++i) others.push_back(1000 + i);
        t.complete(Call::Waitall, others, others);
      } else {
        t.annotate(Call::Annotate_read, 0xb00000, 4);
      }
      found[crowded] = of_kind(t.run(k_lc), k_lc);
    }
    CHECK(found[0] == found[1]);
  }
}

namespace {

// Append to `t` a random program of `steps` steps on the requests `ids`
// (each used again): one-block and several-block posts (a vector type, an
// MPI_Iallreduce), persistent requests, Start, MPI_Request_free, waits and
// accesses, over `addresses` 8-byte places (overlapping buffers); maybe
// without MPI_Finalize.
void random_request_program(Builder& t, std::mt19937_64& pick, const std::vector<uint64_t>& ids, int steps,
                            uint64_t addresses) {
  t.vector_type(64, 3, 1, 24);  // ints 0, 2, 4; next element 6 ints on
  // Per slot: 0 none, 1 active, 2 persistent inactive, 3 persistent active, 4 freed while active.
  std::vector<int> state(ids.size(), 0);
  for (int step = 0; step < steps; ++step) {
    const std::size_t slot = pick() % ids.size();
    const uint64_t addr = 0x1000 + 8 * (pick() % addresses);
    const int64_t count = 1 + static_cast<int64_t>(pick() % 4);
    const uint64_t type = pick() % 3 == 0 ? 64 : k_int;
    switch (pick() % 10) {
      case 0: case 1: case 2:  // post (also over a freed one's id)
        if (state[slot] == 0 || state[slot] == 4) {
          t.buf(pick() % 2 ? Call::Irecv : Call::Isend, addr, count, type, ids[slot]);
          state[slot] = 1;
        }
        break;
      case 3:
        if (state[slot] == 0) {
          tf::Event& e = t.buf(Call::Iallreduce, addr, count, k_int, ids[slot]);
          e.peer.reset();
          e.recv_buf = addr + 8 * (pick() % 8);
          e.recv_count = count;
          e.recv_datatype = k_int;
          state[slot] = 1;
        }
        break;
      case 4:
        if (state[slot] == 0) {
          t.buf(pick() % 2 ? Call::Recv_init : Call::Send_init, addr, count, type, ids[slot]);
          state[slot] = 2;
        }
        break;
      case 5:
        if (state[slot] == 2) {
          t.add(Call::Start).request = ids[slot];
          state[slot] = 3;
        }
        break;
      case 6:
        if (state[slot] == 1 || state[slot] == 3) {
          t.wait(ids[slot]);
          state[slot] = state[slot] == 1 ? 0 : 2;
        }
        break;
      case 7:
        if (state[slot] == 1 || state[slot] == 2) {
          t.add(Call::Request_free).request = ids[slot];
          state[slot] = state[slot] == 1 ? 4 : 0;
        }
        break;
      case 8: t.annotate(Call::Annotate_read, addr, 4 * static_cast<uint64_t>(count)); break;
      default: t.annotate(Call::Annotate_write, addr, 4 * static_cast<uint64_t>(count)); break;
    }
  }
  if (pick() % 2) t.unfinalize();
}

}  // namespace

TEST_CASE("analyzer::LocalConcurrency::findings_do_not_depend_on_request_ids") {
  // The pending operations live in hash tables by request id: random
  // programs (random_request_program) run with consecutive, reversed and
  // scattered ids find the same.
  std::mt19937_64 random(11);
  const auto orders = id_orders(10);
  for (int program = 0; program < 150; ++program) {
    CAPTURE(program);
    const uint64_t seed = random();
    std::vector<an::Finding> found[3];
    for (std::size_t o = 0; o < orders.size(); ++o) {
      std::mt19937_64 pick(seed);
      Builder t;
      random_request_program(t, pick, orders[o], 60, 16);
      found[o] = of_kind(t.run(k_lc), k_lc);
    }
    CHECK(found[0] == found[1]);
    CHECK(found[0] == found[2]);
  }
}

TEST_CASE("analyzer::LocalConcurrency::an_operation_keeps_its_own_conflicts") {
  // Conflicts and blocks of several live in lists the pass reuses: an
  // operation posted after one with the most conflicts kept (4) and one
  // with several blocks, under the same request id, reports its own.
  Builder t;
  t.vector_type(64, 4, 2, 32);                     // ints 0, 2, 4, 6
  t.buf(Call::Irecv, 0x1000, 4, k_int, 1);         // seq 1
  for (uint64_t i = 0; i < 5; ++i) t.annotate(Call::Annotate_read, 0x1000 + 4 * (i % 4), 4);  // seq 2..6
  t.wait(1);                                       // seq 7
  t.buf(Call::Irecv, 0x4000, 1, 64, 1);            // seq 8: four blocks
  t.annotate(Call::Annotate_write, 0x4004, 4);     // seq 9: a hole: fine
  t.annotate(Call::Annotate_write, 0x4008, 4);     // seq 10
  t.wait(1);                                       // seq 11
  t.buf(Call::Isend, 0x8000, 1, k_int, 1);         // seq 12
  t.annotate(Call::Annotate_write, 0x4008, 4);     // seq 13: the receive is done: fine
  t.wait(1);                                       // seq 14
  const auto f = of_kind(t.run(k_lc), k_lc);
  REQUIRE(f.size() == 5);
  for (std::size_t i = 0; i < 4; ++i) CHECK(f[i].locations[1].event == an::EventRef{0, i + 2});
  CHECK(f[4].locations[0].event == an::EventRef{0, 8});
  CHECK(f[4].locations[1].event == an::EventRef{0, 10});
  CHECK(f[4].message == "MPI_Irecv's buffer [0x4000, +28) is written by smtrace_annotate_write (rank 0:10) "
                        "before MPI_Wait completes it (rank 0:11)");
}

TEST_CASE("analyzer::RequestLeak::leaks") {
  const std::string k = "request-leak";
  SUBCASE("never waited") {
    Builder t;
    t.buf(Call::Isend, 0x1000, 1, k_int, 1);
    const auto f = of_kind(t.run(k), k);
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == an::Severity::error);
    CHECK(f[0].message == "the request created by MPI_Isend (rank 0:1) is never completed or freed before MPI_Finalize");
    REQUIRE(f[0].locations.size() == 1);
    CHECK(f[0].locations[0].line == 11);
  }
  SUBCASE("grouped by site") {
    Builder t;
    for (uint64_t r = 1; r <= 3; ++r) t.buf(Call::Irecv, 0x1000 * r, 1, k_int, r).site = 2;
    const auto f = of_kind(t.run(k), k);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "3 requests created by MPI_Irecv (first at rank 0:1) are never completed"));
  }
  SUBCASE("reported in creation order, whatever the request ids") {
    Builder t;
    for (uint64_t i = 0; i < 30; ++i)  // seqs 1..30, one site each, ids out of order
      t.buf(Call::Irecv, 0x1000 * (i + 1), 1, k_int, ((i * 7) % 30 + 1) * 0x100).site = static_cast<uint32_t>(100 + i);
    t.wait(((5 * 7) % 30 + 1) * 0x100);  // the request of seq 6
    const auto f = of_kind(t.run(k), k);
    REQUIRE(f.size() == 29);
    std::size_t at = 0;
    for (uint64_t seq = 1; seq <= 30; ++seq) {
      if (seq == 6) continue;
      CHECK(contains(f[at++].message, "(rank 0:" + std::to_string(seq) + ")"));
    }
  }
  SUBCASE("a Test that does not complete") {
    Builder t;
    t.buf(Call::Irecv, 0x1000, 1, k_int, 1);
    t.complete(Call::Testany, {1}, {});
    CHECK(of_kind(t.run(k), k).size() == 1);
  }
  SUBCASE("persistent, not freed") {
    Builder t;
    t.buf(Call::Send_init, 0x1000, 1, k_int, 4);
    t.add(Call::Start).request = 4;
    t.wait(4);
    const auto f = of_kind(t.run(k), k);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "is never freed with MPI_Request_free"));
  }
  SUBCASE("not finalized: not a leak") {
    Builder t;
    t.buf(Call::Isend, 0x1000, 1, k_int, 1);
    t.unfinalize();
    CHECK(of_kind(t.run(k), k).empty());
  }
}

TEST_CASE("analyzer::RequestLeak::clean") {
  const std::string k = "request-leak";
  Builder t;
  t.buf(Call::Isend, 0x1000, 1, k_int, 1);
  t.buf(Call::Irecv, 0x2000, 1, k_int, 2);
  t.complete(Call::Waitsome, {1, 2}, {2});
  t.complete(Call::Testall, {1}, {1});
  t.buf(Call::Isend, 0x1000, 1, k_int, 3);
  t.add(Call::Request_free).request = 3;
  t.buf(Call::Recv_init, 0x1000, 1, k_int, 4);
  t.add(Call::Start).request = 4;
  t.wait(4);
  t.add(Call::Request_free).request = 4;
  t.buf(Call::Send_init, 0x1000, 1, k_int, 5);  // never started, freed
  t.add(Call::Request_free).request = 5;
  CHECK(of_kind(t.run(k), k).empty());
}

TEST_CASE("analyzer::ResourceLeak::leaks") {
  const std::string k = "resource-leak";
  auto make = [](bool free_them) {
    auto t = std::make_unique<Builder>();
    tf::CommDef dup;
    dup.id = 2;
    dup.world_ranks = {0};
    t->trace().ranks[0].comms.emplace(2, dup);
    tf::CommDef group = dup;
    group.id = 3;
    group.is_group = true;
    t->trace().ranks[0].comms.emplace(3, group);
    t->vector_type(64, 2, 2);
    t->add(Call::Comm_dup).new_comm = 2;          // seq 1
    t->add(Call::Comm_group).new_comm = 3;        // seq 2
    tf::Event& v = t->add(Call::Type_vector);     // seq 3
    v.datatype = k_int;
    v.new_datatype = 64;
    tf::Event& w = t->add(Call::Win_create);      // seq 4
    w.window = 1;
    t->add(Call::Op_create).new_datatype = 64;    // seq 5
    t->add(Call::Info_create).new_datatype = 2;   // seq 6
    t->add(Call::Info_dup).new_datatype = 3;      // seq 7: freed below, whatever free_them
    t->add(Call::Info_free).new_datatype = 3;
    t->add(Call::Info_free).new_datatype = 9;     // an info smtrace did not see made (MPI_File_get_info): no effect
    if (free_them) {
      t->add(Call::Info_free).new_datatype = 2;
      t->add(Call::Comm_free).comm = 2;
      t->add(Call::Group_free).group = 3;
      t->add(Call::Type_free).datatype = 64;
      t->add(Call::Win_free).window = 1;
      t->add(Call::Op_free).new_datatype = 64;
    }
    return t;
  };
  SUBCASE("not freed") {
    const auto f = of_kind(make(false)->run(k), k);
    REQUIRE(f.size() == 6);
    for (const auto& x : f) CHECK(x.severity == an::Severity::warning);
    CHECK(f[0].message == "the communicator created by MPI_Comm_dup (rank 0:1) is never freed before MPI_Finalize");
    CHECK(f[0].locations[0].line == 11);
    CHECK(contains(f[1].message, "the group created by MPI_Comm_group"));
    CHECK(contains(f[2].message, "the datatype created by MPI_Type_vector"));
    CHECK(contains(f[3].message, "the window created by MPI_Win_create"));
    CHECK(contains(f[4].message, "the reduction op created by MPI_Op_create"));
    CHECK(f[5].message == "the info object created by MPI_Info_create (rank 0:6) is never freed before MPI_Finalize");
  }
  SUBCASE("freed") { CHECK(of_kind(make(true)->run(k), k).empty()); }
  SUBCASE("not finalized") {
    auto t = make(false);
    t->unfinalize();
    CHECK(of_kind(t->run(k), k).empty());
  }
}

TEST_CASE("analyzer::ResourceLeak::one_finding_for_all_ranks") {
  const std::string k = "resource-leak";
  Builder t(3);
  for (uint32_t r = 0; r < 3; ++r) {
    tf::CommDef dup;
    dup.id = 2;
    dup.world_ranks = {0, 1, 2};
    t.trace().ranks[r].comms.emplace(2, dup);
    t.add(Call::Comm_dup, r).new_comm = 2;
  }
  const auto f = of_kind(t.run(k), k);
  REQUIRE(f.size() == 1);
  CHECK(f[0].message == "3 communicators created by MPI_Comm_dup (first at rank 0:1, on 3 ranks) are never freed "
                        "before MPI_Finalize");
  REQUIRE(f[0].locations.size() == 3);
  CHECK(f[0].locations[2].event == an::EventRef{2, 1});
}

TEST_SUITE_END();
