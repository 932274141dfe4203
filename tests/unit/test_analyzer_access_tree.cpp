// AccessTree against seed 000 Fig. 7 (types), the seed papers' examples as
// node counts, and a byte-array oracle over random streams of accesses.
// SMTRACE_FUZZ_ACCESSES=N runs the oracle over about N accesses instead of
// the default 400,000 (a few seconds; the seeds stay fixed, so a run is
// reproducible).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/access_tree.hpp"

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

// Tag sets interned as ids, for a set-union TagMerge.
struct TagSets {
  std::vector<std::vector<uint32_t>> sets;
  std::map<std::vector<uint32_t>, uint32_t> ids;
  uint32_t intern(std::vector<uint32_t> s) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    auto [it, fresh] = ids.emplace(s, static_cast<uint32_t>(sets.size()));
    if (fresh) sets.push_back(s);
    return it->second;
  }
  uint32_t unite(uint32_t a, uint32_t b) {
    std::vector<uint32_t> s = sets[a];
    s.insert(s.end(), sets[b].begin(), sets[b].end());
    return intern(std::move(s));
  }
  bool contains(uint32_t big, uint32_t small) const {
    return std::includes(sets[big].begin(), sets[big].end(), sets[small].begin(), sets[small].end());
  }
};

uint32_t unite_tags(void* context, uint32_t old_tag, uint32_t new_tag) {
  return static_cast<TagSets*>(context)->unite(old_tag, new_tag);
}

// splitmix64: the same numbers on every platform.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }  // [lo, hi]
};

constexpr uint64_t k_arena = 4096;

// What the oracle runs: the policy and how tags are checked.
enum class Mode {
  exact_newest,  // same_tag_only, default TagMerge, few tags: each byte's tag exactly
  exact_union,   // same_tag_only, set-union TagMerge, few tags: each byte's tag set exactly
  union_any,     // any_tag, set-union TagMerge, a tag per access: the tree's set holds the oracle's
  types_only,    // any_tag, default TagMerge: types only
};

struct Access {
  Strided where;
  AccessType type;
  uint32_t tag;
};

// Random accesses inside the arena, in runs shaped like loops over buffers.
class Stream {
 public:
  explicit Stream(uint64_t seed) : m_rng{seed} {}
  Access next(uint32_t small_tags) {
    if (m_queue.empty()) refill(small_tags);
    Access a = m_queue.back();
    m_queue.pop_back();
    return a;
  }

