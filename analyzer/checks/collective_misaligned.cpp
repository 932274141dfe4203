// collective-misaligned: the members of a communicator make the same
// sequence of collectives, but reach one of them from different places in
// the program. Implements the textual alignment of collectives of Kamil and
// Yelick, "Enforcing Textual Alignment of Collectives Using Dynamic Checks"
// (LCPC 2009; ../shared/seeds/collective-textual-alignment.txt), §4.1 and
// §4.3, post mortem over recorded call stacks instead of an instrumented
// execution history:
//   strict  every member reaches the n-th collective of a communicator
//           through the same call path (the whole recorded stack: the
//           collective's call site and its callers' return sites);
//   weak    only the collective's own call site must be the same;
//   off     the check does not run.
// A communicator is a team (§4.3): alignment is compared among its members
// only, so teams of a split communicator may run different code.
// A rooted collective gives its root a role of its own: MPI_IN_PLACE and the
// receive buffer of a gather or reduce, the send buffer of a scatter, are
// significant at the root only (MPI-4.0 §6.1), so the standard idiom
//   if (rank == root) MPI_Reduce(MPI_IN_PLACE, ...); else MPI_Reduce(buf, ...);
// is aligned: the root alone on one path and every other member on another
// is not reported.
//
// Ranks are separate processes, so call-site ids differ from rank to rank;
// sites are compared by what they resolve to (function, file, line, column
// once symbolized, else module and offset).
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/collective_common.hpp"

namespace smtrace::analyzer::checks {
namespace {

// Gives each distinct call site (by content) one number across all ranks.
class FrameKeys {
 public:
  explicit FrameKeys(const Context& context) : m_context(context), m_by_rank(context.world_size()) {}

  // Return the key of rank `rank`'s site `site`; k_coll_none when the site is unknown.
  uint32_t key(uint32_t rank, uint32_t site) {
    auto& cache = m_by_rank[rank];
    if (auto it = cache.find(site); it != cache.end()) return it->second;
    uint32_t k = k_coll_none;
    if (const format::CallSite* s = m_context.rank(rank).site(site)) {
      const bool symbolized = !s->file.empty() && s->line != 0;
      Content c = symbolized ? Content{s->function, s->file, s->line, s->column, 0, 0}
                             : Content{{}, {}, 0, 0, s->module, s->offset};
      k = m_keys.emplace(std::move(c), static_cast<uint32_t>(m_keys.size())).first->second;
    }
    cache.emplace(site, k);
    return k;
  }

 private:
  using Content = std::tuple<std::string, std::string, uint32_t, uint32_t, uint32_t, uint64_t>;
  const Context& m_context;
  std::vector<std::unordered_map<uint32_t, uint32_t>> m_by_rank;
  std::map<Content, uint32_t> m_keys;
};

class CollectiveMisaligned final : public Check {
 public:
  std::string_view name() const override { return "collective-misaligned"; }
  Severity severity() const override { return Severity::warning; }
  std::string_view description() const override {
    return "members of a communicator reach the same collective from different call sites";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData&) override {
    return std::make_unique<CollectivePass>(KeepArrays::no, KeepStacks::yes);
  }
  // The passes keep each rank's collectives as its own ids; finish() groups
  // them by communicator identity (the comm table) across ranks.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_of<CollectivePass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData&, WireReader& in) const override {
    return load_pass_of<CollectivePass>(in, KeepArrays::no, KeepStacks::yes);
  }
  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    const Alignment alignment = context.options().alignment;
    if (alignment == Alignment::off) return;
    FrameKeys keys(context);
    for (const CommSequence& seq : comm_sequences(context, passes)) {
      check_comm(context, seq, alignment, keys, out);
    }
  }

 private:
  // The path of member m's record at a position: frame keys, innermost first
  // (only the innermost under weak alignment); empty when a frame is unknown.
  static std::vector<uint32_t> path(const CommSequence& seq, std::size_t m, const CollRecord& r,
                                    Alignment alignment, FrameKeys& keys) {
    const uint32_t rank = seq.members[m];
    const auto& stack = seq.passes[m]->stacks[r.stack];
    const std::size_t depth = alignment == Alignment::weak ? 1 : stack.size();
    std::vector<uint32_t> out;
    for (std::size_t i = 0; i < depth && i < stack.size(); ++i) {
      const uint32_t k = keys.key(rank, stack[i]);
      if (k == k_coll_none) return {};
      out.push_back(k);
    }
    return out;
  }

  // Whether `groups` are the root of a rooted collective alone and every
  // other member together (the root's role differs from the others').
  static bool split_by_root_role(const std::vector<const CollRecord*>& at,
                                 const std::vector<std::pair<std::vector<uint32_t>, std::vector<std::size_t>>>& groups) {
    if (groups.size() != 2) return false;
    int32_t root = k_no_root;
    for (const CollRecord* r : at) {
      if (!r) continue;
      if (r->root < 0 || (root != k_no_root && r->root != root)) return false;
      root = r->root;
    }
    for (const auto& [key, members] : groups) {
      if (members.size() == 1 && members[0] == static_cast<std::size_t>(root)) return true;
    }
    return false;
  }

