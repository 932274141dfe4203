// AccessTree: fragmentation and merging of strided accesses in an AVL
// interval tree (see access_tree.hpp).
//
// Seeds: 000 = Vinayagame, "Rethinking Data Race Detection in
// RMA-Analyzer" (Algorithm 1 insert, Algorithm 2 fragmentation, Algorithm 3
// merging, Fig. 7 types); 004 = PARCOACH's "Merging Non-Adjacent Accesses in
// the BST" (section 3.1: Size and Distance, Fig. 7 fragmentation,
// merge_accesses by batches of three).
//
// Merging rules
//  1. Types. A byte accessed with type o and then n has type combine(o, n)
//     (seed 000 Fig. 7). Its tag is the tag of the access whose type is the
//     combined type; when both are (same type) or neither is (LW + RR -> RW),
//     TagMerge(old, new) (Algorithm 2's dominantAccess; Algorithm 3 keeps the
//     new access's Dbg, our default TagMerge).
//  2. Contiguous. Two one-block fragments of the same type (and, with
//     same_tag_only, the same tag) that are adjacent merge into one block
//     (seed 000 section 4.2). Intersecting pieces never meet here: the
//     access is first cut against what it intersects (rule 5), so the pieces
//     of one type are adjacent and merge by this rule.
//  3. Strided continuation. A one-block fragment that is the next (or
//     previous) block of a strided fragment of the same size and type extends
//     it; two strided fragments with the same size and distance, one
//     continuing the other, concatenate (seed 004).
//  4. Batches of three. Three one-block fragments of the same size and type,
//     equidistant with a distance larger than the size, become one strided
//     fragment (seed 004 merge_accesses). Two are not enough: a pair fixes a
//     distance from one sample, and a strided pair could no longer merge by
//     rule 2 with a block that later fills the gap.
//  5. Fragmentation (seed 000 Algorithm 2, seed 004 Fig. 7). The access and
//     the fragments whose bytes it meets are cut at every block boundary into
//     pieces of three kinds: fragment only (its type and tag), both (rule 1),
//     access only (the access's type and tag). Only blocks inside the other
//     side's hull are cut one by one; the blocks of a fragment before and
//     after the access's hull, and the runs of the access's blocks that meet no
//     fragment, stay strided. The pieces of one type (and tag, with
//     same_tag_only) are then re-joined in address order by rules 2-4, and
//     each result is placed in the tree by rules 2-4 against its neighbours.
//
// Open cases and what we chose
//  a. A block adjacent to one block of a strided fragment does not merge with
//     it, nor do two strided fragments whose blocks abut (seed 004 Fig. 5b
//     keeps A[i].buffer1 and A[i].buffer2 as two nodes): the union is not a
//     strided fragment unless the counts match, and joining them only then
//     would make the result depend on the order of the two loops. (Strides
//     of at most 16 blocks give up an end block to an adjacent block: h.)
//  b. Neighbours tried when placing a piece: seed 004 takes two extra nodes
//     left and right of the intersecting ones; we try the two predecessors and
//     two successors in address order plus the finger (the node last placed or
//     extended) and the four fingers before it. Interlaced patterns with up to
//     two other lanes between a fragment and its next block still merge, and
//     so do up to five lanes visited in turn; more lanes give more fragments,
//     never wrong ones.
//  c. Tag order. When pieces merge, the piece that carries the access being
//     inserted gives new_tag; between two older pieces the lower address gives
//     old_tag. TagMerge(t, t) is t and not called, so with same_tag_only
//     (equal tags) merging never calls it.
//  d. Contiguous before strided: a block that is adjacent to a one-block
//     fragment joins it (rule 2) before any stride is looked for.
//  e. Appending beyond every hull (the access starts at or after the largest
//     hull end): the finger is extended in place when it can be (rules 2-3),
//     without looking for further merges; nothing to the right exists, and to
//     the left nothing changed. Likewise a block that starts where a one-block
//     finger or recent node of its type ends, when no node starts where the
//     block ends: the grown block is not tried in batches of three.
//  f. An access whose bytes all lie in one fragment whose type and tag it
//     leaves as they are changes nothing (no cut, no merge).
//  g. Limits: fragments hold at most 2^32 blocks (count - 1 in 32 bits); an
//     access with more is inserted as chunks of 2^32 blocks that do not
//     concatenate (conflicts are still reported once per fragment). Hull ends
//     are exclusive 64-bit addresses, so the byte at 2^64 - 1 and a block's
//     bytes beyond it are dropped. Block sizes up to 2^64 - 2. At most 2^30 - 1
//     fragments per tree (30-bit child indices; std::length_error beyond).
//  h. Batches of three cannot tell a loop's stride from blocks that happen
//     to be equidistant: arrays of one size allocated one after the other and
//     swept together (a[i], b[i], c[i], ... of one type) first form a stride
//     across the arrays, and then, without more, a new one every iteration
//     (1000 nodes for 1000 iterations over 7 arrays). So a block adjacent to
//     the first or last block of a strided fragment of its type with 3 to 16
//     blocks takes that block out of the stride and joins it (after rules
//     2-3, before rule 4); the next sweep peels the stride back into one run
//     per array (7 arrays: 10 nodes). Longer strides are taken to be loops'
//     and kept whole, as seed 004 Fig. 5 keeps buffer1's loop apart from
//     buffer2's (a buffer2 loop of 16 iterations or fewer gives about 4 nodes
//     instead of 2). Not handled: more than 16 such arrays, and lanes
//     equidistant inside one period (fields at 0, 20, 40 of a 256-byte
//     struct, put in turn: one stride per period; no block is adjacent).
//
// Cost. A query or an insert that meets nothing: O(log n + h), h the
// fragments whose hulls meet the access's hull (with byte-disjoint
// fragments, those whose bytes meet it, plus interlaced ones in between).
// Testing a hull hit for common bytes is O(1) when one side is a single block
// or both have the same distance, else O(blocks of the sparser side in the
// common hull). An insert that meets k fragments also cuts the blocks of each
// side that lie in the other's hull: O(log n + h + b log k), then places each
// resulting piece in O(log n).
#include "analyzer/access_tree.hpp"

#include <algorithm>
#include <string>

