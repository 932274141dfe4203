// The analyzer's wire coding (analyzer/wire.hpp) and the passes that travel
// with it (Check::saves_passes, run_saved_passes, Options::passes_elsewhere):
// an analysis whose rank-local passes ran "elsewhere" (here: on a second
// reading of the file) must give the result of one that ran them itself.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/checks/grouped.hpp"
#include "analyzer/rank_data.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/wire.hpp"
#include "smt_encoder/prove.hpp"
#include "tests/unit/analyzer_json_trace.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "tests/unit/scratch_dir.hpp"
#include "trace_format/reader.hpp"
#include "trace_format/synth.hpp"

namespace {

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using tf::Call;

using Callbacks = tf::RankReader::Callbacks;

// One record of a rank as an smtrace-mpi reader passes it on to the
// analyzing process (distributed/transfer.cpp's TeeSource, without MPI).
struct PassedRecord {
  std::function<void(const Callbacks&)> deliver;  // a definition, problem, end, or an event passed on
  bool is_header = false;                         // header()'s result
  std::optional<tf::RankHeader> header;
  std::optional<an::EventsRead> read;             // the count, before the end or the reader's error
  std::exception_ptr error;                       // what the reader threw

  static PassedRecord delivering(std::function<void(const Callbacks&)> deliver) {
    PassedRecord r;
    r.deliver = std::move(deliver);
    return r;
  }
  static PassedRecord header_read(const std::optional<tf::RankHeader>& header) {
    PassedRecord r;
    r.is_header = true;
    r.header = header;
    return r;
  }
  static PassedRecord count(const an::EventsRead& read) {
    PassedRecord r;
    r.read = read;
    return r;
  }
  static PassedRecord thrown(std::exception_ptr error) {
    PassedRecord r;
    r.error = std::move(error);
    return r;
  }
};

// The reader's side of a rank: the file, whose records go to the passes that
// travel (run_saved_passes's callbacks) and, of the events only those that
// run_saved_passes names (pass_on_only), to `records`. What the callbacks
// throw stops only them; what the reader throws is recorded and rethrown.
class PassingOn final : public an::RankSource {
 public:
  explicit PassingOn(std::unique_ptr<an::RankSource> file) : m_file(std::move(file)) {}
  void pass_on_only(const an::EventSet& calls) override { m_calls = calls; }
  std::optional<tf::RankHeader> header(const Callbacks& to) override {
    std::optional<tf::RankHeader> header;
    guarded([&] { header = m_file->header(tee(to)); });
    records.push_back(PassedRecord::header_read(header));
    rethrow();
    return header;
  }
  void read_all(const Callbacks& to) override {
    guarded([&] { m_file->read_all(tee(to)); });
    records.push_back(PassedRecord::count(m_read));
    rethrow();
  }
  std::vector<PassedRecord> records;

 private:
  template <class Read>
  void guarded(const Read& read) {
    try {
      read();
    } catch (...) {
      records.push_back(PassedRecord::count(m_read));
      records.push_back(PassedRecord::thrown(std::current_exception()));
      throw;
    }
  }
  template <class Member>
  auto both(Member member, const Callbacks& to) {
    using Callback = std::remove_cvref_t<decltype(to.*member)>;
    return Callback([this, member, second = to.*member](const auto& record) {
      records.push_back(PassedRecord::delivering([member, record](const Callbacks& at) {
        if (at.*member) (at.*member)(record);
      }));
      if (second) call(second, record);
    });
  }
  template <class Callback, class Record>
  void call(const Callback& callback, const Record& record) {
    if (m_stopped) return;
    try {
      callback(record);
    } catch (...) {
      m_stopped = std::current_exception();
    }
  }
  Callbacks tee(const Callbacks& to) {
    Callbacks cb;
    cb.site = both(&Callbacks::site, to);
    cb.module = both(&Callbacks::module, to);
    cb.comm = both(&Callbacks::comm, to);
    cb.datatype = both(&Callbacks::datatype, to);
    cb.end = both(&Callbacks::end, to);
    cb.note = both(&Callbacks::note, to);
    cb.problem = both(&Callbacks::problem, to);
    cb.event = [this, second = to.event](const tf::Event& e) {
      ++m_read.events;
      m_read.last_seq = std::max(m_read.last_seq, e.seq);
      if (m_calls.has(e.call)) {
        ++m_read.delivered;
        records.push_back(PassedRecord::delivering([e](const Callbacks& at) {
          if (at.event) at.event(e);
        }));
      }
      if (second) call(second, e);
    };
    return cb;
  }
  void rethrow() {
    if (m_stopped) std::rethrow_exception(std::exchange(m_stopped, nullptr));
  }

  std::unique_ptr<an::RankSource> m_file;
  an::EventSet m_calls = an::EventSet::every();
  an::EventsRead m_read;
  std::exception_ptr m_stopped;
};

// The events of a whole trace that readers read and passed on.
struct Tally {
  void add(const an::EventsRead& read) {
    std::lock_guard lock(mutex);
    events += read.events;
    passed_on += read.delivered;
  }
  std::mutex mutex;
  uint64_t events = 0, passed_on = 0;
};

// The analyzing process's side of a rank another process reads: on the
// first call, the reader's side runs (run_saved_passes on a PassingOn), and
// its records are then delivered as that process would receive them.
class ReadElsewhere final : public an::RankSource {
 public:
  ReadElsewhere(const tf::TraceFiles& files, uint32_t rank, const an::Options& options, Tally* total)
      : m_files(files), m_rank(rank), m_options(options), m_total(total) {}
  std::optional<tf::RankHeader> header(const Callbacks& callbacks) override {
    PassingOn there(m_options.rank_source ? m_options.rank_source(m_rank, m_files.rank_files[m_rank])
                                          : an::read_rank_file_source(m_files.rank_files[m_rank]));
    m_saved = an::run_saved_passes(m_files, m_rank, there, m_options);
    m_records = std::move(there.records);
    while (m_next < m_records.size()) {
      const PassedRecord& record = m_records[m_next++];
      if (record.is_header) return record.header;
      take(record, callbacks);
    }
    throw std::logic_error("no header passed on");
  }
  void read_all(const Callbacks& callbacks) override {
    while (m_next < m_records.size()) take(m_records[m_next++], callbacks);
  }
  std::string_view saved_passes() override { return m_saved; }
  std::optional<an::EventsRead> events_read() const override { return m_read; }

 private:
  void take(const PassedRecord& record, const Callbacks& callbacks) {
    if (record.deliver) record.deliver(callbacks);
    if (record.read) {
      m_read = record.read;
      if (m_total) m_total->add(*m_read);
    }
    if (record.error) std::rethrow_exception(record.error);
  }

