#include "analyzer/expect.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>

namespace smtrace::analyzer {

namespace {

constexpr std::string_view k_blanks = " \t\r";

// Files are written with %XX for the bytes that would split or end a token.
bool needs_escape(unsigned char byte) { return byte <= 0x20 || byte == 0x7F || byte == '%' || byte == '#'; }

std::string escape_file(std::string_view file) {
  std::string out;
  for (char c : file) {
    const auto byte = static_cast<unsigned char>(c);
    if (needs_escape(byte)) {
      out += fmt::format("%{:02X}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

template <typename Int>
std::optional<Int> parse_number(std::string_view text) {
  Int value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

class LineParser {
 public:
  explicit LineParser(std::string_view origin) : m_origin(origin) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ExpectError(fmt::format("{}: {}", m_origin, what));
  }

  std::string unescape_file(std::string_view text) const {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '%') {
        out += text[i];
        continue;
      }
      const bool room = i + 2 < text.size();
      const int high = room ? hex_digit(text[i + 1]) : -1;
      const int low = room ? hex_digit(text[i + 2]) : -1;
      if (high < 0 || low < 0) fail(fmt::format("bad %XX escape in file '{}'", text));
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
    return out;
  }

  // "*" or a number.
  template <typename Int>
  std::optional<Int> field(std::string_view text, std::string_view token, std::string_view what) const {
    if (text == "*") return std::nullopt;
    auto value = parse_number<Int>(text);
    if (!value) fail(fmt::format("location '{}': {} '{}' is neither a number nor *", token, what, text));
    return value;
  }

  ExpectedLocation location(std::string_view token) const {
    ExpectedLocation out;
    std::string_view event = token;
    std::string_view site;
    if (auto at = token.find('@'); at != std::string_view::npos) {
      event = token.substr(0, at);
      site = token.substr(at + 1);
      if (site.empty()) fail(fmt::format("location '{}': no file after @", token));
    }
    if (event != "*") {
      auto colon = event.find(':');
      if (colon == std::string_view::npos) {
        fail(fmt::format("location '{}': expected RANK:SEQ (or *) before any @FILE:LINE", token));
      }
      out.rank = field<uint32_t>(event.substr(0, colon), token, "rank");
      out.seq = field<uint64_t>(event.substr(colon + 1), token, "seq");
    }
    if (!site.empty()) {
      std::string_view file = site;
      if (auto colon = site.rfind(':'); colon != std::string_view::npos) {
        const std::string_view line = site.substr(colon + 1);
        if (line == "*" || parse_number<uint32_t>(line)) {
          file = site.substr(0, colon);
          out.line = field<uint32_t>(line, token, "line");
        }
      }
      if (file.empty()) fail(fmt::format("location '{}': empty file", token));
      out.file = unescape_file(file);
    }
    return out;
  }

 private:
  std::string m_origin;
};

bool file_matches(std::string_view pattern, std::string_view file) {
  if (file == pattern) return true;
  return file.size() > pattern.size() && file.ends_with(pattern) &&
         file[file.size() - pattern.size() - 1] == '/';
}

bool location_matches(const ExpectedLocation& pattern, const Location& location) {
  if (pattern.rank && *pattern.rank != location.event.rank) return false;
  if (pattern.seq && *pattern.seq != location.event.seq) return false;
  if (pattern.file.empty()) return true;
  if (!file_matches(pattern.file, location.file)) return false;
  return !pattern.line || *pattern.line == location.line;
}

}  // namespace

std::vector<Expectation> parse_expectations(std::string_view text, std::string_view name) {
  std::vector<Expectation> out;
  size_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const size_t first = line.find_first_not_of(k_blanks);
    if (first == std::string_view::npos) continue;
    line = line.substr(first, line.find_last_not_of(k_blanks) - first + 1);

    Expectation expectation;
    expectation.text = std::string(line);
    expectation.origin = fmt::format("{}:{}", name, number);
    LineParser parser(expectation.origin);
    std::vector<std::string_view> tokens;
    for (size_t pos = 0; pos < line.size();) {
      const size_t start = line.find_first_not_of(k_blanks, pos);
      if (start == std::string_view::npos) break;
      const size_t stop = std::min(line.find_first_of(k_blanks, start), line.size());
      tokens.push_back(line.substr(start, stop - start));
      pos = stop;
    }
    expectation.kind = std::string(tokens.front());
    if (expectation.kind.find_first_of("@:*") != std::string::npos || expectation.kind == "...") {
      parser.fail(fmt::format("'{}' is not a finding kind (a line starts with the kind: deadlock 0:5@a.c:12)",
                              expectation.kind));
    }
    for (size_t i = 1; i < tokens.size(); ++i) {
      if (tokens[i] == "...") {
        if (i + 1 != tokens.size()) parser.fail("'...' must be the last location");
        expectation.more = true;
      } else {
        expectation.locations.push_back(parser.location(tokens[i]));
      }
    }
    out.push_back(std::move(expectation));
  }
  return out;
}

std::vector<Expectation> read_expectations(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExpectError(fmt::format("{}: cannot read the expectation file", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ExpectError(fmt::format("{}: cannot read the expectation file", file.string()));
  return parse_expectations(text.str(), file.string());
}

std::string expectation_line(const Finding& finding) {
  std::string line = finding.kind;
  for (const Location& location : finding.locations) {
    line += fmt::format(" {}:{}", location.event.rank, location.event.seq);
    if (!location.file.empty()) line += fmt::format("@{}:{}", escape_file(location.file), location.line);
  }
  return line;
}

std::string write_expectations(const std::vector<Finding>& findings, std::string_view title) {
  std::string out = fmt::format(
      "# smtrace check --expect: the findings of {}\n"
      "# One finding per line: KIND RANK:SEQ@FILE:LINE ... (docs/check-output.md).\n"
      "# No finding lines: the trace must give no findings at all.\n",
      title);
  for (const Finding& finding : findings) out += expectation_line(finding) + '\n';
  return out;
}

bool matches(const Expectation& expectation, const Finding& finding) {
  if (expectation.kind != finding.kind) return false;
  const size_t n = expectation.locations.size();
  if (expectation.more ? finding.locations.size() < n : finding.locations.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!location_matches(expectation.locations[i], finding.locations[i])) return false;
  }
  return true;
}

Comparison compare(const std::vector<Expectation>& expectations, const std::vector<Finding>& findings) {
  // A maximum bipartite matching (augmenting paths, Kuhn), so that a loose
  // pattern written first cannot take the finding an exact line needs.
  // Candidates are kept per expectation; files are small.
  const size_t none = static_cast<size_t>(-1);
  std::multimap<std::string_view, size_t> by_kind;
  for (size_t f = 0; f < findings.size(); ++f) by_kind.emplace(findings[f].kind, f);
  std::vector<std::vector<size_t>> candidates(expectations.size());
  for (size_t e = 0; e < expectations.size(); ++e) {
    auto [first, last] = by_kind.equal_range(expectations[e].kind);
    for (auto it = first; it != last; ++it) {
      if (matches(expectations[e], findings[it->second])) candidates[e].push_back(it->second);
    }
  }
  std::vector<size_t> owner(findings.size(), none);  // finding -> expectation
  std::vector<char> seen;
  auto augment = [&](auto&& self, size_t e) -> bool {
    for (size_t f : candidates[e]) {
      if (seen[f]) continue;
      seen[f] = 1;
      if (owner[f] == none || self(self, owner[f])) {
        owner[f] = e;
        return true;
      }
    }
    return false;
  };
  std::vector<char> taken(expectations.size(), 0);
  for (size_t e = 0; e < expectations.size(); ++e) {
    seen.assign(findings.size(), 0);
    augment(augment, e);
  }

  Comparison out;
  for (size_t f = 0; f < findings.size(); ++f) {
    if (owner[f] == none) {
      out.unexpected.push_back(findings[f]);
    } else {
      taken[owner[f]] = 1;
      ++out.matched;
    }
  }
  for (size_t e = 0; e < expectations.size(); ++e) {
    if (!taken[e]) out.missing.push_back(expectations[e]);
  }
  return out;
}

std::string render_comparison(const Comparison& comparison, std::string_view name) {
  std::string out;
  for (const Expectation& expectation : comparison.missing) {
    out += fmt::format("missing: {}  ({})\n", expectation.text, expectation.origin);
  }
  for (const Finding& finding : comparison.unexpected) {
    std::string message = finding.message;
    std::replace(message.begin(), message.end(), '\n', ' ');
    out += fmt::format("unexpected: {}  # {}\n", expectation_line(finding), message);
  }
  out += fmt::format("SUMMARY: expect: {} missing, {} unexpected, {} matched ({} {})\n", comparison.missing.size(),
                     comparison.unexpected.size(), comparison.matched,
                     comparison.agree() ? "agrees with" : "differs from", name);
  return out;
}

}  // namespace smtrace::analyzer