namespace smtrace::analyzer {
namespace {

constexpr uint64_t k_top = UINT64_MAX;                  // one past the last address
constexpr uint64_t k_max_count = uint64_t{1} << 32;    // blocks per fragment
constexpr uint32_t k_peel_blocks = 16;                 // open case h: the longest stride peeled

bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }
bool add_overflows(uint64_t a, uint64_t b, uint64_t& out) { return __builtin_add_overflow(a, b, &out); }

uint64_t end_of(const Strided& p) { return p.lo + (p.count - 1) * p.distance + p.size; }

// Return the bytes canonical `p` has in [x, y), with their first run.
Overlap clip(const Strided& p, uint64_t x, uint64_t y) {
  x = std::max(x, p.lo);
  y = std::min(y, end_of(p));
  if (x >= y) return {};
  if (p.count == 1) return {x, y, y - x};
  const uint64_t d = p.distance, s = p.size;
  const uint64_t ox = x - p.lo, oy = y - p.lo;
  const uint64_t ky = (oy - 1) / d;  // the last block starting before y
  uint64_t k = ox / d;
  if (k * d + s <= ox) ++k;  // x lies in the gap after block k
  if (k > ky) return {};
  Overlap r;
  r.lo = p.lo + std::max(k * d, ox);
  r.hi = p.lo + std::min(k * d + s, oy);
  r.bytes = r.hi - r.lo;
  if (k < ky) r.bytes += (ky - k - 1) * s + (std::min(ky * d + s, oy) - ky * d);
  return r;
}

// Return the blocks [first, last] of canonical `p` that meet [x, y); false if none.
bool block_range(const Strided& p, uint64_t x, uint64_t y, uint64_t& first, uint64_t& last) {
  x = std::max(x, p.lo);
  y = std::min(y, end_of(p));
  if (x >= y) return false;
  if (p.count == 1) {
    first = last = 0;
    return true;
  }
  const uint64_t d = p.distance, ox = x - p.lo;
  last = (y - p.lo - 1) / d;
  first = ox / d;
  if (first * d + p.size <= ox) ++first;
  return first <= last;
}

// Return blocks [first, last) of canonical `p` as a canonical Strided.
Strided sub(const Strided& p, uint64_t first, uint64_t last) {
  const uint64_t n = last - first;
  return {p.lo + first * p.distance, p.size, n > 1 ? p.distance : 0, n};
}

// Overlap of two canonical strided (count > 1) with the same distance, in
// O(1): with g starting r bytes into a period of f, block j of g meets
// blocks j + q and j + q + 1 of f only.
Overlap same_distance(const Strided& a, const Strided& b) {
  const Strided& f = a.lo <= b.lo ? a : b;
  const Strided& g = a.lo <= b.lo ? b : a;
  const uint64_t d = f.distance;
  const uint64_t q = (g.lo - f.lo) / d, r = (g.lo - f.lo) % d;
  const uint64_t ov0 = r < f.size ? std::min(f.size - r, g.size) : 0;
  const uint64_t ov1 = r > d - g.size ? std::min(g.size - (d - r), f.size) : 0;
  const uint64_t c0 = q < f.count ? std::min(g.count, f.count - q) : 0;
  const uint64_t c1 = q + 1 < f.count ? std::min(g.count, f.count - q - 1) : 0;
  Overlap o;
  o.bytes = c0 * ov0 + c1 * ov1;
  if (c0 != 0 && ov0 != 0) {
    o.lo = g.lo;
    o.hi = g.lo + ov0;
  } else if (c1 != 0 && ov1 != 0) {
    o.lo = f.lo + (q + 1) * d;
    o.hi = o.lo + ov1;
  }
  return o;
}

// Overlap of two canonical Strided; with `first_only`, stop at the first run.
Overlap overlap_canonical(const Strided& a, const Strided& b, bool first_only) {
  if (a.count == 1) return clip(b, a.lo, a.lo + a.size);
  if (b.count == 1) return clip(a, b.lo, b.lo + b.size);
  const uint64_t lo = std::max(a.lo, b.lo), hi = std::min(end_of(a), end_of(b));
  if (lo >= hi) return {};
  if (a.distance == b.distance) return same_distance(a, b);
  // Walk the blocks of the sparser one inside the common hull.
  const Strided& p = a.distance > b.distance ? a : b;
  const Strided& q = a.distance > b.distance ? b : a;
  uint64_t first = 0, last = 0;
  Overlap r;
  if (!block_range(p, lo, hi, first, last)) return r;
  for (uint64_t k = first; k <= last; ++k) {
    const uint64_t x = p.lo + k * p.distance;
    const Overlap o = clip(q, x, x + p.size);
    if (o.bytes == 0) continue;
    if (r.bytes == 0) {
      r.lo = o.lo;
      r.hi = o.hi;
      if (first_only) return {r.lo, r.hi, o.bytes};
    }
    r.bytes += o.bytes;
  }
  return r;
}

// Return a and b (a.lo < b.lo, canonical, disjoint, same type) joined by
// rules 2-3 into `out`, or false.
bool join_where(const Strided& a, const Strided& b, Strided& out) {
  if (a.count == 1 && b.count == 1) {
    if (a.lo + a.size != b.lo) return false;
    out = {a.lo, a.size + b.size, 0, 1};
    return true;
  }
  if (a.size != b.size) return false;
  if (a.count > 1 && b.count > 1 && a.distance != b.distance) return false;
  if (a.count + b.count > k_max_count) return false;
  const uint64_t d = a.count > 1 ? a.distance : b.distance;
  uint64_t next = 0;
  if (mul_overflows(a.count, d, next) || add_overflows(a.lo, next, next) || next != b.lo) return false;
  out = {a.lo, a.size, d, a.count + b.count};
  return true;
}

// Return true and the strided fragment of three one-block pieces (in address
// order, same size) when they are equidistant (rule 4).
bool join_three(const Strided& a, const Strided& b, const Strided& c, Strided& out) {
  if (a.size != b.size || b.size != c.size) return false;
  const uint64_t d = b.lo - a.lo;
  if (c.lo - b.lo != d || d <= a.size) return false;
  out = {a.lo, a.size, d, 3};
  return true;
}

}  // namespace

AccessType combine(AccessType old_type, AccessType new_type) {
  return static_cast<AccessType>(static_cast<uint8_t>(old_type) | static_cast<uint8_t>(new_type));
}

bool conflicts(AccessType a, AccessType b) { return combine(a, b) == AccessType::rma_write; }

std::string_view access_type_name(AccessType type) {
  switch (type) {
    case AccessType::local_read: return "Local_Read";
    case AccessType::local_write: return "Local_Write";
    case AccessType::rma_read: return "RMA_Read";
    case AccessType::rma_write: return "RMA_Write";
  }
  return "?";
}

uint64_t hull_end(const Strided& where) {
  if (where.size == 0 || where.count == 0) return where.lo;
  uint64_t span = where.size;
  if (where.count > 1 && (mul_overflows(where.count - 1, where.distance, span) ||
                          add_overflows(span, where.size, span)))
    return k_top;
  uint64_t end = 0;
  return add_overflows(where.lo, span, end) ? k_top : end;
}

