// fixed.hpp's case 5 (counting bounds), case 6 (no bad end, by an acyclic
// wait-for graph) and match_pairs.hpp's Precedence on hand-built models: the
// seed's Figure 6 program repeated (MultiM) under zero buffering, where the
// bounds decide every pair exactly and case 6 must not apply (it deadlocks),
// the senders pattern, which case 6 proves harmless, and the two-rank
// deadlock that happens-before pruning would hide; each held to the
// brute-force enumerator of semantics.hpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "smt_encoder/fixed.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_model_builder.hpp"

namespace {

using namespace smtrace::test;
using smtrace::smt::Buffering;
using smtrace::smt::Verdict;

// The seed's Figure 6 program, `iterations` times (synth fig6): MPI_Isend /
// MPI_Irecv(MPI_ANY_SOURCE) each followed by its MPI_Wait, tag 0:
//   rank 0: R(*) W  R(*) W  S(1) W  R(*) W
//   rank 1: S(0) W  R(*) W  S(0) W
//   rank 2: S(0) W
struct Fig6 {
  smt::Model model;
  std::vector<uint32_t> receives;           // rank 0's, in posting order
  std::vector<uint32_t> from_one, from_two;  // the sends to rank 0 of ranks 1 and 2
};

Fig6 fig6(uint32_t iterations) {
  ModelBuilder b(3);
  Fig6 f;
  auto call_and_wait = [&](uint32_t op, uint32_t rank) {
    b.wait(rank, {op});
    return op;
  };
  for (uint32_t it = 0; it < iterations; ++it) {
    f.receives.push_back(call_and_wait(b.irecv(0, k_any), 0));
    f.receives.push_back(call_and_wait(b.irecv(0, k_any), 0));
    call_and_wait(b.isend(0, 1), 0);
    f.receives.push_back(call_and_wait(b.irecv(0, k_any), 0));
    f.from_one.push_back(call_and_wait(b.isend(1, 0), 1));
    call_and_wait(b.irecv(1, k_any), 1);
    f.from_one.push_back(call_and_wait(b.isend(1, 0), 1));
    f.from_two.push_back(call_and_wait(b.isend(2, 0), 2));
  }
  f.model = b.build();
  // The recorded run: each iteration's receives take rank 1's, rank 2's, rank 1's message.
  for (uint32_t it = 0; it < iterations; ++it) {
    f.model.ops[f.receives[3 * it]].recorded = f.from_one[2 * it];
    f.model.ops[f.receives[3 * it + 1]].recorded = f.from_two[it];
    f.model.ops[f.receives[3 * it + 2]].recorded = f.from_one[2 * it + 1];
  }
  // Rank 1's receives take rank 0's sends in order.
  std::vector<uint32_t> zero_sends, one_receives;
  for (uint32_t i = 0; i < f.model.ops.size(); ++i) {
    const smt::Op& o = f.model.ops[i];
    if (o.kind == smt::OpKind::send && o.rank == 0) zero_sends.push_back(i);
    if (o.kind == smt::OpKind::recv && o.rank == 1) one_receives.push_back(i);
  }
  for (std::size_t k = 0; k < zero_sends.size(); ++k) f.model.ops[one_receives[k]].recorded = zero_sends[k];
  return f;
}

}  // namespace

TEST_SUITE_BEGIN("smt_encoder");

TEST_CASE("smt_encoder::Precedence: zero buffering orders a standard send's return after its receive's posting") {
  const Fig6 f = fig6(2);
  const smt::Channels ch(f.model);
  const smt::MatchPairs pairs = smt::match_pairs(f.model, ch, smt::find_cuts(f.model));
  const smt::Precedence infinite(f.model, pairs, smt::StandardSends::return_at_once, smt::k_hb_max_entries);
  const smt::Precedence zero(f.model, pairs, smt::StandardSends::wait_for_match, smt::k_hb_max_entries);
  // Rank 1's first message returns before rank 0's third receive is posted
  // only when rank 0's send to rank 1 waits for rank 1's receive.
  CHECK_FALSE(infinite.completes_before_post(f.from_one[0], f.receives[2]));
  CHECK(zero.completes_before_post(f.from_one[0], f.receives[2]));
  // Never the other way round, and nothing within one iteration's first two receives.
  CHECK_FALSE(zero.completes_before_post(f.from_one[0], f.receives[1]));
  CHECK_FALSE(zero.completes_before_post(f.receives[2], f.from_one[0]));
  // Too large for the cap: nothing is ordered.
  const smt::Precedence capped(f.model, pairs, smt::StandardSends::wait_for_match, 1);
  CHECK_FALSE(capped.completes_before_post(f.from_one[0], f.receives[2]));
}

