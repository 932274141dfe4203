// What the per-event checks (invalid-argument, type-mismatch,
// epoch-lifecycle) share: a rank pass records problems as plain values
// while loading (locations need the symbols, read after loading), and
// finish() turns them into findings, one per problem and source line over
// all ranks (the same mistake in a loop on 64 ranks is one finding with a
// count). Internal to analyzer/checks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/wire.hpp"

namespace smtrace::analyzer::checks {

// An event a problem points at, with its role.
struct RawSite {
  uint32_t rank = 0;
  uint64_t seq = 0;
  format::Call call = format::Call::unspecified;
  uint32_t site = 0;
  std::string note;
};

// One problem found at one event (sites[0]); `problem` names its kind for
// grouping ("rank out of range"), `message` is the finding's headline.
struct RawProblem {
  std::string problem;
  std::string message;
  std::vector<RawSite> sites;
  std::vector<std::string> notes;
  bool generic = false;  // Finding::generic: only says that the call failed
};

// Return the site of event `e` of rank `rank` with `note`.
RawSite raw_site(uint32_t rank, const format::Event& e, std::string note);

// Append `problems` to `out` (Check::save_pass of a check whose passes
// collect RawProblems).
void save_problems(const std::vector<RawProblem>& problems, WireWriter& out);
// Return the problems save_problems wrote, read from `in`.
std::vector<RawProblem> load_problems(WireReader& in);

// Check::save_pass and Check::load_pass of a check whose finish() only
// groups the `problems` its passes (a `Pass(const RankData&)`) collect.
template <class Pass>
void save_pass_problems(const RankPass& pass, WireWriter& out) {
  save_problems(dynamic_cast<const Pass&>(pass).problems, out);
}
template <class Pass>
std::unique_ptr<RankPass> load_pass_problems(const RankData& data, WireReader& in) {
  auto pass = std::make_unique<Pass>(data);
  pass->problems = load_problems(in);
  return pass;
}

// Collects problems and emits them as findings of one check.
class Grouped {
 public:
  Grouped(std::string kind, Severity severity) : m_kind(std::move(kind)), m_severity(severity) {}
  // Add `p`; problems of the same kind at the same source line (or, without
  // symbols, the same rank and call site) are one finding. An error that is
  // not generic marks its first site's event erroneous (Context::mark_erroneous).
  void add(const Context& context, RawProblem p);
  // Add what `other` (of the same kind) collected, as if its problems were
  // added here one by one in the order it took them: groups new here come
  // after this one's, in `other`'s order (the ranks in parallel, each into
  // its own Grouped, merged in rank order, group as one Grouped in rank order).
  void merge(Grouped&& other);
  const std::string& kind() const { return m_kind; }
  Severity severity() const { return m_severity; }
  // Append the findings, in the order their groups were first seen; at most
  // `max` of them, then one that counts the rest.
  void emit(std::vector<Finding>& out, std::size_t max = 200);

 private:
  struct Group {
    Finding finding;
    uint64_t count = 0;
    std::vector<uint32_t> ranks;
  };
  std::string m_kind;
  Severity m_severity;
  std::map<std::string, Group> m_groups;
  std::vector<std::string> m_order;
};

}  // namespace smtrace::analyzer::checks
