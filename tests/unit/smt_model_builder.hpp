// Small smt::Model values built op by op for the SMT backend's unit and
// differential tests (no trace, no analyzer): blocking and non-blocking
// sends and receives, probes, waits and barriers, and random programs with
// a recorded run found by the reference semantics.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "smt_encoder/model.hpp"
#include "smt_encoder/semantics.hpp"

namespace smtrace::test {

namespace smt = smtrace::smt;
using smt::k_any;
using smt::k_none;

class ModelBuilder {
 public:
  explicit ModelBuilder(uint32_t ranks) {
    m.world_size = ranks;
    m.ranks.resize(ranks);
    m.comm_names = {"MPI_COMM_WORLD"};
  }

  // A blocking send (MPI_Send, or MPI_Ssend with `sync`) of `rank` to `dest`.
  uint32_t send(uint32_t rank, uint32_t dest, int32_t tag = 0, bool sync = false) {
    const uint32_t op = post(rank, smt::OpKind::send, static_cast<int32_t>(dest), tag,
                             sync ? format::Call::Ssend : format::Call::Send);
    m.ops[op].mode = sync ? smt::SendMode::sync : smt::SendMode::standard;
    complete_here(op);
    return op;
  }
  // A blocking receive (MPI_Recv) of `rank` from `source` (k_any: any).
  uint32_t recv(uint32_t rank, int32_t source, int32_t tag = 0) {
    const uint32_t op = post(rank, smt::OpKind::recv, source, tag, format::Call::Recv);
    complete_here(op);
    return op;
  }
  // A blocking probe (MPI_Probe).
  uint32_t probe(uint32_t rank, int32_t source, int32_t tag = 0) {
    const uint32_t op = post(rank, smt::OpKind::probe, source, tag, format::Call::Probe);
    complete_here(op);
    return op;
  }
  // A matched probe (MPI_Mprobe) of `rank`, as build_model makes it: the
  // receive of the message it finds is posted with it (the op before the
  // probe's) and takes what the probe saw; mrecv() completes it. Return
  // {probe, receive}.
  std::pair<uint32_t, uint32_t> mprobe(uint32_t rank, int32_t source, int32_t tag = 0) {
    const uint32_t recv = post(rank, smt::OpKind::recv, source, tag, format::Call::Mprobe);
    smt::Op p = m.ops[recv];
    p.kind = smt::OpKind::probe;
    p.done = p.post;
    m.ops.push_back(p);
    const auto probe = static_cast<uint32_t>(m.ops.size() - 1);
    m.ops[recv].probe = probe;
    return {probe, recv};
  }
  // MPI_Mrecv of `rank`: completes `recv`, the receive of an mprobe().
  void mrecv(uint32_t rank, uint32_t recv) { m.ops[recv].done = event(rank, format::Call::Mrecv); }
  uint32_t isend(uint32_t rank, uint32_t dest, int32_t tag = 0) {
    return post(rank, smt::OpKind::send, static_cast<int32_t>(dest), tag, format::Call::Isend);
  }
  uint32_t irecv(uint32_t rank, int32_t source, int32_t tag = 0) {
    return post(rank, smt::OpKind::recv, source, tag, format::Call::Irecv);
  }
  // MPI_Wait (one op) or MPI_Waitall (several) of `rank`.
  void wait(uint32_t rank, const std::vector<uint32_t>& ops) {
    const uint32_t e = event(rank, ops.size() == 1 ? format::Call::Wait : format::Call::Waitall);
    for (uint32_t op : ops) m.ops[op].done = e;
  }
  // MPI_Barrier on every rank (one event each, in rank order).
  void barrier() { collective(smt::CollKind::full, format::Call::Barrier); }
  // A blocking collective of `kind` (`call`, rooted at member `root`) on every rank.
  void collective(smt::CollKind kind, format::Call call, uint32_t root = 0) {
    const uint32_t inst = new_collective(kind, call, root);
    for (uint32_t r = 0; r < m.world_size; ++r) join(inst, r);
  }
  // Return a new collective instance of every rank; each calls it with join().
  uint32_t new_collective(smt::CollKind kind, format::Call call, uint32_t root = 0) {
    smt::Instance inst;
    inst.kind = kind;
    inst.call = call;
    inst.root = root;
    inst.position = static_cast<uint32_t>(m.instances.size());
    inst.members.assign(m.world_size, k_none);
    m.instances.push_back(inst);
    return inst.position;
  }
  // Rank `rank` calls collective `instance` (blocking) now.
  void join(uint32_t instance, uint32_t rank) {
    smt::Op op;
    op.kind = smt::OpKind::coll;
    op.rank = rank;
    op.post = event(rank, m.instances[instance].call);
    op.done = op.post;
    op.instance = instance;
    op.member = rank;
    m.instances[instance].members[rank] = static_cast<uint32_t>(m.ops.size());
    m.ops.push_back(op);
  }
  void record(uint32_t recv, uint32_t send) { m.ops[recv].recorded = send; }

  // Return the model: posts and completions per event, limits, blocking flags.
  smt::Model build() const {
    smt::Model out = m;
    rebuild_events(out);
    return out;
  }

  // Rebuild the posts, completions, limits and blocking flags of `model`'s
  // events from its ops (every rank runs to its end; an event that waits may block).
  static void rebuild_events(smt::Model& model) {
    for (auto& rank : model.ranks) rank.limit = 2 * static_cast<uint32_t>(rank.events.size());
    smt::link_ops(model);
    for (auto& rank : model.ranks) {
      for (auto& e : rank.events) e.may_block = e.waits;
    }
  }

