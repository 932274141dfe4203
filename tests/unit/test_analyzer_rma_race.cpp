// rma-race on small hand-written traces: the cases of the seed papers
// (rma-bst-fragment-merge Figures 3a/4a and 4b, rma-strided-merge-flush
// Figures 4, 5 and 8a-d) and the epoch, completion, atomicity and lock rules.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/unit/analyzer_trace_builder.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using smtrace::test::Builder;
using smtrace::test::k_int;
using tf::Call;

namespace {

constexpr uint64_t k_win = 0x10000;   // every rank's window 1 (256 bytes) is here
constexpr uint64_t k_buf = 0x20000;   // a local buffer
constexpr uint32_t k_byte = 4;        // BASIC_BYTE

// Return a builder of `n` ranks that all created window 1 at k_win.
Builder with_window(uint32_t n, uint64_t size = 256) {
  Builder b(n);
  for (uint32_t r = 0; r < n; ++r) b.win_create(r, 1, k_win, size);
  return b;
}

void lock_all(Builder& b, uint32_t n) {
  for (uint32_t r = 0; r < n; ++r) b.win_sync(Call::Win_lock_all, r, 1);
}
void unlock_all(Builder& b, uint32_t n) {
  for (uint32_t r = 0; r < n; ++r) b.win_sync(Call::Win_unlock_all, r, 1);
}
void free_all(Builder& b, uint32_t n) {
  for (uint32_t r = 0; r < n; ++r) b.win_sync(Call::Win_free, r, 1);
}

std::size_t races(const an::Result& r) {
  std::size_t n = 0;
  for (const auto& f : r.findings) n += f.kind == "rma-race";
  return n;
}

const an::Finding* first_race(const an::Result& r) {
  for (const auto& f : r.findings)
    if (f.kind == "rma-race") return &f;
  return nullptr;
}

uint64_t stat(const an::Result& r, const std::string& name) {
  auto it = r.stats.find(name);
  return it == r.stats.end() ? 0 : it->second;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("rma-race: the origin buffer of an R* call is pending until its MPI_Wait") {
  // MPI-4.0 12.3.5: MPI_Rput/MPI_Rget complete at the origin with their
  // request. A store into an Rput's origin or a load of an Rget's before
  // MPI_Wait races with the operation; after it, not (the epoch still open).
  for (Call call : {Call::Rput, Call::Rget}) {
    for (bool waited : {false, true}) {
      CAPTURE(tf::call_name(call));
      CAPTURE(waited);
      Builder b = with_window(2);
      lock_all(b, 2);
      b.rma(call, 0, 1, 1, k_buf, 4, 0).request = 7;
      if (waited) b.wait(7);
      b.access(call == Call::Rput ? Call::Store : Call::Load, 0, k_buf + 4, 4);
      if (!waited) b.wait(7);
      unlock_all(b, 2);
      free_all(b, 2);
      auto result = b.run("rma-race");
      CHECK(races(result) == (waited ? 0u : 1u));
    }
  }
}

TEST_CASE("rma-race: seed 000 Figure 3a/4a, a store inside a pending Put's origin buffer") {
  // P0: temp = buf[4]; Put(buf[2], 10 ints, X); buf[7] = 1234; all in lock_all.
  for (bool flushed : {false, true}) {
    CAPTURE(flushed);
    Builder b = with_window(2);
    lock_all(b, 2);
    b.access(Call::Load, 0, k_buf + 4 * 4, 4);
    b.rma(Call::Put, 0, 1, 1, k_buf + 2 * 4, 10, 0);
    if (flushed) b.win_sync(Call::Win_flush, 0, 1, 1);
    b.access(Call::Store, 0, k_buf + 7 * 4, 4);
    unlock_all(b, 2);
    free_all(b, 2);
    auto result = b.run("rma-race");
    if (!flushed) {
      REQUIRE(races(result) == 1);
      const an::Finding& f = *first_race(result);
      CHECK(f.severity == an::Severity::error);
      REQUIRE(f.locations.size() == 2);
      CHECK(f.locations[0].call == "smtrace_store");
      CHECK(f.locations[1].call == "MPI_Put");
      CHECK(f.message.find("0x2001c") != std::string::npos);
    } else {
      CHECK(races(result) == 0);
    }
  }
}

TEST_CASE("rma-race: seed 000 Figure 4b holds 2 nodes after 1000 iterations") {
  // for (i = 0; i < 1000; i++) { Get(buf[i], 1, X); Get(buf[0], 1, X); }:
  // the loop's loads and stores of i, 1000 adjacent Gets and 1000 Gets of
  // buf[0]: one node for i, one for all the Gets (the reference
  // implementation: 5002).
  const uint64_t i_addr = 0x30000;
  Builder b = with_window(2);
  lock_all(b, 2);
  b.access(Call::Load, 0, i_addr, 4);
  for (int i = 0; i < 1000; ++i) {
    b.rma(Call::Get, 0, 1, 1, k_buf + 4 * static_cast<uint64_t>(i), 1, 0);
    b.rma(Call::Get, 0, 1, 1, k_buf, 1, 0);
    b.access(Call::Load, 0, i_addr, 4);
    b.access(Call::Store, 0, i_addr, 4);
    b.access(Call::Load, 0, i_addr, 4);
  }
  unlock_all(b, 2);
  free_all(b, 2);
  auto result = b.run("rma-race");
  CHECK(stat(result, "rma_race_peak_nodes") == 2);
  CHECK(stat(result, "rma_race_nodes") == 2);
  CHECK(stat(result, "rma_race_accesses") == 5001 + 2000);  // 5001 at the origin, 2000 reads of X
  // Get(buf[0]) writes buf[0] concurrently with Get(buf[i = 0]) and with itself.
  CHECK(races(result) >= 1);
}

TEST_CASE("rma-race: seed 004 Figure 4, strided Puts merge into one node; Figure 5 into two") {
  // struct { char buffer1[64]; char buffer2[64]; } A[100];
  constexpr uint64_t max = 64, n = 100;
  for (bool interlaced : {false, true}) {
    CAPTURE(interlaced);
    Builder b = with_window(2, 2 * max * n);
    lock_all(b, 2);
    if (interlaced) {
      for (uint64_t i = 0; i < n; ++i) b.rma(Call::Put, 0, 1, 1, k_buf + i * 2 * max, max, i * max, k_byte);
    }
    for (uint64_t i = 0; i < n; ++i)
      b.rma(Call::Put, 0, 1, 1, k_buf + i * 2 * max + max, max, (n + i) * max, k_byte);
    unlock_all(b, 2);
    free_all(b, 2);
    auto result = b.run("rma-race");
    CHECK(races(result) == 0);
    // At the origin, one strided node per loop; at the target, the Puts
    // write adjacent bytes: one node. Until a third Put confirms a stride,
    // two stand apart: the peak is higher by up to two.
    CHECK(stat(result, "rma_race_nodes") == (interlaced ? 2 : 1));
    CHECK(stat(result, "rma_race_peak_nodes") <= stat(result, "rma_race_nodes") + 2);
  }
}

TEST_CASE("rma-race: seed 004 Figure 8a-d") {
  SUBCASE("8a: a load of a Get's buffer before completion races; 8d: after Win_flush it does not") {
    for (bool flushed : {false, true}) {
      CAPTURE(flushed);
      Builder b = with_window(2);
      lock_all(b, 2);
      b.rma(Call::Get, 0, 1, 1, k_buf, 1, 0);
      if (flushed) b.win_sync(Call::Win_flush, 0, 1, 1);
      b.access(Call::Load, 0, k_buf, 4);
      unlock_all(b, 2);
      free_all(b, 2);
      CHECK(races(b.run("rma-race")) == (flushed ? 0 : 1));
    }
  }
  SUBCASE("8b: the target stores into its window while a Put is in flight") {
    for (bool ordered : {false, true}) {
      CAPTURE(ordered);
      Builder b = with_window(2);
      lock_all(b, 2);
      if (ordered) {
        // The store, then a barrier, then the Put.
        b.access(Call::Store, 1, k_win, 4);
        b.barrier(1);
        b.barrier(0);
        b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
      } else {
        b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
        b.access(Call::Store, 1, k_win, 4);
      }
      unlock_all(b, 2);
      free_all(b, 2);
      auto result = b.run("rma-race");
      CHECK(races(result) == (ordered ? 0 : 1));
      if (!ordered) CHECK(first_race(result)->message.find("rank 1's memory") != std::string::npos);
    }
  }
  SUBCASE("8c: two origins Put to the same bytes of one target") {
    Builder b = with_window(3);
    lock_all(b, 3);
    b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
    b.rma(Call::Put, 2, 1, 1, k_buf, 1, 0);
    unlock_all(b, 3);
    free_all(b, 3);
    CHECK(races(b.run("rma-race")) == 1);
  }
}

TEST_CASE("rma-race: prediction over happens-before, not the recorded timing") {
  // Two Puts to the same target bytes in one epoch race even though the run
  // separated them by a second.
  Builder b = with_window(2);
  lock_all(b, 2);
  b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
  tf::Event& late = b.rma(Call::Put, 0, 1, 1, k_buf + 64, 1, 0);
  late.t_start += 1'000'000'000;
  unlock_all(b, 2);
  free_all(b, 2);
  CHECK(races(b.run("rma-race")) == 1);
}

TEST_CASE("rma-race: exact footprints of derived types") {
  // Two origins put vectors of 4 ints 2 ints apart into one target: at
  // displacements 0 and 4 bytes they interleave without touching the same
  // bytes; both at 0 they race.
  for (uint64_t disp : {4u, 0u}) {
    CAPTURE(disp);
    Builder b = with_window(3);
    b.vector_type(100, 4, 2, 0, 0);
    b.vector_type(100, 4, 2, 0, 2);
    lock_all(b, 3);
    b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0, 100);
    b.rma(Call::Put, 2, 1, 1, k_buf, 1, disp, 100);
    unlock_all(b, 3);
    free_all(b, 3);
    CHECK(races(b.run("rma-race")) == (disp == 0 ? 1 : 0));
  }
}

TEST_CASE("rma-race: accumulates with the same op and type are atomic") {
  for (uint32_t second_op : {3u, 1u}) {  // OP_SUM, OP_MAX
    CAPTURE(second_op);
    Builder b = with_window(3);
    lock_all(b, 3);
    b.rma(Call::Accumulate, 0, 1, 1, k_buf, 1, 0).op = 3;
    b.rma(Call::Accumulate, 2, 1, 1, k_buf, 1, 0).op = second_op;
    unlock_all(b, 3);
    free_all(b, 3);
    CHECK(races(b.run("rma-race")) == (second_op == 3 ? 0 : 1));
  }
  // An accumulate and a Put are not atomic with each other.
  Builder b = with_window(3);
  lock_all(b, 3);
  b.rma(Call::Accumulate, 0, 1, 1, k_buf, 1, 0).op = 3;
  b.rma(Call::Put, 2, 1, 1, k_buf, 1, 0);
  unlock_all(b, 3);
  free_all(b, 3);
  CHECK(races(b.run("rma-race")) == 1);
}

// A lock built from MPI_Compare_and_swap on rank 0's word at 0, guarding
// a Put to its counter at 4: ranks 1 and 2 each acquire (CAS, flush), put
// (flush) and release (CAS, flush). Their critical sections apart in time
// on one host: ordered. Overlapping, on two hosts, or rank 2 without the
// lock: a race.
TEST_CASE("rma-race: a lock built from compare-and-swap orders what it guards, if its sections are apart") {
  enum class Way { apart, overlapping, two_hosts, no_lock, released_before };
  for (Way way : {Way::apart, Way::overlapping, Way::two_hosts, Way::no_lock, Way::released_before}) {
    CAPTURE(static_cast<int>(way));
    Builder b = with_window(3);
    for (uint32_t r = 0; r < 3; ++r) b.trace().ranks[r].header.host = way == Way::two_hosts && r == 2 ? "b" : "a";
    lock_all(b, 3);
    auto cas = [&](uint32_t r) {
      tf::Event& e = b.rma(Call::Compare_and_swap, r, 1, 0, k_buf, 1, 0);
      e.compare_buf = k_buf + 4;
      e.result_buf = k_buf + 8;
    };
    auto flush = [&](uint32_t r) { b.win_sync(Call::Win_flush, r, 1, 0); };
    for (uint32_t r : {1u, 2u}) {
      const bool locks = !(way == Way::no_lock && r == 2);
      if (locks) {
        cas(r);
        flush(r);
      }
      if (way == Way::released_before && r == 2) {
        cas(r);  // released before the put
        flush(r);
      }
      b.rma(Call::Put, r, 1, 0, k_buf + 16, 1, 4);
      flush(r);
      if (locks && !(way == Way::released_before && r == 2)) {
        cas(r);
        flush(r);
      }
    }
    // Rank 1's events run from 1 to 8 us (Builder: 1000 ns per seq); rank
    // 2's start after them, or inside them.
    for (auto& e : b.trace().ranks[2].events) e.t_start += way == Way::overlapping ? 0 : 100'000;
    unlock_all(b, 3);
    free_all(b, 3);
    CHECK(races(b.run("rma-race")) == (way == Way::apart ? 0 : 1));
  }
}

TEST_CASE("rma-race: exclusive lock epochs exclude each other, shared ones do not") {
  for (auto lock : {tf::LockType::exclusive, tf::LockType::shared}) {
    CAPTURE(static_cast<int>(lock));
    Builder b = with_window(3);
    for (uint32_t origin : {0u, 2u}) {
      b.win_sync(Call::Win_lock, origin, 1, 1, lock);
      b.rma(Call::Put, origin, 1, 1, k_buf, 1, 0);
      b.win_sync(Call::Win_unlock, origin, 1, 1);
    }
    free_all(b, 3);
    CHECK(races(b.run("rma-race")) == (lock == tf::LockType::exclusive ? 0 : 1));
  }
}

TEST_CASE("rma-race: fence epochs order accesses across ranks") {
  for (bool early : {false, true}) {
    CAPTURE(early);
    Builder b = with_window(2);
    for (uint32_t r = 0; r < 2; ++r) b.win_sync(Call::Win_fence, r, 1);
    b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
    // The target reads its window before (race) or after the closing fence.
    if (early) b.access(Call::Load, 1, k_win, 4);
    for (uint32_t r = 0; r < 2; ++r) b.win_sync(Call::Win_fence, r, 1);
    if (!early) b.access(Call::Load, 1, k_win, 4);
    free_all(b, 2);
    CHECK(races(b.run("rma-race")) == (early ? 1 : 0));
  }
}

TEST_CASE("rma-race: flush_local completes the origin buffer only") {
  Builder b = with_window(2);
  lock_all(b, 2);
  b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
  b.win_sync(Call::Win_flush_local, 0, 1, 1);
  b.access(Call::Store, 0, k_buf, 4);     // fine: the origin buffer is free again
  b.access(Call::Load, 1, k_win, 4);      // races: the Put may not have reached the target
  unlock_all(b, 2);
  free_all(b, 2);
  auto result = b.run("rma-race");
  REQUIRE(races(result) == 1);
  CHECK(first_race(result)->message.find("rank 1's memory") != std::string::npos);
}

TEST_CASE("rma-race: a successful MPI_Win_test ends the exposure epoch") {
  // MPI-3.1 section 11.5.2: once MPI_Win_test returned flag = true the
  // target may read its window as after MPI_Win_wait; flag = false ends
  // nothing, so a read then races with the origin's Put.
  for (bool succeeds : {true, false}) {
    CAPTURE(succeeds);
    Builder b = with_window(2);
    for (uint32_t r = 0; r < 2; ++r) {
      tf::CommDef group;
      group.id = 2;
      group.world_ranks = {1 - r};
      group.is_group = true;
      b.trace().ranks[r].comms.emplace(group.id, group);
    }
    b.win_sync(Call::Win_start, 0, 1).group = 2;
    b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);
    b.win_sync(Call::Win_complete, 0, 1);
    b.win_sync(Call::Win_post, 1, 1).group = 2;
    b.win_sync(Call::Win_test, 1, 1).flag = false;
    if (succeeds) b.win_sync(Call::Win_test, 1, 1).flag = true;
    b.access(Call::Load, 1, k_win, 4);
    if (!succeeds) b.win_sync(Call::Win_wait, 1, 1);
    free_all(b, 2);
    CHECK(races(b.run("rma-race")) == (succeeds ? 0 : 1));
  }
}

