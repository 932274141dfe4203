// Reading trace directories: round trips through write_trace, the stream
// coding the tracer writes (completions, open chunks) and every kind of
// damage the reader must survive with a message naming file and byte offset.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>
#include <string>

#include <unistd.h>

#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"
#include "trace_format/symbols.hpp"
#include "trace_format/wire.hpp"

namespace fs = std::filesystem;
namespace fmt_ns = smtrace::format;

// The largest single allocation, to show that a huge length prefix is never
// allocated. Replacing operator new is program-wide; it only records.
namespace {
std::atomic<std::size_t> g_largest_allocation{0};
}

[[gnu::noinline]] void* operator new(std::size_t size) {
  std::size_t seen = g_largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !g_largest_allocation.compare_exchange_weak(seen, size)) {
  }
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's temporary buffer uses it), so
// that everything the replaced operator delete frees came from malloc
// (ASan checks the pairing).
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(size);
  } catch (...) {
    return nullptr;
  }
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("smtrace-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

fmt_ns::RankHeader header_for(uint32_t rank, uint32_t world_size) {
  fmt_ns::RankHeader h;
  h.rank = rank;
  h.world_size = world_size;
  h.host = "node0";
  h.pid = 1000 + rank;
  h.mpi_library = "Open MPI v4.1.4";
  h.mpi_version = 31;
  h.clock_origin_ns = 5'000'000'000;
  h.tracer_version = "0.1.0";
  h.options = {{"SMTRACE_DIR", "/tmp/x"}};
  h.executable = "/bin/app";
  h.argv = {"app", "-n", "3"};
  h.thread_level = 3;
  h.chunk_bytes = 65536;
  return h;
}

// A rank with `n` events of several kinds, definitions, notes and an end.
fmt_ns::RankTrace sample_rank(uint32_t rank, uint32_t world_size, int n) {
  fmt_ns::RankTrace r;
  r.present = true;
  r.header = header_for(rank, world_size);
  r.sites[1] = {1, 1, 0x1000, "main", "app.c", 10, 5};
  r.sites[2] = {2, 1, 0x1040, "", "", 0, 0};
  r.modules[1] = {1, "/bin/app", 0x400000, "\x12\x34"};
  fmt_ns::CommDef split{2, {0, 2}, 0, false, false, {}, fmt_ns::Topology::cart, {-2, 1}, {1, -2}};
  r.comms[2] = split;
  fmt_ns::DatatypeDef vec;
  vec.id = 64;
  vec.combiner = fmt_ns::Call::Type_vector;
  vec.size = 24;
  vec.extent = 72;
  vec.runs = {{0, 8, 3, 24}};
  vec.signature = {{14, 3}};
  vec.committed = true;
  r.datatypes[64] = vec;
  int64_t t = 1000;
  for (int i = 0; i < n; ++i) {
    fmt_ns::Event e;
    e.seq = static_cast<uint64_t>(i);
    e.t_start = t;
    t += 250 + (i % 7) * 10;
    e.duration = 100 + static_cast<uint64_t>(i % 13);
    e.site = 1 + static_cast<uint32_t>(i % 2);
    switch (i % 4) {
      case 0:
        e.call = fmt_ns::Call::Send;
        e.peer = static_cast<int32_t>((rank + 1) % world_size);
        e.tag = i;
        e.buf = 0x7ffd0000 + static_cast<uint64_t>(i) * 64;
        e.count = 8;
        e.datatype = 14;
        break;
      case 1:
        e.call = fmt_ns::Call::Recv;
        e.peer = fmt_ns::k_any_source;
        e.tag = fmt_ns::k_any_tag;
        e.buf = 0x7ffe0000;
        e.count = 8;
        e.datatype = 14;
        e.status = {1, 4, 8, false, 0};
        break;
      case 2:
        e.call = fmt_ns::Call::Waitall;
        e.requests = {3, 0, 4};
        e.completed = {{0, 3, {}}, {2, 4, {0, 7, 2, false, 0}}};
        break;
      case 3:
        e.call = fmt_ns::Call::Allgatherv;
        e.comm = 2;
        e.buf = 0x10000;
        e.recv_buf = 0x20000;
        e.count = 1;
        e.datatype = 64;
        e.recv_counts = {1, 2};
        e.recv_displs = {0, 1};
        e.recv_datatype = 64;
        break;
    }
    r.events.push_back(e);
  }
  if (n > 0 && rank == 1) r.events.back().pending = true;  // stopped inside its last call
  r.notes.push_back({t, "polls folded"});
  if (rank != 1) {
    r.end = fmt_ns::Termination{fmt_ns::TerminationKind::finalized, 0, t + 10, "", r.events.empty() ? 0 : r.events.back().seq,
                                static_cast<uint64_t>(n), 0};
  }
  return r;
}

fmt_ns::Trace sample_trace(uint32_t world_size, int events_per_rank) {
  fmt_ns::Trace trace;
  trace.manifest.world_size = world_size;
  trace.manifest.created_utc = "2026-11-22T21:00:00Z";
  trace.manifest.command = "mpirun -np 3 ./app";
  trace.manifest.tracer_version = "0.1.0";
  trace.has_manifest = true;
  for (uint32_t r = 0; r < world_size; ++r) trace.ranks.push_back(sample_rank(r, world_size, events_per_rank));
  return trace;
}

// Check what a reader must reproduce of `want` in `got`.
void check_same_rank(const fmt_ns::RankTrace& got, const fmt_ns::RankTrace& want) {
  CHECK(got.present);
  CHECK(got.header == want.header);
  REQUIRE(got.events.size() == want.events.size());
  for (std::size_t i = 0; i < want.events.size(); ++i) {
    CAPTURE(i);
    CHECK(got.events[i] == want.events[i]);
  }
  CHECK(got.sites == want.sites);
  CHECK(got.modules == want.modules);
  CHECK(got.datatypes == want.datatypes);
  for (const auto& [id, comm] : want.comms) CHECK(got.comms.at(id) == comm);
  CHECK(got.end == want.end);
  CHECK(got.notes == want.notes);
}

bool mentions(const std::vector<fmt_ns::Problem>& problems, const std::string& text) {
  for (const auto& p : problems) {
    if (p.to_string().find(text) != std::string::npos) return true;
  }
  return false;
}

std::string all_text(const std::vector<fmt_ns::Problem>& problems) {
  std::string s;
  for (const auto& p : problems) s += p.to_string() + "\n";
  return s;
}

std::size_t errors(const std::vector<fmt_ns::Problem>& problems) {
  std::size_t n = 0;
  for (const auto& p : problems) n += p.severity == fmt_ns::Problem::Severity::error;
  return n;
}

// Frame offsets of a rank file: [header frame, chunk frames...].
std::vector<uint64_t> frame_offsets(const std::string& bytes) {
  std::vector<uint64_t> offsets;
  uint64_t pos = fmt_ns::k_magic_size;
  while (pos + 8 <= bytes.size()) {
    uint32_t len = 0;
    std::memcpy(&len, bytes.data() + pos, 4);  // little endian host
    if (len == 0 || len == fmt_ns::k_open_frame) break;
    offsets.push_back(pos);
    pos += 8 + len;
  }
  return offsets;
}

// Builds rank files the way the tracer does, record by record.
struct RankFileBuilder {
  std::string bytes{fmt_ns::k_magic, fmt_ns::k_magic_size};
  fmt_ns::RecordEncoder enc;
  std::string chunk;
  uint32_t index = 0;

  explicit RankFileBuilder(const fmt_ns::RankHeader& h) {
    std::string header = fmt_ns::encode_rank_header(h);
    fmt_ns::append_frame_header(bytes, header);
    bytes += header;
  }
  void begin(uint64_t first_seq, int64_t t_base) { enc.begin_chunk(chunk, first_seq, t_base, index++); }
  void seal() {
    fmt_ns::append_frame_header(bytes, chunk);
    bytes += chunk;
    chunk.clear();
  }
  // Leave the chunk unsealed, as a killed tracer does, followed by `zeros`.
  void leave_open(std::size_t zeros) {
    const unsigned char open[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    bytes.append(reinterpret_cast<const char*>(open), 8);
    bytes += chunk;
    bytes.append(zeros, '\0');
    chunk.clear();
  }
};

fmt_ns::Event simple(uint64_t seq, fmt_ns::Call call, int64_t t) {
  fmt_ns::Event e;
  e.seq = seq;
  e.call = call;
  e.t_start = t;
  e.duration = 5;
  return e;
}

// A sealed chunk (Init, Barrier: seq 0, 1) and a second chunk, not yet
// sealed or left open, holding a Send (seq 2).
void two_chunks(RankFileBuilder& b) {
  b.begin(0, 100);
  b.enc.event(b.chunk, simple(0, fmt_ns::Call::Init, 100));
  b.enc.event(b.chunk, simple(1, fmt_ns::Call::Barrier, 200));
  b.seal();
  b.begin(2, 300);
  b.enc.event(b.chunk, simple(2, fmt_ns::Call::Send, 300));
}

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::read_trace::write_trace round trip") {
  TempDir dir;
  fmt_ns::Trace trace = sample_trace(3, 8000);  // several 64 KiB chunks per rank
  fmt_ns::write_trace(trace, dir.path);
  CHECK(fs::exists(dir.path / "manifest.json"));
  fmt_ns::ReadOptions options;
  options.threads = 2;
  fmt_ns::Trace got = fmt_ns::read_trace(dir.path, options);
  CHECK(got.has_manifest);
  CHECK(got.manifest == trace.manifest);
  CHECK(got.problems.empty());
  REQUIRE(got.ranks.size() == 3);
  for (uint32_t r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(got.ranks[r].problems.empty());
    CHECK(got.ranks[r].chunks > 1);
    CHECK_FALSE(got.ranks[r].truncated);
    check_same_rank(got.ranks[r], trace.ranks[r]);
  }
  // Implicit communicators.
  CHECK(got.ranks[2].comms.at(0).world_ranks == std::vector<uint32_t>{0, 1, 2});
  CHECK(got.ranks[2].comms.at(1).world_ranks == std::vector<uint32_t>{2});
  CHECK(got.ranks[0].world_rank(2, 1) == 2u);
  CHECK_FALSE(got.ranks[0].world_rank(2, 2).has_value());
  CHECK(got.ranks[1].events.back().pending);
  CHECK(got.ranks[0].finalized());
  CHECK_FALSE(got.ranks[1].finalized());
  CHECK_FALSE(got.complete());
  REQUIRE(got.ranks[0].find(17) != nullptr);
  CHECK(got.ranks[0].find(17)->seq == 17);
  CHECK(got.ranks[0].find(999999) == nullptr);
  CHECK(got.ranks[0].site(1)->function == "main");
}

TEST_CASE("trace_format::read_rank_file::stream coding with completions") {
  TempDir dir;
  RankFileBuilder b(header_for(0, 2));
  b.begin(10, 1000);
  fmt_ns::Event recv = simple(10, fmt_ns::Call::Recv, 1000);
  recv.pending = true;
  recv.peer = fmt_ns::k_any_source;
  recv.buf = 0x5000;
  recv.completed = {{0, 1, {}}};
  b.enc.event(b.chunk, recv);
  fmt_ns::Event iprobe = simple(11, fmt_ns::Call::Iprobe, 1100);
  iprobe.flag = false;
  b.enc.event(b.chunk, iprobe);
  b.seal();
  b.begin(12, 1200);
  fmt_ns::Event send = simple(12, fmt_ns::Call::Send, 1200);
  send.buf = 0x6000;
  b.enc.event(b.chunk, send);
  // The receive ends in a later chunk.
  fmt_ns::Event end;
  end.duration = 900;
  end.status = {1, 3, 4, false, 0};
  end.completed = {{1, 2, {}}};
  b.enc.completion(b.chunk, 10, end);
  fmt_ns::Event wait = simple(13, fmt_ns::Call::Wait, 1300);
  wait.pending = true;
  b.enc.event(b.chunk, wait);
  fmt_ns::Termination term{fmt_ns::TerminationKind::signal, 9, 2000, "SIGKILL", 13, 4, 0};
  b.enc.termination(b.chunk, term);
  b.seal();
  write_bytes(dir.path / "rank-0.smt", b.bytes);

  fmt_ns::RankTrace r = fmt_ns::read_rank_file(dir.path / "rank-0.smt");
  CHECK(r.problems.empty());
  CHECK(r.chunks == 2);
  REQUIRE(r.events.size() == 4);
  const fmt_ns::Event& got = r.events[0];
  CHECK(got.seq == 10);
  CHECK_FALSE(got.pending);
  CHECK(got.t_start == 1000);
  CHECK(got.duration == 900);
  CHECK(got.buf == 0x5000);
  CHECK(got.peer == fmt_ns::k_any_source);
  CHECK(got.status.source == 1);
  CHECK(got.status.tag == 3);
  REQUIRE(got.completed.size() == 2);  // repeated fields append
  CHECK(got.completed[1].request == 2);
  CHECK(r.events[1].seq == 11);
  CHECK(r.events[1].flag == false);
  CHECK(r.events[2].buf == 0x6000);
  CHECK(r.events[2].t_start == 1200);
  CHECK(r.events[3].seq == 13);
  CHECK(r.events[3].pending);
  CHECK(r.events[3].t_start == 1300);
  REQUIRE(r.end.has_value());
  CHECK(r.end->kind == fmt_ns::TerminationKind::signal);
  CHECK(r.end->message == "SIGKILL");
}

TEST_CASE("trace_format::RankReader::streams records") {
  TempDir dir;
  fmt_ns::Trace trace = sample_trace(2, 50);
  fmt_ns::write_trace(trace, dir.path);
  fmt_ns::RankReader reader(dir.path / "rank-1.smt");
  fmt_ns::RankReader::Callbacks cb;
  std::vector<uint64_t> seqs;
  int sites = 0, problems = 0;
  cb.event = [&](const fmt_ns::Event& e) { seqs.push_back(e.seq); };
  cb.site = [&](const fmt_ns::CallSite&) { ++sites; };
  cb.problem = [&](const fmt_ns::Problem&) { ++problems; };
  auto header = reader.header(cb);
  REQUIRE(header.has_value());
  CHECK(header->rank == 1);
  CHECK(reader.read_all(cb) == 50);
  CHECK(seqs.size() == 50);
  CHECK(seqs.back() == 49);  // the pending one comes last
  CHECK(sites == 2);
  CHECK(problems == 0);
}

TEST_CASE("trace_format::read_trace::empty directory") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(fmt_ns::read_trace(dir.path),
                       doctest::Contains("no manifest.json and no rank-*.smt files"),
                       fmt_ns::TraceError);
  CHECK_THROWS_WITH_AS(fmt_ns::read_trace(dir.path / "nope"), doctest::Contains("no such directory"),
                       fmt_ns::TraceError);
}

