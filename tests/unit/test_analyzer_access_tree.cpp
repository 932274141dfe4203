// AccessTree against seed 000 Fig. 7 (types), the seed papers' examples as
// node counts, the two overlaps the public PARCOACH runtimes miss, and the
// byte-history oracle of access_tree_oracle.hpp over random streams.
// SMTRACE_FUZZ_STREAMS=N runs the oracle over N streams instead of the
// default 12,000, most of them cut to 48 accesses (a few seconds; the seeds
// stay fixed, so a run is reproducible); bench_access_tree --fuzz runs
// millions.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/access_tree.hpp"
#include "tests/unit/access_tree_oracle.hpp"

using smtrace::analyzer::AccessTree;
using smtrace::analyzer::AccessType;
using smtrace::analyzer::Strided;
using smtrace::analyzer::TreeConflict;

TEST_SUITE_BEGIN("analyzer");

namespace {

constexpr AccessType k_lr = AccessType::local_read;
constexpr AccessType k_lw = AccessType::local_write;
constexpr AccessType k_rr = AccessType::rma_read;
constexpr AccessType k_rw = AccessType::rma_write;

Strided block(uint64_t lo, uint64_t size) { return {lo, size, 0, 1}; }

std::vector<AccessTree::Fragment> fragments(const AccessTree& tree) {
  std::vector<AccessTree::Fragment> out;
  tree.for_each([&](const AccessTree::Fragment& f) { out.push_back(f); });
  return out;
}

// The reference implementation's tree (PARCOACH before seed 000): one node
// per access in a BST keyed on the low bound, in insertion order, checking
// for races only against the nodes on the insertion path.
class ReferenceBst {
 public:
  // Insert [lo, hi) of `type`; return true when a race was seen on the path.
  bool insert(uint64_t lo, uint64_t hi, AccessType type) {
    bool race = false;
    int* link = &m_root;
    while (*link >= 0) {
      const Node& n = m_nodes[*link];
      if (lo < n.hi && n.lo < hi && smtrace::analyzer::conflicts(n.type, type)) race = true;
      link = lo < n.lo ? &m_nodes[*link].left : &m_nodes[*link].right;
    }
    *link = static_cast<int>(m_nodes.size());
    m_nodes.push_back({lo, hi, type});
    return race;
  }
  std::size_t nodes() const { return m_nodes.size(); }

 private:
  struct Node {
    uint64_t lo, hi;
    AccessType type;
    int left = -1, right = -1;
  };
  std::vector<Node> m_nodes;
  int m_root = -1;
};

}  // namespace

TEST_CASE("analyzer::AccessTree::combine and conflicts follow seed 000 Fig. 7") {
  // Row: old type, column: new type.
  const std::array<AccessType, 4> types = {k_lr, k_lw, k_rr, k_rw};
  const AccessType combined[4][4] = {
      {k_lr, k_lw, k_rr, k_rw}, {k_lw, k_lw, k_rw, k_rw}, {k_rr, k_rw, k_rr, k_rw}, {k_rw, k_rw, k_rw, k_rw}};
  const bool race[4][4] = {{false, false, false, true}, {false, false, true, true}, {false, true, false, true},
                           {true, true, true, true}};
  for (int o = 0; o < 4; ++o)
    for (int n = 0; n < 4; ++n) {
      CHECK(smtrace::analyzer::combine(types[o], types[n]) == combined[o][n]);
      CHECK(smtrace::analyzer::conflicts(types[o], types[n]) == race[o][n]);
    }
  CHECK(smtrace::analyzer::access_type_name(k_lr) == "Local_Read");
  CHECK(smtrace::analyzer::access_type_name(k_lw) == "Local_Write");
  CHECK(smtrace::analyzer::access_type_name(k_rr) == "RMA_Read");
  CHECK(smtrace::analyzer::access_type_name(k_rw) == "RMA_Write");
}

