// Prepared's pairs without the happens-before clocks (PairFigures::pairs_only,
// solve.hpp): on models without wildcards whose pairs by the counting rules
// are the recorded matches, and whose parts' recorded runs post every
// candidate, the clocks are skipped; the pairs (every list) and parts must
// be those of the whole analysis (PairFigures::all) on every model, the
// shortcut taken or not.
#include <doctest/doctest.h>

#include <random>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/parts.hpp"
#include "smt_encoder/solve.hpp"
#include "smt_model_builder.hpp"

namespace {

using namespace smtrace::test;

// Return true when `a` and `b` have the same pairs and parts (the figures
// of the happens-before passes left aside).
bool same_prepared(const smt::Model& model, const smt::Prepared& a, const smt::Prepared& b) {
  const smt::MatchPairs& x = a.pairs;
  const smt::MatchPairs& y = b.pairs;
  if (x.sends.size() != y.sends.size() || x.pairs != y.pairs || x.dropped_by_cuts != y.dropped_by_cuts) return false;
  auto same_list = [](std::span<const uint32_t> p, std::span<const uint32_t> q) {
    return p.size() == q.size() && std::equal(p.begin(), p.end(), q.begin());
  };
  for (std::size_t i = 0; i < x.sends.size(); ++i) {
    if (!same_list(x.sends[i], y.sends[i])) return false;
  }
  if (a.parts.size() != b.parts.size()) return false;
  for (std::size_t p = 0; p < a.parts.size(); ++p) {
    if (a.parts[p].first_segment != b.parts[p].first_segment || a.parts[p].last_segment != b.parts[p].last_segment) {
      return false;
    }
    // What a part's questions read: its pairs by its own indices, every list.
    const smt::Part part = smt::extract_part(model, a.cuts, a.parts[p]);
    const smt::MatchPairs u = smt::restrict_pairs(x, part);
    const smt::MatchPairs v = smt::restrict_pairs(y, part);
    for (std::size_t i = 0; i < u.sends.size(); ++i) {
      if (!same_list(u.sends[i], v.sends[i]) || !same_list(u.recvs[i], v.recvs[i]) ||
          !same_list(u.probes[i], v.probes[i])) {
        return false;
      }
    }
  }
  return true;
}

// Return true when restrict_pairs gives each part of `prepared` (the whole
// analysis's) the lists per send that the whole model's pairs hold.
bool parts_keep_lists(const smt::Model& model, const smt::Prepared& prepared) {
  const smt::MatchPairs& whole = prepared.pairs;
  for (const smt::PartRange& range : prepared.parts) {
    const smt::Part part = smt::extract_part(model, prepared.cuts, range);
    const smt::MatchPairs local = smt::restrict_pairs(whole, part);
    for (uint32_t i = 0; i < part.op_of.size(); ++i) {
      auto mapped = [&](const smt::IdList& list) {
        std::vector<uint32_t> out;
        for (uint32_t x : list) out.push_back(part.op_of[x]);
        return out;
      };
      const smt::IdList& r = whole.recvs[part.op_of[i]];
      const smt::IdList& q = whole.probes[part.op_of[i]];
      if (mapped(local.recvs[i]) != std::vector<uint32_t>(r.begin(), r.end()) ||
          mapped(local.probes[i]) != std::vector<uint32_t>(q.begin(), q.end())) {
        return false;
      }
    }
  }
  return true;
}

// Return true when `prepared` skipped the clocks (the shortcut was taken).
bool skipped_clocks(const smt::Prepared& prepared) {
  return prepared.pairs.hb_skipped && prepared.pairs.hb_passes == 0;
}

// Return true when potential-deadlock's solve (zero buffering, recorded
// matches) finds the same on `model` prepared as `a` and as `b`.
bool same_deadlocks(const smt::Model& model, const smt::Prepared& a, const smt::Prepared& b) {
  smt::SolveOptions o;
  o.timeout_s = 20;
  o.threads = 1;
  o.races = false;
  o.deadlocks = true;
  const smt::Solution x = smt::solve(model, a, {}, o);
  const smt::Solution y = smt::solve(model, b, {}, o);
  if (x.unknown != y.unknown || x.deadlocks.size() != y.deadlocks.size()) return false;
  for (std::size_t i = 0; i < x.deadlocks.size(); ++i) {
    const auto& p = x.deadlocks[i].steps;
    const auto& q = y.deadlocks[i].steps;
    if (p.size() != q.size()) return false;
    for (std::size_t k = 0; k < p.size(); ++k) {
      if (p[k].action != q[k].action || p[k].rank != q[k].rank || p[k].event != q[k].event || p[k].recv != q[k].recv ||
          p[k].send != q[k].send) {
        return false;
      }
    }
  }
  return true;
}

// One exchange of ranks 0 and 1 with tag `tag`: Irecv, Isend and a
// Waitall on each; its matches (receive, send) appended to `matches`.
void exchange(ModelBuilder& b, int tag, std::vector<std::pair<uint32_t, uint32_t>>& matches) {
  const uint32_t r0 = b.irecv(0, 1, tag);
  const uint32_t s0 = b.isend(0, 1, tag);
  const uint32_t r1 = b.irecv(1, 0, tag);
  const uint32_t s1 = b.isend(1, 0, tag);
  b.wait(0, {r0, s0});
  b.wait(1, {r1, s1});
  matches.emplace_back(r0, s1);
  matches.emplace_back(r1, s0);
}

// Both ranks receive from the other first, then send: the recorded matches
// cross (a damaged trace's), each receive's one candidate by the counting
// rules, which the clocks drop.
smt::Model crossed_receives() {
  ModelBuilder b(2);
  const uint32_t r0 = b.recv(0, 1);
  const uint32_t s0 = b.send(0, 1);
  const uint32_t r1 = b.recv(1, 0);
  const uint32_t s1 = b.send(1, 0);
  b.record(r0, s1);
  b.record(r1, s0);
  return b.build();
}

}  // namespace

