// The memory accesses of one rank (one class of accesses that share a
// lifetime) as byte-disjoint, typed fragments, for the rma-race check.
//
// Implements the insertion of seed 000 (Vinayagame, "Rethinking Data Race
// Detection in RMA-Analyzer": fragmentation, Algorithm 2, and merging,
// Algorithm 3) over the strided nodes of seed 004 (PARCOACH's "merging
// non-adjacent accesses", section 3.1: Size and Distance, fragmentation of
// Fig. 7, merging by batches of three). Unlike both references, the tree is
// an interval tree: an AVL tree keyed on a fragment's first byte, each node
// augmented with the largest hull end of its subtree, so a query finds every
// fragment whose bytes meet the access (interlaced strided fragments whose
// hulls overlap included) in O(log n + h), h the fragments whose hulls meet
// the access's hull. The merging rules and the cases the papers leave open are
// written down at the top of access_tree.cpp.
//
// Thread safety: none; const members may run concurrently with each other.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace smtrace::analyzer {

// Bit 0: write; bit 1: RMA (seed 000 Fig. 7 is the OR of the two bits).
enum class AccessType : uint8_t { local_read = 0, local_write = 1, rma_read = 2, rma_write = 3 };

// Return the type of bytes accessed with `old_type` and then `new_type`
// (seed 000 Fig. 7: RMA prevails over local, write over read; LW + RR -> RW).
AccessType combine(AccessType old_type, AccessType new_type);
// Return true when two unordered accesses of types `a` and `b` to the same
// bytes race: at least one is RMA and at least one writes.
bool conflicts(AccessType a, AccessType b);
// Return "Local_Read", "Local_Write", "RMA_Read" or "RMA_Write".
std::string_view access_type_name(AccessType type);

// `count` blocks of `size` bytes, block k at lo + k * distance (distance >=
// size when count > 1; distance is ignored when count == 1). size > 0,
// count > 0. An empty Strided (size or count 0) accesses nothing. Blocks that
// touch or overlap (distance <= size) are one contiguous block. Addresses run
// from 0 to 2^64 - 2: bytes at 2^64 - 1 and beyond are dropped.
struct Strided {
  uint64_t lo = 0;
  uint64_t size = 0;
  uint64_t distance = 0;
  uint64_t count = 1;
  bool operator==(const Strided&) const = default;
};

// Return one past the last byte of `where`'s last block (saturating at 2^64 - 1).
uint64_t hull_end(const Strided& where);
// Return the number of bytes `where` accesses (saturating at 2^64 - 1).
uint64_t total_bytes(const Strided& where);

// The bytes two Strided have in common.
struct Overlap {
  uint64_t lo = 0, hi = 0;  // the first run of common bytes [lo, hi); empty when bytes == 0
  uint64_t bytes = 0;       // all common bytes
};
// Return the bytes `a` and `b` have in common. O(1) when either is one block
// or both have the same distance; otherwise O(blocks of the sparser one
// inside the other's hull).
Overlap overlap(const Strided& a, const Strided& b);
// Return true when `a` and `b` share a byte (overlap() that stops at the first).
bool intersects(const Strided& a, const Strided& b);

// One stored fragment the new access overlaps with a conflicting type.
struct TreeConflict {
  uint32_t old_tag = 0;
  AccessType old_type{};  // the fragment's tag and type
  uint64_t lo = 0, hi = 0;  // the first overlapping bytes [lo, hi) of that fragment with the access
  uint64_t bytes = 0;       // how many bytes of the fragment the access overlaps
};

// The fragments of one tree; see the file comment.
class AccessTree {
 public:
  // How the tags of two same-type pieces combine when they merge (or when an
  // intersection's type comes from both or from neither access). Must be
  // deterministic; merge(t, t) is taken to be t and not called. Default:
  // keep the newer tag (Algorithm 3: Acc.Dbg).
  using TagMerge = uint32_t (*)(void* context, uint32_t old_tag, uint32_t new_tag);
  // any_tag: same-type pieces merge whatever their tags (the tag from
  // TagMerge); same_tag_only: only pieces with equal tags merge (seed 004:
  // "with the same debug information").
  enum class MergePolicy : uint8_t { any_tag, same_tag_only };

  struct Fragment {
    Strided where;  // canonical: count == 1 -> distance == 0; count > 1 -> distance > size
    AccessType type;
    uint32_t tag;
  };

  explicit AccessTree(MergePolicy policy = MergePolicy::any_tag, TagMerge merge = nullptr,
                      void* context = nullptr);