TEST_CASE("smt_encoder::CountingBounds: fig6 under zero buffering, exactly the enumerator's pairs") {
  for (uint32_t iterations : {1u, 2u, 3u}) {
    INFO("iterations ", iterations);
    const Fig6 f = fig6(iterations);
    const smt::Channels ch(f.model);
    const smt::MatchPairs pairs = smt::match_pairs(f.model, ch, smt::find_cuts(f.model));
    const smt::Exploration ex = smt::explore(f.model, Buffering::zero, 2'000'000);
    REQUIRE_FALSE(ex.truncated);
    const smt::Machine machine(f.model, Buffering::zero);
    smt::CountingBounds counting(machine, pairs);
    uint64_t unsat = 0, feasible = 0;
    for (uint32_t r : f.receives) {
      for (uint32_t s : pairs.sends[r]) {
        const bool reachable = ex.pairs.count({r, s}) > 0;
        const Verdict v = counting.can_match(r, s);
        INFO(f.model.post_ref(r).str(), " takes ", f.model.post_ref(s).str());
        // Sound always; on this program also complete (two channels).
        CHECK(v == (reachable ? Verdict::unknown : Verdict::unsat));
        unsat += v == Verdict::unsat;
        if (!reachable) continue;
        ++feasible;
        // The planned run reaches the pair, and one that goes on replays to its end.
        const auto steps = counting.planned_run(r, s);
        REQUIRE(steps);
        smt::Goal goal;
        goal.recv = r;
        goal.send = s;
        CHECK(smt::check_schedule(machine, *steps, goal) == "");
        for (uint32_t then = 0; then < counting.channels(r); ++then) {
          if (const auto more = counting.planned_run(r, s, then)) CHECK(smt::check_schedule(machine, *more, goal) == "");
        }
      }
    }
    if (iterations >= 2) CHECK(unsat > 0);
    CHECK(feasible > 0);
    // The pairs it leaves are the enumerator's.
    const auto fewer = counting.surviving_pairs();
    if (iterations >= 2) {
      REQUIRE(fewer);
      for (uint32_t r : f.receives) {
        for (uint32_t s : fewer->sends[r]) CHECK(ex.pairs.count({r, s}) == 1);
        for (uint32_t s : fewer->sends[r]) CHECK(std::count(fewer->recvs[s].begin(), fewer->recvs[s].end(), r) == 1);
      }
    }
    // Under infinite buffering nothing bounds rank 0's receives from below:
    // still sound (fig6 is choice-free there, case 3 decides it).
    const smt::Exploration inf = smt::explore(f.model, Buffering::infinite, 2'000'000);
    const smt::Machine machine_inf(f.model, Buffering::infinite);
    smt::CountingBounds counting_inf(machine_inf, pairs);
    for (uint32_t r : f.receives) {
      for (uint32_t s : pairs.sends[r]) {
        if (counting_inf.can_match(r, s) == Verdict::unsat) CHECK(inf.pairs.count({r, s}) == 0);
      }
    }
  }
}

TEST_CASE("smt_encoder::CountingBounds: receives outside case 5 are left alone") {
  // A probe at the endpoint: no class.
  ModelBuilder b(3);
  b.send(1, 0);
  b.send(2, 0);
  b.probe(0, k_any);
  const uint32_t r0 = b.recv(0, k_any);
  const uint32_t r1 = b.recv(0, k_any);
  smt::Model m = b.build();
  m.ops[r0].recorded = 0;
  m.ops[r1].recorded = 1;
  const smt::Channels ch(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, smt::find_cuts(m));
  const smt::Machine machine(m, Buffering::zero);
  smt::CountingBounds counting(machine, pairs);
  for (uint32_t s : pairs.sends[r1]) CHECK(counting.can_match(r1, s) == Verdict::unknown);
  CHECK(counting.channels(r1) == 0);
  CHECK_FALSE(counting.planned_run(r1, 0));
  CHECK_FALSE(counting.surviving_pairs());
}

// The senders pattern (synth senders): ranks 1..n each send once to rank 0,
// which receives n messages from MPI_ANY_SOURCE; then, with `barrier`, a barrier.
smt::Model senders(uint32_t n, bool barrier) {
  ModelBuilder b(n + 1);
  std::vector<uint32_t> receives, sends;
  for (uint32_t i = 0; i < n; ++i) receives.push_back(b.recv(0, k_any));
  for (uint32_t r = 1; r <= n; ++r) sends.push_back(b.send(r, 0));
  if (barrier) b.barrier();
  smt::Model m = b.build();
  for (uint32_t i = 0; i < n; ++i) m.ops[receives[i]].recorded = sends[i];
  return m;
}

