// epoch-lifecycle: RMA synchronization used out of order (MPI-3.1 section
// 11.5). Per rank and window, in program order:
// - an RMA communication call (Put, Get, the accumulates) needs an access
//   epoch to its target: a fence epoch (after a fence without
//   MPI_MODE_NOSUCCEED), a PSCW access epoch whose start group holds the
//   target, a lock on the target, or lock_all; request-based calls (Rput,
//   Rget, ...) a passive target epoch only (section 11.3.5). Calls to
//   MPI_PROC_NULL move nothing and are not checked;
// - a fence with MPI_MODE_NOPRECEDE must not follow RMA calls of a fence
//   epoch (it completes none of them), and the members of the window must
//   agree on NOPRECEDE and NOSUCCEED at each fence (section 11.5.5);
// - MPI_Win_complete needs an open MPI_Win_start, MPI_Win_wait and
//   MPI_Win_test an open MPI_Win_post; a start or post while the previous
//   one is still open is nested;
// - MPI_Win_unlock(t) needs MPI_Win_lock(t), unlock_all needs lock_all; a
//   second lock on the same target, or a lock while lock_all holds, is
//   nested; flushes need a passive target epoch on their target;
// - MPI_Win_free needs every epoch closed and every RMA call of a fence
//   epoch completed by a fence (section 11.2.5); at MPI_Finalize, epochs on
//   windows never freed must be closed too.
// Across ranks, on a trace where every rank finalized: the k-th post of
// target t naming origin o matches the k-th start of o naming t (as
// happens-before pairs them); a post or start without its partner is an
// epoch that never corresponds.
//
// A fence opens an epoch only for the RMA calls that follow it before the
// next fence; a program may therefore call a fence and then use locks. Such
// mixes are not reported (the standard does not forbid them where no RMA
// call of the fence epoch is pending); a start, lock or lock_all while an
// RMA call of the fence epoch is pending is (two access epochs of one
// window overlap).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/grouped.hpp"
#include "analyzer/comms.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::EpochEffect;
using format::Event;
namespace assert_flag = format::assert_flag;

// One post, start or fence of a rank, for the checks across ranks.
struct SyncRecord {
  uint32_t window = 0;            // rank-local id
  uint64_t seq = 0;
  uint32_t site = 0;
  format::Call call = format::Call::unspecified;
  std::vector<uint32_t> group;    // post/start: world ranks of the group
  uint32_t asserts = 0;           // fence
  EpochEffect effect = EpochEffect::none;
};

constexpr auto k_code_sync = [](auto& c, auto& s) {
  c(s.window);
  c(s.seq);
  c(s.site);
  c(s.call);
  c.list(s.group, [](auto& cg, auto& rank) { cg(rank); });
  c(s.asserts);
  c(s.effect);
};

struct WindowState {
  uint32_t comm = 0;                        // rank-local communicator id
  bool fenced = false;                      // a fence without NOSUCCEED: RMA calls until the next fence are fine
  std::optional<RawSite> nosucceed;         // the last fence, when it asserted NOSUCCEED
  std::optional<RawSite> fence_op;          // the first RMA call of the current fence epoch
  std::optional<RawSite> start, post;       // open PSCW epochs
  std::vector<uint32_t> start_group;        // world ranks
  std::map<int32_t, RawSite> locks;         // target (rank in the window's comm) -> the lock
  std::optional<RawSite> lock_all;
};

class Pass final : public RankPass {
 public:
  explicit Pass(const RankData& data) : m_data(data) {}

