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
// - MPI_THREAD_MULTIPLE: collectives on one communicator from two threads
//   must be ordered by the program (MPI-3.1 section 12.4.2: "it is up to
//   the user to make sure the calls are correctly ordered, using
//   interthread synchronization"), and two calls that wait on or test the
//   same request from two threads must be too ("a program in which two
//   threads block, waiting on the same request, is erroneous"). And two
//   receives (or sends) of one channel posted by threads that nothing
//   orders are logically concurrent and can match either way (section
//   3.5): reported where the other way does not fit (crossed()).
// Where the tracer recorded the rank's thread synchronization
// (RankHeader::thread_sync != 0, threads.hpp), the rules above are also
// judged on happens-before, not only on the recorded timing: under
// SERIALIZED, two MPI calls of different threads that no thread
// synchronization (or MPI communication) orders are an error even when the
// run happened to keep them apart; under MULTIPLE, so are two collectives on
// one communicator and two completion calls of one request. The pass keeps the candidates, each pair of calls of
// two threads consecutive in the rank's seq order (of all MPI calls; of
// one communicator's collectives), and finish() asks happens-before about
// them: when every consecutive pair is ordered, all are (the recorded order
// of a correctly synchronized program is its happens-before order).
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
#include <set>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/grouped.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/signature.hpp"
#include "analyzer/threads.hpp"
#include "analyzer/wire.hpp"

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


// The last MPI call of one thread: the one that ends last (calls of one
// thread do not overlap).
struct Last {
  int64_t end = 0;
  bool open = false;  // pending: lasts to the end of the run
  Event call;         // arguments and stack cleared
};

// Two calls of two threads, consecutive in seq order (of all MPI calls, or
// of one communicator's collectives), that happens-before must order.
struct Candidate {
  uint64_t first_seq = 0, second_seq = 0;
  uint32_t first_thread = 0, second_thread = 0;
  uint32_t first_site = 0, second_site = 0;
  format::Call first_call = format::Call::unspecified, second_call = format::Call::unspecified;
  uint8_t collective = 0;  // 1: collectives on one communicator, 2: completions of one request (MULTIPLE)
};

// Write or read candidate `c` field by field (its padding is no value).
template <class Coder, class C>
void code_candidate(Coder& coder, C& c) {
  coder(c.first_seq);
  coder(c.second_seq);
  coder(c.first_thread);
  coder(c.second_thread);
  coder(c.first_site);
  coder(c.second_site);
  coder(c.first_call);
  coder(c.second_call);
  coder(c.collective);
}

// The last call of one order (of the rank, or of a communicator's collectives).
struct LastCall {
  uint64_t seq = 0;
  uint32_t thread = 0, site = 0;
  format::Call call = format::Call::unspecified;
  bool seen = false;
};