TEST_CASE("trace_format::read_trace::missing rank file") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(3, 20), dir.path);
  fs::remove(dir.path / "rank-1.smt");
  fmt_ns::Trace got = fmt_ns::read_trace(dir.path);
  REQUIRE(got.ranks.size() == 3);
  CHECK_FALSE(got.ranks[1].present);
  CHECK(got.ranks[0].present);
  CHECK(got.ranks[2].events.size() == 20);
  REQUIRE(got.problems.size() == 1);
  CHECK(got.problems[0].rank == 1u);
  CHECK(got.problems[0].file == (dir.path / "rank-1.smt").string());
  CHECK(got.problems[0].to_string().find("missing rank file rank-1.smt") != std::string::npos);
  CHECK_FALSE(got.complete());
}

TEST_CASE("trace_format::read_trace::implausible world size") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(2, 5), dir.path);
  write_bytes(dir.path / "manifest.json", R"({"format_version": 1, "world_size": 4000000000})");
  write_bytes(dir.path / "rank-999999999.smt", "x");
  g_largest_allocation = 0;
  fmt_ns::Trace got = fmt_ns::read_trace(dir.path);
  CHECK(g_largest_allocation.load() < (16u << 20));
  CHECK(got.ranks.size() == 2);
  CHECK(mentions(got.problems, "world size 4000000000 is implausible"));
  CHECK(mentions(got.problems, "rank-999999999.smt: byte 0: warning: rank number too large"));
}