  const tf::TraceFiles& m_files;
  uint32_t m_rank;
  const an::Options& m_options;
  Tally* m_total;
  std::string m_saved;
  std::vector<PassedRecord> m_records;
  std::size_t m_next = 0;
  std::optional<an::EventsRead> m_read;
};

// Return `options`'s analysis of `dir` with every rank read elsewhere, as
// smtrace-mpi's readers do: its travelling passes and the replay's run
// there (on options.rank_source's records when set), and the analysis gets
// only the events that a consumer of it reads.
// Count in `total`, when given, the events read and those passed on.
an::Result analyze_elsewhere(const std::filesystem::path& dir, an::Options options, Tally* total = nullptr) {
  const tf::TraceFiles files = tf::find_trace_files(dir);
  const an::Options there = options;
  options.rank_source = [&](uint32_t rank, const std::filesystem::path&) -> std::unique_ptr<an::RankSource> {
    return std::make_unique<ReadElsewhere>(files, rank, there, total);
  };
  options.passes_elsewhere = [](uint32_t) { return true; };
  return an::analyze(dir, options);
}

// Return `result`'s problems as the report writes them, with their severities.
std::vector<std::string> problem_texts(const an::Result& result) {
  std::vector<std::string> out;
  for (const tf::Problem& p : result.problems)
    out.push_back((p.severity == tf::Problem::Severity::error ? "error: " : "warning: ") + p.to_string());
  return out;
}

void check_same(const an::Result& here, const an::Result& elsewhere) {
  CHECK(here.findings == elsewhere.findings);
  CHECK(here.stats == elsewhere.stats);
  REQUIRE(here.failures.size() == elsewhere.failures.size());
  for (std::size_t i = 0; i < here.failures.size(); ++i) {
    CHECK(here.failures[i].check == elsewhere.failures[i].check);
    CHECK(here.failures[i].message == elsewhere.failures[i].message);
  }
}

// Write `trace` under a scratch directory named `name`, analyze it here and
// with the passes elsewhere, check that both agree and that no check failed,
// and return the number of findings of `kind`.
std::size_t count_both_ways(const tf::Trace& trace, const char* name, const an::Options& options,
                            const char* kind) {
  const std::filesystem::path dir = smtrace::test::scratch_dir(name);
  tf::write_trace(trace, dir);
  const an::Result here = an::analyze(dir, options);
  CHECK(here.failures.empty());
  check_same(here, analyze_elsewhere(dir, options));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return smtrace::test::count_kind(here, kind);
}

// Two ranks, each with a leaked request, a leaked communicator and a send to
// a rank that does not exist (so that finish() groups over both ranks).
tf::Trace leaky_trace() {
  smtrace::test::Builder b(2);
  for (uint32_t r = 0; r < 2; ++r) {
    tf::Event& isend = b.add(Call::Isend, r);
    isend.comm = 0;
    isend.peer = static_cast<int32_t>(1 - r);
    isend.tag = 3;
    isend.buf = 0x1000;
    isend.count = 1;
    isend.datatype = smtrace::test::k_int;
    isend.request = 0x77;
    tf::Event& dup = b.add(Call::Comm_dup, r);
    dup.comm = 0;
    dup.new_comm = 5;
    tf::Event& send = b.add(Call::Send, r);
    send.comm = 0;
    send.peer = 99;
    send.tag = 0;
    send.buf = 0x2000;
    send.count = 1;
    send.datatype = smtrace::test::k_int;
  }
  for (uint32_t r = 0; r < 2; ++r) b.add(Call::Finalize, r);
  return b.trace();
}

// A check whose passes travel and which throws on rank 1's second event.
class Throwing final : public an::Check {
 public:
  std::string_view name() const override { return "throwing"; }
  an::Severity severity() const override { return an::Severity::error; }
  std::string_view description() const override { return "throws"; }
  std::unique_ptr<an::RankPass> rank_pass(const an::RankData& data) override {
    return std::make_unique<Pass>(data.rank);
  }
  bool saves_passes() const override { return true; }
  void save_pass(const an::RankPass& pass, an::WireWriter& out) const override {
    out.put(dynamic_cast<const Pass&>(pass).events);
  }
  std::unique_ptr<an::RankPass> load_pass(const an::RankData& data, an::WireReader& in) const override {
    auto pass = std::make_unique<Pass>(data.rank);
    pass->events = in.get<uint64_t>();
    return pass;
  }
  void finish(const an::Context&, std::vector<std::unique_ptr<an::RankPass>>&, std::vector<an::Finding>&) override {}

