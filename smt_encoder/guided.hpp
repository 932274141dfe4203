// Directed replays: the model's executions run forward under a policy that
// says which sends each receive may take (in which order to try them) and
// when a rank may call its next event, with every other step taken as soon
// as the reference semantics (semantics.hpp) allows it. Every step is
// checked by the Machine as it is taken, so a schedule found here is an
// execution; callers still replay it with check_schedule before they use it,
// as they do Z3's.
//
// Uses:
// - witnesses without a solver: guided_match steers one receive to the send
//   a question asks about and lets the others take their recorded message
//   first, else another candidate; guided_precede holds a rank before an
//   event until another event returned. When the policy gets stuck nothing
//   is claimed and the question goes to Z3 (the search is incomplete by
//   design; unsat answers and the hard cases are the solver's).
// - decisions without a solver (fixed.hpp): a run whose policy leaves no
//   choice reaches the one state every such execution ends in.
//
// Cost: event-driven (a rank is looked at again only when something it waits
// for happened, a receive only when its endpoint changed), so a run is
// linear in the model's steps, times the candidates a receive tries.
//
// Why: for the questions users ask first ("can this receive take that
// message?") a witness usually exists and is easy to build; encoding every
// match pair of a large part to find it costs far more (the senders
// benchmark's K = 1000 has a million pairs). The solver's own figures are
// measured with Tuning::replay off (bench/smt_senders.sh -G).
//
// Thread safety: reentrant; a run reads the Machine and the policy only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/semantics.hpp"

namespace smtrace::smt {

struct RunPolicy {
  // Offer receive or probe `recv` the sends it may take in `state`, in the
  // order to try them: call `take(send)` for each until it returns true (the
  // rules allowed the match and it was taken). None offered: it waits.
  using Take = std::function<bool(uint32_t send)>;
  std::function<void(uint32_t recv, const Machine::State& state, const Take& take)> choose;
  // Return false to hold `rank` before it calls event `event` (unset: never held).
  std::function<bool(uint32_t rank, uint32_t event, const Machine::State& state)> may_call;
  // Return true when the run has what it looks for (looked at after every
  // step that may change it; unset: run to the end).
  std::function<bool(const Machine::State& state)> done;
  // Called when no step the policy allows is left; return true when the
  // policy now allows more (the run goes on), false to end it.
  std::function<bool(const Machine::State& state)> stalled;
  // Stop after this many steps or at `deadline` (checked every 4096 steps).
  uint64_t max_steps = 50'000'000;
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct RunResult {
  std::vector<RawStep> steps;  // the execution, in order
  Machine::State state;        // where it ended
  bool done = false;           // policy.done held
  bool stopped = false;        // max_steps or the deadline stopped it (the end is not final)
};

// Which other pairs a directed replay should match on its way, to witness
// many pairs with few runs: `offer(recv, from, take)` offers `recv` the
// sends to try first, starting at its candidate `from` (`rotate` + the
// receive's index, so that successive runs give the receives different
// sends, as a Latin square does), and returns true when `take` took one.
struct Spread {
  std::function<bool(uint32_t recv, uint32_t from, const RunPolicy::Take& take)> offer;
  uint32_t rotate = 0;
};

// Offer receive or probe `r` its sends in the guided order, never `avoid`:
// the probe's message for a receive tied to one; else those `spread` offers,
// then its recorded message, then its other candidates in `pairs`. Return
// true when `take` took one.
bool offer_guided(const Model& model, const MatchPairs& pairs, uint32_t r, const Machine::State& state,
                  const RunPolicy::Take& take, uint32_t avoid = k_none, const Spread& spread = {});

// Run `machine`'s model from its initial state under `policy`: every rank
// as far as it goes, and each posted receive or probe, oldest first, matched
// with the first of its candidates that the rules allow, until nothing the
// policy allows is possible, `policy.done` holds or a limit stops it.
RunResult run(const Machine& machine, const RunPolicy& policy);

// What every run over one model shares: the endpoint (communicator,
// receiving rank) of each receive, probe and send, and the members of each
// collective instance. Made once for many runs from saved states.
class RunLayout {
 public:
  explicit RunLayout(const Model& model);
  // Return the id of the endpoint op `op` is received at (k_none: none).
  uint32_t endpoint_of(uint32_t op) const { return m_endpoint_of[op]; }
  uint32_t endpoints() const { return m_endpoints; }
  // Return how many ranks are members of instance `instance`.
  uint32_t members(uint32_t instance) const { return m_members[instance]; }

 private:
  std::vector<uint32_t> m_endpoint_of;
  std::vector<uint32_t> m_members;
  uint32_t m_endpoints = 0;
};

// A state to start runs from (a state that some execution of the model
// reaches), with what a run's own bookkeeping reads from it: the unmatched
// receives and probes waiting at each endpoint, the calls made of each
// collective instance, the endpoints with something posted. Made once for
// many runs from the same state.
class RunStart {
 public:
  RunStart(const Machine& machine, const RunLayout& layout, Machine::State state);
  const Machine::State& state() const { return m_state; }
  const std::vector<std::vector<uint32_t>>& pending() const { return m_pending; }
  const std::vector<uint32_t>& posted_members() const { return m_posted_members; }
  const std::vector<uint32_t>& marked() const { return m_marked; }

 private:
  Machine::State m_state;
  std::vector<std::vector<uint32_t>> m_pending;  // per endpoint
  std::vector<uint32_t> m_posted_members;        // per instance
  std::vector<uint32_t> m_marked;
};

// As above, from `start` instead of the initial state; `layout` is the
// model's. The result's steps are those taken after `start`. The run is the
// one that goes on after any execution reaching `start`: every rank and
// every endpoint with something posted is looked at first.
RunResult run(const Machine& machine, const RunPolicy& policy, const RunLayout& layout, const RunStart& start);

// Return a schedule of `machine`'s model (whose match pairs are `pairs`)
// that ends with receive or probe `recv` matched to `send`, or nothing when
// the directed replay gets stuck or spends `max_steps` steps. Other
// receives take their recorded message first, or with `spread` the pairs it
// prefers first. Not checked here: callers replay it (check_schedule).
std::optional<std::vector<RawStep>> guided_match(const Machine& machine, const MatchPairs& pairs, uint32_t recv,
                                                 uint32_t send, const Spread& spread = {},
                                                 uint64_t max_steps = 1'000'000);

// Return a schedule in which event `a_event` of `a_rank` returns before
// event `b_event` of `b_rank` is called, or nothing when the directed replay
// (rank b held before that event until a returned; receives take their
// recorded message first) gets stuck.
std::optional<std::vector<RawStep>> guided_precede(const Machine& machine, const MatchPairs& pairs, uint32_t a_rank,
                                                   uint32_t a_event, uint32_t b_rank, uint32_t b_event,
                                                   uint64_t max_steps = 1'000'000);

}  // namespace smtrace::smt