uint64_t total_bytes(const Strided& where) {
  if (where.size == 0 || where.count == 0) return 0;
  if (where.count > 1 && where.distance <= where.size) return hull_end(where) - where.lo;
  uint64_t bytes = 0;
  return mul_overflows(where.size, where.count, bytes) ? k_top : bytes;
}

bool canonical_piece(const Strided& where, Strided& out) {
  if (where.size == 0 || where.count == 0 || where.lo >= k_top) return false;
  const uint64_t avail = k_top - where.lo;
  if (where.count == 1) {
    if (where.size > avail) return false;
    out = {where.lo, where.size, 0, 1};
    return true;
  }
  uint64_t span = 0;
  if (mul_overflows(where.count - 1, where.distance, span) || add_overflows(span, where.size, span) ||
      span > avail)
    return false;
  if (where.distance <= where.size) {
    out = {where.lo, span, 0, 1};
    return true;
  }
  if (where.count > k_max_count) return false;
  out = where;
  return true;
}

void canonical_pieces(const Strided& where, std::vector<Strided>& out) {
  if (where.size == 0 || where.count == 0 || where.lo >= k_top) return;
  const uint64_t avail = k_top - where.lo;  // bytes lo .. 2^64 - 2
  if (where.count == 1 || where.distance <= where.size) {
    uint64_t span = where.size;
    if (where.count > 1 && (mul_overflows(where.count - 1, where.distance, span) ||
                            add_overflows(span, where.size, span)))
      span = k_top;
    out.push_back({where.lo, std::min(span, avail), 0, 1});
    return;
  }
  const uint64_t d = where.distance;
  // Whole blocks: k * d + size <= avail.
  const uint64_t whole = std::min(where.count, avail < where.size ? 0 : (avail - where.size) / d + 1);
  for (uint64_t k = 0; k < whole;) {
    const uint64_t n = std::min(whole - k, k_max_count);
    out.push_back({where.lo + k * d, where.size, n > 1 ? d : 0, n});
    k += n;
  }
  uint64_t offset = 0;
  if (whole < where.count && !mul_overflows(whole, d, offset) && offset < avail)
    out.push_back({where.lo + offset, avail - offset, 0, 1});  // the block cut at 2^64 - 1
}

Overlap overlap(const Strided& a, const Strided& b) {
  Strided ca, cb;
  if (canonical_piece(a, ca) && canonical_piece(b, cb)) return overlap_canonical(ca, cb, false);
  std::vector<Strided> pa, pb;
  canonical_pieces(a, pa);
  canonical_pieces(b, pb);
  Overlap r;
  for (const Strided& x : pa) {
    for (const Strided& y : pb) {
      const Overlap o = overlap_canonical(x, y, false);
      if (o.bytes == 0) continue;
      if (r.bytes == 0 || o.lo < r.lo) {
        r.lo = o.lo;
        r.hi = o.hi;
      }
      r.bytes += o.bytes;
    }
  }
  return r;
}

bool intersects(const Strided& a, const Strided& b) {
  Strided ca, cb;
  if (canonical_piece(a, ca) && canonical_piece(b, cb)) return overlap_canonical(ca, cb, true).bytes != 0;
  return overlap(a, b).bytes != 0;
}

// ---------------------------------------------------------------------------
// The tree

AccessTree::AccessTree(MergePolicy policy, TagMerge merge, void* context)
    : m_policy(policy), m_merge(merge), m_context(context), m_pool(1) {}

void AccessTree::clear() {
  m_pool.resize(1);
  m_free = m_root = m_finger = 0;
  std::fill(std::begin(m_recent), std::end(m_recent), 0);
  m_nodes = m_peak = 0;
  m_inserts = 0;
}

std::size_t AccessTree::bytes_per_node() const { return sizeof(Node); }

std::size_t AccessTree::memory_bytes() const {
  return sizeof(*this) + m_pool.capacity() * sizeof(Node) + m_hits.capacity() * sizeof(uint32_t) +
         m_hit_fragments.capacity() * sizeof(Fragment) + (m_pieces.capacity() + m_out.capacity()) * sizeof(Piece) +
         m_split.capacity() * sizeof(Strided) + m_cursors.capacity() * sizeof(Cursor) +
         m_ranges.capacity() * sizeof(m_ranges[0]);
}

uint32_t AccessTree::merge_tags(uint32_t old_tag, uint32_t new_tag) const {
  if (old_tag == new_tag) return old_tag;
  return m_merge != nullptr ? m_merge(m_context, old_tag, new_tag) : new_tag;
}

void AccessTree::insert(const Strided& where, AccessType type, uint32_t tag, std::vector<TreeConflict>* conflicts) {
  ++m_inserts;
  Strided piece;
  if (canonical_piece(where, piece)) {
    insert_piece(piece, type, tag, conflicts);
    return;
  }
  m_split.clear();
  canonical_pieces(where, m_split);
  if (conflicts != nullptr) report_conflicts(m_split, type, *conflicts);
  for (std::size_t i = 0; i < m_split.size(); ++i) insert_piece(m_split[i], type, tag, nullptr);
}

void AccessTree::collect_hits(uint32_t n, const Strided& where, uint64_t end, std::vector<uint32_t>& out) const {
  while (n != 0) {
    const Node& x = m_pool[n];
    if (x.max_end <= where.lo) return;
    if (x.left() != 0) collect_hits(x.left(), where, end, out);
    if (x.lo >= end) return;
    if (x.end() > where.lo && overlap_canonical(x.where(), where, true).bytes != 0) out.push_back(n);
    n = x.right();
  }
}

// The conflicts of an access split into several pieces: one entry per
// fragment over all pieces.
void AccessTree::report_conflicts(const std::vector<Strided>& pieces, AccessType type,
                                  std::vector<TreeConflict>& out) const {
  std::vector<uint32_t> hits;
  for (const Strided& p : pieces) collect_hits(m_root, p, end_of(p), hits);
  std::sort(hits.begin(), hits.end(), [&](uint32_t a, uint32_t b) { return m_pool[a].lo < m_pool[b].lo; });
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
  for (uint32_t n : hits) {
    const Node& f = m_pool[n];
    if (!conflicts(f.type(), type)) continue;
    TreeConflict c{f.tag, f.type(), 0, 0, 0};
    for (const Strided& p : pieces) {
      const Overlap o = overlap_canonical(f.where(), p, false);
      if (o.bytes == 0) continue;
      if (c.bytes == 0) {
        c.lo = o.lo;
        c.hi = o.hi;
      }
      c.bytes += o.bytes;
    }
    out.push_back(c);
  }
}

