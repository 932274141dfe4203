// invalid-argument, type-mismatch, epoch-lifecycle and abnormal-termination
// on small hand-built traces: each rule once wrong, and the correct uses
// that must stay clean.
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/datatypes.hpp"
#include "analyzer/report.hpp"
#include "analyzer/signature.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/content.hpp"
#include "tests/unit/scratch_dir.hpp"
#include "trace_format/call_semantics.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using smtrace::test::Builder;
using smtrace::test::k_int;
using tf::Call;

namespace {

constexpr uint32_t k_char = 1, k_byte = 4, k_float = 13, k_double = 14, k_bool = 17, k_2int = 32, k_packed = 35;
constexpr uint32_t k_sum = 3, k_land = 5, k_maxloc = 12, k_replace = 13;
const std::string k_ia = "invalid-argument";
const std::string k_tm = "type-mismatch";
const std::string k_el = "epoch-lifecycle";
const std::string k_at = "abnormal-termination";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<an::Finding> of_kind(const an::Result& r, const std::string& kind) {
  std::vector<an::Finding> out;
  for (const auto& f : r.findings)
    if (f.kind == kind) out.push_back(f);
  return out;
}

// A point-to-point call of `rank` on MPI_COMM_WORLD.
tf::Event& p2p(Builder& b, Call call, uint32_t rank, int32_t peer, int32_t tag, int64_t count = 1,
               uint32_t type = k_int, uint64_t buf = 0x1000) {
  tf::Event& e = b.add(call, rank);
  e.comm = 0;
  e.peer = peer;
  e.tag = tag;
  e.buf = buf;
  e.count = count;
  e.datatype = type;
  if (call == Call::Recv) {
    e.status.source = peer;
    e.status.tag = tag;
  }
  return e;
}

// Communicator 2 of a one-rank trace, a copy of MPI_COMM_WORLD made by `call` (seq 1).
tf::Event& dup_world(Builder& t, Call call) {
  tf::CommDef dup;
  dup.id = 2;
  dup.world_ranks = {0};
  t.trace().ranks[0].comms.emplace(2, dup);
  tf::Event& d = t.add(call);
  d.comm = 0;
  d.new_comm = 2;
  return d;
}

tf::Event& allreduce(Builder& b, uint32_t rank, uint32_t type, uint32_t op) {
  tf::Event& e = b.add(Call::Allreduce, rank);
  e.comm = 0;
  e.buf = 0x1000;
  e.count = 4;
  e.datatype = type;
  e.recv_buf = 0x2000;
  e.recv_count = 4;
  e.recv_datatype = type;
  e.op = op;
  return e;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

// --- invalid-argument ----------------------------------------------------

TEST_CASE("analyzer::invalid-argument::ranks, tags and counts") {
  SUBCASE("destination out of range") {
    Builder t(2);
    p2p(t, Call::Send, 0, 2, 0);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == an::Severity::error);
    CHECK(f[0].message == "MPI_Send: destination rank 2 is out of range for MPI_COMM_WORLD (2 ranks)");
    CHECK(f[0].locations[0].event == an::EventRef{0, 1});
  }
  SUBCASE("MPI_COMM_WORLD's ranks up to its size, a smaller communicator's up to its own") {
    Builder t(3);
    tf::CommDef pair;  // communicator 2: world ranks 2 and 0
    pair.id = 2;
    pair.world_ranks = {2, 0};
    t.trace().ranks[0].comms.emplace(2, pair);
    p2p(t, Call::Send, 0, 0, 0);
    p2p(t, Call::Send, 0, 2, 0);
    p2p(t, Call::Send, 0, 3, 0);  // seq 3
    p2p(t, Call::Send, 0, 1, 0).comm = 2;
    p2p(t, Call::Send, 0, 2, 0).comm = 2;  // seq 5
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message == "MPI_Send: destination rank 3 is out of range for MPI_COMM_WORLD (3 ranks)");
    CHECK(f[0].locations[0].event == an::EventRef{0, 3});
    CHECK(f[1].message == "MPI_Send: destination rank 2 is out of range for communicator 2 (2 ranks)");
    CHECK(f[1].locations[0].event == an::EventRef{0, 5});
  }
  SUBCASE("MPI_PROC_NULL and MPI_ANY_SOURCE where they belong are fine") {
    Builder t(2);
    p2p(t, Call::Send, 0, tf::k_proc_null, 0);
    p2p(t, Call::Irecv, 0, tf::k_any_source, tf::k_any_tag).request = 1;
    t.wait(1);
    CHECK(of_kind(t.run(k_ia), k_ia).empty());
  }
  SUBCASE("a send with tag -1 is not MPI_ANY_TAG") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, -1);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "tag -1 is invalid"));
    CHECK(contains(f[0].message, "MPI_ANY_TAG is for receives only"));
  }
  SUBCASE("a receive tag below MPI_ANY_TAG") {
    Builder t(2);
    p2p(t, Call::Irecv, 0, 1, -7).request = 1;
    t.wait(1);
    CHECK(of_kind(t.run(k_ia), k_ia).size() == 1);
  }
  SUBCASE("a tag above the recorded MPI_TAG_UB") {
    Builder t(2);
    t.trace().ranks[0].header.options["mpi.tag_ub"] = "32767";
    p2p(t, Call::Send, 0, 1, 40000);
    p2p(t, Call::Send, 0, 1, 32767);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: tag 40000 is above MPI_TAG_UB (32767)");
  }
  SUBCASE("negative count") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0, -3);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: count -3 is negative");
  }
  SUBCASE("root out of range") {
    Builder t(2);
    tf::Event& e = t.add(Call::Bcast, 0);
    e.comm = 0;
    e.peer = 5;
    e.buf = 0x1000;
    e.count = 1;
    e.datatype = k_int;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Bcast: root rank 5 is out of range for MPI_COMM_WORLD (2 ranks)");
  }
  SUBCASE("a NULL buffer with a count") {
    Builder t(2);
    t.trace().ranks[0].header.tracer_version = "0.1.0";  // address 0 is NULL only in recorded traces
    p2p(t, Call::Send, 0, 1, 0, 4, k_int, 0);
    p2p(t, Call::Send, 0, 1, 0, 0, k_int, 0);  // count 0: fine
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: the buffer is NULL with count 4 of MPI_INT");
  }
  SUBCASE("an imported trace: no rule reads what it lacks") {
    // An OTF2 import has no buffer addresses and, without smtrace's
    // attributes, MPI_BYTE for every datatype and no posted envelope.
    Builder t(2);
    for (auto& rank : t.trace().ranks) rank.header.options["trace.lacks"] = "buffers,receive_envelope,type_signatures";
    p2p(t, Call::Send, 0, 1, 0, 4, k_int, 0);
    tf::Event& e = t.add(Call::Allreduce, 0);
    e.comm = 0;
    e.count = 8;
    e.datatype = k_byte;
    e.recv_count = 8;
    e.recv_datatype = k_byte;
    e.op = k_sum;
    CHECK(of_kind(t.run(k_ia), k_ia).empty());
  }
}

TEST_CASE("analyzer::invalid-argument::handles") {
  SUBCASE("MPI_COMM_NULL") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0).comm = tf::k_null_id;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: the communicator is MPI_COMM_NULL");
  }
  SUBCASE("a communicator used after MPI_Comm_free names both calls") {
    Builder t(1);
    dup_world(t, Call::Comm_dup);
    t.add(Call::Comm_free).comm = 2;  // seq 2
    tf::Event& b = t.add(Call::Barrier);
    b.comm = 2;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Barrier: communicator 2 was freed by MPI_Comm_free (0:2)");
    REQUIRE(f[0].locations.size() == 2);
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  }
  SUBCASE("a communicator of MPI_Comm_idup used before its request completes (MPI-3.1 section 6.4.2)") {
    Builder t(1);
    dup_world(t, Call::Comm_idup).request = 0x700;  // seq 1
    t.add(Call::Barrier).comm = 2;  // seq 2: too early
    t.complete(Call::Wait, {0x700}, {0x700});
    t.add(Call::Barrier).comm = 2;  // fine
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Barrier: communicator 2 is used before the MPI_Comm_idup that makes it completes");
    REQUIRE(f[0].locations.size() == 2);
    CHECK(f[0].locations[0].event == an::EventRef{0, 2});
    CHECK(f[0].locations[1].event == an::EventRef{0, 1});
  }
  SUBCASE("MPI_Comm_free of MPI_COMM_WORLD") {
    Builder t(1);
    t.add(Call::Comm_free).comm = 0;
    CHECK(of_kind(t.run(k_ia), k_ia).size() == 1);
  }
  SUBCASE("an uncommitted derived datatype; committed and duplicated ones are fine") {
    Builder t(2);
    t.vector_type(64, 2, 1, 0, 0);
    t.vector_type(65, 2, 1, 0, 0);
    t.vector_type(66, 2, 1, 0, 0);
    tf::Event& c1 = t.add(Call::Type_contiguous);
    c1.count = 2;
    c1.datatype = k_int;
    c1.new_datatype = 64;
    tf::Event& c2 = t.add(Call::Type_contiguous);  // seq 2
    c2.count = 2;
    c2.datatype = k_int;
    c2.new_datatype = 65;
    t.add(Call::Type_commit).datatype = 64;
    tf::Event& dup = t.add(Call::Type_dup);
    dup.datatype = 64;
    dup.count = 1;
    dup.new_datatype = 66;
    p2p(t, Call::Send, 0, 1, 0, 1, 64);
    p2p(t, Call::Send, 0, 1, 0, 1, 66);
    p2p(t, Call::Send, 0, 1, 0, 1, 65);  // seq 7: never committed
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: datatype 65 (MPI_Type_contiguous) is used without MPI_Type_commit");
    CHECK(f[0].locations[0].event == an::EventRef{0, 7});
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  }
  SUBCASE("MPI_DATATYPE_NULL only in traces the tracer wrote") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0, 1, 0);
    CHECK(of_kind(t.run(k_ia), k_ia).empty());
    Builder u(2);
    u.trace().ranks[0].header.tracer_version = "0.1.0";
    p2p(u, Call::Send, 0, 1, 0, 1, 0);
    const auto f = of_kind(u.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: the datatype is MPI_DATATYPE_NULL");
  }
  SUBCASE("MPI_Mrecv on MPI_MESSAGE_NULL, in traces the tracer wrote (MPI-3.1 section 2.5.1)") {
    auto run = [](uint64_t message, uint32_t comm) {
      Builder t(2);
      t.trace().ranks[0].header.tracer_version = "0.1.0";
      tf::Event& m = t.add(Call::Mrecv);
      m.message = message;
      m.comm = comm;
      m.buf = 0x1000;
      m.count = 1;
      m.datatype = k_int;
      return of_kind(t.run(k_ia), k_ia);
    };
    const auto f = run(tf::k_message_null, tf::k_null_id);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Mrecv: the message is MPI_MESSAGE_NULL");
    CHECK(run(tf::k_message_no_proc, 0).empty());  // MPI_MESSAGE_NO_PROC: returns at once
    CHECK(run(5, 0).empty());
  }
  SUBCASE("MPI_WIN_NULL and a freed window") {
    Builder t(1);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_free, 0, 1);  // seq 2
    t.win_sync(Call::Win_fence, 0, 1);
    t.win_sync(Call::Win_fence, 0, 0);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message == "MPI_Win_fence: window 1 was freed by MPI_Win_free (0:2)");
    CHECK(f[1].message == "MPI_Win_fence: the window is MPI_WIN_NULL");
  }
}

