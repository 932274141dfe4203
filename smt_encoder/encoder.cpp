#include "smt_encoder/encoder.hpp"

#include <algorithm>
#include <string>
#include <chrono>
#include <thread>
#include <mutex>
#include <condition_variable>
#include <map>
#include <tuple>

#include <fmt/core.h>
#include <z3++.h>

namespace smtrace::smt {

namespace {

// A named group of constraints (tracked encoders): what an unsat core cites.
enum class Group : uint8_t {
  program_order, limit, pairs, unique_recv, unique_send, completion, fifo_send, fifo_recv, collective,
  probe_link, terminal,
};

struct GroupKey {
  Group group;
  uint32_t a = 0, b = 0;
  auto operator<=>(const GroupKey&) const = default;
};

template <class Ops>  // std::vector<uint32_t> or IdList
std::string list_ops(const Model& m, const Ops& ops) {
  std::string out;
  for (std::size_t i = 0; i < ops.size() && i < 6; ++i) out += (i ? ", " : "") + m.post_ref(ops[static_cast<uint32_t>(i)]).str();
  if (ops.size() > 6) out += fmt::format(" and {} more", ops.size() - 6);
  return out.empty() ? "none" : out;
}

// Cap Z3's memory at `mb` MiB (0: no cap), for the whole process: Z3's
// limit is global, so it is set before each context is made, and the last
// value set holds. A large part can make Z3 grow by gigabytes in a phase
// where it does not look at its timer or at interrupts; at the cap the check
// returns unknown ("max. memory exceeded") instead.
bool limit_z3_memory(uint32_t mb) {
  static std::mutex mutex;
  static uint32_t current = UINT32_MAX;
  std::lock_guard lock(mutex);
  if (mb != current) {
    Z3_global_param_set("memory_max_size", std::to_string(mb).c_str());
    current = mb;
  }
  return true;
}

}  // namespace

struct Encoder::Impl {
  Impl(const Model& model_, const Channels& channels_, const MatchPairs& pairs_, Track track_, uint32_t memory_mb)
      : m(model_), ch(channels_), pairs(pairs_), track(track_ == Track::yes), limited(limit_z3_memory(memory_mb)),
        solver(ctx), zero(ctx.bool_const("Z")), dead(ctx.bool_const("D")) {}

  const Model& m;
  const Channels& ch;
  const MatchPairs& pairs;
  bool track;
  bool limited;  // limit_z3_memory() ran (before ctx)
  z3::context ctx;
  z3::solver solver;
  z3::expr zero, dead;
  std::vector<z3::expr> progress;                 // P per rank
  std::vector<std::vector<z3::expr>> t_call, t_ret;
  std::vector<std::optional<z3::expr>> mu, nu;    // per op
  std::vector<std::vector<z3::expr>> x;           // per receive/probe, parallel to pairs.sends
  std::vector<std::optional<z3::expr>> matched;   // per op
  std::vector<std::optional<z3::expr>> hub, hub_time;     // per instance (full, to_root)
  std::vector<std::vector<z3::expr>> chain, chain_time;   // per instance (scan, exscan)
  std::map<GroupKey, z3::expr> group_literal;
  uint64_t added = 0;
  uint64_t calls = 0;
  uint64_t questions = 0;
  std::vector<std::string> literal_notes;
  z3::expr_vector base{ctx};                      // every constraint added, as asserted
  std::optional<z3::expr> last_goal;
  Buffering last_buffering = Buffering::infinite;

  std::optional<std::chrono::steady_clock::time_point> deadline;
  uint64_t ticks = 0;
  // Throw BudgetSpent once the deadline has passed (looked at every 1024 ticks).
  void tick() {
    if (deadline && (++ticks & 1023) == 0 && std::chrono::steady_clock::now() > *deadline) throw BudgetSpent();
  }

