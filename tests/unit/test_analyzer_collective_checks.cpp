// collective-mismatch and collective-misaligned on small hand-written traces.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "analyzer/analyze.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"

namespace fs = std::filesystem;
namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using tf::Call;

namespace {

constexpr uint32_t k_int = 7, k_byte = 4, k_double = 14;
constexpr uint32_t k_sum = 3, k_max = 1;

// A trace of `n` finalized ranks built event by event. Call sites get
// different ids on each rank (as in real traces) for the same source line.
class TraceBuilder {
 public:
  explicit TraceBuilder(uint32_t n) {
    m_trace.has_manifest = true;
    m_trace.manifest.world_size = n;
    m_trace.ranks.resize(n);
    for (uint32_t r = 0; r < n; ++r) {
      tf::RankTrace& rank = m_trace.ranks[r];
      rank.present = true;
      rank.header.rank = r;
      rank.header.world_size = n;
      rank.end = tf::Termination{};
      rank.end->kind = tf::TerminationKind::finalized;
      add(r, Call::Init, 1);
    }
  }

  // Return the id of rank `rank`'s site for `function` at `line` (symbolized
  // unless `file` is empty; then module 1, offset = line).
  uint32_t site(uint32_t rank, uint32_t line, const std::string& function = "main",
                const std::string& file = "prog.c") {
    auto& sites = m_trace.ranks[rank].sites;
    for (const auto& [id, s] : sites) {
      const bool same = file.empty() ? s.file.empty() && s.offset == line
                                     : s.line == line && s.function == function && s.file == file;
      if (same) return id;
    }
    tf::CallSite s;
    s.id = 1000 * (rank + 1) + static_cast<uint32_t>(sites.size()) + 1;
    if (file.empty()) {
      s.module = 1;
      s.offset = line;
    } else {
      s.function = function;
      s.file = file;
      s.line = line;
    }
    sites.emplace(s.id, s);
    return s.id;
  }

  // Append an event of `call` at `line` of main; return it for more fields.
  tf::Event& add(uint32_t rank, Call call, uint32_t line) {
    auto& events = m_trace.ranks[rank].events;
    tf::Event e;
    e.seq = events.size();
    e.call = call;
    e.t_start = static_cast<int64_t>(1000 * (events.size() + 1));
    e.duration = 10;
    e.site = site(rank, line);
    events.push_back(e);
    return events.back();
  }
  tf::Event& bcast(uint32_t rank, uint32_t line, int32_t root, int64_t count = 1, uint32_t type = k_int,
                   uint32_t comm = 0) {
    tf::Event& e = add(rank, Call::Bcast, line);
    e.comm = comm;
    e.peer = root;
    e.count = count;
    e.datatype = type;
    return e;
  }
  tf::Event& allreduce(uint32_t rank, uint32_t line, uint32_t op = k_sum, int64_t count = 1,
                       uint32_t type = k_int, uint32_t comm = 0) {
    tf::Event& e = add(rank, Call::Allreduce, line);
    e.comm = comm;
    e.op = op;
    e.count = e.recv_count = count;
    e.datatype = e.recv_datatype = type;
    return e;
  }
  tf::Event& barrier(uint32_t rank, uint32_t line, uint32_t comm = 0) {
    tf::Event& e = add(rank, Call::Barrier, line);
    e.comm = comm;
    return e;
  }
  // Define derived datatype `id` on `rank` with `signature`.
  void datatype(uint32_t rank, uint32_t id, std::vector<tf::TypeCount> signature,
                Call combiner = Call::Type_contiguous) {
    tf::DatatypeDef def;
    def.id = id;
    def.combiner = combiner;
    def.committed = true;
    def.signature = std::move(signature);
    for (const auto& tc : def.signature) def.size += tc.count * (tc.type == k_double ? 8 : 4);
    m_trace.ranks[rank].datatypes.emplace(id, def);
  }
  // Split world into the halves of `color(rank)`; the new comm is id 2 everywhere.
  void split(uint32_t line, const std::vector<std::vector<uint32_t>>& halves) {
    for (const auto& members : halves) {
      for (uint32_t r : members) {
        tf::CommDef def;
        def.id = 2;
        def.world_ranks = members;
        def.parent = 0;
        m_trace.ranks[r].comms.emplace(2, def);
        tf::Event& e = add(r, Call::Comm_split, line);
        e.comm = 0;
        e.new_comm = 2;
        e.color = static_cast<int32_t>(members[0]);
      }
    }
  }
  void unfinalize(uint32_t rank) { m_trace.ranks[rank].end.reset(); }