  void check_comm(const Context& context, const CommSequence& seq, Alignment alignment, FrameKeys& keys,
                  std::vector<Finding>& out) const {
    const std::size_t n = seq.members.size();
    std::optional<Finding> first;
    std::size_t more = 0;
    for (std::size_t p = 0;; ++p) {
      // Members that got here, with their paths; stop where the sequences
      // end or diverge (collective-mismatch reports the latter).
      std::vector<const CollRecord*> at(n, nullptr);
      std::size_t present = 0;
      bool diverged = false;
      for (std::size_t m = 0; m < n; ++m) {
        if (!seq.passes[m] || p >= seq.calls[m].size()) continue;
        at[m] = &seq.passes[m]->records[seq.calls[m][p]];
        for (std::size_t o = 0; o < m && !diverged; ++o) diverged = at[o] && at[o]->call != at[m]->call;
        ++present;
      }
      if (present < 2 || diverged) break;
      // Group members by path; the first group is the reference.
      std::vector<std::pair<std::vector<uint32_t>, std::vector<std::size_t>>> groups;
      for (std::size_t m = 0; m < n; ++m) {
        if (!at[m]) continue;
        auto p_m = path(seq, m, *at[m], alignment, keys);
        if (p_m.empty()) continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == p_m; });
        if (it == groups.end()) groups.push_back({std::move(p_m), {m}});
        else it->second.push_back(m);
      }
      if (groups.size() < 2 || split_by_root_role(at, groups)) continue;
      if (first) {
        ++more;
        continue;
      }
      first = report(context, seq, p, at, groups, alignment);
    }
    if (!first) return;
    if (more) {
      first->notes.push_back(fmt::format("{} later collective(s) on {} are misaligned too", more,
                                         comm_label(context, seq.comm)));
    }
    out.push_back(std::move(*first));
  }

  Finding report(const Context& context, const CommSequence& seq, std::size_t p,
                 const std::vector<const CollRecord*>& at,
                 const std::vector<std::pair<std::vector<uint32_t>, std::vector<std::size_t>>>& groups,
                 Alignment alignment) const {
    const std::string comm = comm_label(context, seq.comm);
    const CollRecord& ref = *at[groups[0].second[0]];
    const std::string call(format::call_name(ref.call));
    // The innermost frame where the paths part: 0 is the collective's own call
    // site; above 0 the call site is the same and a caller differs.
    const auto& path0 = groups[0].first;
    const auto& path1 = groups[1].first;
    std::size_t frame = 0;
    while (frame < path0.size() && frame < path1.size() && path0[frame] == path1[frame]) ++frame;
    if (frame == path0.size() || frame == path1.size()) frame = 0;  // one path a prefix of the other
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    std::string sides;
    for (const auto& [key, members] : groups) {
      const std::size_t m = members[0];
      const CollRecord& r = *at[m];
      const auto& stack = seq.passes[m]->stacks[r.stack];
      const uint32_t site = frame < stack.size() ? stack[frame] : r.site;
      const Location loc = context.location({seq.members[m], r.seq}, r.call, site);
      std::string ranks;
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i == 6) {
          ranks += fmt::format(" and {} more", members.size() - i);
          break;
        }
        ranks += fmt::format("{}{}", i ? "," : "", seq.members[members[i]]);
      }
      std::string place = fmt::format("{}:{}", loc.file, loc.line);
      if (loc.file.empty()) {
        // Not symbolized (the report then says how to get file:line).
        const format::CallSite* s = context.rank(seq.members[m]).site(site);
        place = !loc.function.empty() ? fmt::format("a call in {}", loc.function)
                : s                   ? fmt::format("code offset {:#x}", s->offset)
                                      : std::string("an unknown call site");
      }
      if (sides.size() < 200) sides += fmt::format("{}rank{} {} at {}", sides.empty() ? "" : ", ",
                                                   members.size() > 1 ? "s" : "", ranks, place);
      Location l = loc;
      const bool plural = members.size() > 1;
      l.note = frame == 0 ? fmt::format("rank{} {} {} {} here (collective #{} on {})", plural ? "s" : "",
                                        ranks, plural ? "call" : "calls", call, p + 1, comm)
                          : fmt::format("rank{} {} {} {} (collective #{} on {}) through this call",
                                        plural ? "s" : "", ranks, plural ? "reach" : "reaches", call, p + 1,
                                        comm);
      f.locations.push_back(std::move(l));
    }
    f.message = frame == 0
                    ? fmt::format("collective #{} on {} ({}) is called from different call sites: {}", p + 1,
                                  comm, call, sides)
                    : fmt::format("collective #{} on {} ({}) is reached through different call paths: {}",
                                  p + 1, comm, call, sides);
    if (alignment == Alignment::strict) {
      f.notes.push_back(
          "strict alignment: every member must reach each collective through the same call path "
          "(--alignment weak compares only the collective's own call site)");
    } else {
      f.notes.push_back("weak alignment: every member must call each collective from the same call site");
    }
    return f;
  }
};

}  // namespace

std::unique_ptr<Check> make_collective_misaligned() { return std::make_unique<CollectiveMisaligned>(); }

}  // namespace smtrace::analyzer::checks