  z3::expr num(int64_t v) { return ctx.int_val(v); }
  z3::expr called(uint32_t r, uint32_t k) { return progress[r] >= num(2 * int64_t{k} + 1); }
  z3::expr returned(uint32_t r, uint32_t k) { return progress[r] >= num(2 * int64_t{k} + 2); }
  const Op& op(uint32_t i) const { return m.ops[i]; }
  z3::expr posted(uint32_t i) { return called(op(i).rank, op(i).post); }
  z3::expr post_time(uint32_t i) { return t_call[op(i).rank][op(i).post]; }
  // When receive (or probe) r takes (sees) its message.
  z3::expr take_time(uint32_t r) {
    return op(r).kind == OpKind::probe ? t_ret[op(r).rank][op(r).post] : *mu[r];
  }
  z3::expr is_matched(uint32_t i) { return matched[i] ? *matched[i] : ctx.bool_val(false); }
  z3::expr pair(uint32_t r, uint32_t s) {
    const uint32_t k = pairs.find(r, s);
    return k == k_none ? ctx.bool_val(false) : x[r][k];
  }

  void add(const z3::expr& e, GroupKey key) {
    ++added;
    tick();
    if (!track) {
      solver.add(e);
      base.push_back(e);
      return;
    }
    auto it = group_literal.find(key);
    if (it == group_literal.end()) {
      const std::string name = fmt::format("g{}_{}_{}", static_cast<int>(key.group), key.a, key.b);
      it = group_literal.emplace(key, ctx.bool_const(name.c_str())).first;
    }
    solver.add(z3::implies(it->second, e));
    base.push_back(z3::implies(it->second, e));
  }

  // --- the encoding ---

  void declare() {
    const uint32_t ranks = static_cast<uint32_t>(m.ranks.size());
    for (uint32_t r = 0; r < ranks; ++r) {
      progress.push_back(ctx.int_const(fmt::format("P_{}", r).c_str()));
      std::vector<z3::expr> calls_r, rets_r;
      for (uint32_t k = 0; k < m.ranks[r].events.size(); ++k) {
        z3::expr c = ctx.int_const(fmt::format("c_{}_{}", r, k).c_str());
        calls_r.push_back(c);
        rets_r.push_back(m.ranks[r].events[k].waits ? ctx.int_const(fmt::format("t_{}_{}", r, k).c_str()) : c);
      }
      t_call.push_back(std::move(calls_r));
      t_ret.push_back(std::move(rets_r));
    }
    const std::size_t n = m.ops.size();
    mu.resize(n);
    nu.resize(n);
    matched.resize(n);
    x.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      const Op& o = op(i);
      if (o.kind != OpKind::recv && o.kind != OpKind::probe) continue;
      if (o.kind == OpKind::recv) mu[i] = ctx.int_const(fmt::format("mu_{}", i).c_str());
      z3::expr_vector any(ctx);
      for (uint32_t s : pairs.sends[i]) {
        tick();
        x[i].push_back(ctx.bool_const(fmt::format("x_{}_{}", i, s).c_str()));
        any.push_back(x[i].back());
      }
      if (!any.empty()) matched[i] = z3::mk_or(any);
    }
    for (uint32_t s = 0; s < n; ++s) {
      if (op(s).kind != OpKind::send) continue;
      const auto& recvs = pairs.recvs[s];
      if (recvs.empty()) continue;
      if (recvs.size() == 1) {
        matched[s] = pair(recvs[0], s);
        nu[s] = *mu[recvs[0]];
        continue;
      }
      z3::expr_vector any(ctx);
      for (uint32_t r : recvs) any.push_back(pair(r, s));
      matched[s] = z3::mk_or(any);
      nu[s] = ctx.int_const(fmt::format("nu_{}", s).c_str());
    }
    hub.resize(m.instances.size());
    hub_time.resize(m.instances.size());
    chain.resize(m.instances.size());
    chain_time.resize(m.instances.size());
    for (uint32_t i = 0; i < m.instances.size(); ++i) {
      const Instance& inst = m.instances[i];
      // Every instance has a hub: under zero buffering every collective waits for every member.
      hub[i] = ctx.bool_const(fmt::format("H_{}", i).c_str());
      hub_time[i] = ctx.int_const(fmt::format("h_{}", i).c_str());
      if (inst.kind == CollKind::scan || inst.kind == CollKind::exscan) {
        for (uint32_t j = 0; j < inst.members.size(); ++j) {
          chain[i].push_back(ctx.bool_const(fmt::format("G_{}_{}", i, j).c_str()));
          chain_time[i].push_back(ctx.int_const(fmt::format("g_{}_{}", i, j).c_str()));
        }
      }
    }
  }

