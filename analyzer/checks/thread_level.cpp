// thread-level: MPI calls that the thread level MPI provided does not allow
// (MPI-3.1 section 12.4.3). The level is the one MPI_Init_thread (or
// MPI_Init) provided, as MPI_Query_thread returned it after initialization:
// RankHeader::thread_level, 0 single .. 3 multiple.
// - MPI_THREAD_SINGLE: only one thread will execute; an MPI call from any
//   thread but the one that initialized MPI (tracer thread 0) is an error.
// - MPI_THREAD_FUNNELED: only the main thread (the one that initialized
//   MPI) makes MPI calls; the same rule.
// - MPI_THREAD_SERIALIZED: several threads may call MPI, but never two at
//   once: two calls of different threads whose recorded intervals
//   [t_start, t_start + duration] overlap are an error. A call the rank
//   stopped inside lasts to the end of the run.
// - MPI_THREAD_MULTIPLE: nothing to check.
// Only MPI calls count (not loads, stores, annotations, CUDA or thread
// synchronization events). A folded poll summary (Event::repeat > 1) spans
// the gaps between the polls it counts, so it takes part in no overlap; the
// first poll of the run does. Intervals are taken inside the tracer's
// wrapper around the PMPI call, so a program that serializes its calls
// with a lock never shows an overlap. A rank whose header was lost
// (recovered) has no known level and is skipped; so is a trace that lacks
// the level (imported: Content::thread_level).
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/grouped.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Event;
using format::Family;

constexpr int32_t k_single = 0, k_funneled = 1, k_serialized = 2;