TEST_CASE("trace_format::read_trace::manifest world size far beyond the rank files") {
  // Found by fuzzing (tests/fuzz/regressions/manifest/): a manifest of 100
  // bytes claiming 97044 ranks beside two rank files made the reader build a
  // RankTrace and a "missing rank file" problem for each (a 68 MB vector).
  TempDir dir;
  fmt_ns::write_trace(sample_trace(2, 5), dir.path);
  write_bytes(dir.path / "manifest.json", R"({"format_version": 1, "world_size": 97044})");
  g_largest_allocation = 0;
  fmt_ns::Trace got = fmt_ns::read_trace(dir.path);
  CHECK(g_largest_allocation.load() < (1u << 20));
  CHECK(got.ranks.size() == 2);
  CHECK(got.ranks[1].events.size() == 5);
  CHECK(mentions(got.problems, "manifest.json: byte 0: world size 97044 is implausible: 2 rank files found, "
                               "more than 16384 missing; using the rank files found"));
  SUBCASE("a job that lost many rank files, but not implausibly many, keeps its world size") {
    write_bytes(dir.path / "manifest.json", R"({"format_version": 1, "world_size": 16386})");
    fmt_ns::Trace lost = fmt_ns::read_trace(dir.path);
    CHECK(lost.ranks.size() == 16386);
    CHECK(mentions(lost.problems, "missing rank file rank-16385.smt (expected 16386 ranks)"));
  }
}

