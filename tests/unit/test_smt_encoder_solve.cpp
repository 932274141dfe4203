// The SMT backend on hand-built models: match pairs (the seed's Figure 5
// rules generalized to MPI), can-match / can-precede verdicts with replayed
// witnesses, message races with their outcomes, zero-buffer deadlocks, and
// splitting at barriers.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <new>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <z3++.h>

#include "smt_encoder/encoder.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/parts.hpp"
#include "smt_encoder/solve.hpp"
#include "smt_model_builder.hpp"

namespace {

using namespace smtrace::test;
using smtrace::smt::Buffering;
using smtrace::smt::Outcome;
using smtrace::smt::QuestionKind;
using smtrace::smt::RawQuestion;
using smtrace::smt::Verdict;

smt::SolveOptions quick() {
  smt::SolveOptions o;
  o.timeout_s = 20;
  o.threads = 1;
  return o;
}

RawQuestion can_match(uint32_t recv, uint32_t send) {
  RawQuestion q;
  q.kind = QuestionKind::can_match;
  q.recv = recv;
  q.send = send;
  return q;
}

template <class List>  // std::vector<uint32_t> or smt::IdList
bool has(const List& v, uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Rank 0 receives twice (from `first`, then from `second`; k_any: any
// source), ranks 1 and 2 send once each; the run took rank 2's message first.
struct FanIn {
  smt::Model model;
  uint32_t r1, r2, s1, s2;
};
FanIn fan_in(int32_t first, int32_t second) {
  ModelBuilder b(3);
  FanIn f{};
  f.r1 = b.recv(0, first);
  f.r2 = b.recv(0, second);
  f.s1 = b.send(1, 0);
  f.s2 = b.send(2, 0);
  b.record(f.r1, f.s2);
  b.record(f.r2, f.s1);
  f.model = b.build();
  return f;
}

// Ranks 0 and 1 exchange one message: both send first (MPI_Ssend when
// `sync`), or rank 1 receives first when `fixed`.
smt::Model exchange(bool sync, bool fixed) {
  ModelBuilder b(2);
  const uint32_t s0 = b.send(0, 1, 0, sync);
  const uint32_t r0 = b.recv(0, 1);
  const uint32_t r1 = fixed ? b.recv(1, 0) : k_none;
  const uint32_t s1 = b.send(1, 0, 0, sync);
  const uint32_t r1b = fixed ? r1 : b.recv(1, 0);
  b.record(r0, s1);
  b.record(r1b, s0);
  return b.build();
}

}  // namespace

TEST_CASE("smt match pairs: wildcards, named sources and non-overtaking") {
  ModelBuilder b(3);
  const uint32_t r1 = b.recv(0, k_any);
  const uint32_t r2 = b.recv(0, k_any);
  const uint32_t r3 = b.recv(0, 1);
  const uint32_t s1a = b.send(1, 0);
  const uint32_t s1b = b.send(1, 0);
  const uint32_t s2 = b.send(2, 0);
  b.record(r1, s1a);
  b.record(r2, s2);
  b.record(r3, s1b);
  const smt::Model m = b.build();
  const smt::Channels ch(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, smt::find_cuts(m));
  // The first wildcard cannot take rank 1's second message (its first one
  // must be received first, by an earlier receive: there is none).
  CHECK(has(pairs.sends[r1], s1a));
  CHECK(has(pairs.sends[r1], s2));
  CHECK_FALSE(has(pairs.sends[r1], s1b));
  CHECK(has(pairs.sends[r2], s1b));
  CHECK(has(pairs.sends[r3], s1b));
  CHECK_FALSE(has(pairs.sends[r3], s2));  // envelope
  CHECK(smt::pair_excluded_because(m, ch, smt::find_cuts(m), r1, s1b).find("non-overtaking") != std::string::npos);

  // Theorem 2: an over-approximated pair that no execution has is unsat.
  const smt::Solution sol = smt::solve(m, {can_match(r1, s2), can_match(r1, s1b), can_match(r3, s1a)}, quick());
  REQUIRE(sol.answers.size() == 3);
  CHECK(sol.answers[0].verdict == Verdict::sat);
  REQUIRE(sol.answers[0].witness);
  CHECK(sol.answers[0].witness->replayed);
  CHECK(sol.answers[1].verdict == Verdict::unsat);
  CHECK_FALSE(sol.answers[1].explanation.empty());
  // r3 (from rank 1) after two wildcards: rank 1's first message can still
  // reach it when the wildcards take rank 2's message and ... no: only one
  // other message exists, so one wildcard must take s1a.
  CHECK(sol.answers[2].verdict == Verdict::unsat);
}

TEST_CASE("smt races: the other match deadlocks (race_deadlock.c)") {
  const FanIn f = fan_in(k_any, 1);
  const smt::Solution sol = smt::solve(f.model, {}, quick());
  REQUIRE(sol.races.size() == 1);
  CHECK(sol.races[0].recv == f.r1);
  REQUIRE(sol.races[0].alternatives.size() == 1);
  const smt::RawAlternative& alt = sol.races[0].alternatives[0];
  CHECK(alt.send == f.s1);
  CHECK(alt.verdict == Verdict::sat);
  CHECK(alt.outcome_known);
  CHECK(alt.outcome == Outcome::deadlock);
  REQUIRE(alt.witness);
  CHECK(alt.witness->replayed);
  CHECK(sol.deadlocks.empty());  // with the recorded matches it never deadlocks
}

TEST_CASE("smt races: a harmless race (race_sum.c)") {
  const smt::Solution sol = smt::solve(fan_in(k_any, k_any).model, {}, quick());
  REQUIRE(sol.races.size() == 2);
  for (const smt::RawRace& race : sol.races) {
    for (const smt::RawAlternative& alt : race.alternatives) {
      CHECK(alt.verdict == Verdict::sat);
      CHECK(alt.outcome_known);
      CHECK(alt.outcome == Outcome::harmless);
    }
  }
}

TEST_CASE("smt deadlocks: both ranks send first (send_first.c), Ssend and buffering") {
  const smt::Model m = exchange(false, false);
  const smt::Solution sol = smt::solve(m, {}, quick());
  REQUIRE(sol.deadlocks.size() == 1);
  const smt::RawWitness& w = sol.deadlocks[0];
  CHECK(w.replayed);
  REQUIRE(w.cycle.size() == 2);
  CHECK(w.cycle[0].waits_for == std::vector<uint32_t>{w.cycle[1].rank});

  // The encoder directly: no deadlock with infinite buffering.
  const smt::Channels ch(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, {});
  smt::Encoder enc(m, ch, pairs);
  CHECK(enc.bad_end(smt::BadEnd::deadlock, Buffering::infinite, std::nullopt, 10).verdict == Verdict::unsat);
  CHECK(enc.bad_end(smt::BadEnd::deadlock, Buffering::zero, std::nullopt, 10).verdict == Verdict::sat);
  CHECK(enc.smt2().find("(check-sat)") != std::string::npos);

  // The fixed twin: one receives first.
  CHECK(smt::solve(exchange(false, true), {}, quick()).deadlocks.empty());

  // MPI_Ssend blocks whatever the buffering: a prefix-free deadlock check.
  const smt::Model sm = exchange(true, false);
  const smt::Channels sch(sm);
  const smt::MatchPairs sp = smt::match_pairs(sm, sch, {});
  smt::Encoder senc(sm, sch, sp);
  CHECK(senc.bad_end(smt::BadEnd::deadlock, Buffering::infinite, std::nullopt, 10).verdict == Verdict::sat);
}

TEST_CASE("smt can-precede and splitting at barriers") {
  ModelBuilder b(3);
  const uint32_t any = b.recv(0, k_any);
  const uint32_t s1 = b.send(1, 0);
  const uint32_t s2 = b.send(2, 0);
  const uint32_t any2 = b.recv(0, k_any);
  b.record(any, s1);
  b.record(any2, s2);
  b.barrier();
  const uint32_t late_recv = b.recv(0, k_any);
  const uint32_t late_send = b.send(2, 0);
  b.record(late_recv, late_send);
  const smt::Model m = b.build();
  const auto cuts = smt::find_cuts(m);
  REQUIRE(cuts.size() == 1);
  const smt::Channels ch(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, cuts);
  CHECK_FALSE(has(pairs.sends[any], late_send));  // across the barrier: never
  CHECK(smt::split(m, cuts, pairs).size() == 2);

  RawQuestion q;
  q.kind = QuestionKind::can_precede;
  // Rank 2's send can return before rank 1's send is called (nothing orders them).
  q.a_rank = 2;
  q.a_event = m.ops[s2].post;
  q.b_rank = 1;
  q.b_event = m.ops[s1].post;
  RawQuestion back = q;  // the late send cannot come before rank 1's send
  back.a_rank = 2;
  back.a_event = m.ops[late_send].post;
  const smt::Solution sol = smt::solve(m, {q, back}, quick());
  CHECK(sol.answers[0].verdict == Verdict::sat);
  REQUIRE(sol.answers[0].witness);
  CHECK(sol.answers[0].witness->replayed);
  CHECK(sol.answers[1].verdict == Verdict::unsat);
  CHECK(sol.stats.at("parts") == 2);
}

TEST_CASE("smt deadlocks: under zero buffering every collective may synchronize") {
  // Rank 0 calls MPI_Bcast (its root) then sends to rank 1; rank 1 receives
  // then calls MPI_Bcast. The run completed because the root's MPI_Bcast
  // returned at once; MPI allows it to wait for rank 1's call, and then
  // neither goes on. Fixed: rank 1 calls MPI_Bcast first.
  for (const bool fixed : {false, true}) {
    for (const auto& [kind, call] : {std::pair{smt::CollKind::from_root, smtrace::format::Call::Bcast},
                                    std::pair{smt::CollKind::to_root, smtrace::format::Call::Reduce},
                                    std::pair{smt::CollKind::scan, smtrace::format::Call::Scan}}) {
      CAPTURE(fixed);
      CAPTURE(smtrace::format::call_name(call));
      ModelBuilder b(2);
      const uint32_t inst = b.new_collective(kind, call, 0);
      b.join(inst, 0);
      const uint32_t s = b.send(0, 1);
      if (fixed) b.join(inst, 1);
      const uint32_t r = b.recv(1, 0);
      if (!fixed) b.join(inst, 1);
      b.record(r, s);
      const smt::Model m = b.build();
      const smt::Solution sol = smt::solve(m, {}, quick());
      CHECK(sol.unknown == 0);
      REQUIRE(sol.deadlocks.size() == (fixed ? 0u : 1u));
      if (fixed) continue;
      CHECK(sol.deadlocks[0].replayed);
      REQUIRE(sol.deadlocks[0].cycle.size() == 2);
      // Z3 agrees. Under infinite buffering (the collective's own rule) the
      // root of MPI_Bcast and member 0 of MPI_Scan do not wait; the root of
      // MPI_Reduce waits for every member in both readings.
      const smt::Channels ch(m);
      const smt::MatchPairs pairs = smt::match_pairs(m, ch, {});
      smt::Encoder enc(m, ch, pairs);
      CHECK(enc.bad_end(smt::BadEnd::deadlock, Buffering::zero, std::nullopt, 10, true).verdict == Verdict::sat);
      CHECK(enc.bad_end(smt::BadEnd::deadlock, Buffering::infinite, std::nullopt, 10).verdict ==
            (kind == smt::CollKind::to_root ? Verdict::sat : Verdict::unsat));
      smt::SolveOptions replay_off = quick();
      replay_off.tuning.replay = false;
      CHECK(smt::solve(m, {}, replay_off).deadlocks.size() == 1);
    }
  }
}

TEST_CASE("smt solve: a part whose solving throws is undecided with the reason, the others stand") {
  // Two parts split by a barrier, each with a zero-buffer deadlock (both ranks send first).
  ModelBuilder b(2);
  for (int part = 0; part < 2; ++part) {
    const uint32_t s0 = b.send(0, 1);
    const uint32_t r0 = b.recv(0, 1);
    const uint32_t s1 = b.send(1, 0);
    const uint32_t r1 = b.recv(1, 0);
    b.record(r0, s1);
    b.record(r1, s0);
    b.barrier();
  }
  const smt::Model m = b.build();
  REQUIRE(smt::solve(m, {}, quick()).deadlocks.size() == 2);
  const std::pair<std::function<void()>, const char*> failures[] = {
      {[] { throw std::bad_alloc(); }, "out of memory"},
      {[] { throw std::logic_error("an invariant broke"); }, "internal error: an invariant broke"},
      {[] { throw z3::exception("max. memory exceeded"); }, "the solver failed: max. memory exceeded"},
      {[] { throw 42; }, "an exception of unknown type"},
  };
  for (const auto& [fail, reason] : failures) {
    CAPTURE(reason);
    smt::SolveOptions o = quick();
    o.threads = 2;
    o.on_part = [&](std::size_t part) {
      if (part == 1) fail();
    };
    const smt::Solution sol = smt::solve(m, {}, o);
    CHECK(sol.deadlocks.size() == 1);  // part 0's
    CHECK(sol.unknown == 1);
    REQUIRE(sol.undecided.size() == 1);
    CHECK(sol.undecided[0].find("part 2 of 2") != std::string::npos);
    // Where the part starts: rank 0's first event after the barrier (send, receive, barrier).
    CHECK(sol.undecided[0].find("(from " + m.ref(0, 3).str() + ")") != std::string::npos);
    CHECK(sol.undecided[0].find(reason) != std::string::npos);
  }
}

TEST_CASE("smt parts: a range made into its part when asked is the part of its segments") {
  // Three rounds between barriers, the second with a wildcard receive: the
  // ranges of split_ranges(), each made with extract_part(), are what
  // extract() makes of the same segments, and part_events() says where
  // each rank's events are.
  ModelBuilder b(3);
  for (int round = 0; round < 3; ++round) {
    const uint32_t r = b.recv(0, round == 1 ? k_any : 1);
    const uint32_t s = b.send(1, 0);
    b.record(r, s);
    if (round == 1) {
      const uint32_t s2 = b.send(2, 0);
      b.record(b.recv(0, 2), s2);
    }
    b.barrier();
  }
  const smt::Model m = b.build();
  const auto cuts = smt::find_cuts(m);
  const smt::Channels ch(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, cuts);
  const std::vector<smt::PartRange> ranges = smt::split_ranges(m, cuts, pairs);
  const std::vector<smt::Part> parts = smt::split(m, cuts, pairs);
  REQUIRE(ranges.size() == parts.size());
  REQUIRE(ranges.size() >= 3);
  uint32_t ops = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const smt::Part made = smt::extract_part(m, cuts, ranges[i]);
    const smt::Part direct = smt::extract(m, cuts, ranges[i].first_segment, ranges[i].last_segment);
    CHECK(made.op_of == smt::part_ops(m, cuts, ranges[i].first_segment, ranges[i].last_segment));
    CHECK(made.op_of == direct.op_of);
    CHECK(parts[i].op_of == direct.op_of);
    CHECK(made.first == direct.first);
    REQUIRE(made.model.ops.size() == direct.model.ops.size());
    for (std::size_t k = 0; k < made.model.ops.size(); ++k) {
      CHECK(made.model.ops[k].post == direct.model.ops[k].post);
      CHECK(made.model.ops[k].done == direct.model.ops[k].done);
      CHECK(made.model.ops[k].recorded == direct.model.ops[k].recorded);
      CHECK(made.model.ops[k].instance == direct.model.ops[k].instance);
    }
    for (uint32_t r = 0; r < m.ranks.size(); ++r) {
      const auto [begin, end] = smt::part_events(m, cuts, ranges[i].first_segment, ranges[i].last_segment, r);
      CHECK(begin == made.first[r]);
      REQUIRE(made.model.ranks[r].events.size() == end - begin);
      for (uint32_t k = 0; k < end - begin; ++k) {
        CHECK(made.model.ranks[r].seq(k) == m.ranks[r].seq(begin + k));
        const auto mp = made.model.ranks[r].posts(k), dp = direct.model.ranks[r].posts(k);
        const auto mc = made.model.ranks[r].completes(k), dc = direct.model.ranks[r].completes(k);
        CHECK(std::vector<uint32_t>(mp.begin(), mp.end()) == std::vector<uint32_t>(dp.begin(), dp.end()));
        CHECK(std::vector<uint32_t>(mc.begin(), mc.end()) == std::vector<uint32_t>(dc.begin(), dc.end()));
      }
    }
    ops += static_cast<uint32_t>(made.op_of.size());
  }
  CHECK(ops == m.ops.size());
}

TEST_CASE("smt matched probes: the probe sees a message before its own receive takes it") {
  // Rank 0 takes two messages with MPI_Mprobe(MPI_ANY_SOURCE) + MPI_Mrecv;
  // ranks 1 and 2 send one each (MPI_Send). The run took rank 2's first.
  ModelBuilder b(3);
  const auto [p1, r1] = b.mprobe(0, k_any);
  b.mrecv(0, r1);
  const auto [p2, r2] = b.mprobe(0, k_any);
  b.mrecv(0, r2);
  const uint32_t s1 = b.send(1, 0);
  const uint32_t s2 = b.send(2, 0);
  b.record(p1, s2);
  b.record(r1, s2);
  b.record(p2, s1);
  b.record(r2, s1);
  const smt::Model m = b.build();

  // The probe may see either message: its own receive, posted at the same
  // call, is not an earlier receive that the message must go to first.
  const smt::Channels ch(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, smt::find_cuts(m));
  CHECK(has(pairs.sends[p1], s1));
  CHECK(has(pairs.sends[p1], s2));

  // No deadlock even under zero buffering: a send completes once a matched
  // probe and its receive took it. The races are the probes' (not their
  // receives', which take what the probes saw), and harmless.
  const smt::Solution sol = smt::solve(m, {can_match(r1, s1)}, quick());
  CHECK(sol.deadlocks.empty());
  REQUIRE(sol.answers.size() == 1);
  CHECK(sol.answers[0].verdict == Verdict::sat);
  REQUIRE(sol.races.size() == 2);
  for (const smt::RawRace& race : sol.races) {
    CHECK((race.recv == p1 || race.recv == p2));
    REQUIRE(race.alternatives.size() == 1);
    CHECK(race.alternatives[0].verdict == Verdict::sat);
    CHECK(race.alternatives[0].outcome == Outcome::harmless);
  }

  // The match rule's channel index agrees with the rule as written in every
  // reachable state.
  for (const Buffering buffering : {Buffering::infinite, Buffering::zero}) {
    const smt::Machine machine(m, buffering);
    std::vector<smt::Machine::State> todo{machine.initial()};
    std::set<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> seen;
    while (!todo.empty()) {
      const smt::Machine::State state = todo.back();
      todo.pop_back();
      for (uint32_t r = 0; r < m.ops.size(); ++r) {
        for (uint32_t s = 0; s < m.ops.size(); ++s) {
          const smt::RawStep step{smt::StepAction::match, 0, 0, r, s};
          CHECK(machine.refuse(state, step).empty() == machine.refuse_by_definition(state, step).empty());
        }
      }
      std::vector<smt::RawStep> steps;
      machine.enabled(state, steps);
      if (steps.empty()) CHECK(machine.finished(state));
      for (const smt::RawStep& step : steps) {
        smt::Machine::State next = state;
        machine.apply(next, step);
        if (seen.emplace(next.pos, next.partner).second) todo.push_back(std::move(next));
      }
    }
  }
}

// The race witnesses kept whole are chosen per part, by a share of
// Tuning::witness_steps fixed before the parts run: with several threads
// solving parts at once the same witnesses are cut as with one thread.
TEST_CASE("smt race witnesses past the step budget: the same ones cut whatever the threads") {
  ModelBuilder b(4);
  for (uint32_t segment = 0; segment < 6; ++segment) {
    std::vector<uint32_t> sends;
    for (uint32_t round = 0; round < 3; ++round) {
      for (uint32_t r = 1; r < 4; ++r) sends.push_back(b.send(r, 0));
    }
    for (uint32_t i = 0; i < sends.size(); ++i) b.record(b.recv(0, k_any), sends[(i * 4 + segment) % sends.size()]);
    b.barrier();
  }
  const smt::Model m = b.build();
  // Each part's kept steps, and which of its witnesses were cut, in race order.
  auto cut_pattern = [&](unsigned threads, uint64_t witness_steps) {
    smt::SolveOptions o = quick();
    o.threads = threads;
    o.tuning.witness_steps = witness_steps;
    const smt::Solution sol = smt::solve(m, {}, o);
    std::vector<std::pair<uint32_t, uint64_t>> pattern;
    for (const smt::RawRace& race : sol.races) {
      for (const smt::RawAlternative& a : race.alternatives) {
        if (a.witness) pattern.emplace_back(race.recv, a.witness->omitted * 1000 + a.witness->steps.size());
      }
    }
    return pattern;
  };
  const auto whole = cut_pattern(1, UINT64_MAX);
  const auto one = cut_pattern(1, 400);
  REQUIRE_FALSE(whole.empty());
  REQUIRE(one.size() == whole.size());
  CHECK(one != whole);  // the budget cuts some witnesses
  for (int run = 0; run < 8; ++run) CHECK(cut_pattern(4, 400) == one);
}

TEST_CASE("smt model: a receive's probe and a collective's instance share Op's word, kept apart by kind in a part") {
  static_assert(sizeof(smt::Op) == 32);
  // A barrier, then a matched probe and its receive on rank 1 with a send
  // from rank 0, then a second barrier: the part after the first barrier
  // re-indexes the receive's probe as an op and the barrier's instance as
  // an instance.
  ModelBuilder b(2);
  b.barrier();
  const uint32_t s = b.send(0, 1, 2);
  const auto [probe, recv] = b.mprobe(1, k_any);
  b.mrecv(1, recv);
  b.barrier();
  b.record(recv, s);
  const smt::Model m = b.build();
  REQUIRE(m.ops[recv].probe == probe);
  const auto cuts = smt::find_cuts(m);
  REQUIRE(cuts.size() == 2);
  const smt::Part part = smt::extract(m, cuts, 1, 1);
  const uint32_t local_recv = part.local_op(recv), local_probe = part.local_op(probe);
  REQUIRE(local_recv != k_none);
  REQUIRE(local_probe != k_none);
  CHECK(part.model.ops[local_recv].probe == local_probe);
  CHECK(part.model.ops[local_probe].probe == k_none);  // a probe's word: no instance, no probe
  uint32_t colls = 0;
  for (const smt::Op& op : part.model.ops) {
    if (op.kind != smt::OpKind::coll) continue;
    ++colls;
    REQUIRE(op.instance < part.model.instances.size());
    CHECK(part.model.instances[op.instance].members[op.rank] != k_none);
  }
  CHECK(colls == 2);  // the second barrier's calls, the cut that closes the part
}

namespace {

// Rank 0 receives twice from MPI_ANY_SOURCE (tag 0) and answers each with an
// MPI_Ssend (tag 1) to the rank the run's receive took (nd_ssend_ack):
// ranks 1 and 2 MPI_Ssend a request, then receive the answer. The run took
// rank 1's request first. With `tag_reply`, the receives take MPI_ANY_TAG,
// ranks 1 and 2 send tags 5 and 6, and the answers go back with the tag
// received (to rank 1 and 2 as in the run).
struct Ack {
  smt::Model model;
  uint32_t r1, r2, a1, a2, s1, s2;
};
Ack ssend_ack(bool tag_reply) {
  ModelBuilder b(3);
  Ack k{};
  const int32_t tag = tag_reply ? k_any : 0;
  k.r1 = b.recv(0, k_any, tag);
  k.a1 = b.send(0, 1, tag_reply ? 5 : 1, true);
  k.r2 = b.recv(0, k_any, tag);
  k.a2 = b.send(0, 2, tag_reply ? 6 : 1, true);
  k.s1 = b.send(1, 0, tag_reply ? 5 : 0, true);
  const uint32_t q1 = b.recv(1, 0, tag_reply ? 5 : 1);
  k.s2 = b.send(2, 0, tag_reply ? 6 : 0, true);
  const uint32_t q2 = b.recv(2, 0, tag_reply ? 6 : 1);
  b.record(k.r1, k.s1);
  b.record(k.r2, k.s2);
  b.record(q1, k.a1);
  b.record(q2, k.a2);
  k.model = b.build();
  return k;
}

}  // namespace

TEST_CASE("smt races: a bad end that reuses what the recorded status gave is not known (nd_ssend_ack)") {
  for (const bool tag_reply : {false, true}) {
    CAPTURE(tag_reply);
    const Ack k = ssend_ack(tag_reply);
    const smt::Solution sol = smt::solve(k.model, {}, quick());
    // r1 taking rank 2's request: with the answer still to rank 1 (the
    // recorded value) the run deadlocks, but a program that answers
    // status.MPI_SOURCE (MPI_TAG) answers rank 2 there.
    const smt::RawRace* race = nullptr;
    for (const smt::RawRace& r : sol.races) race = r.recv == k.r1 ? &r : race;
    REQUIRE(race);
    REQUIRE(race->alternatives.size() == 1);
    const smt::RawAlternative& alt = race->alternatives[0];
    CHECK(alt.send == k.s2);
    CHECK(alt.verdict == Verdict::sat);
    CHECK(alt.outcome_known);
    CHECK(alt.outcome == Outcome::deadlock);
    CHECK(alt.reuse.op == k.a1);
    CHECK(alt.reuse.receive == k.r1);
    CHECK(alt.reuse.source);  // the source changed too (before the tag is looked at)
    REQUIRE(alt.witness);
    CHECK(alt.witness->reuse.op == k.a1);
    // Every bad end of either receive reuses a changed status.
    for (const smt::RawRace& r : sol.races) {
      for (const smt::RawAlternative& a : r.alternatives) {
        if (a.outcome_known && a.outcome != Outcome::harmless) CHECK(a.reuse.op != k_none);
      }
    }
  }
}

TEST_CASE("smt races: find_status_reuse names only what a changed status gave, after the receive returned") {
  const Ack k = ssend_ack(false);
  using smt::RawStep;
  using smt::StepAction;
  auto call = [](uint32_t rank, uint32_t event) { return RawStep{StepAction::call, rank, event, k_none, k_none}; };
  auto ret = [](uint32_t rank, uint32_t event) { return RawStep{StepAction::ret, rank, event, k_none, k_none}; };
  auto match = [](uint32_t recv, uint32_t send) { return RawStep{StepAction::match, 0, 0, recv, send}; };
  // The recorded matches: nothing changed, nothing reused.
  const std::vector<RawStep> recorded{call(1, 0), call(0, 0), match(k.r1, k.s1), ret(0, 0), ret(1, 0), call(0, 1)};
  CHECK_FALSE(smt::find_status_reuse(k.model, recorded));
  // r1 takes rank 2's request: the answer to rank 1 (event 1 of rank 0) reuses it once called.
  std::vector<RawStep> other{call(2, 0), call(0, 0), match(k.r1, k.s2), ret(0, 0), ret(2, 0)};
  CHECK_FALSE(smt::find_status_reuse(k.model, other));  // not called yet
  other.push_back(call(0, 1));
  const auto reuse = smt::find_status_reuse(k.model, other);
  REQUIRE(reuse);
  CHECK(reuse->op == k.a1);
  CHECK(reuse->receive == k.r1);
  CHECK(reuse->source);
  // A changed tag alone (the schedule need not replay here): the call with the recorded tag.
  ModelBuilder t(3);
  const uint32_t r = t.recv(0, 1, k_any);
  const uint32_t answer = t.send(0, 2, 5);
  const uint32_t five = t.send(1, 0, 5);
  const uint32_t six = t.send(1, 0, 6);
  t.record(r, five);
  const smt::Model tags = t.build();
  const std::vector<RawStep> tag{call(0, 0), call(1, 1), match(r, six), ret(0, 0), call(0, 1)};
  const auto by_tag = smt::find_status_reuse(tags, tag);
  REQUIRE(by_tag);
  CHECK(by_tag->op == answer);
  CHECK_FALSE(by_tag->source);
  // A later call that names another rank than the recorded source is no reuse
  // (race_deadlock.c: the named receive from rank 1 after the wildcard took rank 2's).
  const FanIn f = fan_in(k_any, 1);
  const std::vector<RawStep> fan{call(0, 0), call(1, 0), match(f.r1, f.s1), ret(0, 0), call(0, 1)};
  CHECK_FALSE(smt::find_status_reuse(f.model, fan));
  const smt::Solution sol = smt::solve(f.model, {}, quick());
  REQUIRE(sol.races.size() == 1);
  REQUIRE(sol.races[0].alternatives.size() == 1);
  CHECK(sol.races[0].alternatives[0].outcome == Outcome::deadlock);
  CHECK(sol.races[0].alternatives[0].reuse.op == k_none);
}

TEST_CASE("smt deadlocks: a blocking send before what its receiver first waits for is unsafe (MPI-4.0 3.5)") {
  // nd_probe_tagloose: rank 1 sends tag 0, then tag 1; rank 0 probes for tag
  // 1 from any source, then receives tag 1 and tag 0 from rank 1. Under zero
  // buffering rank 1's first MPI_Send waits for the receive of tag 0, which
  // rank 0 posts only after its probe saw tag 1, sent after it: a real
  // deadlock of a program that relies on buffering, whatever the probe's
  // match. With MPI_Isend and MPI_Waitall (`safe`) the probe sees tag 1.
  for (const bool safe : {false, true}) {
    CAPTURE(safe);
    ModelBuilder b(2);
    const uint32_t p = b.probe(0, k_any, 1);
    const uint32_t r1 = b.recv(0, 1, 1);
    const uint32_t r0 = b.recv(0, 1, 0);
    const uint32_t s0 = safe ? b.isend(1, 0, 0) : b.send(1, 0, 0);
    const uint32_t s1 = safe ? b.isend(1, 0, 1) : b.send(1, 0, 1);
    if (safe) b.wait(1, {s0, s1});
    b.record(p, s1);
    b.record(r1, s1);
    b.record(r0, s0);
    const smt::Solution sol = smt::solve(b.build(), {}, quick());
    CHECK(sol.unknown == 0);
    REQUIRE(sol.deadlocks.size() == (safe ? 0u : 1u));
    if (!safe) CHECK(sol.deadlocks[0].cycle.size() == 2);
  }
  // nd_barrier_trunc: rank 1 sends to rank 0 before MPI_Barrier, rank 0
  // receives (from any source) after it: under zero buffering the send waits
  // for a receive behind the barrier, the barrier for rank 1 (MPI-4.0 6.3:
  // no member returns before every member called it). With MPI_Isend before
  // the barrier and MPI_Wait after (`safe`), nothing relies on buffering.
  for (const bool safe : {false, true}) {
    CAPTURE(safe);
    ModelBuilder b(3);
    const uint32_t s1 = safe ? b.isend(1, 0) : b.send(1, 0);
    b.barrier();
    const uint32_t a = b.recv(0, k_any);
    const uint32_t c = b.recv(0, k_any);
    const uint32_t s2 = b.send(2, 0);
    if (safe) b.wait(1, {s1});
    b.record(a, s1);
    b.record(c, s2);
    const smt::Solution sol = smt::solve(b.build(), {}, quick());
    CHECK(sol.unknown == 0);
    REQUIRE(sol.deadlocks.size() == (safe ? 0u : 1u));
    if (!safe) CHECK(sol.deadlocks[0].cycle.size() == 3);
  }
}