 private:
  uint32_t event(uint32_t rank, format::Call call) {
    smt::Event& e = m.ranks[rank].add(m.ranks[rank].events.size() + 1);
    e.call = call;
    return static_cast<uint32_t>(m.ranks[rank].events.size() - 1);
  }
  uint32_t post(uint32_t rank, smt::OpKind kind, int32_t peer, int32_t tag, format::Call call) {
    smt::Op op;
    op.kind = kind;
    op.rank = rank;
    op.post = event(rank, call);
    op.peer = peer;
    op.tag = tag;
    m.ops.push_back(op);
    return static_cast<uint32_t>(m.ops.size() - 1);
  }
  void complete_here(uint32_t op) { m.ops[op].done = m.ops[op].post; }

  smt::Model m;
};

// Run `model` under `buffering` with random choices until no step is left;
// set every receive's (and probe's) `recorded` to what it took. Return true
// when the run finished (every rank at its end, nothing left unmatched).
inline bool record_random_run(smt::Model& model, std::mt19937& rng, smt::Buffering buffering) {
  const smt::Machine machine(model, buffering);
  smt::Machine::State state = machine.initial();
  std::vector<smt::RawStep> steps;
  for (;;) {
    steps.clear();
    machine.enabled(state, steps);
    if (steps.empty()) break;
    machine.apply(state, steps[std::uniform_int_distribution<std::size_t>(0, steps.size() - 1)(rng)]);
  }
  if (!machine.finished(state)) return false;
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    smt::Op& op = model.ops[i];
    if (op.kind == smt::OpKind::send && state.partner[i] == k_none) return false;
    if (op.kind == smt::OpKind::recv || op.kind == smt::OpKind::probe) op.recorded = state.partner[i];
  }
  return true;
}

enum class RandomStyle : uint8_t {
  mixed,        // every kind of call below
  one_tag,      // one tag, no probe, no MPI_Ssend: often choice-free (fixed.hpp)
  tag_classes,  // two tags, no MPI_ANY_TAG, no probe, no MPI_Ssend: often choice-free by tag
  named,        // as mixed, but every receive and probe names its source and tag (no wildcard)
};

// Return a random program of `ranks` ranks and `messages` messages whose
// random run finished: blocking and non-blocking sends (some synchronous)
// and receives (some from any source or with any tag), probes, now and then
// a rooted collective (MPI_Bcast or MPI_Reduce) that each rank calls
// somewhere among its messages, and now and then a closing barrier.
inline smt::Model random_model(std::mt19937& rng, uint32_t ranks, uint32_t messages,
                               RandomStyle random_style = RandomStyle::mixed) {
  const bool one_tag = random_style == RandomStyle::one_tag;
  const bool simple = random_style != RandomStyle::mixed;  // no probe, no MPI_Ssend
  auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng); };
  for (;;) {
    // Per rank, a list of actions: (kind, peer, tag); kinds 0 send, 1 recv.
    struct Action {
      int kind;
      uint32_t peer;
      int32_t tag;
    };
    std::vector<std::vector<Action>> plan(ranks);
    for (uint32_t i = 0; i < messages; ++i) {
      const uint32_t from = pick(ranks);
      uint32_t to = pick(ranks - 1);
      if (to >= from) ++to;
      const auto tag = one_tag ? 0 : static_cast<int32_t>(pick(2));
      plan[from].push_back({0, to, tag});
      plan[to].push_back({1, from, tag});
    }
    for (auto& p : plan) std::shuffle(p.begin(), p.end(), rng);
    const bool with_barrier = pick(4) == 0;
    ModelBuilder b(ranks);
    uint32_t rooted = k_none;
    if (pick(4) == 0) {
      const bool bcast = pick(2) == 0;
      rooted = b.new_collective(bcast ? smt::CollKind::from_root : smt::CollKind::to_root,
                                bcast ? format::Call::Bcast : format::Call::Reduce, pick(ranks));
    }
    for (uint32_t r = 0; r < ranks; ++r) {
      std::vector<uint32_t> pending;
      const std::size_t join_at = rooted == k_none ? SIZE_MAX : pick(static_cast<uint32_t>(plan[r].size()) + 1);
      for (std::size_t i = 0; i <= plan[r].size(); ++i) {
        if (i == join_at) b.join(rooted, r);
        if (i == plan[r].size()) break;
        const Action& a = plan[r][i];
        const uint32_t style = pick(6);
        if (a.kind == 0) {
          if (style == 0) {
            pending.push_back(b.isend(r, a.peer, a.tag));
          } else {
            b.send(r, a.peer, a.tag, style == 1 && !simple);
          }
        } else {
          const bool named = random_style == RandomStyle::named;
          const int32_t source = pick(2) == 0 && !named ? k_any : static_cast<int32_t>(a.peer);
          const int32_t tag =
              pick(4) == 0 && random_style != RandomStyle::tag_classes && !named ? k_any : a.tag;
          if (style == 0) {
            pending.push_back(b.irecv(r, source, tag));
          } else {
            if (style == 1 && !simple) b.probe(r, source, tag);
            b.recv(r, source, tag);
          }
        }
        if (!pending.empty() && pick(3) == 0) {
          b.wait(r, pending);
          pending.clear();
        }
      }
      if (!pending.empty()) b.wait(r, pending);
    }
    if (with_barrier) b.barrier();
    smt::Model model = b.build();
    if (record_random_run(model, rng, smt::Buffering::infinite)) return model;
  }
}

}  // namespace smtrace::test