  // Insert an access of `type` tagged `tag` (the caller's index of the
  // access). First append to `conflicts` (if not null), in address order,
  // one entry per stored fragment whose bytes meet the access's bytes with
  // conflicts(fragment type, type); then fragment and merge: afterwards stored
  // fragments are byte-disjoint, each byte's type is combine() over all
  // accesses to it, and same-type neighbours are merged where the rules allow.
  // Cost: O(log n + h) plus the blocks of the access and of the fragments it
  // meets that lie inside each other's hulls (see access_tree.cpp).
  void insert(const Strided& where, AccessType type, uint32_t tag, std::vector<TreeConflict>* conflicts);

  // Call `visit(const Fragment&)` on every stored fragment whose bytes meet
  // `where`'s bytes (not only hulls), in address order.
  template <class F>
  void query(const Strided& where, F&& visit) const;
  // Call `visit(const Fragment&)` on every fragment in address order.
  template <class F>
  void for_each(F&& visit) const;

  // Remove every fragment (the node pool keeps its capacity for reuse).
  void clear();
  std::size_t nodes() const { return m_nodes; }         // fragments stored now
  std::size_t peak_nodes() const { return m_peak; }     // most at once since construction/clear
  uint64_t inserts() const { return m_inserts; }         // insert() calls since construction/clear
  std::size_t bytes_per_node() const;                    // sizeof the node as stored
  std::size_t memory_bytes() const;                      // what the tree holds now (pool and scratch)
  MergePolicy policy() const { return m_policy; }

  // Throw std::logic_error naming the broken invariant: ordering, balance,
  // augmentation, node count, canonical form, disjointness, merging (two
  // adjacent one-block fragments that the policy would merge).
  void check_invariants() const;

 private:
  // 48 bytes. A child word holds a 30-bit node index (0 = none); the left
  // word's top 2 bits hold the type, the right word's the AVL balance + 1.
  struct Node {
    uint64_t lo = 0;
    uint64_t size = 0;       // 0 marks a free node
    uint64_t distance = 0;   // 0 when count == 1
    uint64_t max_end = 0;    // largest hull end in this subtree
    uint32_t count_m1 = 0;   // count - 1: counts up to 2^32
    uint32_t tag = 0;
    uint32_t left_word = 0;
    uint32_t right_word = 0;

    static constexpr uint32_t k_index_mask = (1u << 30) - 1;
    uint32_t left() const { return left_word & k_index_mask; }
    uint32_t right() const { return right_word & k_index_mask; }
    AccessType type() const { return static_cast<AccessType>(left_word >> 30); }
    int balance() const { return static_cast<int>(right_word >> 30) - 1; }
    uint64_t count() const { return uint64_t{count_m1} + 1; }
    uint64_t end() const { return lo + uint64_t{count_m1} * distance + size; }
    Strided where() const { return {lo, size, distance, count()}; }
  };
  // A piece on its way into the tree.
  struct Piece {
    Strided where;
    AccessType type;
    uint32_t tag;
    bool fresh;  // carries the access being inserted (its tag is the newer one)
  };
  // The next block of a fragment being cut (fragment()).
  struct Cursor {
    uint64_t lo;        // the next block's first byte
    uint64_t size, distance;
    uint64_t left;      // blocks still to come, this one included
    AccessType type;
    uint32_t tag;
  };

  template <class F>
  void visit_hits(uint32_t n, const Strided& where, uint64_t end, F& visit) const;
  template <class F>
  void visit_all(uint32_t n, F& visit) const;

  void insert_piece(const Strided& where, AccessType type, uint32_t tag, std::vector<TreeConflict>* conflicts);
  void collect_hits(uint32_t n, const Strided& where, uint64_t end, std::vector<uint32_t>& out) const;
  void report_conflicts(const std::vector<Strided>& pieces, AccessType type, std::vector<TreeConflict>& out) const;
  bool append_to_finger(const Strided& where, AccessType type, uint32_t tag);
  void fragment(const Strided& where, AccessType type, uint32_t tag);
  void compress();
  void place(Piece piece);
  bool extend_recent(const Piece& piece);
  bool try_peel(Piece& piece, const uint32_t* candidates, int n);
  bool try_triple(Piece& piece, uint32_t& home, const uint32_t* candidates, int n);
  bool tags_mergeable(uint32_t a, uint32_t b) const { return m_policy == MergePolicy::any_tag || a == b; }
  uint32_t merge_tags(uint32_t old_tag, uint32_t new_tag) const;
  bool live(uint32_t n) const { return n != 0 && n < m_pool.size() && m_pool[n].size != 0; }

