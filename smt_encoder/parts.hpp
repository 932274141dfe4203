// Splitting a model into independent parts at its cuts (match_pairs.hpp):
// between two cuts every rank runs a stretch of its events; a stretch
// depends on the ones before only through messages and requests that cross
// a cut. Stretches that a match pair, an operation (posted before a cut,
// completed after) or a receive's candidate sends tie together are merged;
// what remains are parts whose executions combine freely, so each is solved
// on its own (and in parallel). A part ends with the cut that closes it,
// which every rank enters there.
//
// Thread safety: plain values; the functions are reentrant.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"

namespace smtrace::smt {

struct Part {
  Model model;                   // the part's events and ops, re-indexed
  std::vector<uint32_t> first;   // per rank: whole-model index of the part's first event
  std::vector<uint32_t> op_of;   // part op -> whole-model op
  uint32_t first_segment = 0;    // segments [first_segment, last_segment] of the whole model
  uint32_t last_segment = 0;
  // Return the part's index of whole-model op `op`, or k_none.
  uint32_t local_op(uint32_t op) const;
};

// A part as split_ranges() finds it, without its events and ops: what
// extract_part() makes its Part from. Kept instead of the Part while no
// question needs it (a Part copies its events and ops). Its ops are not
// kept either (4 bytes per op of the model): part_ops() lists them.
struct PartRange {
  uint32_t first_segment = 0;    // segments [first_segment, last_segment] of the whole model
  uint32_t last_segment = 0;
};

// Return the whole-model ops posted in segments [first, last] of `model`
// (its events' posts there), ascending: a part's Part::op_of.
std::vector<uint32_t> part_ops(const Model& model, const std::vector<Cut>& cuts, uint32_t first, uint32_t last);

// Return the parts of `model` (cuts from find_cuts, pairs from match_pairs
// on the whole model), in program order, as ranges. Parts with no
// operation are left out. Throw BudgetSpent past `deadline`.
std::vector<PartRange> split_ranges(const Model& model, const std::vector<Cut>& cuts, const MatchPairs& pairs,
                                    const Deadline& deadline = {});
// Return the part of `model` that `range` (of split_ranges) names.
Part extract_part(const Model& model, const std::vector<Cut>& cuts, const PartRange& range);
// As split_ranges(), each part made: extract_part() of every range.
std::vector<Part> split(const Model& model, const std::vector<Cut>& cuts, const MatchPairs& pairs,
                        const Deadline& deadline = {});

// Return the whole-model events [begin, end) of rank `rank` in the part of
// segments [first, last] (begin == end: none).
std::pair<uint32_t, uint32_t> part_events(const Model& model, const std::vector<Cut>& cuts, uint32_t first,
                                          uint32_t last, uint32_t rank);

// Return the part of `model` made of segments [first, last] (merged for a
// question that spans parts).
Part extract(const Model& model, const std::vector<Cut>& cuts, uint32_t first, uint32_t last);

// Return the match pairs of `part` by its own indices, from `whole`, the
// pairs of the model it was taken from (no candidate crosses a part: split
// ties them together). Throw std::logic_error when one does. Reads
// whole.sends only: the part's recvs and probes are its sends inverted.
MatchPairs restrict_pairs(const MatchPairs& whole, const Part& part);

// Return the segment of event `event` of rank `rank` given `cuts`.
uint32_t segment_of(const std::vector<Cut>& cuts, uint32_t rank, uint32_t event);

}  // namespace smtrace::smt
