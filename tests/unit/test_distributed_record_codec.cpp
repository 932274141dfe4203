// smtrace-mpi's coding of a rank file's records between processes
// (distributed/record_codec.hpp): every record of every archived trace comes
// back as the reader gave it, in the same order; and which process reads
// which rank (distributed/share.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "distributed/record_codec.hpp"
#include "distributed/share.hpp"
#include "trace_format/reader.hpp"

namespace fs = std::filesystem;
namespace format = smtrace::format;
using smtrace::distributed::decode_record;
using smtrace::distributed::Decoded;
using smtrace::distributed::RecordKind;
using smtrace::distributed::RecordWriter;

namespace {

// Every record a reader hands out, in order.
struct Records {
  std::string order;  // one letter per record
  std::vector<format::Event> events;
  std::vector<format::CallSite> sites;
  std::vector<format::Module> modules;
  std::vector<format::CommDef> comms;
  std::vector<format::DatatypeDef> datatypes;
  std::vector<format::Termination> ends;
  std::vector<format::TracerNote> notes;
  std::vector<format::Problem> problems;

  format::RankReader::Callbacks callbacks() {
    format::RankReader::Callbacks cb;
    cb.event = [this](const format::Event& e) { order += 'e', events.push_back(e); };
    cb.site = [this](const format::CallSite& s) { order += 's', sites.push_back(s); };
    cb.module = [this](const format::Module& m) { order += 'm', modules.push_back(m); };
    cb.comm = [this](const format::CommDef& c) { order += 'c', comms.push_back(c); };
    cb.datatype = [this](const format::DatatypeDef& t) { order += 't', datatypes.push_back(t); };
    cb.end = [this](const format::Termination& t) { order += 'x', ends.push_back(t); };
    cb.note = [this](const format::TracerNote& n) { order += 'n', notes.push_back(n); };
    cb.problem = [this](const format::Problem& p) { order += 'p', problems.push_back(p); };
    return cb;
  }
};

void check_same(const Records& a, const Records& b) {
  CHECK(a.order == b.order);
  CHECK(a.events == b.events);
  CHECK(a.sites == b.sites);
  CHECK(a.modules == b.modules);
  CHECK(a.comms == b.comms);
  CHECK(a.datatypes == b.datatypes);
  CHECK(a.ends == b.ends);
  CHECK(a.notes == b.notes);
  CHECK(a.problems.size() == b.problems.size());
  for (std::size_t i = 0; i < a.problems.size() && i < b.problems.size(); ++i) {
    CHECK(a.problems[i].to_string() == b.problems[i].to_string());
    CHECK(a.problems[i].severity == b.problems[i].severity);
  }
}

// Decode all of `bytes` into `out`; return the decoded header records and the last kind.
RecordKind decode_all(std::string_view bytes, Records& out, std::vector<Decoded>& specials) {
  const format::RankReader::Callbacks cb = out.callbacks();
  RecordKind last = RecordKind::done;
  while (!bytes.empty()) {
    Decoded d = decode_record(bytes, cb);
    last = d.kind;
    if (d.kind == RecordKind::header || d.kind == RecordKind::error || d.kind == RecordKind::done ||
        d.kind == RecordKind::out_of_memory || d.kind == RecordKind::events_read) {
      specials.push_back(std::move(d));
    }
  }
  return last;
}

}  // namespace

TEST_SUITE_BEGIN("distributed");

TEST_CASE("distributed::record_codec::archived traces come back as read") {
  const fs::path traces = fs::path(SMTRACE_SOURCE_DIR) / "traces";
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(traces)) {
    if (entry.path().extension() != ".smt" || entry.path().filename() == "symbols.smt") continue;
    CAPTURE(entry.path().string());
    ++files;
    Records direct;
    {
      format::RankReader reader(entry.path());
      const auto cb = direct.callbacks();
      if (reader.header(cb)) reader.read_all(cb);
    }
    RecordWriter writer;
    std::optional<format::RankHeader> header;
    {
      format::RankReader reader(entry.path());
      const auto cb = writer.callbacks();
      header = reader.header(cb);
      writer.header(header);
      if (header) {
        reader.read_all(cb);
        writer.done();
      }
    }
    Records decoded;
    std::vector<Decoded> specials;
    const RecordKind last = decode_all(writer.bytes(), decoded, specials);
    check_same(direct, decoded);
    REQUIRE(!specials.empty());
    CHECK(specials[0].kind == RecordKind::header);
    CHECK(specials[0].header == header);
    CHECK(last == (header ? RecordKind::done : RecordKind::header));
  }
  CHECK(files > 20);
}

// An event whose every field differs from its default, so that a field the
// coding forgot shows as a difference.
format::Event every_field_event() {
  format::Event e;
  e.seq = 1, e.call = format::Call::Isend, e.thread = 2, e.t_start = -3, e.duration = 4, e.pending = true;
  e.site = 5, e.stack = {6, 7}, e.repeat = 8, e.rc = 9, e.comm = 10, e.peer = 11, e.tag = 12, e.buf = 13;
  e.count = 14, e.datatype = 15, e.recv_buf = 16, e.recv_count = 17, e.recv_datatype = 18, e.counts = {19};
  e.displs = {20}, e.datatypes = {21}, e.recv_counts = {22}, e.recv_displs = {23}, e.recv_datatypes = {24};
  e.recv_peer = 25, e.recv_tag = 26, e.op = 27, e.in_place = true, e.request = 28, e.requests = {29, 30};
  e.completed = {{31, 32, {33, 34, 35, true, 36}}}, e.status = {37, 38, 39, true, 40}, e.flag = false;
  e.new_comm = 41, e.color = 42, e.key = 43, e.group = 44, e.new_datatype = 45, e.message = 46, e.peer_comm = 47;
  e.window = 48, e.win_base = 49, e.win_size = 50, e.disp_unit = 51, e.target_disp = 52, e.target_count = 53;
  e.target_datatype = 54, e.result_buf = 55, e.result_count = 56, e.result_datatype = 57, e.compare_buf = 58;
  e.lock_type = format::LockType::shared, e.assert_flags = 59, e.size = 60, e.stride = 61, e.stream = 62;
  e.cuda_event = 63, e.kernel = 64, e.args = {{65, 66, 67, format::ArgAccess::read_write}};
  e.memory = format::MemoryKind::device, e.recv_memory = format::MemoryKind::managed;
  e.copy_kind = format::CopyKind::device_to_host, e.flags = 68;
  return e;
}

