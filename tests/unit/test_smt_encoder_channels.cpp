// Channels (match_pairs.hpp), the index of sends and receives by endpoint:
// on random op lists (named and wildcard sources and tags, one tag or many
// per channel, communicator numbers that make the dense tables or their hash
// map fallback, probes among the receives), every look-up equals a scan of
// the ops in index order.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <vector>

#include "smt_encoder/match_pairs.hpp"

namespace {

namespace smt = smtrace::smt;
using smt::k_any;
using smt::k_none;

struct Shape {
  uint32_t ranks = 4, comms = 2;
  uint32_t comm_base = 0;  // large: the pairs' tables give way to hash maps
  int32_t tags = 2;        // more than 8: the per-list tag maps
  bool wildcards = true;
};

smt::Model random_model(std::mt19937& rng, const Shape& shape, uint32_t ops) {
  smt::Model m;
  m.world_size = shape.ranks;
  m.ranks.resize(shape.ranks);
  std::vector<uint32_t> next_post(shape.ranks, 0);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  for (uint32_t i = 0; i < ops; ++i) {
    smt::Op op;
    const uint32_t kind = pick(10);
    op.kind = kind < 5 ? smt::OpKind::send : kind < 9 ? smt::OpKind::recv : smt::OpKind::probe;
    op.rank = pick(shape.ranks);
    // Ops of a rank in posting order, sometimes two posted by one event.
    if (pick(4) != 0 || next_post[op.rank] == 0) ++next_post[op.rank];
    op.post = next_post[op.rank] - 1;
    op.comm = shape.comm_base + pick(shape.comms);
    op.peer = static_cast<int32_t>(pick(shape.ranks));
    op.tag = static_cast<int32_t>(pick(static_cast<uint32_t>(shape.tags)));
    if (op.kind != smt::OpKind::send && shape.wildcards) {
      if (pick(5) == 0) op.peer = k_any;
      if (pick(5) == 0) op.tag = k_any;
    }
    m.ops.push_back(op);
  }
  for (uint32_t r = 0; r < shape.ranks; ++r) m.ranks[r].events.resize(next_post[r] + 1);
  return m;
}

// The reference: scans of every op.
std::vector<uint32_t> ref_sends(const smt::Model& m, uint32_t source, uint32_t comm, uint32_t rank, int32_t tag) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < m.ops.size(); ++i) {
    const smt::Op& o = m.ops[i];
    if (o.kind == smt::OpKind::send && o.rank == source && o.comm == comm && o.peer == static_cast<int32_t>(rank) &&
        (tag == k_any || o.tag == tag)) {
      out.push_back(i);
    }
  }
  return out;
}

std::vector<uint32_t> ref_receives(const smt::Model& m, uint32_t comm, uint32_t rank, int32_t source, int32_t tag) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < m.ops.size(); ++i) {
    const smt::Op& o = m.ops[i];
    if (o.kind == smt::OpKind::recv && o.comm == comm && o.rank == rank && o.peer == source &&
        (tag == smt::Channels::k_all || o.tag == tag)) {
      out.push_back(i);
    }
  }
  return out;
}

uint32_t ref_count_before(const smt::Model& m, const std::vector<uint32_t>& list, uint32_t op) {
  const smt::Op& q = m.ops[op];
  uint32_t n = 0;
  for (uint32_t x : list) {
    const smt::Op& o = m.ops[x];
    const bool before = q.kind == smt::OpKind::probe ? o.post < q.post : (o.post < q.post || (o.post == q.post && x < op));
    n += before;
  }
  return n;
}

