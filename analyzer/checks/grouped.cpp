#include "analyzer/checks/grouped.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace smtrace::analyzer::checks {

RawSite raw_site(uint32_t rank, const format::Event& e, std::string note) {
  return RawSite{rank, e.seq, e.call, e.site, std::move(note)};
}

void save_problems(const std::vector<RawProblem>& problems, WireWriter& out) {
  out.put(static_cast<uint64_t>(problems.size()));
  for (const RawProblem& p : problems) {
    out.put(p.problem);
    out.put(p.message);
    out.put(static_cast<uint64_t>(p.sites.size()));
    for (const RawSite& s : p.sites) {
      out.put(s.rank);
      out.put(s.seq);
      out.put(s.call);
      out.put(s.site);
      out.put(s.note);
    }
    out.put(static_cast<uint64_t>(p.notes.size()));
    for (const std::string& note : p.notes) out.put(note);
    out.put<uint8_t>(p.generic);
  }
}

std::vector<RawProblem> load_problems(WireReader& in) {
  std::vector<RawProblem> problems(in.get<uint64_t>());
  for (RawProblem& p : problems) {
    p.problem = in.text();
    p.message = in.text();
    p.sites.resize(in.get<uint64_t>());
    for (RawSite& s : p.sites) {
      s.rank = in.get<uint32_t>();
      s.seq = in.get<uint64_t>();
      s.call = in.get<format::Call>();
      s.site = in.get<uint32_t>();
      s.note = in.text();
    }
    p.notes.resize(in.get<uint64_t>());
    for (std::string& note : p.notes) note = in.text();
    p.generic = in.get<uint8_t>() != 0;
  }
  return problems;
}

void Grouped::add(const Context& context, RawProblem p) {
  if (p.sites.empty()) return;
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
