// Questions decided without a solver, where no choice of the runtime
// changes how far each rank gets. Two cases, each proved below; both are
// held to the brute-force enumerator and to Z3 by the differential test.
//
// 1. Matches given. When each receive and probe may take one send only (its
//    recorded one, or the one a question forces) or none, every step the
//    rules allow stays allowed until it is taken: posting, matching and
//    completing only grow, and no other receive may take a message given to
//    one (semantics.hpp's non-overtaking rules look only at earlier
//    operations, which grow matched too). The system is persistent, so every
//    execution extends to the one maximal state the run below reaches, and
//    no other state is terminal (each has a step the policy allows, which
//    the rules allow). So a bad end (a deadlock or an unmatched end) exists
//    under these matches iff that state is one. This decides
//    potential-deadlock (zero buffering, recorded matches: the encoder's
//    `recorded_only` question without a pair) and whether one alternative
//    match alone ends badly (message-race errors: the same with one pair
//    forced). It needs every receive and probe that has a candidate to have
//    a recorded match (matches_recorded): the encoder leaves the others
//    free. A recorded match that is not among the match pairs (the model
//    waits where the run did not: MPI_Win_start) is never allowed, so its
//    receive takes none, as in the encoder.

//
// 2. Choice-free models. An endpoint (communicator, receiving rank) is
//    - deterministic when none of its receives or probes has a wildcard:
//      non-overtaking then leaves each of them one send at any time (the
//      first unmatched one of its channel and tag);
//    - interchangeable when it has no probe, every receive there accepts
//      every send to it, every such send completes without being matched
//      (MPI_Bsend, or a standard-mode send under infinite buffering) and was
//      received in the recorded run. Its receives then match in posting
//      order (each accepts what the earlier ones accept), each with the head
//      of any channel that has a posted send, and which one changes no
//      rank's progress: the receiver needs a message, the sender nothing.
//    When every endpoint is one of the two, abstract a state to (progress,
//    matched operations of deterministic endpoints, number of matched
//    receives of interchangeable ones): whether a step is allowed depends on
//    the abstraction only, and the abstract system is persistent as in 1.
//    So every terminal state has the abstraction of the run's final state,
//    and so the same progress: it deadlocks iff the run's does. An unmatched
//    end needs every rank at its end; then no receive and send of an
//    interchangeable endpoint are both pending (they could match), and there
//    are at least as many receives as sends (each send had its recorded
//    receive), so every send there is matched; at deterministic endpoints
//    the matches are the run's. Hence a bad end is reachable with any
//    matches iff the run with any policy ends in one: the races of such a
//    model are all harmless for communication, or the recorded run itself
//    would not have finished. The master/worker pattern (requests of one tag
//    received from MPI_ANY_SOURCE, answers received with MPI_ANY_TAG from the
//    master) and exchanges without wildcards are choice-free under infinite
//    buffering.
//
// Thread safety: reentrant.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include "smt_encoder/guided.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/semantics.hpp"

namespace smtrace::smt {

// Return true when every receive and probe of `model` with a candidate in
// `pairs` has a recorded match (case 1 applies).
bool matches_recorded(const Model& model, const MatchPairs& pairs);

// Return true when every endpoint of `machine`'s model is deterministic or
// interchangeable under the machine's buffering (case 2 applies).
bool choice_free(const Machine& machine);

// Run `machine`'s model with every receive and probe taking its recorded
// send or none; with `forced` (recv, send), `recv` takes `send` instead.
// Stops at `deadline` (RunResult::stopped).
RunResult fixed_run(const Machine& machine, std::optional<std::pair<uint32_t, uint32_t>> forced = std::nullopt,
                    std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// Run `machine`'s model with every receive taking its recorded send when it
// can, else any candidate of `pairs` (case 2's run). Stops at `deadline`.
RunResult free_run(const Machine& machine, const MatchPairs& pairs,
                   std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// Return true when `state` is a bad end of `machine` (deadlock or unmatched end).
bool bad_end(const Machine& machine, const Machine::State& state);

}  // namespace smtrace::smt