TEST_CASE("smt recorded pairs: without wildcards the clocks are skipped, same pairs and parts") {
  // Two exchanges with Isend/Irecv/Waitall between barriers, and an Ssend:
  // every receive names its source and tag.
  ModelBuilder b(3);
  std::vector<std::pair<uint32_t, uint32_t>> matches;
  for (int round = 0; round < 2; ++round) {
    exchange(b, round, matches);
    const uint32_t ss = b.send(2, 0, 7, true);
    const uint32_t rr = b.recv(0, 2, 7);
    matches.emplace_back(rr, ss);
    b.barrier();
  }
  for (auto [r, s] : matches) b.record(r, s);
  const smt::Model model = b.build();
  const smt::Prepared all(model, smt::Tuning{});
  const smt::Prepared only(model, smt::Tuning{}, {}, smt::PairFigures::pairs_only, 1);
  CHECK(!all.pairs.hb_skipped);
  CHECK(skipped_clocks(only));
  CHECK(only.pairs.pairs == matches.size());
  CHECK(same_prepared(model, all, only));
  CHECK(all.parts.size() == 2);
  CHECK(only.deadlock_free == std::vector<char>{1, 1});  // every standard send here is an Isend
  CHECK(same_deadlocks(model, all, only));
}

TEST_CASE("smt recorded pairs: a recorded match the model cannot make falls back to the whole analysis") {
  // Both ranks receive first: the recorded matches (a damaged trace's) are
  // each receive's one candidate by the counting rules, but the clocks put
  // 1's send after 0's receive returns (0 sends to 1 only after it), so the
  // whole analysis drops the pair, and the parts' run never posts the sends.
  const smt::Model model = crossed_receives();
  const smt::Prepared all(model, smt::Tuning{});
  const smt::Prepared only(model, smt::Tuning{}, {}, smt::PairFigures::pairs_only, 1);
  CHECK(!skipped_clocks(only));
  CHECK(same_prepared(model, all, only));
  const auto plain = smt::recorded_pairs(model, smt::Channels(model), smt::find_cuts(model));
  REQUIRE(plain.has_value());
  CHECK(plain->pairs == 2);
  CHECK(all.pairs.pairs < plain->pairs);  // the clocks dropped what the counting rules kept
}

