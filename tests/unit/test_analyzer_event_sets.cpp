// The events each check's rank pass names (RankPass::wants): the Sequencer
// hands a pass only those, so a pass that names too few would miss events
// it reacts to. Every check's pass runs here on every call of calls.def
// (and a value past the table), with and without its set, on several
// headers (thread levels, threads as lanes); what it saves for finish()
// (Check::save_pass) and where it threw must be the same both ways.
#include <doctest/doctest.h>

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analyze.hpp"
#include "analyzer/check.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"
#include "tests/unit/analyzer_json_trace.hpp"

namespace {

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using tf::Call;
using tf::RequestEffect;

constexpr uint32_t k_int = 7;

// Every call of the table, in number order, and one value past it.
std::vector<Call> every_call() {
  std::vector<Call> out;
  for (std::size_t i = 1; i + 1 < an::EventSet::k_slots; ++i) {
    const auto call = static_cast<Call>(i);
    if (tf::call_known(call)) out.push_back(call);
  }
  out.push_back(static_cast<Call>(an::EventSet::k_slots + 100));
  return out;
}

// One rank's events: rounds over every call with arguments that name
// buffers that overlap, requests, a window, a lock, a CUDA stream: every
// call on thread 0; every call on thread 1 leaving its requests and
// handles open (no completion or free), so that the calls after them meet
// them; every call
// backwards, as folded polls, and every call again, with counts that do
// not fit each other (the origin's larger, then smaller); every call
// failed; every call pending. `last`: instead
// of the rounds after the first, the call `last` and then `last` pending.
class Events {
 public:
  std::vector<tf::Event> make(std::optional<Call> last = std::nullopt) {
    const std::vector<Call> calls = every_call();
    for (Call c : calls) add(c, 0, 0, false, 0);
    if (last) {
      add(*last, 1, 0, false, 0);
      add(*last, 0, 0, true, 0);
      return std::move(m_out);
    }
    for (Call c : calls)
      if (!completes(tf::call_traits(c))) add(c, 1, 0, false, 0);
    m_counts = Counts::origin_larger;
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) add(*it, 1, 0, false, 2);
    m_counts = Counts::origin_smaller;
    for (Call c : calls) add(c, 0, 0, false, 0);
    m_counts = Counts::same;
    for (Call c : calls) add(c, 0, 5, false, 0);
    for (Call c : calls) add(c, 1, 0, true, 0);
    return std::move(m_out);
  }

 private:
  // Return true for the calls that complete requests or free handles.
  static bool completes(const tf::CallTraits& t) {
    using R = tf::Resource;
    return tf::completes_requests(t.request) || t.resource == R::comm_free || t.resource == R::group_free ||
           t.resource == R::type_free || t.resource == R::op_free || t.resource == R::win_free ||
           t.resource == R::win_detach;
  }

  void add(Call call, uint32_t thread, int32_t rc, bool pending, uint32_t repeat) {
    const tf::CallTraits& t = tf::call_traits(call);
    tf::Event e;
    e.seq = m_out.size() + 1;
    e.call = call;
    e.thread = thread;
    e.t_start = static_cast<int64_t>(100 * e.seq);
    e.duration = 250;  // overlaps the next two calls
    e.pending = pending;
    e.site = static_cast<uint32_t>(e.seq);
    e.rc = rc;
    e.repeat = repeat;
    e.comm = tf::k_comm_world;
    e.peer = 1;
    e.tag = 5;
    e.buf = 0x10000;
    e.count = 4;
    e.datatype = k_int;
    e.recv_buf = 0x10008;  // overlaps buf
    e.recv_count = 4;
    e.recv_datatype = k_int;
    e.counts = e.recv_counts = {2, 2};
    e.displs = e.recv_displs = {0, 2};
    e.datatypes = e.recv_datatypes = {k_int, k_int};
    e.recv_peer = 1;
    e.recv_tag = 5;
    e.op = 1;
    e.flag = true;
    e.new_comm = 5;
    e.group = 6;
    e.new_datatype = tf::k_first_derived_id + 1;
    e.message = 77;
    e.window = 1;
    e.win_base = 0x10000;
    e.win_size = 4096;
    e.disp_unit = 1;
    e.target_count = 4;
    e.target_datatype = k_int;
    e.result_buf = 0x10010;
    e.result_count = 4;
    e.result_datatype = k_int;
    e.compare_buf = 0x10004;
    e.lock_type = tf::LockType::exclusive;
    e.size = 8;
    e.stride = 16;
    e.stream = 3;
    e.cuda_event = 1;
    e.kernel = 1;
    e.args = {tf::KernelArg{0, 0x10000, 64}};
    if (m_counts != Counts::same) {
      e.count = m_counts == Counts::origin_larger ? 9 : 1;
      e.recv_count = e.target_count = e.result_count = m_counts == Counts::origin_larger ? 1 : 9;
    }
    switch (t.request) {
      case RequestEffect::create:
        e.request = ++m_next_request;
        m_active.push_back(e.request);
        break;
      case RequestEffect::persistent:
        e.request = ++m_next_request;
        m_persistent.push_back(e.request);
        break;
      case RequestEffect::start:
        e.request = m_persistent.empty() ? 0 : m_persistent.front();
        e.requests = m_persistent;
        m_active.insert(m_active.end(), m_persistent.begin(), m_persistent.end());
        break;
      case RequestEffect::complete_all: case RequestEffect::complete_any: case RequestEffect::complete_some:
        e.requests = m_active;
        for (std::size_t i = 0; i < m_active.size(); ++i) {
          tf::CompletedRequest done;
          done.index = static_cast<uint32_t>(i);
          done.request = m_active[i];
          e.completed.push_back(done);
        }
        if (!pending && rc == 0) m_active.clear();
        break;
      case RequestEffect::free: case RequestEffect::cancel: case RequestEffect::query:
        e.request = m_active.empty() ? (m_persistent.empty() ? 0 : m_persistent.back()) : m_active.back();
        break;
      case RequestEffect::none: break;
    }
    m_out.push_back(std::move(e));
  }