  void encode_ranks() {
    for (uint32_t r = 0; r < m.ranks.size(); ++r) {
      const auto& events = m.ranks[r].events;
      add(progress[r] >= 0 && progress[r] <= num(m.ranks[r].limit), {Group::limit, r});
      for (uint32_t k = 0; k < events.size(); ++k) {
        if (events[k].waits) add(t_call[r][k] < t_ret[r][k], {Group::program_order, r});
        if (k + 1 < events.size()) add(t_ret[r][k] < t_call[r][k + 1], {Group::program_order, r});
      }
    }
  }

  void encode_pairs() {
    for (uint32_t r = 0; r < m.ops.size(); ++r) {
      const Op& o = op(r);
      if (o.kind != OpKind::recv && o.kind != OpKind::probe) continue;
      const auto& sends = pairs.sends[r];
      if (o.kind == OpKind::recv) add(*mu[r] > post_time(r), {Group::pairs, r});
      for (uint32_t k = 0; k < sends.size(); ++k) {
        const uint32_t s = sends[k];
        z3::expr need = posted(r) && posted(s) && post_time(s) < take_time(r);
        if (o.kind == OpKind::probe) {
          need = need && returned(o.rank, o.post);
          if (nu[s]) need = need && z3::implies(is_matched(s), *nu[s] > take_time(r));
        }
        add(z3::implies(x[r][k], need), {Group::pairs, r});
        if (o.probe != k_none) add(z3::implies(x[r][k], pair(o.probe, s)), {Group::probe_link, r});
      }
      if (sends.size() > 1) {
        z3::expr_vector v(ctx);
        for (const auto& e : x[r]) v.push_back(e);
        add(z3::atmost(v, 1), {Group::unique_recv, r});
      }
    }
    for (uint32_t s = 0; s < m.ops.size(); ++s) {
      const auto& recvs = pairs.recvs[s];
      if (op(s).kind != OpKind::send || recvs.size() < 2) continue;
      z3::expr_vector v(ctx);
      for (uint32_t r : recvs) {
        v.push_back(pair(r, s));
        add(z3::implies(pair(r, s), *nu[s] == *mu[r]), {Group::unique_send, s});
      }
      add(z3::atmost(v, 1), {Group::unique_send, s});
    }
  }

  // Return whether event `done` of the receiver's rank statically forces
  // receive `r2` to be matched before `r` (program order).
  bool implied(uint32_t r2, uint32_t r) const {
    const Op& a = op(r2);
    return a.done != k_none && a.done < op(r).post;
  }

  // The earlier sends that must be matched before r takes s (sender side),
  // nearest per tag; the rest follow through their own receives.
  std::vector<uint32_t> send_waits(uint32_t r, uint32_t s) const {
    std::vector<uint32_t> out;
    const Op& recv = op(r);
    auto consider = [&](uint32_t s2) {
      if (s2 == k_none) return;
      const auto& takers = pairs.recvs[s2];
      if (takers.size() == 1 && pairs.sends[takers[0]].size() == 1 && op(takers[0]).rank == recv.rank &&
          implied(takers[0], r)) {
        return;
      }
      out.push_back(s2);
    };
    if (recv.tag != k_any) {
      consider(ch.previous_send(s, op(s).tag));
    } else {
      for (int32_t tag : ch.channel_tags(s)) consider(ch.previous_send(s, tag));
    }
    return out;
  }

  // Earlier receives whose envelope contains r's: matched before r whatever it takes.
  std::vector<uint32_t> recv_waits_wider(uint32_t r) const {
    const Op& o = op(r);
    std::vector<std::pair<int32_t, int32_t>> envelopes{{k_any, k_any}, {k_any, o.tag}, {o.peer, k_any}, {o.peer, o.tag}};
    return nearest_receives(r, envelopes);
  }

  // Earlier receives that accept s but not everything r accepts.
  std::vector<uint32_t> recv_waits_for(uint32_t r, uint32_t s) const {
    const Op& o = op(r);
    const auto src = static_cast<int32_t>(op(s).rank);
    const int32_t tag = op(s).tag;
    std::vector<std::pair<int32_t, int32_t>> envelopes;
    for (auto env : {std::pair{k_any, k_any}, std::pair{k_any, tag}, std::pair{src, k_any}, std::pair{src, tag}}) {
      const bool wider = (env.first == k_any || env.first == o.peer) && (env.second == k_any || env.second == o.tag);
      if (!wider) envelopes.push_back(env);
    }
    return nearest_receives(r, envelopes);
  }