TEST_CASE("analyzer::invalid-argument::the ranks of MPI_Group_incl and its kin (MPI-3.1 section 6.3.2)") {
  // Group 5: a group of 3 ranks (MPI_Comm_group of a 3-rank world).
  auto run = [](Call call, std::vector<int64_t> counts) {
    Builder t(1);
    tf::CommDef g;
    g.id = 5;
    g.world_ranks = {0, 1, 2};
    g.is_group = true;
    t.trace().ranks[0].comms.emplace(5, g);
    tf::Event& e = t.add(call);
    e.group = 5;
    const bool ranges = call == Call::Group_range_incl || call == Call::Group_range_excl;
    e.count = static_cast<int64_t>(ranges ? counts.size() / 3 : counts.size());
    e.counts = std::move(counts);
    return of_kind(t.run(k_ia), k_ia);
  };
  CHECK(run(Call::Group_incl, {2, 0}).empty());
  CHECK(run(Call::Group_excl, {1}).empty());
  CHECK(run(Call::Group_range_incl, {0, 2, 2, 1, 1, 1}).empty());  // 0, 2 and 1
  CHECK(run(Call::Group_range_excl, {2, 0, -1}).empty());
  CHECK(run(Call::Group_range_incl, {2, 0, 1}).empty());  // first beyond last: no rank
  auto one = [&](Call call, std::vector<int64_t> counts) {
    const auto f = run(call, std::move(counts));
    REQUIRE(f.size() == 1);
    return f[0].message;
  };
  CHECK(one(Call::Group_incl, {0, 3}) == "MPI_Group_incl: ranks[1] is rank 3, out of range for the group (3 ranks)");
  CHECK(one(Call::Group_excl, {-1}) == "MPI_Group_excl: ranks[0] is rank -1, out of range for the group (3 ranks)");
  CHECK(one(Call::Group_incl, {1, 1}) ==
        "MPI_Group_incl: rank 1 is named twice (ranks[0] and ranks[1]): the ranks must be distinct");
  CHECK(one(Call::Group_range_incl, {0, 1, 0}) == "MPI_Group_range_incl: ranges[0] = (0, 1, 0) has stride 0");
  CHECK(one(Call::Group_range_incl, {0, 1, 1, 1, 2, 1}) ==
        "MPI_Group_range_incl: rank 1 is named twice (ranges[0] = (0, 1, 1) and ranges[1] = (1, 2, 1)): the ranks "
        "must be distinct");
  CHECK(one(Call::Group_range_excl, {0, 5, 2}) ==
        "MPI_Group_range_excl: ranges[0] = (0, 5, 2) is rank 4, out of range for the group (3 ranks)");
}

TEST_CASE("analyzer::invalid-argument::arguments of calls that make handles, of RMA synchronization, of commits") {
  // One call on rank 0 of a 2-rank world; return the messages.
  auto run = [](auto&& fill) {
    Builder t(2);
    for (auto& rank : t.trace().ranks) rank.header.tracer_version = "0.1.0";  // recorded: sizes are known
    fill(t.add(Call::Barrier));
    std::vector<std::string> out;
    for (const auto& f : of_kind(t.run(k_ia), k_ia)) out.push_back(f.message);
    return out;
  };
  using V = std::vector<std::string>;
  SUBCASE("MPI_Win_create: a negative size (MPI_Aint bits), a disp_unit of 0") {
    CHECK(run([](tf::Event& e) {
            e.call = Call::Win_create;
            e.win_size = static_cast<uint64_t>(int64_t{-4});
            e.disp_unit = 1;
          }) == V{"MPI_Win_create: size -4 is negative"});
    CHECK(run([](tf::Event& e) {
            e.call = Call::Win_create;
            e.win_size = 64;
            e.disp_unit = 4;
          }).empty());
  }
  SUBCASE("MPI_Comm_split: colors below MPI_UNDEFINED (-1 in the trace)") {
    CHECK(run([](tf::Event& e) {
            e.call = Call::Comm_split;
            e.color = -5;
          }) == V{"MPI_Comm_split: color -5 is negative and not MPI_UNDEFINED"});
    for (int32_t color : {-1, 0, 7}) {
      CAPTURE(color);
      CHECK(run([&](tf::Event& e) {
              e.call = Call::Comm_split;
              e.color = color;
            }).empty());
    }
  }
  SUBCASE("MPI_Cart_create: a grid larger than the communicator, a negative dimension") {
    auto cart = [&](std::vector<int64_t> dims) {
      return run([&](tf::Event& e) {
        e.call = Call::Cart_create;
        e.counts = dims;
        e.displs.assign(dims.size(), 0);
      });
    };
    CHECK(cart({3}) == V{"MPI_Cart_create: the grid of 3 ranks is larger than MPI_COMM_WORLD (2 ranks)"});
    CHECK(cart({2, -1}) == V{"MPI_Cart_create: dims[1] = -1 is negative"});
    CHECK(cart({2}).empty());
    CHECK(cart({1, 1}).empty());  // smaller: the other rank gets MPI_COMM_NULL
  }
  SUBCASE("type constructors: a negative block length (recorded only then)") {
    CHECK(run([](tf::Event& e) {
            e.call = Call::Type_vector;
            e.count = 2;
            e.datatype = k_int;
            e.counts = {-1};
          }) == V{"MPI_Type_vector: blocklength -1 is negative"});
    CHECK(run([](tf::Event& e) {
            e.call = Call::Type_indexed;
            e.count = 3;
            e.datatype = k_int;
            e.counts = {1, 0, -2};
          }) == V{"MPI_Type_indexed: array_of_blocklengths[2] = -2 is negative"});
  }
  SUBCASE("a neighborhood collective on a communicator without a virtual topology (MPI-3.1 section 7.6)") {
    CHECK(run([](tf::Event& e) {
            e.call = Call::Neighbor_allgather;
            e.comm = 0;
          }) == V{"MPI_Neighbor_allgather: MPI_COMM_WORLD has no virtual topology (Cartesian, graph or distributed "
                  "graph)"});
  }
  SUBCASE("MPI_Type_commit and MPI_Type_free of MPI_DATATYPE_NULL") {
    for (Call call : {Call::Type_commit, Call::Type_free}) {
      CAPTURE(call);
      CHECK(run([&](tf::Event& e) {
              e.call = call;
              e.datatype = 0;
            }) == V{std::string(tf::call_name(call)) + ": the datatype is MPI_DATATYPE_NULL"});
    }
  }
  SUBCASE("RMA synchronization: an assert bit of no MPI_MODE_* constant, an unknown lock type") {
    // (Window 1 is not created here: what that says is left aside.)
    const std::string bits = "MPI_Win_fence: the assert argument has bits that are none of the MPI_MODE_* constants";
    for (const uint32_t flags : {tf::assert_flag::noprecede | tf::assert_flag::other, tf::assert_flag::noprecede}) {
      const auto found = run([&](tf::Event& e) {
        e.call = Call::Win_fence;
        e.window = 1;
        e.assert_flags = flags;
      });
      CHECK(std::count(found.begin(), found.end(), bits) == ((flags & tf::assert_flag::other) ? 1 : 0));
    }
    auto lock = [&](tf::LockType type) {
      return run([&](tf::Event& e) {
        e.call = Call::Win_lock;
        e.window = 1;
        e.lock_type = type;
      });
    };
    const auto unknown = lock(tf::LockType::unspecified);
    CHECK(std::count(unknown.begin(), unknown.end(),
                     "MPI_Win_lock: lock_type is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED") == 1);
    const auto shared = lock(tf::LockType::shared);
    CHECK(std::count(shared.begin(), shared.end(),
                     "MPI_Win_lock: lock_type is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED") == 0);
  }
}