TEST_CASE("trace_format::read_trace::manifest fuzz regressions") {
  // Every manifest tests/fuzz found an oversized allocation or a slow input
  // with (tests/fuzz/regressions/manifest/), beside a real two-rank trace as
  // the fuzz target has it: read without throwing, no allocation near the
  // fuzzer's 64 MiB limit.
  const fs::path inputs_dir = fs::path(SMTRACE_SOURCE_DIR) / "tests/fuzz/regressions/manifest";
  TempDir dir;
  fmt_ns::write_trace(sample_trace(2, 5), dir.path);
  std::size_t inputs = 0;
  for (const auto& entry : fs::directory_iterator(inputs_dir)) {
    CAPTURE(entry.path().string());
    fs::copy_file(entry.path(), dir.path / "manifest.json", fs::copy_options::overwrite_existing);
    g_largest_allocation = 0;
    fmt_ns::Trace got = fmt_ns::read_trace(dir.path);
    CHECK(g_largest_allocation.load() < (1u << 20));
    CHECK(got.ranks.size() == 2);
    CHECK(mentions(got.problems, "is implausible"));
    ++inputs;
  }
  CHECK(inputs > 0);
}

TEST_CASE("trace_format::read_trace::rank files without a manifest") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(2, 5), dir.path);
  fs::remove(dir.path / "manifest.json");
  fmt_ns::Trace got = fmt_ns::read_trace(dir.path);
  CHECK_FALSE(got.has_manifest);
  CHECK(got.ranks.size() == 2);
  CHECK(got.all_problems().empty());
}

TEST_CASE("trace_format::read_rank_file::truncated chunk") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(1, 8000), dir.path);
  const fs::path file = dir.path / "rank-0.smt";
  const std::string bytes = read_bytes(file);
  auto frames = frame_offsets(bytes);
  REQUIRE(frames.size() >= 4);
  const uint64_t cut_frame = frames[2];
  const std::size_t cut = static_cast<std::size_t>(cut_frame + 1000);
  write_bytes(file, bytes.substr(0, cut));

  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CAPTURE(all_text(r.problems));
  CHECK(r.present);
  CHECK(r.truncated);
  CHECK(mentions(r.problems, file.string() + ": byte " + std::to_string(cut_frame) + ": rank 0: chunk length"));
  CHECK(mentions(r.problems, "file cut short"));
  CHECK(mentions(r.problems, "record incomplete"));
  // The first chunk's events and the complete records of the cut chunk are kept.
  CHECK(r.events.size() > 0);
  CHECK(r.events.size() < 8000);
  for (std::size_t i = 0; i < r.events.size(); ++i) CHECK(r.events[i].seq == i);
}

TEST_CASE("trace_format::read_rank_file::garbage bytes") {
  TempDir dir;
  fmt_ns::Trace trace = sample_trace(1, 8000);
  fmt_ns::write_trace(trace, dir.path);
  const fs::path file = dir.path / "rank-0.smt";
  const std::string bytes = read_bytes(file);
  std::mt19937 rng(42);
  auto random_bytes = [&](std::size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() | 1);  // no zero bytes
    return s;
  };

  SUBCASE("appended") {
    write_bytes(file, bytes + random_bytes(100));
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
    CAPTURE(all_text(r.problems));
    CHECK(r.events.size() == 8000);
    CHECK(r.finalized());
    REQUIRE_FALSE(r.problems.empty());
    CHECK(r.problems[0].file == file.string());
    CHECK(r.problems[0].offset == bytes.size());
  }
  SUBCASE("replacing a frame") {
    auto frames = frame_offsets(bytes);
    REQUIRE(frames.size() >= 4);
    const uint64_t start = frames[2];
    const uint64_t end = frames[3];
    std::string damaged = bytes;
    damaged.replace(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start),
                    random_bytes(static_cast<std::size_t>(end - start)));
    write_bytes(file, damaged);
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
    CAPTURE(all_text(r.problems));
    REQUIRE_FALSE(r.problems.empty());
    CHECK(r.problems[0].offset == start);
    CHECK(mentions(r.problems, file.string() + ": byte " + std::to_string(start)));
    // The chunks before and after the damage are kept.
    CHECK(r.events.size() < 8000);
    CHECK(r.events.size() > 2000);
    CHECK(r.events.back().seq == 7999);
    CHECK(r.finalized());
  }
}

TEST_CASE("trace_format::read_rank_file::huge length prefix") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(1, 8000), dir.path);
  const fs::path file = dir.path / "rank-0.smt";
  std::string bytes = read_bytes(file);
  auto frames = frame_offsets(bytes);
  REQUIRE(frames.size() >= 3);
  const uint64_t at = frames[1];
  const unsigned char huge[4] = {0xFF, 0xFF, 0xFF, 0x7F};
  std::memcpy(bytes.data() + at, huge, 4);
  write_bytes(file, bytes);

  g_largest_allocation = 0;
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CHECK(g_largest_allocation.load() < (16u << 20));
  CAPTURE(all_text(r.problems));
  CHECK(mentions(r.problems, file.string() + ": byte " + std::to_string(at) +
                                 ": rank 0: chunk length 2147483647 exceeds the maximum"));
  // Reading resumes at the next intact chunk.
  CHECK(r.events.size() > 0);
  CHECK(r.finalized());
}

