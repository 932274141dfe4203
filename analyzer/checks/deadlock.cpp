// deadlock: ranks blocked at the end of an incomplete trace.
//
// Each rank stopped inside a blocking call (its pending event) waits for
// other ranks: a receive for its source (any member of the communicator for
// MPI_ANY_SOURCE), a send for its destination, a collective for the members
// that never entered it, a Wait* for what its incomplete requests wait for.
// Waitall and collectives need all of their partners (AND), Waitany/Waitsome
// and wildcard receives one of them (OR). A receive whose message was already
// sent (the replay matched it) waits for nothing.
//
// Generalized active-target synchronization pairs ranks, not the window's
// group: a start or complete waits for the posts of its targets, a wait for
// the completes of its origins (MPI-3.1 section 11.5.2).
// Passive-target synchronization needs no call of the target (MPI-3.1
// section 11.5.3): a lock, and an unlock or flush (a lock may be acquired as
// late as its unlock), waits only for the ranks that hold a conflicting lock
// on its target at the end of their traces.
//
// Ranks that were still running (stopped outside any call, e.g. killed while
// computing) could still act; finalized or exited ranks never will. A rank
// that stopped inside a call another check found erroneous (an invalid
// argument, an RMA call outside its epoch: Context::erroneous) counts as
// running: the error, not a wait, ended it there (MPI's default error
// handler aborts the job inside the call), and what the call would have
// done is not known. This check therefore finishes after those checks. A blocked
// rank can progress when its condition holds over ranks that can progress;
// the fixed point leaves the deadlocked ones. The wait-for graph among them
// (Boost.Graph) gives the cycle when there is one, else the report lists
// each blocked rank and what it waits for.
#include <algorithm>
#include <map>
#include <set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/replay.hpp"

namespace smtrace::analyzer::checks {

using format::Call;

namespace {

struct Wait {
  enum class Mode : uint8_t { all, any, none } mode = Mode::none;
  std::set<uint32_t> ranks;       // world ranks waited for
  std::vector<std::string> what;  // one line per reason
};

class Deadlock final : public Check {
 public:
  std::string_view name() const override { return "deadlock"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "ranks blocked at the end of an incomplete trace, waiting for each other or for ranks "
           "that will never act";
  }

  FinishStage finish_stage() const override { return FinishStage::after_marks; }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>&,
              std::vector<Finding>& out) override {
    const uint32_t n = ctx.world_size();
    enum class State : uint8_t { running, blocked, finished, missing };
    std::vector<State> state(n, State::missing);
    std::vector<Wait> waits(n);
    bool any_blocked = false;
    for (uint32_t r = 0; r < n; ++r) {
      const RankData& data = ctx.rank(r);
      if (!data.present) continue;
      auto blocked = ctx.replay().blocked(r);
      if (blocked && ctx.erroneous({r, blocked->seq})) {
        state[r] = State::running;
      } else if (blocked && format::call_blocks(blocked->call) && blocked->call != Call::Finalize) {
        state[r] = State::blocked;
        waits[r] = wait_of(ctx, r, *blocked);
        any_blocked = true;
      } else if (data.end && data.end->kind != format::TerminationKind::signal &&
                 data.end->kind != format::TerminationKind::tracer_stopped) {
        state[r] = State::finished;
      } else if (blocked && blocked->call == Call::Finalize) {
        state[r] = State::finished;
      } else {
        state[r] = State::running;  // stopped outside MPI: it could still act
      }
    }
    if (!any_blocked) return;

    std::vector<bool> progress(n, false);
    for (uint32_t r = 0; r < n; ++r) progress[r] = state[r] == State::running;
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t r = 0; r < n; ++r) {
        if (progress[r] || state[r] != State::blocked) continue;
        const Wait& w = waits[r];
        bool ok = false;
        if (w.mode == Wait::Mode::none) {
          ok = true;
        } else if (w.mode == Wait::Mode::all) {
          ok = std::all_of(w.ranks.begin(), w.ranks.end(), [&](uint32_t s) { return s < n && progress[s]; });
        } else {
          ok = std::any_of(w.ranks.begin(), w.ranks.end(), [&](uint32_t s) { return s < n && progress[s]; });
        }
        if (ok) {
          progress[r] = true;
          changed = true;
        }
      }
    }
    std::vector<uint32_t> stuck;
    for (uint32_t r = 0; r < n; ++r) {
      if (state[r] == State::blocked && !progress[r]) stuck.push_back(r);
    }
    if (stuck.empty()) return;

