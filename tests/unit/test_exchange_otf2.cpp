// exchange/otf2: a Score-P-like archive written here with the OTF2 writer
// API (not by our exporter) is imported and analyzed; our export reads back
// event for event; damaged archives give a named error, keep what could be
// read, and never crash. Empty without OTF2 (SMTRACE_HAVE_OTF2).
#ifdef SMTRACE_HAVE_OTF2

#include <otf2/otf2.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "analyzer/analyze.hpp"
#include "exchange/otf2.hpp"
#include "exchange/view.hpp"
#include "tests/fuzz/otf2_layout.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "tests/unit/scratch_dir.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/content.hpp"
#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"

namespace {

namespace fs = std::filesystem;
namespace tf = smtrace::format;
namespace an = smtrace::analyzer;
namespace ex = smtrace::exchange;
using tf::Call;

fs::path scratch(const std::string& name) { return smtrace::test::scratch_dir("otf2-" + name); }

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
const OTF2_FlushCallbacks k_flush = {pre_flush, post_flush};

// The archive a Score-P run of this program could leave (2 ranks, timer in
// microseconds, compiler-instrumented main, MPI regions, no smtrace
// attributes, no call sites but the enclosing function):
//   rank 0: Send(1, tag 5); Irecv(req 7) + Waitall; Bcast(root 0); Send(1, tag 9); Finalize
//   rank 1: Recv(0, tag 5); Isend(0, tag 6, req 3) + Waitall; Allreduce; Finalize
// The Bcast/Allreduce pair is a collective mismatch, the tag 9 send is never received.
void write_scorep_like(const fs::path& dir) {
  OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                            OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  REQUIRE(archive != nullptr);
  OTF2_Archive_SetFlushCallbacks(archive, &k_flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(archive);
  OTF2_Archive_SetCreator(archive, "Score-P-like test writer");
  REQUIRE(OTF2_Archive_OpenEvtFiles(archive) == OTF2_SUCCESS);
  enum Region : OTF2_RegionRef { main_fn, init, send, recv, isend, irecv, waitall, bcast, allreduce, finalize };
  const char* names[] = {"main", "MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
                         "MPI_Bcast", "MPI_Allreduce", "MPI_Finalize"};
  constexpr OTF2_CommRef world = 0;
  for (OTF2_LocationRef rank = 0; rank < 2; ++rank) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, rank);
    REQUIRE(w != nullptr);
    uint64_t t = 100 + rank * 3;
    auto region = [&](Region r, auto&& inside) {
      OTF2_EvtWriter_Enter(w, nullptr, t++, r);
      inside();
      OTF2_EvtWriter_Leave(w, nullptr, t++, r);
    };
    OTF2_EvtWriter_Enter(w, nullptr, t++, main_fn);
    region(init, [] {});
    if (rank == 0) {
      region(send, [&] { OTF2_EvtWriter_MpiSend(w, nullptr, t, 1, world, 5, 4); });
      region(irecv, [&] { OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, 7); });
      region(waitall, [&] { OTF2_EvtWriter_MpiIrecv(w, nullptr, t, 1, world, 6, 8, 7); });
      region(bcast, [&] {
        OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
        OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, OTF2_COLLECTIVE_OP_BCAST, world, 0, 8, 0);
      });
      region(send, [&] { OTF2_EvtWriter_MpiSend(w, nullptr, t, 1, world, 9, 4); });
    } else {
      region(recv, [&] { OTF2_EvtWriter_MpiRecv(w, nullptr, t, 0, world, 5, 4); });
      region(isend, [&] { OTF2_EvtWriter_MpiIsend(w, nullptr, t, 0, world, 6, 8, 3); });
      region(waitall, [&] { OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, 3); });
      region(allreduce, [&] {
        OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
        OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, OTF2_COLLECTIVE_OP_ALLREDUCE, world, OTF2_UNDEFINED_UINT32, 4, 4);
      });
    }
    region(finalize, [] {});
    OTF2_EvtWriter_Leave(w, nullptr, t++, main_fn);
    OTF2_Archive_CloseEvtWriter(archive, w);
  }
  OTF2_Archive_CloseEvtFiles(archive);
  OTF2_Archive_OpenDefFiles(archive);
  for (OTF2_LocationRef rank = 0; rank < 2; ++rank) {
    OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive, rank);
    OTF2_Archive_CloseDefWriter(archive, d);
  }
  OTF2_Archive_CloseDefFiles(archive);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000, 0, 1000, OTF2_UNDEFINED_TIMESTAMP);
  // Strings: 0 "", 1 "app.c", 2.. region names, then the rest.
  OTF2_StringRef next = 0;
  OTF2_GlobalDefWriter_WriteString(g, next++, "");
  OTF2_GlobalDefWriter_WriteString(g, next++, "app.c");
  for (const char* name : names) OTF2_GlobalDefWriter_WriteString(g, next++, name);
  const OTF2_StringRef s_node = next++, s_rank0 = next++, s_rank1 = next++, s_thread = next++, s_world = next++,
                       s_self = next++, s_locations = next++;
  OTF2_GlobalDefWriter_WriteString(g, s_node, "node0");
  OTF2_GlobalDefWriter_WriteString(g, s_rank0, "MPI Rank 0");
  OTF2_GlobalDefWriter_WriteString(g, s_rank1, "MPI Rank 1");
  OTF2_GlobalDefWriter_WriteString(g, s_thread, "Master thread");
  OTF2_GlobalDefWriter_WriteString(g, s_world, "MPI_COMM_WORLD");
  OTF2_GlobalDefWriter_WriteString(g, s_self, "MPI_COMM_SELF");
  OTF2_GlobalDefWriter_WriteString(g, s_locations, "");
  for (OTF2_RegionRef r = 0; r < 10; ++r) {
    const bool user = r == main_fn;
    OTF2_GlobalDefWriter_WriteRegion(g, r, 2 + r, 2 + r, 0, user ? OTF2_REGION_ROLE_FUNCTION : OTF2_REGION_ROLE_POINT2POINT,
                                     user ? OTF2_PARADIGM_COMPILER : OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
                                     user ? 1 : 0, user ? 10 : 0, user ? 40 : 0);
  }
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_node, s_node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, s_rank0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 1, s_rank1, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocation(g, 0, s_thread, OTF2_LOCATION_TYPE_CPU_THREAD, 22, 0);
  OTF2_GlobalDefWriter_WriteLocation(g, 1, s_thread, OTF2_LOCATION_TYPE_CPU_THREAD, 19, 1);
  const uint64_t locations[] = {0, 1};
  const uint64_t ranks[] = {0, 1};
  OTF2_GlobalDefWriter_WriteGroup(g, 0, s_locations, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, 2, locations);
  OTF2_GlobalDefWriter_WriteGroup(g, 1, s_locations, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, 2, ranks);
  OTF2_GlobalDefWriter_WriteGroup(g, 2, s_locations, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, 0, nullptr);
  OTF2_GlobalDefWriter_WriteComm(g, world, s_world, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_GlobalDefWriter_WriteComm(g, 1, s_self, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
  REQUIRE(OTF2_Archive_Close(archive) == OTF2_SUCCESS);
}

std::vector<std::string> kinds(const an::Result& result) {
  std::vector<std::string> out;
  for (const an::Finding& f : result.findings) out.push_back(f.kind);
  return out;
}

// A trace of 2 ranks with point-to-point (blocking, non-blocking,
// persistent, a wildcard), collectives and a window, every event of the kind
// OTF2 has records for.
tf::Trace round_trip_trace() {
  smtrace::test::Builder b(2);
  auto p2p = [&](Call call, uint32_t rank, int32_t peer, int32_t tag, uint64_t request = 0) -> tf::Event& {
    tf::Event& e = b.add(call, rank);
    e.comm = 0;
    e.peer = peer;
    e.tag = tag;
    e.count = 2;
    e.datatype = smtrace::test::k_int;
    e.request = request;
    return e;
  };
  p2p(Call::Send, 0, 1, 5);
  tf::Event& recv = p2p(Call::Recv, 1, tf::k_any_source, 5);
  recv.status.source = 0;
  recv.status.tag = 5;
  recv.status.count = 2;
  p2p(Call::Irecv, 0, 1, tf::k_any_tag, 11);
  p2p(Call::Isend, 1, 0, 6, 21);
  tf::Event& w0 = b.complete(Call::Waitall, {11}, {11});
  w0.completed[0].status.source = 1;
  w0.completed[0].status.tag = 6;
  w0.completed[0].status.count = 2;
  b.add(Call::Wait, 1).request = 21;
  b.trace().ranks[1].events.back().completed.push_back({0, 21, {}});
  p2p(Call::Send_init, 0, 1, 7, 31);
  tf::Event& start = b.add(Call::Start, 0);
  start.request = 31;
  b.add(Call::Wait, 0).request = 31;
  b.trace().ranks[0].events.back().completed.push_back({0, 31, {}});
  b.add(Call::Request_free, 0).request = 31;
  tf::Event& r7 = p2p(Call::Recv, 1, 0, 7);
  r7.status.source = 0;
  r7.status.tag = 7;
  r7.status.count = 2;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    tf::Event& bcast = b.add(Call::Bcast, rank);
    bcast.comm = 0;
    bcast.peer = 0;
    bcast.count = 4;
    bcast.datatype = smtrace::test::k_int;
    tf::Event& reduce = b.add(Call::Allreduce, rank);
    reduce.comm = 0;
    reduce.count = 1;
    reduce.datatype = smtrace::test::k_int;
    reduce.recv_count = 1;
    reduce.recv_datatype = smtrace::test::k_int;
    reduce.op = 3;
    b.win_create(rank, 1, 0x1000, 64);
    b.win_sync(Call::Win_fence, rank, 1);
    b.win_sync(Call::Win_free, rank, 1);
    b.add(Call::Finalize, rank);
  }
  return b.trace();
}

}  // namespace

