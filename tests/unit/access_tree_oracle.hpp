// A brute-force oracle for analyzer::AccessTree: the access history of every
// byte of a small arena (its combined type and the tag that gave it), run on
// random streams of accesses shaped like loops over buffers (single blocks,
// adjacent sweeps, strided accesses, equidistant singles up or down,
// interlaced lanes, long accesses with short ones inside, strided over
// strided, strided fragments with blocks in their gaps, arrays swept
// together). After every insert
// it compares what the tree reported and holds with the oracle:
//  - query(): exactly the stored fragments whose bytes meet the access;
//  - the conflicts: one per stored fragment that meets the access with a
//    conflicting type, with that fragment's tag, type, first common run and
//    common bytes; together they cover exactly the bytes whose history
//    conflicts with the access, and each names the byte history's type and
//    tag (exactly, or as a subset of a tag set when tags merge by union);
//  - the fragments: each byte's type and tag after the insert, and the
//    tree's invariants.
// No test framework inside: the unit test runs it on tens of thousands of
// streams, bench/bench_access_tree.cpp --fuzz on millions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/access_tree.hpp"

namespace smtrace::test::access_oracle {

namespace an = smtrace::analyzer;
using an::AccessTree;
using an::AccessType;
using an::Strided;
using an::TreeConflict;

// Tag sets interned as ids, for a set-union TagMerge.
struct TagSets {
  std::vector<std::vector<uint32_t>> sets;
  std::map<std::vector<uint32_t>, uint32_t> ids;
  // Return the id of the set `s`.
  uint32_t intern(std::vector<uint32_t> s) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    auto [it, fresh] = ids.emplace(s, static_cast<uint32_t>(sets.size()));
    if (fresh) sets.push_back(s);
    return it->second;
  }
  // Return the id of the union of sets `a` and `b`.
  uint32_t unite(uint32_t a, uint32_t b) {
    std::vector<uint32_t> s = sets[a];
    s.insert(s.end(), sets[b].begin(), sets[b].end());
    return intern(std::move(s));
  }
  // Return true when set `big` holds set `small`.
  bool contains(uint32_t big, uint32_t small) const {
    return std::includes(sets[big].begin(), sets[big].end(), sets[small].begin(), sets[small].end());
  }
};

inline uint32_t unite_tags(void* context, uint32_t old_tag, uint32_t new_tag) {
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
  uint64_t range(uint64_t lo, uint64_t hi) { return hi <= lo ? lo : lo + below(hi - lo + 1); }  // [lo, hi]
};

// What the oracle runs: the tree's policy and how tags are checked.
enum class Mode {
  exact_newest,  // same_tag_only, default TagMerge, few tags: each byte's tag exactly
  exact_union,   // same_tag_only, set-union TagMerge, few tags: each byte's tag set exactly
  union_any,     // any_tag, set-union TagMerge, a tag per access: the tree's set holds the oracle's
  types_only,    // any_tag, default TagMerge: types only
};
constexpr Mode k_modes[] = {Mode::exact_newest, Mode::exact_union, Mode::union_any, Mode::types_only};

struct Access {
  Strided where;
  AccessType type;
  uint32_t tag;
};

inline Strided block(uint64_t lo, uint64_t size) { return {lo, size, 0, 1}; }

// Random accesses inside [0, arena) (arena >= 64), in runs shaped like loops.
class Stream {
 public:
  Stream(uint64_t seed, uint64_t arena) : m_rng{seed}, m_arena(arena) {}
  // Return the next access; with `small_tags` != 0, tags are drawn per run
  // from [0, small_tags), else each access has its own.
  Access next(uint32_t small_tags) {
    if (m_queue.empty()) refill(small_tags);
    Access a = m_queue.back();
    m_queue.pop_back();
    return a;
  }

