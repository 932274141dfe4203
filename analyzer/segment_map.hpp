// Disjoint segments of memory with the number of pending readers and
// writers: local-concurrency's footprint of a rank's pending operations
// (checks/local_concurrency.cpp), here so that its small-vector form can
// be tested against the map alone (tests/unit/test_analyzer_core.cpp).
// Thread safety: none (one per rank pass).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace smtrace::analyzer {

// How a pending operation or an access uses bytes.
enum class AccessMode : uint8_t { read, write };

// While every segment was added whole, meeting no other (buffers of the
// pending operations disjoint: the common case) and there are few (at most
// `MaxFew`), they are kept in a small vector and searched linearly; the
// first add that meets a segment, or one too many, moves them into the
// ordered map, which serves until it is empty again. The vector holds
// exactly the segments the map would, and each operation below does to
// them what the map's does, so results (the bytes a conflict names) are
// the same. A piece of the vector keeps its place until it is removed (a
// removed one leaves a hole; the holes are squeezed out only when the
// vector is full of pieces and holes, and go when the last piece does):
// add and add_apart return the place (+ 1) they put a segment in, and
// remove, given it back, finds the segment there without a search.
// `MaxFew` 0: the map alone (the tests' reference).
template <std::size_t MaxFew = 16>
class BasicSegmentMap {
 public:
  using Mode = AccessMode;

  // Add [lo, hi) of `mode`; return 1 + the place of the small vector it
  // went to whole, or 0 (the map, or an empty range).
  uint32_t add(uint64_t lo, uint64_t hi, Mode mode) {
    if (m_segs.empty()) {
      if (lo < hi && m_live < MaxFew && apart_from_few(lo, hi)) return push_few(lo, hi, mode);
      for (const Piece& p : few())
        if (!hole(p)) make(m_segs.lower_bound(p.lo), p.lo, p.seg);
      clear_few();
    }
    // Common case: [lo, hi) meets no segment; one search and one insertion
    // (what the general path below does then, without its searches).
    const auto after = m_segs.lower_bound(lo);
    if (lo < hi && (after == m_segs.end() || after->first >= hi) &&
        (after == m_segs.begin() || std::prev(after)->second.end <= lo)) {
      Seg seg{hi, 0, 0};
      bump(seg, mode, +1);
      make(after, lo, seg);
      return 0;
    }
    split(lo);
    split(hi);
    uint64_t cur = lo;
    auto it = m_segs.lower_bound(lo);
    while (cur < hi) {
      if (it == m_segs.end() || it->first > cur) {
        const uint64_t next = (it != m_segs.end() && it->first < hi) ? it->first : hi;
        it = make(it, cur, Seg{next, 0, 0});
      }
      bump(it->second, mode, +1);
      cur = it->second.end;
      ++it;
    }
    return 0;
  }

  // Add [lo, hi) of `mode` when it is a segment of the small vector's
  // kind (add would put it there: nonempty, meeting no segment, one more
  // fits) and return 1 + its place; else change nothing and return 0. Such
  // a range meets no segment, so conflict() would find nothing in it.
  [[gnu::always_inline]] uint32_t add_apart(uint64_t lo, uint64_t hi, Mode mode) {
    if (!m_segs.empty() || lo >= hi || m_live >= MaxFew || !apart_from_few(lo, hi)) return 0;
    return push_few(lo, hi, mode);
  }

  // Remove [lo, hi) of `mode` (added before, maybe with others). `place`:
  // what the add of [lo, hi) returned, or 0 (a search then).
  [[gnu::always_inline]] void remove(uint64_t lo, uint64_t hi, Mode mode, uint32_t place = 0) {
    // The usual case first: the piece that is [lo, hi) (an operation's own
    // block) where its add put it; the pieces are disjoint, so it is the
    // only one remove_other would touch.
    if (place - 1 < m_slots) {  // (0 - 1: none)
      Piece& p = m_few[place - 1];
      if (p.lo == lo && p.seg.end == hi) {
        bump(p.seg, mode, -1);
        if (p.seg.readers == 0 && p.seg.writers == 0) drop_few(p);
        return;
      }
    }
    remove_other(lo, hi, mode);
  }

 private:
  [[gnu::noinline]] void remove_other(uint64_t lo, uint64_t hi, Mode mode) {
    if (m_live != 0) {
      if (Piece* p = find_few(lo); p && p->seg.end == hi) {
        bump(p->seg, mode, -1);
        if (p->seg.readers == 0 && p->seg.writers == 0) drop_few(*p);
        return;
      }
      for (Piece& q : few()) {
        if (hole(q) || q.lo < lo || q.lo >= hi) continue;
        bump(q.seg, mode, -1);
        if (q.seg.readers == 0 && q.seg.writers == 0) drop_few(q);
        if (m_live == 0) return;
      }
      return;
    }
    for (auto it = m_segs.lower_bound(lo); it != m_segs.end() && it->first < hi;) {
      bump(it->second, mode, -1);
      it = (it->second.readers == 0 && it->second.writers == 0) ? drop(it) : std::next(it);
    }
  }

 public:

