// Expectation files: the findings a trace should produce, one per line, for
// `smtrace check --expect` (regression mode). The format is documented in
// docs/check-output.md ("Expectation files"):
//
//     # comment
//     deadlock 0:2@/src/hang.c:12 1:2@hang.c:12
//     resource-leak 0:*@ring.c:40 ...
//
// A line is a finding's kind and its locations in order, each RANK:SEQ with
// an optional @FILE:LINE. `*` matches any rank, seq or line; a file matches
// the same path or one ending in /FILE; a final `...` allows more locations.
//
// Thread safety: every function here is reentrant and keeps no state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/finding.hpp"

namespace smtrace::analyzer {

// An expectation file that cannot be read or parsed ("FILE:LINE: what").
class ExpectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One location pattern; an empty optional matches anything.
struct ExpectedLocation {
  std::optional<uint32_t> rank;
  std::optional<uint64_t> seq;
  std::string file;              // empty: any file (and any line)
  std::optional<uint32_t> line;
  bool operator==(const ExpectedLocation&) const = default;
};

// One line of an expectation file.
struct Expectation {
  std::string kind;
  std::vector<ExpectedLocation> locations;
  bool more = false;             // ended with `...`: further locations allowed
  std::string text;              // the line as written, without comment and outer blanks
  std::string origin;            // "FILE:LINE" where it was read
};

// Parse the expectation file text `text`; `name` names it in messages and
// origins. Throw ExpectError on a malformed line.
std::vector<Expectation> parse_expectations(std::string_view text, std::string_view name);

// Read and parse the expectation file `file`. Throw ExpectError when it
// cannot be read or parsed.
std::vector<Expectation> read_expectations(const std::filesystem::path& file);

// Return `finding` as an expectation line that matches exactly it (kind,
// each location's RANK:SEQ and FILE:LINE).
std::string expectation_line(const Finding& finding);

// Return a whole expectation file for `findings`: a header comment, then one
// line per finding in report order. `title` goes into the header.
std::string write_expectations(const std::vector<Finding>& findings, std::string_view title);

// Return true when `finding` matches `expectation`.
bool matches(const Expectation& expectation, const Finding& finding);

// The outcome of comparing findings with expectations.
struct Comparison {
  std::vector<Expectation> missing;   // expected, not found (file order)
  std::vector<Finding> unexpected;    // found, not expected (report order)
  uint64_t matched = 0;
  // Return true when nothing is missing and nothing unexpected.
  bool agree() const { return missing.empty() && unexpected.empty(); }
};

// Compare `findings` with `expectations`: each expectation, in file order,
// takes the first finding not yet taken that it matches.
Comparison compare(const std::vector<Expectation>& expectations, const std::vector<Finding>& findings);

// Return the comparison as lines, "missing: LINE  (ORIGIN)" and
// "unexpected: LINE", then "SUMMARY: expect: ..." (docs/check-output.md).
std::string render_comparison(const Comparison& comparison, std::string_view name);

}  // namespace smtrace::analyzer