TEST_CASE("analyzer::invalid-argument::MPI_Comm_create's groups across ranks (MPI-3.1 section 6.4.2)") {
  // Each rank of a 3-rank world calls MPI_Comm_create on MPI_COMM_WORLD
  // with its group (id 5) of `groups[r]`.
  auto run = [](std::vector<std::vector<uint32_t>> groups) {
    Builder t(3);
    for (uint32_t r = 0; r < 3; ++r) {
      tf::CommDef g;
      g.id = 5;
      g.world_ranks = groups[r];
      g.is_group = true;
      t.trace().ranks[r].comms.emplace(5, g);
      tf::Event& e = t.add(Call::Comm_create, r);
      e.comm = 0;
      e.group = 5;
    }
    std::vector<std::string> out;
    for (const auto& f : of_kind(t.run(k_ia), k_ia)) out.push_back(f.message);
    return out;
  };
  using V = std::vector<std::vector<uint32_t>>;
  CHECK(run(V{{0, 1}, {0, 1}, {}}).empty());     // rank 2 passes MPI_GROUP_EMPTY
  CHECK(run(V{{0}, {1, 2}, {1, 2}}).empty());    // disjoint groups, each passed by all its members
  CHECK(run(V{{2, 0}, {}, {2, 0}}).empty());
  const auto differ = run(V{{0}, {0, 1}, {0, 1}});
  REQUIRE(differ.size() == 1);
  CHECK(differ[0] == "MPI_Comm_create on MPI_COMM_WORLD: rank 1 passes the group of 2 ranks 0 and 1, but rank 0, a "
                     "member of it, passes the group of 1 rank 0");
  const auto order = run(V{{0, 1}, {1, 0}, {}});
  REQUIRE(order.size() == 1);  // the same ranks in another order
  CHECK(order[0].find("rank 0 passes the group of 2 ranks 0 and 1, but rank 1") != std::string::npos);
}

TEST_CASE("analyzer::invalid-argument::an RMA target range outside the target's window (MPI-3.1 section 11.3)") {
  // Window 1 over a 2-rank MPI_COMM_WORLD, `sizes[r]` bytes with disp_unit
  // `units[r]` at rank r; rank 0 then makes the RMA call `fill` sets up.
  auto run = [](std::vector<uint64_t> sizes, std::vector<int32_t> units, auto&& fill, bool recorded = true) {
    Builder t(2);
    if (recorded)
      for (auto& rank : t.trace().ranks) rank.header.tracer_version = "0.1.0";
    for (uint32_t r = 0; r < 2; ++r) t.win_create(r, 1, 0x10000 + 0x1000 * r, sizes[r], units[r]);
    fill(t);
    std::vector<std::string> out;
    for (const auto& f : of_kind(t.run(k_ia), k_ia)) out.push_back(f.message);
    return out;
  };
  using V = std::vector<std::string>;
  const std::vector<uint64_t> same{16, 16};
  const std::vector<int32_t> ints{4, 4};
  // A put of `count` ints at `disp` from rank 0 to `target`.
  auto put = [](int32_t target, int64_t count, int64_t disp, uint32_t type = k_int) {
    return [=](Builder& t) { t.rma(Call::Put, 0, 1, target, 0x2000, count, static_cast<uint64_t>(disp), type); };
  };
  SUBCASE("in range, exactly at the end, count 0, MPI_PROC_NULL: clean") {
    CHECK(run(same, ints, put(1, 1, 3)).empty());
    CHECK(run(same, ints, put(1, 4, 0)).empty());
    CHECK(run(same, ints, put(1, 0, 100)).empty());
    CHECK(run(same, ints, put(tf::k_proc_null, 1, 100)).empty());
    CHECK(run({16, 16}, {8, 8}, put(1, 1, 1, k_double)).empty());  // disp_unit 8: bytes [8, 16)
  }
  SUBCASE("past the end, before the start") {
    CHECK(run(same, ints, put(1, 1, 4)) ==
          V{"MPI_Put: target_disp 4 x disp_unit 4 with 1 x MPI_INT reaches bytes [16, 20) of target rank 1's window, "
            "outside its 16 bytes"});
    CHECK(run(same, ints, put(1, 2, 3)).size() == 1);  // crosses the end
    CHECK(run(same, ints, put(1, 1, -1)) ==
          V{"MPI_Put: target_disp -1 x disp_unit 4 with 1 x MPI_INT reaches bytes [-4, 0) of target rank 1's window, "
            "outside its 16 bytes"});
    CHECK(run({16, 16}, {8, 8}, put(1, 1, 2, k_double)).size() == 1);  // disp_unit 8: bytes [16, 24)
  }
  SUBCASE("the target's size and disp_unit, not the origin's") {
    // Rank 1's window is smaller: 4 ints fit rank 0's, not rank 1's.
    CHECK(run({16, 8}, ints, put(0, 4, 0)).empty());
    CHECK(run({16, 8}, ints, put(1, 4, 0)) ==
          V{"MPI_Put: target_disp 0 x disp_unit 4 with 4 x MPI_INT reaches bytes [0, 16) of target rank 1's window, "
            "outside its 8 bytes"});
    // disp_unit 1 at the target: displacement 4 is byte 4.
    CHECK(run(same, {4, 1}, put(1, 1, 4)).empty());
    CHECK(run(same, {1, 4}, put(1, 1, 4)).size() == 1);
    // A window of 0 bytes at the target takes no data.
    CHECK(run({16, 0}, ints, put(1, 1, 0)).size() == 1);
    CHECK(run({16, 0}, ints, put(1, 0, 0)).empty());
  }
  SUBCASE("each RMA communication call's target") {
    auto call = [](Call c, int64_t disp) {
      return [=](Builder& t) {
        tf::Event& e = t.rma(c, 0, 1, 1, 0x2000, 1, static_cast<uint64_t>(disp));
        e.op = k_sum;
        e.result_buf = 0x3000;
        e.result_count = 1;
        e.result_datatype = k_int;
        e.compare_buf = 0x4000;
        if (c == Call::Fetch_and_op || c == Call::Compare_and_swap) {
          e.target_count = 0;  // (the tracer records one element of datatype)
          e.target_datatype = 0;
        }
        if (tf::call_traits(c).request == tf::RequestEffect::create) e.request = 7;
      };
    };
    for (Call c : {Call::Put, Call::Get, Call::Accumulate, Call::Get_accumulate, Call::Fetch_and_op,
                   Call::Compare_and_swap, Call::Rput, Call::Rget, Call::Raccumulate, Call::Rget_accumulate}) {
      CAPTURE(tf::call_name(c));
      CHECK(run(same, ints, call(c, 3)).empty());
      const V found = run(same, ints, call(c, 4));
      REQUIRE(found.size() == 1);
      CHECK(contains(found[0], std::string(tf::call_name(c)) + ": target_disp 4 x disp_unit 4 with 1 x MPI_INT"));
    }
  }
  SUBCASE("derived target datatypes: true bounds, not the extent") {
    auto typed = [&](tf::DatatypeDef def, int64_t count, int64_t disp) {
      return run(same, {1, 1}, [=](Builder& t) {
        t.trace().ranks[0].datatypes.emplace(def.id, def);
        tf::Event& e = t.rma(Call::Put, 0, 1, 1, 0x2000, count, static_cast<uint64_t>(disp), k_int);
        e.target_datatype = def.id;
      });
    };
    tf::DatatypeDef low;  // one int at byte -8 (a negative lower bound)
    low.id = 70;
    low.size = 4;
    low.lb = -8;
    low.extent = 12;
    low.runs = {tf::Run{-8, 4, 1, 0}};
    low.committed = true;
    CHECK(typed(low, 1, 0).size() == 1);   // bytes [-8, -4)
    CHECK(typed(low, 1, 8).empty());       // bytes [0, 4)
    CHECK(typed(low, 2, 8).empty());       // bytes [0, 16)
    CHECK(typed(low, 3, 8).size() == 1);   // bytes [0, 28)
    tf::DatatypeDef wide = low;  // one int at byte 0, resized to 64 bytes
    wide.id = 71;
    wide.lb = 0;
    wide.extent = 64;
    wide.runs = {tf::Run{0, 4, 1, 0}};
    CHECK(typed(wide, 1, 12).empty());     // its extent passes the end, its data does not
    CHECK(typed(wide, 2, 0).size() == 1);  // bytes [0, 68)
    tf::DatatypeDef back = low;  // two ints, the second 8 bytes below the first (a negative stride)
    back.id = 72;
    back.lb = -8;
    back.extent = 12;
    back.runs = {tf::Run{0, 4, 2, -8}};
    CHECK(typed(back, 1, 8).empty());      // bytes [0, 12)
    CHECK(typed(back, 1, 4).size() == 1);  // bytes [-4, 8)
    tf::DatatypeDef hull = wide;  // too many runs to record: a hull of [lb, lb + extent)
    hull.id = 73;
    hull.truncated = true;
    hull.runs = {tf::Run{0, 64, 1, 0}};
    CHECK(typed(hull, 1, 0).empty());      // its true bounds are not known
    tf::DatatypeDef none = wide;           // not recorded
    none.id = 74;
    none.runs.clear();
    CHECK(typed(none, 1, 100).empty());
  }
  SUBCASE("not judged: hand-written traces, unknown targets") {
    CHECK(run(same, ints, put(1, 1, 4), false).empty());
  }
  SUBCASE("dynamic windows: within memory the target attached (MPI-3.1 section 11.2.4)") {
    for (const int attached : {0, 1, 2, 3}) {  // none; [0x7fff0000, +8); two adjacent regions of 4; 3: none,
      CAPTURE(attached);                        // and the target's trace is cut short: not judged
      Builder t(2);
      if (attached == 3) t.unfinalize(1);
      for (auto& rank : t.trace().ranks) rank.header.tracer_version = "0.1.0";
      for (uint32_t r = 0; r < 2; ++r) {
        tf::Event& e = t.add(Call::Win_create_dynamic, r);
        e.comm = 0;
        e.window = 1;
      }
      for (int k = 0; k < attached && attached < 3; ++k) {
        tf::Event& a = t.add(Call::Win_attach, 1);
        a.window = 1;
        a.win_base = 0x7fff0000 + (attached == 2 ? 4 * k : 0);
        a.win_size = attached == 2 ? 4 : 8;
      }
      t.rma(Call::Put, 0, 1, 1, 0x2000, 2, 0x7fff0000);  // [0x7fff0000, +8)
      t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0x7fff0008);  // just past
      const auto f = of_kind(t.run(k_ia), k_ia);
      if (attached == 3) {
        CHECK(f.empty());
      } else if (attached == 0) {
        REQUIRE(f.size() == 2);
        CHECK(contains(f[0].message, "to which it attaches no memory"));
        CHECK(contains(f[1].message, "to which it attaches no memory"));
      } else {
        REQUIRE(f.size() == 1);
        CHECK(contains(f[0].message, "MPI_Put: target address 0x7fff0008 with 1 x MPI_INT reaches bytes [0x7fff0008, "
                             "0x7fff000c) of target rank 1's dynamic window, outside the memory it attaches "
                             "([0x7fff0000, 0x7fff0008))"));
      }
    }
  }
  SUBCASE("a call that returned an error for it is named by its range") {
    const V found = run(same, ints, [](Builder& t) { t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 4).rc = 13; });
    REQUIRE(found.size() == 1);
    CHECK(contains(found[0], "reaches bytes [16, 20)"));
  }
  SUBCASE("calls of one site over many displacements: those reaching furthest") {
    // One call site (the same site id) in a loop over displacements: the
    // first call reaching furthest above the window and the first reaching
    // furthest below are named; the error codes of the site's failed calls
    // (rc 13) are not reported as such.
    auto loop = [](std::vector<int64_t> disps, int32_t rc) {
      return [=](Builder& t) {
        for (int64_t d : disps) {
          tf::Event& e = t.rma(Call::Put, 0, 1, 1, 0x2000, 1, static_cast<uint64_t>(d));
          e.site = 99;
          if (d < 0 || d > 3) e.rc = rc;
        }
        auto& sites = t.trace().ranks[0].sites;
        sites[99] = sites.begin()->second;
        sites[99].id = 99;
      };
    };
    CHECK(run(same, ints, loop({0, 1, 2, 3, 2, 1, 0}, 0)).empty());
    // (Both problems are at one source line: one finding, the first's headline.)
    const V both = run(same, ints, loop({0, -2, -1, 4, 6, 5, 6, -2, 3}, 13));
    REQUIRE(both.size() == 1);
    CHECK(contains(both[0], "target_disp -2 x disp_unit 4 with 1 x MPI_INT reaches bytes [-8, -4)"));
    const V low = run(same, ints, loop({0, -1, -3, -2}, 13));
    REQUIRE(low.size() == 1);
    CHECK(contains(low[0], "target_disp -3 x disp_unit 4 with 1 x MPI_INT reaches bytes [-12, -8)"));
    const V high = run(same, ints, loop({0, 1, 2, 3, 4, 5}, 0));
    REQUIRE(high.size() == 1);
    CHECK(contains(high[0], "target_disp 5"));
  }
}