 private:
  struct Pass final : an::RankPass {
    explicit Pass(uint32_t rank) : rank(rank) {}
    void event(const tf::Event&) override {
      if (rank == 1 && ++events == 2) throw std::runtime_error("invariant broken");
    }
    uint32_t rank;
    uint64_t events = 0;
  };
};

// Check that `check` alone gives `findings` findings on `dir`, and the same
// result when its passes ran elsewhere (saved, sent and loaded:
// Check::saves_passes).
void check_travels(const std::filesystem::path& dir, const std::string& check, std::size_t findings) {
  an::Options options;
  options.threads = 2;
  options.check_errors = an::CheckErrors::report;
  options.checks = {check};
  options.alignment = an::Alignment::strict;  // collective-misaligned runs
  const an::Result here = an::analyze(dir, options);
  CHECK(here.failures.empty());
  CHECK(smtrace::test::count_kind(here, check) == findings);
  check_same(here, analyze_elsewhere(dir, options));
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::WireWriter::round trip") {
  an::WireWriter out;
  out.put(uint8_t{7});
  out.put(uint64_t{1} << 40);
  out.put(Call::Isend);
  out.put(std::string_view("a string"));
  out.put(std::string_view());
  an::WireReader in(out.bytes());
  CHECK(in.get<uint8_t>() == 7);
  CHECK(in.get<uint64_t>() == uint64_t{1} << 40);
  CHECK(in.get<Call>() == Call::Isend);
  CHECK(in.text() == "a string");
  CHECK(in.text().empty());
  CHECK(in.at_end());
  SUBCASE("bytes that end inside a value") {
    an::WireReader short_in(std::string_view(out.bytes()).substr(0, 5));
    CHECK(short_in.get<uint8_t>() == 7);
    CHECK_THROWS_AS(short_in.get<uint64_t>(), std::runtime_error);
  }
}

TEST_CASE("analyzer::WireWriter::one coding function reads back what it wrote") {
  struct Item {
    uint32_t id = 0;
    bool flag = false;
    std::string name;
    std::optional<uint64_t> extra;
    std::vector<uint16_t> parts;
  };
  constexpr auto code = [](auto& c, auto& item) {
    c(item.id);
    c(item.flag);
    c(item.name);
    c.optional(item.extra, [](auto& ce, auto& x) { ce(x); });
    c.list(item.parts, [](auto& cp, auto& x) { cp(x); });
  };
  const std::vector<Item> items{{7, true, "seven", 1ull << 50, {1, 2, 3}}, {0, false, "", std::nullopt, {}}};
  an::WireWriter out;
  out.list(items, code);
  an::WireReader in(out.bytes());
  std::vector<Item> back{{99, true, "stale", 5, {9}}};  // overwritten, not appended to
  in.list(back, code);
  CHECK(in.at_end());
  REQUIRE(back.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(back[i].id == items[i].id);
    CHECK(back[i].flag == items[i].flag);
    CHECK(back[i].name == items[i].name);
    CHECK(back[i].extra == items[i].extra);
    CHECK(back[i].parts == items[i].parts);
  }
}

TEST_CASE("analyzer::save_problems::round trip") {
  std::vector<an::checks::RawProblem> problems(2);
  problems[0].problem = "rank out of range";
  problems[0].message = "MPI_Send names rank 99";
  problems[0].sites = {{3, 1u << 20, Call::Send, 17, "called here"}, {3, 2, Call::Init, 1, ""}};
  problems[0].notes = {"a note", ""};
  problems[1].generic = true;
  an::WireWriter out;
  an::checks::save_problems(problems, out);
  an::WireReader in(out.bytes());
  const std::vector<an::checks::RawProblem> back = an::checks::load_problems(in);
  CHECK(in.at_end());
  REQUIRE(back.size() == 2);
  CHECK(back[0].problem == problems[0].problem);
  CHECK(back[0].message == problems[0].message);
  REQUIRE(back[0].sites.size() == 2);
  CHECK(back[0].sites[0].rank == 3);
  CHECK(back[0].sites[0].seq == 1u << 20);
  CHECK(back[0].sites[0].call == Call::Send);
  CHECK(back[0].sites[0].site == 17);
  CHECK(back[0].sites[0].note == "called here");
  CHECK(back[0].sites[1].call == Call::Init);
  CHECK(back[0].notes == problems[0].notes);
  CHECK(!back[0].generic);
  CHECK(back[1].sites.empty());
  CHECK(back[1].generic);
}

TEST_CASE("analyzer::run_saved_passes::the passes that travel give the same result") {
  const std::filesystem::path dir = smtrace::test::scratch_dir("saved-passes");
  tf::write_trace(leaky_trace(), dir);
  an::Options options;
  options.threads = 2;
  options.check_errors = an::CheckErrors::report;
  SUBCASE("every check") {
    const an::Result here = an::analyze(dir, options);
    for (const char* kind : {"request-leak", "resource-leak", "invalid-argument"}) {
      CHECK(std::count_if(here.findings.begin(), here.findings.end(),
                          [&](const an::Finding& f) { return f.kind == kind; }) == 1);
    }
    check_same(here, analyze_elsewhere(dir, options));
  }
  SUBCASE("a selection of checks") {
    options.checks = {"request-leak", "deadlock"};
    check_same(an::analyze(dir, options), analyze_elsewhere(dir, options));
  }
  SUBCASE("a check that throws where its pass runs fails here") {
    options.checks = {"request-leak", "throwing"};
    options.extra_checks.push_back([] { return std::make_unique<Throwing>(); });
    const an::Result here = an::analyze(dir, options);
    REQUIRE(here.failures.size() == 1);
    CHECK(here.failures[0].message == "rank 1: event 1:1: invariant broken");
    check_same(here, analyze_elsewhere(dir, options));
    SUBCASE("CheckErrors::rethrow: with the same message") {
      options.check_errors = an::CheckErrors::rethrow;
      options.threads = 1;
      CHECK_THROWS_WITH_AS(analyze_elsewhere(dir, options),
                           doctest::Contains("rank-1.smt: rank 1: loading stopped after 2 events: invariant broken"),
                           std::runtime_error);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("analyzer::run_saved_passes::cuda-mpi-race's records and figures travel") {
  // A kernel writes a device buffer and MPI_Allreduce sends from it, on both ranks.
  const std::string dev = std::to_string(uint64_t{0x7f00'0000'0000});
  const std::string malloc = R"({"call": "CUDA_MALLOC", "buf": ")" + dev + R"(", "size": "4096"})";
  const std::string kernel = R"({"call": "CUDA_LAUNCH_KERNEL", "stream": "0", "args": [{"addr": ")" + dev + R"("}]})";
  const std::string allreduce = R"({"call": "ALLREDUCE", "comm": 0, "buf": ")" + dev +
                                R"(", "count": "16", "datatype": 7, "recv_buf": ")" +
                                std::to_string(uint64_t{0x7f00'0000'0000} + 64) +
                                R"(", "recv_count": "16", "recv_datatype": 7})";
  std::vector<smtrace::test::JsonRank> ranks(2);
  for (auto& rank : ranks) rank.events = {R"({"call": "INIT"})", malloc, kernel, allreduce, R"({"call": "FINALIZE"})"};
  const auto dir = smtrace::test::write_json_trace("saved-cuda", ranks);
  an::Options options;
  options.check_errors = an::CheckErrors::report;
  const an::Result here = an::analyze(dir, options);
  CHECK(smtrace::test::count_kind(here, "cuda-mpi-race") == 2);
  CHECK(here.stats.at("cuda_mpi_race_device_accesses") > 0);
  check_same(here, analyze_elsewhere(dir, options));
}

TEST_CASE("analyzer::run_saved_passes::epoch-lifecycle's problems and syncs travel") {
  // Rank 0 puts after a fence, then fences with NOPRECEDE (rank 1 does not:
  // the members disagree) and posts an exposure epoch no start pairs with;
  // rank 1 unlocks what it never locked. The put's buffers also differ in
  // type (type-mismatch's RMA half, from the same passes).
  std::vector<smtrace::test::JsonRank> ranks(2);
  const char* create = R"({"call": "WIN_CREATE", "comm": 0, "window": 1, "winBase": "4096", "winSize": "64"})";
  ranks[0].events = {R"({"call": "INIT"})", create, R"({"call": "WIN_FENCE", "window": 1})",
                     R"({"call": "PUT", "window": 1, "peer": 1, "count": "1", "datatype": 7, "targetCount": "1",)"
                     R"( "targetDatatype": 14})",
                     R"({"call": "WIN_FENCE", "window": 1, "assertFlags": 8})",
                     R"({"call": "WIN_POST", "window": 1, "group": 2})", R"({"call": "WIN_WAIT", "window": 1})",
                     R"({"call": "FINALIZE"})"};
  ranks[0].comms = R"({"id": 2, "worldRanks": [1], "isGroup": true})";
  ranks[1].events = {R"({"call": "INIT"})", create, R"({"call": "WIN_FENCE", "window": 1})",
                     R"({"call": "WIN_FENCE", "window": 1})", R"({"call": "WIN_UNLOCK", "window": 1, "peer": 0})",
                     R"({"call": "FINALIZE"})"};
  const auto dir = smtrace::test::write_json_trace("saved-epochs", ranks);
  // noprecede, fence asserts, pscw pairs, unlock without lock.
  check_travels(dir, "epoch-lifecycle", 4);
  check_travels(dir, "type-mismatch", 1);
}

TEST_CASE("analyzer::run_saved_passes::the collective checks' records travel") {
  // MPI_COMM_WORLD: a Bcast with different roots, then an Alltoallv whose
  // counts differ (arrays), called from different lines (sites); a split
  // communicator of ranks 1 and 2 whose Barriers are reached through
  // different call paths (stacks).
  std::vector<smtrace::test::JsonRank> ranks(3);
  for (uint32_t r = 0; r < 3; ++r) {
    const std::string root = r == 2 ? "1" : "0";
    const std::string n = std::to_string(r + 1);
    ranks[r].events = {R"({"call": "INIT"})",
                       R"({"call": "BCAST", "comm": 0, "peer": )" + root + R"(, "count": "1", "datatype": 7})",
                       R"({"call": "ALLTOALLV", "comm": 0, "counts": [")" + n + R"(", "1", "1"], "datatypes": [7],)"
                       R"( "recvCounts": ["1", "1", "1"], "recvDatatypes": [7]})",
                       R"({"call": "COMM_SPLIT", "comm": 0, "newComm": 5, "color": 1})",
                       R"({"call": "BARRIER", "comm": 5, "stack": [)" + n + R"(]})", R"({"call": "FINALIZE"})"};
    ranks[r].comms = r == 0 ? R"({"id": 5, "worldRanks": [0], "parent": 0})"
                            : R"({"id": 5, "worldRanks": [1, 2], "parent": 0})";
  }
  const auto dir = smtrace::test::write_json_trace("saved-collectives", ranks);
  an::Options options;
  options.checks = {"collective-mismatch", "collective-misaligned"};
  options.alignment = an::Alignment::strict;
  const an::Result here = an::analyze(dir, options);
  CHECK(smtrace::test::count_kind(here, "collective-mismatch") >= 1);
  CHECK(smtrace::test::count_kind(here, "collective-misaligned") >= 1);
  check_travels(dir, "collective-mismatch", smtrace::test::count_kind(here, "collective-mismatch"));
  check_travels(dir, "collective-misaligned", smtrace::test::count_kind(here, "collective-misaligned"));
}

TEST_CASE("analyzer::run_saved_passes::abnormal-termination's last calls travel") {
  // Rank 0 calls MPI_Abort; rank 1 is stopped by SIGTERM inside a receive;
  // rank 2 leaves no end record after a send.
  std::vector<smtrace::test::JsonRank> ranks(3);
  ranks[0].events = {R"({"call": "INIT"})", R"({"call": "ABORT", "comm": 0, "count": "3"})"};
  ranks[0].end = R"({"kind": "ABORTED"})";
  ranks[1].events = {R"({"call": "INIT"})", R"({"call": "RECV", "comm": 0, "peer": 0, "tag": 0, "pending": true})"};
  ranks[1].end = R"({"kind": "SIGNAL", "signal": 15})";
  ranks[2].events = {R"({"call": "INIT"})", R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 0})"};
  ranks[2].end = "";
  check_travels(smtrace::test::write_json_trace("saved-ends", ranks), "abnormal-termination", 1);
}