namespace {
// A point-to-point call of `rank` on `count` ints at `addr` (request: nonblocking).
tf::Event& p2p(Builder& b, Call call, uint32_t rank, int32_t peer, uint64_t addr, int64_t count,
               uint64_t request = 0) {
  tf::Event& e = b.add(call, rank);
  e.comm = 0;
  e.peer = peer;
  e.buf = addr;
  e.count = count;
  e.datatype = k_int;
  e.request = request;
  if (call == Call::Recv || call == Call::Irecv) {
    e.status.source = peer;
    e.status.tag = 0;
    e.status.count = count * 4;
  }
  return e;
}
}  // namespace

TEST_CASE("rma-race: MPI buffers on window memory against RMA calls") {
  for (const bool fixed : {false, true}) {
    CAPTURE(fixed);
    SUBCASE("a receive into the window while another rank's Put may land there") {
      Builder b = with_window(3);
      b.win_sync(Call::Win_lock, 1, 1, 0, tf::LockType::shared);
      b.rma(Call::Put, 1, 1, 0, k_buf, 2, 0);
      b.win_sync(Call::Win_unlock, 1, 1, 0);
      if (fixed) {
        for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
      }
      p2p(b, Call::Send, 2, 0, k_buf, 2);
      p2p(b, Call::Recv, 0, 2, k_win + 4, 2);  // overlaps the Put's second int
      if (!fixed) {
        for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
      }
      free_all(b, 3);
      auto result = b.run("rma-race");
      REQUIRE(races(result) == (fixed ? 0 : 1));
      if (!fixed) {
        const an::Finding& f = *first_race(result);
        CHECK(f.message.find("(4 bytes)") != std::string::npos);
        CHECK(f.message.find("MPI_Recv on rank 0 (writing its receive buffer)") != std::string::npos);
      }
    }
    SUBCASE("an Isend of the origin buffer a pending Get writes") {
      Builder b = with_window(2);
      lock_all(b, 2);
      b.rma(Call::Get, 0, 1, 1, k_buf, 1, 0);
      if (fixed) b.win_sync(Call::Win_flush_local, 0, 1, 1);
      p2p(b, Call::Isend, 0, 1, k_buf, 1, 77);
      b.wait(77);
      unlock_all(b, 2);
      free_all(b, 2);
      CHECK(races(b.run("rma-race")) == (fixed ? 0 : 1));
    }
  }
  SUBCASE("reads against reads, and buffers against loads, are not rma-race's") {
    Builder b = with_window(2);
    lock_all(b, 2);
    b.rma(Call::Put, 0, 1, 1, k_buf, 1, 0);       // reads k_buf
    p2p(b, Call::Isend, 0, 1, k_buf, 1, 5);        // reads k_buf too
    b.access(Call::Store, 0, k_buf + 64, 4);
    p2p(b, Call::Irecv, 0, 1, k_buf + 64, 1, 6);   // local-concurrency's (with the store), not ours
    b.complete(Call::Waitall, {5, 6}, {5, 6});
    unlock_all(b, 2);
    free_all(b, 2);
    CHECK(races(b.run("rma-race")) == 0);
  }
}