TEST_CASE("analyzer::invalid-argument::each rule's common case, at its edges") {
  // Each rule answers its common case before the rules themselves: a valid
  // communicator on a rank that freed none, a rank of MPI_COMM_WORLD, a tag
  // in [0, MPI_TAG_UB], a predefined datatype, a request on a rank that
  // freed none. The values next to those must still be reported.
  Builder t(2);
  t.trace().ranks[0].header.tracer_version = "0.1.0";
  t.trace().ranks[0].header.options["mpi.tag_ub"] = "100";
  p2p(t, Call::Send, 0, 1, 0, 1, tf::k_first_derived_id - 1);  // the last predefined id: fine
  p2p(t, Call::Send, 0, 1, 100);                               // tag MPI_TAG_UB: fine
  p2p(t, Call::Send, 0, 1, 101);                               // seq 3
  p2p(t, Call::Send, 0, 1, 0).comm = tf::k_invalid_id;         // seq 4
  p2p(t, Call::Send, 0, 1, 0, 1, 0);                           // seq 5: MPI_DATATYPE_NULL
  p2p(t, Call::Send, 0, 1, 0, 1, tf::k_invalid_id);            // seq 6
  p2p(t, Call::Isend, 0, 1, 0).request = 7;
  t.wait(7);
  t.wait(tf::k_invalid_request);  // seq 9
  const auto f = of_kind(t.run(k_ia), k_ia);
  REQUIRE(f.size() == 5);
  CHECK(f[0].message == "MPI_Send: tag 101 is above MPI_TAG_UB (100)");
  CHECK(f[0].locations[0].event == an::EventRef{0, 3});
  CHECK(f[1].message == "MPI_Send: the communicator is invalid (freed or never created)");
  CHECK(f[1].locations[0].event == an::EventRef{0, 4});
  CHECK(f[2].message == "MPI_Send: the datatype is MPI_DATATYPE_NULL");
  CHECK(f[3].message == "MPI_Send: the datatype is invalid (freed or never created)");
  CHECK(f[4].message == "MPI_Wait: the request is invalid (freed, completed, or never created)");
  CHECK(f[4].locations[0].event == an::EventRef{0, 9});
}

// Sends and receives (one buffer, read from the event rather than from the
// shared buffers) against the same rules on a collective's buffer (the
// general path): a negative count, a NULL buffer with data, an uncommitted
// derived type; and NULL with count 0 or of a type without data is fine.
TEST_CASE("analyzer::invalid-argument::a send's or a receive's one buffer") {
  const Call calls[] = {Call::Send, Call::Isend, Call::Ssend, Call::Recv, Call::Irecv, Call::Send_init,
                        Call::Recv_init};
  const std::string name[] = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Recv", "MPI_Irecv", "MPI_Send_init",
                              "MPI_Recv_init"};
  for (std::size_t i = 0; i < std::size(calls); ++i) {
    CAPTURE(name[i]);
    Builder t(2);
    t.trace().ranks[0].header.tracer_version = "0.1.0";
    t.vector_type(65, 2, 1, 0, 0);
    tf::Event& c = t.add(Call::Type_contiguous);  // seq 1
    c.count = 2;
    c.datatype = k_int;
    c.new_datatype = 65;
    uint64_t request = 0x100;
    auto call = [&](int64_t count, uint32_t type, uint64_t buf) {
      tf::Event& e = p2p(t, calls[i], 0, 1, 0, count, type, buf);
      if (calls[i] != Call::Send && calls[i] != Call::Ssend && calls[i] != Call::Recv) e.request = ++request;
    };
    call(-2, k_int, 0x1000);  // seq 2
    call(3, k_int, 0);        // seq 3: NULL with data
    call(0, k_int, 0);        // NULL, no data: fine
    call(1, 65, 0x1000);      // seq 5: uncommitted
    call(1, k_int, 0x1000);   // fine
    // The same on a broadcast's buffer.
    for (const auto& [count, type, buf] : {std::tuple{int64_t{-2}, k_int, uint64_t{0x1000}}, std::tuple{int64_t{3}, k_int, uint64_t{0}},
                                           std::tuple{int64_t{1}, uint32_t{65}, uint64_t{0x1000}}}) {
      tf::Event& b = t.add(Call::Bcast);
      b.comm = 0;
      b.peer = 0;
      b.buf = buf;
      b.count = count;
      b.datatype = type;
    }
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 6);
    CHECK(f[0].message == name[i] + ": count -2 is negative");
    CHECK(f[0].locations[0].event == an::EventRef{0, 2});
    CHECK(f[1].message == name[i] + ": the buffer is NULL with count 3 of MPI_INT");
    CHECK(f[1].locations[0].event == an::EventRef{0, 3});
    CHECK(f[2].message == name[i] + ": datatype 65 (MPI_Type_contiguous) is used without MPI_Type_commit");
    CHECK(f[2].locations[0].event == an::EventRef{0, 5});
    CHECK(f[3].message == "MPI_Bcast: count -2 is negative");
    CHECK(f[4].message == "MPI_Bcast: the buffer is NULL with count 3 of MPI_INT");
    CHECK(f[5].message == "MPI_Bcast: datatype 65 (MPI_Type_contiguous) is used without MPI_Type_commit");
  }
}

// Arguments of one call that share bytes (MPI-3.1 section 2.3): an output
// against any other argument, blocks of one output against each other;
// two reads, interleaved blocks and the halves of MPI_PROC_NULL are fine.
TEST_CASE("analyzer::invalid-argument::buffers of one call that share bytes (MPI-3.1 section 2.3)") {
  Builder t(2);
  t.trace().ranks[0].header.tracer_version = "0.1.0";
  t.vector_type(65, 3, 2);  // 3 ints 2 apart: bytes 0-3, 8-11, 16-19
  auto sendrecv = [&](uint64_t buf, uint64_t recv_buf, int64_t count, uint32_t type, int32_t dest = 1) {
    tf::Event& e = p2p(t, Call::Sendrecv, 0, dest, 0, count, type, buf);
    e.recv_buf = recv_buf;
    e.recv_count = count;
    e.recv_datatype = type;
    e.recv_peer = 1;
    e.recv_tag = 0;
    return &e;
  };
  sendrecv(0x1000, 0x1008, 3, k_int);                       // seq 1: [0x1000, +12) and [0x1008, +12)
  sendrecv(0x1000, 0x100c, 3, k_int);                       // adjacent: fine
  sendrecv(0x1000, 0x1004, 1, 65);                          // interleaved: fine
  sendrecv(0x1000, 0x1008, 1, 65);                          // seq 4: shifted by one block
  sendrecv(0x1000, 0x1000, 3, k_int, tf::k_proc_null);      // nothing is sent: fine
  tf::Event& a = allreduce(t, 0, k_int, k_sum);             // seq 6: send buffer inside the receive buffer
  a.buf = 0x2004;
  tf::Event& g = t.add(Call::Gatherv);                      // seq 7, rank 0 the root: blocks 0-7 and 4-11
  g.comm = 0;
  g.peer = 0;
  g.buf = 0x3000;
  g.count = 2;
  g.datatype = k_int;
  g.recv_buf = 0x4000;
  g.recv_datatype = k_int;
  g.recv_counts = {2, 2};
  g.recv_displs = {0, 1};
  tf::Event& s = t.add(Call::Scatterv);                     // the root reads overlapping blocks: fine
  s.comm = 0;
  s.peer = 0;
  s.buf = 0x5000;
  s.datatype = k_int;
  s.counts = {2, 2};
  s.displs = {0, 1};
  s.recv_buf = 0x6000;
  s.recv_count = 2;
  s.recv_datatype = k_int;
  t.win_create(0, 1, 0x9000, 64);
  for (const uint64_t compare : {uint64_t{0x7004}, uint64_t{0x7000}}) {  // seq 10: compare and result one (fine); seq 11
    tf::Event& c = t.rma(Call::Compare_and_swap, 0, 1, 1, compare == 0x7004 ? 0x7008 : 0x7004, 1, 0);
    c.compare_buf = 0x7004;
    c.result_buf = compare;
    if (compare == 0x7000) c.buf = 0x7000;  // origin and result one: wrong
  }
  const auto f = of_kind(t.run(k_ia), k_ia);
  REQUIRE(f.size() == 5);
  CHECK(f[4].message == "MPI_Compare_and_swap: the origin buffer and the result buffer share byte 0x7000");
  CHECK(f[0].message == "MPI_Sendrecv: the send buffer and the receive buffer share byte 0x1008");
  CHECK(f[0].locations[0].event == an::EventRef{0, 1});
  CHECK(f[1].message == "MPI_Sendrecv: the send buffer and the receive buffer share byte 0x1008");
  CHECK(f[1].locations[0].event == an::EventRef{0, 4});
  CHECK(f[2].message == "MPI_Allreduce: the send buffer and the receive buffer share byte 0x2004");
  CHECK(f[3].message == "MPI_Gatherv: two blocks of the receive buffer share byte 0x4004");
}

