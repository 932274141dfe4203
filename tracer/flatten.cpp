#include "tracer/flatten.hpp"

#include <algorithm>
#include <limits>

namespace smtrace::tracer {

using format::DatatypeDef;
using format::Run;
using format::TypeCount;

namespace {

uint64_t blocks(const Run& r) { return r.count == 0 ? 1 : r.count; }

void shift(std::vector<Run>& runs, int64_t by) {
  for (auto& r : runs) r.offset += by;
}

// Accumulates the blocks of a type under construction.
struct Builder {
  std::size_t max_runs = k_max_runs;
  std::vector<Run> runs;
  std::vector<TypeCount> signature;
  bool signature_overflow = false;
  uint64_t size = 0;
  int64_t lb = std::numeric_limits<int64_t>::max();
  int64_t ub = std::numeric_limits<int64_t>::min();
  bool overflow = false;

  void add_signature(const std::vector<TypeCount>& sig, uint64_t times) {
    if (times == 0 || sig.empty()) return;
    if (sig.size() == 1) {
      append(TypeCount{sig[0].type, sig[0].count * times});
      return;
    }
    for (uint64_t i = 0; i < times && !signature_overflow; ++i)
      for (const auto& tc : sig) append(tc);
  }
  void append(const TypeCount& tc) {
    if (signature_overflow) return;
    if (!signature.empty() && signature.back().type == tc.type) {
      signature.back().count += tc.count;
    } else if (signature.size() >= k_max_signature) {
      signature_overflow = true;
    } else {
      signature.push_back(tc);
    }
  }
  void bound(int64_t lo, int64_t hi) {
    lb = std::min(lb, lo);
    ub = std::max(ub, hi);
  }
  void add_runs(std::vector<Run> more) {
    if (overflow) return;
    if (runs.size() + more.size() > max_runs) {
      overflow = true;
      runs.clear();
      return;
    }
    runs.insert(runs.end(), more.begin(), more.end());
  }

  // Place `copies` consecutive elements of `child` at byte `disp`.
  void place(const DatatypeDef& child, int64_t disp, uint64_t copies) {
    if (copies == 0) return;
    bool over = false;
    auto r = replicate(child.runs, copies, child.extent, max_runs, over);
    if (over) overflow = true;
    shift(r, disp);
    add_runs(std::move(r));
    add_signature(child.signature, copies);
    size += child.size * copies;
    int64_t span = child.extent * static_cast<int64_t>(copies);
    bound(disp + child.lb, disp + child.lb + span);
    if (child.truncated) overflow = true;
  }

  // Place `count` strided blocks of `blocklen` children, `stride` bytes apart.
  void place_strided(const DatatypeDef& child, uint64_t count, uint64_t blocklen, int64_t stride) {
    if (count == 0 || blocklen == 0) return;
    bool over = false;
    auto block = replicate(child.runs, blocklen, child.extent, max_runs, over);
    auto r = replicate(block, count, stride, max_runs, over);
    if (over) overflow = true;
    add_runs(std::move(r));
    add_signature(child.signature, blocklen * count);
    size += child.size * blocklen * count;
    int64_t span = child.extent * static_cast<int64_t>(blocklen);
    int64_t last = stride * static_cast<int64_t>(count - 1);
    bound(std::min<int64_t>(0, last) + child.lb, std::max<int64_t>(0, last) + child.lb + span);
    if (child.truncated) overflow = true;
  }