void AccessTree::insert_piece(const Strided& where, AccessType type, uint32_t tag,
                              std::vector<TreeConflict>* conflicts) {
  if (m_root == 0 || where.lo >= m_pool[m_root].max_end) {
    if (!append_to_finger(where, type, tag)) place({where, type, tag, true});
    return;
  }
  m_hits.clear();
  collect_hits(m_root, where, end_of(where), m_hits);
  if (m_hits.empty()) {
    place({where, type, tag, true});
    return;
  }
  if (conflicts != nullptr) {
    for (uint32_t n : m_hits) {
      const Node& f = m_pool[n];
      if (!analyzer::conflicts(f.type(), type)) continue;
      const Overlap o = overlap_canonical(f.where(), where, false);
      conflicts->push_back({f.tag, f.type(), o.lo, o.hi, o.bytes});
    }
  }
  if (m_hits.size() == 1) {  // open case f: nothing changes
    const Node& f = m_pool[m_hits[0]];
    if (combine(f.type(), type) == f.type() && (type != f.type() || merge_tags(f.tag, tag) == f.tag) &&
        overlap_canonical(f.where(), where, false).bytes == where.size * where.count)
      return;
  }
  fragment(where, type, tag);
  compress();
  for (const Piece& p : m_out) place(p);
}

bool AccessTree::append_to_finger(const Strided& where, AccessType type, uint32_t tag) {
  if (!live(m_finger)) return false;
  Node& f = m_pool[m_finger];
  Strided joined;
  if (f.type() != type || !tags_mergeable(f.tag, tag) || !join_where(f.where(), where, joined)) return false;
  f.tag = merge_tags(f.tag, tag);
  set_where(m_finger, joined);
  raise_end(joined.lo, end_of(joined));
  return true;
}

// Cut the access and the fragments in m_hits into pieces (rule 5) in
// m_pieces; erase the fragments from the tree.
void AccessTree::fragment(const Strided& where, AccessType type, uint32_t tag) {
  m_pieces.clear();
  m_cursors.clear();
  m_ranges.clear();
  const uint64_t end = end_of(where);
  m_hit_fragments.clear();
  for (uint32_t n : m_hits) m_hit_fragments.push_back({m_pool[n].where(), m_pool[n].type(), m_pool[n].tag});
  for (const Fragment& f : m_hit_fragments) tree_erase(f.where.lo);

  for (const Fragment& f : m_hit_fragments) {
    const Strided& w = f.where;
    uint64_t first = 0, last = 0;
    block_range(w, where.lo, end, first, last);  // not empty: f meets the access
    if (first > 0) m_pieces.push_back({sub(w, 0, first), f.type, f.tag, false});
    if (last + 1 < w.count) m_pieces.push_back({sub(w, last + 1, w.count), f.type, f.tag, false});
    const uint64_t span_lo = w.lo + first * w.distance, span_hi = w.lo + last * w.distance + w.size;
    m_cursors.push_back({span_lo, w.size, w.distance, last - first + 1, f.type, f.tag});
    uint64_t a_first = 0, a_last = 0;
    if (block_range(where, span_lo, span_hi, a_first, a_last)) m_ranges.push_back({a_first, a_last});
  }
  // The access's blocks to cut: those meeting a fragment's cut span.
  std::sort(m_ranges.begin(), m_ranges.end());
  std::size_t merged = 0;
  for (std::size_t i = 1; i < m_ranges.size(); ++i) {
    if (m_ranges[i].first <= m_ranges[merged].second + 1)
      m_ranges[merged].second = std::max(m_ranges[merged].second, m_ranges[i].second);
    else
      m_ranges[++merged] = m_ranges[i];
  }
  m_ranges.resize(m_ranges.empty() ? 0 : merged + 1);
  uint64_t next = 0;
  for (const auto& [first, last] : m_ranges) {
    if (first > next) m_pieces.push_back({sub(where, next, first), type, tag, true});
    next = last + 1;
  }
  if (next < where.count) m_pieces.push_back({sub(where, next, where.count), type, tag, true});

  // Sweep the cut blocks of both sides in address order. The fragments are
  // disjoint, so one min-heap of their next blocks is one sorted stream.
  auto later = [](const Cursor& a, const Cursor& b) { return a.lo > b.lo; };
  std::make_heap(m_cursors.begin(), m_cursors.end(), later);
  const std::size_t sweep_start = m_pieces.size();
  auto emit = [&](uint64_t lo, uint64_t hi, AccessType t, uint32_t g, bool fresh) {
    if (m_pieces.size() > sweep_start) {  // rule 2 at once with the previous cut piece
      Piece& last = m_pieces.back();
      if (last.where.count == 1 && last.where.lo + last.where.size == lo && last.type == t &&
          tags_mergeable(last.tag, g)) {
        last.where.size += hi - lo;
        last.tag = last.fresh && !fresh ? merge_tags(g, last.tag) : merge_tags(last.tag, g);
        last.fresh = last.fresh || fresh;
        return;
      }
    }
    m_pieces.push_back({{lo, hi - lo, 0, 1}, t, g, fresh});
  };
  std::size_t range = 0;
  uint64_t a_index = m_ranges.empty() ? 0 : m_ranges[0].first;
  bool have_a = !m_ranges.empty();
  uint64_t a_lo = 0, a_hi = 0;
  auto load_a = [&] {
    if (!have_a) return;
    a_lo = where.lo + a_index * where.distance;
    a_hi = a_lo + where.size;
  };
  auto next_a = [&] {
    if (a_index < m_ranges[range].second) {
      ++a_index;
    } else if (++range < m_ranges.size()) {
      a_index = m_ranges[range].first;
    } else {
      have_a = false;
      return;
    }
    load_a();
  };
  load_a();
  bool have_s = !m_cursors.empty();
  uint64_t s_lo = 0, s_hi = 0;
  AccessType s_type{};
  uint32_t s_tag = 0;
  auto load_s = [&] {
    have_s = !m_cursors.empty();
    if (!have_s) return;
    const Cursor& c = m_cursors.front();
    s_lo = c.lo;
    s_hi = c.lo + c.size;
    s_type = c.type;
    s_tag = c.tag;
  };
  // One fragment with the access's distance: the sweep repeats every
  // `distance` bytes. At the start of each fragment block, when the state
  // (the access's block and how much of it is consumed) is the previous
  // start's shifted by one period, and so are the pieces of the last two
  // periods (no piece joined across a period), the next L periods give the
  // same pieces shifted: add them as strided pieces and jump.
  const bool periodic = m_cursors.size() == 1 && where.count > 1 && m_cursors[0].distance == where.distance;
  struct Mark {
    std::size_t piece;
    uint64_t a_index, a_offset;
  };
  Mark marks[2] = {};
  int n_marks = 0;
  const uint64_t d = where.distance;
  auto skip_periods = [&] {
    if (!have_a) {
      n_marks = 0;
      return;
    }
    const Mark now{m_pieces.size(), a_index, a_lo - (where.lo + a_index * d)};
    bool repeats = n_marks == 2 && now.a_index == marks[1].a_index + 1 && marks[1].a_index == marks[0].a_index + 1 &&
                   now.a_offset == marks[1].a_offset && marks[1].a_offset == marks[0].a_offset &&
                   now.piece - marks[1].piece == marks[1].piece - marks[0].piece && now.piece > marks[1].piece;
    for (std::size_t i = marks[1].piece; repeats && i < now.piece; ++i) {
      const Piece& p = m_pieces[i - (marks[1].piece - marks[0].piece)];
      const Piece& q = m_pieces[i];
      repeats = p.where.count == 1 && q.where.count == 1 && q.where.lo == p.where.lo + d &&
                q.where.size == p.where.size && q.where.size < d && q.type == p.type && q.tag == p.tag &&
                q.fresh == p.fresh;
    }
    marks[0] = marks[1];
    marks[1] = now;
    n_marks = std::min(n_marks + 1, 2);
    if (!repeats) return;
    Cursor& c = m_cursors.front();
    const uint64_t periods = std::min(c.left - 1, m_ranges[range].second - a_index);
    if (periods < 2) return;
    for (std::size_t i = marks[0].piece; i < now.piece; ++i) {
      const Piece p = m_pieces[i];
      m_pieces.push_back({{p.where.lo + d, p.where.size, d, periods}, p.type, p.tag, p.fresh});
    }
    c.lo += periods * d;
    c.left -= periods;
    s_lo += periods * d;
    s_hi += periods * d;
    a_index += periods;
    a_lo += periods * d;
    a_hi += periods * d;
    n_marks = 0;
  };
  auto next_s = [&] {
    std::pop_heap(m_cursors.begin(), m_cursors.end(), later);
    Cursor& c = m_cursors.back();
    if (--c.left == 0) {
      m_cursors.pop_back();
    } else {
      c.lo += c.distance;
      std::push_heap(m_cursors.begin(), m_cursors.end(), later);
    }
    load_s();
    if (periodic && have_s) skip_periods();
  };
  load_s();
  if (periodic && have_s) skip_periods();
  while (have_a || have_s) {
    if (!have_s || (have_a && a_hi <= s_lo)) {
      emit(a_lo, a_hi, type, tag, true);
      next_a();
      continue;
    }
    if (!have_a || s_hi <= a_lo) {
      emit(s_lo, s_hi, s_type, s_tag, false);
      next_s();
      continue;
    }
    if (a_lo < s_lo) {
      emit(a_lo, s_lo, type, tag, true);
      a_lo = s_lo;
    } else if (s_lo < a_lo) {
      emit(s_lo, a_lo, s_type, s_tag, false);
      s_lo = a_lo;
    }
    const uint64_t e = std::min(a_hi, s_hi);
    const AccessType c = combine(s_type, type);
    if (c == type && c != s_type)
      emit(a_lo, e, c, tag, true);
    else if (c == s_type && c != type)
      emit(a_lo, e, c, s_tag, false);
    else
      emit(a_lo, e, c, merge_tags(s_tag, tag), true);
    a_lo = s_lo = e;
    if (a_lo == a_hi) next_a();
    if (have_s && s_lo == s_hi) next_s();
  }
}

