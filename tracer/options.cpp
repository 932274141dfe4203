#include "tracer/options.hpp"

#include "trace_format/force.hpp"

#include <cstdlib>
#include <string_view>

namespace smtrace::tracer {
namespace {

struct FamilyName {
  format::Family family;
  std::string_view name;  // as in trace_format/calls.def
};
constexpr FamilyName k_families[] = {
    {format::Family::env, "env"},   {format::Family::comm, "comm"},
    {format::Family::group, "group"}, {format::Family::p2p, "p2p"},
    {format::Family::request, "request"}, {format::Family::coll, "coll"},
    {format::Family::rma, "rma"},   {format::Family::type, "type"},
    {format::Family::annotate, "annotate"}, {format::Family::cuda, "cuda"},
    {format::Family::thread, "thread"}};

void complain(std::string& problems, const std::string& what) {
  if (!problems.empty()) problems += "; ";
  problems += what;
}

bool parse_uint(const char* text, uint64_t& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  uint64_t mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024, ++end;
  else if (*end == 'm' || *end == 'M') mult = 1024 * 1024, ++end;
  if (*end != '\0') return false;
  out = v * mult;
  return true;
}

bool parse_bool(const char* text, bool fallback) {
  if (!text || !*text) return fallback;
  std::string_view v(text);
  return !(v == "0" || v == "no" || v == "off" || v == "false");
}

}  // namespace

uint32_t parse_families(const std::string& text, std::string& problems) {
  uint32_t mask = 0;
  bool any_positive = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (word.empty()) continue;
    bool minus = word[0] == '-';
    if (minus || word[0] == '+') word.erase(0, 1);
    uint32_t bits = 0;
    if (word == "all") {
      for (auto f : k_families) bits |= 1u << static_cast<unsigned>(f.family);
    } else {
      for (auto f : k_families)
        if (f.name == word) bits = 1u << static_cast<unsigned>(f.family);
      if (!bits) {
        complain(problems, "SMTRACE_FAMILIES: unknown family '" + word + "'");
        continue;
      }
    }
    if (minus) {
      if (!any_positive) {  // "-type" alone means all but type
        for (auto f : k_families) mask |= 1u << static_cast<unsigned>(f.family);
        any_positive = true;
      }
      mask &= ~bits;
    } else {
      mask |= bits;
      any_positive = true;
    }
  }
  // Init, Finalize and Abort carry the rank's life cycle: always recorded.
  mask |= 1u << static_cast<unsigned>(format::Family::env);
  return mask;
}

Options parse_options(const std::function<const char*(const char*)>& getenv) {
  Options o;
  if (const char* v = getenv("SMTRACE_DIR"); v && *v) o.dir = v;
  if (const char* v = getenv("SMTRACE_BUFFER"); v && *v) {
    uint64_t n = 0;
    if (parse_uint(v, n) && n >= 4096 && n <= (16u << 20)) o.chunk_bytes = static_cast<uint32_t>(n);
    else complain(o.problems, std::string("SMTRACE_BUFFER: '") + v + "' is not a size in 4096..16M");
  }
  if (const char* v = getenv("SMTRACE_FAMILIES"); v && *v) {
    o.families_text = v;
    o.families = parse_families(v, o.problems);
  }
  if (const char* v = getenv("SMTRACE_STACK_DEPTH"); v && *v) {
    uint64_t n = 0;
    if (parse_uint(v, n) && n >= 1 && n <= 64) o.stack_depth = static_cast<uint32_t>(n);
    else complain(o.problems, std::string("SMTRACE_STACK_DEPTH: '") + v + "' is not in 1..64");
  }
  o.disable = parse_bool(getenv("SMTRACE_DISABLE"), false);
  o.fold_polls = parse_bool(getenv("SMTRACE_FOLD_POLLS"), true);
  o.quiet = parse_bool(getenv("SMTRACE_QUIET"), false);
  o.hash = parse_bool(getenv("SMTRACE_HASH"), true);
  if (const char* v = getenv("SMTRACE_HASH_BYTES"); v && *v) {
    uint64_t n = 0;
    if (parse_uint(v, n) && n >= 64 && n <= (uint64_t{1} << 30)) o.hash_bytes = n;
    else complain(o.problems, std::string("SMTRACE_HASH_BYTES: '") + v + "' is not a size in 64..1G");
  }
  o.grow_ahead = parse_bool(getenv("SMTRACE_GROW_AHEAD"), true);
  if (const char* v = getenv("SMTRACE_THREADS"); v && *v) {
    std::string t = v;
    if (t == "auto") o.threads = ThreadTracking::automatic;
    else if (t == "on" || t == "1") o.threads = ThreadTracking::on;
    else if (t == "off" || t == "0") o.threads = ThreadTracking::off;
    else complain(o.problems, "SMTRACE_THREADS: '" + t + "' is not auto, on or off");
  }
  if (const char* v = getenv("SMTRACE_CLOCK"); v && *v) {
    std::string c = v;
    if (c == "counter" || c == "tsc") o.counter_clock = true;
    else if (c == "monotonic") o.counter_clock = false;
    else complain(o.problems, "SMTRACE_CLOCK: '" + c + "' is not counter or monotonic");
  }
  if (const char* v = getenv("SMTRACE_FORCE"); v && *v) {
    std::string error;
    if (format::parse_force(v, error)) o.force = v;
    else complain(o.problems, std::string("SMTRACE_FORCE: '") + v + "': " + error + "; nothing is forced");
  }
  return o;
}

std::map<std::string, std::string> Options::to_map() const {
  std::map<std::string, std::string> map = {
      {"SMTRACE_DIR", dir},
      {"SMTRACE_BUFFER", std::to_string(chunk_bytes)},
      {"SMTRACE_FAMILIES", families_text},
      {"SMTRACE_STACK_DEPTH", std::to_string(stack_depth)},
      {"SMTRACE_FOLD_POLLS", fold_polls ? "1" : "0"},
      {"SMTRACE_QUIET", quiet ? "1" : "0"},
      {"SMTRACE_GROW_AHEAD", grow_ahead ? "1" : "0"},
      {"SMTRACE_CLOCK", counter_clock ? "counter" : "monotonic"},
      {"SMTRACE_THREADS", threads == ThreadTracking::on    ? "on"
                          : threads == ThreadTracking::off ? "off"
                                                           : "auto"},
  };
  // Only when not the default: headers of runs that leave them stay as before.
  if (!hash) map.emplace("SMTRACE_HASH", "0");
  if (hash_bytes != content_hash_default) map.emplace("SMTRACE_HASH_BYTES", std::to_string(hash_bytes));
  if (!force.empty()) map.emplace("SMTRACE_FORCE", force);  // a forced run says so in every header
  return map;
}

}  // namespace smtrace::tracer