  std::vector<uint32_t> nearest_receives(uint32_t r, std::vector<std::pair<int32_t, int32_t>>& envelopes) const {
    std::sort(envelopes.begin(), envelopes.end());
    envelopes.erase(std::unique(envelopes.begin(), envelopes.end()), envelopes.end());
    std::vector<uint32_t> out;
    const Op& o = op(r);
    for (auto [src, tag] : envelopes) {
      const uint32_t r2 = ch.last_before(ch.receives(o.comm, o.rank, src, tag), r);
      if (r2 != k_none && !implied(r2, r)) out.push_back(r2);
    }
    return out;
  }

  void encode_fifo() {
    for (uint32_t r = 0; r < m.ops.size(); ++r) {
      const Op& o = op(r);
      if (o.kind != OpKind::recv && o.kind != OpKind::probe) continue;
      const auto& sends = pairs.sends[r];
      if (sends.empty()) continue;
      const z3::expr when = take_time(r);
      for (uint32_t r2 : recv_waits_wider(r)) {
        add(z3::implies(is_matched(r), is_matched(r2) && *mu[r2] < when), {Group::fifo_recv, r});
      }
      for (uint32_t k = 0; k < sends.size(); ++k) {
        const uint32_t s = sends[k];
        for (uint32_t s2 : send_waits(r, s)) {
          z3::expr need = is_matched(s2);
          if (nu[s2]) need = need && *nu[s2] < when;
          add(z3::implies(x[r][k], need), {Group::fifo_send, r});
        }
        for (uint32_t r2 : recv_waits_for(r, s)) {
          add(z3::implies(x[r][k], is_matched(r2) && *mu[r2] < when), {Group::fifo_recv, r});
        }
      }
    }
  }

  // What op `i` (waited for by event `k` of its rank) needs before `ret`.
  z3::expr complete_by(uint32_t i, const z3::expr& ret) {
    const Op& o = op(i);
    switch (o.kind) {
      case OpKind::recv:
        return is_matched(i) && *mu[i] < ret;
      case OpKind::probe:
        return is_matched(i);
      case OpKind::send: {
        if (o.mode == SendMode::buffered) return ctx.bool_val(true);
        z3::expr need = is_matched(i);
        if (nu[i]) need = need && *nu[i] < ret;
        return o.mode == SendMode::sync ? need : z3::implies(zero, need);
      }
      case OpKind::coll: {
        if (o.instance == k_none) return ctx.bool_val(true);
        const z3::expr all = *hub[o.instance] && *hub_time[o.instance] < ret;
        const Instance& inst = m.instances[o.instance];
        if (inst.kind == CollKind::full) return all;
        // Under zero buffering (Z) every collective waits for every member (semantics.hpp).
        return coll_needs(o, inst, ret) && z3::implies(zero, all);
      }
    }
    return ctx.bool_val(true);
  }

  // What collective op `o` of a rooted or scan kind waits for under infinite buffering.
  z3::expr coll_needs(const Op& o, const Instance& inst, const z3::expr& ret) {
    switch (inst.kind) {
      case CollKind::full:
        break;
      case CollKind::to_root:
        if (o.member != inst.root) return ctx.bool_val(true);
        return *hub[o.instance] && *hub_time[o.instance] < ret;
      case CollKind::from_root: {
        const uint32_t root = inst.members[inst.root];
        if (o.member == inst.root || root == k_none) return ctx.bool_val(true);
        return posted(root) && post_time(root) < ret;
      }
      case CollKind::scan:
        return chain[o.instance][o.member] && chain_time[o.instance][o.member] < ret;
      case CollKind::exscan:
        if (o.member == 0) return ctx.bool_val(true);
        return chain[o.instance][o.member - 1] && chain_time[o.instance][o.member - 1] < ret;
    }
    return ctx.bool_val(true);
  }