// Re-join the pieces of m_pieces by rules 2-4, per type (and tag), into m_out.
void AccessTree::compress() {
  const bool by_tag = m_policy == MergePolicy::same_tag_only;
  std::sort(m_pieces.begin(), m_pieces.end(), [by_tag](const Piece& a, const Piece& b) {
    if (a.type != b.type) return a.type < b.type;
    if (by_tag && a.tag != b.tag) return a.tag < b.tag;
    return a.where.lo < b.where.lo;
  });
  m_out.clear();
  auto same_group = [by_tag](const Piece& a, const Piece& b) { return a.type == b.type && (!by_tag || a.tag == b.tag); };
  auto join_tag = [this](const Piece& a, const Piece& b) {
    return b.fresh || !a.fresh ? merge_tags(a.tag, b.tag) : merge_tags(b.tag, a.tag);
  };
  const std::size_t n = m_pieces.size();
  for (std::size_t i = 0; i < n;) {
    Piece run = m_pieces[i++];
    for (;;) {
      Strided joined;
      if (i < n && same_group(run, m_pieces[i]) && join_where(run.where, m_pieces[i].where, joined)) {
        run.tag = join_tag(run, m_pieces[i]);
        run.fresh = run.fresh || m_pieces[i].fresh;
        run.where = joined;
        ++i;
        continue;
      }
      if (run.where.count == 1 && i + 1 < n && same_group(run, m_pieces[i + 1]) && m_pieces[i].where.count == 1 &&
          m_pieces[i + 1].where.count == 1 &&
          join_three(run.where, m_pieces[i].where, m_pieces[i + 1].where, joined)) {
        Piece mid = m_pieces[i];
        mid.tag = join_tag(mid, m_pieces[i + 1]);
        mid.fresh = mid.fresh || m_pieces[i + 1].fresh;
        run.tag = join_tag(run, mid);
        run.fresh = run.fresh || mid.fresh;
        run.where = joined;
        i += 2;
        continue;
      }
      break;
    }
    m_out.push_back(run);
  }
  std::sort(m_out.begin(), m_out.end(), [](const Piece& a, const Piece& b) { return a.where.lo < b.where.lo; });
}

