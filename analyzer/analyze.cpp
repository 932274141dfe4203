#include "analyzer/analyze.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <queue>
#include <stdexcept>

#include <fmt/core.h>

#include "analyzer/check.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/rank_data.hpp"
#include "analyzer/replay.hpp"
#include "trace_format/parallel.hpp"
#include "trace_format/symbols.hpp"

namespace smtrace::analyzer {

namespace fs = std::filesystem;
using format::Event;

bool Result::has_errors() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Severity::error; });
}

std::vector<std::string> check_names() {
  std::vector<std::string> out;
  for (const auto& check : all_checks()) out.emplace_back(check->name());
  return out;
}

Location Context::location(EventRef event, format::Call call, uint32_t site,
                           std::string note) const {
  Location loc;
  loc.event = event;
  loc.call = std::string(format::call_name(call));
  loc.note = std::move(note);
  if (event.rank < world_size()) {
    if (const format::CallSite* s = rank(event.rank).site(site)) {
      loc.function = s->function;
      loc.file = s->file;
      loc.line = s->line;
      loc.column = s->column;
    }
  }
  return loc;
}

namespace {

class AnalysisContext final : public Context {
 public:
  uint32_t world_size() const override { return static_cast<uint32_t>(ranks.size()); }
  const RankData& rank(uint32_t r) const override { return ranks.at(r); }
  const CommTable& comms() const override { return comm_table; }
  const Replay& replay() const override { return replayed; }
  const HappensBefore& happens_before() const override {
    std::call_once(hb_once, [&] {
      hb.build(*this);
      hb_done = true;
    });
    return hb;
  }
  bool hb_built() const { return hb_done; }
  const Options& options() const override { return *opts; }
  ScheduleOracle* schedule_oracle() const override { return oracle; }

  std::vector<RankData> ranks;
  CommTable comm_table;
  Replay replayed;
  mutable HappensBefore hb;
  mutable std::once_flag hb_once;
  mutable bool hb_done = false;
  const Options* opts = nullptr;
  ScheduleOracle* oracle = nullptr;
};

void add_implicit_comms(RankData& r) {
  if (!r.comms.count(format::k_comm_world)) {
    format::CommDef world;
    world.id = format::k_comm_world;
    for (uint32_t i = 0; i < r.header.world_size; ++i) world.world_ranks.push_back(i);
    r.comms.emplace(world.id, std::move(world));
  }
  if (!r.comms.count(format::k_comm_self)) {
    format::CommDef self;
    self.id = format::k_comm_self;
    self.world_ranks.push_back(r.rank);
    r.comms.emplace(self.id, std::move(self));
  }
}

// Hands events to the passes in seq order. The reader hands an event out when
// it completes, so with several threads (or a rank stopped inside a call)
// events can come a little out of order; they wait here until the gap closes
// or too many are waiting (a gap the tracer left, e.g. dropped events).
class Sequencer {
 public:
  explicit Sequencer(std::vector<RankPass*> passes) : m_passes(std::move(passes)) {}

  void push(const Event& e) {
    if (m_waiting.empty() && (!m_started || e.seq == m_next)) {
      deliver(e);
      return;
    }
    m_waiting.push(e);
    drain(false);
  }
  void finish() {
    drain(true);
    for (RankPass* p : m_passes) p->end();
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      // Pending events last: they stopped inside and have no end.
      if (a.pending != b.pending) return a.pending;
      return a.seq > b.seq;
    }
  };
  static constexpr std::size_t k_max_waiting = 4096;

  void deliver(const Event& e) {
    m_started = true;
    m_next = e.seq + 1;
    for (RankPass* p : m_passes) p->event(e);
  }
  void drain(bool all) {
    while (!m_waiting.empty()) {
      const Event& top = m_waiting.top();
      if (!all && top.seq != m_next && m_waiting.size() <= k_max_waiting) break;
      if (!all && top.pending) break;
      Event e = top;
      m_waiting.pop();
      deliver(e);
    }
  }