  std::vector<tf::Event> m_out;
  enum class Counts : uint8_t { same, origin_larger, origin_smaller };
  Counts m_counts = Counts::same;
  uint64_t m_next_request = 1000;
  std::vector<uint64_t> m_active, m_persistent;
};

an::RankData rank_data(int32_t thread_level, uint32_t thread_sync) {
  an::RankData data;
  data.rank = 0;
  data.present = true;
  data.header.rank = 0;
  data.header.world_size = 2;
  data.header.thread_level = thread_level;
  data.header.thread_sync = thread_sync;
  data.header.tracer_version = "test";
  data.end = tf::Termination{};
  data.end->kind = tf::TerminationKind::finalized;
  for (uint32_t id : {tf::k_comm_world, tf::k_comm_self}) {
    tf::CommDef c;
    c.id = id;
    c.world_ranks = id == tf::k_comm_world ? std::vector<uint32_t>{0, 1} : std::vector<uint32_t>{0};
    data.comms.emplace(id, c);
  }
  return data;
}

// What `check`'s pass for `data` saves after `events` (only those its
// wants() holds when `filtered`), and where it threw, if it did.
std::string run_pass(an::Check& check, const an::RankData& data, const std::vector<tf::Event>& events,
                     bool filtered) {
  std::unique_ptr<an::RankPass> pass = check.rank_pass(data);
  if (!pass) return "no pass";
  const an::EventSet wants = filtered ? pass->wants() : an::EventSet::every();
  std::string threw;
  for (const tf::Event& e : events) {
    if (!wants.has(e.call)) continue;
    try {
      pass->event(e);
    } catch (const std::exception& error) {
      threw = "threw at " + std::to_string(e.seq) + ": " + error.what();
      break;
    }
  }
  if (threw.empty()) {
    try {
      pass->end();
    } catch (const std::exception& error) {
      threw = std::string("threw at the end: ") + error.what();
    }
  }
  an::WireWriter out;
  if (threw.empty()) check.save_pass(*pass, out);
  return threw + out.bytes();
}

}  // namespace

TEST_CASE("analyzer::EventSet::a set is read from the call table's columns") {
  const an::EventSet collectives =
      an::EventSet::of([](const tf::CallTraits& t) { return t.role == tf::Role::collective; });
  CHECK(collectives.has(Call::Bcast));
  CHECK(collectives.has(Call::Ibarrier));
  CHECK_FALSE(collectives.has(Call::Send));
  CHECK_FALSE(collectives.has(static_cast<Call>(60000)));  // past the table: the row that says nothing
  const an::EventSet unknown = an::EventSet::of([](const tf::CallTraits& t) { return t.family == tf::Family::none; });
  CHECK(unknown.has(static_cast<Call>(60000)));
  CHECK(unknown.has(Call::unspecified));
  CHECK_FALSE(unknown.has(Call::Send));
  CHECK(an::EventSet::every().all());
  CHECK(an::EventSet::every().has(static_cast<Call>(60000)));
  CHECK_FALSE(an::EventSet::none().has(Call::Init));
  CHECK((collectives | unknown).has(Call::Bcast));
  CHECK((collectives | unknown).has(static_cast<Call>(60000)));
}

// The headers the passes are run under: thread levels single to multiple,
// threads as lanes or not.
std::vector<an::RankData> headers() {
  std::vector<an::RankData> out;
  for (int32_t level : {0, 1, 2, 3})
    for (uint32_t sync : {0u, 1u}) out.push_back(rank_data(level, sync));
  return out;
}

