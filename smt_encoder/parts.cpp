#include "smt_encoder/parts.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/core.h>

namespace smtrace::smt {

uint32_t segment_of(const std::vector<Cut>& cuts, uint32_t rank, uint32_t event) {
  auto it = std::lower_bound(cuts.begin(), cuts.end(), event,
                             [&](const Cut& c, uint32_t e) { return c.event[rank] < e; });
  return static_cast<uint32_t>(it - cuts.begin());
}

uint32_t Part::local_op(uint32_t op) const {
  auto it = std::lower_bound(op_of.begin(), op_of.end(), op);
  return it != op_of.end() && *it == op ? static_cast<uint32_t>(it - op_of.begin()) : k_none;
}

std::pair<uint32_t, uint32_t> part_events(const Model& model, const std::vector<Cut>& cuts, uint32_t first,
                                          uint32_t last, uint32_t rank) {
  const uint32_t n = static_cast<uint32_t>(model.ranks[rank].events.size());
  if (n == 0) return {0, 0};
  return {first == 0 ? 0 : cuts[first - 1].event[rank] + 1, last < cuts.size() ? cuts[last].event[rank] + 1 : n};
}

std::vector<uint32_t> part_ops(const Model& model, const std::vector<Cut>& cuts, uint32_t first, uint32_t last) {
  std::vector<uint32_t> ops;
  for (uint32_t r = 0; r < model.ranks.size(); ++r) {
    const auto [begin, end] = part_events(model, cuts, first, last, r);
    for (uint32_t k = begin; k < end; ++k) {
      const std::span<const uint32_t> posted = model.ranks[r].posts(k);
      ops.insert(ops.end(), posted.begin(), posted.end());
    }
  }
  // Each event's posts are ascending, a rank's events' not (build_model
  // makes a rank's point-to-point ops before its collective calls'): a few
  // ascending runs (a part holds few collective calls), merged pairwise.
  std::vector<std::size_t> runs{0};
  for (std::size_t i = 1; i < ops.size(); ++i) {
    if (ops[i] < ops[i - 1]) runs.push_back(i);
  }
  runs.push_back(ops.size());
  while (runs.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t j = 0; j + 1 < runs.size(); j += 2) {
      const std::size_t end = j + 2 < runs.size() ? runs[j + 2] : runs[j + 1];
      if (j + 2 < runs.size()) {
        std::inplace_merge(ops.begin() + static_cast<std::ptrdiff_t>(runs[j]),
                           ops.begin() + static_cast<std::ptrdiff_t>(runs[j + 1]),
                           ops.begin() + static_cast<std::ptrdiff_t>(end));
      }
      merged.push_back(end);
    }
    runs = std::move(merged);
  }
  return ops;
}

namespace {

// Return the part of `model` made of segments [first, last], whose ops are
// `ops` (ascending: every op posted in those segments).
Part extract_ops(const Model& model, const std::vector<Cut>& cuts, uint32_t first, uint32_t last,
                 std::vector<uint32_t> ops) {
  Part part;
  part.first_segment = first;
  part.last_segment = last;
  Model& out = part.model;
  out.world_size = model.world_size;
  out.comm_names = model.comm_names;
  out.ranks.resize(model.ranks.size());
  part.first.assign(model.ranks.size(), 0);
  std::vector<uint32_t> end(model.ranks.size(), 0);
  for (uint32_t r = 0; r < model.ranks.size(); ++r) {
    if (model.ranks[r].events.empty()) continue;
    std::tie(part.first[r], end[r]) = part_events(model, cuts, first, last, r);
    const uint32_t begin = part.first[r];
    out.ranks[r].assign(model.ranks[r], begin, end[r]);
    out.ranks[r].limit = last < cuts.size() ? 2 * (end[r] - begin) : model.ranks[r].limit - 2 * begin;
  }
  part.op_of = std::move(ops);
  for (uint32_t i : part.op_of) {
    Op op = model.ops[i];
    const uint32_t begin = part.first[op.rank];
    op.post -= begin;
    op.done = op.done != k_none && op.done < end[op.rank] ? op.done - begin : k_none;
    op.recorded = op.recorded != k_none ? part.local_op(op.recorded) : k_none;
    if (op.kind == OpKind::recv && op.probe != k_none) op.probe = part.local_op(op.probe);
    out.ops.push_back(op);
  }
  link_ops(out);
  for (RankEvents& rank : out.ranks) {
    for (Event& e : rank.events) e.may_block = e.may_block && e.waits;
  }
  std::unordered_map<uint32_t, uint32_t> instance;  // whole model's -> the part's
  for (Op& op : out.ops) {
    if (op.kind != OpKind::coll || op.instance == k_none) continue;
    auto [it, fresh] = instance.emplace(op.instance, static_cast<uint32_t>(out.instances.size()));
    if (fresh) {
      Instance inst = model.instances[op.instance];
      for (uint32_t& m : inst.members) m = m != k_none ? part.local_op(m) : k_none;
      out.instances.push_back(std::move(inst));
    }
    op.instance = it->second;
  }
  return part;
}

}  // namespace