TEST_CASE("trace_format::read_rank_file::unknown version") {
  TempDir dir;
  fmt_ns::RankHeader h = header_for(0, 1);
  h.format_version = 7;
  RankFileBuilder b(h);
  b.begin(0, 0);
  b.enc.event(b.chunk, simple(0, fmt_ns::Call::Init, 10));
  b.seal();
  const fs::path file = dir.path / "rank-0.smt";
  write_bytes(file, b.bytes);
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CHECK_FALSE(r.present);
  CHECK(r.events.empty());
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].severity == fmt_ns::Problem::Severity::error);
  CHECK(r.problems[0].to_string() ==
        file.string() + ": byte 16: rank 0: format version 7 is newer than this reader (2)");
}

TEST_CASE("trace_format::read_rank_file::CRC mismatch") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(1, 8000), dir.path);
  const fs::path file = dir.path / "rank-0.smt";
  std::string bytes = read_bytes(file);
  auto frames = frame_offsets(bytes);
  REQUIRE(frames.size() >= 3);
  const uint64_t at = frames[1];
  bytes[static_cast<std::size_t>(at + 8 + 100)] ^= 0x40;
  write_bytes(file, bytes);
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CAPTURE(all_text(r.problems));
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].offset == at);
  CHECK(mentions(r.problems, file.string() + ": byte " + std::to_string(at) + ": rank 0: chunk CRC mismatch"));
  CHECK(r.events.size() > 0);
  CHECK(r.events.size() < 8000);
  CHECK(r.finalized());
}

TEST_CASE("trace_format::read_rank_file::open chunk with trailing zero padding") {
  TempDir dir;
  RankFileBuilder b(header_for(0, 1));
  two_chunks(b);
  fmt_ns::Event recv = simple(3, fmt_ns::Call::Recv, 400);
  recv.pending = true;  // durable before it blocked; then the rank was killed
  b.enc.event(b.chunk, recv);
  b.leave_open(4096);
  const fs::path file = dir.path / "rank-0.smt";
  write_bytes(file, b.bytes);

  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CAPTURE(all_text(r.problems));
  CHECK(r.problems.empty());
  CHECK(r.chunks == 2);
  REQUIRE(r.events.size() == 4);
  CHECK(r.events[2].t_start == 300);
  CHECK(r.events[3].pending);
  CHECK_FALSE(r.end.has_value());

  SUBCASE("sealed chunks followed by zero padding") {
    RankFileBuilder s(header_for(0, 1));
    s.begin(0, 0);
    s.enc.event(s.chunk, simple(0, fmt_ns::Call::Init, 1));
    s.seal();
    s.bytes.append(10000, '\0');
    write_bytes(file, s.bytes);
    fmt_ns::RankTrace z = fmt_ns::read_rank_file(file);
    CHECK(z.problems.empty());
    CHECK(z.events.size() == 1);
    CHECK_FALSE(z.truncated);
  }
}

TEST_CASE("trace_format::read_rank_file::torn last record in an open chunk") {
  TempDir dir;
  RankFileBuilder b(header_for(0, 1));
  b.begin(0, 0);
  for (uint64_t i = 0; i < 5; ++i) b.enc.event(b.chunk, simple(i, fmt_ns::Call::Send, 10 * static_cast<int64_t>(i)));
  std::string before = b.chunk;
  fmt_ns::Event big = simple(5, fmt_ns::Call::Alltoallv, 60);
  big.counts.assign(50, 1234567);
  b.enc.event(b.chunk, big);
  const std::size_t torn_at = before.size();
  const fs::path file = dir.path / "rank-0.smt";

  SUBCASE("the file ends inside the record") {
    b.chunk.resize(b.chunk.size() - 20);
    b.leave_open(0);
  }
  SUBCASE("only the record's tag and length were written") {
    std::fill(b.chunk.begin() + static_cast<std::ptrdiff_t>(torn_at + 3), b.chunk.end(), '\0');
    b.leave_open(4096);
  }
  write_bytes(file, b.bytes);
  const uint64_t record_offset = b.bytes.find('\xFF') + 8 + torn_at;  // header frame holds no 0xFF here

  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CAPTURE(all_text(r.problems));
  CHECK(r.events.size() == 5);
  CHECK(r.truncated);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].offset == record_offset);
  CHECK(mentions(r.problems, file.string() + ": byte " + std::to_string(record_offset) + ": rank 0: torn record"));
}