  an::Result run(const std::string& check, an::Alignment alignment = an::Alignment::strict) {
    for (auto& rank : m_trace.ranks) {
      if (rank.end) add(rank.header.rank, Call::Finalize, 99);
    }
    an::Options options;
    options.checks = {check};
    options.alignment = alignment;
    return smtrace::test::analyze_trace(m_trace, options);
  }

  tf::Trace& trace() { return m_trace; }

 private:
  tf::Trace m_trace;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string all_notes(const an::Finding& f) {
  std::string s;
  for (const auto& n : f.notes) s += n + "\n";
  return s;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::CollectiveMismatch::order") {
  TraceBuilder t(2);
  t.barrier(0, 5);
  t.barrier(1, 5);
  t.bcast(0, 10, 0);
  t.allreduce(0, 11);
  t.allreduce(1, 11);
  t.bcast(1, 10, 0);
  const auto result = t.run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  const an::Finding& f = result.findings[0];
  CHECK(f.kind == "collective-mismatch");
  CHECK(f.severity == an::Severity::error);
  CHECK(f.message ==
        "collectives diverge on MPI_COMM_WORLD at collective #2: rank 0 calls MPI_Bcast (root 0), "
        "rank 1 calls MPI_Allreduce (MPI_SUM)");
  REQUIRE(f.locations.size() == 2);
  CHECK(f.locations[0].event == an::EventRef{0, 2});
  CHECK(f.locations[0].line == 10);
  CHECK(f.locations[1].event == an::EventRef{1, 2});
  CHECK(f.locations[1].line == 11);
  CHECK(contains(f.locations[1].note, "rank 1"));
  CHECK(contains(all_notes(f), "last collective all members agreed on: #1 MPI_Barrier (rank 0 at prog.c:5)"));
}

TEST_CASE("analyzer::CollectiveMismatch::root") {
  TraceBuilder t(3);
  for (uint32_t r = 0; r < 3; ++r) t.bcast(r, 10, r == 2 ? 1 : 0);
  const auto result = t.run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(result.findings[0].message ==
        "collectives diverge on MPI_COMM_WORLD at collective #1: rank 0 calls MPI_Bcast (root 0), "
        "rank 2 calls MPI_Bcast (root 1)");
  CHECK(contains(all_notes(result.findings[0]), "no collective on MPI_COMM_WORLD was agreed on"));
}

TEST_CASE("analyzer::CollectiveMismatch::op") {
  TraceBuilder t(2);
  t.allreduce(0, 10, k_sum);
  t.allreduce(1, 10, k_max);
  const auto result = t.run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message, "rank 0 calls MPI_Allreduce (MPI_SUM), rank 1 calls MPI_Allreduce (MPI_MAX)"));
}