// A datatype with overlapping entries where MPI writes (MPI-3.1 section
// 4.1): within one element, and elements whose extent is less than their
// span; a send may read an entry twice, and interleaved elements are fine.
TEST_CASE("analyzer::invalid-argument::a receive datatype with overlapping entries (MPI-3.1 section 4.1)") {
  Builder t(2);
  t.vector_type(65, 3, 2);     // 3 ints 2 apart, extent 20
  t.vector_type(66, 3, 0);     // int 0 three times
  t.vector_type(67, 2, 1, 4);  // 2 ints resized to 1: elements share an int
  t.vector_type(68, 2, 2, 4);  // ints 0 and 2, resized to 1: elements interleave
  p2p(t, Call::Recv, 0, 1, 0, 1, 66, 0x1000);  // seq 1
  p2p(t, Call::Recv, 0, 1, 0, 2, 67, 0x1000);  // seq 2
  p2p(t, Call::Recv, 0, 1, 0, 1, 67, 0x1000);  // one element: fine
  p2p(t, Call::Recv, 0, 1, 0, 2, 65, 0x1000);  // fine
  p2p(t, Call::Recv, 0, 1, 0, 2, 68, 0x1000);  // fine
  p2p(t, Call::Send, 0, 1, 0, 1, 66, 0x1000);  // a send: fine
  t.win_create(0, 1, 0x9000, 64);
  t.rma(Call::Get, 0, 1, 1, 0x2000, 1, 0, 66);  // seq 8: the origin overlaps
  t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0, 66);  // seq 9: the target overlaps
  t.rma(Call::Accumulate, 0, 1, 1, 0x2000, 1, 0, 66).op = 1;  // an accumulate's target: not a receive
  const auto f = of_kind(t.run(k_ia), k_ia);
  REQUIRE(f.size() == 4);
  CHECK(f[0].message ==
        "MPI_Recv: the receive buffer has 1 element of datatype 66, which has overlapping entries: byte 0 from its "
        "start is written twice");
  CHECK(f[0].locations[0].event == an::EventRef{0, 1});
  CHECK(f[1].message ==
        "MPI_Recv: the receive buffer has 2 elements of datatype 67, which as laid out have overlapping entries: "
        "byte 4 from its start is written twice");
  CHECK(f[1].locations[0].event == an::EventRef{0, 2});
  CHECK(f[2].message ==
        "MPI_Get: the origin buffer has 1 element of datatype 66, which has overlapping entries: byte 0 from its "
        "start is written twice");
  CHECK(f[2].locations[0].event == an::EventRef{0, 8});
  CHECK(f[3].message.starts_with("MPI_Put: the target buffer has 1 element of datatype 66"));
}

// The requests of a completion call on a rank that freed none (tested for
// MPI_REQUEST_NULL's invalid twin only) and on one that freed one (each
// looked up): one finding per bad request, wherever it is in the array.
TEST_CASE("analyzer::invalid-argument::a completion's requests, with and without a freed one") {
  for (const bool freed : {false, true}) {
    CAPTURE(freed);
    Builder t(2);
    p2p(t, Call::Isend, 0, 1, 0).request = 7;
    p2p(t, Call::Isend, 0, 1, 0).request = 8;
    if (freed) {
      p2p(t, Call::Isend, 0, 1, 0).request = 9;
      t.add(Call::Request_free).request = 9;
    } else {
      t.add(Call::Barrier).comm = 0;
      t.add(Call::Barrier).comm = 0;
    }
    t.complete(Call::Waitall, {7, tf::k_invalid_request, 0, 8}, {7, 8});  // seq 5
    t.complete(Call::Waitany, {tf::k_invalid_request}, {});               // seq 6
    if (freed) t.complete(Call::Testall, {9}, {});                        // seq 7
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == (freed ? 3u : 2u));
    CHECK(f[0].message == "MPI_Waitall: the request is invalid (freed, completed, or never created)");
    CHECK(f[0].locations[0].event == an::EventRef{0, 5});
    CHECK(f[1].message == "MPI_Waitany: the request is invalid (freed, completed, or never created)");
    if (freed) CHECK(f[2].message == "MPI_Testall: the request was freed by MPI_Request_free (0:4)");
  }
}

TEST_CASE("analyzer::invalid-argument::ops and datatypes (MPI-3.1 section 5.9.2)") {
  SUBCASE("predefined ops on their classes") {
    CHECK(an::op_fits(k_sum, k_int, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(k_sum, k_char, an::OpUse::reduction) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(k_land, k_float, an::OpUse::reduction) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(k_land, k_bool, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(6, k_byte, an::OpUse::reduction) == an::OpFit::fits);  // MPI_BAND
    CHECK(an::op_fits(k_maxloc, k_2int, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(k_maxloc, k_int, an::OpUse::reduction) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(k_replace, k_int, an::OpUse::reduction) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(k_replace, k_char, an::OpUse::accumulate) == an::OpFit::fits);
    CHECK(an::op_fits(tf::k_op_no_op, k_int, an::OpUse::accumulate) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(tf::k_op_no_op, k_int, an::OpUse::fetch_accumulate) == an::OpFit::fits);
    CHECK(an::op_fits(64, k_char, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(64, k_int, an::OpUse::accumulate) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(k_sum, 63, an::OpUse::reduction) == an::OpFit::unknown);
    // Fortran's types, in the classes of section 5.9.2 (BasicType 41-60).
    constexpr uint32_t k_integer = 41, k_real = 42, k_complex = 44, k_logical = 46, k_character = 47,
                       k_2real = 49, k_integer8 = 54;
    CHECK(an::op_fits(k_sum, k_integer, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(k_sum, k_complex, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(k_sum, k_logical, an::OpUse::reduction) == an::OpFit::does_not_fit);
    CHECK(an::op_fits(k_land, k_logical, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(k_land, k_integer, an::OpUse::reduction) == an::OpFit::does_not_fit);  // C integers only
    CHECK(an::op_fits(6, k_integer8, an::OpUse::reduction) == an::OpFit::fits);             // MPI_BAND
    CHECK(an::op_fits(1, k_complex, an::OpUse::reduction) == an::OpFit::does_not_fit);      // MPI_MAX
    CHECK(an::op_fits(k_maxloc, k_2real, an::OpUse::reduction) == an::OpFit::fits);
    CHECK(an::op_fits(k_sum, k_character, an::OpUse::reduction) == an::OpFit::does_not_fit);
    CHECK(an::type_class_name(an::type_class(k_real)) == "floating point");
  }
  SUBCASE("MPI_LAND on MPI_DOUBLE in MPI_Allreduce") {
    Builder t(1);
    allreduce(t, 0, k_double, k_land);
    allreduce(t, 0, k_double, k_sum);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Allreduce: MPI_LAND is not defined for MPI_DOUBLE (floating point)");
  }
  SUBCASE("a user op in MPI_Accumulate") {
    Builder t(1);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_lock_all, 0, 1);
    t.rma(Call::Accumulate, 0, 1, 0, 0x2000, 1, 0).op = 64;
    t.win_sync(Call::Win_unlock_all, 0, 1);
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "user-defined ops are not allowed there"));
  }
  SUBCASE("MPI_IN_PLACE in MPI_Bcast and at a non-root of MPI_Reduce") {
    Builder t(2);
    tf::Event& r = t.add(Call::Reduce, 1);
    r.comm = 0;
    r.peer = 0;
    r.in_place = true;
    r.recv_buf = 0x2000;
    r.recv_count = 1;
    r.recv_datatype = k_int;
    r.op = k_sum;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Reduce: MPI_IN_PLACE at rank 1 of MPI_COMM_WORLD, which is not the root (0)");
  }
}

TEST_CASE("analyzer::invalid-argument::requests") {
  SUBCASE("MPI_Start on an active persistent request names where it was started") {
    Builder t(2);
    p2p(t, Call::Send_init, 0, 1, 0).request = 5;
    t.add(Call::Start).request = 5;  // seq 2
    t.add(Call::Start).request = 5;  // seq 3
    t.wait(5);
    t.add(Call::Start).request = 5;  // after completion: fine
    t.wait(5);
    t.add(Call::Request_free).request = 5;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "started again while active"));
    CHECK(f[0].locations[0].event == an::EventRef{0, 3});
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  }
  SUBCASE("MPI_Start on a request of MPI_Isend names where it was created") {
    Builder t(2);
    for (uint64_t r = 1; r <= 40; ++r) p2p(t, Call::Isend, 0, 1, 0).request = r * 0x100;  // seqs 1..40
    t.add(Call::Start).request = 20 * 0x100;                                         // seq 41
    for (uint64_t r = 1; r <= 40; ++r) t.wait(r * 0x100);
    t.add(Call::Start).request = 20 * 0x100;  // completed: no longer the Isend's request
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(!f.empty());
    CHECK(f[0].message == "MPI_Start: the request of MPI_Isend (0:20) is not persistent");
    CHECK(f[0].locations[1].event == an::EventRef{0, 20});
    for (std::size_t i = 1; i < f.size(); ++i) CHECK(!contains(f[i].message, "not persistent"));
  }
  SUBCASE("waiting on a freed request, freeing MPI_REQUEST_NULL") {
    Builder t(2);
    p2p(t, Call::Isend, 0, 1, 0).request = 3;
    t.add(Call::Request_free).request = 3;  // seq 2: allowed on an active request
    t.wait(3);                              // seq 3
    t.add(Call::Request_free).request = 0;  // seq 4
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message == "MPI_Wait: the request was freed by MPI_Request_free (0:2)");
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
    CHECK(f[1].message == "MPI_Request_free: the request is MPI_REQUEST_NULL");
  }
  SUBCASE("a handle value MPI hands out again after MPI_Request_free is a new request") {
    Builder t(2);
    p2p(t, Call::Isend, 0, 1, 0).request = 3;
    t.add(Call::Request_free).request = 3;
    p2p(t, Call::Isend, 0, 1, 1).request = 3;  // the same value, a new request
    t.wait(3);
    p2p(t, Call::Send_init, 0, 1, 2).request = 3;
    t.add(Call::Start).request = 3;
    t.wait(3);
    t.add(Call::Request_free).request = 3;
    CHECK(of_kind(t.run(k_ia), k_ia).empty());
  }
  SUBCASE("MPI_Grequest_complete of a freed generalized request is allowed") {
    // The application may free a generalized request while active; the copy
    // its server keeps still completes it (MPI-3.1 section 12.2), and the
    // tracer names the freed request there.
    Builder t(1);
    t.add(Call::Grequest_start).request = 4;
    t.add(Call::Request_free).request = 4;
    t.add(Call::Grequest_complete).request = 4;
    CHECK(of_kind(t.run(k_ia), k_ia).empty());
  }
  SUBCASE("a request the tracer marked invalid") {
    Builder t(1);
    t.complete(Call::Wait, {tf::k_invalid_request}, {});
    CHECK(of_kind(t.run(k_ia), k_ia).size() == 1);
  }
  SUBCASE("an error code no rule explains") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0).rc = 17;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Send: the call failed with error code 17");
  }
}

