// Questions decided without a solver, where no choice of the runtime
// changes how far each rank gets. The cases are proved below; each is held
// to the brute-force enumerator (and most to Z3) by the differential test.
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
//    - interchangeable when it has no probe, every send to it completes
//      without being matched (MPI_Bsend, or a standard-mode send under
//      infinite buffering) and was received in the recorded run, and its
//      receives fall into classes whose receives accept every send of the
//      class: all its receives and sends when one receive has MPI_ANY_TAG,
//      else one class per tag. The receives of a class match in posting
//      order (each accepts what the earlier ones accept), each with the head
//      (the first unmatched send of the class) of any channel that has one
//      posted, and which one changes no rank's progress: the receiver needs
//      a message, the sender nothing.
//    When every endpoint is one of the two, abstract a state to (progress,
//    matched operations of deterministic endpoints, number of matched
//    receives of each class): whether a step is allowed depends on the
//    abstraction only, and the abstract system is persistent as in 1.
//    So every terminal state has the abstraction of the run's final state,
//    and so the same progress: it deadlocks iff the run's does. An unmatched
//    end needs every rank at its end; then no receive and send of a class
//    are both pending (they could match), and there are at least as many
//    receives as sends in it (each send had its recorded receive, of its
//    class), so every send there is matched; at deterministic endpoints
//    the matches are the run's. Hence a bad end is reachable with any
//    matches iff the run with any policy ends in one: the races of such a
//    model are all harmless for communication, or the recorded run itself
//    would not have finished. The master/worker pattern (requests of one tag
//    received from MPI_ANY_SOURCE, answers received with MPI_ANY_TAG from the
//    master), exchanges with MPI_ANY_SOURCE and one tag per round, and
//    exchanges without wildcards are choice-free under infinite buffering.
//
// 3. Which send a receive of a class E of an interchangeable endpoint can
//    take, in a choice-free model (channels and positions below count the
//    sends of the class). E's receives match in posting order (r_0, r_1, ...).
//    Let F_j be the state every run reaches when E may match only j times
//    (unique by case 2's argument, E frozen at j matches) and P_j(c) the
//    number of sends of channel c (a sender to E) posted in F_j. When r_j
//    matches in any execution, the state is at most F_j, so r_j takes one of
//    the first P_j(c) sends of some channel c; and running to F_0, matching
//    r_0, running to F_1, and so on is an execution in which r_j can take
//    any send of F_j that is left. So r_i can take the send of channel t
//    with k earlier ones iff P_i(t) > k and r_0..r_{i-1} can take k sends of
//    t and i - k of the other channels, each posted in the F_j of its
//    receive. The earliest posted sends of the other channels are the best
//    choice for every j at once, so this holds iff for every j < i:
//    min(k, P_j(t)) + min(i - k, A_j - P_j(t)) >= j + 1, with A_j the sum of
//    P_j over the channels (Hall's condition for filling r_0..r_j in order
//    with sends posted by then). One run per endpoint, with E's matches held
//    back until nothing else can happen, gives every P_j.
//
// 4. Covering runs for case 3. By case 3's construction, any choice of a
//    channel c with taken(c) < P_j(c) for each r_j in turn (taken(c): the
//    sends of c that r_0..r_{j-1} took) is an execution in which r_j takes
//    c's send number taken(c): the choices never get stuck while A_j > j.
//    So the runs below need no search: a plan (a channel per receive) is
//    made on the P_j rows, run, and its schedule replayed by the caller as
//    any other. Each run gives each receive one send, so a class with n
//    receives and m candidates each needs at least m runs; which pairs a run
//    gives depends on how many unmatched sends each channel holds when its
//    send is taken (its backlog, P_j(c) - taken(c); the backlogs add up to
//    A_j - j). Backlogs only grow by posts, so a large one needs the channel
//    left alone for a while: round t makes one channel (t mod the channel
//    count) wait until its backlog reaches a level (the largest A_j - j
//    down to 1, one level per channel-count rounds) and serves it then only
//    for pairs no run gave yet; every other receive takes a pair no run gave
//    yet where one is on offer, else the channel with the largest backlog
//    (the smallest in odd cycles of rounds). Only for classes whose sends
//    depend on their own matches (P_0 differs from the last row): when
//    every send is posted first, any order is an execution and the directed
//    replays' rotation gives a new pair per receive already.
//    bench/smt_patterns.sh measures it on master/worker 16 x 1000 (about
//    193,000 feasible pairs).
//
// 5. Counting bounds, any model, either buffering (unsat answers only). Take
//    a class E of an endpoint without probes whose receives each accept
//    every send of E (as in case 2: all receives of the endpoint when one has
//    MPI_ANY_TAG, else those of one tag; none tied to a probe), r_0, r_1, ...
//    in posting order, and its channels c (a sender's sends of E, in order).
//    No receive outside E accepts a send of E. By the two non-overtaking
//    rules E's receives match in posting order and a channel's sends in
//    channel order, so when r_j takes send k of channel t, r_0..r_{j-1} have
//    taken exactly k sends of t and j - k of the other channels. Let a_c(i)
//    be the sends of c that r_0..r_{i-1} took. In any execution where r_j
//    matches, for every i <= j (r_i matched, hence posted):
//    - a_c(i) <= U_c(i), the sends of c before its first send s that no
//      r_x with x < i can take (no match pair, or r_x completes before s is
//      posted): a_c(i) > m needs send m taken by such an r_x;
//    - a_c(i) >= L_c(i), one past the last send of c that completes only
//      once matched (MPI_Ssend; standard under zero buffering) and returns
//      before r_i is posted in every execution (Precedence, with the zero
//      buffering edges): it was matched before r_i was posted, so by an
//      earlier receive of E;
//    - a_c(i + 1) - a_c(i) is 0 or 1, and the a_c(i) add up to i.
//    For the channel t of the asked send, with the others summed (their
//    bounds summed: a relaxation, exact with two channels), the values of
//    a_t(i) that satisfy these for i = 0..j form an interval, computed
//    forward; r_j can take send k of t only if k lies in it at i = j, and
//    k < U_t(j + 1) (after the match t has given k + 1). A pair outside is
//    unsat. Runs planned on a path of a_t through the intervals (a channel
//    per earlier receive) are tried as witnesses, and, going on after the
//    match with one channel preferred, as bad ends; callers replay them.
//    Under zero buffering every pair the bounds leave is what Z3 encodes.
//    Fig6 under zero buffering is the case that needs
//    it: rank 0 reaches its i-th send only after ranks 1's message 2i was
//    taken, and rank 1's message 2i + 1 is posted only after that send.
//
// 6. No bad end, whatever the matches (either buffering; proves a part
//    harmless). Take a model without probes whose ranks all ran to their
//    end, in which every op is posted no later than the event that waits for
//    it, and whose endpoints split into classes as in case 5: all receives
//    and sends of an endpoint when one receive has MPI_ANY_TAG, else one
//    class per tag; a class either has receives that each accept all its
//    sends, or none with MPI_ANY_SOURCE (then one class per source). Each
//    class has as many receives as sends. Within a class the matched
//    receives are a prefix R[0..m) in posting order and each channel's
//    matched sends a prefix of length a_c, with the a_c adding up to m (the
//    two non-overtaking rules; no receive of another class accepts a send of
//    the class). Take a state where no step is possible. A rank not at its
//    end is inside an event (else it could call the next one) with an
//    incomplete op o, which is posted:
//    - o = R[i], unmatched, so m <= i: R[m] is posted, and a channel with a
//      posted unmatched send would match R[m] with its first unmatched send
//      (both rules hold, it accepts it); so every channel is used up or has
//      its send number a_c unposted. Let p_c count the sends of c posted by
//      the first event of their rank that waits for an op that can be
//      incomplete (a rank stuck or at its end got there): a_c >= p_c, so
//      m >= P, the sum of the p_c. As |S| = |R| > m, some channel c has its
//      send number a_c <= min(|c| - 1, i - P + p_c) unposted, and so is
//      that send (none when i < P: R[i] never waits in such a state);
//    - o = send number k of channel c, waiting for its match: the first
//      unmatched send of c is posted, so R[m] is unposted (else they would
//      match), and so is R[min(|R| - 1, k + |S| - |c|)] (a_c <= k, the other
//      channels gave at most |S| - |c|);
//    - o a collective call: a member it waits for (Machine::waits_for_member)
//      has not called the instance;
//    and the rank of an unposted op y is not at its end: it is stuck inside
//    an event before y's. The graph with an edge from each stuck event to
//    the ops it waits for, from those to the ops named above (each class's
//    choices behind a chain of hub nodes, so the graph stays linear), and
//    from each op to the events of its rank before its posting event thus
//    has a path from every stuck event to another, hence a cycle. If it is
//    acyclic, no state without a step has a rank short of its end, and there
//    every op is posted, so in each class a send left unmatched would match
//    R[m]: every execution ends with every rank at its end and every send
//    matched. Edges only by envelope, never pruned by happens-before: rank 0
//    Recv(ANY_SOURCE) then Send(1), rank 1 Recv(0) then Send(0) deadlock,
//    and only the edge from rank 0's receive to rank 1's send shows it
//    (happens-before drops that pair: the send follows the receive). The
//    senders pattern (each rank sends once to rank 0, which receives them
//    all from MPI_ANY_SOURCE) is acyclic under zero buffering; fig6 is not
//    (it deadlocks).
//
// Thread safety: reentrant.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

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

