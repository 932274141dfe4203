// The tracer's tables: handle map, call sites (Module and CallSite records
// once per address), and option parsing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "trace_format/reader.hpp"
#include "tracer/options.hpp"
#include "tracer/recorder.hpp"
#include "tracer/sites.hpp"
#include "tracer/tables.hpp"

namespace fs = std::filesystem;
using namespace smtrace::tracer;

namespace {
__attribute__((noinline)) void site_anchor() { asm volatile(""); }
}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::HandleMap::insert_find_erase") {
  HandleMap<uint64_t> map;
  for (uintptr_t k = 16; k < 16 + 8 * 1000; k += 8) map.insert(k, k * 2);  // grows past its first size
  CHECK(map.size() == 1000);
  uint64_t v = 0;
  REQUIRE(map.find(16 + 8 * 500, v));
  CHECK(v == (16 + 8 * 500) * 2);
  CHECK(map.erase(16 + 8 * 500));
  CHECK_FALSE(map.find(16 + 8 * 500, v));
  CHECK_FALSE(map.erase(16 + 8 * 500));
  map.insert(16 + 8 * 500, 7);  // reuses a tombstone
  REQUIRE(map.find(16 + 8 * 500, v));
  CHECK(v == 7);
  CHECK(map.size() == 1000);
}

TEST_CASE("tracer::HandleMap::requests_come_and_go") {
  // Requests enter and leave constantly: tombstones must not fill the table.
  HandleMap<uint64_t> map;
  for (uintptr_t i = 0; i < 100000; ++i) {
    map.insert(64 + i * 16, i);
    CHECK(map.erase(64 + i * 16));
  }
  CHECK(map.size() == 0);
}

TEST_CASE("tracer::HandleMap::threads") {
  HandleMap<uint64_t> map;
  std::vector<std::thread> threads;
  for (uintptr_t t = 0; t < 4; ++t)
    threads.emplace_back([&map, t] {
      for (uintptr_t i = 0; i < 5000; ++i) map.insert(1024 + (t * 5000 + i) * 8, t);
    });
  for (auto& th : threads) th.join();
  CHECK(map.size() == 20000);
}