  // The AVL tree over m_pool.
  uint32_t alloc(const Strided& where, AccessType type, uint32_t tag);
  void release(uint32_t n);
  void tree_insert(uint32_t n);
  void tree_erase(uint64_t lo);
  void raise_end(uint64_t lo, uint64_t end);
  void set_left(uint32_t n, uint32_t child) {
    m_pool[n].left_word = (m_pool[n].left_word & ~Node::k_index_mask) | child;
  }
  void set_right(uint32_t n, uint32_t child) {
    m_pool[n].right_word = (m_pool[n].right_word & ~Node::k_index_mask) | child;
  }
  void set_balance(uint32_t n, int balance) {
    m_pool[n].right_word = m_pool[n].right() | (static_cast<uint32_t>(balance + 1) << 30);
  }
  void set_type(uint32_t n, AccessType type) {
    m_pool[n].left_word = m_pool[n].left() | (static_cast<uint32_t>(type) << 30);
  }
  void set_where(uint32_t n, const Strided& where);
  void update_max(uint32_t n);
  uint32_t insert_at(uint32_t n, uint32_t x, bool& grew);
  uint32_t erase_at(uint32_t n, uint64_t lo, bool& shrank);
  uint32_t detach_min(uint32_t n, uint32_t& min, bool& shrank);
  uint32_t rotate_left(uint32_t n);
  uint32_t rotate_right(uint32_t n);
  uint32_t fix_left(uint32_t n, bool& same);
  uint32_t fix_right(uint32_t n, bool& same);
  uint32_t left_shrank(uint32_t n, bool& shrank);
  uint32_t right_shrank(uint32_t n, bool& shrank);
  struct Path;
  void descend(uint64_t lo, Path& path) const;
  uint32_t step(Path& path, bool forward) const;
  void neighbours(uint64_t lo, uint32_t out[4]) const;
  uint32_t find(uint64_t lo) const;
  void touch(uint32_t n);
  int check_node(uint32_t n, std::size_t& count) const;

  MergePolicy m_policy;
  TagMerge m_merge;
  void* m_context;
  std::vector<Node> m_pool;           // [0] is the null node
  uint32_t m_free = 0;                // free list through left_word
  uint32_t m_root = 0;
  uint32_t m_finger = 0;              // the node last placed or extended
  static constexpr int k_recent = 4;
  uint32_t m_recent[k_recent] = {};   // fingers before it (hints: checked with live())
  int m_recent_next = 0;
  std::size_t m_nodes = 0;
  std::size_t m_peak = 0;
  uint64_t m_inserts = 0;
  // Scratch of insert(), kept to avoid allocations.
  std::vector<uint32_t> m_hits;
  std::vector<Fragment> m_hit_fragments;
  std::vector<Piece> m_pieces;
  std::vector<Piece> m_out;
  std::vector<Strided> m_split;
  std::vector<Cursor> m_cursors;
  std::vector<std::pair<uint64_t, uint64_t>> m_ranges;
};

// Split `where` into canonical pieces (at most 2^32 blocks each, inside the
// address space), appending them to `out` in address order.
void canonical_pieces(const Strided& where, std::vector<Strided>& out);
// Return true and set `out` when `where` is one canonical piece (the common case).
bool canonical_piece(const Strided& where, Strided& out);

template <class F>
void AccessTree::visit_hits(uint32_t n, const Strided& where, uint64_t end, F& visit) const {
  while (n != 0) {
    const Node& x = m_pool[n];
    if (x.max_end <= where.lo) return;
    if (x.left() != 0) visit_hits(x.left(), where, end, visit);
    if (x.lo >= end) return;
    if (x.end() > where.lo && intersects(x.where(), where)) visit(Fragment{x.where(), x.type(), x.tag});
    n = x.right();
  }
}

template <class F>
void AccessTree::visit_all(uint32_t n, F& visit) const {
  while (n != 0) {
    const Node& x = m_pool[n];
    if (x.left() != 0) visit_all(x.left(), visit);
    visit(Fragment{x.where(), x.type(), x.tag});
    n = x.right();
  }
}

template <class F>
void AccessTree::query(const Strided& where, F&& visit) const {
  Strided piece;
  if (canonical_piece(where, piece)) {
    visit_hits(m_root, piece, hull_end(piece), visit);
    return;
  }
  // Rare: an access split for the address space or the 2^32-block limit.
  std::vector<Strided> pieces;
  canonical_pieces(where, pieces);
  std::vector<uint32_t> hits;
  for (const Strided& p : pieces) collect_hits(m_root, p, hull_end(p), hits);
  std::vector<Fragment> fragments;
  for (uint32_t n : hits) fragments.push_back({m_pool[n].where(), m_pool[n].type(), m_pool[n].tag});
  std::sort(fragments.begin(), fragments.end(),
            [](const Fragment& a, const Fragment& b) { return a.where.lo < b.where.lo; });
  for (std::size_t i = 0; i < fragments.size(); ++i)
    if (i == 0 || fragments[i].where.lo != fragments[i - 1].where.lo) visit(fragments[i]);
}

template <class F>
void AccessTree::for_each(F&& visit) const {
  visit_all(m_root, visit);
}

}  // namespace smtrace::analyzer