// As above with `forced`, from `start`: a state reached by steps that case
// 1's policy with `forced` allows (every receive and probe took its recorded
// send or none, `forced.first` none yet), such as a prefix of the unforced
// run that stops before `forced.first` is matched. The system is persistent
// (case 1), so from any such state the run ends in the one maximal state the
// run from the initial state ends in: the forced runs of many alternatives
// share the prefix (solve.cpp). Steps are those after `start`.
RunResult fixed_run(const Machine& machine, const RunLayout& layout, const RunStart& start,
                    std::pair<uint32_t, uint32_t> forced,
                    std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// Case 1's runs of many alternatives, sharing prefixes: for each receive or
// probe r of `receives`, in the order in which the unforced run `base`
// (fixed_run without `forced`, not stopped) matched them (those it never
// matched last), and each candidate s of r in `pairs` other than its
// recorded send: the run forced to (r, s) from the state `start` that
// base's first `prefix` steps reach, just before r was matched (all of
// them when it never was). base's steps are replayed once, each checked
// (Machine::refuse). The whole forced run is base's first `prefix` steps,
// then `run`'s; its final state is the run's from the initial state (by
// fixed_run's argument above). `visit` returns false to stop. Return false
// when stopped (by `visit`, or by `deadline`: a run stopped is not visited).
using ForcedVisit = std::function<bool(uint32_t recv, uint32_t send, std::size_t prefix, const Machine::State& start,
                                       const RunResult& run)>;
bool forced_runs(const Machine& machine, const MatchPairs& pairs, const std::vector<uint32_t>& receives,
                 const RunResult& base, const ForcedVisit& visit,
                 std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// Run `machine`'s model with every receive taking its recorded send when it
// can, else any candidate of `pairs` (case 2's run). Stops at `deadline`.
RunResult free_run(const Machine& machine, const MatchPairs& pairs,
                   std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// Return true when `state` is a bad end of `machine` (deadlock or unmatched end).
bool bad_end(const Machine& machine, const Machine::State& state);

// Return true when no execution of `machine`'s model ends in a deadlock or
// an unmatched end, whatever the matches (case 6: its wait-for graph is
// acyclic); false when the case does not apply, the graph has a cycle, or
// `deadline` passes.
bool no_bad_end(const Machine& machine, const Deadline& deadline = {});

// Case 3 over one choice-free model: which sends the receives of its
// interchangeable endpoints can take. An endpoint's run is made the first
// time one of its receives is asked about.
class InterchangeableMatches {
 public:
  // `machine`'s model must be choice-free (choice_free); `pairs` are its match pairs.
  InterchangeableMatches(const Machine& machine, const MatchPairs& pairs);
  ~InterchangeableMatches();
  InterchangeableMatches(const InterchangeableMatches&) = delete;
  InterchangeableMatches& operator=(const InterchangeableMatches&) = delete;
  // Return sat or unsat for whether receive `recv` can take send `send` in
  // some execution when `recv` is a receive of an interchangeable endpoint;
  // unknown otherwise, or when its run stops at `deadline`.
  Verdict can_match(uint32_t recv, uint32_t send, const Deadline& deadline = {});
  // Return the schedule of the execution the proof of a sat can_match builds
  // (E held back at each receive, which takes the earliest posted of the
  // sends chosen for r_0..r_{i-1}), or nothing when can_match is not sat.
  // Not checked here: callers replay it (check_schedule).
  std::optional<std::vector<RawStep>> witness(uint32_t recv, uint32_t send, const Deadline& deadline = {});
  // Whether a run already gave the pair (`recv`, `send`): the pairs covering runs try to avoid.
  using Given = std::function<bool(uint32_t recv, uint32_t send)>;
  // Return the receives of `recv`'s class in posting order when `recv` is a
  // receive of an interchangeable endpoint (else nothing).
  std::vector<uint32_t> class_receives(uint32_t recv, const Deadline& deadline = {});
  // Return how many covering rounds `recv`'s class has (case 4; 0: none, or
  // every send to the class is posted before its first match).
  uint32_t cover_rounds(uint32_t recv, const Deadline& deadline = {});
  // Return the schedule of covering round `round` of `recv`'s class (case 4),
  // preferring the pairs (receive, send) for which `given` returns false, or
  // nothing when the run does not get through. Not checked here: callers
  // replay it (check_schedule).
  std::optional<std::vector<RawStep>> cover_run(uint32_t recv, uint32_t round, const Given& given,
                                                const Deadline& deadline = {});

 private:
  struct Endpoint;
  const Endpoint* endpoint(uint32_t recv, const Deadline& deadline);
  const Endpoint* find_endpoint(uint32_t recv, const Deadline& deadline);
  // Run endpoint `e` with its receive j held back until nothing else can
  // happen, then taking send `plan[j]`, until the plan's last receive has
  // taken its send.
  std::optional<std::vector<RawStep>> run_plan(const Endpoint& e, const std::vector<uint32_t>& plan,
                                               const Deadline& deadline);
  const Machine& m_machine;
  const MatchPairs& m_pairs;
  Channels m_channels;
  std::unordered_map<uint64_t, std::unique_ptr<Endpoint>> m_endpoints;
  std::vector<const Endpoint*> m_class;  // per op: its endpoint (nullptr: none), once m_looked_up
  std::vector<bool> m_looked_up;
};

// Case 5 over one model: unsat answers from the counting bounds. A class's
// bounds are computed the first time one of its receives is asked about.
class CountingBounds {
 public:
  // `pairs` are the match pairs of `machine`'s model.
  CountingBounds(const Machine& machine, const MatchPairs& pairs);
  ~CountingBounds();
  CountingBounds(const CountingBounds&) = delete;
  CountingBounds& operator=(const CountingBounds&) = delete;
  // Return unsat when receive `recv` can never take send `send` by the
  // counting bounds; unknown otherwise (never sat), and past `deadline`.
  Verdict can_match(uint32_t recv, uint32_t send, const Deadline& deadline = {});
  // Return the match pairs without those can_match answers unsat for, or
  // nothing when it answers unsat for none (or `deadline` passes).
  std::optional<MatchPairs> surviving_pairs(const Deadline& deadline = {});
  // Return how many channels the class of `recv` has (0: not a class of case 5).
  uint32_t channels(uint32_t recv, const Deadline& deadline = {});
  // Return the schedule of a run planned on the bounds in which `recv`
  // takes `send`: the class's earlier receives take channel t's sends
  // (`send`'s channel) or another channel's along a path of a_t within the
  // intervals, every other receive its guided choice. With `then` (a
  // channel index), the run goes on after the match, the class's later
  // receives preferring channel `then`, to its end (a bad end is what the
  // caller looks for). Nothing when the run does not get that far. Not
  // checked here: callers replay it (check_schedule).
  std::optional<std::vector<RawStep>> planned_run(uint32_t recv, uint32_t send,
                                                  std::optional<uint32_t> then = std::nullopt,
                                                  const Deadline& deadline = {});

 private:
  struct Class;
  // Return the intervals of a_t(i) of `c`'s channel `t` (computed once).
  const std::vector<std::pair<uint32_t, uint32_t>>& reach(Class& c, uint32_t t);
  Class* find_class(uint32_t recv, const Deadline& deadline);
  const Machine& m_machine;
  const MatchPairs& m_pairs;
  Channels m_channels;
  std::unordered_map<uint64_t, std::pair<bool, bool>> m_endpoints;  // (comm, rank) -> (a probe, an MPI_ANY_TAG receive)
  std::unique_ptr<Precedence> m_precedence;  // made on first use
  std::unordered_map<uint64_t, std::unique_ptr<Class>> m_classes;  // by (endpoint, tag)
  std::vector<uint32_t> m_index;  // per op: its place in its class (k_none: none yet)
};

}  // namespace smtrace::smt