TEST_CASE("smt_encoder::no_bad_end: the senders pattern cannot end badly, under either buffering") {
  for (const bool barrier : {false, true}) {
    const smt::Model m = senders(4, barrier);
    for (const Buffering buffering : {Buffering::zero, Buffering::infinite}) {
      INFO("barrier ", barrier, " buffering ", smt::buffering_name(buffering));
      const smt::Machine machine(m, buffering);
      CHECK(smt::no_bad_end(machine));
      const smt::Exploration ex = smt::explore(m, buffering, 2'000'000);
      REQUIRE_FALSE(ex.truncated);
      CHECK_FALSE(ex.deadlock);
      CHECK_FALSE(ex.unmatched);
    }
  }
  // 1,000 senders: linear graph, decided at once.
  CHECK(smt::no_bad_end(smt::Machine(senders(1000, true), Buffering::zero)));
}

TEST_CASE("smt_encoder::no_bad_end: a receive from any source, then a send, deadlocks both ways") {
  // rank 0: Recv(ANY) Send(1); rank 1: Recv(0) Send(0). Pruning the pair
  // (rank 0's receive, rank 1's send) by happens-before would leave no
  // edge into the cycle; by envelope the cycle is there, and so is the deadlock.
  ModelBuilder b(2);
  b.recv(0, k_any);
  b.send(0, 1);
  b.recv(1, 0);
  b.send(1, 0);
  const smt::Model m = b.build();
  const smt::Machine machine(m, Buffering::zero);
  CHECK_FALSE(smt::no_bad_end(machine));
  const smt::Exploration ex = smt::explore(m, Buffering::zero, 100'000);
  CHECK(ex.deadlock);
  // The receive comes after rank 0's send instead: harmless, and case 6 says so.
  ModelBuilder c(2);
  c.send(0, 1);
  const uint32_t r0 = c.recv(0, k_any);
  const uint32_t r1 = c.recv(1, 0);
  const uint32_t s1 = c.send(1, 0);
  smt::Model fine = c.build();
  fine.ops[r0].recorded = s1;
  fine.ops[r1].recorded = 0;
  CHECK(smt::no_bad_end(smt::Machine(fine, Buffering::zero)));
  CHECK_FALSE(smt::explore(fine, Buffering::zero, 100'000).deadlock);
}

TEST_CASE("smt_encoder::no_bad_end: fig6 deadlocks under zero buffering, not under infinite") {
  for (uint32_t iterations : {1u, 2u, 3u}) {
    INFO("iterations ", iterations);
    const Fig6 f = fig6(iterations);
    const smt::Exploration zero = smt::explore(f.model, Buffering::zero, 2'000'000);
    REQUIRE_FALSE(zero.truncated);
    // Sound (one iteration cannot deadlock, and still has a cycle: not decided here).
    if (iterations >= 2) CHECK(zero.deadlock);
    if (zero.deadlock) CHECK_FALSE(smt::no_bad_end(smt::Machine(f.model, Buffering::zero)));
    // Under infinite buffering every send returns at once: the graph is acyclic and nothing ends badly.
    CHECK(smt::no_bad_end(smt::Machine(f.model, Buffering::infinite)));
    const smt::Exploration inf = smt::explore(f.model, Buffering::infinite, 2'000'000);
    CHECK_FALSE(inf.deadlock);
    CHECK_FALSE(inf.unmatched);
  }
}

TEST_CASE("smt_encoder::no_bad_end: outside case 6") {
  // A probe, a class with more sends than receives, a rank that stopped.
  ModelBuilder b(2);
  b.send(1, 0);
  b.probe(0, k_any);
  b.recv(0, k_any);
  CHECK_FALSE(smt::no_bad_end(smt::Machine(b.build(), Buffering::infinite)));
  ModelBuilder c(2);
  c.send(1, 0);
  c.send(1, 0);
  c.recv(0, 1);
  CHECK_FALSE(smt::no_bad_end(smt::Machine(c.build(), Buffering::infinite)));
  ModelBuilder d(2);
  d.send(1, 0);
  d.recv(0, 1);
  smt::Model stopped = d.build();
  CHECK(smt::no_bad_end(smt::Machine(stopped, Buffering::zero)));
  stopped.ranks[0].limit = 1;
  CHECK_FALSE(smt::no_bad_end(smt::Machine(stopped, Buffering::zero)));
  // Receives from any source of one tag and from one source of another
  // tag: a class each; from any source and from one source, one tag: none.
  ModelBuilder e(3);
  e.send(1, 0, 1);
  e.send(2, 0, 2);
  e.recv(0, k_any, 1);
  e.recv(0, 2, 2);
  CHECK(smt::no_bad_end(smt::Machine(e.build(), Buffering::zero)));
  ModelBuilder f(3);
  f.send(1, 0);
  f.send(2, 0);
  f.recv(0, k_any);
  f.recv(0, 2);
  const smt::Model mixed = f.build();
  CHECK_FALSE(smt::no_bad_end(smt::Machine(mixed, Buffering::zero)));
  CHECK(smt::explore(mixed, Buffering::zero, 100'000).deadlock);  // rank 2's message taken first
}

TEST_SUITE_END();