 private:
  AccessType random_type() { return static_cast<AccessType>(m_rng.below(4)); }
  void push(std::vector<Access>& run, Strided w, AccessType t, uint32_t tag, bool mixed) {
    run.push_back({w, mixed ? random_type() : t, tag});
  }
  void refill(uint32_t small_tags) {
    std::vector<Access> run;
    const AccessType t = random_type();
    const bool mixed = m_rng.below(4) == 0;  // a type per access instead of per run
    const uint32_t tag = small_tags != 0 ? static_cast<uint32_t>(m_rng.below(small_tags)) : 0;
    switch (m_rng.below(8)) {
      case 0: {  // single
        const uint64_t size = m_rng.range(1, 64);
        push(run, block(m_rng.below(k_arena - size), size), t, tag, mixed);
        break;
      }
      case 1: {  // adjacent sweep
        const uint64_t size = m_rng.range(1, 16), n = m_rng.range(2, 30);
        uint64_t lo = m_rng.below(k_arena - size * n);
        for (uint64_t i = 0; i < n; ++i, lo += size) push(run, block(lo, size), t, tag, mixed);
        break;
      }
      case 2: {  // one strided access (distance == size included)
        const uint64_t size = m_rng.range(1, 32), distance = size + m_rng.below(3 * size + 1);
        const uint64_t count = m_rng.range(1, std::min<uint64_t>(40, (k_arena - size) / distance + 1));
        const uint64_t span = (count - 1) * distance + size;
        push(run, {m_rng.below(k_arena - span + 1), size, distance, count}, t, tag, mixed);
        break;
      }
      case 3: {  // equidistant singles, ascending or descending
        const uint64_t size = m_rng.range(1, 16), distance = size + m_rng.range(1, 3 * size);
        const uint64_t n = m_rng.range(2, std::min<uint64_t>(30, (k_arena - size) / distance + 1));
        const uint64_t lo = m_rng.below(k_arena - ((n - 1) * distance + size) + 1);
        const bool down = m_rng.below(2) == 0;
        for (uint64_t i = 0; i < n; ++i) push(run, block(lo + (down ? n - 1 - i : i) * distance, size), t, tag, mixed);
        break;
      }
      case 4: {  // interlaced: buffer1 then buffer2 (seed 004 Fig. 5), or alternating
        const uint64_t s1 = m_rng.range(1, 12), s2 = m_rng.range(1, 12);
        const uint64_t off2 = s1 + m_rng.below(4), distance = off2 + s2 + m_rng.below(4);
        const uint64_t n = m_rng.range(2, std::min<uint64_t>(30, k_arena / distance - 1));
        const uint64_t lo = m_rng.below(k_arena - n * distance);
        const AccessType t2 = m_rng.below(2) == 0 ? t : random_type();
        const uint32_t tag2 = small_tags != 0 ? static_cast<uint32_t>(m_rng.below(small_tags)) : 0;
        std::vector<Access> a, b;
        for (uint64_t i = 0; i < n; ++i) {
          push(a, block(lo + i * distance, s1), t, tag, mixed);
          push(b, block(lo + i * distance + off2, s2), t2, tag2, mixed);
        }
        if (m_rng.below(2) == 0) {
          run = a;
          run.insert(run.end(), b.begin(), b.end());
        } else {
          for (uint64_t i = 0; i < n; ++i) {
            run.push_back(a[i]);
            run.push_back(b[i]);
          }
        }
        break;
      }
      case 5: {  // nested: a long access, then short ones inside it
        const uint64_t size = m_rng.range(64, 1024), lo = m_rng.below(k_arena - size);
        push(run, block(lo, size), t, tag, mixed);
        for (uint64_t i = m_rng.range(1, 12); i > 0; --i) {
          const uint64_t s = m_rng.range(1, 8);
          push(run, block(lo + m_rng.below(size - s), s), random_type(), tag, false);
        }
        break;
      }
      case 6: {  // two strided accesses with one distance (seed 004 Fig. 7)
        const uint64_t distance = m_rng.range(4, 40), count = m_rng.range(2, 40);
        const uint64_t lo = m_rng.below(k_arena - (count + 2) * distance);
        push(run, {lo, m_rng.range(1, distance - 1), distance, count}, t, tag, mixed);
        push(run, {lo + m_rng.below(2 * distance), m_rng.range(1, distance - 1), distance, m_rng.range(1, count)},
             random_type(), tag, false);
        break;
      }
      default: {  // strided accesses with unrelated distances over a region
        const uint64_t base = m_rng.below(k_arena / 2);
        for (uint64_t i = m_rng.range(2, 4); i > 0; --i) {
          const uint64_t size = m_rng.range(1, 24), distance = size + m_rng.range(0, 40);
          const uint64_t count = m_rng.range(1, 20);
          push(run, {base + m_rng.below(256), size, distance, count}, random_type(), tag, false);
        }
        break;
      }
    }
    if (small_tags == 0)
      for (Access& a : run) a.tag = m_access++;
    std::reverse(run.begin(), run.end());
    m_queue = std::move(run);
  }

  Rng m_rng;
  std::vector<Access> m_queue;
  uint32_t m_access = 0;
};

