// SMTRACE_FORCE's text, how calls count among a rank's wildcard receives,
// and the note a forced rank leaves (trace_format/force.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "trace_format/force.hpp"

using namespace smtrace::format;

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::force::parse") {
  std::string error;
  SUBCASE("one target") {
    const auto targets = parse_force("0:2=1", error);
    REQUIRE(targets);
    CHECK(*targets == std::vector<ForceTarget>{{0, 2, 1}});
    CHECK(force_text(*targets) == "0:2=1");
  }
  SUBCASE("several targets round-trip") {
    const auto targets = parse_force("3:1=0,0:17=2", error);
    REQUIRE(targets);
    CHECK(targets->size() == 2);
    CHECK((*targets)[1] == ForceTarget{0, 17, 2});
    CHECK(force_text(*targets) == "3:1=0,0:17=2");
  }
  SUBCASE("bad text says which item and why") {
    for (const char* text : {"", "0:2", "0=1", "a:1=2", "0:0=1", "0:1=-1", "0:1=2,", "0:1=2,x", "1=2:3", "0:1=2 "}) {
      CAPTURE(text);
      error.clear();
      CHECK_FALSE(parse_force(text, error));
      CHECK_FALSE(error.empty());
    }
    parse_force("0:1=2,junk", error);
    CHECK(error.find("item 2 'junk'") != std::string::npos);
  }
  SUBCASE("the same receive twice") {
    CHECK_FALSE(parse_force("0:1=2,0:1=3", error));
    CHECK(error.find("twice") != std::string::npos);
  }
}

TEST_CASE("trace_format::force::wildcard_count") {
  CHECK(wildcard_count(Call::Recv, k_any_source) == WildcardCount::at_call);
  CHECK(wildcard_count(Call::Irecv, k_any_source) == WildcardCount::at_call);
  CHECK(wildcard_count(Call::Probe, k_any_source) == WildcardCount::at_call);
  CHECK(wildcard_count(Call::Sendrecv, k_any_source) == WildcardCount::at_call);
  CHECK(wildcard_count(Call::Iprobe, k_any_source) == WildcardCount::if_matched);
  SUBCASE("not counted") {
    CHECK(wildcard_count(Call::Recv, 1) == WildcardCount::no);
    CHECK(wildcard_count(Call::Recv, std::nullopt) == WildcardCount::no);
    CHECK(wildcard_count(Call::Recv_init, k_any_source) == WildcardCount::no);  // persistent: fixed for every Start
    CHECK(wildcard_count(Call::Send, k_any_source) == WildcardCount::no);
    CHECK(wildcard_count(Call::Bcast, k_any_source) == WildcardCount::no);
  }
}

TEST_CASE("trace_format::force::is_counted_wildcard") {
  Event e;
  e.call = Call::Sendrecv;
  e.peer = 1;  // the send's destination
  e.recv_peer = k_any_source;
  CHECK(is_counted_wildcard(e));
  e.recv_peer = 2;
  CHECK_FALSE(is_counted_wildcard(e));
  Event poll;
  poll.call = Call::Iprobe;
  poll.peer = k_any_source;
  CHECK_FALSE(is_counted_wildcard(poll));  // no flag recorded
  poll.flag = false;
  CHECK_FALSE(is_counted_wildcard(poll));
  poll.flag = true;
  CHECK(is_counted_wildcard(poll));
}

TEST_CASE("trace_format::force::note") {
  const std::string note = forced_note(12, Call::Recv, 3);
  CHECK(note == "forced: wildcard receive 12 (MPI_Recv) takes source 3 instead of MPI_ANY_SOURCE");
  CHECK(parse_forced_note(note) == 12u);
  CHECK_FALSE(parse_forced_note("3 tracer errors"));
  CHECK_FALSE(parse_forced_note("forced: wildcard receive x (MPI_Recv)"));
}

TEST_SUITE_END();
