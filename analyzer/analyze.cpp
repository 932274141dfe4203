#include "analyzer/analyze.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>

#include <fmt/core.h>

#include "analyzer/check.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/rank_data.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/content.hpp"
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
  // The replay is this context's own (not const): handed out for freeing
  // when every check that finishes from `finishing` on says it no longer
  // reads its ops.
  Replay* releasable_replay() const override {
    if (!checks) return nullptr;
    for (std::size_t k = finishing; k < finish_order.size(); ++k) {
      const std::size_t c = finish_order[k];
      if (finishes[c] && (*checks)[c]->reads_replay_ops()) return nullptr;
    }
    return const_cast<Replay*>(&replayed);
  }
  void mark_erroneous(EventRef event) const override {
    std::lock_guard lock(erroneous_mutex);
    erroneous_events.insert(event);
  }
  bool erroneous(EventRef event) const override {
    std::lock_guard lock(erroneous_mutex);
    return erroneous_events.count(event) != 0;
  }

  std::vector<RankData> ranks;
  CommTable comm_table;
  Replay replayed;
  mutable HappensBefore hb;
  mutable std::once_flag hb_once;
  mutable bool hb_done = false;
  const Options* opts = nullptr;
  ScheduleOracle* oracle = nullptr;
  // During the checks' finish: the checks, which of them finish, the order
  // they finish in (indices into checks, by Check::finish_stage)
  // and the position in it of the one finishing now.
  const std::vector<std::unique_ptr<Check>>* checks = nullptr;
  std::vector<bool> finishes;
  std::vector<std::size_t> finish_order;
  std::size_t finishing = 0;
  mutable std::mutex erroneous_mutex;
  mutable std::set<EventRef> erroneous_events;
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

// Checks whose work threw (an error of the check, not of the trace): their
// passes get no more events, their finish() is not called, and the report
// names them. Shared by the loading threads.
class CheckFailures {
 public:
  CheckFailures(std::size_t checks, CheckErrors policy) : m_failed(checks), m_policy(policy) {}
  // Return true when a check's exception is to end the analysis.
  bool rethrow() const { return m_policy == CheckErrors::rethrow; }
  bool failed(std::size_t check) const { return m_failed[check].load(std::memory_order_relaxed); }
  // Return true once any check has failed (one load: asked per event).
  bool any() const { return m_any.load(std::memory_order_relaxed); }
  void fail(std::size_t check, std::string_view name, std::string message) {
    std::lock_guard lock(m_mutex);
    if (m_failed[check].exchange(true)) return;  // the first failure tells
    m_any.store(true, std::memory_order_relaxed);
    m_list.push_back({std::string(name), std::move(message)});
  }
  std::vector<CheckFailure> take() {
    std::lock_guard lock(m_mutex);
    return std::move(m_list);
  }

 private:
  std::vector<std::atomic<bool>> m_failed;
  std::atomic<bool> m_any{false};
  CheckErrors m_policy;
  std::mutex m_mutex;
  std::vector<CheckFailure> m_list;
};

// A rank pass and the check it belongs to (nullopt: the replay, whose
// failure ends the analysis).
struct PassOf {
  RankPass* pass = nullptr;
  std::optional<std::size_t> check;
  EventSet wants = EventSet::every();  // pass->wants(), asked before the rank's first event
};

// Hands events to the passes in seq order, each to the passes that want
// its call (RankPass::wants). The reader hands an event out when
// it completes, so with several threads (or a rank stopped inside a call)
// events can come a little out of order; they wait here until the gap closes
// or too many are waiting (a gap the tracer left, e.g. dropped events).
// A check's pass that throws is dropped (failures); out of memory and the
// replay's errors go up.
class Sequencer {
 public:
  Sequencer(std::vector<PassOf> passes, CheckFailures& failures,
            const std::vector<std::unique_ptr<Check>>& checks, uint32_t rank)
      : m_passes(std::move(passes)), m_failures(failures), m_checks(checks), m_rank(rank) {}