TEST_CASE("rma-race: calls before a rank's first window change nothing") {
  // (The pass returns first from them: they only add buffers, which are
  // kept once the rank has a window.) Point-to-point traffic, completions
  // and a barrier on every rank before the windows, then the race of
  // "a receive into the window while another rank's Put may land there".
  for (const bool fixed : {false, true}) {
    CAPTURE(fixed);
    Builder b(3);
    for (uint32_t r = 0; r < 3; ++r) {
      p2p(b, Call::Isend, r, (r + 1) % 3, k_win + 4, 2, 100 + r);  // the bytes the receive below writes
      p2p(b, Call::Irecv, r, (r + 2) % 3, k_buf, 2, 200 + r);
      b.complete(Call::Waitall, {100 + r, 200 + r}, {100 + r, 200 + r}, r);
      b.barrier(r);
    }
    for (uint32_t r = 0; r < 3; ++r) b.win_create(r, 1, k_win, 256);
    b.win_sync(Call::Win_lock, 1, 1, 0, tf::LockType::shared);
    b.rma(Call::Put, 1, 1, 0, k_buf, 2, 0);
    b.win_sync(Call::Win_unlock, 1, 1, 0);
    if (fixed) {
      for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
    }
    p2p(b, Call::Send, 2, 0, k_buf, 2);
    p2p(b, Call::Recv, 0, 2, k_win + 4, 2);
    if (!fixed) {
      for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
    }
    free_all(b, 3);
    auto result = b.run("rma-race");
    REQUIRE(races(result) == (fixed ? 0 : 1));
    if (!fixed) CHECK(first_race(result)->message.find("MPI_Recv on rank 0") != std::string::npos);
  }
}

TEST_CASE("rma-race: stays quiet without RMA") {
  Builder b(2);
  b.access(Call::Store, 0, k_buf, 4);
  auto result = b.run("rma-race");
  CHECK(races(result) == 0);
  CHECK(stat(result, "rma_race_accesses") == 0);
}