TEST_CASE("trace_format::read_rank_file::record lengths of one, two and three bytes, and their damage") {
  // The walk reads an Event record's tag and a one- or two-byte length
  // itself and leaves longer lengths to CodedInputStream: records on both
  // sides of 128 and 16384 bytes read back, and a length that runs past the
  // frame is the same problem, at the record, in either coding.
  TempDir dir;
  const fs::path file = dir.path / "rank-0.smt";
  std::vector<fmt_ns::Event> want;
  RankFileBuilder b(header_for(0, 1));
  b.begin(0, 0);
  uint64_t seq = 0;
  for (const std::size_t n : {0, 1, 110, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 16360, 16370,
                              16371, 16372, 16373, 16374, 16375, 16376, 16377, 16378, 16379, 16380, 16381, 16382,
                              16383, 16384}) {
    fmt_ns::Event e = simple(seq++, fmt_ns::Call::Send, 10);
    e.stack.assign(n, 7);  // n bytes of packed stack
    want.push_back(e);
    b.enc.event(b.chunk, e);
  }
  b.seal();
  write_bytes(file, b.bytes);
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CAPTURE(all_text(r.problems));
  CHECK(r.problems.empty());
  REQUIRE(r.events.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(r.events[i] == want[i]);
  }

  // A record whose length says more than the frame holds, in one, two and
  // three bytes, after two complete events.
  for (const std::string& head :
       {std::string("\x12\x40", 2), std::string("\x12\x80\x01", 3), std::string("\x12\xff\x7f", 3),
        std::string("\x12\x80\x80\x01", 4), std::string("\x12\xff\xff\xff\xff\x0f", 6)}) {
    for (const bool sealed : {true, false}) {
      CAPTURE(head.size());
      CAPTURE(sealed);
      RankFileBuilder d(header_for(0, 1));
      d.begin(0, 0);
      d.enc.event(d.chunk, simple(0, fmt_ns::Call::Init, 1));
      d.enc.event(d.chunk, simple(1, fmt_ns::Call::Barrier, 2));
      const std::size_t at = d.chunk.size();
      d.chunk += head + std::string(20, '\x01');
      const std::size_t frame = d.bytes.size();
      if (sealed) {
        d.seal();
      } else {
        d.leave_open(0);
      }
      write_bytes(file, d.bytes);
      const uint64_t record_offset = frame + 8 + at;
      fmt_ns::RankTrace t = fmt_ns::read_rank_file(file);
      CAPTURE(all_text(t.problems));
      CHECK(t.events.size() == 2);
      CHECK(t.truncated);
      REQUIRE(t.problems.size() == 1);
      CHECK(t.problems[0].offset == record_offset);
      CHECK(mentions(t.problems, sealed ? "malformed record in a sealed chunk; rest of the chunk skipped"
                                        : "torn record at the end of an open chunk; dropped"));
    }
  }
}

TEST_CASE("trace_format::read_rank_file::file shorter than the magic") {
  TempDir dir;
  const fs::path file = dir.path / "rank-0.smt";
  write_bytes(file, std::string(fmt_ns::k_magic, 5));
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CHECK_FALSE(r.present);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].to_string() == file.string() + ": byte 0: file is 5 bytes, shorter than the 8-byte magic");

  SUBCASE("and through read_trace") {
    fmt_ns::Trace t = fmt_ns::read_trace(dir.path);
    REQUIRE(t.ranks.size() == 1);
    CHECK_FALSE(t.ranks[0].present);
    CHECK(errors(t.all_problems()) == 1);
  }
}

TEST_CASE("trace_format::read_rank_file::lost header") {
  // What a rank killed while its header was being written leaves, and what a
  // damaged copy may: the header frame (or the whole start) gone, the
  // chunks after it intact.
  TempDir dir;
  const fs::path file = dir.path / "rank-2.smt";
  RankFileBuilder b(header_for(2, 4));
  const std::size_t header_end = b.bytes.size();
  two_chunks(b);
  b.leave_open(4096);

  SUBCASE("a file of zeros") {
    write_bytes(file, std::string(4u << 20, '\0'));
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
    CHECK_FALSE(r.present);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].to_string() == file.string() +
                                           ": byte 0: the file is 4194304 bytes, all zero: the rank stopped "
                                           "before its header was written (nothing to read)");
  }
  SUBCASE("magic and header zeroed: sealed and open chunks read, rank and world size from the trace") {
    std::string bytes = b.bytes;
    std::fill(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header_end), '\0');
    write_bytes(file, bytes);
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
    CAPTURE(all_text(r.problems));
    CHECK(r.present);
    CHECK(r.header.recovered);
    REQUIRE(r.events.size() == 3);
    CHECK(r.events[2].call == fmt_ns::Call::Send);
    REQUIRE(errors(r.problems) == 1);
    CHECK(mentions(r.problems, file.string() + ": byte 0: not an smtrace rank file (bad magic); header lost: "
                                               "reading the chunks from byte " + std::to_string(header_end) + " on"));
    // Through read_trace, with a manifest: the rank and world size are known.
    fmt_ns::Trace whole = sample_trace(4, 3);
    whole.ranks[2].present = false;
    fmt_ns::write_trace(whole, dir.path);
    write_bytes(file, bytes);
    fmt_ns::Trace t = fmt_ns::read_trace(dir.path);
    REQUIRE(t.ranks.size() == 4);
    CHECK(t.ranks[2].present);
    CHECK(t.ranks[2].header.rank == 2);
    CHECK(t.ranks[2].header.world_size == 4);
    CHECK(t.ranks[2].comms.at(fmt_ns::k_comm_world).world_ranks.size() == 4);
    CHECK(t.ranks[2].events.size() == 3);
  }
  SUBCASE("only an open chunk after a damaged header frame") {
    RankFileBuilder open(header_for(2, 4));
    open.begin(0, 100);
    open.enc.event(open.chunk, simple(0, fmt_ns::Call::Init, 100));
    open.leave_open(100);
    std::string bytes = open.bytes;
    bytes[fmt_ns::k_magic_size] = '\xFE';  // header length: beyond the file
    bytes[fmt_ns::k_magic_size + 1] = '\xFF';
    bytes[fmt_ns::k_magic_size + 2] = '\xFF';
    bytes[fmt_ns::k_magic_size + 3] = '\x7F';
    write_bytes(file, bytes);
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
    CAPTURE(all_text(r.problems));
    CHECK(r.present);
    REQUIRE(r.events.size() == 1);
    CHECK(mentions(r.problems, "byte 8: header frame length 2147483646 exceeds"));
    CHECK(mentions(r.problems, "header lost: reading the chunks from byte " + std::to_string(header_end)));
  }
  SUBCASE("no chunk after the damage") {
    write_bytes(file, std::string("not a trace at all, just text\n"));
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
    CHECK_FALSE(r.present);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].to_string() == file.string() + ": byte 0: not an smtrace rank file (bad magic); no chunk found after it");
  }
}