  void push(const Event& e) {
    // No pass here (smtrace-mpi: every pass of the rank ran where it was
    // read): nothing to order, and the events that come are only some.
    if (m_passes.empty()) return;
    if (m_waiting.empty() && (!m_started || e.seq == m_next)) {
      deliver(e);
      return;
    }
    m_waiting.push(e);
    drain(false);
  }
  // Pass `e`, written after the rank's end record, to every pass's after_end().
  [[gnu::cold, gnu::noinline]] void push_after_end(const Event& e) {
    for (PassOf& p : m_passes) guarded(p, &e, [&] { p.pass->after_end(e); });
  }
  void finish() {
    drain(true);
    for (PassOf& p : m_passes) guarded(p, nullptr, [&] { p.pass->end(); });
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

  template <class Call>
  void guarded(PassOf& p, const Event* e, const Call& call) {
    if (!p.pass) return;
    if (!p.check || m_failures.rethrow()) {
      call();
      return;
    }
    if (m_failures.failed(*p.check)) {
      p.pass = nullptr;  // failed on another rank
      return;
    }
    try {
      call();
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& error) {
      p.pass = nullptr;
      m_failures.fail(*p.check, m_checks[*p.check]->name(),
                      e ? fmt::format("rank {}: event {}:{}: {}", m_rank, m_rank, e->seq, error.what())
                        : fmt::format("rank {}: at the end of the rank: {}", m_rank, error.what()));
    }
  }
  // guarded(p, &e, p.pass->event(e)) for every pass that wants e's call,
  // with the failure checks hoisted: passes of checks that failed on
  // another rank are dropped once per event (one load while none has), and
  // the handler is entered only when a pass throws. The passes not dropped
  // that want the event are called from m_live, in m_passes' order.
  void deliver(const Event& e) {
    if (!m_started) {
      // The rank's header is in RankData now: ask each pass what it wants.
      for (PassOf& p : m_passes)
        if (p.pass) p.wants = p.pass->wants();
      list_live();
    }
    m_started = true;
    m_next = e.seq + 1;
    if (m_failures.any()) {
      bool dropped = false;
      for (PassOf& p : m_passes)
        if (p.pass && p.check && !m_failures.rethrow() && m_failures.failed(*p.check)) {
          p.pass = nullptr;
          dropped = true;
        }
      if (dropped) list_live();
    }
    const std::size_t slot = EventSet::slot(e.call);
    // (m_live changes only after the loop: its range is read once.)
    const std::size_t first = m_first[slot], last = m_first[slot + 1];
    if (first == last) return;
    const EventScope scope(e);  // the passes share event_buffers(e)
    bool dropped = false;
    RankPass* const* const live = m_live.data();
    for (std::size_t i = first; i < last; ++i) {
      try {
        live[i]->event(e);
      } catch (const std::bad_alloc&) {
        throw;
      } catch (const std::exception& error) {
        PassOf& p = m_passes[m_live_of[i]];
        if (!p.check || m_failures.rethrow()) throw;
        p.pass = nullptr;
        dropped = true;
        m_failures.fail(*p.check, m_checks[*p.check]->name(),
                        fmt::format("rank {}: event {}:{}: {}", m_rank, m_rank, e.seq, error.what()));
      }
    }
    if (dropped) list_live();
  }
  // List, per call slot (EventSet::slot), the passes not dropped that
  // want it in m_live[m_first[slot], m_first[slot + 1]) (and their places
  // in m_passes).
  void list_live() {
    m_live.clear();
    m_live_of.clear();
    m_first.assign(EventSet::k_slots + 1, 0);
    for (std::size_t slot = 0; slot < EventSet::k_slots; ++slot) {
      m_first[slot] = static_cast<uint32_t>(m_live.size());
      for (std::size_t i = 0; i < m_passes.size(); ++i) {
        if (!m_passes[i].pass || !m_passes[i].wants.has_slot(slot)) continue;
        m_live.push_back(m_passes[i].pass);
        m_live_of.push_back(static_cast<uint32_t>(i));
      }
    }
    m_first[EventSet::k_slots] = static_cast<uint32_t>(m_live.size());
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

  std::vector<PassOf> m_passes;
  std::vector<RankPass*> m_live;    // per call slot, m_passes' passes not dropped that want it, in order
  std::vector<uint32_t> m_live_of;  // their indices in m_passes
  std::vector<uint32_t> m_first;    // per call slot: where its passes start in m_live (and the end)
  CheckFailures& m_failures;
  const std::vector<std::unique_ptr<Check>>& m_checks;
  uint32_t m_rank;
  std::priority_queue<Event, std::vector<Event>, Later> m_waiting;
  uint64_t m_next = 0;
  bool m_started = false;
};

// Return the checks `options` selects, in report order. Throw
// std::invalid_argument for an unknown name.
std::vector<std::unique_ptr<Check>> selected_checks(const Options& options) {
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
  return checks;
}

// Load rank `data.rank` of `files` from `source` into `data`, its events to
// `comms` (when not null) and `sequencer`. Throw std::runtime_error naming
// the file on the source's errors and the sequencer's, std::bad_alloc as is.
void load_rank(const format::TraceFiles& files, RankData& data, RankSource& source, Sequencer& sequencer,
               CommTable* comms) {
  const uint32_t r = data.rank;
  format::RankReader::Callbacks cb;
  cb.site = [&](const format::CallSite& s) { data.sites[s.id] = s; };
  cb.comm = [&](const format::CommDef& c) { data.comms[c.id] = c; };
  cb.datatype = [&](const format::DatatypeDef& t) { data.datatypes[t.id] = t; };
  // Events from this seq on go to RankPass::after_end (one compare per event).
  uint64_t outside_from = std::numeric_limits<uint64_t>::max();
  cb.end = [&](const format::Termination& t) {
    data.end = t;
    if (t.precedes(t.last_seq + 1)) outside_from = std::min(outside_from, t.last_seq + 1);
  };
  cb.problem = [&](const format::Problem& p) {
    data.problems.push_back(p);
    if (p.severity == format::Problem::Severity::error) data.truncated = true;
  };
  cb.event = [&](const Event& e) {
    ++data.events;
    data.last_seq = std::max(data.last_seq, e.seq);
    if (e.seq >= outside_from) [[unlikely]] {
      sequencer.push_after_end(e);  // a call after MPI_Finalize or before MPI_Init (RankPass::after_end)
      return;
    }
    if (comms) comms->observe(r, e);
    sequencer.push(e);
  };
  // A source that left events out (smtrace-mpi's reader passed on only
  // those read here) knows how many the file held, as far as it was read.
  auto count_read = [&] {
    if (const std::optional<EventsRead> read = source.events_read()) {
      data.events = read->events;
      data.last_seq = read->last_seq;
    }
  };
  try {
    if (auto header = source.header(cb)) {
      data.present = true;
      data.header = *header;
      bool ok = true;
      format::Problem p = format::check_rank_header(files, r, data.header, ok);
      if (!ok) data.problems.push_back(std::move(p));
      add_implicit_comms(data);
      // A trace begun at a call before MPI_Init holds only that call.
      if (format::started_before_init(data.header)) outside_from = 0;
      source.read_all(cb);
      count_read();
      sequencer.finish();
      if (!data.end) data.truncated = true;
    }
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    count_read();
    throw std::runtime_error(
        fmt::format("{}: rank {}: loading stopped after {} events: {}", data.file, r, data.events, e.what()));
  }
}

// smtrace-mpi: return true when a selected check whose passes do not
// travel has a pass of rank `data.rank` (none of smtrace's own checks since
// the SMT checks' Collector travels, mpi26; a test's or an extra check), which
// then runs on the analyzing process and reads every event there; the
// replay's pass then runs there too, as it did before it could travel: its
// state would only add to what that process receives. Otherwise the replay's
// pass runs where the rank is read and the analyzing process reads only the
// events that CommTable::observe takes (run_saved_passes); the Sequencer
// and RankData's counts (EventsRead) then run where it was read too. Asks
// rank_pass() of those checks as analyze() does, so that both sides decide
// alike from the same selection.
bool passes_stay(const std::vector<std::unique_ptr<Check>>& checks, const RankData& data) {
  return std::any_of(checks.begin(), checks.end(),
                     [&](const std::unique_ptr<Check>& c) { return !c->saves_passes() && c->rank_pass(data); });
}

// How run_saved_passes's loading ended.
enum class Saved : uint8_t { ok, error, out_of_memory };

// Load the passes of rank `data.rank` that run_saved_passes saved in `saved`
// into `passes` (per check, per rank): a check that failed there fails here;
// what loading threw there is thrown here.
void load_saved_passes(std::string_view saved, const std::vector<std::unique_ptr<Check>>& checks,
                       std::vector<std::vector<std::unique_ptr<RankPass>>>& passes, const RankData& data,
                       CheckFailures& failures, Replay& replay, bool replay_here) {
  WireReader in(saved);
  switch (in.get<Saved>()) {
    case Saved::ok: break;
    case Saved::error: throw std::runtime_error(in.text());
    case Saved::out_of_memory: throw std::bad_alloc();
  }
  for (std::size_t c = 0; c < checks.size(); ++c) {
    if (!checks[c]->saves_passes()) continue;
    if (in.text() != checks[c]->name()) {
      throw std::logic_error(fmt::format("rank {}: saved passes of other checks than these", data.rank));
    }
    if (in.get<uint8_t>() != 0) {
      failures.fail(c, checks[c]->name(), in.text());
      continue;
    }
    if (in.get<uint8_t>() != 0) passes[c][data.rank] = checks[c]->load_pass(data, in);
  }
  const bool replayed_there = in.get<uint8_t>() != 0;
  if (replayed_there != !replay_here) {
    throw std::logic_error(fmt::format("rank {}: the replay's pass ran on both processes or on none", data.rank));
  }
  if (replayed_there) replay.load_rank(data.rank, in);
  if (!in.at_end()) throw std::logic_error(fmt::format("rank {}: saved passes longer than read", data.rank));
}

}  // namespace

std::string run_saved_passes(const format::TraceFiles& files, uint32_t rank, RankSource& source,
                             const Options& options) {
  WireWriter out;
  try {
    const std::vector<std::unique_ptr<Check>> checks = selected_checks(options);
    RankData data;
    data.rank = rank;
    data.file = files.rank_files.at(rank).string();
    std::vector<std::unique_ptr<RankPass>> passes(checks.size());
    // The replay's pass runs here too unless a pass stays on the analyzing
    // process (passes_stay; its errors end the analysis, as there); its
    // state travels after the checks'.
    const bool stay = passes_stay(checks, data);
    Replay replay;
    const std::unique_ptr<RankPass> replay_pass = stay ? nullptr : replay.rank_pass(data);
    std::vector<PassOf> rank_passes;
    if (replay_pass) rank_passes.push_back({replay_pass.get(), std::nullopt});
    for (std::size_t c = 0; c < checks.size(); ++c) {
      if (!checks[c]->saves_passes()) continue;
      passes[c] = checks[c]->rank_pass(data);
      if (passes[c]) rank_passes.push_back({passes[c].get(), c});
    }
    source.pass_on_only(stay ? EventSet::every() : EventSet::of(&CommTable::observes));
    CheckFailures failures(checks.size(), options.check_errors);
    Sequencer sequencer(std::move(rank_passes), failures, checks, rank);
    load_rank(files, data, source, sequencer, nullptr);
    std::vector<CheckFailure> failed = failures.take();
    out.put(Saved::ok);
    for (std::size_t c = 0; c < checks.size(); ++c) {
      if (!checks[c]->saves_passes()) continue;
      out.put(checks[c]->name());
      auto failure = std::find_if(failed.begin(), failed.end(),
                                  [&](const CheckFailure& f) { return f.check == checks[c]->name(); });
      out.put<uint8_t>(failure != failed.end());
      if (failure != failed.end()) {
        out.put(failure->message);
        continue;
      }
      out.put<uint8_t>(passes[c] != nullptr);
      if (passes[c]) checks[c]->save_pass(*passes[c], out);
    }
    out.put<uint8_t>(replay_pass != nullptr);
    if (replay_pass) replay.save_rank(rank, out);
  } catch (const std::bad_alloc&) {
    out.bytes().clear();
    out.put(Saved::out_of_memory);
  } catch (const std::exception& e) {
    out.bytes().clear();
    out.put(Saved::error);
    out.put(std::string_view(e.what()));
  }
  return std::move(out.bytes());
}

Result analyze(const fs::path& dir, const Options& options) {
  auto checks = selected_checks(options);
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
  auto elsewhere = [&](uint32_t r) { return options.passes_elsewhere && options.passes_elsewhere(r); };
  std::vector<bool> replay_here(world_size, false);
  for (uint32_t r : files.present) {
    bool stay = false;
    for (std::size_t c = 0; c < checks.size(); ++c) {
      if (elsewhere(r) && checks[c]->saves_passes()) continue;
      passes[c][r] = checks[c]->rank_pass(ctx.ranks[r]);
      stay = stay || passes[c][r];
    }
    // A rank read elsewhere brings its replay state with its saved passes,
    // unless a pass of it stays here (passes_stay: then every event comes).
    replay_here[r] = !elsewhere(r) || stay;
    if (replay_here[r]) replay_passes[r] = ctx.replayed.rank_pass(ctx.ranks[r]);
  }

  std::atomic<uint32_t> done{0};
  std::atomic<uint64_t> total_events{0};
  std::mutex say_mutex;
  CheckFailures failures(checks.size(), options.check_errors);
  // One job per present rank. An error of a check's pass drops that check
  // (Sequencer); any other error (out of memory, the replay, the reader) ends
  // the analysis: run_on_threads hands out no more ranks and rethrows it here.
  auto load = [&](std::size_t i) {
    const uint32_t r = files.present[i];
    RankData& data = ctx.ranks[r];
    std::vector<PassOf> rank_passes;
    if (replay_passes[r]) rank_passes.push_back({replay_passes[r].get(), std::nullopt});
    for (std::size_t c = 0; c < passes.size(); ++c) {
      if (passes[c][r]) rank_passes.push_back({passes[c][r].get(), c});
    }
    const bool passes_here = !rank_passes.empty();
    Sequencer sequencer(std::move(rank_passes), failures, checks, r);
    const std::unique_ptr<RankSource> reader = options.rank_source ? options.rank_source(r, files.rank_files[r])
                                                                  : read_rank_file_source(files.rank_files[r], format::recovered_version(files));
    load_rank(files, data, *reader, sequencer, &ctx.comm_table);
    if (const std::optional<EventsRead> read = reader->events_read();
        read && passes_here && read->delivered != read->events) {
      throw std::logic_error(fmt::format("rank {}: {} of {} events left where the rank was read, which passes here read",
                                         r, read->events - read->delivered, read->events));
    }
    if (elsewhere(r)) {
      load_saved_passes(reader->saved_passes(), checks, passes, data, failures, ctx.replayed, replay_here[r]);
    }
    total_events += data.events;
    const uint32_t n = ++done;
    std::lock_guard lock(say_mutex);
    say(fmt::format("read {}/{} ranks, {} events", n, files.present.size(), total_events.load()));
  };
  format::run_on_threads(format::thread_count(options.threads, files.present.size()), files.present.size(),
                         load);
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

  // An imported trace may lack what some checks need (trace_format/content.hpp):
  // those do not run, and the report says why.
  format::ContentSet lacking = 0;
  std::string imported_from;
  for (const RankData& data : ctx.ranks) {
    if (!data.present) continue;
    lacking |= format::lacks(data.header);
    if (auto it = data.header.options.find(std::string(format::k_imported_option));
        it != data.header.options.end() && imported_from.empty()) {
      imported_from = it->second;
    }
  }
  std::vector<bool> skip(checks.size(), false);
  for (std::size_t c = 0; c < checks.size(); ++c) {
    const format::ContentSet missing = checks[c]->needs() & lacking;
    if (missing == 0) continue;
    skip[c] = true;
    std::string reason = "the trace has " + format::describe_lacks(missing);
    if (!imported_from.empty()) reason += fmt::format(" (imported from {})", imported_from);
    result.skipped.push_back({std::string(checks[c]->name()), std::move(reason)});
  }

  for (std::size_t c = 0; c < checks.size(); ++c) {
    if (!ctx.oracle && !skip[c] && !failures.failed(c)) ctx.oracle = checks[c]->schedule_oracle();
  }
  // What the stats say of the replay's ops, before a check frees them
  // (Context::releasable_replay).
  uint64_t p2p = 0;
  for (uint32_t r = 0; r < world_size; ++r) {
    if (ctx.ranks[r].present) p2p += ctx.replayed.p2p(r).size();
  }
  const uint64_t matches = ctx.replayed.matches();
  ctx.checks = &checks;
  for (std::size_t c = 0; c < checks.size(); ++c) ctx.finishes.push_back(!skip[c] && !failures.failed(c));
  // Under CheckErrors::report a check that throws here loses its findings
  // (they may be half made) and is named in the result; the others still
  // report. Out of memory goes up.
  for (const Check::FinishStage stage :
       {Check::FinishStage::normal, Check::FinishStage::after_marks, Check::FinishStage::last}) {
    for (std::size_t c = 0; c < checks.size(); ++c) {
      if (checks[c]->finish_stage() == stage) ctx.finish_order.push_back(c);
    }
  }
  for (std::size_t k = 0; k < ctx.finish_order.size(); ++k) {
    const std::size_t c = ctx.finish_order[k];
    ctx.finishing = k;
    if (skip[c] || failures.failed(c)) {
      passes[c].clear();
      continue;
    }
    say(fmt::format("check {}", checks[c]->name()));
    const std::size_t before = result.findings.size();
    try {
      checks[c]->finish(ctx, passes[c], result.findings);
      checks[c]->stats(result.stats);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      if (failures.rethrow()) throw;
      result.findings.erase(result.findings.begin() + static_cast<std::ptrdiff_t>(before), result.findings.end());
      failures.fail(c, checks[c]->name(), e.what());
    }
    passes[c].clear();
  }
  ctx.checks = nullptr;
  drop_superseded(result.findings);
  result.failures = failures.take();
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

  uint64_t events = 0, colls = 0;
  bool complete = world_size > 0;
  for (uint32_t r = 0; r < world_size; ++r) {
    const RankData& data = ctx.ranks[r];
    for (const auto& p : data.problems) result.problems.push_back(p);
    events += data.events;
    if (data.present) colls += ctx.replayed.collectives(r).size();
    complete = complete && data.present && data.finalized() && data.accesses_kept();
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
  result.stats["matches"] = matches;
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
