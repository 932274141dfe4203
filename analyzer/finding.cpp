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

std::string EventRef::str() const { return std::to_string(rank) + ":" + std::to_string(seq); }

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