  std::vector<RankPass*> m_passes;
  std::priority_queue<Event, std::vector<Event>, Later> m_waiting;
  uint64_t m_next = 0;
  bool m_started = false;
};

}  // namespace

Result analyze(const fs::path& dir, const Options& options) {
  auto checks = all_checks();
  for (const CheckFactory& make : options.extra_checks) checks.push_back(make());
  for (const std::string& name : options.checks) {
    if (std::none_of(checks.begin(), checks.end(),
                     [&](const auto& c) { return c->name() == name; })) {
      std::string valid;
      for (const auto& c : checks) valid += (valid.empty() ? "" : ", ") + std::string(c->name());
      throw std::invalid_argument("unknown check '" + name + "' (checks: " + valid + ")");
    }
  }
  if (!options.checks.empty()) {
    std::erase_if(checks, [&](const auto& c) { return !options.checks.count(std::string(c->name())); });
  }
  if (options.alignment == Alignment::off) {
    std::erase_if(checks, [](const auto& c) { return c->name() == "collective-misaligned"; });
  }
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };

  const auto t0 = std::chrono::steady_clock::now();
  format::TraceFiles files = format::find_trace_files(dir);
  AnalysisContext ctx;
  ctx.opts = &options;
  const uint32_t world_size = static_cast<uint32_t>(files.rank_files.size());
  ctx.ranks.resize(world_size);
  ctx.comm_table.reserve_ranks(world_size);
  ctx.replayed.reserve_ranks(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    ctx.ranks[r].rank = r;
    ctx.ranks[r].file = files.rank_files[r].string();
  }

  // Passes per check, per rank: made before any thread starts.
  std::vector<std::vector<std::unique_ptr<RankPass>>> passes(checks.size());
  std::vector<std::unique_ptr<RankPass>> replay_passes(world_size);
  for (std::size_t c = 0; c < checks.size(); ++c) passes[c].resize(world_size);
  for (uint32_t r : files.present) {
    replay_passes[r] = ctx.replayed.rank_pass(ctx.ranks[r]);
    for (std::size_t c = 0; c < checks.size(); ++c) passes[c][r] = checks[c]->rank_pass(ctx.ranks[r]);
  }

  std::atomic<std::size_t> next{0};
  std::atomic<uint32_t> done{0};
  std::atomic<uint64_t> total_events{0};
  std::mutex say_mutex;
  auto load = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.present.size();) {
      const uint32_t r = files.present[i];
      RankData& data = ctx.ranks[r];
      std::vector<RankPass*> rank_passes{replay_passes[r].get()};
      for (auto& per_check : passes) {
        if (per_check[r]) rank_passes.push_back(per_check[r].get());
      }
      Sequencer sequencer(rank_passes);
      format::RankReader reader(files.rank_files[r]);
      format::RankReader::Callbacks cb;
      cb.site = [&](const format::CallSite& s) { data.sites[s.id] = s; };
      cb.comm = [&](const format::CommDef& c) { data.comms[c.id] = c; };
      cb.datatype = [&](const format::DatatypeDef& t) { data.datatypes[t.id] = t; };
      cb.end = [&](const format::Termination& t) { data.end = t; };
      cb.problem = [&](const format::Problem& p) {
        data.problems.push_back(p);
        if (p.severity == format::Problem::Severity::error) data.truncated = true;
      };
      cb.event = [&](const Event& e) {
        ++data.events;
        data.last_seq = std::max(data.last_seq, e.seq);
        ctx.comm_table.observe(r, e);
        sequencer.push(e);
      };
      if (auto header = reader.header(cb)) {
        data.present = true;
        data.header = *header;
        add_implicit_comms(data);
        bool ok = true;
        format::Problem p = format::check_rank_header(files, r, data.header, ok);
        if (!ok) data.problems.push_back(std::move(p));
        reader.read_all(cb);
        sequencer.finish();
        if (!data.end) data.truncated = true;
      }
      total_events += data.events;
      const uint32_t n = ++done;
      std::lock_guard lock(say_mutex);
      say(fmt::format("read {}/{} ranks, {} events", n, files.present.size(), total_events.load()));
    }
  };
  format::run_on_threads(format::thread_count(options.threads, files.present.size()), load);
  const auto t_read = std::chrono::steady_clock::now();

  // Call sites symbolized after the run.
  Result result;
  result.problems = files.problems;
  const fs::path symbols_path = dir / std::string(format::k_symbols_file);
  std::error_code ec;
  if (fs::exists(symbols_path, ec)) {
    auto symbols = format::read_symbols(symbols_path, result.problems);
    for (auto& [r, sites] : symbols) {
      if (r >= world_size || !ctx.ranks[r].present) continue;
      for (const format::CallSite& s : sites) {
        auto it = ctx.ranks[r].sites.find(s.id);
        if (it == ctx.ranks[r].sites.end()) continue;
        if (!s.function.empty()) it->second.function = s.function;
        if (!s.file.empty()) it->second.file = s.file;
        if (s.line) it->second.line = s.line;
        if (s.column) it->second.column = s.column;
      }
    }
  }

  say("replaying matches");
  ctx.comm_table.resolve(ctx.ranks);
  ctx.replayed.replay(ctx);
  if (options.happens_before) {
    say("building happens-before");
    ctx.happens_before();
  }
  const auto t_replay = std::chrono::steady_clock::now();

  for (const auto& c : checks) {
    if (!ctx.oracle) ctx.oracle = c->schedule_oracle();
  }
  for (std::size_t c = 0; c < checks.size(); ++c) {
    say(fmt::format("check {}", checks[c]->name()));
    checks[c]->finish(ctx, passes[c], result.findings);
    checks[c]->stats(result.stats);
    passes[c].clear();
  }
  drop_superseded(result.findings);
  sort_findings(result.findings);
  const bool unsymbolized = std::any_of(result.findings.begin(), result.findings.end(), [](const Finding& f) {
    return std::any_of(f.locations.begin(), f.locations.end(), [](const Location& l) { return l.file.empty(); });
  });
  if (unsymbolized) {
    result.notes.push_back(
        fs::exists(symbols_path, ec)
            ? std::string("some locations have no file:line: their code has no debug information (build with -g), "
                          "or its module was missing when the trace was symbolized")
            : fmt::format("locations have no file:line: the trace is not symbolized; run `smtrace symbolize {}` "
                          "(the program's binaries must still be there, built with -g)",
                          dir.string()));
  }
  const auto t_end = std::chrono::steady_clock::now();

  uint64_t events = 0, p2p = 0, colls = 0;
  bool complete = world_size > 0;
  for (uint32_t r = 0; r < world_size; ++r) {
    const RankData& data = ctx.ranks[r];
    for (const auto& p : data.problems) result.problems.push_back(p);
    events += data.events;
    if (data.present) {
      p2p += ctx.replayed.p2p(r).size();
      colls += ctx.replayed.collectives(r).size();
    }
    complete = complete && data.present && data.finalized();
  }
  auto ms = [](auto a, auto b) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
  };
  result.world_size = world_size;
  result.complete = complete;
  result.stats["ranks"] = world_size;
  result.stats["ranks_present"] = files.present.size();
  result.stats["events"] = events;
  result.stats["p2p_operations"] = p2p;
  result.stats["collective_calls"] = colls;
  result.stats["matches"] = ctx.replayed.matches();
  result.stats["communicators"] = ctx.comm_table.size();
  result.stats["windows"] = ctx.comm_table.window_count();
  if (ctx.hb_built()) {
    result.stats["hb_nodes"] = ctx.hb.nodes();
    result.stats["hb_edges"] = ctx.hb.edges();
    result.stats["hb_cross_edges"] = ctx.hb.cross_edges();
    result.stats["hb_cyclic"] = ctx.hb.cycle().empty() ? 0 : 1;
  }
  // Timings stay out of the stats so that reports of one trace are identical
  // from run to run; progress shows them.
  say(fmt::format("read {} ms, replay {} ms, checks {} ms", ms(t0, t_read), ms(t_read, t_replay),
                  ms(t_replay, t_end)));
  return result;
}

}  // namespace smtrace::analyzer