TEST_CASE("analyzer::AccessTree::seed 000 Fig. 4b merges the loop into two nodes") {
  // Win_lock_all; for (i = 0; i < 1000; i++) Get(buf[i], 1, X); Get(buf[0], 1, X):
  // per iteration the condition and the index load i, the Get writes buf[i]
  // (RMA_Write at the origin), i++ loads and stores i; then the last
  // condition and Get(buf[0]). 5,002 accesses.
  const uint64_t i_addr = 0x1000, buf = 0x2000;
  AccessTree tree;
  ReferenceBst reference;
  auto access = [&](uint64_t lo, AccessType type, uint32_t tag) {
    tree.insert(block(lo, 4), type, tag, nullptr);
    reference.insert(lo, lo + 4, type);
  };
  uint32_t tag = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    access(i_addr, k_lr, tag++);
    access(i_addr, k_lr, tag++);
    access(buf + 4 * i, k_rw, tag++);
    access(i_addr, k_lr, tag++);
    access(i_addr, k_lw, tag++);
  }
  access(i_addr, k_lr, tag++);
  access(buf, k_rw, tag++);
  CHECK(tree.inserts() == 5002);
  CHECK(reference.nodes() == 5002);
  CHECK(tree.nodes() == 2);
  const auto f = fragments(tree);
  REQUIRE(f.size() == 2);
  CHECK(f[0].where == block(i_addr, 4));
  CHECK(f[0].type == k_lw);
  CHECK(f[1].where == block(buf, 4000));
  CHECK(f[1].type == k_rw);
  CHECK(f[1].tag == tag - 1);  // the newest tag by default (Algorithm 3)
  tree.check_invariants();
}

TEST_CASE("analyzer::AccessTree::seed 000 Fig. 3a: the store conflicts with the Put") {
  // temp = buf[4]; Put(buf[2], 10, X) reads buf[2..12] at the origin; buf[7] = 1234.
  AccessTree tree;
  ReferenceBst reference;
  std::vector<TreeConflict> c;
  tree.insert(block(4, 1), k_lr, 1, &c);
  tree.insert(block(2, 11), k_rr, 2, &c);
  CHECK(c.empty());
  CHECK_FALSE(reference.insert(4, 5, k_lr));
  CHECK_FALSE(reference.insert(2, 13, k_rr));
  tree.insert(block(7, 1), k_lw, 3, &c);
  CHECK_FALSE(reference.insert(7, 8, k_lw));  // the reference's false negative
  REQUIRE(c.size() == 1);
  CHECK(c[0].old_tag == 2);
  CHECK(c[0].old_type == k_rr);
  CHECK(c[0].lo == 7);
  CHECK(c[0].hi == 8);
  CHECK(c[0].bytes == 1);
  // Fig. 3b: [2,4) RR, [4,5) RR (LR + RR), [5,7) RR, [7,8) RW, [8,13) RR
  // merge into [2,7) RR, [7,8) RW, [8,13) RR.
  const auto f = fragments(tree);
  REQUIRE(f.size() == 3);
  CHECK(f[0].where == block(2, 5));
  CHECK(f[1].where == block(7, 1));
  CHECK(f[1].type == k_rw);
  CHECK(f[2].where == block(8, 5));
  tree.check_invariants();
}

TEST_CASE("analyzer::AccessTree::seed 004 Figs. 4 and 5: strided puts") {
  const uint64_t max = 64, n = 1000, base = 0x10000;  // struct data { char buffer1[MAX]; char buffer2[MAX]; } A[n]
  SUBCASE("Fig. 4: the puts of A[i].buffer2 are one node") {
    AccessTree tree;
    for (uint64_t i = 0; i < n; ++i) tree.insert(block(base + 2 * max * i + max, max), k_rr, 7, nullptr);
    CHECK(tree.nodes() == 1);
    const auto f = fragments(tree);
    CHECK(f[0].where == Strided{base + max, max, 2 * max, n});
    tree.check_invariants();
  }
  SUBCASE("Fig. 5: buffer1's loop then buffer2's loop are two nodes") {
    for (auto policy : {AccessTree::MergePolicy::any_tag, AccessTree::MergePolicy::same_tag_only}) {
      AccessTree tree(policy);
      uint32_t tag = 0;
      for (uint64_t i = 0; i < n; ++i) tree.insert(block(base + 2 * max * i, max), k_rr, policy == AccessTree::MergePolicy::any_tag ? tag++ : 1, nullptr);
      for (uint64_t i = 0; i < n; ++i) tree.insert(block(base + 2 * max * i + max, max), k_rr, policy == AccessTree::MergePolicy::any_tag ? tag++ : 2, nullptr);
      CHECK(tree.nodes() == 2);
      const auto f = fragments(tree);
      REQUIRE(f.size() == 2);
      CHECK(f[0].where == Strided{base, max, 2 * max, n});
      CHECK(f[1].where == Strided{base + max, max, 2 * max, n});
      tree.check_invariants();
    }
  }
  SUBCASE("alternating buffer1 and buffer2 are two nodes too") {
    AccessTree tree;
    for (uint64_t i = 0; i < n; ++i) {
      tree.insert(block(base + 2 * max * i, max / 2), k_rr, 1, nullptr);
      tree.insert(block(base + 2 * max * i + max, max / 2), k_lw, 2, nullptr);
    }
    CHECK(tree.nodes() == 2);
    tree.check_invariants();
  }
}