template <class A, class B>
bool same(const A& a, const B& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

void check_against_reference(const smt::Model& m, const Shape& shape) {
  const smt::Channels ch(m);
  std::vector<int32_t> tags{k_any};
  for (int32_t t = 0; t < shape.tags; ++t) tags.push_back(t);
  std::vector<int32_t> sources{k_any};
  for (uint32_t r = 0; r < shape.ranks; ++r) sources.push_back(static_cast<int32_t>(r));
  std::set<uint32_t> ids;
  for (uint32_t c = shape.comm_base; c < shape.comm_base + shape.comms + 1; ++c) {
    for (uint32_t rank = 0; rank < shape.ranks + 1; ++rank) {
      // Endpoints: a distinct id for each (comm, rank) that some send or receive names.
      bool used = false;
      for (const smt::Op& o : m.ops) {
        used = used || (o.comm == c && ((o.kind == smt::OpKind::send && o.peer == static_cast<int32_t>(rank)) ||
                                        (o.kind == smt::OpKind::recv && o.rank == rank)));
      }
      const uint32_t e = ch.endpoint(c, rank);
      CHECK((e != k_none) == used);
      if (e != k_none) {
        CHECK(e < ch.endpoints());
        CHECK(ids.insert(e).second);
      }
      std::vector<uint32_t> senders;
      uint32_t total = 0;
      for (uint32_t source = 0; source < shape.ranks + 1; ++source) {
        const auto all = ref_sends(m, source, c, rank, k_any);
        total += static_cast<uint32_t>(all.size());
        CHECK(ch.sends_from_to(source, c, rank) == all.size());
        for (int32_t tag : tags) CHECK(same(ch.sends(source, c, rank, tag), ref_sends(m, source, c, rank, tag)));
      }
      for (uint32_t i = 0; i < m.ops.size(); ++i) {
        const smt::Op& o = m.ops[i];
        if (o.kind == smt::OpKind::send && o.comm == c && o.peer == static_cast<int32_t>(rank) &&
            std::find(senders.begin(), senders.end(), o.rank) == senders.end()) {
          senders.push_back(o.rank);
        }
      }
      CHECK(same(ch.senders_to(c, rank), senders));
      CHECK(ch.sends_to(c, rank) == total);
      for (int32_t source : sources) {
        for (int32_t tag : tags) {
          const auto ref = ref_receives(m, c, rank, source, tag);
          CHECK(same(ch.receives(c, rank, source, tag), ref));
        }
        const auto every = ref_receives(m, c, rank, source, smt::Channels::k_all);
        const auto& list = ch.receives(c, rank, source, smt::Channels::k_all);
        CHECK(same(list, every));
        // Positions of the ops of this rank in the list.
        for (uint32_t i = 0; i < m.ops.size(); ++i) {
          if (m.ops[i].rank != rank || m.ops[i].kind == smt::OpKind::send) continue;
          const uint32_t n = ref_count_before(m, every, i);
          CHECK(ch.count_before(list, i) == n);
          CHECK(ch.last_before(list, i) == (n == 0 ? k_none : every[n - 1]));
        }
      }
    }
  }
  // Per send: its positions, its channel's tags and the previous send of each tag.
  for (uint32_t i = 0; i < m.ops.size(); ++i) {
    const smt::Op& s = m.ops[i];
    if (s.kind != smt::OpKind::send) continue;
    const auto dest = static_cast<uint32_t>(s.peer);
    const auto all = ref_sends(m, s.rank, s.comm, dest, k_any);
    const auto tagged = ref_sends(m, s.rank, s.comm, dest, s.tag);
    CHECK(ch.channel_position(i) == std::find(all.begin(), all.end(), i) - all.begin());
    CHECK(ch.tag_position(i) == std::find(tagged.begin(), tagged.end(), i) - tagged.begin());
    std::vector<int32_t> channel_tags;
    for (uint32_t x : all) {
      if (std::find(channel_tags.begin(), channel_tags.end(), m.ops[x].tag) == channel_tags.end()) {
        channel_tags.push_back(m.ops[x].tag);
      }
    }
    CHECK(same(ch.channel_tags(i), channel_tags));
    for (int32_t tag : tags) {
      uint32_t previous = k_none;
      for (uint32_t x : ref_sends(m, s.rank, s.comm, dest, tag)) {
        if (x < i) previous = x;
      }
      CHECK(ch.previous_send(i, tag) == previous);
    }
  }
  bool any_source = false, any_tag = false;
  for (const smt::Op& o : m.ops) {
    any_source = any_source || (o.kind == smt::OpKind::recv && o.peer == k_any);
    any_tag = any_tag || (o.kind == smt::OpKind::recv && o.tag == k_any);
  }
  CHECK(ch.any_source() == any_source);
  CHECK(ch.any_tag() == any_tag);
}

}  // namespace