TEST_CASE("trace_format::read_rank_file::fuzz regressions") {
  // Every input tests/fuzz found a crash or an oversized allocation with
  // (tests/fuzz/regressions/rank_file/): read without throwing, and no
  // single allocation near the fuzzer's 64 MiB limit.
  const fs::path dir = fs::path(SMTRACE_SOURCE_DIR) / "tests/fuzz/regressions/rank_file";
  std::size_t inputs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    g_largest_allocation = 0;
    fmt_ns::RankTrace r = fmt_ns::read_rank_file(entry.path());
    CHECK(g_largest_allocation.load() < (32u << 20));
    CHECK_FALSE(r.problems.empty());
    ++inputs;
  }
  CHECK(inputs > 0);
}

TEST_CASE("trace_format::read_rank_file::implausible world size in the header") {
  // Found by fuzzing (tests/fuzz/regressions/rank_file/world-size-huge-1): the
  // header's world size made the reader build an MPI_COMM_WORLD of billions.
  TempDir dir;
  fmt_ns::RankHeader h = header_for(1, 0xF0000000u);
  RankFileBuilder b(h);
  const std::size_t header_end = b.bytes.size();
  b.begin(0, 100);
  b.enc.event(b.chunk, simple(0, fmt_ns::Call::Init, 100));
  b.seal();
  const fs::path file = dir.path / "rank-1.smt";
  write_bytes(file, b.bytes);
  g_largest_allocation = 0;
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file);
  CAPTURE(all_text(r.problems));
  CHECK(g_largest_allocation.load() < (1u << 20));
  CHECK(r.present);
  CHECK(r.header.recovered);
  CHECK(r.events.size() == 1);
  CHECK(mentions(r.problems, ": RankHeader world size 4026531840 is implausible (more than 4194304 ranks); "
                             "header lost: reading the chunks from byte " + std::to_string(header_end)));
}

TEST_CASE("trace_format::read_trace::symbols") {
  TempDir dir;
  fmt_ns::write_trace(sample_trace(2, 10), dir.path);
  std::map<uint32_t, std::vector<fmt_ns::CallSite>> symbols;
  symbols[1] = {{2, 1, 0x1040, "exchange", "halo.c", 42, 7}};
  fmt_ns::write_symbols(dir.path, symbols);
  fmt_ns::Trace t = fmt_ns::read_trace(dir.path);
  CHECK(t.all_problems().empty());
  CHECK(t.ranks[1].site(2)->function == "exchange");
  CHECK(t.ranks[1].site(2)->line == 42);
  CHECK(t.ranks[1].site(1)->function == "main");  // kept
  CHECK(t.ranks[0].site(2)->function.empty());
  fmt_ns::ReadOptions no_symbols;
  no_symbols.symbols = false;
  CHECK(fmt_ns::read_trace(dir.path, no_symbols).ranks[1].site(2)->function.empty());
}

TEST_CASE("trace_format::Problem::to_string") {
  fmt_ns::Problem p;
  p.file = "t/rank-3.smt";
  p.offset = 1204;
  p.message = "chunk length 4294967295 exceeds file size";
  CHECK(p.to_string() == "t/rank-3.smt: byte 1204: chunk length 4294967295 exceeds file size");
  p.rank = 3;
  p.seq = 17;
  CHECK(p.to_string() == "t/rank-3.smt: byte 1204: rank 3: event 3:17: chunk length 4294967295 exceeds file size");
}

TEST_SUITE_END();

namespace {

// Event records written by hand, field by field, for the stream coding of
// buf in format versions 1 and 2 (docs/trace-format.md section 3).
void raw_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void raw_field(std::string& body, uint32_t number, uint64_t v) {
  raw_varint(body, uint64_t{number} << 3);
  raw_varint(body, v);
}
uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
// An event record of `call`, t_start `dt` after the previous event, field
// 15 `buf` (left out when 0) before the call's field when `buf_first`;
// `pending`, or a completion record of the event `completes` back.
void raw_event(std::string& chunk, fmt_ns::Call call, int64_t dt, int64_t buf, bool buf_first = false,
               bool pending = false, uint64_t completes = 0) {
  std::string body;
  if (buf_first && buf != 0) raw_field(body, 15, zigzag(buf));
  raw_field(body, 2, static_cast<uint64_t>(call));
  if (completes != 0) {
    raw_field(body, 7, completes);
    raw_field(body, 5, 9);  // duration
  } else {
    raw_field(body, 4, zigzag(dt));
    if (!buf_first && buf != 0) raw_field(body, 15, zigzag(buf));
    if (pending) raw_field(body, 6, 1);
  }
  chunk += static_cast<char>(fmt_ns::RecordEncoder::k_event_tag);
  raw_varint(chunk, body.size());
  chunk += body;
}

// Put 0x5000, Barrier (pending, then completed), Win_flush, Buffer_attach
// 0x9000, Put 0x5008: calls with a buffer, without one, and one without a
// buffer layout that still sets buf. `coded[i]` is event i's field 15.
void buf_stream(RankFileBuilder& b, const std::array<int64_t, 5>& coded, bool last_buf_first) {
  b.begin(0, 1000);
  raw_event(b.chunk, fmt_ns::Call::Put, 1, coded[0]);
  raw_event(b.chunk, fmt_ns::Call::Barrier, 1, coded[1], false, true);
  raw_event(b.chunk, fmt_ns::Call::Barrier, 0, 0, false, false, 1);
  raw_event(b.chunk, fmt_ns::Call::Win_flush, 1, coded[2]);
  raw_event(b.chunk, fmt_ns::Call::Buffer_attach, 1, coded[3]);
  raw_event(b.chunk, fmt_ns::Call::Put, 1, coded[4], last_buf_first);
  b.seal();
}

void check_buf_stream(const fmt_ns::RankTrace& r) {
  CAPTURE(all_text(r.problems));
  CHECK(r.problems.empty());
  REQUIRE(r.events.size() == 5);
  const std::array<fmt_ns::Call, 5> calls{fmt_ns::Call::Put, fmt_ns::Call::Barrier, fmt_ns::Call::Win_flush,
                                          fmt_ns::Call::Buffer_attach, fmt_ns::Call::Put};
  const std::array<uint64_t, 5> bufs{0x5000, 0, 0, 0x9000, 0x5008};
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(r.events[i].seq == i);
    CHECK(r.events[i].call == calls[i]);
    CHECK(r.events[i].buf == bufs[i]);
    CHECK(r.events[i].t_start == static_cast<int64_t>(1001 + i));
  }
  CHECK(r.events[1].duration == 9);
}

}  // namespace