TEST_CASE("analyzer::AccessTree::lanes and arrays swept together") {
  SUBCASE("three to five lanes of a struct, put in turn, are one node each") {
    const uint64_t offsets[5] = {0, 20, 55, 105, 170};
    for (int lanes = 3; lanes <= 5; ++lanes) {
      AccessTree tree;
      for (uint64_t i = 0; i < 1000; ++i)
        for (int l = 0; l < lanes; ++l) tree.insert(block(i * 256 + offsets[l], 8), k_rr, 1, nullptr);
      CHECK(tree.nodes() == static_cast<std::size_t>(lanes));
      tree.check_invariants();
    }
  }
  SUBCASE("arrays of one size read together: a stride across them is peeled back (open case h)") {
    for (uint64_t arrays : {3, 7, 16}) {
      AccessTree tree;
      for (uint64_t i = 0; i < 1000; ++i)
        for (uint64_t k = 0; k < arrays; ++k) tree.insert(block((k << 20) + 8 * i, 8), k_lr, 1, nullptr);
      CAPTURE(arrays);
      CHECK(tree.nodes() <= arrays + arrays / 2);
      tree.check_invariants();
      std::size_t runs = 0;
      tree.for_each([&](const AccessTree::Fragment& f) { runs += f.where.count == 1 && f.where.size >= 8 * 990; });
      CHECK(runs == arrays);  // one contiguous run per array, but for its first few elements
    }
  }
}

TEST_CASE("analyzer::AccessTree::seed 004 Fig. 7: strided over strided cuts block by block") {
  // Stored: 8 bytes every 16, RMA_Write. Access: 8 bytes every 16 from 4, Local_Read.
  AccessTree tree;
  tree.insert({0, 8, 16, 100}, k_rw, 1, nullptr);
  std::vector<TreeConflict> c;
  tree.insert({4, 8, 16, 100}, k_lr, 2, &c);
  REQUIRE(c.size() == 1);
  CHECK(c[0].lo == 4);
  CHECK(c[0].hi == 8);
  CHECK(c[0].bytes == 400);
  // [0,8) keeps RW (the intersection is RW: the stored tag), [8,12) is LR.
  const auto f = fragments(tree);
  REQUIRE(f.size() == 2);
  CHECK(f[0].where == Strided{0, 8, 16, 100});
  CHECK(f[0].tag == 1);
  CHECK(f[1].where == Strided{8, 4, 16, 100});
  CHECK(f[1].type == k_lr);
  // RMA_Read over [8,10) of each period: LR + RR -> RR, no race; three kinds.
  c.clear();
  tree.insert({8, 2, 16, 100}, k_rr, 3, &c);
  CHECK(c.empty());
  CHECK(tree.nodes() == 3);
  tree.check_invariants();
}

TEST_CASE("analyzer::AccessTree::interlaced hulls: every intersecting fragment is found") {
  // A long strided fragment whose hull covers short ones in its gaps: a
  // walk that stops at the first non-overlapping neighbour misses them.
  AccessTree tree;
  tree.insert({0, 4, 64, 1000}, k_rr, 1, nullptr);
  for (uint64_t i = 0; i < 1000; i += 7) tree.insert(block(64 * i + 10, 4), k_lr, 2, nullptr);
  tree.insert(block(64 * 500 + 20, 2), k_lw, 3, nullptr);
  tree.check_invariants();
  std::vector<TreeConflict> c;
  tree.insert(block(64 * 490, 64 * 20), k_rw, 4, &c);  // covers 20 blocks of the first, 3 of the second kind, 1 LW
  uint64_t bytes = 0;
  for (const auto& x : c) bytes += x.bytes;
  CHECK(c.size() == 3);  // one entry per fragment
  CHECK(bytes == 20 * 4 + 3 * 4 + 2);
  tree.check_invariants();
  int seen = 0;
  tree.query(block(64 * 140 + 8, 8), [&](const AccessTree::Fragment& f) {
    ++seen;
    CHECK(f.where.lo == 10);  // the Local_Read blocks every 7 * 64 bytes, before the cut
    CHECK(f.type == k_lr);
  });
  CHECK(seen == 1);
}