// Call `f(byte)` for each byte of `w`.
template <class F>
void for_bytes(const Strided& w, F&& f) {
  for (uint64_t k = 0; k < w.count; ++k) {
    const uint64_t lo = w.lo + (w.count > 1 ? k * w.distance : 0);
    for (uint64_t b = lo; b < lo + w.size; ++b) f(b);
  }
}

// Run `streams` streams of `per_stream` accesses in `mode`; return how many
// accesses ran. Checks with plain comparisons and one FAIL per mismatch (a
// doctest assertion per byte would be most of the time).
uint64_t run_oracle(Mode mode, uint64_t first_seed, uint64_t streams, uint64_t per_stream) {
  uint64_t accesses = 0;
  std::vector<uint64_t> in_access(k_arena);  // the access's number where it covers the byte
  std::vector<char> conflicting(k_arena, 0);
  std::vector<int> tree_type(k_arena);
  std::vector<uint32_t> tree_tag(k_arena);
  for (uint64_t s = 0; s < streams; ++s) {
    const uint64_t seed = first_seed + s;
    TagSets sets;
    const bool unions = mode == Mode::exact_union || mode == Mode::union_any;
    const bool exact = mode == Mode::exact_newest || mode == Mode::exact_union;
    AccessTree tree(exact ? AccessTree::MergePolicy::same_tag_only : AccessTree::MergePolicy::any_tag,
                    unions ? &unite_tags : nullptr, unions ? &sets : nullptr);
    Stream stream(seed * 7919 + static_cast<uint64_t>(mode));
    std::vector<int> type(k_arena, -1);
    std::vector<uint32_t> tag(k_arena, 0);
    std::fill(in_access.begin(), in_access.end(), 0);
    for (uint64_t i = 1; i <= per_stream; ++i, ++accesses) {
      Access a = stream.next(exact ? 4 : 0);
      if (unions) a.tag = sets.intern({a.tag});
      INFO("mode " << static_cast<int>(mode) << " seed " << seed << " access " << i << ": lo " << a.where.lo
                   << " size " << a.where.size << " distance " << a.where.distance << " count " << a.where.count
                   << " type " << smtrace::analyzer::access_type_name(a.type) << " tag " << a.tag);
      for_bytes(a.where, [&](uint64_t b) { in_access[b] = i; });
      // The expected conflicts: each stored fragment meeting the access with
      // a conflicting type, from the tree's own fragments and brute force.
      std::vector<TreeConflict> expected;
      std::vector<AccessTree::Fragment> expected_hits;
      const uint64_t a_end = smtrace::analyzer::hull_end(a.where);
      uint64_t region_lo = a.where.lo, region_hi = a_end;  // where bytes may change
      for (const auto& f : fragments(tree)) {
        const uint64_t f_end = smtrace::analyzer::hull_end(f.where);
        if (f.where.lo >= a_end || f_end <= a.where.lo) continue;
        TreeConflict c{f.tag, f.type, 0, 0, 0};
        const bool race = smtrace::analyzer::conflicts(f.type, a.type);
        for_bytes(f.where, [&](uint64_t b) {
          if (in_access[b] != i) return;
          if (c.bytes == 0) c.lo = b;
          if (c.bytes == 0 || c.hi == b) c.hi = b + 1;
          ++c.bytes;
          if (race) conflicting[b] = 1;
        });
        if (c.bytes == 0) continue;
        region_lo = std::min(region_lo, f.where.lo);
        region_hi = std::max(region_hi, f_end);
        expected_hits.push_back(f);
        if (race) expected.push_back(c);
      }
      std::vector<AccessTree::Fragment> hits;
      tree.query(a.where, [&](const AccessTree::Fragment& f) { hits.push_back(f); });
      bool same_hits = hits.size() == expected_hits.size();
      for (std::size_t k = 0; same_hits && k < hits.size(); ++k) same_hits = hits[k].where == expected_hits[k].where;
      if (!same_hits) FAIL("query() differs from brute force: " << hits.size() << " vs " << expected_hits.size());
      // The oracle's conflicting bytes are exactly those of the fragments.
      for_bytes(a.where, [&](uint64_t b) {
        const bool race =
            type[b] >= 0 && smtrace::analyzer::conflicts(static_cast<AccessType>(type[b]), a.type);
        if (race != (conflicting[b] != 0)) FAIL("byte " << b << ": oracle race " << race);
        conflicting[b] = 0;
      });
      std::vector<TreeConflict> got;
      tree.insert(a.where, a.type, a.tag, &got);
      REQUIRE(got.size() == expected.size());
      for (std::size_t k = 0; k < got.size(); ++k) {
        INFO("conflict " << k);
        REQUIRE(got[k].old_tag == expected[k].old_tag);
        REQUIRE(got[k].old_type == expected[k].old_type);
        REQUIRE(got[k].lo == expected[k].lo);
        REQUIRE(got[k].hi == expected[k].hi);
        REQUIRE(got[k].bytes == expected[k].bytes);
      }
      // The oracle: rule 1 per byte.
      for_bytes(a.where, [&](uint64_t b) {
        if (type[b] < 0) {
          type[b] = static_cast<int>(a.type);
          tag[b] = a.tag;
          return;
        }
        const AccessType old_type = static_cast<AccessType>(type[b]);
        const AccessType c = smtrace::analyzer::combine(old_type, a.type);
        if (c == a.type && c != old_type)
          tag[b] = a.tag;  // the new access's type prevails
        else if (c == old_type && c != a.type)
          ;  // the old type prevails: its tag stays
        else if (tag[b] != a.tag)
          tag[b] = unions ? sets.unite(tag[b], a.tag) : a.tag;  // both or neither: TagMerge
        type[b] = static_cast<int>(c);
      });
      // The tree holds the oracle's bytes: around the access after each
      // insert (bytes elsewhere keep their types; their tags only grow by
      // merging), the whole arena every 32 accesses.
      if (i % 32 == 0 || i == per_stream) {
        region_lo = 0;
        region_hi = k_arena;
      }
      std::fill(tree_type.begin() + region_lo, tree_type.begin() + region_hi, -1);
      tree.query(block(region_lo, region_hi - region_lo), [&](const AccessTree::Fragment& f) {
        for_bytes(f.where, [&](uint64_t b) {
          if (b >= k_arena) FAIL("fragment byte " << b << " outside the arena");
          if (b < region_lo || b >= region_hi) return;
          tree_type[b] = static_cast<int>(f.type);
          tree_tag[b] = f.tag;
        });
      });
      for (uint64_t b = region_lo; b < region_hi; ++b) {
        if (tree_type[b] != type[b]) FAIL("byte " << b << ": tree type " << tree_type[b] << ", oracle " << type[b]);
        if (type[b] < 0) continue;
        if (exact && tree_tag[b] != tag[b]) FAIL("byte " << b << ": tree tag " << tree_tag[b] << ", oracle " << tag[b]);
        if (mode == Mode::union_any && !sets.contains(tree_tag[b], tag[b]))
          FAIL("byte " << b << ": tree tag set " << tree_tag[b] << " lacks oracle's " << tag[b]);
      }
      tree.check_invariants();
    }
  }
  return accesses;
}

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

TEST_CASE("analyzer::AccessTree::oracle on random streams") {
  uint64_t total = 400000;
  if (const char* env = std::getenv("SMTRACE_FUZZ_ACCESSES")) total = std::strtoull(env, nullptr, 10);
  const uint64_t per_stream = 300, streams = std::max<uint64_t>(1, total / per_stream / 4);
  uint64_t ran = 0;
  for (Mode mode : {Mode::exact_newest, Mode::exact_union, Mode::union_any, Mode::types_only})
    ran += run_oracle(mode, 1, streams, per_stream);
  MESSAGE("oracle: " << ran << " accesses");
}
