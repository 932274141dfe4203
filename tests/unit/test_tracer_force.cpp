// The tracer's side of SMTRACE_FORCE: which call is forced, and the note
// the rank file keeps (tracer/force.hpp). No MPI: the hooks take the event
// the wrappers gather and the source they would hand to PMPI.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "trace_format/force.hpp"
#include "trace_format/reader.hpp"
#include "tracer/force.hpp"
#include "tracer/handlers.hpp"
#include "tracer/options.hpp"

namespace fs = std::filesystem;
using smtrace::format::Call;
using smtrace::format::k_any_source;
using namespace smtrace::tracer;

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::Forcer::on_call") {
  Forcer forcer;
  forcer.configure({{0, 2, 1}, {1, 1, 0}, {0, 4, 2}}, 0);
  CHECK(forcer.armed());
  SUBCASE("the n-th wildcard receive of this rank, whatever the call") {
    CHECK(forcer.on_call(Call::Recv, 1).ordinal == 0);  // not a wildcard
    const auto first = forcer.on_call(Call::Recv, k_any_source);
    CHECK(first.ordinal == 1);
    CHECK_FALSE(first.source);
    CHECK(forcer.on_call(Call::Send, k_any_source).ordinal == 0);
    const auto second = forcer.on_call(Call::Irecv, k_any_source);
    CHECK(second.ordinal == 2);
    CHECK(second.source == 1);
    CHECK_FALSE(forcer.on_call(Call::Probe, k_any_source).source);  // 3
    CHECK(forcer.on_call(Call::Sendrecv, k_any_source).source == 2);  // 4
    CHECK_FALSE(forcer.on_call(Call::Recv, k_any_source).source);    // 5
  }
  SUBCASE("a polling loop is one receive, forced on every poll until one finds a message") {
    CHECK(forcer.on_call(Call::Recv, k_any_source).ordinal == 1);
    for (int i = 0; i < 3; ++i) {
      const auto poll = forcer.on_call(Call::Iprobe, k_any_source);
      CHECK(poll.ordinal == 2);
      CHECK(poll.source == 1);
      forcer.polled(Call::Iprobe, k_any_source, false);
    }
    CHECK(forcer.on_call(Call::Iprobe, k_any_source).source == 1);
    forcer.polled(Call::Iprobe, k_any_source, true);
    CHECK(forcer.on_call(Call::Iprobe, k_any_source).ordinal == 3);
  }
  SUBCASE("another rank's targets are not this rank's") {
    Forcer other;
    other.configure({{0, 2, 1}}, 1);
    CHECK_FALSE(other.armed());
  }
}

TEST_CASE("tracer::force::options") {
  std::map<std::string, std::string> env;
  auto get = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  env = {{"SMTRACE_FORCE", "0:1=2"}};
  Options o = parse_options(get);
  CHECK(o.force == "0:1=2");
  CHECK(o.to_map().at("SMTRACE_FORCE") == "0:1=2");  // the trace says the run was forced
  env = {{"SMTRACE_FORCE", "0:1"}};
  o = parse_options(get);
  CHECK(o.force.empty());
  CHECK(o.problems.find("SMTRACE_FORCE") != std::string::npos);
  CHECK_FALSE(o.to_map().contains("SMTRACE_FORCE"));
}

TEST_CASE("tracer::force::apply") {
  const fs::path dir = fs::temp_directory_path() / ("smtrace-force-" + std::to_string(getpid()));
  fs::remove_all(dir);
  StartInfo info;
  info.rank = 0;
  info.world_size = 3;
  info.options.dir = dir.string();
  info.options.quiet = true;
  info.options.force = "0:2=1";
  info.install_handlers = false;
  REQUIRE(handlers::start(info));
  smtrace::format::Event e;
  e.call = Call::Recv;
  e.peer = k_any_source;
  int source = -1;  // what the wrapper would hand to PMPI
  force::apply(e, source);
  CHECK(source == -1);
  force::apply(e, source);
  CHECK(source == 1);
  int later = -1;
  force::apply(e, later);
  CHECK(later == -1);
  handlers::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  const smtrace::format::RankTrace rank = smtrace::format::read_rank_file(dir / "rank-0.smt");
  REQUIRE(rank.notes.size() == 1);
  CHECK(smtrace::format::parse_forced_note(rank.notes[0].message) == 2u);
  CHECK(rank.header.options.at("SMTRACE_FORCE") == "0:2=1");
  handlers::reset_for_tests();
  force::start("", 0);
  fs::remove_all(dir);
}

TEST_SUITE_END();
