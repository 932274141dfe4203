// The rules of an execution of a Model, as a plain state machine without a
// solver. It is the reference the SMT encoding must agree with: witnesses
// found by Z3 are replayed here step by step (a schedule Z3 got wrong is
// refused, never reported), and the brute-force enumerator used by the
// differential tests explores every reachable state of small models.
//
// A state is each rank's progress P (model.hpp) and, per operation, its
// partner: the send a receive matched, the receive a send went to, the send
// a probe saw. Steps:
// - call(rank, k): the rank calls its next event k; its operations are posted.
// - ret(rank, k): event k returns; allowed when every operation it waits
//   for is complete: a receive matched; a send matched when it is
//   synchronous, or standard under zero buffering (else at once); a probe
//   has seen a message; a collective call has what its kind waits for (the
//   calls of the members it depends on) under infinite buffering, and every
//   member's call under zero buffering (MPI allows any collective to
//   synchronize: zero buffering is the reading where everything that may
//   wait does).
// - match(r, s): the runtime matches posted receive r with posted send s,
//   both unmatched, when r accepts s's envelope and MPI's non-overtaking
//   rules allow it: no earlier send of s's sender on the same communicator
//   to the same rank that r accepts is still unmatched, and no receive
//   posted before r on r's rank and communicator that accepts s is still
//   unmatched. A receive tied to a probe takes only what the probe saw
//   (for the rule on earlier receives it counts with the probe's envelope).
// - match(p, s) for a probe p that has been called and can still return:
//   p sees unmatched posted send s under the same rules (it consumes nothing).
// A deadlock is a state where no step is possible, some rank has not reached
// its end, and every such rank is inside a call where it may stop for good.
// An unmatched end is a state where no step is possible, every rank reached
// its end, and a send matched in the recorded run is still unmatched.
//
// The match rule is checked in time linear in the tags of a channel, not in
// the operations: in every reachable state the matched sends of a channel
// with one tag are a prefix of them (a receive that accepts a send accepts
// the earlier ones of its channel and tag), and so are the matched receives
// of a rank posted with one envelope; so the nearest earlier operation of
// each kind decides. refuse_by_definition() checks the rule as written
// above, scanning every operation; the tests hold the two to each other.
//
// Thread safety: a Machine is immutable after construction; everything here
// is reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/prove.hpp"

namespace smtrace::smt {

// One step of an execution, by model indices. call/ret: `rank`, `event`;
// match: `recv` (a receive or probe op) and `send`.
struct RawStep {
  StepAction action = StepAction::call;
  uint32_t rank = 0;
  uint32_t event = 0;
  uint32_t recv = k_none;
  uint32_t send = k_none;
  bool operator==(const RawStep&) const = default;
};

// What a schedule must end in for check_schedule().
struct Goal {
  Outcome outcome = Outcome::match;
  uint32_t recv = k_none;   // match: the pair that must be matched (recv may be a probe)
  uint32_t send = k_none;
  uint32_t a_rank = 0, a_event = 0;  // precede: event a returns before event b is called
  uint32_t b_rank = 0, b_event = 0;
};

class Machine {
 public:
  struct State {
    std::vector<uint32_t> pos;      // per rank
    std::vector<uint32_t> partner;  // per op (k_none: none yet)
    bool operator==(const State&) const = default;
  };

  // Throw std::logic_error when the ops of a rank are not in posting order.
  Machine(const Model& model, Buffering buffering);