std::string_view level_name(int32_t level) {
  switch (level) {
    case 0: return "MPI_THREAD_SINGLE";
    case 1: return "MPI_THREAD_FUNNELED";
    case 2: return "MPI_THREAD_SERIALIZED";
    case 3: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

// Return true for the families whose calls are MPI calls.
bool is_mpi(Family family) {
  switch (family) {
    case Family::env: case Family::comm: case Family::group: case Family::p2p: case Family::request:
    case Family::coll: case Family::rma: case Family::type:
      return true;
    case Family::none: case Family::annotate: case Family::cuda: case Family::thread:
      return false;
  }
  return false;
}

// The last MPI call of one thread: the one that ends last (calls of one
// thread do not overlap).
struct Last {
  int64_t end = 0;
  bool open = false;  // pending: lasts to the end of the run
  Event call;         // arguments and stack cleared
};

class Pass final : public RankPass {
 public:
  explicit Pass(const RankData& data) : m_data(data) {}

  void event(const Event& e) override {
    if (!m_started) start();
    if (!m_active) return;
    // Under MPI_THREAD_SINGLE and FUNNELED the main thread's calls (most
    // events) change nothing but MPI_Init(_thread), which is kept.
    if (e.thread == 0 && m_main_only && e.call != format::Call::Init && e.call != format::Call::Init_thread) return;
    check(e);
  }

  // MPI calls, where the level is one the check checks (none elsewhere).
  EventSet wants() const override {
    if (!checked(m_data.header)) return EventSet::none();
    return EventSet::of([](const format::CallTraits& t) {
      return is_mpi(t.family) && t.role != format::Role::local_access;
    });
  }

  void end() override {
    for (const auto& [key, at] : m_repeats) {
      if (at.second > 1) {
        problems[at.first].notes.push_back(
            fmt::format("thread {} makes this call {} times here", std::get<0>(key), at.second));
      }
    }
  }

  std::vector<RawProblem> problems;

 private:
  // (Out of line: event()'s early return stays a few instructions.)
  [[gnu::noinline]] void check(const Event& e) {
    if (!is_mpi(format::call_traits(e.call).family) || format::call_traits(e.call).role == format::Role::local_access) {
      return;
    }
    if (e.call == format::Call::Init || e.call == format::Call::Init_thread) {
      m_init = slim(e);
      return;
    }
    if (m_level == k_single || m_level == k_funneled) {
      if (e.thread == 0) return;
      // One problem per thread, call and site; the others are counted.
      const std::tuple<uint32_t, format::Call, uint32_t> key{e.thread, e.call, e.site};
      if (auto it = m_repeats.find(key); it != m_repeats.end()) {
        ++it->second.second;
        return;
      }
      m_repeats.emplace(key, std::make_pair(problems.size(), uint64_t{1}));
      RawProblem p;
      p.problem = "non-main thread";
      p.message = fmt::format("{} called from thread {} of rank {}, but MPI provided {}: only the thread "
                              "that initialized MPI may call MPI",
                              format::call_name(e.call), e.thread, m_data.rank, level_name(m_level));
      p.sites.push_back(raw_site(m_data.rank, e, fmt::format("called from thread {} here", e.thread)));
      add_init(p);
      problems.push_back(std::move(p));
      return;
    }
    // Serialized: compare with the last call of every other thread.
    if (e.repeat > 1) return;
    const int64_t end = e.t_start + static_cast<int64_t>(e.duration);
    for (auto& [thread, last] : m_last) {
      if (thread == e.thread || reported_pair(thread, e.thread)) continue;
      if (!last.open && last.end <= e.t_start) continue;
      if (!e.pending && end <= last.call.t_start) continue;
      RawProblem p;
      p.problem = "concurrent calls";
      p.message = fmt::format("{} of thread {} and {} of thread {} of rank {} overlap in time, but MPI "
                              "provided MPI_THREAD_SERIALIZED: no two threads may be inside MPI at once",
                              format::call_name(e.call), e.thread, format::call_name(last.call.call), thread,
                              m_data.rank);
      p.sites.push_back(raw_site(m_data.rank, e, fmt::format("thread {} calls this", e.thread)));
      p.sites.push_back(raw_site(m_data.rank, last.call,
                                 fmt::format("while thread {} is still inside this call", thread)));
      add_init(p);
      problems.push_back(std::move(p));
      m_pairs.push_back({std::min(thread, e.thread), std::max(thread, e.thread)});
    }
    Last& mine = m_last[e.thread];  // one thread's calls never overlap: the later ends last
    if (e.pending || end >= mine.end) {
      mine.end = end;
      mine.open = e.pending;
      mine.call = slim(e);
    }
  }

  // Return true when `header` gives a level that the check checks.
  static bool checked(const format::RankHeader& header) {
    return !header.recovered && (format::lacks(header) & content_bit(format::Content::thread_level)) == 0 &&
           header.thread_level >= k_single && header.thread_level <= k_serialized;
  }
  void start() {
    m_started = true;
    m_level = m_data.header.thread_level;
    m_active = checked(m_data.header);
    m_main_only = m_level == k_single || m_level == k_funneled;
  }
  static Event slim(const Event& e) {
    Event kept = e;
    kept.stack.clear();
    kept.args.clear();
    return kept;
  }
  void add_init(RawProblem& p) const {
    p.notes.push_back(fmt::format("MPI provided {} to rank {} (MPI-3.1 section 12.4.3)", level_name(m_level),
                                  m_data.rank));
    if (m_init) p.sites.push_back(raw_site(m_data.rank, *m_init, fmt::format("MPI provided {} here", level_name(m_level))));
  }
  // One finding per pair of threads is enough to say that they overlap;
  // Grouped still groups the first of each pair by place.
  bool reported_pair(uint32_t a, uint32_t b) const {
    const std::pair<uint32_t, uint32_t> key{std::min(a, b), std::max(a, b)};
    for (const auto& p : m_pairs) {
      if (p == key) return true;
    }
    return false;
  }

  const RankData& m_data;
  bool m_started = false, m_active = false;
  bool m_main_only = false;  // the level is MPI_THREAD_SINGLE or FUNNELED
  int32_t m_level = 0;
  std::optional<Event> m_init;
  std::unordered_map<uint32_t, Last> m_last;
  std::vector<std::pair<uint32_t, uint32_t>> m_pairs;
  // (thread, call, site) -> (index in problems, calls)
  std::map<std::tuple<uint32_t, format::Call, uint32_t>, std::pair<std::size_t, uint64_t>> m_repeats;
};

class ThreadLevel final : public Check {
 public:
  std::string_view name() const override { return "thread-level"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "MPI calls from a thread other than the main one under MPI_THREAD_SINGLE or FUNNELED, "
           "calls of two threads at once under MPI_THREAD_SERIALIZED";
  }
  format::ContentSet needs() const override { return content_bit(format::Content::thread_level); }
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // finish() only groups each rank's problems.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_problems<Pass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    return load_pass_problems<Pass>(data, in);
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    Grouped grouped(std::string(name()), severity());
    for (auto& pass : passes) {
      auto* p = dynamic_cast<Pass*>(pass.get());
      if (!p) continue;
      for (RawProblem& problem : p->problems) grouped.add(ctx, std::move(problem));
    }
    grouped.emit(out);
  }
};

}  // namespace

std::unique_ptr<Check> make_thread_level() { return std::make_unique<ThreadLevel>(); }

}  // namespace smtrace::analyzer::checks