TEST_CASE("analyzer::run_saved_passes::local-concurrency's conflicts travel and are filtered where finish() runs") {
  an::Options options;
  options.check_errors = an::CheckErrors::report;
  options.checks = {"local-concurrency"};
  auto same_both_ways = [&](const tf::Trace& trace, const char* name) {
    return count_both_ways(trace, name, options, "local-concurrency");
  };
  SUBCASE("a freed send: its buffer is free again after the reply (matching and happens-before)") {
    for (const bool reply_first : {true, false}) {
      CAPTURE(reply_first);
      smtrace::test::Builder b(2);
      b.p2p(Call::Isend, 0, 1, 0x1000, 9);
      b.add(Call::Request_free, 0).request = 9;
      if (reply_first) b.p2p(Call::Recv, 0, 1, 0x2000);
      b.access(Call::Store, 0, 0x1000, 4);
      if (!reply_first) b.p2p(Call::Recv, 0, 1, 0x2000);
      b.p2p(Call::Recv, 1, 0, 0x3000);
      b.p2p(Call::Send, 1, 0, 0x3000);
      for (uint32_t r = 0; r < 2; ++r) b.add(Call::Finalize, r);
      CHECK(same_both_ways(b.trace(), "saved-lc-freed") == (reply_first ? 0 : 1));
    }
  }
  SUBCASE("threads as lanes: accesses and lifetimes") {
    // Thread 1 receives (Irecv, Wait); thread 0 stores into the buffer
    // afterwards, synchronized with it by a mutex or not.
    for (const bool mutex : {false, true}) {
      CAPTURE(mutex);
      smtrace::test::Builder b(1);
      b.trace().ranks[0].header.thread_sync = tf::thread_sync::pthreads;
      auto on = [&](uint32_t thread, Call call) -> tf::Event& {
        tf::Event& e = b.add(call);
        e.thread = thread;
        return e;
      };
      on(0, Call::pthread_create).peer = 1;
      on(1, Call::thread_begin).peer = 0;
      b.buf(Call::Irecv, 0x5000, 1, smtrace::test::k_int, 1).thread = 1;
      b.wait(1).thread = 1;
      if (mutex) {
        on(1, Call::pthread_mutex_unlock).buf = 0x50;
        on(0, Call::pthread_mutex_lock).buf = 0x50;
      }
      b.access(Call::Store, 0, 0x5000, 4).thread = 0;
      on(1, Call::thread_end);
      on(0, Call::pthread_join).peer = 1;
      b.add(Call::Finalize);
      CHECK(same_both_ways(b.trace(), "saved-lc-lanes") == (mutex ? 0 : 1));
    }
  }
}