  void event(const Event& e) override {
    const format::CallTraits& t = format::call_traits(e.call);
    // Calls that failed (MPI_ERRORS_RETURN) are checked like the others, but
    // change no epoch.
    if (t.family != format::Family::rma) return;
    m_event = &e;
    const bool done = !e.pending && e.rc == 0;
    if (t.resource == format::Resource::win_new || t.resource == format::Resource::win_dynamic) {
      if (done) {
        WindowState fresh;
        fresh.comm = e.comm;
        m_windows[e.window] = std::move(fresh);
      }
      return;
    }
    auto it = m_windows.find(e.window);
    if (it == m_windows.end()) return;  // a window whose creation the trace does not hold
    WindowState& w = it->second;
    if (t.role == format::Role::rma_comm) return access(e, t, w);
    if (t.resource == format::Resource::win_free) {
      close_all(w, "MPI_Win_free");
      if (done) m_windows.erase(it);
      return;
    }
    sync(e, t, w);
  }

  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) { return t.family == format::Family::rma; });
  }

  void end() override {
    if (!m_data.finalized()) return;
    for (auto& [window, w] : m_windows) {
      m_event = nullptr;
      close_all(w, "MPI_Finalize");
    }
  }

  std::vector<RawProblem> problems;
  std::vector<SyncRecord> syncs;

 private:
  RawSite here(std::string note) const { return raw_site(m_data.rank, *m_event, std::move(note)); }

  void add(std::string problem, std::string message, std::vector<RawSite> sites, std::vector<std::string> notes = {}) {
    if (problems.size() >= 4096 || sites.empty()) return;
    problems.push_back(RawProblem{std::move(problem), std::move(message), std::move(sites), std::move(notes)});
  }

  // Return the world rank of rank `member` of communicator `comm`.
  std::optional<uint32_t> world_of(uint32_t comm, int32_t member) const {
    if (member < 0) return std::nullopt;
    if (comm == format::k_comm_world) return static_cast<uint32_t>(member);
    if (comm == format::k_comm_self) return member == 0 ? std::optional<uint32_t>(m_data.rank) : std::nullopt;
    const format::CommDef* def = m_data.comm(comm);
    if (!def || static_cast<std::size_t>(member) >= def->world_ranks.size()) return std::nullopt;
    return def->world_ranks[static_cast<std::size_t>(member)];
  }

  std::vector<uint32_t> group_of(uint32_t group) const {
    const format::CommDef* def = m_data.comm(group);
    return def ? def->world_ranks : std::vector<uint32_t>{};
  }

  void access(const Event& e, const format::CallTraits& t, WindowState& w) {
    if (!e.peer || *e.peer == format::k_proc_null || *e.peer < 0) return;
    const int32_t target = *e.peer;
    const bool passive = w.lock_all || w.locks.count(target);
    const std::string call(format::call_name(e.call));
    if (t.request == format::RequestEffect::create) {
      if (!passive)
        add("request outside passive", fmt::format("{} to rank {} outside a passive target epoch", call, target),
            {here("request-based RMA calls are allowed in lock/lock_all epochs only (MPI-3.1 section 11.3.5)")});
      return;
    }
    if (passive) return;
    if (w.start) {
      const auto world = world_of(w.comm, target);
      if (!world || std::find(w.start_group.begin(), w.start_group.end(), *world) != w.start_group.end()) return;
    }
    if (w.fenced) {
      if (!w.fence_op) w.fence_op = here("the first RMA call of this fence epoch");
      return;
    }
    std::vector<RawSite> sites{here("no epoch gives access to this target")};
    std::vector<std::string> notes{"open an access epoch first: MPI_Win_fence, MPI_Win_start with the target in its "
                                   "group, MPI_Win_lock on the target, or MPI_Win_lock_all (MPI-3.1 section 11.5)"};
    if (w.nosucceed) {
      RawSite f = *w.nosucceed;
      f.note = "this fence asserted MPI_MODE_NOSUCCEED: no RMA call may follow it before the next fence";
      sites.push_back(std::move(f));
    } else if (w.start) {
      RawSite s = *w.start;
      s.note = fmt::format("the open access epoch, whose group does not hold rank {}", target);
      sites.push_back(std::move(s));
    }
    add("outside epoch", fmt::format("{} to rank {} outside any access epoch", call, target), std::move(sites),
        std::move(notes));
  }

  // An RMA synchronization call; an unsuccessful MPI_Win_test changes
  // nothing, but needs its post all the same.
  void sync(const Event& e, const format::CallTraits& t, WindowState& w) {
    const EpochEffect effect = format::epoch_of(e);
    const std::string call(format::call_name(e.call));
    const bool done = !e.pending && e.rc == 0;
    switch (t.epoch) {
      case EpochEffect::fence: {
        syncs.push_back({e.window, e.seq, e.site, e.call, {}, e.assert_flags, EpochEffect::fence});
        if ((e.assert_flags & assert_flag::noprecede) && w.fence_op) {
          RawSite op = *w.fence_op;
          op.note = "an RMA call of the epoch this fence should complete";
          add("noprecede", fmt::format("{} asserts MPI_MODE_NOPRECEDE, but RMA calls were made since the last fence",
                                       call),
              {here("MPI_MODE_NOPRECEDE: this fence completes no RMA call"), std::move(op)});
        }
        if (!done) return;
        w.fence_op.reset();
        w.fenced = !(e.assert_flags & assert_flag::nosucceed);
        if (w.fenced) w.nosucceed.reset();
        else w.nosucceed = here("");
        return;
      }
      case EpochEffect::start:
        syncs.push_back({e.window, e.seq, e.site, e.call, group_of(e.group), e.assert_flags, EpochEffect::start});
        inside_fence_epoch(w, call);
        if (w.start) {
          add("nested start", "MPI_Win_start while the access epoch of an earlier MPI_Win_start is open",
              {here("a second access epoch on this window"), reopen(*w.start, "the open one, never completed")});
        }
        if (done) {
          w.start = here("");
          w.start_group = group_of(e.group);
        }
        return;
      case EpochEffect::complete:
        if (!w.start) {
          add("complete without start", "MPI_Win_complete without a matching MPI_Win_start",
              {here("no access epoch is open on this window")});
        }
        if (done) w.start.reset();
        return;
      case EpochEffect::post:
        syncs.push_back({e.window, e.seq, e.site, e.call, group_of(e.group), e.assert_flags, EpochEffect::post});
        if (w.post) {
          add("nested post", "MPI_Win_post while the exposure epoch of an earlier MPI_Win_post is open",
              {here("a second exposure epoch on this window"), reopen(*w.post, "the open one, never waited for")});
        }
        if (done) w.post = here("");
        return;
      case EpochEffect::wait: case EpochEffect::test:
        if (!w.post) {
          add("wait without post", fmt::format("{} without a matching MPI_Win_post", call),
              {here("no exposure epoch is open on this window")});
          return;
        }
        if (effect == EpochEffect::wait) w.post.reset();  // a successful test closes it too
        return;
      case EpochEffect::lock: {
        const int32_t target = e.peer.value_or(-1);
        inside_fence_epoch(w, call);
        if (auto held = w.locks.find(target); held != w.locks.end()) {
          add("nested lock", fmt::format("MPI_Win_lock on rank {}, which this rank already holds locked", target),
              {here("the second lock"), reopen(held->second, "the first lock, not unlocked since")});
        } else if (w.lock_all) {
          add("nested lock", fmt::format("MPI_Win_lock on rank {} inside a lock_all epoch", target),
              {here("the lock"), reopen(*w.lock_all, "MPI_Win_lock_all already locks every target")});
        }
        if (done) w.locks[target] = here("");
        return;
      }
      case EpochEffect::lock_all:
        inside_fence_epoch(w, call);
        if (w.lock_all) {
          add("nested lock", "MPI_Win_lock_all inside a lock_all epoch",
              {here("the second lock_all"), reopen(*w.lock_all, "the first, not unlocked since")});
        } else if (!w.locks.empty()) {
          add("nested lock", fmt::format("MPI_Win_lock_all while rank {} is locked", w.locks.begin()->first),
              {here("the lock_all"), reopen(w.locks.begin()->second, "this lock is still held")});
        }
        if (done) w.lock_all = here("");
        return;
      case EpochEffect::unlock: {
        const int32_t target = e.peer.value_or(-1);
        auto held = w.locks.find(target);
        if (held == w.locks.end()) {
          std::vector<RawSite> sites{here(fmt::format("rank {} is not locked by this rank", target))};
          if (w.lock_all) sites.push_back(reopen(*w.lock_all, "MPI_Win_lock_all is closed by MPI_Win_unlock_all"));
          add("unlock without lock", fmt::format("MPI_Win_unlock on rank {} without a matching MPI_Win_lock", target),
              std::move(sites));
          return;
        }
        if (done) w.locks.erase(held);
        return;
      }
      case EpochEffect::unlock_all:
        if (!w.lock_all) {
          add("unlock without lock", "MPI_Win_unlock_all without a matching MPI_Win_lock_all",
              {here("no lock_all epoch is open on this window")});
          return;
        }
        if (done) w.lock_all.reset();
        return;
      case EpochEffect::flush: case EpochEffect::flush_local: {
        const int32_t target = e.peer.value_or(-1);
        if (!w.lock_all && !w.locks.count(target))
          add("flush outside passive", fmt::format("{} on rank {} outside a passive target epoch on it", call, target),
              {here("flushes are allowed in lock/lock_all epochs only (MPI-3.1 section 11.5.4)")});
        return;
      }
      case EpochEffect::flush_all: case EpochEffect::flush_local_all:
        if (!w.lock_all && w.locks.empty())
          add("flush outside passive", fmt::format("{} outside a passive target epoch", call),
              {here("flushes are allowed in lock/lock_all epochs only (MPI-3.1 section 11.5.4)")});
        return;
      case EpochEffect::none: case EpochEffect::sync: case EpochEffect::free:
        return;
    }
  }

  // An access epoch (start, lock, lock_all) opened while RMA calls of the
  // fence epoch are pending: that epoch ends only at the next fence, and two
  // access epochs of one window at one process must not overlap (MPI-3.1
  // section 11.5).
  void inside_fence_epoch(const WindowState& w, const std::string& call) {
    if (!w.fence_op) return;
    add("epoch inside fence epoch",
        fmt::format("{} opens an access epoch while RMA calls of a fence epoch are pending", call),
        {here("the new access epoch"), reopen(*w.fence_op, "an RMA call of the fence epoch, which only the next "
                                                           "MPI_Win_fence completes")},
        {"close the fence epoch with MPI_Win_fence (MPI_MODE_NOSUCCEED where no RMA call follows) before "
         "starting another access epoch on the window: access epochs of one window at one process must be "
         "disjoint (MPI-3.1 section 11.5)"});
  }

  static RawSite reopen(RawSite s, std::string note) {
    s.note = std::move(note);
    return s;
  }

  // Win_free (m_event) or the end of a finalized rank (m_event null): every
  // epoch must be closed.
  void close_all(const WindowState& w, const char* at) {
    std::vector<std::pair<RawSite, std::string>> open;
    for (const auto& [target, lock] : w.locks) open.push_back({lock, fmt::format("the lock on rank {}", target)});
    if (w.lock_all) open.push_back({*w.lock_all, "the lock_all epoch"});
    if (w.start) open.push_back({*w.start, "the access epoch of MPI_Win_start (no MPI_Win_complete)"});
    if (w.post) open.push_back({*w.post, "the exposure epoch of MPI_Win_post (no MPI_Win_wait)"});
    if (w.fence_op) open.push_back({*w.fence_op, "an RMA call no fence completed"});
    if (open.empty()) return;
    std::vector<RawSite> sites;
    if (m_event) sites.push_back(here(fmt::format("{} with an epoch open", at)));
    for (auto& [site, what] : open) sites.push_back(reopen(site, what + " is still open"));
    const std::string first = open.front().second;
    add("free with open epoch",
        m_event ? fmt::format("MPI_Win_free while {} is open", first)
                : fmt::format("{} is still open at MPI_Finalize", first),
        std::move(sites),
        {"close every epoch (unlock, complete, wait, or a final fence) before the window is freed (MPI-3.1 "
         "section 11.2.5)"});
  }

  const RankData& m_data;
  const Event* m_event = nullptr;
  std::unordered_map<uint32_t, WindowState> m_windows;
};