TEST_CASE("smt recorded pairs: a wildcard, or pairs other than the recorded ones, take the whole analysis") {
  SUBCASE("a wildcard receive") {
    ModelBuilder b(3);
    const uint32_t s1 = b.send(1, 0);
    b.send(2, 0);
    const uint32_t r = b.recv(0, k_any);
    const uint32_t r2 = b.recv(0, k_any);
    b.record(r, s1);
    b.record(r2, 1);
    const smt::Model model = b.build();
    CHECK(smt::names_wildcard(model));
    const smt::Prepared only(model, smt::Tuning{}, {}, smt::PairFigures::pairs_only, 1);
    CHECK(!skipped_clocks(only));
    CHECK(same_prepared(model, smt::Prepared(model, smt::Tuning{}), only));
  }
  SUBCASE("two tags of one sender: the counting rules leave a second candidate") {
    ModelBuilder b(2);
    const uint32_t a0 = b.isend(1, 0, 1);
    const uint32_t a1 = b.isend(1, 0, 1);
    const uint32_t bb = b.isend(1, 0, 2);
    b.wait(1, {a0, a1, bb});
    const uint32_t rb = b.recv(0, 1, 2);
    const uint32_t ra0 = b.recv(0, 1, 1);
    const uint32_t ra1 = b.recv(0, 1, 1);
    b.record(rb, bb);
    b.record(ra0, a0);
    b.record(ra1, a1);
    const smt::Model model = b.build();
    CHECK(!smt::names_wildcard(model));
    CHECK(!smt::recorded_pairs(model, smt::Channels(model), smt::find_cuts(model)).has_value());
    const smt::Prepared all(model, smt::Tuning{});
    const smt::Prepared only(model, smt::Tuning{}, {}, smt::PairFigures::pairs_only, 1);
    CHECK(!skipped_clocks(only));
    CHECK(same_prepared(model, all, only));
    CHECK(all.pairs.pairs > 3);
  }
}

TEST_CASE("smt recorded pairs: random programs without wildcards, the same pairs and parts as the whole analysis") {
  std::mt19937 rng(2711);
  uint32_t skipped = 0, whole = 0;
  for (uint32_t i = 0; i < 300; ++i) {
    const uint32_t ranks = 2 + i % 3;
    const uint32_t messages = 2 + i % 6;
    smt::Model model = random_model(rng, ranks, messages, RandomStyle::named);
    REQUIRE(!smt::names_wildcard(model));
    if (i % 5 == 4) {
      // A recorded match the model may not make: two receives' recorded sends swapped (when both exist).
      std::vector<uint32_t> received;
      for (uint32_t op = 0; op < model.ops.size(); ++op) {
        if (model.ops[op].kind == smt::OpKind::recv && model.ops[op].recorded != k_none) received.push_back(op);
      }
      if (received.size() >= 2) std::swap(model.ops[received[0]].recorded, model.ops[received[1]].recorded);
    }
    const smt::Prepared all(model, smt::Tuning{});
    const smt::Prepared only(model, smt::Tuning{}, {}, smt::PairFigures::pairs_only, 1);
    INFO("model ", i);
    CHECK(same_prepared(model, all, only));
    CHECK(same_deadlocks(model, all, only));
    CHECK(parts_keep_lists(model, all));
    (skipped_clocks(only) ? skipped : whole)++;
    if (!skipped_clocks(only)) CHECK(only.deadlock_free.empty());
  }
  MESSAGE("clocks skipped on ", skipped, " models, whole analysis on ", whole);
  CHECK(skipped > 50);
  CHECK(whole > 10);
}

TEST_CASE("smt recorded pairs: a part that deadlocks without buffering is still solved (send_first.c)") {
  // Both ranks MPI_Send first: the zero-buffering run posts both sends (the
  // clocks are skipped) and deadlocks, so the part is not marked
  // deadlock-free and potential-deadlock's solve finds the witness.
  ModelBuilder b(2);
  const uint32_t s0 = b.send(0, 1);
  const uint32_t r0 = b.recv(0, 1);
  const uint32_t s1 = b.send(1, 0);
  const uint32_t r1 = b.recv(1, 0);
  b.record(r0, s1);
  b.record(r1, s0);
  const smt::Model model = b.build();
  const smt::Prepared all(model, smt::Tuning{});
  const smt::Prepared only(model, smt::Tuning{}, {}, smt::PairFigures::pairs_only, 1);
  CHECK(skipped_clocks(only));
  CHECK(same_prepared(model, all, only));
  CHECK(only.deadlock_free == std::vector<char>{0});
  CHECK(same_deadlocks(model, all, only));
  smt::SolveOptions o;
  o.timeout_s = 20;
  o.threads = 1;
  o.races = false;
  CHECK(smt::solve(model, only, {}, o).deadlocks.size() == 1);
}