 private:
  AccessType random_type() { return static_cast<AccessType>(m_rng.below(4)); }
  // A size in [1, hi], hi clamped to a sixteenth of the arena.
  uint64_t size(uint64_t hi) { return m_rng.range(1, std::max<uint64_t>(1, std::min(hi, m_arena / 16))); }
  // How many blocks `distance` apart of `size` bytes fit, at most `most`.
  uint64_t fit(uint64_t size_, uint64_t distance, uint64_t most) const {
    return std::max<uint64_t>(1, std::min(most, (m_arena - size_) / distance + 1));
  }
  // A first byte for a span of `span` bytes.
  uint64_t start(uint64_t span) { return span >= m_arena ? 0 : m_rng.below(m_arena - span + 1); }
  void refill(uint32_t small_tags) {
    std::vector<Access> run;
    const AccessType t = random_type();
    const bool mixed = m_rng.below(4) == 0;  // a type per access instead of per run
    const uint32_t tag = small_tags != 0 ? static_cast<uint32_t>(m_rng.below(small_tags)) : 0;
    auto push = [&](std::vector<Access>& into, Strided w, AccessType type) {
      into.push_back({w, mixed ? random_type() : type, tag});
    };
    switch (m_rng.below(11)) {
      case 0: {  // single
        const uint64_t s = size(64);
        push(run, block(start(s), s), t);
        break;
      }
      case 1: {  // adjacent sweep
        const uint64_t s = size(16), n = m_rng.range(2, fit(s, s, 30));
        uint64_t lo = start(s * n);
        for (uint64_t i = 0; i < n; ++i, lo += s) push(run, block(lo, s), t);
        break;
      }
      case 2: {  // one strided access (distance == size included)
        const uint64_t s = size(32), distance = s + m_rng.below(3 * s + 1);
        const uint64_t count = m_rng.range(1, fit(s, distance, 40));
        push(run, {start((count - 1) * distance + s), s, distance, count}, t);
        break;
      }
      case 3: {  // equidistant singles, ascending or descending
        const uint64_t s = size(16), distance = s + m_rng.range(1, 3 * s);
        const uint64_t n = m_rng.range(1, fit(s, distance, 30));
        const uint64_t lo = start((n - 1) * distance + s);
        const bool down = m_rng.below(2) == 0;
        for (uint64_t i = 0; i < n; ++i) push(run, block(lo + (down ? n - 1 - i : i) * distance, s), t);
        break;
      }
      case 4: {  // interlaced: buffer1 then buffer2 (seed 004 Fig. 5), or alternating
        const uint64_t s1 = size(12), s2 = size(12);
        const uint64_t off2 = s1 + m_rng.below(4), distance = off2 + s2 + m_rng.below(4);
        const uint64_t n = m_rng.range(1, fit(distance, distance, 30));
        const uint64_t lo = start(n * distance);
        const AccessType t2 = m_rng.below(2) == 0 ? t : random_type();
        const uint32_t tag2 = small_tags != 0 ? static_cast<uint32_t>(m_rng.below(small_tags)) : 0;
        std::vector<Access> a, b;
        for (uint64_t i = 0; i < n; ++i) {
          push(a, block(lo + i * distance, s1), t);
          push(b, block(lo + i * distance + off2, s2), t2);
          b.back().tag = tag2;
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
        const uint64_t s = m_rng.range(std::min<uint64_t>(64, m_arena / 4), m_arena / 4), lo = start(s);
        push(run, block(lo, s), t);
        for (uint64_t i = m_rng.range(1, 12); i > 0; --i) {
          const uint64_t short_size = m_rng.range(1, 8);
          run.push_back({block(lo + m_rng.below(s - short_size + 1), short_size), random_type(), tag});
        }
        break;
      }
      case 6: {  // two strided accesses with one distance (seed 004 Fig. 7)
        const uint64_t distance = m_rng.range(4, std::max<uint64_t>(4, std::min<uint64_t>(40, m_arena / 8)));
        const uint64_t count = m_rng.range(2, fit(distance, distance, 40));
        const uint64_t lo = start((count + 1) * distance);
        push(run, {lo, m_rng.range(1, distance - 1), distance, count}, t);
        const uint64_t lo2 = std::min(lo + m_rng.below(2 * distance), m_arena - distance);
        const uint64_t count2 = std::min(m_rng.range(1, count), (m_arena - lo2) / distance);
        run.push_back({{lo2, m_rng.range(1, distance - 1), distance, std::max<uint64_t>(1, count2)}, random_type(), tag});
        break;
      }
      case 7: {  // a long strided fragment, blocks in its gaps, then an access near its end
        const uint64_t s = size(4), distance = s + m_rng.range(2, std::min<uint64_t>(32, m_arena / 4));
        const uint64_t count = m_rng.range(3, fit(s, distance, 60));
        const uint64_t lo = start((count - 1) * distance + s);
        push(run, {lo, s, distance, count}, t);
        for (uint64_t i = 0; i < count - 1; ++i) {
          if (m_rng.below(3) != 0) continue;
          const uint64_t gap = distance - s, in = m_rng.range(1, gap);
          run.push_back({block(lo + i * distance + s + m_rng.below(gap - in + 1), in), random_type(), tag});
        }
        const uint64_t k = count - 1 - m_rng.below(std::min<uint64_t>(count, 3));
        const uint64_t last_lo = lo + k * distance + m_rng.below(s);
        run.push_back({block(last_lo, std::min(m_rng.range(1, 2 * distance), m_arena - last_lo)), random_type(), tag});
        break;
      }
      case 8: {  // arrays of one size one after the other, swept together: a[i], b[i], c[i], ...
        const uint64_t arrays = m_rng.range(2, 6), s = size(8);
        const uint64_t length = m_rng.range(s, std::max(s, m_arena / arrays / 2)) / s * s;
        const uint64_t lo = start(arrays * length), n = length / s;
        const uint64_t step = m_rng.below(4) == 0 ? 2 : 1;  // every other element, sometimes
        for (uint64_t i = 0; i < n; i += step)
          for (uint64_t k = 0; k < arrays; ++k) push(run, block(lo + k * length + i * s, s), t);
        break;
      }
      default: {  // strided accesses with unrelated distances over a region
        const uint64_t base = m_rng.below(m_arena / 2), region = std::min<uint64_t>(256, m_arena / 4);
        for (uint64_t i = m_rng.range(2, 4); i > 0; --i) {
          const uint64_t s = size(24), distance = s + m_rng.range(0, 40);
          const uint64_t lo = base + m_rng.below(region);
          const uint64_t count = m_rng.range(1, std::max<uint64_t>(1, std::min<uint64_t>(20, (m_arena - lo - s) / distance + 1)));
          run.push_back({{lo, s, distance, count}, random_type(), tag});
        }
        break;
      }
    }
    for (Access& a : run) {
      const uint64_t end = an::hull_end(a.where);
      if (end > m_arena) throw std::logic_error("access_oracle: an access leaves the arena");
      if (small_tags == 0) a.tag = m_access++;
    }
    std::reverse(run.begin(), run.end());
    m_queue = std::move(run);
  }

  Rng m_rng;
  uint64_t m_arena;
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

inline std::string describe(const Strided& w) {
  std::ostringstream s;
  s << "{lo " << w.lo << ", size " << w.size << ", distance " << w.distance << ", count " << w.count << "}";
  return s.str();
}

struct Result {
  uint64_t accesses = 0;   // inserts checked
  uint64_t conflicts = 0;  // conflicts reported and checked
  uint64_t max_nodes = 0;  // the most fragments seen in one tree
  std::string failure;     // empty: every check passed
};

// Run one stream of `length` accesses in `mode` over an arena of `arena`
// bytes from `seed`; stop at the first mismatch, described in `failure`.
inline Result run_stream(Mode mode, uint64_t seed, uint64_t arena, uint64_t length) {
  Result r;
  TagSets sets;
  const bool unions = mode == Mode::exact_union || mode == Mode::union_any;
  const bool exact = mode == Mode::exact_newest || mode == Mode::exact_union;
  AccessTree tree(exact ? AccessTree::MergePolicy::same_tag_only : AccessTree::MergePolicy::any_tag,
                  unions ? &unite_tags : nullptr, unions ? &sets : nullptr);
  Stream stream(seed * 7919 + static_cast<uint64_t>(mode), arena);
  std::vector<int> type(arena, -1);      // the oracle: each byte's type (-1: never accessed)
  std::vector<uint32_t> tag(arena, 0);   // and tag
  std::vector<uint64_t> in_access(arena, 0);  // the access's number where it covers the byte
  std::vector<char> conflicting(arena, 0);
  std::vector<int> tree_type(arena);
  std::vector<uint32_t> tree_tag(arena);
  std::vector<AccessTree::Fragment> all, expected_hits, hits;
  std::vector<TreeConflict> expected, got;
  std::ostringstream why;
  auto fail = [&](uint64_t i, const Access& a) {
    std::ostringstream s;
    s << "mode " << static_cast<int>(mode) << " seed " << seed << " arena " << arena << " access " << i << " "
      << describe(a.where) << " " << an::access_type_name(a.type) << " tag " << a.tag << ": " << why.str();
    r.failure = s.str();
    return r;
  };
  for (uint64_t i = 1; i <= length; ++i) {
    Access a = stream.next(exact ? 4 : 0);
    if (unions) a.tag = sets.intern({a.tag});
    ++r.accesses;
    for_bytes(a.where, [&](uint64_t b) { in_access[b] = i; });
    // Brute force over the stored fragments: those meeting the access, and
    // the conflicts the insert must report.
    all.clear();
    tree.for_each([&](const AccessTree::Fragment& f) { all.push_back(f); });
    r.max_nodes = std::max<uint64_t>(r.max_nodes, all.size());
    expected.clear();
    expected_hits.clear();
    const uint64_t a_end = an::hull_end(a.where);
    uint64_t region_lo = a.where.lo, region_hi = a_end;  // where bytes may change
    for (const auto& f : all) {
      const uint64_t f_end = an::hull_end(f.where);
      if (f.where.lo >= a_end || f_end <= a.where.lo) continue;
      TreeConflict c{f.tag, f.type, 0, 0, 0};
      const bool race = an::conflicts(f.type, a.type);
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
    hits.clear();
    tree.query(a.where, [&](const AccessTree::Fragment& f) { hits.push_back(f); });
    bool same_hits = hits.size() == expected_hits.size();
    for (std::size_t k = 0; same_hits && k < hits.size(); ++k) same_hits = hits[k].where == expected_hits[k].where;
    if (!same_hits) {
      why << "query() found " << hits.size() << " fragments, brute force " << expected_hits.size();
      return fail(i, a);
    }
    // The oracle's conflicting bytes are exactly those of the conflicting fragments.
    uint64_t oracle_bytes = 0;
    bool same_bytes = true;
    for_bytes(a.where, [&](uint64_t b) {
      const bool race = type[b] >= 0 && an::conflicts(static_cast<AccessType>(type[b]), a.type);
      oracle_bytes += race ? 1 : 0;
      if (race != (conflicting[b] != 0) && same_bytes) {
        why << "byte " << b << ": oracle race " << race << ", fragments say " << !race;
        same_bytes = false;
      }
      conflicting[b] = 0;
    });
    if (!same_bytes) return fail(i, a);

    got.clear();
    tree.insert(a.where, a.type, a.tag, &got);
    r.conflicts += got.size();
    if (got.size() != expected.size()) {
      why << "insert reported " << got.size() << " conflicts, expected " << expected.size();
      return fail(i, a);
    }
    uint64_t got_bytes = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const TreeConflict& g = got[k];
      const TreeConflict& e = expected[k];
      if (g.old_tag != e.old_tag || g.old_type != e.old_type || g.lo != e.lo || g.hi != e.hi || g.bytes != e.bytes) {
        why << "conflict " << k << ": tag " << g.old_tag << " " << an::access_type_name(g.old_type) << " [" << g.lo
            << ", " << g.hi << ") " << g.bytes << " bytes; expected tag " << e.old_tag << " "
            << an::access_type_name(e.old_type) << " [" << e.lo << ", " << e.hi << ") " << e.bytes << " bytes";
        return fail(i, a);
      }
      got_bytes += g.bytes;
      // The first run against the oracle itself: each byte inside the
      // access, with a conflicting history of the conflict's type and tag.
      for (uint64_t b = g.lo; b < g.hi; ++b) {
        const bool ok = b < arena && in_access[b] == i && type[b] == static_cast<int>(g.old_type) &&
                        an::conflicts(g.old_type, a.type) &&
                        (!exact || tag[b] == g.old_tag) && (mode != Mode::union_any || sets.contains(g.old_tag, tag[b]));
        if (!ok) {
          why << "conflict " << k << " names byte " << b << " whose history is type " << type[b] << " tag " << tag[b];
          return fail(i, a);
        }
      }
    }
    if (got_bytes != oracle_bytes) {
      why << "conflicts cover " << got_bytes << " bytes, the oracle " << oracle_bytes;
      return fail(i, a);
    }
    // The oracle: rule 1 per byte.
    for_bytes(a.where, [&](uint64_t b) {
      if (type[b] < 0) {
        type[b] = static_cast<int>(a.type);
        tag[b] = a.tag;
        return;
      }
      const AccessType old_type = static_cast<AccessType>(type[b]);
      const AccessType c = an::combine(old_type, a.type);
      if (c == a.type && c != old_type)
        tag[b] = a.tag;  // the new access's type prevails
      else if (c == old_type && c != a.type)
        ;  // the old type prevails: its tag stays
      else if (tag[b] != a.tag)
        tag[b] = unions ? sets.unite(tag[b], a.tag) : a.tag;  // both or neither: TagMerge
      type[b] = static_cast<int>(c);
    });
    // The tree holds the oracle's bytes: around the access after each insert
    // (bytes elsewhere keep their types; their tags only grow by merging),
    // the whole arena every 16 accesses and at the end.
    if (i % 16 == 0 || i == length) {
      region_lo = 0;
      region_hi = arena;
    }
    std::fill(tree_type.begin() + static_cast<std::ptrdiff_t>(region_lo),
              tree_type.begin() + static_cast<std::ptrdiff_t>(region_hi), -1);
    bool outside = false;
    tree.query(block(region_lo, region_hi - region_lo), [&](const AccessTree::Fragment& f) {
      for_bytes(f.where, [&](uint64_t b) {
        if (b >= arena) outside = true;
        if (b < region_lo || b >= region_hi) return;
        tree_type[b] = static_cast<int>(f.type);
        tree_tag[b] = f.tag;
      });
    });
    if (outside) {
      why << "a fragment leaves the arena";
      return fail(i, a);
    }
    for (uint64_t b = region_lo; b < region_hi; ++b) {
      if (tree_type[b] != type[b]) why << "byte " << b << ": tree type " << tree_type[b] << ", oracle " << type[b];
      else if (type[b] >= 0 && exact && tree_tag[b] != tag[b])
        why << "byte " << b << ": tree tag " << tree_tag[b] << ", oracle " << tag[b];
      else if (type[b] >= 0 && mode == Mode::union_any && !sets.contains(tree_tag[b], tag[b]))
        why << "byte " << b << ": tree tag set " << tree_tag[b] << " lacks the oracle's " << tag[b];
      else
        continue;
      return fail(i, a);
    }
    try {
      tree.check_invariants();
    } catch (const std::logic_error& e) {
      why << e.what();
      return fail(i, a);
    }
  }
  return r;
}

// The shape of stream number `n` of a fuzz run: mode, arena and length,
// mostly short streams over small arenas (dense overlaps), some long ones.
struct Shape {
  Mode mode;
  uint64_t arena, length;
};
inline Shape shape_of(uint64_t n) {
  Rng rng{n * 0x2545F4914F6CDD1Dull + 17};
  const Mode mode = k_modes[n % 4];
  switch (rng.below(8)) {
    case 0: return {mode, 4096, rng.range(100, 400)};
    case 1:
    case 2: return {mode, 1024, rng.range(20, 120)};
    default: return {mode, rng.range(64, 384), rng.range(1, 48)};
  }
}

}  // namespace smtrace::test::access_oracle