Part extract(const Model& model, const std::vector<Cut>& cuts, uint32_t first, uint32_t last) {
  std::vector<uint32_t> ops;
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& op = model.ops[i];
    const uint32_t segment = segment_of(cuts, op.rank, op.post);
    if (first <= segment && segment <= last) ops.push_back(i);
  }
  return extract_ops(model, cuts, first, last, std::move(ops));
}

MatchPairs restrict_pairs(const MatchPairs& whole, const Part& part) {
  MatchPairs out;
  const std::size_t n = part.op_of.size();
  out.sends.assign(n);
  out.recvs.resize(n);
  out.probes.resize(n);
  auto local = [&](uint32_t op) {
    const uint32_t i = part.local_op(op);
    if (i == k_none) throw std::logic_error(fmt::format("match pairs: op {} is a candidate outside its part", op));
    return i;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t op = part.op_of[i];
    // op_of is ascending, so the local lists stay ascending.
    for (uint32_t s : whole.sends[op]) out.sends.list(i).push_back(local(s));
    out.pairs += out.sends[i].size();
  }
  // Per send, `sends` inverted (as match_pairs makes them: every receive of
  // a candidate is in its part), so whole.recvs and whole.probes are not read.
  for (uint32_t i = 0; i < n; ++i) {
    const bool probe = part.model.ops[i].kind == OpKind::probe;
    for (uint32_t s : out.sends[i]) (probe ? out.probes : out.recvs)[s].push_back(i);
  }
  out.hb_passes = whole.hb_passes;
  out.hb_skipped = whole.hb_skipped;
  return out;
}

std::vector<PartRange> split_ranges(const Model& model, const std::vector<Cut>& cuts, const MatchPairs& pairs,
                                    const Deadline& deadline) {
  const uint32_t segments = static_cast<uint32_t>(cuts.size()) + 1;
  std::vector<std::vector<uint32_t>> by_rank(model.ranks.size());
  for (const Cut& cut : cuts) {
    for (uint32_t r = 0; r < cut.event.size(); ++r) by_rank[r].push_back(cut.event[r]);
  }
  auto seg = [&](uint32_t rank, uint32_t event) {
    const auto& v = by_rank[rank];
    return static_cast<uint32_t>(std::lower_bound(v.begin(), v.end(), event) - v.begin());
  };
  // reach[k]: the last segment that something starting in segment k ties it to.
  std::vector<uint32_t> reach(segments);
  for (uint32_t k = 0; k < segments; ++k) reach[k] = k;
  std::vector<bool> used(segments, false);
  auto tie = [&](uint32_t a, uint32_t b) {
    if (a > b) std::swap(a, b);
    reach[a] = std::max(reach[a], b);
  };
  // An op's segment is its posting event's (searched again where needed:
  // a list of them, 4 bytes per op, was the top of the SMT checks' peak).
  auto op_segment = [&](uint32_t op) { return seg(model.ops[op].rank, model.ops[op].post); };
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& op = model.ops[i];
    const uint32_t at = seg(op.rank, op.post);
    used[at] = true;
    if (op.done != k_none) tie(at, seg(op.rank, op.done));
    for (uint32_t s : pairs.sends[i]) tie(at, op_segment(s));
  }
  for (const Instance& inst : model.instances) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t m : inst.members) {
      if (m == k_none) continue;
      const uint32_t at = op_segment(m);
      lo = std::min(lo, at);
      hi = std::max(hi, at);
    }
    if (lo != UINT32_MAX) tie(lo, hi);
  }
  // The parts' segment ranges.
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  uint32_t start = 0, until = 0;
  bool any = false;
  for (uint32_t k = 0; k < segments; ++k) {
    until = std::max(until, reach[k]);
    any = any || used[k];
    if (k == until) {
      if (any) {
        ranges.emplace_back(start, k);
      }
      start = k + 1;
      until = k + 1;
      any = false;
    }
  }
  std::vector<PartRange> parts(ranges.size());
  for (std::size_t p = 0; p < ranges.size(); ++p) {
    if (deadline && std::chrono::steady_clock::now() > *deadline) throw BudgetSpent();
    parts[p].first_segment = ranges[p].first;
    parts[p].last_segment = ranges[p].second;
  }
  return parts;
}

Part extract_part(const Model& model, const std::vector<Cut>& cuts, const PartRange& range) {
  return extract_ops(model, cuts, range.first_segment, range.last_segment,
                     part_ops(model, cuts, range.first_segment, range.last_segment));
}

std::vector<Part> split(const Model& model, const std::vector<Cut>& cuts, const MatchPairs& pairs,
                        const Deadline& deadline) {
  std::vector<Part> parts;
  for (const PartRange& range : split_ranges(model, cuts, pairs, deadline)) {
    parts.push_back(extract_part(model, cuts, range));
  }
  return parts;
}

}  // namespace smtrace::smt