TEST_CASE("analyzer::CollectiveMismatch::signatures") {
  SUBCASE("equal bytes, different types") {
    TraceBuilder t(2);
    t.bcast(0, 10, 0, 2, k_int);
    t.bcast(1, 10, 0, 8, k_byte);
    const auto result = t.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    CHECK(result.findings[0].message ==
          "collectives diverge on MPI_COMM_WORLD at collective #1: type signatures of MPI_Bcast differ: "
          "rank 0 (root) sends 2 x MPI_INT, rank 1 receives 8 x MPI_BYTE");
  }
  SUBCASE("different counts in a reduction") {
    TraceBuilder t(2);
    t.allreduce(0, 10, k_sum, 4);
    t.allreduce(1, 10, k_sum, 3);
    const auto result = t.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    CHECK(contains(result.findings[0].message, "rank 0 reduces 4 x MPI_INT, rank 1 reduces 3 x MPI_INT"));
  }
  SUBCASE("derived and basic types with equal signatures are clean") {
    TraceBuilder t(3);
    t.datatype(1, 64, {{k_int, 2}});
    t.datatype(2, 64, {{k_int, 1}, {k_double, 1}}, Call::Type_create_struct);
    t.datatype(2, 65, {{k_int, 1}, {k_double, 1}, {k_int, 1}, {k_double, 1}}, Call::Type_create_struct);
    t.bcast(0, 10, 0, 2, k_int);
    t.bcast(1, 10, 0, 1, 64);
    t.bcast(2, 10, 0, 2, k_int);
    // {int, double} x 2 is the same sequence as one {int, double, int, double}.
    t.bcast(0, 11, 1, 0, k_int);
    t.bcast(1, 11, 1, 0, k_double);
    t.bcast(2, 11, 1, 0, k_int);
    t.allreduce(0, 12);
    t.allreduce(1, 12);
    t.allreduce(2, 12);
    const auto result = t.run("collective-mismatch");
    CHECK(result.findings.empty());
    TraceBuilder u(2);
    u.datatype(0, 64, {{k_int, 1}, {k_double, 1}}, Call::Type_create_struct);
    u.datatype(1, 65, {{k_int, 1}, {k_double, 1}, {k_int, 1}, {k_double, 1}}, Call::Type_create_struct);
    u.bcast(0, 10, 0, 2, 64);
    u.bcast(1, 10, 0, 1, 65);
    CHECK(u.run("collective-mismatch").findings.empty());
  }
  SUBCASE("derived types with the same size but another order differ") {
    TraceBuilder t(2);
    t.datatype(0, 64, {{k_int, 1}, {k_double, 1}}, Call::Type_create_struct);
    t.datatype(1, 64, {{k_int, 2}, {k_double, 2}}, Call::Type_create_struct);
    t.bcast(0, 10, 0, 2, 64);
    t.bcast(1, 10, 0, 1, 64);
    const auto result = t.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    CHECK(contains(result.findings[0].message,
                   "rank 0 (root) sends 2 x MPI_Type_create_struct datatype [1 MPI_INT, 1 MPI_DOUBLE]"));
  }
  SUBCASE("gather: each sender against the root's receive") {
    TraceBuilder t(3);
    for (uint32_t r = 0; r < 3; ++r) {
      tf::Event& e = t.add(r, Call::Gather, 10);
      e.peer = 0;
      e.count = r == 2 ? 2 : 1;
      e.datatype = k_int;
      if (r == 0) {
        e.recv_count = 1;
        e.recv_datatype = k_int;
      }
    }
    const auto result = t.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    CHECK(contains(result.findings[0].message,
                   "rank 2 sends 2 x MPI_INT, rank 0 (root) expects from rank 2 1 x MPI_INT"));
  }
  SUBCASE("gatherv and alltoallv per peer") {
    TraceBuilder t(2);
    for (uint32_t r = 0; r < 2; ++r) {
      tf::Event& g = t.add(r, Call::Gatherv, 10);
      g.peer = 1;
      g.count = r + 1;
      g.datatype = k_double;
      if (r == 1) {
        g.recv_datatype = k_double;
        g.recv_counts = {1, 2};
      }
      tf::Event& a = t.add(r, Call::Alltoallv, 11);
      a.datatype = a.recv_datatype = k_int;
      a.counts = r == 0 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{3, 4};
      a.recv_counts = r == 0 ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{2, 4};
    }
    CHECK(t.run("collective-mismatch").findings.empty());
    TraceBuilder u(2);
    for (uint32_t r = 0; r < 2; ++r) {
      tf::Event& a = u.add(r, Call::Alltoallv, 11);
      a.datatype = a.recv_datatype = k_int;
      a.counts = r == 0 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{3, 4};
      a.recv_counts = r == 0 ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{5, 4};
    }
    const auto result = u.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    CHECK(contains(result.findings[0].message, "rank 0 sends rank 1 2 x MPI_INT, rank 1 expects from rank 0 5 x MPI_INT"));
  }
}

TEST_CASE("analyzer::CollectiveMismatch::in_place_at_some_members") {
  // Allreduce's in-place option is given at all members or none (MPI-3.1
  // section 5.9.6): rank 1 alone passing MPI_IN_PLACE diverges.
  TraceBuilder t(3);
  for (uint32_t r = 0; r < 3; ++r) t.allreduce(r, 10).in_place = r == 1;
  auto result = t.run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(result.findings[0].message ==
        "collectives diverge on MPI_COMM_WORLD at collective #1: MPI_IN_PLACE of MPI_Allreduce at some members "
        "only: rank 0 passes a send buffer, rank 1 passes MPI_IN_PLACE");
  CHECK(contains(all_notes(result.findings[0]), "at all members or at none"));
  // At every member: fine; Scan's option is each member's own (section 5.11.1).
  TraceBuilder all(3);
  for (uint32_t r = 0; r < 3; ++r) all.allreduce(r, 10).in_place = true;
  CHECK(all.run("collective-mismatch").findings.empty());
  TraceBuilder scan(3);
  for (uint32_t r = 0; r < 3; ++r) {
    tf::Event& e = scan.allreduce(r, 10);
    e.call = Call::Scan;
    e.in_place = r == 1;
  }
  CHECK(scan.run("collective-mismatch").findings.empty());
}