TEST_CASE("distributed::record_codec::every field of an event") {
  const format::Event e = every_field_event();
  // A field added to Event changes its size: add it to record_codec.cpp's
  // fields() and above, then change this figure.
  CHECK(sizeof(format::Event) == 608);

  format::RankHeader h;
  h.format_version = 2, h.rank = 3, h.world_size = 4, h.host = "node", h.pid = 5, h.mpi_library = "Open MPI";
  h.mpi_version = 6, h.clock = format::ClockKind::realtime, h.clock_origin_ns = 7, h.realtime_origin_ns = 8;
  h.tracer_version = "1.0", h.options = {{"a", "b"}, {"c", ""}}, h.executable = "/bin/x", h.argv = {"x", "-y"};
  h.thread_level = 3, h.chunk_bytes = 9, h.thread_sync = 5, h.recovered = true;
  CHECK(sizeof(format::RankHeader) == 264);

  RecordWriter writer;
  writer.header(h);
  writer.callbacks().event(e);
  format::Event empty;
  writer.callbacks().event(empty);
  writer.events_read({uint64_t{1} << 40, uint64_t{1} << 41, 2});
  writer.error("file: byte 3: gone");
  writer.out_of_memory();
  writer.done();

  Records decoded;
  std::vector<Decoded> specials;
  decode_all(writer.bytes(), decoded, specials);
  REQUIRE(decoded.events.size() == 2);
  CHECK(decoded.events[0] == e);
  CHECK(decoded.events[1] == empty);
  REQUIRE(specials.size() == 5);
  CHECK(specials[0].header == h);
  CHECK(specials[1].kind == RecordKind::events_read);
  CHECK(specials[1].read.events == uint64_t{1} << 40);
  CHECK(specials[1].read.last_seq == uint64_t{1} << 41);
  CHECK(specials[1].read.delivered == 2);
  CHECK(specials[2].kind == RecordKind::error);
  CHECK(specials[2].message == "file: byte 3: gone");
  CHECK(specials[3].kind == RecordKind::out_of_memory);
  CHECK(specials[4].kind == RecordKind::done);
}

TEST_CASE("distributed::record_codec::events one after another, across messages") {
  // Events far from the end of a message are decoded without a check per
  // field, those near it with: both, set and default fields alternating,
  // and a writer that hands its bytes on (take) and writes on in the
  // storage it got back.
  const format::Event full = every_field_event();
  format::Event some;
  some.seq = 7, some.call = format::Call::Wait, some.request = 3, some.status = {1, 2, 3, false, 0};
  std::vector<format::Event> events;
  for (int i = 0; i < 40; ++i) events.push_back(i % 3 == 0 ? full : i % 3 == 1 ? format::Event{} : some);

  RecordWriter writer;
  std::string message;
  Records decoded;
  std::vector<Decoded> specials;
  for (std::size_t i = 0; i < events.size(); ++i) {
    writer.callbacks().event(events[i]);
    if (i % 16 == 15 || i + 1 == events.size()) {
      const std::size_t size = writer.size();
      writer.take(message);
      CHECK(writer.size() == 0);
      CHECK(writer.bytes().empty());
      REQUIRE(message.size() == size);
      decode_all(message, decoded, specials);
    }
  }
  CHECK(specials.empty());
  CHECK(decoded.events == events);
}

TEST_CASE("distributed::record_codec::a record cut short is an error") {
  format::Event e;
  e.stack = {1, 2, 3};
  RecordWriter writer;
  writer.callbacks().event(e);
  const std::string bytes(writer.bytes());
  for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
    std::string_view in(bytes.data(), cut);
    CHECK_THROWS_AS(decode_record(in, {}), std::runtime_error);
  }
}

TEST_CASE("distributed::reader_of") {
  using smtrace::distributed::reader_of;
  SUBCASE("one process reads everything") {
    for (uint32_t r = 0; r < 5; ++r) CHECK(reader_of(r, 5, 1) == 0);
  }
  SUBCASE("blocks of consecutive ranks over processes 1..N-1") {
    for (int processes : {2, 3, 4, 7}) {
      for (uint32_t world : {1u, 2u, 5u, 64u, 10000u}) {
        std::vector<uint32_t> per(static_cast<std::size_t>(processes), 0);
        int previous = 1;
        for (uint32_t r = 0; r < world; ++r) {
          const int p = reader_of(r, world, processes);
          REQUIRE(p >= 1);
          REQUIRE(p < processes);
          CHECK(p >= previous);  // ascending: blocks
          previous = p;
          ++per[static_cast<std::size_t>(p)];
        }
        CHECK(per[0] == 0);
        if (world >= static_cast<uint32_t>(processes - 1)) {
          const auto [lo, hi] = std::minmax_element(per.begin() + 1, per.end());
          CHECK(*hi - *lo <= 1);
        }
      }
    }
  }
}