TEST_SUITE_BEGIN("exchange");

TEST_CASE("exchange::import_otf2::a Score-P-like archive is imported and analyzed") {
  const fs::path archive = scratch("scorep");
  write_scorep_like(archive);
  const fs::path out = scratch("scorep-trace");
  const ex::Otf2Import imported = ex::import_otf2(archive / "traces.otf2", out);
  INFO(imported.error);
  CHECK(imported.error.empty());
  CHECK(imported.written);
  CHECK(imported.ranks == 2);
  CHECK(imported.events == 13);
  CHECK(imported.creator == "Score-P-like test writer");
  CHECK(imported.lacks == (tf::content_bit(tf::Content::buffers) | tf::content_bit(tf::Content::receive_envelope) |
                           tf::content_bit(tf::Content::type_signatures) | tf::content_bit(tf::Content::thread_level) |
                           tf::content_bit(tf::Content::topologies)));

  const tf::Trace trace = tf::read_trace(out);
  REQUIRE(trace.ranks.size() == 2);
  const tf::RankTrace& r0 = trace.ranks[0];
  REQUIRE(r0.events.size() == 7);
  CHECK(r0.events[1].call == Call::Send);
  CHECK(r0.events[1].peer == 1);
  CHECK(r0.events[1].tag == 5);
  CHECK(r0.events[2].call == Call::Irecv);
  CHECK(r0.events[2].request == 7);
  CHECK(r0.events[2].peer == 1);  // as matched: OTF2 does not say what was posted
  CHECK(r0.events[3].call == Call::Waitall);
  REQUIRE(r0.events[3].completed.size() == 1);
  CHECK(r0.events[3].completed[0].status.source == 1);
  CHECK(r0.events[3].completed[0].status.tag == 6);
  CHECK(r0.events[4].call == Call::Bcast);
  CHECK(r0.events[4].peer == 0);
  CHECK(r0.events[1].t_start == 103000);  // microsecond ticks -> ns
  CHECK(r0.finalized());
  const tf::CallSite* site = r0.site(r0.events[1].site);
  REQUIRE(site != nullptr);
  CHECK(site->function == "main");  // the enclosing compiler-instrumented region
  CHECK(site->file == "app.c");
  CHECK(tf::lacks(r0.header) == imported.lacks);

  const an::Result result = an::analyze(out);
  CHECK(kinds(result) == std::vector<std::string>{"collective-mismatch", "unmatched-message"});
  std::vector<std::string> skipped;
  for (const an::SkippedCheck& s : result.skipped) skipped.push_back(s.check);
  CHECK(skipped == std::vector<std::string>{"thread-level", "type-mismatch", "local-concurrency", "rma-race", "cuda-mpi-race"});
  fs::remove_all(archive);
  fs::remove_all(out);
}