TEST_CASE("analyzer::CollectiveMismatch::intercommunicator_roots") {
  // Ranks 0,2 and 1,3 are the two groups of intercomm 3; the even group's
  // member 1 (world 2) broadcasts (MPI-3.1 section 5.2.2).
  auto build = [](int32_t world0_root, int32_t odd_root) {
    auto t = std::make_unique<TraceBuilder>(4);
    for (uint32_t r = 0; r < 4; ++r) {
      tf::CommDef def;
      def.id = 3;
      def.inter = true;
      def.world_ranks = r % 2 ? std::vector<uint32_t>{1, 3} : std::vector<uint32_t>{0, 2};
      def.remote_world_ranks = r % 2 ? std::vector<uint32_t>{0, 2} : std::vector<uint32_t>{1, 3};
      t->trace().ranks[r].comms.emplace(3, def);
      const int32_t root = r == 0 ? world0_root : r == 2 ? tf::k_root : odd_root;
      t->bcast(r, 10, root, 1, k_int, 3);
      t->barrier(r, 11, 3);
    }
    return t;
  };
  CHECK(build(tf::k_proc_null, 1)->run("collective-mismatch").findings.empty());
  // World rank 0 names a root of the other group, as if it were there.
  auto result = build(1, 1)->run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message,
                 "the roots of MPI_Bcast on an intercommunicator disagree: rank 0 names root 1 of the other group, "
                 "rank 2 passes MPI_ROOT"));
  // The other group names member 0, not the member that passes MPI_ROOT.
  result = build(tf::k_proc_null, 0)->run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message, "rank 2 passes MPI_ROOT, rank 1 names root 0 of the other group"));
  // Two roots.
  result = build(tf::k_root, 1)->run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message, "rank 0 passes MPI_ROOT, rank 2 passes MPI_ROOT"));
}

TEST_CASE("analyzer::CollectiveMismatch::blocking_and_nonblocking") {
  TraceBuilder t(2);
  t.bcast(0, 10, 0);
  tf::Event& e = t.bcast(1, 10, 0);
  e.call = Call::Ibcast;
  e.request = 1;
  const auto result = t.run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message, "rank 0 calls MPI_Bcast (root 0), rank 1 calls MPI_Ibcast (root 0)"));
  CHECK(contains(all_notes(result.findings[0]), "a blocking and a non-blocking collective never match"));
}

TEST_CASE("analyzer::CollectiveMismatch::stopped") {
  SUBCASE("a member finalized with fewer collectives") {
    TraceBuilder t(2);
    t.barrier(0, 10);
    t.barrier(1, 10);
    t.barrier(0, 11);
    const auto result = t.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    const an::Finding& f = result.findings[0];
    CHECK(f.message ==
          "collectives diverge on MPI_COMM_WORLD at collective #2: rank 0 calls MPI_Barrier, "
          "rank 1 calls no further collective on it");
    REQUIRE(f.locations.size() == 2);
    CHECK(f.locations[1].event == an::EventRef{1, 1});
  }
  SUBCASE("an unfinished trace is the deadlock check's business") {
    TraceBuilder t(2);
    t.barrier(0, 10);
    t.barrier(1, 10);
    t.barrier(0, 11).pending = true;
    t.unfinalize(0);
    CHECK(t.run("collective-mismatch").findings.empty());
  }
}