  const Model& model() const { return m_model; }
  Buffering buffering() const { return m_buffering; }
  State initial() const;
  // Return why `step` is not allowed in `state` (empty when it is).
  std::string refuse(const State& state, const RawStep& step) const;
  // Return what refuse() returns, with the match rule checked as the header
  // comment writes it (every operation scanned): the tests' reference.
  std::string refuse_by_definition(const State& state, const RawStep& step) const;
  // Return true when match (`recv`, `send`) is allowed in `state` (both
  // posted and unmatched, envelope and non-overtaking).
  bool can_match(const State& state, uint32_t recv, uint32_t send) const {
    return match_allowed(state, recv, send, nullptr);
  }
  // Return true when event `event` of `rank` may return in `state` (the rank
  // is inside it, and what it waits for is complete).
  bool can_return(const State& state, uint32_t rank, uint32_t event) const;
  // Take `step` (allowed) in `state`.
  void apply(State& state, const RawStep& step) const;
  // Append every step allowed in `state` to `out` (every pair of a receive
  // and a send is tried: small models only).
  void enabled(const State& state, std::vector<RawStep>& out) const;
  // Return true when some step is allowed in `state` (linear in the model).
  bool any_step(const State& state) const;
  // Return true when every rank is at its end.
  bool finished(const State& state) const;
  // Return true when no step is allowed and the state is a deadlock (header comment).
  bool deadlocked(const State& state) const;
  // Return true when no step is allowed, every rank is at its end, and a send
  // matched in the recorded run is unmatched.
  bool unmatched_end(const State& state) const;
  // Return true when `op` is complete in `state` (it lets the event waiting for it return).
  bool complete(const State& state, uint32_t op) const;
  // Return true when op `op` has been posted in `state`.
  bool posted(const State& state, uint32_t op) const;
  // Return true when a collective of `instance`'s kind waits for every
  // member's call (full kinds, and any kind under zero buffering).
  bool waits_for_all(const Instance& instance) const {
    return instance.kind == CollKind::full || m_buffering == Buffering::zero;
  }
  // Return true when send `send` completes only once matched (MPI_Ssend, and
  // a standard-mode send under zero buffering).
  bool waits_for_match(const Op& send) const {
    return send.mode == SendMode::sync || (send.mode == SendMode::standard && m_buffering == Buffering::zero);
  }
  // Return true when the call of member `member` of `instance` completes
  // only once member `other` has called it.
  bool waits_for_member(const Instance& instance, uint32_t member, uint32_t other) const;

 private:
  bool match_allowed(const State& state, uint32_t r, uint32_t s, std::string* why) const;
  // The checks of match_allowed before non-overtaking; false with `why` set when one fails.
  bool match_basics(const State& state, uint32_t r, uint32_t s, std::string* why) const;
  bool match_by_scan(const State& state, uint32_t r, uint32_t s, std::string* why) const;
  const Model& m_model;
  Buffering m_buffering;
  Channels m_channels;
  std::vector<uint32_t> m_previous_same_tag;  // per send: the one before it on its channel with its tag
  // Per send: the receives of its destination posted with each envelope
  // that accepts it ((any, any), (any, tag), (source, any), (source, tag)).
  std::vector<std::array<const std::vector<uint32_t>*, 4>> m_accepting;
  std::vector<bool> m_recorded_send;      // per op: a recorded receive took it
  std::vector<std::vector<uint32_t>> m_by_rank_recv;  // receives per rank, in posting order
};

// Replay `steps` from the initial state and check that they reach `goal`.
// Return an empty string when they do, else what went wrong (with the step).
std::string check_schedule(const Machine& machine, const std::vector<RawStep>& steps, const Goal& goal);
// As above, replaying `steps` from `start` instead of the initial state
// (the caller checked how `start` was reached). A precede goal counts only
// the steps given.
std::string check_schedule(const Machine& machine, const Machine::State& start, const std::vector<RawStep>& steps,
                           const Goal& goal);
// As above, with a Machine of its own.
std::string check_schedule(const Model& model, Buffering buffering, const std::vector<RawStep>& steps,
                           const Goal& goal);

// Everything reachable from the initial state, found by exhaustive search
// (small models only: the differential tests).
struct Exploration {
  std::set<std::pair<uint32_t, uint32_t>> pairs;      // (recv or probe, send) matched in some state
  std::set<std::pair<uint32_t, uint32_t>> bad_pairs;  // ... in some deadlocked or unmatched end
  std::set<std::vector<uint32_t>> positions;          // reachable progress vectors
  bool deadlock = false;
  bool unmatched = false;
  uint64_t states = 0;
  bool truncated = false;  // stopped at `max_states`
  // Return true when some reachable state has event a returned and event b callable next.
  bool can_precede(const Model& model, uint32_t a_rank, uint32_t a_event, uint32_t b_rank,
                   uint32_t b_event) const;
};
Exploration explore(const Model& model, Buffering buffering, uint64_t max_states = 2'000'000);
// As above, taking only the match steps `allowed` accepts; a state without
// an allowed step is a deadlock or an unmatched end by the full rules (a
// step it may not take still counts against it): the encoder's questions
// with `recorded_only` (fixed.hpp's case 1).
Exploration explore(const Model& model, Buffering buffering, uint64_t max_states,
                    const std::function<bool(uint32_t recv, uint32_t send)>& allowed);

}  // namespace smtrace::smt
