// The fixed-order decisions of fixed.hpp.
#include "smt_encoder/fixed.hpp"

#include <unordered_map>
#include <vector>

namespace smtrace::smt {

bool matches_recorded(const Model& model, const MatchPairs& pairs) {
  for (uint32_t r = 0; r < model.ops.size(); ++r) {
    const Op& o = model.ops[r];
    if ((o.kind == OpKind::recv || o.kind == OpKind::probe) && !pairs.sends[r].empty() && o.recorded == k_none) {
      return false;
    }
  }
  return true;
}

bool choice_free(const Machine& machine) {
  const Model& model = machine.model();
  struct Endpoint {
    bool wildcard = false;         // a receive or probe with a wildcard (else: deterministic)
    bool probe = false;
    bool waits_for_match = false;  // a send to it completes only once matched
    bool unreceived = false;       // a send to it was not received in the recorded run
    int32_t source = k_any, tag = k_any;  // the one sender and tag of its sends (k_any: no send yet)
    bool many_sources = false, many_tags = false;
  };
  std::unordered_map<uint64_t, Endpoint> endpoints;
  auto at = [&](uint32_t comm, uint32_t rank) -> Endpoint& { return endpoints[(uint64_t{comm} << 32) | rank]; };
  std::vector<bool> received(model.ops.size(), false);
  for (const Op& o : model.ops) {
    if (o.kind == OpKind::recv && o.recorded != k_none) received[o.recorded] = true;
  }
  for (uint32_t i = 0; i < model.ops.size(); ++i) {
    const Op& o = model.ops[i];
    if (o.kind == OpKind::recv || o.kind == OpKind::probe) {
      Endpoint& e = at(o.comm, o.rank);
      e.wildcard = e.wildcard || o.peer == k_any || o.tag == k_any || o.probe != k_none;
      e.probe = e.probe || o.kind == OpKind::probe;
    } else if (o.kind == OpKind::send && o.peer >= 0) {
      Endpoint& e = at(o.comm, static_cast<uint32_t>(o.peer));
      const bool alone =
          o.mode == SendMode::buffered || (o.mode == SendMode::standard && machine.buffering() == Buffering::infinite);
      e.waits_for_match = e.waits_for_match || !alone;
      e.unreceived = e.unreceived || !received[i];
      const auto source = static_cast<int32_t>(o.rank);
      e.many_sources = e.many_sources || (e.source != k_any && e.source != source);
      e.many_tags = e.many_tags || (e.tag != k_any && e.tag != o.tag);
      e.source = source;
      e.tag = o.tag;
    }
  }
  for (const Op& o : model.ops) {
    if (o.kind != OpKind::recv && o.kind != OpKind::probe) continue;
    const Endpoint& e = at(o.comm, o.rank);
    if (!e.wildcard) continue;  // deterministic
    if (e.probe || e.waits_for_match || e.unreceived) return false;
    // Interchangeable: this receive accepts every send to its endpoint.
    const bool sources = o.peer == k_any || (!e.many_sources && (e.source == k_any || e.source == o.peer));
    const bool tags = o.tag == k_any || (!e.many_tags && (e.tag == k_any || e.tag == o.tag));
    if (!sources || !tags) return false;
  }
  return true;
}

RunResult fixed_run(const Machine& machine, std::optional<std::pair<uint32_t, uint32_t>> forced,
                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  const Model& model = machine.model();
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State&, const RunPolicy::Take& take) {
    if (forced && forced->first == r) {
      take(forced->second);
    } else if (model.ops[r].recorded != k_none) {
      take(model.ops[r].recorded);
    }
  };
  policy.deadline = deadline;
  return run(machine, policy);
}

RunResult free_run(const Machine& machine, const MatchPairs& pairs,
                   std::optional<std::chrono::steady_clock::time_point> deadline) {
  const Model& model = machine.model();
  RunPolicy policy;
  policy.choose = [&](uint32_t r, const Machine::State& state, const RunPolicy::Take& take) {
    const Op& o = model.ops[r];
    if (o.probe != k_none) {
      take(state.partner[o.probe]);
      return;
    }
    if (o.recorded != k_none && take(o.recorded)) return;
    for (uint32_t s : pairs.sends[r]) {
      if (s != o.recorded && take(s)) return;
    }
  };
  policy.deadline = deadline;
  return run(machine, policy);
}

bool bad_end(const Machine& machine, const Machine::State& state) {
  return machine.deadlocked(state) || machine.unmatched_end(state);
}

}  // namespace smtrace::smt
