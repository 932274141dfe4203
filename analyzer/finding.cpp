#include "analyzer/finding.hpp"

#include <algorithm>
#include <tuple>

namespace smtrace::analyzer {

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "info";
  }
  return "?";
}

std::string plural(uint64_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string rank_list(const std::vector<uint32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  }
  return out;
}

std::string EventRef::str() const { return std::to_string(rank) + ":" + std::to_string(seq); }

void drop_superseded(std::vector<Finding>& findings) {
  std::vector<EventRef> explained;
  for (const Finding& f : findings) {
    if (f.generic) continue;
    for (const Location& l : f.locations) explained.push_back(l.event);
  }
  std::sort(explained.begin(), explained.end());
  std::erase_if(findings, [&](const Finding& f) {
    return f.generic && std::any_of(f.locations.begin(), f.locations.end(), [&](const Location& l) {
             return std::binary_search(explained.begin(), explained.end(), l.event);
           });
  });
}

void sort_findings(std::vector<Finding>& findings) {
  // Reports must not depend on thread timing or hash order: order by what a
  // reader scans for (errors first), then by where.
  auto key = [](const Finding& f) {
    const EventRef first = f.locations.empty() ? EventRef{} : f.locations.front().event;
    return std::make_tuple(f.severity, std::string_view(f.kind), first, std::string_view(f.message));
  };
  std::stable_sort(findings.begin(), findings.end(),
                   [&](const Finding& a, const Finding& b) { return key(a) < key(b); });
  findings.erase(std::unique(findings.begin(), findings.end()), findings.end());
}

}  // namespace smtrace::analyzer