    // Wait-for graph among the stuck ranks; a cycle explains the deadlock.
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
    Graph g(n);
    for (uint32_t r : stuck) {
      for (uint32_t s : waits[r].ranks) {
        if (s < n && state[s] == State::blocked && !progress[s]) boost::add_edge(r, s, g);
      }
    }
    std::vector<uint32_t> cycle = find_cycle(g, n);

    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    if (cycle.size() == 1) {
      f.message = fmt::format("deadlock: rank {} waits for itself", cycle.front());
    } else if (!cycle.empty()) {
      std::string chain;
      for (uint32_t r : cycle) chain += fmt::format("rank {} -> ", r);
      chain += fmt::format("rank {}", cycle.front());
      f.message = fmt::format("deadlock: {} wait for each other in a cycle ({})", plural(cycle.size(), "rank"), chain);
    } else {
      f.message = fmt::format("deadlock: {} blocked forever", plural(stuck.size(), "rank"));
    }
    // The cycle's ranks first, then the other stuck ones.
    std::vector<uint32_t> order = cycle;
    for (uint32_t r : stuck) {
      if (std::find(order.begin(), order.end(), r) == order.end()) order.push_back(r);
    }
    for (uint32_t r : order) {
      const auto blocked = ctx.replay().blocked(r);
      std::string note = waits[r].what.empty() ? std::string("blocked here") : waits[r].what.front();
      f.locations.push_back(ctx.location({r, blocked->seq}, blocked->call, blocked->site, note));
      for (std::size_t k = 1; k < waits[r].what.size() && k < 4; ++k) {
        f.notes.push_back(fmt::format("rank {}: {}", r, waits[r].what[k]));
      }
    }
    for (uint32_t r = 0; r < n; ++r) {
      if (state[r] == State::finished) {
        const RankData& data = ctx.rank(r);
        f.notes.push_back(fmt::format("rank {} {}", r,
                                      data.finalized() ? "reached MPI_Finalize" : "ended without MPI_Finalize"));
      } else if (state[r] == State::missing) {
        f.notes.push_back(fmt::format("rank {}: no trace file", r));
      }
    }
    out.push_back(std::move(f));
  }

 private:
  static std::vector<uint32_t> find_cycle(const boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>& g,
                                          uint32_t n) {
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
    std::vector<uint32_t> parent(n, k_none);
    struct Visitor : boost::default_dfs_visitor {
      std::vector<uint32_t>* parent;
      std::pair<uint32_t, uint32_t>* back;
      void tree_edge(Graph::edge_descriptor e, const Graph& graph) {
        (*parent)[boost::target(e, graph)] = static_cast<uint32_t>(boost::source(e, graph));
      }
      void back_edge(Graph::edge_descriptor e, const Graph& graph) {
        if (back->first == k_none) {
          *back = {static_cast<uint32_t>(boost::source(e, graph)), static_cast<uint32_t>(boost::target(e, graph))};
        }
      }
    };
    std::pair<uint32_t, uint32_t> back{k_none, k_none};
    Visitor vis;
    vis.parent = &parent;
    vis.back = &back;
    boost::depth_first_search(g, boost::visitor(vis));
    if (back.first == k_none) return {};
    // back: source -> target closes the cycle target ... source.
    std::vector<uint32_t> cycle;
    for (uint32_t v = back.first; v != k_none; v = parent[v]) {
      cycle.push_back(v);
      if (v == back.second) break;
    }
    std::reverse(cycle.begin(), cycle.end());
    return cycle;
  }

  // Return true for passive-target synchronization: a lock, an unlock, a
  // flush (the epoch steps of the call table).
  static bool passive_sync(const format::Event& e) {
    const format::EpochStep step = format::epoch_step(format::epoch_of(e));
    return format::call_traits(e.call).family == format::Family::rma && e.call != Call::Win_free &&
           (step.kind == format::EpochKind::passive ||
            (step.kind == format::EpochKind::none && step.completes != format::Completion::none));
  }

  // The targets rank `s` holds locked on global window `win` at the end of
  // its trace, with their lock types (k_unknown: MPI_Win_lock_all, shared
  // on every target). A pending lock holds nothing yet.
  static std::map<int32_t, format::LockType> locks_held(const Context& ctx, uint32_t s, uint32_t win) {
    std::map<int32_t, format::LockType> held;
    for (const RmaEvent& x : ctx.replay().rma(s)) {
      if (x.pending || ctx.comms().window(s, x.window) != win) continue;
      if (x.call == Call::Win_lock) held[x.peer] = x.lock_type;
      if (x.call == Call::Win_unlock) held.erase(x.peer);
      if (x.call == Call::Win_lock_all) held[k_unknown] = format::LockType::shared;
      if (x.call == Call::Win_unlock_all) held.erase(k_unknown);
    }
    return held;
  }

  // Fill `w` for rank `r` stopped inside passive-target synchronization `e`
  // (a lock, an unlock or a flush; MPI-3.1 section 11.5.3 lets a lock be
  // acquired as late as the unlock): it waits for every other rank that
  // holds a conflicting lock on its target (on any target for the _all
  // calls) when its trace ends. An exclusive lock conflicts with any other.
  // Ranks stopped in passive-target calls on the window themselves compete
  // for the lock, one of them gets it: they are not waited for. Without a
  // conflicting holder the call waits for nobody (a flush without a lock is
  // another check's error).
  static void lock_waits(const Context& ctx, uint32_t r, const format::Event& e, Wait& w) {
    using format::LockType;
    const CommTable& comms = ctx.comms();
    const uint32_t win = comms.window(r, e.window);
    w.mode = Wait::Mode::none;
    if (win == k_no_comm) return;
    const format::EpochStep step = format::epoch_step(format::epoch_of(e));
    const int32_t target = step.all_targets || !e.peer ? k_unknown : *e.peer;
    // The lock the call takes, or the one it works under.
    LockType mine = LockType::shared;
    if (e.call == Call::Win_lock) {
      mine = e.lock_type;
    } else if (e.call != Call::Win_lock_all) {
      const auto own = locks_held(ctx, r, win);
      auto it = own.find(target);
      if (it == own.end()) it = own.find(k_unknown);
      if (it == own.end()) return;
      mine = it->second;
    }
    auto competing = [&](uint32_t s) {
      const auto other = ctx.replay().blocked(s);
      return other && passive_sync(*other) && comms.window(s, other->window) == win;
    };
    for (uint32_t s = 0; s < ctx.world_size(); ++s) {
      if (s == r || !ctx.rank(s).present || competing(s)) continue;
      for (const auto& [t, type] : locks_held(ctx, s, win)) {
        const bool same_target = target == k_unknown || t == k_unknown || t == target;
        if (!same_target || (mine != LockType::exclusive && type != LockType::exclusive)) continue;
        w.ranks.insert(s);
        w.what.push_back(fmt::format("{} waits for rank {} to release its {}lock on {}", format::call_name(e.call),
                                     s, type == LockType::exclusive ? "exclusive " : "",
                                     t == k_unknown ? std::string("every rank of the window")
                                                    : fmt::format("rank {}", t)));
        break;
      }
    }
    if (!w.ranks.empty()) w.mode = Wait::Mode::all;
  }

  // What rank `s` did in generalized active-target synchronization on
  // global window `win`, by peer (world rank): the exposure epochs it
  // posted naming the peer, the access epochs it started naming it, and of
  // those the ones whose MPI_Win_complete it entered; and the groups of its
  // last post and last start. One pass over its RMA calls.
  struct PscwCounts {
    std::map<uint32_t, uint32_t> posts, starts, completes;
    std::vector<uint32_t> last_post, last_start;
  };
  static PscwCounts pscw_counts(const Context& ctx, uint32_t s, uint32_t win) {
    using format::EpochEffect;
    PscwCounts out;
    auto members = [&](uint32_t group) {
      const format::CommDef* def = ctx.rank(s).comm(group);
      return def ? def->world_ranks : std::vector<uint32_t>{};
    };
    for (const RmaEvent& x : ctx.replay().rma(s)) {
      if (ctx.comms().window(s, x.window) != win) continue;
      if (x.epoch == EpochEffect::post) {
        out.last_post = members(x.group);
        for (uint32_t m : out.last_post) ++out.posts[m];
      } else if (x.epoch == EpochEffect::start) {
        out.last_start = members(x.group);
        for (uint32_t m : out.last_start) ++out.starts[m];
      } else if (x.epoch == EpochEffect::complete) {
        for (uint32_t m : out.last_start) ++out.completes[m];
      }
    }
    return out;
  }

  // Fill `w` for rank `r` stopped inside MPI_Win_start, MPI_Win_complete or
  // MPI_Win_wait `e` (MPI-3.1 section 11.5.2). An access epoch waits for the
  // targets of its start group that have not yet posted the exposure epoch
  // that matches it (the k-th post of t naming r for the k-th start of r
  // naming t); an exposure epoch waits for the origins of its post group
  // that have not yet entered the MPI_Win_complete of the matching access
  // epoch. A rank stopped inside that complete has entered it: it waits for
  // its own targets, not for `r`.
  static void pscw_waits(const Context& ctx, uint32_t r, const format::Event& e, Wait& w) {
    const uint32_t win = ctx.comms().window(r, e.window);
    w.mode = Wait::Mode::all;
    if (win == k_no_comm) return;
    auto count = [](const std::map<uint32_t, uint32_t>& by_peer, uint32_t peer) {
      const auto it = by_peer.find(peer);
      return it == by_peer.end() ? 0u : it->second;
    };
    const bool access = e.call != Call::Win_wait;
    const PscwCounts mine = pscw_counts(ctx, r, win);
    // The group of this epoch: that of the start (or post) it belongs to,
    // the last one of `r` on the window.
    for (uint32_t s : access ? mine.last_start : mine.last_post) {
      if (s == r || s >= ctx.world_size() || !ctx.rank(s).present) continue;
      const PscwCounts theirs = pscw_counts(ctx, s, win);
      if (access ? count(theirs.posts, r) >= count(mine.starts, s) : count(theirs.completes, r) >= count(mine.posts, s))
        continue;
      w.ranks.insert(s);
      w.what.push_back(access ? fmt::format("{} waits for rank {} to post its exposure epoch to this rank",
                                            format::call_name(e.call), s)
                              : fmt::format("{} waits for rank {} to complete its access epoch to this rank",
                                            format::call_name(e.call), s));
    }
    if (w.ranks.empty()) w.mode = Wait::Mode::none;
  }

  // Return whom rank `r`, stopped inside `e`, waits for.
  static Wait wait_of(const Context& ctx, uint32_t r, const format::Event& e) {
    Wait w;
    const Replay& replay = ctx.replay();
    const CommTable& comms = ctx.comms();
    const auto& ops = replay.p2p(r);
    auto describe_p2p = [&](uint32_t index, Wait& into) {
      const P2POp& op = ops[index];
      if (!op.send && replay.matched({r, index})) return;  // its message is on the way
      if (op.send && replay.matched({r, index})) return;   // received: the send can complete
      const uint32_t g = comms.global(r, op.comm);
      const std::string comm_name = g == k_no_comm ? "an unknown communicator" : comms.comm(g).name;
      if (op.peer == format::k_any_source) {
        if (g != k_no_comm) {
          for (uint32_t s : comms.comm(g).world_ranks) {
            if (s != r) into.ranks.insert(s);
          }
        }
        into.what.push_back(fmt::format("{} waits for a message from any rank of {}{}",
                                        format::call_name(op.call), comm_name,
                                        op.tag == format::k_any_tag ? "" : " with " + tag_text(op)));
        return;
      }
      auto peer = comms.world_rank(r, op.comm, op.peer);
      if (!peer) return;
      into.ranks.insert(*peer);
      const std::string tag = tag_text(op);
      if (op.send) {
        into.what.push_back(fmt::format("{} waits for rank {} to receive its message ({}, {})",
                                        format::call_name(op.call), *peer, tag, comm_name));
      } else {
        into.what.push_back(fmt::format("{} waits for a message from rank {} ({}, {})",
                                        format::call_name(op.call), *peer, tag, comm_name));
      }
    };
    auto describe_coll = [&](uint32_t index, Wait& into) {
      const CollOp& op = replay.collectives(r)[index];
      const uint32_t g = comms.global(r, op.comm);
      if (g == k_no_comm) return;
      const GlobalComm& comm = comms.comm(g);
      // Which instance is it? Count this rank's calls on the comm before it.
      uint32_t position = 0;
      for (uint32_t i = 0; i < index; ++i) {
        if (comms.global(r, replay.collectives(r)[i].comm) == g) ++position;
      }
      const auto& instances = replay.instances(g);
      std::set<uint32_t> absent;
      std::vector<std::string> other_calls;
      if (position < instances.size()) {
        const CollInstance& inst = instances[position];
        for (std::size_t k = 0; k < inst.member_op.size(); ++k) {
          const uint32_t member = comm.world_ranks[k];
          if (member == r) continue;
          if (inst.member_op[k] == k_none) {
            absent.insert(member);
          } else {
            const CollOp& other = replay.collectives(member)[inst.member_op[k]];
            if (other.call != op.call) {
              other_calls.push_back(fmt::format("rank {} is in {} there", member, format::call_name(other.call)));
            }
          }
        }
      }
      into.ranks.insert(absent.begin(), absent.end());
      if (!absent.empty()) {
        into.what.push_back(fmt::format("{} on {} waits for {} {} that never entered it",
                                        format::call_name(op.call), comm.name, absent.size() == 1 ? "rank" : "ranks",
                                        rank_list(std::vector<uint32_t>(absent.begin(), absent.end()))));
      }
      for (const std::string& s : other_calls) {
        into.what.push_back(fmt::format("{} on {}: {} (collective #{} differs)", format::call_name(op.call),
                                        comm.name, s, position + 1));
        for (std::size_t k = 0; k < comm.world_ranks.size(); ++k) {
          if (comm.world_ranks[k] != r) into.ranks.insert(comm.world_ranks[k]);
        }
      }
    };
    auto find_op = [&](uint64_t seq, bool recv_side) -> std::optional<uint32_t> {
      for (uint32_t i = static_cast<uint32_t>(ops.size()); i-- > 0;) {
        if (ops[i].seq == seq && (!recv_side || !ops[i].send)) return i;
        if (ops[i].seq < seq) break;
      }
      return std::nullopt;
    };
    auto find_coll = [&](uint64_t seq) -> std::optional<uint32_t> {
      const auto& colls = replay.collectives(r);
      for (uint32_t i = static_cast<uint32_t>(colls.size()); i-- > 0;) {
        if (colls[i].seq == seq) return i;
        if (colls[i].seq < seq) break;
      }
      return std::nullopt;
    };
    auto by_request = [&](uint64_t request, Wait& into) {
      const auto& open = replay.outstanding(r);
      auto it = std::lower_bound(open.begin(), open.end(), request,
                                 [](const Outstanding& o, uint64_t req) { return o.request < req; });
      if (it == open.end() || it->request != request) return;
      if (it->kind == Outstanding::Kind::p2p) describe_p2p(it->index, into);
      if (it->kind == Outstanding::Kind::coll) describe_coll(it->index, into);
    };

    const Call c = e.call;
    const format::CallTraits& t = format::call_traits(c);
    if (format::completes_requests(t.request)) {
      w.mode = t.request == format::RequestEffect::complete_all ? Wait::Mode::all : Wait::Mode::any;
      if (e.requests.empty() && e.request) {
        by_request(e.request, w);
      }
      for (uint64_t req : e.requests) {
        if (req) by_request(req, w);
      }
      // An OR-wait on requests: each request alone must be impossible; a
      // wildcard receive inside it already waits for anyone.
    } else if (t.role == format::Role::collective) {
      w.mode = Wait::Mode::all;
      if (auto i = find_coll(e.seq)) describe_coll(*i, w);
    } else if (t.role == format::Role::recv || t.role == format::Role::probe || t.role == format::Role::sendrecv) {
      if (auto i = find_op(e.seq, true)) {
        describe_p2p(*i, w);
        w.mode = ops[*i].peer == format::k_any_source ? Wait::Mode::any : Wait::Mode::all;
      } else if (t.role == format::Role::probe) {
        const int32_t peer = e.peer ? *e.peer : format::k_any_source;
        if (peer == format::k_any_source) {
          const uint32_t g = comms.global(r, e.comm);
          if (g != k_no_comm) {
            for (uint32_t s : comms.comm(g).world_ranks) {
              if (s != r) w.ranks.insert(s);
            }
          }
          w.mode = Wait::Mode::any;
          w.what.push_back("MPI_Probe waits for a message from any rank");
        } else if (auto s = comms.world_rank(r, e.comm, peer)) {
          w.ranks.insert(*s);
          w.mode = Wait::Mode::all;
          w.what.push_back(fmt::format("MPI_Probe waits for a message from rank {}", *s));
        }
      }
      if (t.role == format::Role::sendrecv) {
        // Its send half waits too.
        for (uint32_t i = static_cast<uint32_t>(ops.size()); i-- > 0;) {
          if (ops[i].seq == e.seq && ops[i].send) describe_p2p(i, w);
          if (ops[i].seq < e.seq) break;
        }
        w.mode = Wait::Mode::all;
      }
    } else if (t.role == format::Role::send) {
      w.mode = Wait::Mode::all;
      if (auto i = find_op(e.seq, false)) describe_p2p(*i, w);
    } else if (passive_sync(e)) {
      // A lock, an unlock or a flush: no call of its targets is needed.
      lock_waits(ctx, r, e, w);
    } else if (c == Call::Win_start || c == Call::Win_complete || c == Call::Win_wait) {
      pscw_waits(ctx, r, e, w);
    } else if (c == Call::Win_post) {
      w.mode = Wait::Mode::none;  // it waits for nobody (MPI-3.1 section 11.5.2: MPI_Win_post is non-blocking)
    } else if (t.family == format::Family::rma || (t.resource == format::Resource::comm_new && t.blocks)) {
      // Collective synchronization on a window or communicator: every other member.
      w.mode = Wait::Mode::all;
      uint32_t g = k_no_comm;
      if (t.family == format::Family::rma) {
        const uint32_t win = comms.window(r, e.window);
        if (win != k_no_comm) g = comms.window_info(win).comm;
      } else {
        g = comms.global(r, e.comm);
      }
      // Members blocked in the same call on the same window or communicator
      // are inside it with this rank: it does not wait for them.
      auto inside_same = [&](uint32_t s) {
        const auto other = replay.blocked(s);
        if (!other || other->call != c) return false;
        return t.family == format::Family::rma ? comms.window(s, other->window) == comms.window(r, e.window)
                                               : comms.global(s, other->comm) == g;
      };
      const char* what = t.family == format::Family::rma ? "of the window over" : "of";
      if (g == k_no_comm) {
        w.what.push_back(fmt::format("{} waits for the other members of its {}, which the trace does not describe",
                                     format::call_name(c), t.family == format::Family::rma ? "window" : "communicator"));
      } else {
        // MPI_Comm_create_group is collective over its group only (MPI-3.1
        // section 6.4.2), when the trace describes it.
        const format::CommDef* group = c == Call::Comm_create_group ? ctx.rank(r).comm(e.group) : nullptr;
        std::vector<uint32_t> absent;
        for (uint32_t s : group ? group->world_ranks : comms.comm(g).world_ranks) {
          if (s != r && !inside_same(s)) absent.push_back(s);
        }
        w.ranks.insert(absent.begin(), absent.end());
        if (!absent.empty()) {
          w.what.push_back(fmt::format("{} waits for {} {} {} {}{}, which {} not inside it", format::call_name(c),
                                       absent.size() == 1 ? "rank" : "ranks", rank_list(absent), what,
                                       group ? "its group in " : "", comms.comm(g).name,
                                       absent.size() == 1 ? "is" : "are"));
        }
        // Every other member is inside it (or there is none): it waits for nobody.
      }
    }
    if (w.ranks.empty() && w.what.empty()) {
      w.mode = Wait::Mode::none;
    } else if (w.ranks.empty()) {
      // Waits, but for nobody who could help (a collective whose members all
      // entered a different call, a receive from a rank outside the job).
      w.mode = Wait::Mode::any;
    }
    return w;
  }
};

}  // namespace

std::unique_ptr<Check> make_deadlock() { return std::make_unique<Deadlock>(); }

}  // namespace smtrace::analyzer::checks
