// Match pairs with the happens-before rules (match_pairs.hpp): on hand-built
// models, the pairs a request/answer loop, a chain through other ranks and
// an MPI_Ssend rule out, with their explanations; on random small models
// (point-to-point, collectives of every kind between two halves,
// request/answer loops with some MPI_Ssend), every pair that the brute-force
// enumerator sees matched in some execution, under either buffering, is a
// match pair, and every accepted pair that is not one has a reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "smt_encoder/match_pairs.hpp"
#include "smt_model_builder.hpp"

namespace {

using namespace smtrace::test;
using smtrace::smt::Buffering;

template <class List>  // std::vector<uint32_t> or smt::IdList
bool has(const List& v, uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

smt::MatchPairs pairs_of(const smt::Model& m) {
  const smt::Channels ch(m);
  return smt::match_pairs(m, ch, smt::find_cuts(m));
}

// Return the match pairs of `m` without the happens-before rules (the benchmark switch).
smt::MatchPairs pairs_without_hb(const smt::Model& m) {
  const smt::Channels ch(m);
  return smt::match_pairs(m, ch, smt::find_cuts(m), smt::HbRules::off);
}

std::string why(const smt::Model& m, uint32_t r, uint32_t s) {
  const smt::Channels ch(m);
  return smt::pair_excluded_because(m, ch, smt::find_cuts(m), r, s);
}

// Return `a`, then a blocking collective of `kind` (root `root`) on every
// rank, then `b` (a program of as many ranks).
smt::Model joined(const smt::Model& a, smt::CollKind kind, uint32_t root, const smt::Model& b) {
  smt::Model m = a;
  smt::Instance inst;
  inst.kind = kind;
  inst.call = kind == smt::CollKind::from_root ? smtrace::format::Call::Bcast
              : kind == smt::CollKind::to_root ? smtrace::format::Call::Reduce
              : kind == smt::CollKind::scan    ? smtrace::format::Call::Scan
              : kind == smt::CollKind::exscan  ? smtrace::format::Call::Exscan
                                               : smtrace::format::Call::Allreduce;
  inst.root = root;
  std::vector<uint32_t> offset(m.ranks.size());
  for (uint32_t r = 0; r < m.ranks.size(); ++r) {
    smt::Event e;
    e.call = inst.call;
    m.ranks[r].events.push_back(e);
    smt::Op op;
    op.kind = smt::OpKind::coll;
    op.rank = r;
    op.post = op.done = static_cast<uint32_t>(m.ranks[r].events.size() - 1);
    op.instance = static_cast<uint32_t>(m.instances.size());
    op.member = r;
    inst.members.push_back(static_cast<uint32_t>(m.ops.size()));
    m.ops.push_back(op);
    offset[r] = static_cast<uint32_t>(m.ranks[r].events.size());
    m.ranks[r].events.insert(m.ranks[r].events.end(), b.ranks[r].events.begin(), b.ranks[r].events.end());
  }
  m.instances.push_back(inst);
  const auto ops = static_cast<uint32_t>(m.ops.size());
  const auto instances = static_cast<uint32_t>(m.instances.size());
  for (smt::Op op : b.ops) {
    op.post += offset[op.rank];
    if (op.done != k_none) op.done += offset[op.rank];
    if (op.recorded != k_none) op.recorded += ops;
    if (op.kind == smt::OpKind::recv && op.probe != k_none) op.probe += ops;
    if (op.kind == smt::OpKind::coll && op.instance != k_none) op.instance += instances;
    m.ops.push_back(op);
  }
  for (smt::Instance i : b.instances) {
    for (uint32_t& member : i.members) member += ops;
    m.instances.push_back(i);
  }
  for (uint32_t r = 0; r < m.ranks.size(); ++r) {
    for (uint32_t k = 0; k < m.ranks[r].events.size(); ++k) m.ranks[r].events[k].seq_low = k + 1;
  }
  ModelBuilder::rebuild_events(m);
  return m;
}

// Rank 0 serves `rounds` rounds: per round it receives from any worker (tag
// 1) and answers (tag 2) the workers in `order`; each worker sends a request
// and waits for the answer, `rounds` times. Answers are MPI_Ssend where
// `sync` says so (per answer).
struct Served {
  smt::Model model;
  std::vector<uint32_t> receives;                  // rank 0's, in order
  std::vector<std::vector<uint32_t>> requests;     // per worker, in order
};
Served request_answer(uint32_t workers, const std::vector<std::vector<uint32_t>>& order,
                      const std::vector<bool>& sync = {}) {
  ModelBuilder b(workers + 1);
  Served out;
  out.requests.resize(workers + 1);
  std::size_t answer = 0;
  for (const auto& round : order) {
    for (uint32_t w : round) {
      out.receives.push_back(b.recv(0, k_any, 1));
      b.send(0, w, 2, answer < sync.size() && sync[answer]);
      ++answer;
    }
  }
  for (uint32_t w = 1; w <= workers; ++w) {
    for (std::size_t i = 0; i < order.size(); ++i) {
      out.requests[w].push_back(b.send(w, 0, 1));
      b.recv(w, 0, 2);
    }
  }
  out.model = b.build();
  return out;
}

// Check that every pair some execution of `m` matches is a match pair, and
// that every accepted pair left out has a reason.
void check_sound(const smt::Model& m, Buffering buffering) {
  const smt::Exploration ex = smt::explore(m, buffering, 300'000);
  if (ex.truncated) return;
  const smt::MatchPairs pairs = pairs_of(m);
  for (const auto& [r, s] : ex.pairs) {
    INFO("feasible pair ", m.post_ref(r).str(), " <- ", m.post_ref(s).str(), " under ",
         smt::buffering_name(buffering));
    CHECK(pairs.find(r, s) != k_none);
  }
  const smt::Channels ch(m);
  const auto cuts = smt::find_cuts(m);
  for (uint32_t r = 0; r < m.ops.size(); ++r) {
    const smt::OpKind kind = m.ops[r].kind;
    if (kind != smt::OpKind::recv && kind != smt::OpKind::probe) continue;
    for (uint32_t s = 0; s < m.ops.size(); ++s) {
      if (!smt::accepts(m.ops[r], m.ops[s]) || pairs.find(r, s) != k_none) continue;
      INFO("dropped pair ", m.post_ref(r).str(), " <- ", m.post_ref(s).str());
      CHECK_FALSE(smt::pair_excluded_because(m, ch, cuts, r, s).empty());
    }
  }
}

}  // namespace

TEST_CASE("smt match pairs: happens-before prunes a request/answer loop") {
  // Two workers, four rounds, answered in the order 1, 2.
  const std::vector<std::vector<uint32_t>> order(4, {1, 2});
  const Served sv = request_answer(2, order);
  const smt::MatchPairs pairs = pairs_of(sv.model);
  const smt::MatchPairs plain = pairs_without_hb(sv.model);
  CHECK_FALSE(pairs.hb_skipped);
  CHECK(pairs.hb_passes >= 1);
  CHECK(plain.hb_skipped);
  CHECK(pairs.pairs < plain.pairs);
  CHECK(pairs.dropped_by_happens_before > 0);
  // The fifth receive comes after two answers to worker 1: its fourth
  // request is posted after that receive completes (rule 2 alone allows it).
  const uint32_t r5 = sv.receives[4], late = sv.requests[1][3];
  CHECK(has(plain.sends[r5], late));
  CHECK_FALSE(has(pairs.sends[r5], late));
  CHECK(why(sv.model, r5, late).find("happens-before through") != std::string::npos);
  // Its third request is a real choice.
  CHECK(has(pairs.sends[r5], sv.requests[1][2]));
  check_sound(sv.model, Buffering::infinite);
  check_sound(sv.model, Buffering::zero);
}

TEST_CASE("smt match pairs: a candidate forced later by a chain through other ranks") {
  // Rank 0 receives from any rank, then starts a chain 0 -> 1 -> 2 whose
  // end sends to rank 0: that send comes after the first receive returns.
  ModelBuilder b(4);
  const uint32_t first = b.recv(0, k_any);
  b.send(0, 1);
  const uint32_t second = b.recv(0, k_any);
  b.recv(1, 0);
  b.send(1, 2);
  b.recv(2, 1);
  const uint32_t late = b.send(2, 0);
  const uint32_t early = b.send(3, 0);
  const smt::Model m = b.build();
  const smt::MatchPairs pairs = pairs_of(m);
  CHECK(pairs.sends[first].size() == 1);
  CHECK(has(pairs.sends[first], early));
  CHECK(has(pairs.sends[second], late));
  CHECK(has(pairs.sends[second], early));
  CHECK(has(pairs_without_hb(m).sends[first], late));
  const std::string text = why(m, first, late);
  CHECK(text.find("completes before") != std::string::npos);
  CHECK(text.find("1:1 MPI_Recv") != std::string::npos);
  CHECK(text.find("2:1 MPI_Recv") != std::string::npos);
  check_sound(m, Buffering::infinite);
}

TEST_CASE("smt match pairs: MPI_Ssend returns after its receive is posted") {
  // Rank 0: Ssend (tag 0) to 1, then a send (tag 5) to 1. Rank 1 receives
  // tag 5 from anyone, then tag 0 from rank 0, then tag 5 again. The Ssend
  // returns only after rank 1's second receive is posted, which is after its
  // first one returned: that one never takes rank 0's tag-5 message. With a
  // standard send it can (infinite buffering), so the pair stays.
  for (const bool sync : {true, false}) {
    ModelBuilder b(3);
    b.send(0, 1, 0, sync);
    const uint32_t late = b.send(0, 1, 5);
    const uint32_t first = b.recv(1, k_any, 5);
    b.recv(1, 0, 0);
    b.recv(1, k_any, 5);
    const uint32_t early = b.send(2, 1, 5);
    const smt::Model m = b.build();
    const smt::MatchPairs pairs = pairs_of(m);
    INFO("sync ", sync);
    CHECK(has(pairs.sends[first], early));
    CHECK(has(pairs.sends[first], late) == !sync);
    if (sync) CHECK(pairs.hb_passes >= 2);
    check_sound(m, Buffering::infinite);
    check_sound(m, Buffering::zero);
  }
}

TEST_CASE("smt match pairs: every match of every execution is a pair (random models)") {
  std::mt19937 rng(5150);
  const smt::CollKind kinds[] = {smt::CollKind::full, smt::CollKind::from_root, smt::CollKind::to_root,
                                 smt::CollKind::scan, smt::CollKind::exscan};
  auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng); };
  for (uint32_t i = 0; i < 60; ++i) {
    const uint32_t ranks = 2 + i % 2;
    const smt::Model plain = random_model(rng, ranks, 2 + i % 5);
    check_sound(plain, i % 2 ? Buffering::zero : Buffering::infinite);
    const smt::Model a = random_model(rng, ranks, 1 + i % 3), b = random_model(rng, ranks, 1 + i % 3);
    check_sound(joined(a, kinds[i % 5], pick(ranks), b), i % 3 ? Buffering::infinite : Buffering::zero);
  }
  for (uint32_t i = 0; i < 20; ++i) {
    const uint32_t workers = 2 + i % 2;
    std::vector<std::vector<uint32_t>> order(2 + i % 2);
    std::vector<bool> sync;
    for (auto& round : order) {
      for (uint32_t w = 1; w <= workers; ++w) round.push_back(w);
      std::shuffle(round.begin(), round.end(), rng);
      for (uint32_t w = 0; w < workers; ++w) sync.push_back(pick(3) == 0);
    }
    const Served sv = request_answer(workers, order, sync);
    check_sound(sv.model, i % 2 ? Buffering::zero : Buffering::infinite);
  }
}
