// Expectation files of `smtrace check --expect` (analyzer/expect.hpp).
#include <doctest/doctest.h>

#include <string>

#include "analyzer/expect.hpp"

using namespace smtrace::analyzer;

namespace {

Finding finding(std::string kind, std::vector<std::tuple<uint32_t, uint64_t, std::string, uint32_t>> places) {
  Finding out;
  out.kind = std::move(kind);
  out.message = "headline of " + out.kind;
  for (auto& [rank, seq, file, line] : places) {
    Location location;
    location.event = {rank, seq};
    location.file = file;
    location.line = line;
    out.locations.push_back(location);
  }
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::parse_expectations::syntax") {
  const auto list = parse_expectations(
      "# a comment\n"
      "\n"
      "deadlock 0:2@/src/hang.c:12   1:2@hang.c:12   # trailing comment\n"
      "  resource-leak *@ring.c 1:*@ring.c:* ...\r\n"
      "request-leak\n"
      "unmatched-message 2:7@my%20dir/a%23b.c:3\n",
      "t.expect");
  REQUIRE(list.size() == 4);
  CHECK(list[0].kind == "deadlock");
  CHECK(list[0].origin == "t.expect:3");
  CHECK(list[0].text == "deadlock 0:2@/src/hang.c:12   1:2@hang.c:12");
  REQUIRE(list[0].locations.size() == 2);
  CHECK(list[0].locations[0] == ExpectedLocation{0, 2, "/src/hang.c", 12});
  CHECK(list[0].locations[1] == ExpectedLocation{1, 2, "hang.c", 12});
  CHECK_FALSE(list[0].more);

  CHECK(list[1].kind == "resource-leak");
  CHECK(list[1].more);
  REQUIRE(list[1].locations.size() == 2);
  CHECK(list[1].locations[0] == ExpectedLocation{std::nullopt, std::nullopt, "ring.c", std::nullopt});
  CHECK(list[1].locations[1] == ExpectedLocation{1, std::nullopt, "ring.c", std::nullopt});

  CHECK(list[2].locations.empty());
  CHECK(list[3].locations[0].file == "my dir/a#b.c");

  SUBCASE("empty file") { CHECK(parse_expectations("# nothing expected\n", "e").empty()); }
  SUBCASE("errors name file and line") {
    CHECK_THROWS_WITH_AS(parse_expectations("deadlock\ndeadlock 0:x\n", "e.txt"),
                         doctest::Contains("e.txt:2: location '0:x'"), ExpectError);
    CHECK_THROWS_AS(parse_expectations("deadlock 0\n", "e"), ExpectError);
    CHECK_THROWS_AS(parse_expectations("deadlock ... 0:1\n", "e"), ExpectError);
    CHECK_THROWS_AS(parse_expectations("0:1@a.c:3\n", "e"), ExpectError);
    CHECK_THROWS_AS(parse_expectations("deadlock 0:1@\n", "e"), ExpectError);
    CHECK_THROWS_AS(parse_expectations("deadlock 0:1@a%2.c:3\n", "e"), ExpectError);
  }
}

TEST_CASE("analyzer::expectation_line::roundtrip") {
  const Finding f = finding("deadlock", {{0, 2, "/src/my dir/hang.c", 12}, {1, 3, "", 0}});
  const std::string line = expectation_line(f);
  CHECK(line == "deadlock 0:2@/src/my%20dir/hang.c:12 1:3");
  const auto list = parse_expectations(line, "x");
  REQUIRE(list.size() == 1);
  CHECK(matches(list[0], f));

  const std::string file = write_expectations({f}, "traces/hang");
  CHECK(file.starts_with("# smtrace check --expect: the findings of traces/hang\n"));
  CHECK(file.ends_with(line + "\n"));
  CHECK(parse_expectations(file, "x").size() == 1);
}

TEST_CASE("analyzer::matches::patterns") {
  const Finding f = finding("deadlock", {{0, 2, "/src/e2e/hang.c", 12}, {1, 2, "/src/e2e/hang.c", 13}});
  auto one = [](const std::string& line) { return parse_expectations(line, "x").front(); };
  CHECK(matches(one("deadlock 0:2@/src/e2e/hang.c:12 1:2@/src/e2e/hang.c:13"), f));
  CHECK(matches(one("deadlock 0:2@hang.c:12 1:2@e2e/hang.c:13"), f));
  CHECK(matches(one("deadlock 0:2 1:2"), f));
  CHECK(matches(one("deadlock *:* *"), f));
  CHECK(matches(one("deadlock 0:2 ..."), f));
  CHECK(matches(one("deadlock 0:2 1:2 ..."), f));
  CHECK(matches(one("deadlock 0:*@hang.c:* 1:2@hang.c"), f));
  CHECK_FALSE(matches(one("deadlock 0:2@ang.c:12 1:2"), f));  // suffix at a / only
  CHECK_FALSE(matches(one("deadlock 0:2@hang.c:13 1:2"), f));
  CHECK_FALSE(matches(one("deadlock 1:2 0:2"), f));            // order counts
  CHECK_FALSE(matches(one("deadlock 0:2"), f));                // count counts
  CHECK_FALSE(matches(one("deadlock 0:2 1:2 2:2 ..."), f));
  CHECK_FALSE(matches(one("request-leak 0:2 1:2"), f));
}

TEST_CASE("analyzer::compare::missing_and_unexpected") {
  const std::vector<Finding> findings = {
      finding("deadlock", {{0, 2, "hang.c", 12}, {1, 2, "hang.c", 12}}),
      finding("request-leak", {{0, 5, "leak.c", 3}}),
      finding("request-leak", {{1, 5, "leak.c", 3}}),
  };
  SUBCASE("agree") {
    const auto c = compare(parse_expectations("deadlock 0:2 1:2\nrequest-leak *\nrequest-leak 1:5\n", "e"), findings);
    CHECK(c.agree());
    CHECK(c.matched == 3);
    CHECK(render_comparison(c, "e") == "SUMMARY: expect: 0 missing, 0 unexpected, 3 matched (agrees with e)\n");
  }
  SUBCASE("a loose pattern first does not steal the exact line's finding") {
    const auto c = compare(parse_expectations("request-leak *\nrequest-leak 0:5\ndeadlock ...\n", "e"), findings);
    CHECK(c.agree());
  }
  SUBCASE("differ") {
    const auto c = compare(parse_expectations("deadlock 0:2 1:3\nrequest-leak 0:5@leak.c:3\n", "e.txt"), findings);
    CHECK_FALSE(c.agree());
    CHECK(c.matched == 1);
    REQUIRE(c.missing.size() == 1);
    CHECK(c.missing[0].origin == "e.txt:1");
    REQUIRE(c.unexpected.size() == 2);
    CHECK(render_comparison(c, "e.txt") ==
          "missing: deadlock 0:2 1:3  (e.txt:1)\n"
          "unexpected: deadlock 0:2@hang.c:12 1:2@hang.c:12  # headline of deadlock\n"
          "unexpected: request-leak 1:5@leak.c:3  # headline of request-leak\n"
          "SUMMARY: expect: 1 missing, 2 unexpected, 1 matched (differs from e.txt)\n");
  }
  SUBCASE("nothing expected, nothing found") {
    CHECK(compare({}, {}).agree());
    CHECK(compare({}, findings).unexpected.size() == 3);
  }
}

TEST_CASE("analyzer::read_expectations::missing_file") {
  CHECK_THROWS_WITH_AS(read_expectations("/nonexistent/smtrace.expect"),
                       doctest::Contains("cannot read"), ExpectError);
}

TEST_SUITE_END();