TEST_CASE("tracer::SiteTable::one_record_per_address") {
  fs::path dir = fs::temp_directory_path() / ("smtrace-sites-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string file = (dir / "rank-0.smt").string();
  {
    Recorder rec;
    smtrace::format::RankHeader h;
    h.world_size = 1;
    REQUIRE(rec.open(file, h, 4096));
    SiteTable sites;
    auto a = reinterpret_cast<uintptr_t>(&site_anchor) + 1;
    rec.lock();
    uint32_t id1 = sites.id(a, rec);
    uint32_t id2 = sites.id(a, rec);
    uint32_t id3 = sites.id(a + 1, rec);
    // A null address (and 1, the table's own marker) is no site, never looked up nor written.
    const uint32_t none0 = sites.id(0, rec);
    const uint32_t none1 = sites.id(1, rec);
    uint32_t id4 = sites.id(a + 1, rec);
    rec.unlock();
    CHECK(id1 == 1);
    CHECK(id2 == 1);
    CHECK(id3 == 2);
    CHECK(none0 == 0);
    CHECK(none1 == 0);
    CHECK(id4 == 2);
    CHECK(sites.size() == 2);
    rec.lock();
    rec.close();
    rec.unlock();
  }
  auto trace = smtrace::format::read_rank_file(file);
  CHECK(trace.problems.empty());
  REQUIRE(trace.sites.size() == 2);
  REQUIRE(trace.modules.size() == 1);  // the test program, once
  const auto& m = trace.modules.begin()->second;
  CHECK(m.path.find("smtrace_unit") != std::string::npos);
  const auto* s = trace.site(1);
  REQUIRE(s);
  CHECK(s->module == m.id);
  CHECK(s->offset == reinterpret_cast<uintptr_t>(&site_anchor) + 1 - m.base);
  fs::remove_all(dir);
}

TEST_CASE("tracer::options::parse") {
  std::map<std::string, std::string> env;
  auto get = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  SUBCASE("defaults") {
    auto o = parse_options(get);
    CHECK(o.dir == "smtrace-trace");
    CHECK(o.chunk_bytes == 64 * 1024);
    CHECK(o.stack_depth == 1);
    CHECK(o.fold_polls);
    CHECK_FALSE(o.disable);
    CHECK(o.records(smtrace::format::Family::p2p));
    CHECK(o.problems.empty());
  }
  SUBCASE("values") {
    env = {{"SMTRACE_DIR", "/tmp/x"}, {"SMTRACE_BUFFER", "1M"}, {"SMTRACE_FAMILIES", "p2p,coll"},
           {"SMTRACE_STACK_DEPTH", "4"}, {"SMTRACE_DISABLE", "1"}, {"SMTRACE_FOLD_POLLS", "0"}};
    auto o = parse_options(get);
    CHECK(o.dir == "/tmp/x");
    CHECK(o.chunk_bytes == 1024 * 1024);
    CHECK(o.records(smtrace::format::Family::p2p));
    CHECK(o.records(smtrace::format::Family::coll));
    CHECK(o.records(smtrace::format::Family::env));  // always
    CHECK_FALSE(o.records(smtrace::format::Family::rma));
    CHECK(o.stack_depth == 4);
    CHECK(o.disable);
    CHECK_FALSE(o.fold_polls);
    CHECK(o.to_map().at("SMTRACE_FAMILIES") == "p2p,coll");
  }
  SUBCASE("all but one family") {
    env = {{"SMTRACE_FAMILIES", "all,-type"}};
    auto o = parse_options(get);
    CHECK(o.records(smtrace::format::Family::rma));
    CHECK_FALSE(o.records(smtrace::format::Family::type));
  }
  SUBCASE("bad values keep defaults and say so") {
    env = {{"SMTRACE_BUFFER", "12"}, {"SMTRACE_FAMILIES", "p2p,bogus"}, {"SMTRACE_STACK_DEPTH", "x"}};
    auto o = parse_options(get);
    CHECK(o.chunk_bytes == 64 * 1024);
    CHECK(o.stack_depth == 1);
    CHECK(o.problems.find("bogus") != std::string::npos);
    CHECK(o.problems.find("SMTRACE_BUFFER") != std::string::npos);
  }
}

TEST_CASE("tracer::LookupCache::hits and invalidation") {
  smtrace::tracer::HandleMap<uint32_t> map;
  smtrace::tracer::LookupCache<uint32_t, 2> cache;
  map.insert(0x1000, 7);
  map.insert(0x2000, 8);
  uint32_t v = 0;
  CHECK(cache.find(map, 0x1000, v));
  CHECK(v == 7);
  CHECK_FALSE(cache.find(map, 0x3000, v));
  SUBCASE("a hit needs no map entry lookup") {
    CHECK(cache.find(map, 0x1000, v));
    CHECK(v == 7);
    CHECK(cache.keys[0] == 0x1000);
  }
  SUBCASE("erase and reuse of a handle gives the new value") {
    uint64_t g = map.generation();
    map.erase(0x1000);
    CHECK(map.generation() != g);
    CHECK_FALSE(cache.find(map, 0x1000, v));
    map.insert(0x1000, 9);
    CHECK(cache.find(map, 0x1000, v));
    CHECK(v == 9);
  }
  SUBCASE("overwrite gives the new value") {
    map.insert(0x1000, 11);
    CHECK(cache.find(map, 0x1000, v));
    CHECK(v == 11);
  }
  SUBCASE("more keys than entries") {
    for (int round = 0; round < 3; ++round) {
      CHECK(cache.find(map, 0x1000, v));
      CHECK(v == 7);
      CHECK(cache.find(map, 0x2000, v));
      CHECK(v == 8);
    }
    map.insert(0x4000, 10);
    CHECK(cache.find(map, 0x4000, v));
    CHECK(v == 10);
  }
}

TEST_SUITE_END();