TEST_CASE("analyzer::invalid-argument::MPI_Info_free of MPI_INFO_NULL (MPI-4.0 section 10)") {
  Builder t(1);
  t.trace().ranks[0].header.tracer_version = "0.1.0";
  t.add(Call::Info_create).new_datatype = 2;
  t.add(Call::Info_free).new_datatype = 2;
  t.add(Call::Info_free).new_datatype = 0;  // seq 3: the handle the first free set to MPI_INFO_NULL
  const auto f = of_kind(t.run(k_ia), k_ia);
  REQUIRE(f.size() == 1);
  CHECK(f[0].message == "MPI_Info_free: the info is MPI_INFO_NULL");
  CHECK(f[0].locations[0].event == an::EventRef{0, 3});
}

TEST_CASE("analyzer::invalid-argument::buffered sends and the attached buffer (MPI-4.0 section 3.6)") {
  const auto recorded = [](Builder& t) {
    t.trace().ranks[0].header.tracer_version = "0.1.0";  // a hand-written trace may leave out Buffer_attach
    t.trace().ranks[0].header.options["mpi.bsend_overhead"] = "128";
  };
  const auto attach = [](Builder& t, uint64_t bytes) -> tf::Event& {
    tf::Event& e = t.add(Call::Buffer_attach);
    e.buf = 0x8000;
    e.size = bytes;
    e.count = static_cast<int64_t>(bytes);
    return e;
  };
  SUBCASE("no buffer attached; not judged in a hand-written trace") {
    for (bool rec : {true, false}) {
      Builder t(2);
      if (rec) recorded(t);
      p2p(t, Call::Bsend, 0, 1, 0, 100);  // seq 1
      const auto f = of_kind(t.run(k_ia), k_ia);
      REQUIRE(f.size() == (rec ? 1u : 0u));
      if (rec) CHECK(f[0].message == "MPI_Bsend: a buffered send of 400 bytes with no buffer attached (MPI_Buffer_attach)");
    }
  }
  SUBCASE("the message alone and its overhead must fit; detach takes the buffer away") {
    Builder t(2);
    recorded(t);
    attach(t, 400 + 128);                  // seq 1
    p2p(t, Call::Bsend, 0, 1, 0, 100);     // fits exactly
    p2p(t, Call::Ibsend, 0, 1, 0, 101).request = 9;  // seq 3: 4 bytes too many
    t.wait(9);
    p2p(t, Call::Bsend, 0, tf::k_proc_null, 0, 1000);  // MPI_PROC_NULL: nothing is buffered
    t.add(Call::Buffer_detach).size = 528;
    p2p(t, Call::Bsend, 0, 1, 0, 1);       // seq 7: no buffer any more
    p2p(t, Call::Send, 0, 1, 0, 1);        // not buffered
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message ==
          "MPI_Ibsend: the message needs at least 532 bytes (404 of data + MPI_BSEND_OVERHEAD 128) but the attached "
          "buffer has 528");
    CHECK(f[0].locations[0].event == an::EventRef{0, 3});
    CHECK(f[0].locations[1].event == an::EventRef{0, 1});
    CHECK(f[1].locations[0].event == an::EventRef{0, 7});
    CHECK(contains(f[1].message, "no buffer attached"));
  }
  SUBCASE("a second attach while one is attached") {
    Builder t(1);
    recorded(t);
    attach(t, 1000);
    attach(t, 2000);  // seq 2
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Buffer_attach: a buffer is attached already (1000 bytes, at 0:1)");
    CHECK(f[0].locations[0].event == an::EventRef{0, 2});
  }
  SUBCASE("a persistent buffered send is judged at each start") {
    Builder t(2);
    recorded(t);
    p2p(t, Call::Bsend_init, 0, 1, 0, 10).request = 5;  // seq 1: nothing attached yet, and nothing sent
    t.add(Call::Start).request = 5;                     // seq 2
    t.wait(5);
    attach(t, 40 + 128);
    t.add(Call::Start).request = 5;  // fits
    t.wait(5);
    t.add(Call::Request_free).request = 5;
    const auto f = of_kind(t.run(k_ia), k_ia);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Start: a buffered send of 40 bytes with no buffer attached (MPI_Buffer_attach)");
    CHECK(f[0].locations[0].event == an::EventRef{0, 2});
    CHECK(f[0].locations[1].event == an::EventRef{0, 1});
  }
  SUBCASE("earlier messages hold their space until received before the send") {
    for (bool acked : {false, true}) {
      Builder t(2);
      recorded(t);
      attach(t, 2 * (400 + 128) - 1);      // seq 1: room for one message of 400 bytes, not two
      p2p(t, Call::Bsend, 0, 1, 0, 100);   // seq 2
      if (acked) {
        p2p(t, Call::Recv, 1, 0, 0, 100);  // rank 1 receives it, then tells rank 0
        p2p(t, Call::Send, 1, 0, 5);
        p2p(t, Call::Recv, 0, 1, 5);       // seq 3
      }
      p2p(t, Call::Bsend, 0, 1, 0, 100);   // seq 3 or 4
      if (!acked) p2p(t, Call::Recv, 1, 0, 0, 100);
      p2p(t, Call::Recv, 1, 0, 0, 100);
      const auto f = of_kind(t.run(k_ia), k_ia);
      REQUIRE(f.size() == (acked ? 0u : 1u));
      if (acked) continue;
      CHECK(f[0].message ==
            "MPI_Bsend: the message needs 528 bytes of the attached buffer (1055 bytes), but 1 earlier buffered "
            "message of this rank may still hold 528 of them");
      REQUIRE(f[0].locations.size() == 3);
      CHECK(f[0].locations[0].event == an::EventRef{0, 3});
      CHECK(f[0].locations[1].event == an::EventRef{0, 2});
      CHECK(f[0].locations[2].event == an::EventRef{0, 1});
    }
  }
  SUBCASE("a message's bytes: its data, not its extent") {
    const an::RankData data;
    CHECK(an::buffer_bytes(data, k_2int, 3) == 24u);
    CHECK(an::buffer_bytes(data, 30, 2) == 24u);  // MPI_DOUBLE_INT: 12 bytes, extent 16
    CHECK(an::buffer_bytes(data, k_int, 0) == 0u);
    CHECK(!an::buffer_bytes(data, tf::k_first_derived_id + 7, 1));  // not recorded
  }
}

// --- type-mismatch -------------------------------------------------------

TEST_CASE("analyzer::unmatched-message::a ready-mode send needs its receive posted before it (MPI-3.1 3.4)") {
  // Rank 1 posts an Irecv; rank 0 Rsends, with or without a barrier between
  // the post and the send.
  auto run = [](bool barrier) {
    Builder t(2);
    p2p(t, Call::Irecv, 1, 0, 0).request = 0x900;  // 1:1
    if (barrier) {
      t.add(Call::Barrier, 1).comm = 0;
      t.add(Call::Barrier, 0).comm = 0;
    }
    p2p(t, Call::Rsend, 0, 1, 0);
    tf::Event& w = t.wait(0x900, 1);
    w.completed[0].status.source = 0;
    w.completed[0].status.tag = 0;
    return of_kind(t.run("unmatched-message"), "unmatched-message");
  };
  CHECK(run(true).empty());
  const auto f = run(false);
  REQUIRE(f.size() == 1);
  CHECK(f[0].message ==
        "ready-mode MPI_Rsend from rank 0 to rank 1 (tag 0, MPI_COMM_WORLD) may start before its receive is posted");
  REQUIRE(f[0].locations.size() == 2);
  CHECK(f[0].locations[1].event == an::EventRef{1, 1});
}