TEST_CASE("analyzer::AccessTree::large sizes and counts") {
  const uint64_t big = uint64_t{1} << 63;
  SUBCASE("a block of 2^63 bytes and one near the top of the address space") {
    AccessTree tree;
    tree.insert(block(16, big), k_rr, 1, nullptr);
    tree.insert(block(UINT64_MAX - 100, 1000), k_rr, 2, nullptr);  // cut at 2^64 - 1
    const auto f = fragments(tree);
    REQUIRE(f.size() == 2);
    CHECK(f[1].where == block(UINT64_MAX - 100, 100));
    std::vector<TreeConflict> c;
    tree.insert(block(big, 64), k_lw, 3, &c);
    REQUIRE(c.size() == 1);
    CHECK(c[0].bytes == 16);  // [2^63, 2^63 + 16)
    tree.check_invariants();
  }
  SUBCASE("2^32 blocks are one fragment; more are split, conflicts reported once") {
    AccessTree tree;
    const uint64_t n = uint64_t{1} << 32;
    tree.insert({0, 1, 4, n}, k_rr, 1, nullptr);
    CHECK(tree.nodes() == 1);
    std::vector<TreeConflict> c;
    tree.insert({2, 1, 4, n + 5}, k_rr, 2, &c);
    CHECK(c.empty());
    CHECK(tree.nodes() == 3);  // 2^32 blocks + 5 blocks, next to the first
    tree.insert({1, 2, 4, 2 * n + 10}, k_lw, 3, &c);
    REQUIRE(c.size() == 2);  // the offset-2 blocks: 2^32 of them, then 5
    CHECK(c[0].bytes == n);
    CHECK(c[1].bytes == 5);
    tree.check_invariants();
  }
  SUBCASE("a huge strided access meeting a few blocks cuts only those") {
    AccessTree tree;
    tree.insert({0, 8, 1u << 20, 1u << 30}, k_rw, 1, nullptr);
    std::vector<TreeConflict> c;
    tree.insert(block((uint64_t{1} << 40) + 4, 1u << 21), k_lr, 2, &c);
    CHECK(c.size() == 1);
    CHECK(c[0].bytes == 4 + 8 + 4);
    CHECK(tree.nodes() == 3);  // the RW fragment joined back whole, two LR gaps
    tree.check_invariants();
  }
}

TEST_CASE("analyzer::AccessTree::accounting") {
  AccessTree tree;
  CHECK(tree.bytes_per_node() <= 48);
  for (uint64_t i = 0; i < 100; ++i) tree.insert(block(i * 200, i + 1), k_rw, 0, nullptr);  // no two sizes alike
  CHECK(tree.nodes() == 100);
  CHECK(tree.peak_nodes() == 100);
  CHECK(tree.memory_bytes() >= 100 * tree.bytes_per_node());
  tree.insert(block(0, 99 * 200 + 100), k_rw, 1, nullptr);
  CHECK(tree.nodes() == 1);
  CHECK(tree.peak_nodes() == 100);
  tree.check_invariants();
  tree.clear();
  CHECK(tree.nodes() == 0);
  CHECK(tree.peak_nodes() == 0);
  CHECK(tree.inserts() == 0);
  tree.check_invariants();
  tree.insert({0, 0, 0, 1}, k_rw, 1, nullptr);  // empty: nothing
  CHECK(tree.nodes() == 0);
}