  DatatypeDef finish() {
    DatatypeDef d;
    if (lb > ub) lb = ub = 0;  // empty type
    d.size = size;
    d.lb = lb;
    d.extent = ub - lb;
    if (signature_overflow) signature = {TypeCount{4 /* BASIC_BYTE */, size}};
    d.signature = std::move(signature);
    if (overflow) {
      d.truncated = true;
      d.runs = {Run{d.lb, static_cast<uint64_t>(d.extent), 1, 0}};
    } else {
      compact(runs);
      d.runs = std::move(runs);
    }
    return d;
  }
};

int64_t at(const std::vector<int64_t>& v, std::size_t i) { return i < v.size() ? v[i] : 0; }

}  // namespace

DatatypeDef basic_type_def(uint32_t basic, uint64_t size) {
  DatatypeDef d;
  d.id = basic;
  d.size = size;
  d.lb = 0;
  d.extent = static_cast<int64_t>(size);
  if (size) d.runs = {Run{0, size, 1, 0}};
  d.signature = {TypeCount{basic, 1}};
  d.committed = true;
  return d;
}

std::vector<Run> replicate(const std::vector<Run>& runs, uint64_t times, int64_t step,
                           std::size_t max_runs, bool& overflow) {
  if (times == 0 || runs.empty()) return {};
  if (times == 1) return runs;
  if (runs.size() == 1) {
    Run r = runs[0];
    uint64_t n = blocks(r);
    if (n == 1) {
      if (static_cast<int64_t>(r.length) == step) return {Run{r.offset, r.length * times, 1, 0}};
      return {Run{r.offset, r.length, times, step}};
    }
    if (r.stride * static_cast<int64_t>(n) == step) {  // the strided run just goes on
      if (static_cast<int64_t>(r.length) == r.stride)
        return {Run{r.offset, r.length * n * times, 1, 0}};
      return {Run{r.offset, r.length, n * times, r.stride}};
    }
  }
  bool all_single = std::all_of(runs.begin(), runs.end(), [](const Run& r) { return blocks(r) == 1; });
  if (all_single) {
    // One strided run per block: exact, and as long as the input.
    std::vector<Run> out;
    out.reserve(runs.size());
    for (const auto& r : runs) {
      if (static_cast<int64_t>(r.length) == step) out.push_back(Run{r.offset, r.length * times, 1, 0});
      else out.push_back(Run{r.offset, r.length, times, step});
    }
    return out;
  }
  if (runs.size() * times > max_runs) {
    overflow = true;
    return {};
  }
  std::vector<Run> out;
  out.reserve(runs.size() * times);
  for (uint64_t i = 0; i < times; ++i)
    for (Run r : runs) {
      r.offset += step * static_cast<int64_t>(i);
      out.push_back(r);
    }
  return out;
}

void compact(std::vector<Run>& runs) {
  for (auto& r : runs)
    if (r.count == 0) r.count = 1;
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.offset < b.offset; });
  std::vector<Run> out;
  out.reserve(runs.size());
  for (const Run& r : runs) {
    if (r.length == 0) continue;
    if (!out.empty()) {
      Run& p = out.back();
      int64_t p_end = p.offset + static_cast<int64_t>(p.length);
      if (p.count == 1 && r.count == 1 && p_end == r.offset) {  // adjacent blocks
        p.length += r.length;
        continue;
      }
      if (r.count == 1 && p.length == r.length) {
        if (p.count == 1 && r.offset > p_end) {  // two equal blocks: start a strided run
          p.stride = r.offset - p.offset;
          p.count = 2;
          continue;
        }
        if (p.count > 1 && r.offset == p.offset + p.stride * static_cast<int64_t>(p.count)) {
          ++p.count;
          continue;
        }
      }
    }
    Run c = r;
    if (c.count == 1) c.stride = 0;
    out.push_back(c);
  }
  runs = std::move(out);
}

DatatypeDef flatten(const TypeDescription& d, std::size_t max_runs) {
  Builder b;
  b.max_runs = max_runs;
  const auto& ints = d.ints;
  const auto& addrs = d.addrs;
  const DatatypeDef* child = d.children.empty() ? nullptr : d.children[0];
  DatatypeDef unknown;
  if (!child) child = &unknown;
  auto count = static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 0)));
  switch (d.combiner) {
    case Combiner::contiguous:
      b.place(*child, 0, count);
      break;
    case Combiner::vector:
      b.place_strided(*child, count, static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1))),
                      at(ints, 2) * child->extent);
      break;
    case Combiner::hvector:
      b.place_strided(*child, count, static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1))), at(addrs, 0));
      break;
    case Combiner::indexed:
      for (uint64_t i = 0; i < count; ++i)
        b.place(*child, at(ints, 1 + count + i) * child->extent,
                static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1 + i))));
      break;
    case Combiner::hindexed:
      for (uint64_t i = 0; i < count; ++i)
        b.place(*child, at(addrs, i), static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1 + i))));
      break;
    case Combiner::indexed_block:
      for (uint64_t i = 0; i < count; ++i)
        b.place(*child, at(ints, 2 + i) * child->extent, static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1))));
      break;
    case Combiner::hindexed_block:
      for (uint64_t i = 0; i < count; ++i)
        b.place(*child, at(addrs, i), static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1))));
      break;
    case Combiner::structure:
      for (uint64_t i = 0; i < count; ++i) {
        const DatatypeDef* c = i < d.children.size() && d.children[i] ? d.children[i] : &unknown;
        b.place(*c, at(addrs, i), static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1 + i))));
      }
      break;
    case Combiner::subarray: {
      auto n = static_cast<std::size_t>(std::max<int64_t>(0, at(ints, 0)));
      bool fortran = at(ints, 1 + 3 * n) == 1;
      // Dimensions from the slowest to the fastest varying one.
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = fortran ? n - 1 - i : i;
      std::vector<int64_t> stride(n);
      int64_t s = child->extent;
      for (std::size_t k = n; k-- > 0;) {
        stride[k] = s;
        s *= at(ints, 1 + order[k]);
      }
      int64_t total_extent = s;
      bool over = false;
      uint64_t elements = 1;
      std::vector<Run> cur = child->runs;
      for (std::size_t k = n; k-- > 0;) {
        auto dim = order[k];
        auto sub = static_cast<uint64_t>(std::max<int64_t>(0, at(ints, 1 + n + dim)));
        cur = replicate(cur, sub, stride[k], max_runs, over);
        shift(cur, at(ints, 1 + 2 * n + dim) * stride[k]);
        elements *= sub;
      }
      if (over || child->truncated) b.overflow = true;
      b.add_runs(std::move(cur));
      b.add_signature(child->signature, elements);
      b.size = child->size * elements;
      b.bound(0, total_extent);
      break;
    }
    case Combiner::resized: {
      b.place(*child, 0, 1);
      b.lb = at(addrs, 0);
      b.ub = b.lb + at(addrs, 1);
      break;
    }
    case Combiner::dup:
      b.place(*child, 0, 1);
      break;
    case Combiner::other:
      b.overflow = true;
      break;
  }
  return b.finish();
}

}  // namespace smtrace::tracer