TEST_CASE("analyzer::signature::comparison") {
  an::RankData data;
  tf::DatatypeDef pair;
  pair.id = 64;
  pair.size = 8;
  pair.signature = {tf::TypeCount{k_int, 2}};
  data.datatypes.emplace(64, pair);
  using Kind = an::SignatureMatch::Kind;
  auto cmp = [&](uint32_t ta, int64_t ca, uint32_t tb, int64_t cb) {
    return an::compare_signatures(an::signature(data, ta, ca), an::signature(data, tb, cb)).kind;
  };
  CHECK(cmp(k_int, 2, k_int, 2) == Kind::same);
  CHECK(cmp(k_int, 2, k_int, 5) == Kind::prefix);
  CHECK(cmp(k_int, 6, k_int, 5) == Kind::longer);
  CHECK(cmp(k_int, 2, k_float, 2) == Kind::differ);
  CHECK(cmp(k_int, 4, 64, 2) == Kind::same);        // 4 ints = 2 x contiguous(2, int)
  CHECK(cmp(k_2int, 1, k_int, 2) == Kind::same);    // a pair type is its two parts
  CHECK(cmp(k_byte, 8, k_int, 2) == Kind::differ);  // bytes do not match ints
  CHECK(cmp(k_packed, 8, k_int, 2) == Kind::unknown);
  CHECK(cmp(k_packed, 8, k_packed, 4) == Kind::longer);
  CHECK(cmp(63, 1, k_int, 1) == Kind::unknown);
  // Fortran: MPI_INTEGER and MPI_REAL (both 4 bytes) differ; MPI_2INTEGER is two MPI_INTEGER.
  CHECK(cmp(41, 4, 42, 4) == Kind::differ);
  CHECK(cmp(41, 4, 41, 4) == Kind::same);
  CHECK(cmp(48, 1, 41, 2) == Kind::same);
}

TEST_CASE("analyzer::type-mismatch::point-to-point") {
  SUBCASE("MPI_INT sent, MPI_FLOAT received: both locations") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0, 4, k_int);
    p2p(t, Call::Recv, 1, 0, 0, 4, k_float);
    const auto f = of_kind(t.run(k_tm), k_tm);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "type signatures differ: rank 0 sends 4 x MPI_INT and rank 1 receives 4 x MPI_FLOAT");
    REQUIRE(f[0].locations.size() == 2);
    CHECK(f[0].locations[0].event == an::EventRef{1, 1});
    CHECK(contains(f[0].locations[0].note, "MPI_INT sent, MPI_FLOAT expected"));
    CHECK(f[0].locations[1].event == an::EventRef{0, 1});
  }
  SUBCASE("truncation") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0, 10, k_int);
    p2p(t, Call::Recv, 1, 0, 0, 5, k_int);
    const auto f = of_kind(t.run(k_tm), k_tm);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "message truncated: rank 0 sends 10 x MPI_INT and rank 1 receives into 5 x MPI_INT");
    CHECK(contains(f[0].locations[0].note, "40 bytes into 20"));
  }
  SUBCASE("a longer receive buffer, MPI_PACKED and pair types are fine") {
    Builder t(2);
    p2p(t, Call::Send, 0, 1, 0, 2, k_int);
    p2p(t, Call::Recv, 1, 0, 0, 8, k_int);
    p2p(t, Call::Send, 0, 1, 1, 8, k_packed);
    p2p(t, Call::Recv, 1, 0, 1, 2, k_int);
    p2p(t, Call::Send, 0, 1, 2, 1, k_2int);
    p2p(t, Call::Recv, 1, 0, 2, 2, k_int);
    CHECK(of_kind(t.run(k_tm), k_tm).empty());
  }
  SUBCASE("one derived datatype id at two ranks names two types: compared, not taken as equal") {
    Builder t(2);
    t.vector_type(100, 4, 1, 0, 0);  // rank 0: 4 ints
    t.vector_type(100, 2, 1, 0, 1);  // rank 1: 2 ints
    p2p(t, Call::Send, 0, 1, 0, 1, 100);
    p2p(t, Call::Recv, 1, 0, 0, 1, 100);
    const auto f = of_kind(t.run(k_tm), k_tm);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "message truncated"));
  }
}

TEST_CASE("analyzer::type-mismatch::RMA origin and target") {
  Builder t(2);
  t.win_create(0, 1, 0x10000, 64);
  t.win_create(1, 1, 0x10000, 64);
  t.win_sync(Call::Win_lock_all, 0, 1);
  tf::Event& put = t.rma(Call::Put, 0, 1, 1, 0x2000, 2, 0);
  put.target_datatype = k_float;
  tf::Event& get = t.rma(Call::Get, 0, 1, 1, 0x2000, 2, 0);
  get.target_count = 3;  // 3 ints into room for 2
  t.win_sync(Call::Win_unlock_all, 0, 1);
  const auto f = of_kind(t.run(k_tm), k_tm);
  REQUIRE(f.size() == 2);
  CHECK(f[0].message ==
        "MPI_Put: type signatures differ: the origin buffer is 2 x MPI_INT, the target buffer is 2 x MPI_FLOAT");
  CHECK(f[1].message == "MPI_Get: the target buffer (3 x MPI_INT) does not fit the origin buffer (2 x MPI_INT)");
}

// type-mismatch's point-to-point half and unmatched-message run their
// finish() over the ranks on the options' threads, each rank into its own
// groups or list, merged in rank order: the same findings, in the same
// order, with the same counts and ranks, on one thread and on several.
namespace {

// A ring of `ranks` ranks, `rounds` messages each way round, with type
// mismatches and truncations at places that differ by rank and round (more
// than the 200 findings a check lists, the same place on several ranks
// counted once), and sends and receives that match nothing on some ranks.
tf::Trace ring(uint32_t ranks, int rounds) {
  Builder b(ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    const auto next = static_cast<int32_t>((r + 1) % ranks);
    const auto prev = static_cast<int32_t>((r + ranks - 1) % ranks);
    for (int k = 0; k < rounds; ++k) {
      p2p(b, Call::Send, r, next, k, 4, k_int);
      const bool mismatch = (k + static_cast<int>(r)) % 3 == 0;
      const bool truncated = (k * static_cast<int>(r)) % 5 == 1;
      p2p(b, Call::Recv, r, prev, k, truncated ? 2 : 4, mismatch ? k_float : k_int);
    }
    for (uint32_t u = 0; u < r % 3; ++u) p2p(b, Call::Send, r, next, 1000 + static_cast<int32_t>(u), 1, k_int);
    if (r % 2) p2p(b, Call::Recv, r, prev, 2000, 1, k_int);
    b.add(Call::Finalize, r);
  }
  return b.trace();
}

an::Result analyze_on(const std::filesystem::path& dir, unsigned threads) {
  an::Options options;
  options.checks = {"type-mismatch", "unmatched-message"};
  options.threads = threads;
  return an::analyze(dir, options);
}

}  // namespace

TEST_CASE("analyzer::type-mismatch and unmatched-message::the same findings on one thread and on several") {
  const std::filesystem::path dir = smtrace::test::scratch_dir("finish-threads");
  tf::write_trace(ring(7, 150), dir);
  const an::Result one = analyze_on(dir, 1);
  std::size_t type_mismatch = 0, unmatched = 0, repeated = 0;
  for (const an::Finding& f : one.findings) {
    type_mismatch += f.kind == "type-mismatch";
    unmatched += f.kind == "unmatched-message";
    for (const std::string& note : f.notes) repeated += note.find("occurs") != std::string::npos;
  }
  CHECK(type_mismatch == 201);  // 200 places and one finding that counts the rest
  CHECK(unmatched == 6 + 3);  // rank r sends r % 3 messages to nobody; odd ranks wait for tag 2000
  CHECK(repeated > 0);
  const std::string expected = an::render_json(one);
  for (unsigned threads : {2u, 3u, 8u}) {
    CAPTURE(threads);
    CHECK(an::render_json(analyze_on(dir, threads)) == expected);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// --- epoch-lifecycle -----------------------------------------------------

TEST_CASE("analyzer::epoch-lifecycle::access epochs") {
  SUBCASE("a put outside any epoch") {
    Builder t(2);
    t.win_create(0, 1, 0x10000, 64);
    t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Put to rank 1 outside any access epoch");
  }
  SUBCASE("fence, PSCW, lock and lock_all epochs are fine") {
    Builder t(2);
    tf::CommDef group;
    group.id = 5;
    group.is_group = true;
    group.world_ranks = {1};
    t.trace().ranks[0].comms.emplace(5, group);
    group.world_ranks = {0};
    t.trace().ranks[1].comms.emplace(5, group);
    t.win_create(1, 1, 0x10000, 64);
    t.win_sync(Call::Win_fence, 1, 1);
    t.win_sync(Call::Win_fence, 1, 1).assert_flags = tf::assert_flag::nosucceed;
    t.win_sync(Call::Win_post, 1, 1).group = 5;
    t.win_sync(Call::Win_wait, 1, 1);
    t.win_sync(Call::Win_free, 1, 1);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_fence, 0, 1);
    t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0);
    t.win_sync(Call::Win_fence, 0, 1).assert_flags = tf::assert_flag::nosucceed;
    t.win_sync(Call::Win_start, 0, 1).group = 5;
    t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0);
    t.win_sync(Call::Win_complete, 0, 1);
    t.win_sync(Call::Win_lock, 0, 1, 1, tf::LockType::shared);
    t.rma(Call::Get, 0, 1, 1, 0x2000, 1, 0);
    t.win_sync(Call::Win_flush, 0, 1, 1);
    t.win_sync(Call::Win_unlock, 0, 1, 1);
    t.win_sync(Call::Win_lock_all, 0, 1);
    t.rma(Call::Rput, 0, 1, 0, 0x2000, 1, 0).request = 9;
    t.wait(9);
    t.win_sync(Call::Win_unlock_all, 0, 1);
    t.win_sync(Call::Win_free, 0, 1);
    CHECK(of_kind(t.run(k_el), k_el).empty());
  }
  SUBCASE("a lock, lock_all or start while a fence epoch's put is pending; none after a fence without calls") {
    for (const Call open : {Call::Win_lock, Call::Win_lock_all, Call::Win_start}) {
      CAPTURE(open);
      Builder t(2);
      t.win_create(0, 1, 0x10000, 64);
      t.win_sync(Call::Win_fence, 0, 1);
      t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0);  // seq 3: completed only by a fence
      t.win_sync(open, 0, 1, 1, tf::LockType::exclusive);
      const auto f = of_kind(t.run(k_el), k_el);
      REQUIRE(!f.empty());
      CHECK(f[0].message.find("opens an access epoch while RMA calls of a fence epoch are pending") !=
            std::string::npos);
      REQUIRE(f[0].locations.size() == 2);
      CHECK(f[0].locations[1].event == an::EventRef{0, 3});
    }
    Builder t(2);  // a fence, no RMA call, then a lock epoch: allowed
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_fence, 0, 1);
    t.win_sync(Call::Win_lock, 0, 1, 1, tf::LockType::exclusive);
    t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0);
    t.win_sync(Call::Win_unlock, 0, 1, 1);
    t.win_sync(Call::Win_lock, 0, 1, 1, tf::LockType::exclusive);  // the put above was the lock's
    t.win_sync(Call::Win_unlock, 0, 1, 1);
    t.win_sync(Call::Win_fence, 0, 1);
    t.win_sync(Call::Win_free, 0, 1);
    CHECK(of_kind(t.run(k_el), k_el).empty());
  }
  SUBCASE("a put after a fence with MPI_MODE_NOSUCCEED names the fence") {
    Builder t(2);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_fence, 0, 1).assert_flags = tf::assert_flag::nosucceed;  // seq 2
    t.rma(Call::Put, 0, 1, 1, 0x2000, 1, 0);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 1);
    REQUIRE(f[0].locations.size() == 2);
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  }
  SUBCASE("a request-based put in a fence epoch") {
    Builder t(2);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_fence, 0, 1);
    t.rma(Call::Rput, 0, 1, 1, 0x2000, 1, 0).request = 4;
    t.wait(4);
    t.win_sync(Call::Win_fence, 0, 1);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Rput to rank 1 outside a passive target epoch");
  }
}

