// The directed replay of guided.hpp.
#include "smt_encoder/guided.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace smtrace::smt {

bool guided_enabled() {
  const char* env = std::getenv("SMTRACE_SMT_GUIDED");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

std::optional<std::vector<RawStep>> guided_match(const Model& model, const MatchPairs& pairs, Buffering buffering,
                                                 uint32_t recv, uint32_t send, uint64_t max_steps) {
  if (recv >= model.ops.size() || send >= model.ops.size()) return std::nullopt;
  const Machine machine(model, buffering);
  Machine::State state = machine.initial();
  std::vector<RawStep> steps;
  std::vector<uint32_t> waiting;  // posted receives and probes, not matched yet
  auto take = [&](const RawStep& step) {
    if (!machine.refuse(state, step).empty()) return false;
    machine.apply(state, step);
    steps.push_back(step);
    if (step.action == StepAction::call) {
      for (uint32_t op : model.event(step.rank, step.event).posts) {
        const OpKind k = model.ops[op].kind;
        if (k == OpKind::recv || k == OpKind::probe) waiting.push_back(op);
      }
    }
    return true;
  };
  // The sends receive `r` may try, in the policy's order.
  std::vector<uint32_t> order;
  auto candidates = [&](uint32_t r) -> const std::vector<uint32_t>& {
    order.clear();
    if (r == recv) {
      order.push_back(send);
      return order;
    }
    const uint32_t recorded = model.ops[r].recorded;
    if (recorded != k_none && recorded != send) order.push_back(recorded);
    for (uint32_t s : pairs.sends[r])
      if (s != send && s != recorded) order.push_back(s);
    return order;
  };
  while (steps.size() < max_steps) {
    bool progressed = false;
    // Every rank as far as it goes: call its next event, return from the current one.
    for (uint32_t rank = 0; rank < model.ranks.size(); ++rank) {
      while (steps.size() < max_steps) {
        const uint32_t pos = state.pos[rank];
        if (pos >= model.ranks[rank].limit) break;
        RawStep step;
        step.action = pos % 2 == 0 ? StepAction::call : StepAction::ret;
        step.rank = rank;
        step.event = pos / 2;
        if (!take(step)) break;
        progressed = true;
      }
    }
    if (state.partner[recv] == send) return steps;
    // Then the runtime's matches, oldest receive first.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      const uint32_t r = waiting[i];
      bool matched = state.partner[r] != k_none;
      if (!matched) {
        for (uint32_t s : candidates(r)) {
          if (state.partner[s] != k_none) continue;
          RawStep step;
          step.action = StepAction::match;
          step.recv = r;
          step.send = s;
          if (take(step)) {
            matched = progressed = true;
            break;
          }
        }
      }
      // A probe that saw a message stays until its rank returns (it consumes nothing).
      if (!matched) waiting[kept++] = r;
    }
    waiting.resize(kept);
    if (state.partner[recv] == send) return steps;
    if (!progressed) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace smtrace::smt