namespace {
// Give every rank communicator 2 over all of `n` ranks with topology
// neighbours `adjacent(r)` (sources and destinations alike, ranks in the
// communicator, -2 for MPI_PROC_NULL).
template <class F>
void topology(TraceBuilder& t, uint32_t n, F adjacent) {
  std::vector<uint32_t> all(n);
  for (uint32_t r = 0; r < n; ++r) all[r] = r;
  for (uint32_t r = 0; r < n; ++r) {
    tf::CommDef def;
    def.id = 2;
    def.world_ranks = all;
    def.topology = tf::Topology::graph;
    def.sources = def.destinations = adjacent(r);
    t.trace().ranks[r].comms.emplace(2, def);
    tf::Event& e = t.add(r, Call::Graph_create, 5);
    e.comm = 0;
    e.new_comm = 2;
  }
}
tf::Event& neighbor(TraceBuilder& t, uint32_t rank, Call call, int64_t count, uint32_t type, int64_t recv_count,
                    uint32_t recv_type) {
  tf::Event& e = t.add(rank, call, 10);
  e.comm = 2;
  e.count = count;
  e.datatype = type;
  e.recv_count = recv_count;
  e.recv_datatype = recv_type;
  return e;
}
}  // namespace

TEST_CASE("analyzer::CollectiveMismatch::neighbor_signatures") {
  const auto ring = [](uint32_t r) {
    return std::vector<int32_t>{static_cast<int32_t>((r + 2) % 3), static_cast<int32_t>((r + 1) % 3)};
  };
  SUBCASE("matching edges are clean") {
    TraceBuilder t(3);
    topology(t, 3, ring);
    for (uint32_t r = 0; r < 3; ++r) neighbor(t, r, Call::Neighbor_allgather, 1, k_int, 1, k_int);
    for (uint32_t r = 0; r < 3; ++r) neighbor(t, r, Call::Neighbor_alltoall, 2, k_double, 2, k_double);
    CHECK(t.run("collective-mismatch").findings.empty());
  }
  SUBCASE("a sender's count against its neighbour's") {
    TraceBuilder t(3);
    topology(t, 3, ring);
    neighbor(t, 0, Call::Neighbor_allgather, 2, k_int, 1, k_int);
    for (uint32_t r = 1; r < 3; ++r) neighbor(t, r, Call::Neighbor_allgather, 1, k_int, 1, k_int);
    const auto result = t.run("collective-mismatch");
    REQUIRE(result.findings.size() == 1);
    CHECK(contains(result.findings[0].message,
                   "type signatures of MPI_Neighbor_allgather differ: rank 0 sends rank 2 2 x MPI_INT, "
                   "rank 2 expects from rank 0 1 x MPI_INT"));
  }
  SUBCASE("members without an edge between them need not agree") {
    // Pairs {0, 1} and {2, 3}, each with its own count, and MPI_PROC_NULL
    // neighbours.
    TraceBuilder t(4);
    topology(t, 4, [](uint32_t r) { return std::vector<int32_t>{static_cast<int32_t>(r ^ 1u), -2}; });
    for (uint32_t r = 0; r < 4; ++r) {
      const int64_t c = r < 2 ? 1 : 3;
      neighbor(t, r, Call::Neighbor_alltoall, c, k_int, c, k_int);
    }
    CHECK(t.run("collective-mismatch").findings.empty());
  }
  SUBCASE("Neighbor_allgatherv: the count expected from each source") {
    // Rank r sends r + 1 ints; on the ring each expects that from each source.
    for (const bool wrong : {false, true}) {
      TraceBuilder t(3);
      topology(t, 3, ring);
      for (uint32_t r = 0; r < 3; ++r) {
        tf::Event& e = neighbor(t, r, Call::Neighbor_allgatherv, r + 1, k_int, 0, k_int);
        for (const int32_t src : ring(r)) e.recv_counts.push_back(src + 1);
        if (wrong && r == 1) e.recv_counts[1] = 5;  // expects 5 from rank 2, which sends 3
      }
      const auto result = t.run("collective-mismatch");
      if (!wrong) {
        CHECK(result.findings.empty());
        continue;
      }
      REQUIRE(result.findings.size() == 1);
      CHECK(contains(result.findings[0].message, "rank 2 sends rank 1 3 x MPI_INT, rank 1 expects from rank 2 5 x MPI_INT"));
    }
  }
}