TEST_CASE("analyzer::EventSet::every check's pass gets every event it reacts to") {
  const std::vector<tf::Event> events = Events().make();
  for (const auto& check : an::all_checks()) {
    CAPTURE(check->name());
    bool reacted = false;
    for (const an::RankData& data : headers()) {
      CAPTURE(data.header.thread_level);
      CAPTURE(data.header.thread_sync);
      if (!check->rank_pass(data)) continue;
      // The comparison reads what finish() reads: the saved pass.
      REQUIRE(check->saves_passes());
      const std::string all = run_pass(*check, data, events, false);
      const bool same = run_pass(*check, data, events, true) == all;
      CHECK(same);
      reacted = reacted || all != run_pass(*check, data, {}, false);
    }
    // The events make every pass react (or the comparison proves little).
    if (check->rank_pass(rank_data(0, 0))) CHECK(reacted);
  }
}

// Passes that keep the last call (abnormal-termination) see each call last,
// returned and pending.
TEST_CASE("analyzer::EventSet::every check's pass gets every call as the rank's last") {
  const std::vector<an::RankData> datas = headers();
  for (Call last : every_call()) {
    CAPTURE(last);
    const std::vector<tf::Event> events = Events().make(last);
    for (const auto& check : an::all_checks()) {
      CAPTURE(check->name());
      for (const an::RankData& data : datas) {
        CAPTURE(data.header.thread_level);
        CAPTURE(data.header.thread_sync);
        if (!check->rank_pass(data)) continue;
        const bool same = run_pass(*check, data, events, true) == run_pass(*check, data, events, false);
        CHECK(same);
      }
    }
  }
}

namespace {

// Checks whose passes record the seqs they are given, per rank, and want:
// "collectives" the collective calls, "env" Init and Finalize, "nothing2"
// nothing on a world of 2 ranks (read from the header), every event
// elsewhere, "every" every event; "thrower" wants collectives and throws at
// rank 0's second.
std::mutex g_got_mutex;
std::map<std::pair<std::string, uint32_t>, std::vector<uint64_t>> g_got;
class Recorder final : public an::Check {
 public:
  explicit Recorder(std::string name) : m_name(std::move(name)) {}
  std::string_view name() const override { return m_name; }
  an::Severity severity() const override { return an::Severity::error; }
  std::string_view description() const override { return "records for the test"; }
  std::unique_ptr<an::RankPass> rank_pass(const an::RankData& data) override {
    struct Pass final : an::RankPass {
      Pass(std::string n, const an::RankData& d) : name(std::move(n)), data(d) {}
      std::string name;
      const an::RankData& data;
      uint32_t seen = 0;
      void event(const tf::Event& e) override {
        {
          std::lock_guard lock(g_got_mutex);
          g_got[{name, data.rank}].push_back(e.seq);
        }
        if (name == "thrower" && data.rank == 0 && ++seen == 2) throw std::logic_error("broken");
      }
      an::EventSet wants() const override {
        if (name == "collectives" || name == "thrower")
          return an::EventSet::of([](const tf::CallTraits& t) { return t.role == tf::Role::collective; });
        if (name == "env") return an::EventSet::of([](const tf::CallTraits& t) { return t.role == tf::Role::env; });
        if (name == "nothing2" && data.header.world_size == 2) return an::EventSet::none();
        return an::EventSet::every();
      }
    };
    return std::make_unique<Pass>(m_name, data);
  }
  void finish(const an::Context&, std::vector<std::unique_ptr<an::RankPass>>&, std::vector<an::Finding>&) override {}

 private:
  std::string m_name;
};

}  // namespace

TEST_CASE("analyzer::EventSet::the sequencer hands each pass the events it wants, in order") {
  std::vector<smtrace::test::JsonRank> ranks(2);
  for (auto& r : ranks) {
    r.events = {R"({"call": "INIT"})"};
    for (int n = 0; n < 3; ++n) {
      r.events.push_back(R"({"call": "BARRIER", "comm": 1})");
      r.events.push_back(R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 1})");
    }
    r.events.push_back(R"({"call": "FINALIZE"})");
  }
  const auto dir = smtrace::test::write_json_trace("event-set-recorders", ranks);
  an::Options options;
  options.check_errors = an::CheckErrors::report;
  options.threads = 1;  // rank 0 is read before rank 1
  const std::vector<std::string> names = {"every", "collectives", "thrower", "env", "nothing2"};
  options.checks = {names.begin(), names.end()};
  for (const std::string& name : names)
    options.extra_checks.push_back([name] { return std::make_unique<Recorder>(name); });
  g_got.clear();
  const an::Result result = an::analyze(dir, options);
  REQUIRE(result.failures.size() == 1);
  CHECK(result.failures[0].check == "thrower");
  CHECK(result.failures[0].message == "rank 0: event 0:3: broken");
  for (uint32_t r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(g_got[{"every", r}] == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(g_got[{"collectives", r}] == std::vector<uint64_t>{1, 3, 5});
    CHECK(g_got[{"env", r}] == std::vector<uint64_t>{0, 7});
    CHECK(g_got.count({"nothing2", r}) == 0);
  }
  CHECK(g_got[{"thrower", 0}] == std::vector<uint64_t>{1, 3});
  CHECK(g_got.count({"thrower", 1}) == 0);  // failed on rank 0, read before
}