  void encode_completion() {
    for (uint32_t r = 0; r < m.ranks.size(); ++r) {
      const auto& events = m.ranks[r].events;
      for (uint32_t k = 0; k < events.size(); ++k) {
        if (m.completes(r, k).empty()) continue;
        z3::expr_vector need(ctx);
        for (uint32_t i : m.completes(r, k)) need.push_back(complete_by(i, t_ret[r][k]));
        add(z3::implies(returned(r, k), z3::mk_and(need)), {Group::completion, r, k});
      }
    }
    for (uint32_t i = 0; i < m.instances.size(); ++i) {
      const Instance& inst = m.instances[i];
      if (hub[i]) {
        z3::expr_vector all(ctx);
        for (uint32_t member : inst.members) {
          if (member != k_none) all.push_back(posted(member) && post_time(member) < *hub_time[i]);
        }
        if (!all.empty()) add(z3::implies(*hub[i], z3::mk_and(all)), {Group::collective, i});
      }
      for (uint32_t j = 0; j < chain[i].size(); ++j) {
        z3::expr need = ctx.bool_val(true);
        const uint32_t member = inst.members[j];
        if (member != k_none) need = posted(member) && post_time(member) < chain_time[i][j];
        if (j > 0) need = need && chain[i][j - 1] && chain_time[i][j - 1] < chain_time[i][j];
        add(z3::implies(chain[i][j], need), {Group::collective, i});
      }
    }
  }

  // --- the terminal state of a deadlock (under D) ---

  z3::expr pending(uint32_t i) { return posted(i) && !is_matched(i); }

  // The runtime could still match r (pending) with s (pending) at the end.
  z3::expr could_match(uint32_t r, uint32_t s) {
    const Op& o = op(r);
    z3::expr can = pending(s);
    if (o.kind == OpKind::recv) can = can && pending(r);
    if (o.probe != k_none) can = can && pair(o.probe, s);
    for (uint32_t s2 : send_waits(r, s)) can = can && is_matched(s2);
    for (uint32_t r2 : recv_waits_for(r, s)) can = can && is_matched(r2);
    for (uint32_t r2 : recv_waits_wider(r)) can = can && is_matched(r2);
    return can;
  }

  // Op `i` can never complete in the final state.
  z3::expr stuck(uint32_t i) {
    const Op& o = op(i);
    switch (o.kind) {
      case OpKind::recv:
        return !is_matched(i);
      case OpKind::send:
        if (o.mode == SendMode::buffered) return ctx.bool_val(false);
        return o.mode == SendMode::sync ? !is_matched(i) : zero && !is_matched(i);
      case OpKind::probe: {
        z3::expr_vector none(ctx);
        for (uint32_t s : pairs.sends[i]) none.push_back(!could_match(i, s));
        return none.empty() ? ctx.bool_val(true) : z3::mk_and(none);
      }
      case OpKind::coll: {
        if (o.instance == k_none) return ctx.bool_val(false);
        const Instance& inst = m.instances[o.instance];
        const auto size = static_cast<uint32_t>(inst.members.size());
        auto missing = [&](uint32_t from, uint32_t upto) {
          z3::expr_vector out(ctx);
          for (uint32_t j = from; j < upto; ++j) {
            if (inst.members[j] != k_none) out.push_back(!posted(inst.members[j]));
          }
          return out.empty() ? ctx.bool_val(false) : z3::mk_or(out);
        };
        const z3::expr any = missing(0, size);
        switch (inst.kind) {
          case CollKind::full: return any;
          case CollKind::to_root: return o.member != inst.root ? zero && any : any;
          case CollKind::from_root:
            return o.member == inst.root ? zero && any : z3::ite(zero, any, missing(inst.root, inst.root + 1));
          case CollKind::scan: return z3::ite(zero, any, missing(0, o.member + 1));
          case CollKind::exscan: return z3::ite(zero, any, missing(0, o.member));
        }
        return any;
      }
    }
    return ctx.bool_val(false);
  }

