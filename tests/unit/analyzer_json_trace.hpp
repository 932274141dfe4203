// Small hand-written traces for analyzer unit tests: events in the JSON of
// `smtrace dump --format json` (protobuf JSON names: "call": "RECV", ...),
// written as a real trace directory and analyzed like any other.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analyze.hpp"
#include "scratch_dir.hpp"
#include "trace_format/json.hpp"

namespace smtrace::test {

struct JsonRank {
  std::vector<std::string> events;  // each one JSON object without seq (added in order)
  std::string end = R"({"kind": "FINALIZED"})";  // "" for none (killed)
  std::string comms;                // JSON array body of CommDefs, may be empty
  std::string datatypes;            // JSON array body of DatatypeDefs, may be empty
};

// Return the trace directory (under the temp directory, named `name`) of `ranks`.
inline std::filesystem::path write_json_trace(const std::string& name, const std::vector<JsonRank>& ranks) {
  const std::size_t n = ranks.size();
  std::string doc = R"({"manifest": {"formatVersion": 1, "worldSize": )" + std::to_string(n) + R"(}, "ranks": [)";
  for (std::size_t r = 0; r < n; ++r) {
    if (r) doc += ",";
    doc += R"({"header": {"formatVersion": 1, "rank": )" + std::to_string(r) + R"(, "worldSize": )" +
           std::to_string(n) + R"(}, "events": [)";
    for (std::size_t i = 0; i < ranks[r].events.size(); ++i) {
      std::string e = ranks[r].events[i];
      // Every event gets its seq and a site of its own (line = seq + 1).
      e.insert(1, R"("seq": ")" + std::to_string(i) + R"(", "site": )" + std::to_string(i + 1) +
                      (e.size() > 2 ? ", " : ""));
      doc += (i ? "," : "") + e;
    }
    doc += R"(], "sites": [)";
    for (std::size_t i = 0; i < ranks[r].events.size(); ++i) {
      doc += (i ? "," : "") + std::string(R"({"id": )") + std::to_string(i + 1) +
             R"(, "function": "main", "file": "t.c", "line": )" + std::to_string(100 * r + i + 1) + "}";
    }
    doc += "]";
    if (!ranks[r].comms.empty()) doc += R"(, "comms": [)" + ranks[r].comms + "]";
    if (!ranks[r].datatypes.empty()) doc += R"(, "datatypes": [)" + ranks[r].datatypes + "]";
    if (!ranks[r].end.empty()) doc += R"(, "end": )" + ranks[r].end;
    doc += "}";
  }
  doc += "]}";
  const auto dir = scratch_dir(name);  // unique per process: two test runs at once do not share it
  format::write_trace(format::from_json(doc), dir);
  return dir;
}

// Analyze `ranks` with only the checks `checks` (empty: all).
inline analyzer::Result analyze_json(const std::string& name, const std::vector<JsonRank>& ranks,
                                     std::set<std::string> checks = {}) {
  analyzer::Options options;
  options.checks = std::move(checks);
  options.threads = 2;
  return analyzer::analyze(write_json_trace(name, ranks), options);
}

// Return the number of findings of `kind` in `result`.
inline std::size_t count_kind(const analyzer::Result& result, const std::string& kind) {
  std::size_t n = 0;
  for (const auto& f : result.findings) n += f.kind == kind;
  return n;
}

}  // namespace smtrace::test