TEST_CASE("analyzer::epoch-lifecycle::locks and frees") {
  SUBCASE("unlock without lock; a double lock names both locks") {
    Builder t(2);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_unlock, 0, 1, 1);
    t.win_sync(Call::Win_lock, 0, 1, 1, tf::LockType::shared);     // seq 3
    t.win_sync(Call::Win_lock, 0, 1, 1, tf::LockType::exclusive);  // seq 4
    t.win_sync(Call::Win_unlock, 0, 1, 1);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message == "MPI_Win_unlock on rank 1 without a matching MPI_Win_lock");
    CHECK(f[1].message == "MPI_Win_lock on rank 1, which this rank already holds locked");
    CHECK(f[1].locations[0].event == an::EventRef{0, 4});
    CHECK(f[1].locations[1].event == an::EventRef{0, 3});
  }
  SUBCASE("MPI_Win_free with a lock open") {
    Builder t(2);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_lock, 0, 1, 1, tf::LockType::shared);  // seq 2
    t.win_sync(Call::Win_free, 0, 1);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "MPI_Win_free while the lock on rank 1 is open");
    CHECK(f[0].locations[1].event == an::EventRef{0, 2});
  }
  SUBCASE("complete without start, wait without post; an unsuccessful test changes nothing") {
    Builder t(1);
    t.win_create(0, 1, 0x10000, 64);
    t.win_sync(Call::Win_complete, 0, 1);
    t.win_sync(Call::Win_wait, 0, 1);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message == "MPI_Win_complete without a matching MPI_Win_start");
    CHECK(f[1].message == "MPI_Win_wait without a matching MPI_Win_post");
  }
  SUBCASE("fence asserts must agree") {
    Builder t(2);
    t.win_create(0, 1, 0x10000, 64);
    t.win_create(1, 1, 0x10000, 64);
    t.win_sync(Call::Win_fence, 0, 1).assert_flags = tf::assert_flag::noprecede;
    t.win_sync(Call::Win_fence, 1, 1);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "disagree on the asserts of fence #1"));
    CHECK(f[0].locations.size() == 2);
  }
  SUBCASE("a post no start corresponds to") {
    Builder t(2);
    tf::CommDef to1, to0;
    to1.id = 5;
    to1.is_group = true;
    to1.world_ranks = {1};
    to0 = to1;
    to0.world_ranks = {0};
    t.trace().ranks[0].comms.emplace(5, to1);
    t.trace().ranks[1].comms.emplace(5, to0);
    t.win_create(0, 1, 0x10000, 64);
    t.win_create(1, 1, 0x10000, 64);
    t.win_sync(Call::Win_post, 0, 1).group = 5;  // rank 0 exposes to rank 1, which never starts
    t.win_sync(Call::Win_wait, 0, 1);
    const auto f = of_kind(t.run(k_el), k_el);
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "post #1 has no matching start"));
  }
}

// --- abnormal-termination ------------------------------------------------

TEST_CASE("analyzer::abnormal-termination") {
  SUBCASE("calls after MPI_Finalize, written after the end record") {
    // Rank 0 sends after MPI_Finalize (no receive anywhere), rank 1 calls
    // MPI_Barrier after it at the same line as rank 0 would: one finding
    // per call and place, and the send is no unmatched message.
    Builder t(2);
    for (uint32_t r = 0; r < 2; ++r) {
      t.add(Call::Finalize, r);
      t.trace().ranks[r].end->events = 2;
      t.trace().ranks[r].end->last_seq = 1;
    }
    p2p(t, Call::Send, 0, 1, 0);
    t.add(Call::Barrier, 1).comm = 0;
    const an::Result result = smtrace::test::analyze_trace(t.trace(), an::Options{});  // every check; no Finalize added
    const auto f = of_kind(result, k_at);
    REQUIRE(f.size() == 2);
    CHECK(f[0].message == "rank 0 called MPI_Send after MPI_Finalize");
    CHECK(f[0].locations[0].event == an::EventRef{0, 2});
    CHECK(f[1].message == "rank 1 called MPI_Barrier after MPI_Finalize");
    CHECK(contains(f[0].notes[0], "MPI-3.1 section 8.7"));
    CHECK(of_kind(result, "unmatched-message").empty());
    CHECK(of_kind(result, "collective-mismatch").empty());
    CHECK(of_kind(result, "deadlock").empty());
  }
  SUBCASE("a call before MPI_Init, the only call of a trace begun there") {
    Builder t(2);
    t.trace().ranks[0].events.clear();  // no MPI_Init: the tracer started at the call
    t.trace().ranks[0].header.options[std::string(tf::k_started_option)] = std::string(tf::k_started_before_init);
    tf::Event& barrier = t.add(Call::Barrier, 0);
    barrier.comm = 0;
    barrier.pending = true;
    t.end_with(0, tf::TerminationKind::exit_without_finalize);
    t.trace().ranks[0].end->events = 1;
    t.end_with(1, tf::TerminationKind::signal, 15);  // rank 1, in MPI_Init's run, stopped by the launcher
    const an::Result result = smtrace::test::analyze_trace(t.trace(), an::Options{});
    const auto f = of_kind(result, k_at);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "rank 0 called MPI_Barrier before MPI_Init");
    CHECK(f[0].locations[0].event == an::EventRef{0, 0});
    CHECK(contains(f[0].notes[0], "MPI-3.1 section 8.7"));
    CHECK(contains(f[0].notes[1], "rank 1 then stopped from outside"));
    CHECK(of_kind(result, "deadlock").empty());
    CHECK(of_kind(result, "collective-mismatch").empty());
  }
  SUBCASE("a second MPI_Init, inside which the rank ended") {
    Builder t(1);
    t.add(Call::Init, 0).pending = true;  // Builder's first event is MPI_Init
    t.end_with(0, tf::TerminationKind::exit_without_finalize);
    const auto f = of_kind(t.run(k_at), k_at);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "rank 0 called MPI_Init a second time");
    REQUIRE(f[0].locations.size() == 2);
    CHECK(f[0].locations[0].event == an::EventRef{0, 1});
    CHECK(f[0].locations[1].event == an::EventRef{0, 0});
  }
  SUBCASE("an end record that counts no events marks no event as after it") {
    Builder t(1);
    t.add(Call::Finalize, 0);
    t.add(Call::Barrier, 0).comm = 0;
    CHECK(of_kind(smtrace::test::analyze_trace(t.trace(), an::Options{}), k_at).empty());
  }
  SUBCASE("a crash inside MPI names the rank, the signal and the call") {
    Builder t(2);
    p2p(t, Call::Send, 1, 0, 0).pending = true;
    t.end_with(1, tf::TerminationKind::signal, 11);
    t.unfinalize(0);
    const auto f = of_kind(t.run(k_at), k_at);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "rank 1 crashed with SIGSEGV inside MPI_Send");
    CHECK(f[0].locations[0].event == an::EventRef{1, 1});
    CHECK(f[0].locations[0].line == 11);
    CHECK(contains(f[0].notes[0], "rank 0 then stopped from outside"));
  }
  SUBCASE("MPI_Abort") {
    Builder t(2);
    tf::Event& a = t.add(Call::Abort, 0);
    a.count = 3;
    a.pending = true;
    t.end_with(0, tf::TerminationKind::aborted);
    const auto f = of_kind(t.run(k_at), k_at);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "rank 0 called MPI_Abort with error code 3");
  }
  SUBCASE("exit without MPI_Finalize") {
    Builder t(1);
    p2p(t, Call::Barrier, 0, 0, 0);
    t.end_with(0, tf::TerminationKind::exit_without_finalize);
    const auto f = of_kind(t.run(k_at), k_at);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "rank 0 exited without calling MPI_Finalize after MPI_Barrier (0:1)");
  }
  SUBCASE("a run stopped from outside is not clean either") {
    Builder t(2);
    t.end_with(0, tf::TerminationKind::signal, 15);
    t.unfinalize(1);
    const auto f = of_kind(t.run(k_at), k_at);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "the run was stopped before it finished: ranks 0 and 1 did not reach MPI_Finalize");
  }
  SUBCASE("finalized ranks are clean") {
    Builder t(2);
    CHECK(of_kind(t.run(k_at), k_at).empty());
  }
}