TEST_CASE("smt recorded pairs: the lists are the ops' recorded sends, kept by no list per op") {
  // A probe and the receive after it, a plain receive, a receive with no
  // recorded send (it never completed) and a barrier: each list is its op's
  // recorded send, or none.
  ModelBuilder b(2);
  const uint32_t s0 = b.send(0, 1, 3);
  const uint32_t s1 = b.send(0, 1, 4);
  const uint32_t p = b.probe(1, 0, 3);
  const uint32_t r0 = b.recv(1, 0, 3);
  const uint32_t r1 = b.recv(1, 0, 4);
  b.barrier();
  const uint32_t late = b.irecv(1, 0, 5);
  b.record(p, s0);
  b.record(r0, s0);
  b.record(r1, s1);
  const smt::Model model = b.build();
  const auto cuts = smt::find_cuts(model);
  const smt::Channels channels(model);
  std::optional<smt::MatchPairs> pairs = smt::recorded_pairs(model, channels, cuts);
  REQUIRE(pairs);
  CHECK(pairs->sends.recorded());
  REQUIRE(pairs->sends.size() == model.ops.size());
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const std::span<const uint32_t> list = pairs->sends[i];
    if (i == p || i == r0) {
      CHECK(std::vector<uint32_t>(list.begin(), list.end()) == std::vector<uint32_t>{s0});
    } else if (i == r1) {
      CHECK(std::vector<uint32_t>(list.begin(), list.end()) == std::vector<uint32_t>{s1});
    } else {
      CHECK(list.empty());  // the sends, the barrier's calls and `late`, which has no recorded send
    }
  }
  CHECK(pairs->pairs == 3);
  CHECK(pairs->recvs.empty());
  CHECK_THROWS_AS(pairs->sends.list(late), std::logic_error);
  // A copy reads the same ops; assign() makes lists of its own again.
  smt::SendLists copy = pairs->sends;
  CHECK(copy[r1][0] == s1);
  copy.assign(model.ops.size());
  CHECK(!copy.recorded());
  copy.list(late).push_back(s1);
  CHECK(copy[late].size() == 1);
  CHECK(pairs->sends[late].empty());
}

TEST_CASE("smt recorded pairs: where the clocks would not run, the recorded pairs are taken without runs") {
  // Tuning::hb_pruning off stands for a model too large for the clocks
  // (clocks_fit false, as 64 x 1M halo events are): match_pairs then gives
  // the counting rules' pairs, which recorded_pairs gives without a list per
  // send, and no run is made to show that clocks would drop nothing.
  smt::Tuning off;
  off.hb_pruning = false;
  SUBCASE("recorded matches that the clocks would drop: kept, as the whole analysis without clocks keeps them") {
    const smt::Model model = crossed_receives();
    const smt::Prepared all(model, off);
    const smt::Prepared only(model, off, {}, smt::PairFigures::pairs_only, 1);
    CHECK(all.pairs.hb_skipped);
    CHECK(skipped_clocks(only));
    CHECK(only.pairs.pairs == 2);
    CHECK(only.deadlock_free.empty());  // no run was made
    CHECK(only.pairs.recvs.empty());
    CHECK(same_prepared(model, all, only));
    CHECK(same_deadlocks(model, all, only));
  }
  SUBCASE("exchanges between barriers") {
    ModelBuilder b(3);
    std::vector<std::pair<uint32_t, uint32_t>> matches;
    for (int round = 0; round < 3; ++round) {
      exchange(b, round, matches);
      b.barrier();
    }
    for (auto [r, s] : matches) b.record(r, s);
    const smt::Model model = b.build();
    const smt::Prepared all(model, off);
    const smt::Prepared only(model, off, {}, smt::PairFigures::pairs_only, 1);
    CHECK(skipped_clocks(only));
    CHECK(only.deadlock_free.empty());
    CHECK(same_prepared(model, all, only));
    CHECK(same_deadlocks(model, all, only));
  }
}