TEST_CASE("trace_format::read_rank_file::buf coding of format versions 1 and 2") {
  TempDir dir;
  const fs::path file = dir.path / "rank-0.smt";
  fmt_ns::RankHeader h = header_for(0, 1);
  SUBCASE("version 1: every record's buf is a delta against the previous one's") {
    h.format_version = 1;
    RankFileBuilder b(h);
    buf_stream(b, {0x5000, -0x5000, 0, 0x9000, 0x5008 - 0x9000}, false);
    write_bytes(file, b.bytes);
    check_buf_stream(fmt_ns::read_rank_file(file));
  }
  SUBCASE("version 2: only calls with a buffer delta and move the running buf") {
    h.format_version = 2;
    for (bool buf_first : {false, true}) {
      CAPTURE(buf_first);  // fields in any order: the rule applies after the record is read
      RankFileBuilder b(h);
      buf_stream(b, {0x5000, 0, 0, 0x9000, 8}, buf_first);
      write_bytes(file, b.bytes);
      check_buf_stream(fmt_ns::read_rank_file(file));
    }
  }
  SUBCASE("version 2 through RecordEncoder: the same records") {
    RankFileBuilder hand(h);
    buf_stream(hand, {0x5000, 0, 0, 0x9000, 8}, false);
    RankFileBuilder b(h);
    b.begin(0, 1000);
    const std::array<fmt_ns::Call, 5> calls{fmt_ns::Call::Put, fmt_ns::Call::Barrier, fmt_ns::Call::Win_flush,
                                            fmt_ns::Call::Buffer_attach, fmt_ns::Call::Put};
    const std::array<uint64_t, 5> bufs{0x5000, 0, 0, 0x9000, 0x5008};
    for (uint64_t i = 0; i < 5; ++i) {
      fmt_ns::Event e;
      e.seq = i;
      e.call = calls[i];
      e.t_start = static_cast<int64_t>(1001 + i);
      e.buf = bufs[i];
      e.pending = i == 1;
      b.enc.event(b.chunk, e);
      if (i == 1) {
        fmt_ns::Event end;
        end.call = fmt_ns::Call::Barrier;
        end.duration = 9;
        b.enc.completion(b.chunk, 1, end);
      }
    }
    b.seal();
    CHECK(b.bytes == hand.bytes);
    write_bytes(file, b.bytes);
    check_buf_stream(fmt_ns::read_rank_file(file));
  }
}

TEST_CASE("trace_format::read_rank_file::a lost header is read in the version it is given") {
  TempDir dir;
  const fs::path file = dir.path / "rank-0.smt";
  fmt_ns::RankHeader h = header_for(0, 1);
  h.format_version = 1;
  RankFileBuilder b(h);
  buf_stream(b, {0x5000, -0x5000, 0, 0x9000, 0x5008 - 0x9000}, false);
  b.bytes[0] ^= 0x7F;  // bad magic: the header is lost, the chunks are read from the first frame found
  write_bytes(file, b.bytes);
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file, 1);
  REQUIRE(r.present);
  CHECK(r.header.recovered);
  CHECK(r.header.format_version == 1);
  REQUIRE(r.events.size() == 5);
  CHECK(r.events[3].buf == 0x9000);
  CHECK(r.events[4].buf == 0x5008);
}

TEST_CASE("trace_format::read_rank_file::a lost header in a version this reader does not know is not read") {
  TempDir dir;
  const fs::path file = dir.path / "rank-0.smt";
  fmt_ns::RankHeader h = header_for(0, 1);
  RankFileBuilder b(h);
  buf_stream(b, {0x5000, -0x5000, 0}, false);
  b.bytes[0] ^= 0x7F;  // bad magic: the header is lost
  write_bytes(file, b.bytes);
  const uint32_t newer = fmt_ns::k_format_version + 1;
  fmt_ns::RankTrace r = fmt_ns::read_rank_file(file, newer);
  CHECK(r.events.empty());
  CHECK(mentions(r.problems, "header lost, and the manifest's format version " + std::to_string(newer) +
                                 " is not one this reader reads"));
  // In a version it knows, the same file is read, and the problem says which.
  fmt_ns::RankTrace known = fmt_ns::read_rank_file(file, fmt_ns::k_format_version);
  CHECK(known.events.size() == 5);
  CHECK(mentions(known.problems, "in format version " + std::to_string(fmt_ns::k_format_version)));
}