  void encode_terminal() {
    for (uint32_t r = 0; r < m.ops.size(); ++r) {
      if (op(r).kind != OpKind::recv) continue;
      for (uint32_t s : pairs.sends[r]) add(z3::implies(dead, !could_match(r, s)), {Group::terminal, 0});
    }
    for (uint32_t r = 0; r < m.ranks.size(); ++r) {
      const auto& events = m.ranks[r].events;
      z3::expr_vector stops(ctx);
      stops.push_back(progress[r] == num(m.ranks[r].limit));
      for (uint32_t k = 0; k < events.size(); ++k) {
        if (!events[k].may_block || 2 * k + 1 >= m.ranks[r].limit) continue;
        z3::expr_vector blocked(ctx);
        for (uint32_t i : m.completes(r, k)) blocked.push_back(stuck(i));
        stops.push_back(progress[r] == num(2 * int64_t{k} + 1) && z3::mk_or(blocked));
      }
      add(z3::implies(dead, z3::mk_or(stops)), {Group::terminal, 1, r});
    }
  }

  z3::expr deadlock_literal() {
    z3::expr_vector early(ctx);
    for (uint32_t r = 0; r < m.ranks.size(); ++r) early.push_back(progress[r] != num(m.ranks[r].limit));
    return early.empty() ? ctx.bool_val(false) : z3::mk_or(early);
  }

  z3::expr unmatched_literal() {
    z3::expr_vector all(ctx), lost(ctx);
    for (uint32_t r = 0; r < m.ranks.size(); ++r) all.push_back(progress[r] == num(m.ranks[r].limit));
    for (uint32_t r = 0; r < m.ops.size(); ++r) {
      const Op& o = op(r);
      if (o.kind == OpKind::recv && o.recorded != k_none) lost.push_back(pending(o.recorded));
    }
    if (lost.empty()) return ctx.bool_val(false);
    return z3::mk_and(all) && z3::mk_or(lost);
  }

  void encode() {
    declare();
    encode_ranks();
    encode_pairs();
    encode_fifo();
    encode_completion();
    encode_terminal();
    try {
      solver.set("core.minimize", true);
    } catch (const z3::exception&) {
      // Older solvers without core minimization: the core is still a valid explanation.
    }
  }

  // --- asking ---

  SolveOutcome ask(const z3::expr& goal, Buffering buffering, double timeout_s, const std::string& note) {
    const z3::expr q = ctx.bool_const(fmt::format("q_{}", questions++).c_str());
    solver.add(z3::implies(q, goal));
    last_goal = goal;
    last_buffering = buffering;
    literal_notes.push_back(fmt::format("q_{}: {}", questions - 1, note));
    z3::expr_vector assume(ctx);
    assume.push_back(q);
    assume.push_back(buffering == Buffering::zero ? zero : !zero);
    for (const auto& [key, lit] : group_literal) assume.push_back(lit);
    z3::params p(ctx);
    const double ms = std::max(1.0, timeout_s * 1000.0);
    p.set("timeout", static_cast<unsigned>(std::min(ms, 4.0e9)));
    solver.set(p);
    ++calls;
    SolveOutcome out;
    // Z3 does not look at its timer in every phase (a large part's
    // preprocessing can run far past it): a watchdog interrupts the context
    // at the deadline, so the budget holds.
    z3::check_result result = z3::unknown;
    {
      std::mutex mutex;
      std::condition_variable wake;
      bool finished = false;
      std::thread watchdog([&] {
        std::unique_lock lock(mutex);
        const auto limit = std::chrono::duration<double>(std::min(ms, 4.0e9) / 1000.0 + 0.05);
        if (!wake.wait_for(lock, limit, [&] { return finished; })) ctx.interrupt();
      });
      try {
        result = solver.check(assume);
      } catch (const z3::exception&) {
        result = z3::unknown;  // interrupted ("canceled")
      }
      {
        std::lock_guard lock(mutex);
        finished = true;
      }
      wake.notify_one();
      watchdog.join();
    }
    switch (result) {
      case z3::sat:
        out.verdict = Verdict::sat;
        witness(out);
        break;
      case z3::unsat:
        out.verdict = Verdict::unsat;
        if (track) explain(out);
        break;
      case z3::unknown:
        out.verdict = Verdict::unknown;
        out.reason = solver.reason_unknown();
        break;
    }
    // Retire the question: its literal stays false from now on.
    solver.add(!q);
    return out;
  }

  int64_t value(const z3::model& model, const z3::expr& e) {
    int64_t v = 0;
    model.eval(e, true).is_numeral_i64(v);
    return v;
  }