// At most this many candidates are kept per rank (a program whose threads
// alternate very often: the first ones say enough).
constexpr std::size_t k_max_candidates = 1u << 16;
// At most this many of them are put to happens-before per rank, and per
// pair of threads and call sites (finish()).
constexpr uint32_t k_max_questions = 1u << 14, k_max_questions_per_sites = 64;

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
    if (!checked(m_data.header) && !ordered_collectives(m_data.header)) return EventSet::none();
    return EventSet::of([](const format::CallTraits& t) {
      return format::is_mpi(t.family) && t.role != format::Role::local_access;
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
  std::vector<Candidate> candidates;  // for finish(): pairs happens-before must order
  LastCall init;                      // MPI_Init(_thread), for the candidates' findings
  struct ThreadPair {
    uint32_t low = 0, high = 0;
  };
  std::vector<ThreadPair> pairs;      // the pairs of threads found overlapping in time
  int32_t level() const { return m_data.header.thread_level; }
  uint32_t rank() const { return m_data.rank; }

 private:
  // (Out of line: event()'s early return stays a few instructions.)
  [[gnu::noinline]] void check(const Event& e) {
    if (!format::is_mpi(format::call_traits(e.call).family) || format::call_traits(e.call).role == format::Role::local_access) {
      return;
    }
    if (e.call == format::Call::Init || e.call == format::Call::Init_thread) {
      m_init = slim(e);
      init = LastCall{e.seq, e.thread, e.site, e.call, true};
      return;
    }
    if (m_collectives) {
      const format::CallTraits& t = format::call_traits(e.call);
      if (t.flow != format::Flow::none) follow(m_last_collective[e.comm], e, 1);
      if (format::completes_requests(t.request)) {
        for (uint64_t request : e.requests) {
          if (request != 0) follow(m_last_completion[request], e, 2);
        }
      }
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
    if (m_modelled) follow(m_last_call, e, 0);
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
      pairs.push_back({std::min(thread, e.thread), std::max(thread, e.thread)});
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
    m_collectives = ordered_collectives(m_data.header);
    m_active = checked(m_data.header) || m_collectives;
    m_main_only = m_level == k_single || m_level == k_funneled;
    m_modelled = m_data.header.thread_sync != 0;
  }
  // Call `e` follows `last` in its order: keep the pair when another thread
  // made the last call.
  void follow(LastCall& last, const Event& e, uint8_t collective) {
    if (last.seen && last.thread != e.thread && candidates.size() < k_max_candidates) {
      candidates.push_back(Candidate{last.seq, e.seq, last.thread, e.thread, last.site, e.site, last.call, e.call,
                                     collective});
    }
    last = LastCall{e.seq, e.thread, e.site, e.call, true};
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
    return reported(pairs, a, b);
  }

 public:
  // Return true when `header` gives MPI_THREAD_MULTIPLE and the rank's
  // thread synchronization was recorded: its collectives (and its
  // threads' matches, ThreadLevel::crossed) are checked.
  static bool ordered_collectives(const format::RankHeader& header) {
    return !header.recovered && (format::lacks(header) & content_bit(format::Content::thread_level)) == 0 &&
           header.thread_level == k_serialized + 1 && header.thread_sync != 0;  // (and its completions)
  }
  // Return true when `list` holds the pair of threads `a` and `b`.
  static bool reported(const std::vector<ThreadPair>& list, uint32_t a, uint32_t b) {
    for (const ThreadPair& p : list) {
      if (p.low == std::min(a, b) && p.high == std::max(a, b)) return true;
    }
    return false;
  }

 private:

  const RankData& m_data;
  bool m_started = false, m_active = false;
  bool m_main_only = false;  // the level is MPI_THREAD_SINGLE or FUNNELED
  bool m_modelled = false;   // the rank's threads are lanes of happens-before
  bool m_collectives = false;  // MULTIPLE: only collectives on one communicator are checked
  LastCall m_last_call;        // SERIALIZED
  std::unordered_map<uint64_t, LastCall> m_last_collective;  // communicator -> its last collective
  std::unordered_map<uint64_t, LastCall> m_last_completion;  // request -> the last call that waited on or tested it
  int32_t m_level = 0;
  std::optional<Event> m_init;
  std::unordered_map<uint32_t, Last> m_last;
  // (thread, call, site) -> (index in problems, calls)
  std::map<std::tuple<uint32_t, format::Call, uint32_t>, std::pair<std::size_t, uint64_t>> m_repeats;
};

class ThreadLevel final : public Check {
 public:
  std::string_view name() const override { return "thread-level"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "MPI calls from a thread other than the main one under MPI_THREAD_SINGLE or FUNNELED, "
           "calls of two threads at once (or not ordered by thread synchronization) under "
           "MPI_THREAD_SERIALIZED, collectives of two threads on one communicator, or waits of two threads "
           "on one request, not so ordered under MPI_THREAD_MULTIPLE, nor two receives (or sends) of one channel "
           "that can then match the other way round, where that order is erroneous";
  }
  format::ContentSet needs() const override { return content_bit(format::Content::thread_level); }
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // finish() groups each rank's problems and asks happens-before about its candidates.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override {
    const auto& p = dynamic_cast<const Pass&>(pass);
    save_problems(p.problems, out);
    out.list(p.candidates, code_candidate<WireWriter, const Candidate>);
    out.plain(p.pairs);
    out.put(p.init.seq);
    out.put(p.init.thread);
    out.put(p.init.site);
    out.put(p.init.call);
    out.put<uint8_t>(p.init.seen);
  }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    auto p = std::make_unique<Pass>(data);
    p->problems = load_problems(in);
    in.list(p->candidates, code_candidate<WireReader, Candidate>);
    in.plain(p->pairs);
    p->init.seq = in.get<uint64_t>();
    p->init.thread = in.get<uint32_t>();
    p->init.site = in.get<uint32_t>();
    p->init.call = in.get<format::Call>();
    p->init.seen = in.get<uint8_t>() != 0;
    return p;
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    Grouped grouped(std::string(name()), severity());
    for (auto& pass : passes) {
      auto* p = dynamic_cast<Pass*>(pass.get());
      if (!p) continue;
      for (RawProblem& problem : p->problems) grouped.add(ctx, std::move(problem));
      unordered(ctx, *p, grouped);
    }
    crossed(ctx, grouped);
    grouped.emit(out);
  }

 private:
  // Add the candidates of pass `p` that happens-before does not order: one
  // finding per pair of threads (and per kind), none for a pair of threads
  // already found overlapping in time.
  static void unordered(const Context& ctx, const Pass& p, Grouped& grouped) {
    if (p.candidates.empty()) return;
    const HappensBefore& hb = ctx.happens_before();
    const uint32_t rank = p.rank();
    std::vector<Pass::ThreadPair> found[3] = {p.pairs, {}, {}};
    // Questions asked per pair of call sites (and per rank): a pattern that
    // repeats (a loop under one lock) is judged on its first occurrences,
    // so that a trace whose happens-before falls back to graph searches
    // stays fast.
    std::map<std::tuple<uint8_t, uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> asked;
    uint32_t questions = 0;
    for (const Candidate& c : p.candidates) {
      std::vector<Pass::ThreadPair>& list = found[c.collective];
      if (Pass::reported(list, c.first_thread, c.second_thread)) continue;
      uint32_t& n = asked[{c.collective, c.first_thread, c.second_thread, c.first_site, c.second_site}];
      if (n >= k_max_questions_per_sites || questions >= k_max_questions) continue;
      ++n;
      ++questions;
      if (hb.ordered({rank, c.first_seq}, {rank, c.second_seq})) continue;
      list.push_back({std::min(c.first_thread, c.second_thread), std::max(c.first_thread, c.second_thread)});
      RawProblem problem;
      const std::string_view first = format::call_name(c.first_call), second = format::call_name(c.second_call);
      if (c.collective == 2) {
        problem.problem = "one request in two threads";
        problem.message = fmt::format(
            "{} of thread {} and {} of thread {} of rank {} wait on or test the same request, and no thread "
            "synchronization orders them",
            second, c.second_thread, first, c.first_thread, rank);
      } else if (c.collective) {
        problem.problem = "unordered collectives";
        problem.message = fmt::format(
            "{} of thread {} and {} of thread {} of rank {} are collectives on the same communicator that "
            "no thread synchronization orders: their order, and so their matching with the other ranks' "
            "collectives, is left to chance",
            second, c.second_thread, first, c.first_thread, rank);
      } else {
        problem.problem = "unordered calls";
        problem.message = fmt::format(
            "{} of thread {} and {} of thread {} of rank {} are not ordered by any thread synchronization, "
            "but MPI provided MPI_THREAD_SERIALIZED: no two threads may be inside MPI at once",
            second, c.second_thread, first, c.first_thread, rank);
      }
      problem.sites.push_back(RawSite{rank, c.second_seq, c.second_call, c.second_site,
                                      fmt::format("thread {} calls this", c.second_thread)});
      problem.sites.push_back(RawSite{rank, c.first_seq, c.first_call, c.first_site,
                                      fmt::format("thread {} calls this, and nothing orders it before the other",
                                                  c.first_thread)});
      if (c.collective == 2) {
        problem.notes.push_back(
            "a program in which two threads block waiting on the same request is erroneous, and a request "
            "may not appear in two concurrent MPI_Wait/MPI_Test calls (MPI-3.1 section 12.4.2)");
      } else if (c.collective) {
        problem.notes.push_back(
            "collectives on one communicator match in the order each process issues them; threads that "
            "issue them concurrently must order them with interthread synchronization (MPI-3.1 section "
            "12.4.2)");
      } else {
        problem.notes.push_back(fmt::format(
            "MPI provided MPI_THREAD_SERIALIZED to rank {} (MPI-3.1 section 12.4.3): the program must "
            "serialize its MPI calls even where this run happened to keep them apart",
            rank));
      }
      if (p.init.seen) {
        problem.sites.push_back(RawSite{rank, p.init.seq, p.init.call, p.init.site,
                                        fmt::format("MPI provided {} here", level_name(p.level()))});
      }
      grouped.add(ctx, std::move(problem));
    }
  }

  // Two matched messages of one channel (communicator, sender, receiver)
  // whose receives (or sends) are posted by two lanes of a rank under
  // MPI_THREAD_MULTIPLE that nothing orders: "if two receive operations that
  // are logically concurrent receive two successively sent messages, then
  // the two messages can match the two receives in either order", and two
  // logically concurrent sends "can be received in any order" (MPI-3.1
  // section 3.5). Reported where the other order is erroneous: a message
  // that then does not fit its receive (type-mismatch's rule). Each
  // matched receive is paired with the k_window matched receives of its
  // channel before it.
  static constexpr std::size_t k_window = 4;
  struct Taken {
    uint32_t recv = 0;  // the receive's op index on its rank
    OpRef send;
  };
  static void crossed(const Context& ctx, Grouped& grouped) {
    const Replay& replay = ctx.replay();
    const uint32_t world = ctx.world_size();
    std::vector<uint8_t> split(world, 0);
    bool any = false;
    for (uint32_t r = 0; r < world; ++r) {
      const RankData& data = ctx.rank(r);
      if (!data.present || !Pass::ordered_collectives(data.header)) continue;
      const RankThreads& threads = replay.threads(r);
      split[r] = threads.modelled && threads.lanes.size() > 1;
      any = any || split[r];
    }
    if (!any) return;
    const HappensBefore& hb = ctx.happens_before();
    for (uint32_t r = 0; r < world; ++r) {
      if (!ctx.rank(r).present) continue;
      const auto& ops = replay.p2p(r);
      std::unordered_map<uint64_t, std::vector<Taken>> channels;  // (comm, sender) -> its last matched receives
      std::set<std::tuple<uint32_t, uint32_t, uint32_t>> reported;  // (site, site, send site)
      uint32_t questions = 0;
      for (uint32_t i = 0; i < ops.size() && questions < k_max_questions; ++i) {
        const P2POp& recv = ops[i];
        // A matched probe's message is its MPI_Mrecv's: the receive's buffer
        // is given once the message is known (sized from the probe's status).
        if (recv.send || recv.cancelled || format::call_traits(recv.call).role == format::Role::probe) continue;
        const auto matched = replay.matched({r, i});
        if (!matched || (!split[r] && !split[matched->rank])) continue;
        std::vector<Taken>& before = channels[(uint64_t{recv.comm} << 32) | matched->rank];
        for (const Taken& earlier : before) {
          if (questions >= k_max_questions) break;
          if (auto p = swap_problem(ctx, hb, split, r, earlier, Taken{i, *matched}, reported, questions))
            grouped.add(ctx, std::move(*p));
        }
        if (before.size() == k_window) before.erase(before.begin());
        before.push_back(Taken{i, *matched});
      }
    }
  }

  // The problem of rank `r`'s receives `a` (posted first) and `b` taking
  // each other's message, if that order is possible and erroneous.
  static std::optional<RawProblem> swap_problem(const Context& ctx, const HappensBefore& hb,
                                                const std::vector<uint8_t>& split, uint32_t r, const Taken& a,
                                                const Taken& b,
                                                std::set<std::tuple<uint32_t, uint32_t, uint32_t>>& reported,
                                                uint32_t& questions) {
    const Replay& replay = ctx.replay();
    const P2POp& ra = replay.p2p(r)[a.recv];
    const P2POp& rb = replay.p2p(r)[b.recv];
    const uint32_t s = a.send.rank;
    const P2POp& sa = replay.p2p(s)[a.send.index];
    const P2POp& sb = replay.p2p(s)[b.send.index];
    const RankThreads& rt = replay.threads(r);
    const RankThreads& st = replay.threads(s);
    const uint32_t lane_ra = rt.lane(ra.seq), lane_rb = rt.lane(rb.seq);
    const uint32_t lane_sa = st.lane(sa.seq), lane_sb = st.lane(sb.seq);
    const bool receives = split[r] && lane_ra != lane_rb;
    const bool sends = split[s] && lane_sa != lane_sb;
    if (!receives && !sends) return std::nullopt;
    // Each receive's envelope must take the other message (the source is
    // the same: both took a message of rank s on this communicator).
    auto takes = [](const P2POp& recv, const P2POp& send) {
      return recv.tag == format::k_any_tag || recv.tag == send.tag;
    };
    if (!takes(ra, sb) || !takes(rb, sa)) return std::nullopt;
    const Payload pa = replay.payload({r, a.recv}), pb = replay.payload({r, b.recv});
    const Payload qa = replay.payload(a.send), qb = replay.payload(b.send);
    const TransferSide sent_a{&ctx.rank(s), qa.datatype, qa.count}, sent_b{&ctx.rank(s), qb.datatype, qb.count};
    const TransferSide room_a{&ctx.rank(r), pa.datatype, pa.count}, room_b{&ctx.rank(r), pb.datatype, pb.count};
    // a takes b's message, b takes a's.
    Fit into_a = transfer_fit(sent_b, room_a), into_b = transfer_fit(sent_a, room_b);
    if (into_a.kind == Fit::Kind::fine && into_b.kind == Fit::Kind::fine) return std::nullopt;
    const bool a_bad = into_a.kind != Fit::Kind::fine;
    const P2POp& bad_recv = a_bad ? ra : rb;
    const P2POp& bad_send = a_bad ? sb : sa;
    if (reported.count({ra.site, rb.site, bad_send.site})) return std::nullopt;
    ++questions;
    const EventRef ea{r, ra.seq}, eb{r, rb.seq}, fa{s, sa.seq}, fb{s, sb.seq};
    // (The receives' lanes first: a rank's concurrent sends matter only
    // where its receives are ordered.)
    const bool by_receives = receives && hb.concurrent(ea, eb);
    if (!by_receives && !(sends && hb.concurrent(fa, fb))) return std::nullopt;
    // Neither receive may have to complete before the message it would take
    // is sent.
    if (hb.ordered({r, ra.done() ? ra.done_seq() : ra.seq}, fb) ||
        hb.ordered({r, rb.done() ? rb.done_seq() : rb.seq}, fa))
      return std::nullopt;
    reported.insert({ra.site, rb.site, bad_send.site});
    const Fit& fit = a_bad ? into_a : into_b;
    const Payload sent = a_bad ? qb : qa, room = a_bad ? pa : pb;
    const std::string what = describe_buffer(ctx.rank(s), sent.datatype, sent.count);
    const std::string into = describe_buffer(ctx.rank(r), room.datatype, room.count);
    const std::string how = fit.kind == Fit::Kind::mismatch ? "has another type signature than" : "does not fit";
    RawProblem p;
    if (by_receives) {
      p.problem = "crossed receives";
      p.message = fmt::format(
          "{} of {} and {} of {} of rank {} can take each other's message of rank {}, and no thread "
          "synchronization orders them: the other way round, the message of {} {} the receive buffer of {}",
          format::call_name(rb.call), rt.lane_name(lane_rb), format::call_name(ra.call), rt.lane_name(lane_ra), r, s,
          what, how, into);
      p.notes.push_back(
          "two receives that are logically concurrent (posted by threads that no synchronization orders) can "
          "match two successively sent messages in either order (MPI-3.1 section 3.5)");
    } else {
      p.problem = "crossed sends";
      p.message = fmt::format(
          "{} of {} and {} of {} of rank {} send to rank {} messages that either of its receives can take, and "
          "no thread synchronization orders them: in the other order, the message of {} {} the receive "
          "buffer of {}",
          format::call_name(sb.call), st.lane_name(lane_sb), format::call_name(sa.call), st.lane_name(lane_sa), s, r,
          what, how, into);
      p.notes.push_back(
          "two sends that are logically concurrent (made by threads that no synchronization orders) can be "
          "received in either order (MPI-3.1 section 3.5)");
    }
    // The unordered pair first (the receives, or the sends), then the
    // other side's operation of the message that does not fit.
    const P2POp& other_recv = a_bad ? rb : ra;
    const P2POp& other_send = a_bad ? sa : sb;
    const RawSite recv_site{r, bad_recv.seq, bad_recv.call, bad_recv.site,
                            fmt::format("receives here ({}), and can take the other message ({})",
                                        rt.lane_name(rt.lane(bad_recv.seq)), fit.detail)};
    const RawSite send_site{s, bad_send.seq, bad_send.call, bad_send.site,
                            fmt::format("sends the message that does not fit ({})", st.lane_name(st.lane(bad_send.seq)))};
    if (by_receives) {
      p.sites.push_back(recv_site);
      p.sites.push_back(RawSite{r, other_recv.seq, other_recv.call, other_recv.site,
                                fmt::format("the other receive ({})", rt.lane_name(rt.lane(other_recv.seq)))});
      p.sites.push_back(send_site);
    } else {
      p.sites.push_back(send_site);
      p.sites.push_back(RawSite{s, other_send.seq, other_send.call, other_send.site,
                                fmt::format("the other send ({})", st.lane_name(st.lane(other_send.seq)))});
      p.sites.push_back(recv_site);
    }
    return p;
  }
};

}  // namespace

std::unique_ptr<Check> make_thread_level() { return std::make_unique<ThreadLevel>(); }

}  // namespace smtrace::analyzer::checks