TEST_CASE("analyzer::run_saved_passes::rma-race's calls, accesses, windows and locks travel") {
  // What rma-race's finish() reads of a pass: RMA calls (whole events, with
  // their completions and lock epochs), loads and stores (strided ones too),
  // windows (created, dynamic, attached), the rank's own lock epochs, and the
  // buffers of MPI calls once it has a window. Each changes the findings'
  // text or the exemptions: a field lost on the way changes the result.
  constexpr uint64_t win = 0x10000, buf = 0x20000;
  an::Options options;
  options.check_errors = an::CheckErrors::report;
  options.checks = {"rma-race"};
  auto same_both_ways = [&](const tf::Trace& trace, const char* name) {
    return count_both_ways(trace, name, options, "rma-race");
  };
  SUBCASE("epochs, completions, own locks, MPI buffers") {
    for (const bool exclusive : {true, false}) {
      CAPTURE(exclusive);
      const tf::LockType lock = exclusive ? tf::LockType::exclusive : tf::LockType::shared;
      smtrace::test::Builder b(3);
      for (uint32_t r = 0; r < 3; ++r) b.win_create(r, 1, win, 256, r == 1 ? 4 : 1);
      b.add(Call::Win_create_dynamic, 2).window = 2;
      tf::Event& attach = b.add(Call::Win_attach, 2);
      attach.window = 2;
      attach.win_base = 0x40000;
      attach.win_size = 64;
      // Rank 0 stores, strided, into its own window under a lock on itself;
      // rank 1 puts there under a lock too: exclusive locks exclude each other.
      b.win_sync(Call::Win_lock, 0, 1, 0, lock);
      b.access(Call::Store, 0, win, 4, 4, 16);
      b.win_sync(Call::Win_unlock, 0, 1, 0);
      b.access(Call::Store, 0, win + 4, 4);  // after the unlock: no lock covers it
      b.win_sync(Call::Win_lock, 1, 1, 0, lock);
      b.rma(Call::Put, 1, 1, 0, buf, 4, 0);
      b.win_sync(Call::Win_unlock, 1, 1, 0);
      // Rank 2, in a lock_all epoch: an Rput completed by its Wait (the store
      // after it is fine), an Accumulate into rank 1, a Get from rank 0 left
      // to the unlock, a Put into its own dynamic window's attached memory.
      b.win_sync(Call::Win_lock_all, 2, 1);
      tf::Event& rput = b.rma(Call::Rput, 2, 1, 1, buf, 2, 2);
      rput.request = 9;
      b.wait(9, 2);
      b.access(Call::Store, 2, buf, 4);
      b.rma(Call::Accumulate, 2, 1, 1, buf + 64, 1, 4).op = 3;
      b.rma(Call::Get, 2, 1, 0, buf + 128, 8, 0);
      b.access(Call::Load, 2, buf + 128, 4, 2, 8);
      b.win_sync(Call::Win_lock_all, 2, 2);
      b.rma(Call::Put, 2, 2, 2, buf + 192, 1, 0x40000);
      b.access(Call::Store, 2, 0x40000, 4);  // races with the Put: the displacement is an address
      b.win_sync(Call::Win_unlock_all, 2, 2);
      b.win_sync(Call::Win_unlock_all, 2, 1);
      // Rank 1 loads its window where the Rput lands, and receives into the
      // Accumulate's target bytes; rank 0 sends them.
      b.access(Call::Load, 1, win + 8, 4);
      b.p2p(Call::Irecv, 1, 0, win + 16, 5);
      b.p2p(Call::Send, 0, 1, buf);
      for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
      b.wait(5, 1);
      for (uint32_t r = 0; r < 3; ++r) b.win_sync(Call::Win_free, r, 1);
      for (uint32_t r = 0; r < 3; ++r) b.add(Call::Finalize, r);
      CHECK(same_both_ways(b.trace(), "saved-rma") == (exclusive ? 6 : 9));
    }
  }
  SUBCASE("compact calls: result and compare buffers, derived types, atomic kinds, no target") {
    // An RMA call travels as what finish() reads of it (RmaOp, RmaBuffer in
    // rma_race.cpp), not as its event: its seq, site, window, target, op,
    // lock epoch and completions, and each buffer's address or
    // displacement, count, datatype, side, access and lifetime. Every one of
    // them shows in the findings below (the bytes, the call names and sites,
    // the completions, which pairs are atomic).
    smtrace::test::Builder b(3);
    for (uint32_t r = 0; r < 3; ++r) b.win_create(r, 1, win, 256, r == 0 ? 4 : 1);
    b.vector_type(100, 4, 2, 0, 1);
    for (uint32_t r = 1; r < 3; ++r) b.win_sync(Call::Win_lock_all, r, 1);
    // Rank 1 puts a vector of 4 ints 2 apart at displacement 2 (bytes 8,
    // 16, 24 and 32 of rank 0's window), rank 2 one int at displacement 4
    // (byte 16): one overlap, 4 bytes.
    b.rma(Call::Put, 1, 1, 0, buf, 1, 2, 100).site = 11;
    b.rma(Call::Put, 2, 1, 0, buf, 1, 4).site = 12;
    // Rank 2 again, the same buffers (kept once, RmaOp::first shared):
    // against its first Put and rank 1's.
    b.rma(Call::Put, 2, 1, 0, buf, 1, 4).site = 22;
    // Compare-and-swap against Fetch_and_op (other ops: not atomic) and
    // Get_accumulate with MPI_NO_OP (atomic with both) at displacement 16.
    tf::Event& cas = b.rma(Call::Compare_and_swap, 1, 1, 0, buf + 32, 1, 16);
    cas.compare_buf = buf + 40;
    cas.result_buf = buf + 48;
    cas.result_count = 1;
    cas.result_datatype = smtrace::test::k_int;
    cas.site = 13;
    tf::Event& fop = b.rma(Call::Fetch_and_op, 2, 1, 0, buf + 32, 1, 16);
    fop.result_buf = buf + 48;
    fop.result_count = 1;
    fop.result_datatype = smtrace::test::k_int;
    fop.op = 3;
    fop.site = 14;
    tf::Event& gacc = b.rma(Call::Get_accumulate, 2, 1, 0, buf + 64, 1, 16);
    gacc.result_buf = buf + 72;
    gacc.result_count = 1;
    gacc.result_datatype = smtrace::test::k_int;
    gacc.op = smtrace::format::k_op_no_op;
    gacc.site = 15;
    // Rank 1 reads the result before the flush completes the swap; a Get of
    // rank 2 from rank 0, completed locally by a flush_local, then a store
    // into its origin buffer (fine) and one into the target's bytes (a race
    // only while the Get is not done at the origin).
    b.access(Call::Load, 1, buf + 48, 4).site = 16;
    b.win_sync(Call::Win_flush_all, 1, 1);
    b.rma(Call::Get, 2, 1, 0, buf + 128, 2, 40).site = 17;
    b.win_sync(Call::Win_flush_local, 2, 1, 0);
    b.access(Call::Store, 2, buf + 128, 8).site = 18;
    b.access(Call::Store, 0, win + 160, 4).site = 19;
    // A Put without a target rank (a damaged record): no target access.
    tf::Event& lost = b.rma(Call::Put, 2, 1, 0, buf + 192, 1, 0);
    lost.peer.reset();
    lost.site = 20;
    b.access(Call::Store, 2, buf + 192, 4).site = 21;
    for (uint32_t r = 1; r < 3; ++r) b.win_sync(Call::Win_unlock_all, r, 1);
    for (uint32_t r = 0; r < 3; ++r) b.barrier(r);
    for (uint32_t r = 0; r < 3; ++r) b.win_sync(Call::Win_free, r, 1);
    for (uint32_t r = 0; r < 3; ++r) b.add(Call::Finalize, r);
    // The three Puts at byte 16 (three pairs), the swap's result and the
    // load, the swap and the Fetch_and_op, the store and the Get's target,
    // the store and the untargeted Put's origin buffer.
    CHECK(same_both_ways(b.trace(), "saved-rma-compact") == 7);
  }
  SUBCASE("a buffer completed 2^32 events after its call") {
    // A buffer's completion is kept as a distance from its call, and apart
    // (far_done) where the distance does not fit 32 bits.
    for (const uint64_t gap : {uint64_t{0}, uint64_t{1} << 32}) {
      CAPTURE(gap);
      smtrace::test::Builder b(2);
      for (uint32_t r = 0; r < 2; ++r) b.win_create(r, 1, win, 256);
      b.win_sync(Call::Win_lock_all, 0, 1);
      b.rma(Call::Put, 0, 1, 1, buf, 1, 4);
      b.p2p(Call::Irecv, 1, 0, win + 4, 5);
      const std::size_t from = b.trace().ranks[1].events.size();
      b.wait(5, 1);
      b.access(Call::Store, 1, win + 4, 4);
      b.win_sync(Call::Win_unlock_all, 0, 1);
      b.p2p(Call::Send, 0, 1, buf);
      for (uint32_t r = 0; r < 2; ++r) b.win_sync(Call::Win_free, r, 1);
      for (uint32_t r = 0; r < 2; ++r) b.add(Call::Finalize, r);
      auto& events = b.trace().ranks[1].events;
      for (std::size_t i = from; i < events.size(); ++i) events[i].seq += gap;
      // The Put against the receive's buffer (whose note names the Wait);
      // the store comes after the Wait, which the Send after the unlock
      // orders, but not across the gap (the baseline, 5f35abb, says so too).
      CHECK(same_both_ways(b.trace(), "saved-rma-far") == (gap == 0 ? 1 : 2));
    }
  }
  SUBCASE("threads as lanes: a lock covers its own thread's stores") {
    // Rank 0's thread 1 stores into rank 0's window under an exclusive lock
    // it took on it (covered), or thread 0 took it (not covered); rank 1
    // puts there under an exclusive lock.
    for (const uint32_t locker : {1u, 0u}) {
      CAPTURE(locker);
      smtrace::test::Builder b(2);
      b.trace().ranks[0].header.thread_sync = tf::thread_sync::pthreads;
      for (uint32_t r = 0; r < 2; ++r) b.win_create(r, 1, win, 256);
      auto on = [&](uint32_t thread, Call call) -> tf::Event& {
        tf::Event& e = b.add(call, 0);
        e.thread = thread;
        return e;
      };
      on(0, Call::pthread_create).peer = 1;
      on(1, Call::thread_begin).peer = 0;
      tf::Event& lock = b.win_sync(Call::Win_lock, 0, 1, 0, tf::LockType::exclusive);
      lock.thread = locker;
      b.access(Call::Store, 0, win + 4, 4, 3, 8).thread = 1;
      b.access(Call::Store, 0, win + 4, 4).thread = 1;
      b.win_sync(Call::Win_unlock, 0, 1, 0).thread = locker;
      on(1, Call::thread_end);
      on(0, Call::pthread_join).peer = 1;
      b.win_sync(Call::Win_lock, 1, 1, 0, tf::LockType::exclusive);
      b.rma(Call::Put, 1, 1, 0, buf, 4, 0);
      b.win_sync(Call::Win_unlock, 1, 1, 0);
      for (uint32_t r = 0; r < 2; ++r) b.barrier(r);
      for (uint32_t r = 0; r < 2; ++r) b.win_sync(Call::Win_free, r, 1);
      for (uint32_t r = 0; r < 2; ++r) b.add(Call::Finalize, r);
      CHECK(same_both_ways(b.trace(), "saved-rma-lanes") == (locker == 1 ? 0 : 2));  // two stores, two call sites
    }
  }
}