  void witness(SolveOutcome& out) {
    const z3::model model = solver.get_model();
    struct Entry {
      int64_t time;
      int order;
      RawStep step;
    };
    std::vector<Entry> entries;
    out.final_pos.resize(m.ranks.size());
    for (uint32_t r = 0; r < m.ranks.size(); ++r) {
      const auto p = static_cast<uint32_t>(value(model, progress[r]));
      out.final_pos[r] = p;
      for (uint32_t k = 0; 2 * k + 1 <= p && k < m.ranks[r].events.size(); ++k) {
        entries.push_back({value(model, t_call[r][k]), 1, {StepAction::call, r, k, k_none, k_none}});
        if (2 * k + 2 <= p) {
          entries.push_back({value(model, t_ret[r][k]), 3, {StepAction::ret, r, k, k_none, k_none}});
        }
      }
    }
    for (uint32_t r = 0; r < m.ops.size(); ++r) {
      for (uint32_t k = 0; k < x[r].size(); ++k) {
        if (!model.eval(x[r][k], true).is_true()) continue;
        const bool probe = op(r).kind == OpKind::probe;
        entries.push_back({value(model, take_time(r)), probe ? 0 : 2,
                           {StepAction::match, op(r).rank, op(r).post, r, pairs.sends[r][k]}});
      }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.time, a.order, a.step.rank, a.step.event, a.step.recv) <
             std::tie(b.time, b.order, b.step.rank, b.step.event, b.step.recv);
    });
    for (const Entry& e : entries) out.steps.push_back(e.step);
  }

  void explain(SolveOutcome& out) {
    std::vector<GroupKey> cited;
    for (const z3::expr& lit : solver.unsat_core()) {
      for (const auto& [key, l] : group_literal) {
        if (z3::eq(l, lit)) cited.push_back(key);
      }
    }
    std::sort(cited.begin(), cited.end());
    for (const GroupKey& key : cited) out.explanation.push_back(describe(key));
  }

  std::string describe(const GroupKey& key) const {
    switch (key.group) {
      case Group::program_order:
        return fmt::format("rank {} runs its calls in program order", key.a);
      case Group::limit:
        return fmt::format("rank {} makes no calls beyond its trace ({})", key.a,
                           m.ranks[key.a].limit % 2 ? "it stopped inside its last call" : "its last call");
      case Group::pairs:
        return fmt::format("{} can only match {} (match pairs), each posted before the match",
                           op_text(m, key.a), list_ops(m, pairs.sends[key.a]));
      case Group::unique_recv:
        return fmt::format("{} matches one message at most", m.post_ref(key.a).str());
      case Group::unique_send:
        return fmt::format("message {} is received once at most", op_text(m, key.a));
      case Group::completion: {
        const auto completes = m.completes(key.a, key.b);
        return fmt::format("{} returns only once {} {} complete", event_text(m, key.a, key.b),
                           list_ops(m, completes), completes.size() == 1 ? "is" : "are");
      }
      case Group::fifo_send:
        return fmt::format(
            "non-overtaking: {} takes a message only after the earlier messages it accepts from the same sender "
            "are matched",
            m.post_ref(key.a).str());
      case Group::fifo_recv:
        return fmt::format(
            "non-overtaking: the receives posted before {} on rank {} that accept the same message match first",
            m.post_ref(key.a).str(), op(key.a).rank);
      case Group::collective: {
        const Instance& inst = m.instances[key.a];
        return fmt::format("{} number {} on {} returns only after the calls it depends on",
                           format::call_name(inst.call), inst.position, m.comm_name(inst.comm));
      }
      case Group::probe_link:
        return fmt::format("{} takes the message that probe {} saw", m.post_ref(key.a).str(),
                           m.post_ref(op(key.a).probe).str());
      case Group::terminal:
        return "a deadlock leaves every rank at its end or blocked for good";
    }
    return "?";
  }
};

Encoder::Encoder(const Model& model, const Channels& channels, const MatchPairs& pairs, Track track,
                 double budget_s, uint32_t memory_mb)
    : m_impl(std::make_unique<Impl>(model, channels, pairs, track, memory_mb)) {
  if (budget_s > 0) {
    m_impl->deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(budget_s));
  }
  m_impl->encode();
}