TEST_CASE("exchange::export_otf2::reads back event for event") {
  const tf::Trace original = round_trip_trace();
  const fs::path dir = scratch("rt-original");
  tf::write_trace(original, dir);
  const ex::TraceView view = ex::collect_view(dir, {}, ex::WithFindings::no);
  const fs::path archive = scratch("rt-archive");
  const ex::Otf2ExportStats stats = ex::export_otf2(dir, view, archive);
  CHECK(stats.ranks == 2);
  CHECK(stats.locations == 2);
  const fs::path back = scratch("rt-back");
  const ex::Otf2Import imported = ex::import_otf2(archive, back);
  INFO(imported.error);
  REQUIRE(imported.error.empty());
  CHECK(imported.lacks == (tf::content_bit(tf::Content::buffers) | tf::content_bit(tf::Content::topologies)));
  const tf::Trace copy = tf::read_trace(back);
  REQUIRE(copy.ranks.size() == 2);
  for (uint32_t r = 0; r < 2; ++r) {
    const auto& a = original.ranks[r].events;
    const auto& b = copy.ranks[r].events;
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CAPTURE(r);
      CAPTURE(i);
      CHECK(b[i].seq == a[i].seq);
      CHECK(b[i].call == a[i].call);
      CHECK(b[i].t_start == a[i].t_start);
      CHECK(b[i].duration == a[i].duration);
      CHECK(b[i].pending == a[i].pending);
      if (a[i].peer) CHECK(b[i].peer == a[i].peer);
      if (a[i].tag) CHECK(b[i].tag == a[i].tag);
      CHECK(b[i].request == a[i].request);
      CHECK(b[i].completed.size() == a[i].completed.size());
      CHECK(b[i].status.source == a[i].status.source);
      CHECK(b[i].op == a[i].op);
      if (tf::call_family(a[i].call) == tf::Family::p2p || tf::call_family(a[i].call) == tf::Family::coll) {
        CHECK(b[i].comm == a[i].comm);
        CHECK(b[i].count == a[i].count);
        CHECK(b[i].datatype == a[i].datatype);
      }
      if (a[i].window != 0) CHECK(b[i].window != 0);
      const tf::CallSite* sa = original.ranks[r].site(a[i].site);
      const tf::CallSite* sb = copy.ranks[r].site(b[i].site);
      REQUIRE(sb != nullptr);
      CHECK(sb->file == sa->file);
      CHECK(sb->line == sa->line);
      CHECK(sb->function == sa->function);
    }
    CHECK(copy.ranks[r].finalized());
  }
  CHECK(an::analyze(back).findings == an::analyze(dir).findings);
  for (const fs::path& p : {dir, archive, back}) fs::remove_all(p);
}