  // Return the first bytes of [lo, hi) that an access of `mode` may not
  // touch, if any: pending receive buffers always, pending send buffers
  // for writes.
  std::optional<std::pair<uint64_t, uint64_t>> conflict(uint64_t lo, uint64_t hi, Mode mode) const {
    if (m_live != 0) {
      // Outside the pieces' hull: the loop below would visit none.
      if (hi <= m_few_lo || lo >= m_few_hi) return std::nullopt;
      // The segments the map's loop visits: the one holding lo, those
      // beginning in (lo, hi); of those forbidding the access, the lowest.
      // (A hole begins at UINT64_MAX: never visited.)
      const Piece* first = nullptr;
      for (const Piece& p : few()) {
        const bool visited = p.lo < hi && (p.lo > lo || p.seg.end > lo);
        const bool forbids = p.seg.writers > 0 || (mode == Mode::write && p.seg.readers > 0);
        if (visited && forbids && (!first || p.lo < first->lo)) first = &p;
      }
      if (!first) return std::nullopt;
      return std::make_pair(std::max(lo, first->lo), std::min(hi, first->seg.end));
    }
    auto it = m_segs.upper_bound(lo);
    if (it != m_segs.begin() && std::prev(it)->second.end > lo) --it;
    for (; it != m_segs.end() && it->first < hi; ++it) {
      const Seg& s = it->second;
      if (s.writers > 0 || (mode == Mode::write && s.readers > 0))
        return std::make_pair(std::max(lo, it->first), std::min(hi, s.end));
    }
    return std::nullopt;
  }

  bool empty() const { return m_segs.empty() && m_live == 0; }

 private:
  struct Seg {
    uint64_t end;
    uint32_t readers;
    uint32_t writers;
  };
  struct Piece {
    uint64_t lo;
    Seg seg;
  };
  // A hole of m_few: a range no other meets or holds.
  static constexpr Piece k_hole{UINT64_MAX, Seg{0, 0, 0}};
  static bool hole(const Piece& p) { return p.seg.end == 0; }
  std::span<Piece> few() { return {m_few.data(), m_slots}; }
  std::span<const Piece> few() const { return {m_few.data(), m_slots}; }

  // Return true when [lo, hi) (nonempty) meets no piece of m_few. A range
  // outside their hull meets none (the common case: buffers posted one
  // after another at rising or falling addresses) and is not compared
  // with each.
  bool apart_from_few(uint64_t lo, uint64_t hi) const {
    if (hi <= m_few_lo || lo >= m_few_hi) return true;
    for (const Piece& p : few())
      if (p.lo < hi && lo < p.seg.end) return false;
    return true;
  }
  // Return the piece of m_few that begins at `lo`, or nullptr.
  Piece* find_few(uint64_t lo) {
    for (Piece& p : few())
      if (p.lo == lo) return &p;
    return nullptr;
  }
  // Append the piece [lo, hi) of `mode` to m_few (squeezing its holes out
  // first when it is full), widening their hull; return 1 + its place.
  [[gnu::always_inline]] uint32_t push_few(uint64_t lo, uint64_t hi, Mode mode) {
    if (m_slots >= MaxFew) squeeze_few();
    Piece p{lo, Seg{hi, 0, 0}};
    bump(p.seg, mode, +1);
    m_few_lo = std::min(m_few_lo, lo);
    m_few_hi = std::max(m_few_hi, hi);
    ++m_live;
    m_few[m_slots] = p;
    return ++m_slots;
  }
  [[gnu::noinline]] void squeeze_few() {
    m_slots = static_cast<uint32_t>(std::remove_if(m_few.begin(), m_few.begin() + m_slots, hole) - m_few.begin());
  }
  // Make piece `p` of m_few a hole; the hull stays (it may be wider than
  // the pieces left: a test against it only decides sooner) until none is
  // left.
  [[gnu::always_inline]] void drop_few(Piece& p) {
    p = k_hole;
    if (--m_live == 0) clear_few();
  }
  void clear_few() {
    m_slots = 0;
    m_live = 0;
    m_few_lo = UINT64_MAX;
    m_few_hi = 0;
  }

  static void bump(Seg& s, Mode mode, int delta) {
    uint32_t& n = mode == Mode::read ? s.readers : s.writers;
    n = static_cast<uint32_t>(static_cast<int64_t>(n) + delta);
  }

  // Make `x` a segment boundary.
  void split(uint64_t x) {
    auto it = m_segs.upper_bound(x);
    if (it == m_segs.begin()) return;
    --it;
    if (it->first < x && it->second.end > x) {
      Seg right = it->second;
      it->second.end = x;
      make(std::next(it), x, right);
    }
  }

  using Map = std::map<uint64_t, Seg>;
  // Insert (`lo`, `seg`) before `hint`, in a node of an erased segment
  // when there is one: a pending operation's segments come and go with it.
  typename Map::iterator make(typename Map::iterator hint, uint64_t lo, Seg seg) {
    if (m_spare.empty()) return m_segs.emplace_hint(hint, lo, seg);
    typename Map::node_type node = std::move(m_spare.back());
    m_spare.pop_back();
    node.key() = lo;
    node.mapped() = seg;
    return m_segs.insert(hint, std::move(node));
  }
  // Erase the segment at `it`, keeping its node; return the next one.
  typename Map::iterator drop(typename Map::iterator it) {
    if (m_spare.size() >= k_max_spare) return m_segs.erase(it);
    const auto next = std::next(it);
    m_spare.push_back(m_segs.extract(it));
    return next;
  }

  static constexpr std::size_t k_max_spare = 256;
  Map m_segs;                  // empty while m_few serves
  std::array<Piece, MaxFew> m_few;  // pieces and holes, the first m_slots
  uint32_t m_slots = 0;
  uint32_t m_live = 0;              // m_few's pieces (not holes)
  uint64_t m_few_lo = UINT64_MAX, m_few_hi = 0;  // a hull of m_few's pieces (empty: lo > hi)
  std::vector<typename Map::node_type> m_spare;
};

using SegmentMap = BasicSegmentMap<>;

}  // namespace smtrace::analyzer