Encoder::~Encoder() = default;

SolveOutcome Encoder::can_match(uint32_t recv, uint32_t send, Buffering buffering, double timeout_s) {
  Impl& m = *m_impl;
  return m.ask(m.pair(recv, send), buffering, timeout_s,
               fmt::format("{} matches {}", m.m.post_ref(recv).str(), m.m.post_ref(send).str()));
}

SolveOutcome Encoder::can_match_any(uint32_t recv, const std::vector<uint32_t>& sends, Buffering buffering,
                                    double timeout_s) {
  Impl& m = *m_impl;
  z3::expr_vector any(m.ctx);
  for (uint32_t s : sends) any.push_back(m.pair(recv, s));
  const z3::expr goal = any.empty() ? m.ctx.bool_val(false) : z3::mk_or(any);
  return m.ask(goal, buffering, timeout_s, fmt::format("{} matches one of {}", m.m.post_ref(recv).str(),
                                                       list_ops(m.m, sends)));
}

SolveOutcome Encoder::can_precede(uint32_t a_rank, uint32_t a_event, uint32_t b_rank, uint32_t b_event,
                                  Buffering buffering, double timeout_s) {
  Impl& m = *m_impl;
  const z3::expr goal = m.returned(a_rank, a_event) && m.called(b_rank, b_event) &&
                        m.t_ret[a_rank][a_event] < m.t_call[b_rank][b_event];
  return m.ask(goal, buffering, timeout_s,
               fmt::format("{} returns before {} is called", m.m.ref(a_rank, a_event).str(),
                           m.m.ref(b_rank, b_event).str()));
}

SolveOutcome Encoder::bad_end(BadEnd kind, Buffering buffering, std::optional<std::pair<uint32_t, uint32_t>> with,
                              double timeout_s, bool recorded_only) {
  Impl& m = *m_impl;
  z3::expr bad = kind == BadEnd::deadlock    ? m.deadlock_literal()
                 : kind == BadEnd::unmatched ? m.unmatched_literal()
                                             : m.deadlock_literal() || m.unmatched_literal();
  z3::expr goal = m.dead && bad;
  std::string note = kind == BadEnd::deadlock ? "a deadlock" : kind == BadEnd::unmatched ? "a message left unmatched"
                                                                                      : "a deadlock or a message left unmatched";
  if (with) {
    goal = goal && m.pair(with->first, with->second);
    note += fmt::format(" with {} matching {}", m.m.post_ref(with->first).str(), m.m.post_ref(with->second).str());
  }
  if (recorded_only) {
    z3::expr_vector keep(m.ctx);
    for (uint32_t r = 0; r < m.m.ops.size(); ++r) {
      const Op& o = m.op(r);
      if (o.recorded == k_none) continue;
      for (uint32_t k = 0; k < m.x[r].size(); ++k) {
        if (m.pairs.sends[r][k] != o.recorded && !(with && with->first == r)) keep.push_back(!m.x[r][k]);
      }
    }
    if (!keep.empty()) goal = goal && z3::mk_and(keep);
    note += ", every receive taking its recorded message or none";
  }
  return m.ask(goal, buffering, timeout_s, note);
}

std::string Encoder::smt2() const {
  const Impl& m = *m_impl;
  std::string out = "; smtrace prove: one part of a trace (docs/cli.md, prove)\n"
                    "; Z: zero buffering; D: the state is a deadlock's terminal state\n";
  if (!m.literal_notes.empty()) out += "; question: " + m.literal_notes.back() + "\n";
  z3::solver copy(const_cast<z3::context&>(m.ctx));
  for (const z3::expr& e : m.base) copy.add(e);
  for (const auto& [key, lit] : m.group_literal) copy.add(lit);
  if (m.last_goal) {
    copy.add(*m.last_goal);
    copy.add(m.last_buffering == Buffering::zero ? m.zero : !m.zero);
  }
  return out + copy.to_smt2();
}

uint64_t Encoder::assertions() const { return m_impl->added; }

uint64_t Encoder::decision_variables() const {
  uint64_t n = 0;
  for (const auto& v : m_impl->x) n += v.size() > 1;
  return n;
}

uint64_t Encoder::solver_calls() const { return m_impl->calls; }

}  // namespace smtrace::smt