TEST_CASE("exchange::import_otf2::damaged archives: a named error, what could be read, no crash") {
  const tf::Trace original = round_trip_trace();
  const fs::path dir = scratch("bad-original");
  tf::write_trace(original, dir);
  const ex::TraceView view = ex::collect_view(dir, {}, ex::WithFindings::no);
  const fs::path archive = scratch("bad-archive");
  ex::export_otf2(dir, view, archive);
  const fs::path out = scratch("bad-out");

  SUBCASE("no such archive") {
    const ex::Otf2Import imported = ex::import_otf2(archive / "nothing.otf2", out);
    CHECK(imported.error.find("no such file") != std::string::npos);
    CHECK_FALSE(imported.written);
  }
  SUBCASE("a directory without an anchor file") {
    const ex::Otf2Import imported = ex::import_otf2(archive / "traces", out);
    CHECK(imported.error.find("no OTF2 anchor file") != std::string::npos);
  }
  SUBCASE("an anchor file that is no OTF2") {
    const fs::path junk = scratch("junk");
    fs::create_directories(junk);
    std::ofstream(junk / "traces.otf2") << "not an archive\n";
    const ex::Otf2Import imported = ex::import_otf2(junk / "traces.otf2", out);
    CHECK(imported.error.find("not an OTF2 archive") != std::string::npos);
    CHECK_FALSE(imported.written);
    fs::remove_all(junk);
  }
  SUBCASE("a truncated event file keeps the other rank and the start of this one") {
    const fs::path evt = archive / "traces" / "1.evt";
    REQUIRE(fs::exists(evt));
    std::string bytes;
    {
      std::ifstream in(evt, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    // Not after a byte that reads as the end-of-file token (a file cut where
    // a record ends, on such a byte, reads cleanly); OTF2 then reads on into
    // its chunk buffer, whose bytes past the file differ from process to
    // process: the import tells by the count the definitions declare.
    std::size_t cut = bytes.size() / 2;
    while (cut > 1 && bytes[cut - 1] == 1) --cut;
    fs::resize_file(evt, cut);
    const ex::Otf2Import imported = ex::import_otf2(archive, out);
    CHECK_FALSE(imported.error.empty());
    CHECK(imported.error.find("location 1") != std::string::npos);
    REQUIRE(imported.written);
    const tf::Trace copy = tf::read_trace(out);
    CHECK(copy.ranks[0].events.size() == original.ranks[0].events.size());
    CHECK(copy.ranks[1].events.size() < original.ranks[1].events.size());
    an::analyze(out);  // analyzable as far as it goes
  }
  SUBCASE("truncated global definitions") {
    const fs::path defs = archive / "traces.def";
    std::string bytes;
    {
      std::ifstream in(defs, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::size_t cut = bytes.size() / 3;
    while (cut > 1 && bytes[cut - 1] == 1) --cut;  // not on a byte that reads as the end-of-file token
    fs::resize_file(defs, cut);
    const ex::Otf2Import imported = ex::import_otf2(archive, out);
    INFO(imported.error);
    CHECK(imported.error.find("cut short") != std::string::npos);
    CHECK_FALSE(imported.written);
  }
  SUBCASE("garbage in an event file") {
    const fs::path evt = archive / "traces" / "0.evt";
    const auto size = fs::file_size(evt);
    std::fstream file(evt, std::ios::in | std::ios::out | std::ios::binary);
    for (std::uintmax_t at = size / 3; at < size; at += 7) {
      file.seekp(static_cast<std::streamoff>(at));
      file.put(static_cast<char>(0xA5 ^ (at & 0xFF)));
    }
    file.close();
    const ex::Otf2Import imported = ex::import_otf2(archive, out);  // whatever it says, it says it
    if (imported.written) an::analyze(out);
  }
  for (const fs::path& p : {dir, archive, out}) fs::remove_all(p);
}

TEST_SUITE_END();

#endif  // SMTRACE_HAVE_OTF2

TEST_CASE("exchange::import_otf2::fuzz regressions") {
  // Every input the otf2 fuzz target found a crash or a leak with
  // (tests/fuzz/regressions/otf2/), laid out as the target lays it out
  // (tests/fuzz/otf2_layout.hpp): a named error or an import, never a
  // throw; a trace it writes is read back. anchor-unknown-substrate-leak-1:
  // an anchor file naming no known file substrate; OTF2 3.0.2 leaks the
  // archive it was opening when OTF2_Reader_Open fails (not ours to free:
  // it returns no handle; scripts/sanitizers/lsan.supp).
  // anchor-property-count-*: an anchor file declaring so many properties
  // that OTF2 callocs 2.6 GB (untouched, so cheap) or 29 GB (fails; OTF2
  // reports it; under ASan allocator_may_return_null=1 makes it fail as
  // glibc's calloc does) for them.
  const fs::path inputs = fs::path(SMTRACE_SOURCE_DIR) / "tests/fuzz/regressions/otf2";
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(inputs)) {
    CAPTURE(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const fs::path dir = scratch("fuzz-regression");
    fs::remove_all(dir);
    const fs::path anchor = smtrace::fuzz::write_otf2_archive(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                              bytes.size(), dir / "archive");
    const ex::Otf2Import imported = ex::import_otf2(anchor, dir / "out");
    CHECK((imported.written || !imported.error.empty()));
    if (imported.written) CHECK_NOTHROW(tf::read_trace(dir / "out"));
    if (entry.path().filename() == "anchor-unknown-substrate-leak-1") {
      CHECK(imported.error.find("not an OTF2 archive") != std::string::npos);
    }
    fs::remove_all(dir);
    ++count;
  }
  CHECK(count > 0);
}

TEST_CASE("exchange::export_otf2::RMA traces keep their windows, ops and target buffers") {
  // The tracer's own RMA traces (traces/): every RMA call keeps its window
  // (flushes too, which OTF2 writes no RMA record for), an accumulate its
  // op, a transfer its target count and datatype, and the checks that read
  // them judge the copy as the original (rma-race, which needs buffer
  // addresses, does not run on an import).
  for (const char* name : {"rma-fence", "rma-accumulate-ok", "rma-accumulate-race", "rma-wildcard-ok",
                           "rma-wildcard-race"}) {
    const std::string trace_name = name;
    CAPTURE(trace_name);
    const fs::path dir = fs::path(SMTRACE_SOURCE_DIR) / "traces" / name;
    const ex::TraceView view = ex::collect_view(dir, {}, ex::WithFindings::no);
    const fs::path archive = scratch(std::string("rma-archive-") + name);
    ex::export_otf2(dir, view, archive);
    const fs::path back = scratch(std::string("rma-back-") + name);
    const ex::Otf2Import imported = ex::import_otf2(archive, back);
    INFO(imported.error);
    REQUIRE(imported.error.empty());
    const tf::Trace original = tf::read_trace(dir);
    const tf::Trace copy = tf::read_trace(back);
    REQUIRE(copy.ranks.size() == original.ranks.size());
    uint64_t rma = 0;
    for (std::size_t r = 0; r < original.ranks.size(); ++r) {
      // (By seq: events OTF2 has no region for, such as the local-access
      // ones, do not come back.)
      std::map<uint64_t, const tf::Event*> back_by_seq;
      for (const tf::Event& e : copy.ranks[r].events) back_by_seq[e.seq] = &e;
      for (const tf::Event& a : original.ranks[r].events) {
        if (tf::call_family(a.call) != tf::Family::rma) continue;
        CAPTURE(r);
        CAPTURE(a.seq);
        ++rma;
        const auto found = back_by_seq.find(a.seq);
        REQUIRE(found != back_by_seq.end());
        const tf::Event& b = *found->second;
        CHECK(b.call == a.call);
        CHECK((b.window != 0) == (a.window != 0));
        if (tf::call_traits(a.call).role != tf::Role::rma_comm) continue;
        CHECK(b.op == a.op);
        CHECK(b.count == a.count);
        CHECK(b.target_count == a.target_count);
        if (a.target_datatype < tf::k_first_derived_id) CHECK(b.target_datatype == a.target_datatype);
      }
    }
    CHECK(rma > 0);
    auto judged = [](const an::Result& result) {
      std::vector<std::string> out;
      for (const an::Finding& f : result.findings) {
        if (f.kind != "rma-race") out.push_back(f.kind + ": " + f.message);
      }
      return out;
    };
    CHECK(judged(an::analyze(back)) == judged(an::analyze(dir)));
    for (const fs::path& p : {archive, back}) fs::remove_all(p);
  }
}
