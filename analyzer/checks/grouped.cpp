#include "analyzer/checks/grouped.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace smtrace::analyzer::checks {

RawSite raw_site(uint32_t rank, const format::Event& e, std::string note) {
  return RawSite{rank, e.seq, e.call, e.site, std::move(note)};
}

namespace {

// The coding of a RawProblem, for WireWriter and WireReader alike.
constexpr auto k_code_problem = [](auto& c, auto& p) {
  c(p.problem);
  c(p.message);
  c.list(p.sites, [](auto& cs, auto& s) {
    cs(s.rank);
    cs(s.seq);
    cs(s.call);
    cs(s.site);
    cs(s.note);
  });
  c.list(p.notes, [](auto& cn, auto& note) { cn(note); });
  c(p.generic);
};

}  // namespace

void save_problems(const std::vector<RawProblem>& problems, WireWriter& out) { out.list(problems, k_code_problem); }

std::vector<RawProblem> load_problems(WireReader& in) {
  std::vector<RawProblem> problems;
  in.list(problems, k_code_problem);
  return problems;
}

void Grouped::add(const Context& context, RawProblem p) {
  if (p.sites.empty()) return;
  if (!p.generic && m_severity == Severity::error) context.mark_erroneous({p.sites.front().rank, p.sites.front().seq});
  Finding f;
  f.kind = m_kind;
  f.severity = m_severity;
  f.message = std::move(p.message);
  for (RawSite& s : p.sites) f.locations.push_back(context.location({s.rank, s.seq}, s.call, s.site, std::move(s.note)));
  f.notes = std::move(p.notes);
  f.generic = p.generic;
  const Location& at = f.locations.front();
  const RawSite& first = p.sites.front();
  const std::string where = at.file.empty()
                                ? fmt::format("{}#{}", first.rank, first.site)
                                : fmt::format("{}:{}:{}", at.file, at.line, at.column);
  const std::string key = fmt::format("{}|{}|{}", p.problem, where, static_cast<int>(first.call));
  auto [it, fresh] = m_groups.try_emplace(key);
  Group& g = it->second;
  if (fresh) {
    m_order.push_back(key);
    g.finding = std::move(f);
  }
  ++g.count;
  if (std::find(g.ranks.begin(), g.ranks.end(), first.rank) == g.ranks.end()) g.ranks.push_back(first.rank);
}

void Grouped::merge(Grouped&& other) {
  for (const std::string& key : other.m_order) {
    Group& theirs = other.m_groups[key];
    auto [it, fresh] = m_groups.try_emplace(key);
    Group& g = it->second;
    if (fresh) {
      m_order.push_back(key);
      g = std::move(theirs);
      continue;
    }
    g.count += theirs.count;
    for (const uint32_t rank : theirs.ranks) {
      if (std::find(g.ranks.begin(), g.ranks.end(), rank) == g.ranks.end()) g.ranks.push_back(rank);
    }
  }
  other.m_groups.clear();
  other.m_order.clear();
}

void Grouped::emit(std::vector<Finding>& out, std::size_t max) {
  std::size_t emitted = 0;
  uint64_t dropped = 0;
  for (const std::string& key : m_order) {
    Group& g = m_groups[key];
    if (emitted == max) {
      dropped += g.count;
      continue;
    }
    if (g.count > 1) {
      g.finding.notes.push_back(fmt::format("the same problem occurs {} times at this place{}", g.count,
                                            g.ranks.size() > 1 ? ", on " + plural(g.ranks.size(), "rank")
                                                               : std::string()));
    }
    out.push_back(std::move(g.finding));
    ++emitted;
  }
  if (dropped > 0) {
    Finding f;
    f.kind = m_kind;
    f.severity = m_severity;
    f.message = fmt::format("{} further problems at other places not listed", dropped);
    out.push_back(std::move(f));
  }
  m_groups.clear();
  m_order.clear();
}

}  // namespace smtrace::analyzer::checks