TEST_CASE("analyzer::CollectiveMismatch::neighbor_block_signatures") {
  // On the ring of 3 each rank's neighbours are (left, right); rank r sends
  // r + 1 elements in every block, so each expects its source's r + 1.
  const auto ring = [](uint32_t r) {
    return std::vector<int32_t>{static_cast<int32_t>((r + 2) % 3), static_cast<int32_t>((r + 1) % 3)};
  };
  for (const Call call : {Call::Neighbor_alltoallv, Call::Neighbor_alltoallw}) {
    for (const bool wrong : {false, true}) {
      CAPTURE(tf::call_name(call));
      CAPTURE(wrong);
      TraceBuilder t(3);
      topology(t, 3, ring);
      for (uint32_t r = 0; r < 3; ++r) {
        tf::Event& e = neighbor(t, r, call, -1, k_int, -1, k_int);
        for (const int32_t peer : ring(r)) {
          e.counts.push_back(r + 1);
          e.recv_counts.push_back(peer + 1);
          if (call == Call::Neighbor_alltoallw) {
            e.datatypes.push_back(k_int);
            e.recv_datatypes.push_back(k_int);
          }
        }
        // Rank 2 sends its right neighbour (rank 0) doubles, or one too many.
        if (wrong && r == 2 && call == Call::Neighbor_alltoallw) e.datatypes[1] = k_double;
        if (wrong && r == 2 && call == Call::Neighbor_alltoallv) e.counts[1] = 4;
      }
      const auto result = t.run("collective-mismatch");
      if (!wrong) {
        CHECK(result.findings.empty());
        continue;
      }
      REQUIRE(result.findings.size() == 1);
      CHECK(contains(result.findings[0].message, "rank 2 sends rank 0 "));
      CHECK(contains(result.findings[0].message, "rank 0 expects from rank 2 3 x MPI_INT"));
    }
  }
  SUBCASE("a neighbour that repeats claims nothing") {
    // Two ranks, each the other's left and right (a periodic dimension of
    // size 2): a Cartesian send to +1 lands in the receiver's -1 block, so
    // blocks of different counts per direction are correct.
    TraceBuilder t(2);
    topology(t, 2, [](uint32_t r) { return std::vector<int32_t>{static_cast<int32_t>(r ^ 1u), static_cast<int32_t>(r ^ 1u)}; });
    for (uint32_t r = 0; r < 2; ++r) {
      tf::Event& e = neighbor(t, r, Call::Neighbor_alltoallv, -1, k_int, -1, k_int);
      e.counts = {1, 2};       // to -1, to +1
      e.recv_counts = {2, 1};  // from -1 (its +1 block), from +1
    }
    CHECK(t.run("collective-mismatch").findings.empty());
  }
}

TEST_CASE("analyzer::CollectiveMismatch::split_teams") {
  // Ranks {0,2} and {1,3} each get a half; the halves run different
  // collectives from different lines, which is correct.
  TraceBuilder t(4);
  t.split(5, {{0, 2}, {1, 3}});
  for (uint32_t r : {0u, 2u}) t.bcast(r, 10, 0, 1, k_int, 2);
  for (uint32_t r : {1u, 3u}) {
    t.allreduce(r, 20, k_sum, 1, k_int, 2);
    t.barrier(r, 21, 2);
  }
  for (uint32_t r = 0; r < 4; ++r) t.barrier(r, 30);
  CHECK(t.run("collective-mismatch").findings.empty());
  CHECK(t.run("collective-misaligned").findings.empty());
  // Within one half, a root mismatch is still found and named by the half.
  TraceBuilder u(4);
  u.split(5, {{0, 2}, {1, 3}});
  u.bcast(0, 10, 0, 1, k_int, 2);
  u.bcast(2, 10, 1, 1, k_int, 2);
  for (uint32_t r : {1u, 3u}) u.bcast(r, 10, 0, 1, k_int, 2);
  const auto result = u.run("collective-mismatch");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message, "Comm_split"));
  CHECK(contains(result.findings[0].message, "rank 0 calls MPI_Bcast (root 0), rank 2 calls MPI_Bcast (root 1)"));
}

