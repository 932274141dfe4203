// The shape smtrace export --format perfetto promises (docs/cli.md, "smtrace
// export"), checked on a parsed document: the Chrome trace-event format's
// required fields per phase, non-negative times and durations, and flows
// whose ids pair one start with one finish, each bound to a slice of its
// track. Shared by the unit test and the CLI tests' validator.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace smtrace::test {

// Return what is wrong with `doc` (empty: nothing).
inline std::vector<std::string> perfetto_schema_errors(const nlohmann::json& doc) {
  std::vector<std::string> errors;
  auto fail = [&](const std::string& what) {
    if (errors.size() < 50) errors.push_back(what);
  };
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    fail("no traceEvents array");
    return errors;
  }
  if (!doc.contains("displayTimeUnit") || !doc["displayTimeUnit"].is_string()) fail("no displayTimeUnit");
  struct Slice {
    double ts, end;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> slices;  // (pid, tid) -> slices
  struct Flow {
    std::string ph;
    int64_t pid, tid;
    double ts;
  };
  std::map<std::tuple<std::string, std::string, int64_t>, std::vector<Flow>> flows;  // (cat, name, id)
  std::size_t index = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string at = "event " + std::to_string(index++);
    if (!e.is_object()) {
      fail(at + ": not an object");
      continue;
    }
    for (const char* key : {"ph", "name"}) {
      if (!e.contains(key) || !e[key].is_string() || e[key].get<std::string>().empty()) {
        fail(at + ": no " + key);
      }
    }
    for (const char* key : {"pid", "tid"}) {
      if (!e.contains(key) || !e[key].is_number_integer() || e[key].get<int64_t>() < 0) fail(at + ": bad " + key);
    }
    if (!errors.empty() && errors.back().starts_with(at)) continue;
    const std::string ph = e["ph"];
    const auto track = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
    auto time = [&](const char* key) {
      if (!e.contains(key) || !e[key].is_number() || e[key].get<double>() < 0) {
        fail(at + " (" + ph + "): bad " + key);
        return -1.0;
      }
      return e[key].get<double>();
    };
    if (ph == "X") {
      const double ts = time("ts"), dur = time("dur");
      if (!e.contains("cat") || !e["cat"].is_string()) fail(at + ": X without cat");
      if (e.contains("args") && !e["args"].is_object()) fail(at + ": args not an object");
      if (ts >= 0 && dur >= 0) slices[track].push_back({ts, ts + dur});
    } else if (ph == "M") {
      if (!e.contains("args") || !e["args"].is_object()) fail(at + ": M without args");
    } else if (ph == "i") {
      time("ts");
      if (!e.contains("s") || !e["s"].is_string()) fail(at + ": i without scope s");
    } else if (ph == "s" || ph == "t" || ph == "f") {
      const double ts = time("ts");
      if (!e.contains("id") || !e["id"].is_number_integer()) {
        fail(at + ": flow without an integer id");
        continue;
      }
      if (!e.contains("cat") || !e["cat"].is_string()) fail(at + ": flow without cat");
      if (ph == "f" && (!e.contains("bp") || e["bp"] != "e")) fail(at + ": f without bp e");
      flows[{e.value("cat", ""), e["name"].get<std::string>(), e["id"].get<int64_t>()}].push_back(
          {ph, track.first, track.second, ts});
    } else {
      fail(at + ": unknown phase " + ph);
    }
  }
  for (const auto& [key, steps] : flows) {
    const std::string name = "flow " + std::get<0>(key) + "/" + std::to_string(std::get<2>(key));
    int starts = 0, finishes = 0;
    for (const Flow& f : steps) {
      starts += f.ph == "s";
      finishes += f.ph == "f";
      bool bound = false;
      for (const Slice& s : slices[{f.pid, f.tid}]) bound = bound || (s.ts <= f.ts && f.ts <= s.end);
      if (!bound) fail(name + ": " + f.ph + " at " + std::to_string(f.ts) + " encloses no slice of its track");
    }
    if (starts != 1 || finishes != 1) fail(name + ": " + std::to_string(starts) + " starts, " +
                                           std::to_string(finishes) + " finishes");
  }
  return errors;
}

}  // namespace smtrace::test