// Put `piece` (disjoint from every fragment) into the tree, merging it with
// its neighbours by rules 2-4 for as long as one applies.
void AccessTree::place(Piece piece) {
  if (piece.where.count == 1 && extend_recent(piece)) return;
  uint32_t home = 0;  // the node holding `piece` once it joined one in place
  for (;;) {
    uint32_t candidates[5 + k_recent];
    int n = 0;
    auto add = [&](uint32_t c) {
      if (c == 0 || c == home || !live(c)) return;
      for (int i = 0; i < n; ++i)
        if (candidates[i] == c) return;
      candidates[n++] = c;
    };
    add(m_finger);
    for (uint32_t c : m_recent) add(c);
    const uint64_t lo = piece.where.lo;
    uint32_t around[4];
    neighbours(lo, around);
    for (uint32_t c : around) add(c);
    bool joined = false;
    for (int i = 0; i < n && !joined; ++i) {
      const uint32_t c = candidates[i];
      const Node& x = m_pool[c];
      if (x.type() != piece.type || !tags_mergeable(x.tag, piece.tag)) continue;
      const bool before = x.lo < lo;
      Strided j;
      if (!(before ? join_where(x.where(), piece.where, j) : join_where(piece.where, x.where(), j))) continue;
      const uint32_t tag = merge_tags(x.tag, piece.tag);
      if (before) {  // x keeps its first byte: it absorbs the piece in place
        if (home != 0) tree_erase(lo);
        home = c;
      } else {
        tree_erase(x.lo);
      }
      if (home != 0) {
        m_pool[home].tag = tag;
        set_where(home, j);
        raise_end(j.lo, end_of(j));
      }
      piece.where = j;
      piece.tag = tag;
      joined = true;
    }
    if (!joined && home == 0 && piece.where.count == 1) joined = try_peel(piece, candidates, n);
    if (!joined && piece.where.count == 1) joined = try_triple(piece, home, candidates, n);
    if (!joined) break;
  }
  if (home == 0) {
    home = alloc(piece.where, piece.type, piece.tag);
    tree_insert(home);
  }
  touch(home);
}

// Return true after taking the first or last block of a strided candidate of
// `piece`'s type with 3 to k_peel_blocks blocks out of its stride and joining
// it to the one-block `piece` (not in the tree) it is adjacent to: open case
// h. The candidate is replaced by its other blocks; `piece` is the joined
// block.
bool AccessTree::try_peel(Piece& piece, const uint32_t* candidates, int n) {
  const Strided p = piece.where;
  for (int i = 0; i < n; ++i) {
    const uint32_t c = candidates[i];
    const Node& x = m_pool[c];
    if (!live(c) || x.count_m1 < 2 || x.count_m1 >= k_peel_blocks || x.type() != piece.type ||
        !tags_mergeable(x.tag, piece.tag))
      continue;
    const Strided w = x.where();
    const uint64_t last = w.lo + (w.count - 1) * w.distance;
    Strided rest, block;
    if (w.lo + w.size == p.lo || p.lo + p.size == w.lo) {
      rest = sub(w, 1, w.count);
      block = {w.lo, w.size, 0, 1};
    } else if (last + w.size == p.lo || p.lo + p.size == last) {
      rest = sub(w, 0, w.count - 1);
      block = {last, w.size, 0, 1};
    } else {
      continue;
    }
    const uint32_t tag = x.tag;
    const AccessType type = x.type();
    tree_erase(w.lo);
    tree_insert(alloc(rest, type, tag));  // still strided, and joins nothing it did not before
    piece.where = {std::min(block.lo, p.lo), block.size + p.size, 0, 1};
    piece.tag = merge_tags(tag, piece.tag);
    return true;
  }
  return false;
}

// Return true after extending, in place, the one-block finger or recent node
// of `piece`'s type that ends where the one-block `piece` starts, when no node
// starts where the piece ends (nothing else could join it by rule 2): open
// case e, without neighbour look-ups or batches of three. False: place it the
// long way.
bool AccessTree::extend_recent(const Piece& piece) {
  const uint64_t end = piece.where.lo + piece.where.size;
  for (int i = -1; i < k_recent; ++i) {
    const uint32_t c = i < 0 ? m_finger : m_recent[i];
    if (!live(c)) continue;
    Node& x = m_pool[c];
    if (x.count_m1 != 0 || x.lo + x.size != piece.where.lo || x.type() != piece.type ||
        !tags_mergeable(x.tag, piece.tag))
      continue;
    if (find(end) != 0) return false;
    x.tag = merge_tags(x.tag, piece.tag);
    x.size += piece.where.size;
    raise_end(x.lo, end);
    touch(c);
    return true;
  }
  return false;
}

// Make `n` the finger and remember the finger before it among the recent
// nodes, for the next piece's merges (interlaced lanes): the finger and the
// recent nodes are the last 1 + k_recent nodes placed or extended.
void AccessTree::touch(uint32_t n) {
  if (n == m_finger) return;
  for (uint32_t& r : m_recent)
    if (r == n) {
      r = m_finger;
      m_finger = n;
      return;
    }
  m_recent[m_recent_next] = m_finger;
  m_recent_next = (m_recent_next + 1) % k_recent;
  m_finger = n;
}