TEST_CASE("analyzer::AccessTree::PARCOACH miss 1: an overlap behind a neighbour that does not overlap") {
  // A walk over intervals sorted by their first byte that stops at the first
  // neighbour not overlapping the access misses what lies beyond it. Stored:
  // [120, 130) inside the access's hull but in its gap, then [205, 208)
  // inside its second block; access: 10 bytes at 100 and at 200.
  for (int order = 0; order < 2; ++order) {
    AccessTree tree;
    if (order == 0) {
      tree.insert(block(120, 10), k_rw, 1, nullptr);
      tree.insert(block(205, 3), k_rw, 2, nullptr);
    } else {
      tree.insert(block(205, 3), k_rw, 2, nullptr);
      tree.insert(block(120, 10), k_rw, 1, nullptr);
    }
    int seen = 0;
    tree.query({100, 10, 100, 2}, [&](const AccessTree::Fragment& f) {
      ++seen;
      CHECK(f.tag == 2);
    });
    CHECK(seen == 1);
    std::vector<TreeConflict> c;
    tree.insert({100, 10, 100, 2}, k_lr, 3, &c);
    REQUIRE(c.size() == 1);
    CHECK(c[0].old_tag == 2);
    CHECK(c[0].lo == 205);
    CHECK(c[0].hi == 208);
    CHECK(c[0].bytes == 3);
    tree.check_invariants();
  }
  // The same behind a strided fragment whose blocks the access falls
  // between, on the left: the nearest fragment before the access ends
  // before it, one further left reaches over it.
  AccessTree tree;
  tree.insert({0, 2, 50, 10}, k_rr, 1, nullptr);  // blocks at 0, 50, ..., 450
  tree.insert(block(300, 4), k_lr, 2, nullptr);   // a neighbour between the access and the stride's start
  std::vector<TreeConflict> c;
  tree.insert(block(350, 60), k_lw, 3, &c);       // meets the blocks at 350 and 400
  REQUIRE(c.size() == 1);
  CHECK(c[0].old_tag == 1);
  CHECK(c[0].lo == 350);
  CHECK(c[0].bytes == 4);
  tree.check_invariants();
}

TEST_CASE("analyzer::AccessTree::PARCOACH miss 2: a fragment that starts lower and reaches far") {
  // An AVL tree keyed on the first byte only descends towards the access
  // and misses a fragment that starts far lower and spans many later ones:
  // one strided RMA_Write of 1000 blocks, then 999 Local_Read blocks in its
  // gaps (sizes that never make a stride), then a Local_Write that meets
  // only the strided fragment's last block.
  AccessTree tree;
  tree.insert({0, 4, 1024, 1000}, k_rw, 1, nullptr);
  for (uint64_t i = 0; i + 1 < 1000; ++i) tree.insert(block(1024 * i + 100, 1 + (i * i) % 97), k_lr, 2, nullptr);
  CHECK(tree.nodes() > 100);
  tree.check_invariants();
  const Strided last = block(1024 * 999 + 2, 8);
  int seen = 0;
  tree.query(last, [&](const AccessTree::Fragment& f) {
    ++seen;
    CHECK(f.where.lo == 0);
    CHECK(f.tag == 1);
  });
  CHECK(seen == 1);
  std::vector<TreeConflict> c;
  tree.insert(last, k_lw, 3, &c);
  REQUIRE(c.size() == 1);
  CHECK(c[0].old_tag == 1);
  CHECK(c[0].old_type == k_rw);
  CHECK(c[0].lo == 1024 * 999 + 2);
  CHECK(c[0].hi == 1024 * 999 + 4);
  CHECK(c[0].bytes == 2);
  tree.check_invariants();
  // And a contiguous one: [0, 1 MiB) read by RMA, then later accesses
  // fragment it from the left; a store at its far end still meets it.
  AccessTree flat;
  flat.insert(block(0, 1 << 20), k_rr, 1, nullptr);
  for (uint64_t i = 0; i < 500; ++i) flat.insert(block(64 * i, 8), i % 2 == 0 ? k_lr : k_rw, 2, nullptr);
  c.clear();
  flat.insert(block((1 << 20) - 4, 4), k_lw, 3, &c);
  REQUIRE(c.size() == 1);
  CHECK(c[0].old_tag == 1);
  CHECK(c[0].bytes == 4);
  flat.check_invariants();
}

TEST_CASE("analyzer::AccessTree::oracle on random streams") {
  namespace oracle = smtrace::test::access_oracle;
  uint64_t streams = 12000;
  if (const char* env = std::getenv("SMTRACE_FUZZ_STREAMS")) streams = std::strtoull(env, nullptr, 10);
  uint64_t accesses = 0, conflicts = 0;
  for (uint64_t n = 0; n < streams; ++n) {
    oracle::Shape shape = oracle::shape_of(n);
    if (n % 16 != 0) shape.length = std::min<uint64_t>(shape.length, 48);  // most streams short: a few seconds
    const oracle::Result r = oracle::run_stream(shape.mode, n, shape.arena, shape.length);
    accesses += r.accesses;
    conflicts += r.conflicts;
    if (!r.failure.empty()) FAIL(r.failure);
  }
  MESSAGE("oracle: " << streams << " streams, " << accesses << " accesses, " << conflicts << " conflicts");
  CHECK(conflicts > 0);
}