TEST_CASE("smt channels: random op lists against scans of every op") {
  std::mt19937 rng(20261202);
  const Shape shapes[] = {
      {4, 2, 0, 2, true},       {4, 2, 0, 2, false},  {3, 1, 0, 1, false},    {5, 3, 0, 12, true},
      {4, 2, 100000, 2, true},  {6, 2, 100000, 12, false}, {2, 1, 0, 30, true}, {1, 1, 0, 3, true},
  };
  for (const Shape& shape : shapes) {
    for (int round = 0; round < 12; ++round) {
      const smt::Model m = random_model(rng, shape, 10 + static_cast<uint32_t>(rng() % 120));
      check_against_reference(m, shape);
    }
  }
}

TEST_CASE("smt channels: an empty model and one without receives") {
  smt::Model empty;
  const smt::Channels none(empty);
  CHECK(none.endpoints() == 0);
  CHECK(none.endpoint(0, 0) == k_none);
  CHECK(none.sends(0, 0, 0, k_any).empty());
  CHECK(none.receives(0, 0, 0, smt::Channels::k_all).empty());
  CHECK(none.senders_to(0, 0).empty());
  CHECK(none.sends_to(0, 0) == 0);

  smt::Model m;
  m.world_size = 2;
  m.ranks.resize(2);
  m.ranks[0].events.resize(3);
  for (uint32_t k = 0; k < 3; ++k) {
    smt::Op s;
    s.rank = 0;
    s.post = k;
    s.peer = 1;
    s.tag = static_cast<int32_t>(k % 2);
    m.ops.push_back(s);
  }
  const smt::Channels ch(m);
  CHECK(ch.endpoints() == 1);
  CHECK(ch.sends_to(0, 1) == 3);
  CHECK(same(ch.sends(0, 0, 1, 1), std::vector<uint32_t>{1}));
  CHECK(ch.previous_send(2, 0) == 0);
  CHECK(ch.previous_send(2, 1) == 1);
  CHECK(ch.previous_send(2, k_any) == 1);
  CHECK(ch.previous_send(1, 0) == 0);
  CHECK(ch.receives(0, 1, 0, 0).empty());
  CHECK(!ch.any_source());
}

TEST_CASE("smt channels, cuts and match pairs: a deadline that has passed stops them") {
  // Many ops (the clock is looked at once every 65,536 steps), a barrier of all ranks between each two.
  smt::Model m;
  m.world_size = 2;
  m.ranks.resize(2);
  const uint32_t rounds = 40000;
  for (uint32_t k = 0; k < rounds; ++k) {
    for (uint32_t r = 0; r < 2; ++r) {
      smt::Op s;
      s.rank = r;
      s.post = 2 * k;
      s.done = 2 * k;
      s.peer = static_cast<int32_t>(1 - r);
      m.ops.push_back(s);
      smt::Op c;
      c.kind = smt::OpKind::coll;
      c.rank = r;
      c.post = 2 * k + 1;
      c.done = 2 * k + 1;
      c.instance = k;
      c.member = r;
      m.ops.push_back(c);
    }
    smt::Instance inst;
    inst.position = k;
    inst.members = {static_cast<uint32_t>(m.ops.size() - 3), static_cast<uint32_t>(m.ops.size() - 1)};
    m.instances.push_back(inst);
  }
  for (uint32_t r = 0; r < 2; ++r) {
    m.ranks[r].events.resize(2 * rounds);
    m.ranks[r].limit = 4 * rounds;
  }
  const smt::Deadline past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  CHECK_THROWS_AS(smt::Channels(m, past), smt::BudgetSpent);
  const smt::Channels ch(m);
  CHECK(ch.sends_to(0, 1) == rounds);
  CHECK(smt::find_cuts(m).size() == rounds);
  // find_cuts looks at the clock once per 65,536 instances: fewer here, it ends.
  CHECK(smt::find_cuts(m, past).size() == rounds);
  CHECK_THROWS_AS(smt::match_pairs(m, ch, smt::find_cuts(m), smt::HbRules::off, past), smt::BudgetSpent);
  const smt::MatchPairs pairs = smt::match_pairs(m, ch, smt::find_cuts(m), smt::HbRules::off);
  CHECK(pairs.pairs == 0);
}