// Rule 4 between a one-block `piece`, a one-block candidate and a third
// block looked up where the stride puts it (before, between or after); on
// success the two are erased (and `home` too) and `piece` is the result.
bool AccessTree::try_triple(Piece& piece, uint32_t& home, const uint32_t* candidates, int n) {
  const uint64_t p = piece.where.lo;
  auto fits = [&](uint32_t c) {
    const Node& x = m_pool[c];
    return live(c) && c != home && x.count_m1 == 0 && x.type() == piece.type && x.size == piece.where.size &&
           tags_mergeable(x.tag, piece.tag);
  };
  for (int i = 0; i < n; ++i) {
    const uint32_t xi = candidates[i];
    if (!fits(xi)) continue;
    const uint64_t x = m_pool[xi].lo;
    const uint64_t gap = x < p ? p - x : x - p;
    const uint64_t lo = std::min(x, p), hi = std::max(x, p);
    uint64_t thirds[3];
    int n_thirds = 0;
    if (lo >= gap) thirds[n_thirds++] = lo - gap;
    if (gap % 2 == 0) thirds[n_thirds++] = lo + gap / 2;
    if (hi <= k_top - gap) thirds[n_thirds++] = hi + gap;
    for (int t = 0; t < n_thirds; ++t) {
      const uint32_t yi = find(thirds[t]);
      if (yi == 0 || !fits(yi) || !tags_mergeable(m_pool[xi].tag, m_pool[yi].tag)) continue;
      const Node& xn = m_pool[xi];
      const Node& yn = m_pool[yi];
      Strided three[3] = {xn.where(), yn.where(), piece.where};
      std::sort(three, three + 3, [](const Strided& a, const Strided& b) { return a.lo < b.lo; });
      Strided joined;
      if (!join_three(three[0], three[1], three[2], joined)) continue;
      const uint32_t old_tag = xn.lo < yn.lo ? merge_tags(xn.tag, yn.tag) : merge_tags(yn.tag, xn.tag);
      piece.tag = merge_tags(old_tag, piece.tag);
      piece.where = joined;
      const uint64_t x_lo = xn.lo, y_lo = yn.lo;
      tree_erase(x_lo);
      tree_erase(y_lo);
      if (home != 0) {
        tree_erase(m_pool[home].lo);
        home = 0;
      }
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// AVL tree over the pool

uint32_t AccessTree::alloc(const Strided& where, AccessType type, uint32_t tag) {
  uint32_t n = m_free;
  if (n != 0) {
    m_free = m_pool[n].left_word;
  } else {
    if (m_pool.size() > Node::k_index_mask)
      throw std::length_error("AccessTree: more than 2^30 - 1 fragments in one tree");
    n = static_cast<uint32_t>(m_pool.size());
    m_pool.emplace_back();
  }
  Node& x = m_pool[n];
  x = Node{};
  x.tag = tag;
  x.right_word = 1u << 30;  // balance 0
  set_type(n, type);
  set_where(n, where);
  x.max_end = x.end();
  m_peak = std::max(m_peak, ++m_nodes);
  return n;
}

void AccessTree::release(uint32_t n) {
  m_pool[n] = Node{};
  m_pool[n].left_word = m_free;
  m_free = n;
  --m_nodes;
}

void AccessTree::set_where(uint32_t n, const Strided& where) {
  Node& x = m_pool[n];
  x.lo = where.lo;
  x.size = where.size;
  x.distance = where.count > 1 ? where.distance : 0;
  x.count_m1 = static_cast<uint32_t>(where.count - 1);
}

void AccessTree::update_max(uint32_t n) {
  Node& x = m_pool[n];
  x.max_end = std::max({x.end(), m_pool[x.left()].max_end, m_pool[x.right()].max_end});
}

void AccessTree::raise_end(uint64_t lo, uint64_t end) {
  for (uint32_t n = m_root; n != 0;) {
    Node& x = m_pool[n];
    x.max_end = std::max(x.max_end, end);
    if (lo == x.lo) return;
    n = lo < x.lo ? x.left() : x.right();
  }
}

// The path from the root to a node, to step to its neighbours in address
// order without parent links. AVL height < 1.45 log2(2^30 + 2) < 45.
struct AccessTree::Path {
  uint32_t node[48];
  int depth = 0;
};

// Descend towards `lo`, recording the path; the last node is `lo`'s node or
// where it would hang.
void AccessTree::descend(uint64_t lo, Path& path) const {
  path.depth = 0;
  for (uint32_t n = m_root; n != 0;) {
    path.node[path.depth++] = n;
    if (lo == m_pool[n].lo) return;
    n = lo < m_pool[n].lo ? m_pool[n].left() : m_pool[n].right();
  }
}

// Step the path's last node to its predecessor (`forward`: successor);
// return it, or 0 (the path is then spent).
uint32_t AccessTree::step(Path& path, bool forward) const {
  if (path.depth == 0) return 0;
  auto down = [&](uint32_t n, bool to_left) { return to_left ? m_pool[n].left() : m_pool[n].right(); };
  uint32_t n = down(path.node[path.depth - 1], !forward);
  if (n != 0) {
    for (; n != 0; n = down(n, forward)) path.node[path.depth++] = n;
    return path.node[path.depth - 1];
  }
  while (path.depth > 1) {
    const uint32_t child = path.node[--path.depth];
    if (down(path.node[path.depth - 1], forward) == child) return path.node[path.depth - 1];
  }
  path.depth = 0;
  return 0;
}

// Fill `out` with the two nodes before `lo` and the two after, in address
// order (0 where none).
void AccessTree::neighbours(uint64_t lo, uint32_t out[4]) const {
  Path down;
  descend(lo, down);  // once: both sides step from a copy of this path
  for (int side = 0; side < 2; ++side) {
    const bool forward = side == 1;
    Path path = down;
    uint32_t first = 0;
    if (path.depth != 0) {
      const uint64_t last = m_pool[path.node[path.depth - 1]].lo;
      first = (forward ? last > lo : last < lo) ? path.node[path.depth - 1] : step(path, forward);
    }
    out[2 * side] = first;
    out[2 * side + 1] = first != 0 ? step(path, forward) : 0;
  }
}

uint32_t AccessTree::find(uint64_t lo) const {
  uint32_t n = m_root;
  while (n != 0 && m_pool[n].lo != lo) n = lo < m_pool[n].lo ? m_pool[n].left() : m_pool[n].right();
  return n;
}


uint32_t AccessTree::rotate_left(uint32_t n) {
  const uint32_t r = m_pool[n].right();
  set_right(n, m_pool[r].left());
  set_left(r, n);
  update_max(n);
  update_max(r);
  return r;
}

uint32_t AccessTree::rotate_right(uint32_t n) {
  const uint32_t l = m_pool[n].left();
  set_left(n, m_pool[l].right());
  set_right(l, n);
  update_max(n);
  update_max(l);
  return l;
}

// Rebalance `n`, whose right subtree is 2 higher than its left; `same`: the
// subtree's height did not change (only after an erase).
uint32_t AccessTree::fix_right(uint32_t n, bool& same) {
  const uint32_t r = m_pool[n].right();
  const int br = m_pool[r].balance();
  if (br >= 0) {
    const uint32_t top = rotate_left(n);
    set_balance(n, br == 0 ? 1 : 0);
    set_balance(top, br == 0 ? -1 : 0);
    same = br == 0;
    return top;
  }
  const uint32_t rl = m_pool[r].left();
  const int b = m_pool[rl].balance();
  set_right(n, rotate_right(r));
  const uint32_t top = rotate_left(n);
  set_balance(n, b == 1 ? -1 : 0);
  set_balance(r, b == -1 ? 1 : 0);
  set_balance(top, 0);
  same = false;
  return top;
}

uint32_t AccessTree::fix_left(uint32_t n, bool& same) {
  const uint32_t l = m_pool[n].left();
  const int bl = m_pool[l].balance();
  if (bl <= 0) {
    const uint32_t top = rotate_right(n);
    set_balance(n, bl == 0 ? -1 : 0);
    set_balance(top, bl == 0 ? 1 : 0);
    same = bl == 0;
    return top;
  }
  const uint32_t lr = m_pool[l].right();
  const int b = m_pool[lr].balance();
  set_left(n, rotate_left(l));
  const uint32_t top = rotate_right(n);
  set_balance(n, b == -1 ? 1 : 0);
  set_balance(l, b == 1 ? -1 : 0);
  set_balance(top, 0);
  same = false;
  return top;
}

uint32_t AccessTree::insert_at(uint32_t n, uint32_t x, bool& grew) {
  if (n == 0) {
    grew = true;
    return x;
  }
  Node& node = m_pool[n];
  node.max_end = std::max(node.max_end, m_pool[x].max_end);
  if (m_pool[x].lo < node.lo) {
    set_left(n, insert_at(m_pool[n].left(), x, grew));
    if (!grew) return n;
    const int b = m_pool[n].balance() - 1;
    if (b == -2) {
      bool same = false;
      grew = false;
      return fix_left(n, same);
    }
    set_balance(n, b);
    grew = b == -1;
    return n;
  }
  set_right(n, insert_at(m_pool[n].right(), x, grew));
  if (!grew) return n;
  const int b = m_pool[n].balance() + 1;
  if (b == 2) {
    bool same = false;
    grew = false;
    return fix_right(n, same);
  }
  set_balance(n, b);
  grew = b == 1;
  return n;
}

uint32_t AccessTree::left_shrank(uint32_t n, bool& shrank) {
  const int b = m_pool[n].balance() + 1;
  if (b == 2) {
    bool same = false;
    const uint32_t top = fix_right(n, same);
    shrank = !same;
    return top;
  }
  set_balance(n, b);
  update_max(n);
  shrank = b == 0;
  return n;
}

uint32_t AccessTree::right_shrank(uint32_t n, bool& shrank) {
  const int b = m_pool[n].balance() - 1;
  if (b == -2) {
    bool same = false;
    const uint32_t top = fix_left(n, same);
    shrank = !same;
    return top;
  }
  set_balance(n, b);
  update_max(n);
  shrank = b == 0;
  return n;
}

uint32_t AccessTree::detach_min(uint32_t n, uint32_t& min, bool& shrank) {
  if (m_pool[n].left() == 0) {
    min = n;
    shrank = true;
    return m_pool[n].right();
  }
  set_left(n, detach_min(m_pool[n].left(), min, shrank));
  if (shrank) return left_shrank(n, shrank);
  update_max(n);
  return n;
}

uint32_t AccessTree::erase_at(uint32_t n, uint64_t lo, bool& shrank) {
  if (n == 0) {
    shrank = false;
    return 0;
  }
  if (lo < m_pool[n].lo) {
    set_left(n, erase_at(m_pool[n].left(), lo, shrank));
    if (shrank) return left_shrank(n, shrank);
    update_max(n);
    return n;
  }
  if (lo > m_pool[n].lo) {
    set_right(n, erase_at(m_pool[n].right(), lo, shrank));
    if (shrank) return right_shrank(n, shrank);
    update_max(n);
    return n;
  }
  const uint32_t l = m_pool[n].left(), r = m_pool[n].right();
  if (l == 0 || r == 0) {
    release(n);
    shrank = true;
    return l != 0 ? l : r;
  }
  // The successor takes n's place (relinked, so node indices stay valid).
  uint32_t m = 0;
  const uint32_t rest = detach_min(r, m, shrank);
  set_left(m, l);
  set_right(m, rest);
  set_balance(m, m_pool[n].balance());
  release(n);
  if (shrank) return right_shrank(m, shrank);
  update_max(m);
  return m;
}

void AccessTree::tree_insert(uint32_t n) {
  bool grew = false;
  m_root = insert_at(m_root, n, grew);
}

void AccessTree::tree_erase(uint64_t lo) {
  bool shrank = false;
  m_root = erase_at(m_root, lo, shrank);
}

// ---------------------------------------------------------------------------
// Invariants

int AccessTree::check_node(uint32_t n, std::size_t& count) const {
  if (n == 0) return 0;
  if (n >= m_pool.size() || m_pool[n].size == 0) throw std::logic_error("AccessTree: node count: a free node is linked");
  if (++count > m_nodes) throw std::logic_error("AccessTree: node count: more nodes linked than counted");
  const Node& x = m_pool[n];
  const int hl = check_node(x.left(), count), hr = check_node(x.right(), count);
  if (hr - hl != x.balance() || hr - hl < -1 || hr - hl > 1)
    throw std::logic_error("AccessTree: balance: node at " + std::to_string(x.lo) + " has heights " +
                           std::to_string(hl) + "/" + std::to_string(hr));
  if ((x.count_m1 == 0) != (x.distance == 0) || (x.count_m1 != 0 && x.distance <= x.size))
    throw std::logic_error("AccessTree: canonical form: node at " + std::to_string(x.lo));
  uint64_t span = 0;
  if (mul_overflows(x.count_m1, x.distance, span) || add_overflows(span, x.size, span) ||
      add_overflows(span, x.lo, span))
    throw std::logic_error("AccessTree: canonical form: node at " + std::to_string(x.lo) + " passes 2^64");
  const uint64_t max = std::max({x.end(), m_pool[x.left()].max_end, m_pool[x.right()].max_end});
  if (x.max_end != max) throw std::logic_error("AccessTree: augmentation: node at " + std::to_string(x.lo));
  return 1 + std::max(hl, hr);
}

void AccessTree::check_invariants() const {
  std::size_t count = 0;
  check_node(m_root, count);
  if (count != m_nodes) throw std::logic_error("AccessTree: node count: linked " + std::to_string(count) +
                                               ", counted " + std::to_string(m_nodes));
  std::size_t free = 0;
  for (uint32_t n = m_free; n != 0; n = m_pool[n].left_word)
    if (++free > m_pool.size()) throw std::logic_error("AccessTree: node count: free list loops");
  if (free + m_nodes + 1 != m_pool.size()) throw std::logic_error("AccessTree: node count: pool leaks nodes");
  std::vector<Fragment> all;
  for_each([&](const Fragment& f) { all.push_back(f); });
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Strided& a = all[i].where;
    if (i + 1 < all.size() && all[i + 1].where.lo <= a.lo)
      throw std::logic_error("AccessTree: ordering: " + std::to_string(all[i + 1].where.lo) + " after " +
                             std::to_string(a.lo));
    const uint64_t end = end_of(a);
    for (std::size_t k = i + 1; k < all.size() && all[k].where.lo < end; ++k)
      if (overlap_canonical(a, all[k].where, true).bytes != 0)
        throw std::logic_error("AccessTree: disjointness: fragments at " + std::to_string(a.lo) + " and " +
                               std::to_string(all[k].where.lo) + " share bytes");
    if (i + 1 < all.size()) {
      const Fragment& b = all[i + 1];
      if (a.count == 1 && b.where.count == 1 && end == b.where.lo && all[i].type == b.type &&
          tags_mergeable(all[i].tag, b.tag))
        throw std::logic_error("AccessTree: merging: adjacent blocks at " + std::to_string(a.lo) + " and " +
                               std::to_string(b.where.lo) + " left apart");
    }
  }
}

}  // namespace smtrace::analyzer