TEST_SUITE_END();

namespace {

// The traces of the replay's round trips: every synthetic generator (halo
// also with its two bugs: a rank stopped in MPI_Waitall, a mismatched
// collective) on a few ranks, written under `root`; and the archived traces.
std::vector<std::filesystem::path> replay_traces(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> dirs;
  for (const std::string& name : tf::synth_generators()) {
    for (tf::SynthBug bug : {tf::SynthBug::none, tf::SynthBug::deadlock, tf::SynthBug::collective_mismatch}) {
      if (bug != tf::SynthBug::none && name != "halo") continue;
      tf::SynthOptions options;
      options.ranks = name == "fig6" ? 3 : 5;
      options.events = 600;
      options.iterations = name == "senders" || name == "leader" ? 0 : 4;
      options.bug = bug;
      options.threads = 1;
      const std::filesystem::path dir = root / (name + "-" + std::string(tf::synth_bug_name(bug)));
      tf::write_synthetic_trace(name, dir, options);
      dirs.push_back(dir);
    }
  }
  const std::filesystem::path archived = std::filesystem::path(SMTRACE_SOURCE_DIR) / "traces";
  for (const auto& entry : std::filesystem::directory_iterator(archived)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "rank-0.smt")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

TEST_CASE("analyzer::Replay::save_rank and load_rank give the rank's replay state back") {
  const std::filesystem::path root = smtrace::test::scratch_dir("replay-saved-state");
  std::size_t ranks = 0, ops = 0;
  for (const std::filesystem::path& dir : replay_traces(root)) {
    const tf::TraceFiles files = tf::find_trace_files(dir);
    for (uint32_t r : files.present) {
      CAPTURE(files.rank_files[r].string());
      const tf::RankTrace trace = tf::read_rank_file(files.rank_files[r]);
      an::RankData data;
      data.rank = r;
      data.file = files.rank_files[r].string();
      data.header = trace.header;
      an::Replay made;
      made.keep_payloads_aside_from(1);  // payloads from the second on kept aside: that path travels too
      {
        const std::unique_ptr<an::RankPass> pass = made.rank_pass(data);
        for (const tf::Event& e : trace.events) pass->event(e);
        pass->end();
      }
      an::WireWriter out;
      made.save_rank(r, out);
      an::Replay loaded;
      an::WireReader in(out.bytes());
      loaded.load_rank(r, in);
      CHECK(in.at_end());
      an::WireWriter again;
      loaded.save_rank(r, again);
      CHECK(again.bytes() == out.bytes());
      REQUIRE(loaded.p2p(r).size() == made.p2p(r).size());
      for (uint32_t i = 0; i < made.p2p(r).size(); ++i) {
        CHECK(loaded.payload({r, i}) == made.payload({r, i}));
        CHECK(loaded.p2p(r)[i].seq == made.p2p(r)[i].seq);
        CHECK(loaded.p2p(r)[i].done_seq() == made.p2p(r)[i].done_seq());
      }
      CHECK(loaded.collectives(r).size() == made.collectives(r).size());
      CHECK(loaded.outstanding(r).size() == made.outstanding(r).size());
      CHECK(loaded.rma(r).size() == made.rma(r).size());
      CHECK(loaded.blocked(r).has_value() == made.blocked(r).has_value());
      CHECK(loaded.threads(r).lanes.size() == made.threads(r).lanes.size());
      CHECK(loaded.threads(r).events.size() == made.threads(r).events.size());
      ++ranks;
      ops += made.p2p(r).size();
    }
  }
  CHECK(ranks > 50);
  CHECK(ops > 300);
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

namespace {

// Analyze every trace of replay_traces() here and with its ranks read
// elsewhere under `options`: the same results, and the readers keep the
// events (no pass runs here: only the calls that create communicators and
// windows come). Return the sum of the stat `stat` over the traces.
uint64_t travels_alike(const std::string& name, const an::Options& options, const std::string& stat) {
  const std::filesystem::path root = smtrace::test::scratch_dir(name);
  std::size_t traces = 0;
  uint64_t sum = 0;
  Tally tally;
  for (const std::filesystem::path& dir : replay_traces(root)) {
    CAPTURE(dir.string());
    const an::Result here = an::analyze(dir, options);
    const an::Result elsewhere = analyze_elsewhere(dir, options, &tally);
    check_same(here, elsewhere);
    CHECK(problem_texts(here) == problem_texts(elsewhere));
    if (auto it = here.stats.find(stat); it != here.stats.end()) sum += it->second;
    ++traces;
  }
  CHECK(traces > 20);
  CHECK(tally.events > 1000);
  CHECK(tally.passed_on * 20 < tally.events);
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return sum;
}

}  // namespace

TEST_CASE("analyzer::run_saved_passes::the replay's state travels: same matches, findings and happens-before") {
  an::Options options;
  options.threads = 2;
  options.happens_before = true;
  options.check_errors = an::CheckErrors::report;
  CHECK(travels_alike("replay-saved-analysis", options, "matches") > 100);
}

TEST_CASE("analyzer::run_saved_passes::the SMT checks' collection travels: same findings, events left on the readers") {
  an::Options options;
  options.threads = 2;
  options.check_errors = an::CheckErrors::report;
  smtrace::smt::CheckSettings settings;
  settings.smt_timeout_s = 120;  // far from the wall: both sides decide every question
  options.extra_checks = smtrace::smt::check_factories(settings);
  CHECK(travels_alike("smt-saved-analysis", options, "matches") > 100);
}

namespace {

// Analyze `dir` here and with its ranks read elsewhere under `options`:
// the same result or the same error. Return the events the second read and
// passed on (EventsRead::delivered).
an::EventsRead same_or_same_error(const std::filesystem::path& dir, const an::Options& options) {
  std::optional<an::Result> here, elsewhere;
  std::string here_error, elsewhere_error;
  Tally tally;
  try {
    here = an::analyze(dir, options);
  } catch (const std::exception& e) {
    here_error = e.what();
  }
  try {
    elsewhere = analyze_elsewhere(dir, options, &tally);
  } catch (const std::exception& e) {
    elsewhere_error = e.what();
  }
  CHECK(here_error == elsewhere_error);
  REQUIRE(here.has_value() == elsewhere.has_value());
  if (here) {
    check_same(*here, *elsewhere);
    CHECK(problem_texts(*here) == problem_texts(*elsewhere));
    CHECK(here->complete == elsewhere->complete);
  }
  return {tally.events, 0, tally.passed_on};
}

}  // namespace

TEST_CASE("analyzer::run_saved_passes::damaged rank files: the replay's state travels as far as they were read") {
  // tests/fuzz's check regressions, each the one rank file of a trace: the
  // same result, or the same error, either way.
  namespace fs = std::filesystem;
  const fs::path inputs = fs::path(SMTRACE_SOURCE_DIR) / "tests/fuzz/regressions/check";
  const fs::path trace = smtrace::test::scratch_dir("replay-saved-fuzz");
  an::Options options;
  options.threads = 1;
  options.happens_before = true;
  options.check_errors = an::CheckErrors::report;
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(inputs)) {
    CAPTURE(entry.path().string());
    fs::remove_all(trace);
    fs::create_directories(trace);
    fs::copy_file(entry.path(), trace / "rank-0.smt");
    same_or_same_error(trace, options);
    ++n;
  }
  CHECK(n > 0);
  std::error_code ec;
  fs::remove_all(trace, ec);
}

namespace {

// A check whose passes do not travel (as the SMT checks' Collector): its pass
// runs where finish() runs, on the events of Isend and Comm_dup only, and
// finish() reports per rank what its pass saw and what RankData counted.
class StaysHere final : public an::Check {
 public:
  std::string_view name() const override { return "stays-here"; }
  an::Severity severity() const override { return an::Severity::warning; }
  std::string_view description() const override { return "a pass that does not travel"; }
  std::unique_ptr<an::RankPass> rank_pass(const an::RankData&) override { return std::make_unique<Pass>(); }
  void finish(const an::Context& context, std::vector<std::unique_ptr<an::RankPass>>& passes,
              std::vector<an::Finding>& out) override {
    for (uint32_t r = 0; r < passes.size(); ++r) {
      if (!passes[r]) continue;
      const auto& pass = dynamic_cast<const Pass&>(*passes[r]);
      an::Finding f;
      f.kind = "stays-here";
      f.severity = an::Severity::warning;
      std::string seqs;
      for (uint64_t seq : pass.seqs) seqs += fmt::format("{} ", seq);
      f.message = fmt::format("rank {}: seqs {}of {} events up to seq {}", r, seqs, context.rank(r).events,
                              context.rank(r).last_seq);
      out.push_back(std::move(f));
    }
  }

 private:
  struct Pass final : an::RankPass {
    void event(const tf::Event& e) override { seqs.push_back(e.seq); }
    an::EventSet wants() const override {
      return an::EventSet::of([](const tf::CallTraits& t) { return &t == &tf::call_traits(Call::Isend); }) |
             an::EventSet::of([](const tf::CallTraits& t) { return &t == &tf::call_traits(Call::Comm_dup); });
    }
    std::vector<uint64_t> seqs;
  };
};

// A rank file whose reader throws before its event number `after` (0: the
// first) on rank `rank`, as a read error would.
class FailingFile final : public an::RankSource {
 public:
  FailingFile(const std::filesystem::path& file, uint64_t after) : m_file(an::read_rank_file_source(file)), m_after(after) {}
  std::optional<tf::RankHeader> header(const Callbacks& callbacks) override { return m_file->header(callbacks); }
  void read_all(const Callbacks& callbacks) override {
    Callbacks cb = callbacks;
    cb.event = [this, to = callbacks.event](const tf::Event& e) {
      if (m_read++ == m_after) throw std::runtime_error("the disk went away");
      if (to) to(e);
    };
    m_file->read_all(cb);
  }

 private:
  std::unique_ptr<an::RankSource> m_file;
  uint64_t m_after;
  uint64_t m_read = 0;
};

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::run_saved_passes::events left where the rank is read: the same result") {
  const std::filesystem::path dir = smtrace::test::scratch_dir("left-on-readers");
  tf::write_trace(leaky_trace(), dir);
  an::Options options;
  options.threads = 2;
  options.check_errors = an::CheckErrors::report;
  SUBCASE("no pass here: only the calls that create communicators come, and the counts") {
    const an::EventsRead tally = same_or_same_error(dir, options);
    CHECK(tally.events == 10);
    CHECK(tally.delivered == 2);  // each rank's Comm_dup
  }
  SUBCASE("a check whose passes do not travel: every event comes, in order") {
    options.extra_checks.push_back([] { return std::make_unique<StaysHere>(); });
    const an::Result here = an::analyze(dir, options);
    CHECK(smtrace::test::count_kind(here, "stays-here") == 2);
    const an::EventsRead tally = same_or_same_error(dir, options);
    CHECK(tally.events == 10);
    CHECK(tally.delivered == 10);
    SUBCASE("and when --checks leaves it out, it does not count") {
      options.checks = {"request-leak", "deadlock"};
      CHECK(same_or_same_error(dir, options).delivered == 2);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("analyzer::run_saved_passes::events left where the rank is read: damaged traces") {
  // Repeated and backward seqs around the calls that create communicators
  // (the comm table orders its creations by seq), a rank stopped inside a
  // call, a missing rank file, rank files cut short at many places.
  smtrace::test::Builder b(3);
  for (uint32_t r = 0; r < 3; ++r) {
    tf::Event& dup = b.add(Call::Comm_dup, r);
    dup.comm = 0;
    dup.new_comm = 5;
    tf::Event& split = b.add(Call::Comm_split, r);
    split.comm = 5;
    split.new_comm = 6;
    split.color = 0;
    b.barrier(r);
  }
  for (uint32_t r = 0; r < 3; ++r) {
    tf::Event& isend = b.add(Call::Isend, r);
    isend.comm = 6;
    isend.peer = static_cast<int32_t>((r + 1) % 3);
    isend.tag = 1;
    isend.count = 1;
    isend.datatype = smtrace::test::k_int;
    isend.request = 0x10;
    tf::Event& recv = b.add(Call::Recv, r);
    recv.comm = 6;
    recv.peer = static_cast<int32_t>((r + 2) % 3);
    recv.tag = 1;
    recv.count = 1;
    recv.datatype = smtrace::test::k_int;
    recv.status.source = recv.peer;
    recv.status.tag = 1;
    tf::Event& wait = b.add(Call::Wait, r);
    wait.requests = {0x10};
    wait.completed = {{0, 0x10, {}}};
  }
  for (uint32_t r = 0; r < 3; ++r) b.add(Call::Finalize, r);
  tf::Trace trace = b.trace();
  for (tf::RankTrace& rank : trace.ranks)
    for (auto& def : std::vector<uint32_t>{5, 6}) {
      tf::CommDef c;
      c.id = def;
      c.world_ranks = {0, 1, 2};
      rank.comms.emplace(def, c);
    }
  auto& r1 = trace.ranks[1].events;
  r1[2].seq = r1[1].seq;      // Comm_split repeats Comm_dup's seq
  r1[4].seq = r1[1].seq - 1;  // the Isend goes back before it
  auto& r2 = trace.ranks[2].events;
  std::swap(r2[1].seq, r2[2].seq);  // Comm_dup after Comm_split by seq
  r2.back().pending = true;         // rank 2 stopped inside MPI_Finalize
  trace.ranks[2].end.reset();

  an::Options options;
  options.threads = 1;
  options.check_errors = an::CheckErrors::report;
  options.happens_before = true;
  const std::filesystem::path dir = smtrace::test::scratch_dir("left-on-readers-damaged");
  tf::write_trace(trace, dir);
  SUBCASE("repeated and backward seqs, a pending event") {
    const an::EventsRead tally = same_or_same_error(dir, options);
    CHECK(tally.delivered == 6);
    SUBCASE("with a pass here") {
      options.extra_checks.push_back([] { return std::make_unique<StaysHere>(); });
      CHECK(same_or_same_error(dir, options).delivered == tally.events);
    }
  }
  SUBCASE("a reader that throws: the same message, with the events read before") {
    for (uint64_t after : {0, 1, 2, 5, 7}) {
      CAPTURE(after);
      options.rank_source = [after](uint32_t rank, const std::filesystem::path& file) -> std::unique_ptr<an::RankSource> {
        if (rank == 1) return std::make_unique<FailingFile>(file, after);
        return an::read_rank_file_source(file);
      };
      const std::string message =
          fmt::format("rank 1: loading stopped after {} events: the disk went away", after);
      CHECK_THROWS_WITH_AS(an::analyze(dir, options), doctest::Contains(message.c_str()), std::runtime_error);
      same_or_same_error(dir, options);
    }
  }
  SUBCASE("a missing rank") {
    std::filesystem::remove(dir / "rank-1.smt");
    same_or_same_error(dir, options);
  }
  SUBCASE("rank files cut short") {
    const std::filesystem::path file = dir / "rank-1.smt";
    const std::string whole = [&] {
      std::ifstream in(file, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    REQUIRE(whole.size() > 64);
    for (std::size_t cut = 0; cut < whole.size(); cut += 1 + whole.size() / 40) {
      CAPTURE(cut);
      std::ofstream(file, std::ios::binary | std::ios::trunc).write(whole.data(), static_cast<std::streamsize>(cut));
      same_or_same_error(dir, options);
      options.extra_checks.push_back([] { return std::make_unique<StaysHere>(); });
      same_or_same_error(dir, options);
      options.extra_checks.clear();
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_SUITE_END();