TEST_CASE("analyzer::CollectiveMisaligned::call_sites") {
  auto build = [](TraceBuilder& t) {
    t.barrier(0, 10);
    t.barrier(1, 10);
    t.barrier(0, 12);  // if (rank == 0) MPI_Barrier(c); else MPI_Barrier(c);
    t.barrier(1, 14);
    t.barrier(0, 16);
    t.barrier(1, 17);
  };
  SUBCASE("strict") {
    TraceBuilder t(2);
    build(t);
    const auto result = t.run("collective-misaligned");
    REQUIRE(result.findings.size() == 1);
    const an::Finding& f = result.findings[0];
    CHECK(f.kind == "collective-misaligned");
    CHECK(f.severity == an::Severity::warning);
    CHECK(f.message ==
          "collective #2 on MPI_COMM_WORLD (MPI_Barrier) is called from different call sites: "
          "rank 0 at prog.c:12, rank 1 at prog.c:14");
    REQUIRE(f.locations.size() == 2);
    CHECK(f.locations[0].line == 12);
    CHECK(f.locations[1].line == 14);
    CHECK(contains(all_notes(f), "1 later collective(s) on MPI_COMM_WORLD are misaligned too"));
  }
  SUBCASE("weak") {
    TraceBuilder t(2);
    build(t);
    CHECK(t.run("collective-misaligned", an::Alignment::weak).findings.size() == 1);
  }
  SUBCASE("off") {
    TraceBuilder t(2);
    build(t);
    CHECK(t.run("collective-misaligned", an::Alignment::off).findings.empty());
  }
  SUBCASE("aligned sequences are clean, and mismatch does not care") {
    TraceBuilder t(2);
    t.barrier(0, 10);
    t.barrier(1, 10);
    CHECK(t.run("collective-misaligned").findings.empty());
    TraceBuilder u(2);
    build(u);
    CHECK(u.run("collective-mismatch").findings.empty());
  }
}

TEST_CASE("analyzer::CollectiveMisaligned::root_role") {
  // if (rank == root) MPI_Bcast(...); else MPI_Bcast(...): the root's
  // arguments have a role of their own, so the root alone on its own line is
  // aligned; two lines among the non-roots, or a root that is not alone, are not.
  SUBCASE("root alone") {
    TraceBuilder t(3);
    t.bcast(0, 10, 1);
    t.bcast(1, 12, 1);
    t.bcast(2, 10, 1);
    CHECK(t.run("collective-misaligned").findings.empty());
  }
  SUBCASE("non-roots on two lines") {
    TraceBuilder t(3);
    t.bcast(0, 10, 0);
    t.bcast(1, 12, 0);
    t.bcast(2, 14, 0);
    CHECK(t.run("collective-misaligned").findings.size() == 1);
  }
  SUBCASE("the root shares its line with a non-root") {
    TraceBuilder t(3);
    t.bcast(0, 10, 0);
    t.bcast(1, 10, 0);
    t.bcast(2, 12, 0);
    CHECK(t.run("collective-misaligned").findings.size() == 1);
  }
  SUBCASE("a collective without a root") {
    TraceBuilder t(3);
    t.allreduce(0, 10);
    t.allreduce(1, 12);
    t.allreduce(2, 12);
    CHECK(t.run("collective-misaligned").findings.size() == 1);
  }
}

TEST_CASE("analyzer::CollectiveMisaligned::call_paths") {
  // Both ranks call MPI_Barrier at the same line of sync(), which main calls
  // from line 20 on rank 0 and line 22 on rank 1.
  auto build = [](TraceBuilder& t) {
    for (uint32_t r = 0; r < 2; ++r) {
      tf::Event& e = t.barrier(r, 0);
      e.site = t.site(r, 5, "sync");
      e.stack = {t.site(r, r == 0 ? 20 : 22), t.site(r, 40, "__libc_start_main", "libc.c")};
    }
  };
  TraceBuilder t(2);
  build(t);
  const auto strict = t.run("collective-misaligned", an::Alignment::strict);
  REQUIRE(strict.findings.size() == 1);
  CHECK(strict.findings[0].message ==
        "collective #1 on MPI_COMM_WORLD (MPI_Barrier) is reached through different call paths: "
        "rank 0 at prog.c:20, rank 1 at prog.c:22");
  CHECK(strict.findings[0].locations[0].line == 20);
  TraceBuilder u(2);
  build(u);
  CHECK(u.run("collective-misaligned", an::Alignment::weak).findings.empty());
}

TEST_CASE("analyzer::CollectiveMisaligned::unsymbolized_sites") {
  // Without symbols, sites compare by module and offset, whatever their ids.
  TraceBuilder t(2);
  for (uint32_t r = 0; r < 2; ++r) t.barrier(r, 0).site = t.site(r, 0x1234, "", "");
  for (uint32_t r = 0; r < 2; ++r) t.barrier(r, 0).site = t.site(r, r == 0 ? 0x2000 : 0x2008, "", "");
  const auto result = t.run("collective-misaligned");
  REQUIRE(result.findings.size() == 1);
  CHECK(contains(result.findings[0].message, "collective #2"));
}

TEST_SUITE_END();