class EpochLifecycle final : public Check {
 public:
  std::string_view name() const override { return "epoch-lifecycle"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "RMA calls outside an epoch, unlock without lock, nested locks or epochs, fence/PSCW misuse, "
           "MPI_Win_free with an open epoch";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // The passes check each rank's own order (problems) and keep its fences,
  // posts and starts (syncs); finish() pairs those across ranks by window
  // identity, which needs the whole comm table.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override {
    const auto& p = dynamic_cast<const Pass&>(pass);
    save_problems(p.problems, out);
    out.list(p.syncs, k_code_sync);
  }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    auto pass = std::make_unique<Pass>(data);
    pass->problems = load_problems(in);
    in.list(pass->syncs, k_code_sync);
    return pass;
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    Grouped grouped(std::string(name()), severity());
    std::vector<Pass*> ranks(ctx.world_size(), nullptr);
    for (uint32_t r = 0; r < passes.size() && r < ranks.size(); ++r) ranks[r] = dynamic_cast<Pass*>(passes[r].get());
    for (Pass* pass : ranks) {
      if (!pass) continue;
      for (RawProblem& problem : pass->problems) grouped.add(ctx, std::move(problem));
    }
    bool complete = ctx.world_size() > 0;
    for (uint32_t r = 0; r < ctx.world_size(); ++r) complete = complete && ctx.rank(r).present && ctx.rank(r).finalized();
    fence_asserts(ctx, ranks, grouped);
    if (complete) pscw_pairs(ctx, ranks, grouped);
    grouped.emit(out);
  }

 private:
  // The k-th fence of every member of a window: NOPRECEDE and NOSUCCEED
  // given by all members or by none.
  static void fence_asserts(const Context& ctx, const std::vector<Pass*>& ranks, Grouped& grouped) {
    constexpr uint32_t k_mask = assert_flag::noprecede | assert_flag::nosucceed;
    struct Seen {
      uint32_t rank;
      const SyncRecord* fence;
    };
    std::map<std::pair<uint32_t, uint32_t>, Seen> first;  // (global window, k) -> first member's fence
    std::map<uint32_t, bool> reported;
    for (uint32_t r = 0; r < ranks.size(); ++r) {
      if (!ranks[r]) continue;
      std::unordered_map<uint32_t, uint32_t> count;
      for (const SyncRecord& s : ranks[r]->syncs) {
        if (s.effect != EpochEffect::fence) continue;
        const uint32_t g = ctx.comms().window(r, s.window);
        if (g == k_no_comm) continue;
        const uint32_t k = count[g]++;
        auto [it, fresh] = first.try_emplace({g, k}, Seen{r, &s});
        if (fresh || reported[g]) continue;
        const Seen& other = it->second;
        if ((other.fence->asserts & k_mask) == (s.asserts & k_mask)) continue;
        reported[g] = true;
        auto flags = [](uint32_t a) {
          std::string text;
          if (a & assert_flag::noprecede) text += "MPI_MODE_NOPRECEDE";
          if (a & assert_flag::nosucceed) text += std::string(text.empty() ? "" : " | ") + "MPI_MODE_NOSUCCEED";
          return text.empty() ? std::string("neither NOPRECEDE nor NOSUCCEED") : text;
        };
        RawProblem p;
        p.problem = "fence asserts";
        p.message = fmt::format("members of {} disagree on the asserts of fence #{}: rank {} gives {}, rank {} gives {}",
                                ctx.comms().window_info(g).name, k + 1, other.rank, flags(other.fence->asserts), r,
                                flags(s.asserts));
        p.sites.push_back(RawSite{other.rank, other.fence->seq, other.fence->call, other.fence->site,
                                  flags(other.fence->asserts)});
        p.sites.push_back(RawSite{r, s.seq, s.call, s.site, flags(s.asserts)});
        p.notes.push_back("MPI_MODE_NOPRECEDE and MPI_MODE_NOSUCCEED must be given by all members of the window's "
                          "group or by none (MPI-3.1 section 11.5.5)");
        grouped.add(ctx, std::move(p));
      }
    }
  }

  // Posts and starts that correspond: the k-th post of t naming o with the
  // k-th start of o naming t (happens_before.cpp pairs them the same way).
  static void pscw_pairs(const Context& ctx, const std::vector<Pass*>& ranks, Grouped& grouped) {
    using Key = std::tuple<uint32_t, uint32_t, uint32_t>;  // (global window, target, origin)
    std::map<Key, std::pair<std::vector<const SyncRecord*>, std::vector<const SyncRecord*>>> pairs;
    for (uint32_t r = 0; r < ranks.size(); ++r) {
      if (!ranks[r]) continue;
      for (const SyncRecord& s : ranks[r]->syncs) {
        if (s.effect != EpochEffect::post && s.effect != EpochEffect::start) continue;
        const uint32_t g = ctx.comms().window(r, s.window);
        if (g == k_no_comm) continue;
        for (uint32_t peer : s.group) {
          if (s.effect == EpochEffect::post) pairs[{g, r, peer}].first.push_back(&s);
          else pairs[{g, peer, r}].second.push_back(&s);
        }
      }
    }
    for (const auto& [key, lists] : pairs) {
      const auto& [g, target, origin] = key;
      const auto& [posts, starts] = lists;
      if (posts.size() == starts.size()) continue;
      const bool missing_post = starts.size() > posts.size();
      const SyncRecord* lone = missing_post ? starts[posts.size()] : posts[starts.size()];
      const uint32_t at = missing_post ? origin : target;
      RawProblem p;
      p.problem = "pscw pairs";
      if (missing_post) {
        p.message = fmt::format("rank {} starts {} access epoch{} to rank {} on {}, but rank {} posts {} exposure epoch{} "
                                "to rank {}: start #{} has no matching post",
                                origin, starts.size(), starts.size() == 1 ? "" : "s", target,
                                ctx.comms().window_info(g).name, target, posts.size(), posts.size() == 1 ? "" : "s",
                                origin, posts.size() + 1);
      } else {
        p.message = fmt::format("rank {} posts {} exposure epoch{} to rank {} on {}, but rank {} starts {} access epoch{} "
                                "to rank {}: post #{} has no matching start",
                                target, posts.size(), posts.size() == 1 ? "" : "s", origin,
                                ctx.comms().window_info(g).name, origin, starts.size(), starts.size() == 1 ? "" : "s",
                                target, starts.size() + 1);
      }
      p.sites.push_back(RawSite{at, lone->seq, lone->call, lone->site, "this epoch has no partner"});
      const auto& others = missing_post ? posts : starts;
      if (!others.empty()) {
        const SyncRecord* last = others.back();
        p.sites.push_back(RawSite{missing_post ? target : origin, last->seq, last->call, last->site,
                                  "the partner's last matching call"});
      }
      p.notes.push_back("the group of MPI_Win_start must hold each target whose MPI_Win_post names this origin, and "
                        "the other way round (MPI-3.1 section 11.5.2)");
      grouped.add(ctx, std::move(p));
    }
  }
};

}  // namespace

std::unique_ptr<Check> make_epoch_lifecycle() { return std::make_unique<EpochLifecycle>(); }

}  // namespace smtrace::analyzer::checks
