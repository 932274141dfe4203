// prove() and the SMT checks of `smtrace check`: one analyzer check builds
// the model from the replayed trace, solve() answers, and the answers
// become findings with the trace's locations and witnesses with its event
// names. Rendering is in render.cpp.
#include "smt_encoder/prove.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/threads.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/solve.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::smt {

namespace {

using analyzer::Finding;
using analyzer::Location;
using analyzer::Severity;

constexpr std::string_view k_race = "message-race";
constexpr std::string_view k_deadlock = "potential-deadlock";
constexpr std::string_view k_prove = "smt-prove";
constexpr std::string_view k_rma_race = "rma-race";

Location location(const analyzer::Context& context, const Model& model, uint32_t rank, uint32_t event,
                  std::string note) {
  const Event& e = model.event(rank, event);
  return context.location(model.ref(rank, event), e.call, e.site, std::move(note));
}

// Return `raw` as a Witness, its schedule cut after `steps` steps (a prefix
// of a schedule replays as far as it goes; the blocked ranks of a bad end
// are kept only when every step is, never for a cut RawWitness).
Witness to_witness(const Model& model, const RawWitness& raw, std::size_t steps = SIZE_MAX) {
  Witness w;
  w.outcome = raw.outcome;
  w.replayed = raw.replayed;
  steps = std::min(steps, raw.steps.size());
  w.schedule.reserve(steps + raw.cycle.size());
  for (std::size_t i = 0; i < steps; ++i) {
    const RawStep& s = raw.steps[i];
    Step step;
    step.action = s.action;
    step.event = model.ref(s.rank, s.event);
    step.call = std::string(format::call_name(model.event(s.rank, s.event).call));
    if (s.action == StepAction::match) {
      step.receive = model.post_ref(s.recv);
      step.send = model.post_ref(s.send);
      w.matches.push_back({step.receive, step.send, model.ops[s.recv].kind == OpKind::probe});
    }
    w.schedule.push_back(std::move(step));
  }
  if (steps < raw.steps.size() || raw.omitted) return w;
  for (const RawBlocked& b : raw.cycle) {
    Blocked out;
    out.event = model.ref(b.rank, b.event);
    out.call = std::string(format::call_name(model.event(b.rank, b.event).call));
    out.waits_for = b.waits_for;
    w.cycle.push_back(std::move(out));
    Step step;
    step.action = StepAction::blocked;
    step.event = w.cycle.back().event;
    step.call = w.cycle.back().call;
    w.schedule.push_back(std::move(step));
  }
  return w;
}

// The steps of a witness a finding's note shows (all a race witness keeps
// past Tuning::witness_steps).
constexpr std::size_t k_shown_steps = k_witness_head;

// Return the schedule of `w` as one line for a finding's notes; `size`: the
// whole schedule's length when `w` holds only its first k_shown_steps.
std::string schedule_note(const Witness& w, std::optional<std::size_t> size = std::nullopt) {
  const std::size_t total = size.value_or(w.schedule.size());
  std::string out = fmt::format("witness ({} steps, replayed): ", total);
  constexpr std::size_t k_shown = k_shown_steps;
  for (std::size_t i = 0; i < w.schedule.size() && i < k_shown; ++i) {
    const Step& s = w.schedule[i];
    if (i) out += ", ";
    if (s.action == StepAction::match) {
      out += fmt::format("{} takes {}", s.receive.str(), s.send.str());
    } else {
      out += fmt::format("{} {} {}", step_action_name(s.action), s.event.str(), s.call);
    }
  }
  if (total > k_shown) out += fmt::format(", ... ({} more)", total - k_shown);
  return out;
}

// Return how many steps of `w` go up to the step where receive `recv` took
// `send` (a prefix of a schedule replays as far as it goes), or all of them
// when it is a bad end.
std::size_t up_to_match(const RawWitness& w, uint32_t recv, uint32_t send) {
  if (w.outcome != Outcome::match) return w.steps.size();
  for (std::size_t i = 0; i < w.steps.size(); ++i) {
    const RawStep& s = w.steps[i];
    if (s.action == StepAction::match && s.recv == recv && s.send == send) return i + 1;
  }
  return w.steps.size();
}

// Return what `reuse` (find_status_reuse) reuses: "0:2 MPI_Ssend to rank 1,
// tag 1, MPI_COMM_WORLD names rank 1, the source of the message 0:1 took in
// the recorded run, which the program may have read from its status".
std::string reuse_text(const Model& model, const StatusReuse& reuse) {
  const Op& o = model.ops[reuse.op];
  const bool source = reuse.source;
  return fmt::format("{} names {} {}, the {} of the message {} took in the recorded run, which the program may "
                     "have read from its status",
                     op_text(model, reuse.op), source ? "rank" : "tag", source ? o.peer : o.tag,
                     source ? "source" : "tag", model.post_ref(reuse.receive).str());
}

// A call one of a rank's threads can still make while another of its
// threads blocks, and that can serve a blocked call.
struct FreeCall {
  uint32_t rank = 0;
  uint32_t event = 0;    // model index of the call that can go on
};

// Call `each(k)` for every call k of rank `rank` (model index) after
// `event` that the rank's own order does not put after `event` returning:
// a call of another of its threads (analyzer::keys_after_end: program order
// of each thread, thread synchronization; never a message). The model
// takes a rank's calls in the one order they were written, so a schedule
// that blocks the rank at `event` blocks one of its threads: the others
// can still make these (and no more: their later calls are among them).
// None on a rank whose threads are not lanes. Stops when `each` returns true.
template <class Each>
bool free_calls_after(const analyzer::Context& context, const Model& model, uint32_t rank, uint32_t event,
                      Each&& each) {
  const analyzer::RankThreads& threads = context.replay().threads(rank);
  const RankEvents& events = model.ranks[rank];
  if (!threads.modelled || event + 1 >= events.events.size()) return false;
  const std::vector<uint64_t> after = analyzer::keys_after_end(threads, events.seq(event));
  for (uint32_t k = event + 1; k < events.events.size(); ++k) {
    const uint64_t seq = events.seq(k);
    const uint32_t lane = threads.lane(seq);
    if ((lane >= after.size() || 2 * seq < after[lane]) && each(k)) return true;
  }
  return false;
}

// Return a call that another thread of a blocked rank of deadlock witness
// `w` can make, running on from the witness's end (free_calls_after), in a
// run of those threads after which some blocked call can return: then the
// deadlock is one of the order the model took the rank's threads in, not
// one of the program. Nothing when no blocked call can ever return.
//
// The threads run on one call at a time, each in its own order: a call is
// made once the thread's call before it returned; it returns once each op
// it waits for is complete: a send matched (at once when buffered), a
// receive or probe matched, a collective called by every member (zero
// buffering, as the witness). An op counts as matched when the witness
// matched it, or when a posted op of the other side that the witness left
// unmatched, or that a thread running on posted, accepts it by envelope:
// more than MPI allows (one message per receive, non-overtaking), so more
// runs go on, and a deadlock is kept only when even these cannot end it.
// A witness cut short (omitted steps) is not searched: its first such call
// is returned.
std::optional<FreeCall> first_escape(const analyzer::Context& context, const Model& model, const RawWitness& w) {
  struct Lane {
    uint32_t rank = 0;
    std::vector<uint32_t> calls;  // model indices, in order
    std::size_t next = 0;         // calls[next] is to be made or returns next
    bool made = false;            // calls[next] was made
  };
  std::vector<Lane> lanes;
  for (const RawBlocked& b : w.cycle) {
    const analyzer::RankThreads& threads = context.replay().threads(b.rank);
    std::vector<std::pair<uint32_t, std::size_t>> of_lane;  // thread lane -> index in lanes
    free_calls_after(context, model, b.rank, b.event, [&](uint32_t k) {
      const uint32_t lane = threads.lane(model.ranks[b.rank].seq(k));
      auto it = std::find_if(of_lane.begin(), of_lane.end(), [&](const auto& e) { return e.first == lane; });
      if (it == of_lane.end()) {
        of_lane.emplace_back(lane, lanes.size());
        lanes.push_back({b.rank, {}, 0, false});
        it = std::prev(of_lane.end());
      }
      lanes[it->second].calls.push_back(k);
      return false;
    });
  }
  if (lanes.empty()) return std::nullopt;
  if (w.omitted) return FreeCall{lanes.front().rank, lanes.front().calls.front()};

  const auto world = static_cast<uint32_t>(model.ranks.size());
  // The calls below made_to[r] were made in the witness (a blocked rank's blocked call too).
  std::vector<uint32_t> made_to(world), first(world, k_none);
  for (uint32_t r = 0; r < world; ++r) made_to[r] = static_cast<uint32_t>(model.ranks[r].events.size());
  for (const RawBlocked& b : w.cycle) made_to[b.rank] = b.event + 1;
  std::unordered_set<uint32_t> matched;
  for (const RawStep& st : w.steps) {
    if (st.action == StepAction::call && first[st.rank] == k_none) first[st.rank] = st.event;
    if (st.action == StepAction::match) {
      matched.insert(st.recv);
      if (model.ops[st.recv].kind != OpKind::probe) matched.insert(st.send);
    }
  }
  // The sends and receives posted in the witness (its part: every op before it completed) and left unmatched.
  std::vector<uint32_t> open;
  const auto add_open = [&](uint32_t rank, uint32_t k) {
    for (uint32_t op : model.posts(rank, k)) {
      const Op& o = model.ops[op];
      if ((o.kind == OpKind::send || o.kind == OpKind::recv) && !matched.count(op)) open.push_back(op);
    }
  };
  for (uint32_t r = 0; r < world; ++r) {
    for (uint32_t k = first[r]; first[r] != k_none && k < made_to[r]; ++k) add_open(r, k);
  }
  std::unordered_set<uint64_t> made_here;  // (rank << 32) | call: made by the threads running on
  const auto posted = [&](uint32_t op) {
    const Op& o = model.ops[op];
    return o.post < made_to[o.rank] || made_here.count((uint64_t{o.rank} << 32) | o.post) != 0;
  };
  const auto complete = [&](uint32_t op) {
    const Op& o = model.ops[op];
    if (matched.count(op) || (o.kind == OpKind::send && o.mode == SendMode::buffered)) return true;
    if (o.kind == OpKind::coll) {
      const Instance& in = model.instances[o.instance];
      return std::all_of(in.members.begin(), in.members.end(),
                         [&](uint32_t m) { return m != k_none && posted(m); });
    }
    return std::any_of(open.begin(), open.end(), [&](uint32_t p) {
      const Op& f = model.ops[p];
      return o.kind == OpKind::send ? f.kind == OpKind::recv && accepts(f, o) : accepts(o, f);
    });
  };
  const auto returns = [&](uint32_t rank, uint32_t k) {
    const auto waited = model.completes(rank, k);
    if (!std::all_of(waited.begin(), waited.end(), complete)) return false;
    const auto own = model.posts(rank, k);
    return std::all_of(own.begin(), own.end(), [&](uint32_t op) { return model.ops[op].done != k || complete(op); });
  };
  std::optional<FreeCall> last;  // the last call made here
  for (bool changed = true; changed;) {
    changed = false;
    for (Lane& lane : lanes) {
      while (lane.next < lane.calls.size()) {
        const uint32_t k = lane.calls[lane.next];
        if (!lane.made) {
          lane.made = changed = true;
          made_here.insert((uint64_t{lane.rank} << 32) | k);
          add_open(lane.rank, k);
          last = FreeCall{lane.rank, k};
        }
        if (!returns(lane.rank, k)) break;
        ++lane.next;
        lane.made = false;
      }
    }
    for (const RawBlocked& b : w.cycle) {
      if (returns(b.rank, b.event)) return last;
    }
  }
  return std::nullopt;
}

// Return the first rank of `model` whose calls lie on more than one of its
// threads (lanes), or k_none.
uint32_t first_threaded_rank(const analyzer::Context& context, const Model& model) {
  for (uint32_t r = 0; r < model.ranks.size(); ++r) {
    const analyzer::RankThreads& threads = context.replay().threads(r);
    if (!threads.modelled) continue;
    const RankEvents& events = model.ranks[r];
    for (uint32_t k = 1; k < events.events.size(); ++k) {
      if (threads.lane(events.seq(k)) != threads.lane(events.seq(0))) return r;
    }
  }
  return k_none;
}

// Drop the deadlocks of `sol` that hold in one order of a rank's threads
// only (first_escape), and mark the deadlocking alternatives of its
// races that may (RawAlternative::free_rank): their outcome is not known.
// A dropped deadlock is not searched past: the solver stops at one per part.
void keep_thread_deadlocks(const analyzer::Context& context, const Model& model, Solution& sol) {
  std::erase_if(sol.deadlocks, [&](const RawWitness& w) { return first_escape(context, model, w).has_value(); });
  std::optional<uint32_t> threaded;  // first_threaded_rank, once asked
  for (RawRace& race : sol.races) {
    for (RawAlternative& a : race.alternatives) {
      if (a.verdict != Verdict::sat || !a.outcome_known || a.outcome != Outcome::deadlock) continue;
      if (a.witness && a.witness->outcome == Outcome::deadlock) {
        if (const auto free = first_escape(context, model, *a.witness)) {
          a.free_rank = free->rank;
          a.free_event = free->event;
        }
        continue;
      }
      if (!threaded) threaded = first_threaded_rank(context, model);
      a.free_rank = *threaded;
    }
  }
}

std::string free_call_text(const analyzer::Context& context, const Model& model, const RawAlternative& a) {
  const analyzer::RankThreads& threads = context.replay().threads(a.free_rank);
  if (a.free_event == k_none) {
    return fmt::format("the threads of rank {} call MPI independently, and the schedule takes them in one order",
                       a.free_rank);
  }
  const uint64_t seq = model.ranks[a.free_rank].seq(a.free_event);
  return fmt::format("{} on {} of rank {} can still be called while the rank blocks (the schedule takes its threads "
                     "in one order)",
                     event_text(model, a.free_rank, a.free_event), threads.lane_name(threads.lane(seq)), a.free_rank);
}

// The finding of race `race`; its witness holds at most `max_steps` steps
// (check prints only the note, which shows k_shown_steps of them; prove
// keeps whole witnesses within Tuning::witness_steps), Witness::omitted the
// rest.
ProveFinding race_finding(const analyzer::Context& context, const Model& model, const RawRace& race,
                          std::size_t max_steps) {
  const Op& r = model.ops[race.recv];
  const RawAlternative* bad = nullptr;       // a deadlock, or a bad end by itself: an error
  const RawAlternative* combined = nullptr;  // a message unreceived only with other alternative matches: a warning
  const RawAlternative* first = nullptr;
  const RawAlternative* unsure = nullptr;  // a bad end only where a call reuses a changed status: not known
  std::vector<const RawAlternative*> feasible;
  for (const RawAlternative& a : race.alternatives) {
    if (a.verdict != Verdict::sat) continue;
    feasible.push_back(&a);
    if (!first) first = &a;
    if (!a.outcome_known || a.outcome == Outcome::harmless) continue;
    if (a.reuse.op != k_none || a.free_rank != k_none) {
      if (!unsure) unsure = &a;
      continue;
    }
    // A witnessed deadlock is an error whatever other wildcard choices it needs.
    const bool error = a.alone || a.outcome == Outcome::deadlock || a.outcome == Outcome::mismatch;
    // A match that does not fit is shown first: it is an error of that match itself.
    if (error && (!bad || (!bad->alone && a.alone) ||
                  (a.outcome == Outcome::mismatch && bad->outcome != Outcome::mismatch))) {
      bad = &a;
    }
    if (!error && !combined) combined = &a;
  }
  ProveFinding f;
  f.finding.kind = std::string(k_race);
  f.finding.severity = bad ? Severity::error : combined ? Severity::warning : Severity::info;
  const std::string what = r.kind == OpKind::probe ? "wildcard probe" : "wildcard receive";
  if (bad && bad->outcome == Outcome::mismatch) {
    const std::optional<analyzer::Fit> fit = misfit(model, race.recv, bad->send);
    const bool truncated = fit && fit->kind == analyzer::Fit::Kind::truncated;
    f.finding.message = fmt::format("{} can also take the message of {}, which {}", what, op_text(model, bad->send),
                                    truncated ? "does not fit its buffer (message truncated)"
                                              : "has another type signature than its buffer");
    f.finding.notes.push_back(
        truncated ? "a receive buffer must hold the whole message (MPI-3.1 section 3.2.4: MPI_ERR_TRUNCATE); "
                    "a receive from MPI_ANY_SOURCE or MPI_ANY_TAG must have room for every message it can match"
                  : "the types of a send and its receive must match (MPI-3.1 section 3.3.1), for every message a "
                    "wildcard receive can match");
  } else if (bad && bad->alone) {
    f.finding.message = fmt::format("{} can also take the message of {}, and then the run {}", what,
                                    op_text(model, bad->send),
                                    bad->outcome == Outcome::deadlock ? "deadlocks" : "ends with a message never received");
  } else if (bad || combined) {
    const RawAlternative* shown = bad ? bad : combined;
    f.finding.message = fmt::format(
        "{} can also take the message of {}; together with other wildcard choices the run can then {}", what,
        op_text(model, shown->send),
        shown->outcome == Outcome::deadlock ? "deadlock" : "end with a message never received");
  } else if (unsure) {
    f.finding.message = fmt::format(
        "{} can also take the message of {}; whether {} is not known from the trace: {}", what,
        op_text(model, unsure->send),
        unsure->outcome == Outcome::deadlock   ? "the run then deadlocks"
        : unsure->outcome == Outcome::mismatch ? "it can (the message does not fit its buffer)"
                                               : "the run then ends with a message never received",
        unsure->reuse.op != k_none ? reuse_text(model, unsure->reuse) : free_call_text(context, model, *unsure));
    f.finding.notes.push_back(
        unsure->reuse.op != k_none
            ? "the trace records the values a call used, not where the program took them from: a call that names "
              "status.MPI_SOURCE or status.MPI_TAG follows the match, so the run with the recorded values is no "
              "witness (smtrace explore re-runs the program with the match forced)"
            : "a deadlock needs every thread of a blocked rank to block; the trace does not say which calls "
              "the other threads would then make (smtrace explore re-runs the program with the match forced)");
  } else {
    f.finding.message = fmt::format(
        "{} can take {} other message{}; with {} the run still completes, whatever other wildcards take (no "
        "deadlock, no message left unreceived)",
        what, feasible.size(), feasible.size() == 1 ? "" : "s", feasible.size() == 1 ? "it" : "each");
    f.finding.notes.push_back(
        "proved for the communication only: the other match can change the data the program computes; "
        "re-execution, not a trace, can show whether the output changes");
  }
  const std::string recorded = r.recorded != k_none ? model.post_ref(r.recorded).str() : std::string("nothing");
  f.finding.locations.push_back(location(context, model, r.rank, r.post,
                                         fmt::format("rank {} {} here ({}); the run took {}", r.rank,
                                                     r.kind == OpKind::probe ? "probes" : "receives",
                                                     op_text(model, race.recv), recorded)));
  if (r.recorded != k_none) {
    const Op& s = model.ops[r.recorded];
    f.finding.locations.push_back(location(context, model, s.rank, s.post, "the message taken in the recorded run"));
  }
  // Past k_shown_alternatives, the bad ones first and a count (prove's JSON `races` lists every one).
  constexpr std::size_t k_shown_alternatives = 16;
  if (feasible.size() > k_shown_alternatives) {
    std::stable_partition(feasible.begin(), feasible.end(), [](const RawAlternative* a) {
      return a->outcome_known && a->outcome != Outcome::harmless;
    });
    f.finding.notes.push_back(fmt::format("{} more messages can be taken instead (not shown)",
                                          feasible.size() - k_shown_alternatives));
    feasible.resize(k_shown_alternatives);
  }
  for (const RawAlternative* a : feasible) {
    const Op& s = model.ops[a->send];
    std::string note = "can be taken instead";
    if (a->outcome_known && a->outcome != Outcome::harmless && a->reuse.op != k_none) {
      note += a->outcome == Outcome::deadlock    ? ": whether the run then deadlocks is not known"
              : a->outcome == Outcome::mismatch ? ": whether the receive can take it is not known"
                                                : ": whether a message is then never received is not known";
      note += fmt::format(" ({} reuses its status)", model.post_ref(a->reuse.op).str());
    } else if (a->outcome_known && a->outcome == Outcome::mismatch) {
      const std::optional<analyzer::Fit> fit = misfit(model, race.recv, a->send);
      const OpBuffer* sent = model.buffer(a->send);
      const OpBuffer* room = model.buffer(race.recv);
      note += fmt::format(": it {} ({}{})",
                          fit && fit->kind == analyzer::Fit::Kind::truncated ? "does not fit" : "has another type",
                          sent && room ? fmt::format("{} into {}: ",
                                                     analyzer::describe_buffer(context.rank(s.rank), sent->datatype,
                                                                               sent->count),
                                                     analyzer::describe_buffer(context.rank(r.rank), room->datatype,
                                                                               room->count))
                                       : std::string(),
                          fit ? fit->detail : std::string());
    } else if (a->outcome_known) {
      note += a->outcome == Outcome::deadlock    ? ": the run then deadlocks"
              : a->outcome == Outcome::unmatched ? ": a message is then never received"
                                                 : " (the run still completes)";
      if (a->outcome != Outcome::harmless && !a->alone) note += " (together with other wildcard choices)";
    }
    f.finding.locations.push_back(location(context, model, s.rank, s.post, std::move(note)));
  }
  const RawAlternative* shown = bad ? bad : combined ? combined : unsure ? unsure : first;
  if (shown && shown->witness) {
    const RawWitness& raw = *shown->witness;
    // A cut run (solve.hpp, k_witness_head) knows its steps to the match from the alternative.
    const std::size_t full = raw.steps.size() + raw.omitted;
    const std::size_t steps = raw.omitted == 0 ? up_to_match(raw, race.recv, shown->send)
                              : raw.outcome == Outcome::match && shown->witness_steps ? shown->witness_steps
                                                                                      : full;
    const std::size_t size = steps + (steps == full ? raw.cycle.size() : 0);
    f.witness = to_witness(model, raw, std::min(steps, max_steps));
    f.witness->omitted = size - f.witness->schedule.size();
    f.finding.notes.push_back(schedule_note(*f.witness, size));
  }
  return f;
}

ProveFinding deadlock_finding(const analyzer::Context& context, const Model& model, const RawWitness& raw) {
  ProveFinding f;
  f.finding.kind = std::string(k_deadlock);
  f.finding.severity = Severity::error;
  std::vector<uint32_t> ranks;
  bool rma_sync = false;  // a rank blocks in an RMA synchronization call (which MPI may or may not make wait)
  bool collective = false;  // a rank blocks in a collective (MPI allows any to wait for every member)
  for (const RawBlocked& b : raw.cycle) {
    ranks.push_back(b.rank);
    const format::Call c = model.event(b.rank, b.event).call;
    rma_sync = rma_sync || format::epoch_step(format::call_traits(c).epoch).waits;
    collective = collective || format::call_family(c) == format::Family::coll;
  }
  std::string because = "buffered messages";
  if (rma_sync) because += " or did not make an RMA synchronization call wait";
  if (collective) because += " or did not make a collective wait for every member";
  f.finding.message =
      fmt::format("deadlock under zero buffering: rank{} {} can block for good (the run completed only because MPI {})",
                  ranks.size() == 1 ? "" : "s", analyzer::rank_list(ranks), because);
  for (const RawBlocked& b : raw.cycle) {
    f.finding.locations.push_back(location(
        context, model, b.rank, b.event,
        b.waits_for.empty() ? fmt::format("rank {} blocks here", b.rank)
                            : fmt::format("rank {} blocks here, waiting for rank{} {}", b.rank,
                                          b.waits_for.size() == 1 ? "" : "s", analyzer::rank_list(b.waits_for))));
  }
  f.witness = to_witness(model, raw);
  f.finding.notes.push_back(schedule_note(*f.witness));
  f.finding.notes.push_back(
      collective ? "under zero buffering a standard send returns only once received (as MPI_Ssend), and a "
                   "collective only once every member called it (MPI allows any collective to synchronize)"
                 : "under zero buffering a standard send returns only once received (as MPI_Ssend)");
  return f;
}

bool finding_before(const ProveFinding& a, const ProveFinding& b) {
  auto key = [](const ProveFinding& f) {
    const analyzer::EventRef at = f.finding.locations.empty() ? analyzer::EventRef{} : f.finding.locations[0].event;
    return std::tuple(static_cast<int>(f.finding.severity), f.finding.kind, at, f.finding.message);
  };
  return key(a) < key(b);
}

// Give the findings of prove()'s report whole witnesses, in report order,
// while their steps together stay within `budget` (at least one witness
// is always whole): `findings` were made with k_shown_steps, `races[i]` is the race
// of findings[i] (nullptr: a deadlock, whose witness is always whole). The
// witnesses of a part's races grow with the square of its length when each
// is kept whole (one run from the part's start to each match), so past the
// budget a finding keeps the steps its note shows.
void keep_whole_witnesses(const analyzer::Context& context, const Model& model, std::vector<ProveFinding>& findings,
                          const std::vector<const RawRace*>& races, uint64_t budget) {
  std::vector<std::size_t> order(findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return finding_before(findings[a], findings[b]); });
  uint64_t used = 0;
  for (std::size_t i : order) {
    if (!races[i] && findings[i].witness) used += findings[i].witness->schedule.size();
  }
  for (std::size_t i : order) {
    const std::optional<Witness>& w = findings[i].witness;
    if (!races[i] || !w || w->omitted == 0) continue;
    const uint64_t size = w->schedule.size() + w->omitted;
    if (used > 0 && used + size > budget) break;
    findings[i] = race_finding(context, model, *races[i], SIZE_MAX);
    used += findings[i].witness->schedule.size();  // less than `size` when solve() kept only a head
  }
}

// Return the index of event `seq` of `rank` in the model.
// Return the index of the first model event of `rank` with seq >= `seq`
// (the rank's event count when there is none).
uint32_t first_event_from(const Model& model, uint32_t rank, uint64_t seq) {
  return model.ranks[rank].first_from(seq);
}

uint32_t event_index(const Model& model, const analyzer::EventRef& ref) {
  if (ref.rank >= model.ranks.size()) {
    throw std::invalid_argument(fmt::format("event {}: no rank {} (the trace has {})", ref.str(), ref.rank,
                                            model.ranks.size()));
  }
  const uint32_t at = first_event_from(model, ref.rank, ref.seq);
  if (at == model.ranks[ref.rank].events.size() || model.ranks[ref.rank].seq(at) != ref.seq) {
    throw std::invalid_argument(fmt::format(
        "event {} is not a communication call of the trace (see `smtrace dump DIR --rank {}`)", ref.str(), ref.rank));
  }
  return at;
}

RawQuestion raw_question(const Model& model, const Question& q) {
  RawQuestion raw;
  raw.kind = q.kind;
  const uint32_t a = event_index(model, q.a), b = event_index(model, q.b);
  if (q.kind == QuestionKind::can_precede) {
    raw.a_rank = q.a.rank;
    raw.a_event = a;
    raw.b_rank = q.b.rank;
    raw.b_event = b;
    return raw;
  }
  auto find = [&](const analyzer::EventRef& recv_ref, uint32_t recv_event, const analyzer::EventRef& send_ref,
                  uint32_t send_event) {
    for (uint32_t r : model.posts(recv_ref.rank, recv_event)) {
      const Op& ro = model.ops[r];
      if (ro.kind != OpKind::recv && ro.kind != OpKind::probe) continue;
      for (uint32_t s : model.posts(send_ref.rank, send_event)) {
        if (model.ops[s].kind != OpKind::send) continue;
        raw.recv = r;
        raw.send = s;
        if (accepts(ro, model.ops[s])) return true;
      }
    }
    return raw.recv != k_none;
  };
  if (!find(q.a, a, q.b, b)) {
    raw.recv = raw.send = k_none;
    if (!find(q.b, b, q.a, a)) {
      throw std::invalid_argument(fmt::format("can-match {} {}: needs a receive or probe and a send", q.a.str(),
                                              q.b.str()));
    }
  }
  return raw;
}

Answer to_answer(const Model& model, const Question& q, const RawQuestion& raw, RawAnswer&& ans) {
  Answer out;
  out.question = q;
  if (q.kind == QuestionKind::can_match) {
    out.question.a = model.post_ref(raw.recv);  // receive first
    out.question.b = model.post_ref(raw.send);
  }
  out.verdict = ans.verdict;
  if (ans.witness) out.witness = to_witness(model, *ans.witness);
  out.explanation = std::move(ans.explanation);
  out.reason = std::move(ans.reason);
  return out;
}

bool trace_complete(const analyzer::Context& context) {
  for (uint32_t r = 0; r < context.world_size(); ++r) {
    if (!context.rank(r).present || !context.rank(r).finalized()) return false;
  }
  return context.world_size() > 0;
}

enum class Mode : uint8_t { prove, races, deadlocks };

// Return the deadline `seconds` from now.
Deadline deadline_in(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

// The model of the trace and what every question on it needs, built once
// for the SMT checks of one analysis (or for one prove()).
struct Built {
  Model model;
  std::unique_ptr<Prepared> prepared;  // refers to `model`: a Built is never moved
};
class SharedModel {
 public:
  // What the checks collect while the trace is read: one pass per rank for
  // all of them (the first check to ask makes it).
  Collector& collector() { return m_collector; }
  // Return what the first call built from the collector; nullptr when the
  // budget ran out before or while building, or the trace is one the model
  // cannot hold (not_built() says which; it is not tried again).
  // `figures` and `threads`: Prepared's.
  const Built* get(const analyzer::Context& context, const Tuning& tuning, const Deadline& deadline,
                   PairFigures figures, unsigned threads) {
    std::lock_guard lock(m_mutex);
    if (!m_tried) {
      m_tried = true;  // (before build_model, which asks tried())
      try {
        check_world_size(context.world_size());  // (its own reason, even when the budget is spent)
        if (deadline && std::chrono::steady_clock::now() > *deadline) return nullptr;
        auto built = std::make_unique<Built>();
        built->model = build_model(context, m_collector, deadline);
        m_collector.release();  // built once: nothing reads it again
        give_back_free_memory();
        built->prepared = std::make_unique<Prepared>(built->model, tuning, deadline, figures, threads);
        m_built = std::move(built);
      } catch (const BudgetSpent&) {
      } catch (const ModelLimit& limit) {
        m_limit = limit.what();
      }
    }
    return m_built.get();
  }
  // Return true once get() was called: the model is built or never will
  // be, and the checks sharing it read no more of the replay. Lock-free:
  // build_model asks it (Context::releasable_replay) under get()'s lock.
  bool tried() const { return m_tried; }
  // Return why get() built nothing when the budget was not the reason
  // (ModelLimit's text), else nullopt.
  std::optional<std::string> not_built() {
    std::lock_guard lock(m_mutex);
    return m_limit;
  }

 private:
  std::mutex m_mutex;
  Collector m_collector;
  std::atomic<bool> m_tried = false;
  std::unique_ptr<Built> m_built;
  std::optional<std::string> m_limit;
};

// One budget for the SMT checks of one analysis, so that `smtrace check`
// takes at most as long as with `--smt-timeout 0` plus S. It is a
// wall-clock one of S seconds less what their collecting pass added to the
// reading's wall time: Collector::spent, summed over the ranks, divided by
// the threads that read them (analyzer::Options::threads, at most one per
// rank; the same figure for smtrace-mpi, whose process 0 is given each
// rank's time: the two commands leave the SMT checks the same budget; a
// sum not divided would leave a trace of many ranks none), and it starts when the first of them needs their model (its
// finish(), or rma-race's schedule questions), after the trace was read
// and replayed; from there it covers their own work: building the model,
// match pairs, replays and Z3. smtrace-mpi's process 0 gets each rank's
// collecting time with its collection from the process that read it, so
// both commands leave the SMT checks the same time. What the bound leaves
// out (docs/cli.md, --smt-timeout): the work past the deadline until the
// stage running then looks at the clock (Pace, check_deadline, Z3's
// timeout) and frees what it built, the findings' rendering, freeing the
// model at the end; and the collecting time is an estimate from a sample
// of its calls.
class SharedBudget {
 public:
  SharedBudget(double seconds, std::shared_ptr<SharedModel> shared) : m_seconds(seconds), m_shared(std::move(shared)) {}
  // Return when it runs out, starting the clock on the first call, which
  // takes the collecting time as read by `readers` threads.
  Deadline end(unsigned readers = 1) {
    std::lock_guard lock(m_mutex);
    if (!m_end) {
      const double collected = std::chrono::duration<double>(m_shared->collector().spent()).count();
      m_end = deadline_in(m_seconds - collected / std::max(readers, 1U));
    }
    return m_end;
  }
  // The threads that read the ranks of `context` (its analysis's).
  static unsigned readers(const analyzer::Context& context) {
    uint32_t present = 0;
    for (uint32_t r = 0; r < context.world_size(); ++r) present += context.rank(r).present ? 1 : 0;
    return format::thread_count(context.options().threads, present);
  }
  // Return the seconds left, starting the clock on the first call.
  double left() { return std::chrono::duration<double>(*end() - std::chrono::steady_clock::now()).count(); }

 private:
  std::mutex m_mutex;
  double m_seconds;
  std::shared_ptr<SharedModel> m_shared;
  Deadline m_end;
};

// A predicted race's answer, kept for prove()'s report (by the pair of accesses).
struct Prediction {
  analyzer::EventRef first, second;  // the accesses' starts, recorded order
  Verdict verdict = Verdict::unknown;
  std::optional<Witness> witness;
};

// The analyzer check behind prove() (Mode::prove) and the two SMT checks.
// The prove and message-race instances also answer the access checks'
// schedule questions (analyzer::ScheduleOracle): can one access start
// before another ends in some execution, as a can-precede question between
// the communication calls around them.
class SmtCheck final : public analyzer::Check, public analyzer::ScheduleOracle {
 public:
  SmtCheck(Mode mode, ProveOptions options, std::shared_ptr<ProveResult> out,
           std::shared_ptr<SharedBudget> budget = nullptr, std::shared_ptr<SharedModel> shared = nullptr,
           std::shared_ptr<std::vector<Prediction>> predictions = nullptr)
      : m_mode(mode),
        m_options(std::move(options)),
        m_out(std::move(out)),
        m_budget(std::move(budget)),
        m_shared(shared ? std::move(shared) : std::make_shared<SharedModel>()),
        m_predictions(std::move(predictions)) {}

  std::string_view name() const override {
    return m_mode == Mode::prove ? k_prove : m_mode == Mode::races ? k_race : k_deadlock;
  }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    switch (m_mode) {
      case Mode::races:
        return "a wildcard receive whose other possible match deadlocks or leaves a message unreceived (SMT proof)";
      case Mode::deadlocks:
        return "a deadlock feasible without MPI buffering: the program relies on buffered sends (SMT proof)";
      case Mode::prove:
        break;
    }
    return "smtrace prove's analysis";
  }
  // Races are other matches of wildcard receives: without the posted source
  // and tag (an imported trace) no receive is known to be a wildcard.
  format::ContentSet needs() const override {
    return m_mode == Mode::races ? format::content_bit(format::Content::receive_envelope) : 0;
  }
  std::unique_ptr<analyzer::RankPass> rank_pass(const analyzer::RankData& data) override {
    return m_shared->collector().rank_pass(data);
  }
  // smtrace-mpi: the shared collecting pass runs where the rank is read.
  // Only the check that got it (the first to ask) saves and loads it; the
  // other's pass of the rank is nullptr there and here, and the collection
  // it reads is the same Collector's.
  bool saves_passes() const override { return true; }
  void save_pass(const analyzer::RankPass& pass, analyzer::WireWriter& out) const override {
    Collector::save(pass, out);
  }
  std::unique_ptr<analyzer::RankPass> load_pass(const analyzer::RankData& data,
                                                analyzer::WireReader& in) const override {
    return m_shared->collector().load(data, in);
  }
  void finish(const analyzer::Context& context, std::vector<std::unique_ptr<analyzer::RankPass>>& passes,
              std::vector<Finding>& out) override {
    (void)passes;
    if (m_mode != Mode::prove && !trace_complete(context)) return;  // the deadlock check explains a stopped run
    const Built* built = this->built(context);
    if (!built) {
      not_built(context, out);
      return;
    }
    const Model& model = built->model;
    std::vector<RawQuestion> raw;
    for (const Question& q : m_options.questions) raw.push_back(raw_question(model, q));
    SolveOptions so;
    so.buffering = m_options.buffering;
    so.timeout_s = budget_left();
    so.threads = m_options.threads;
    so.tuning = m_options.tuning;
    so.races = m_options.races;
    so.deadlocks = m_options.deadlocks;
    so.outcomes = true;
    so.errors_only = !m_options.harmless_races;
    so.smt2 = m_options.emit_smt2;
    if (!model.buffers.empty()) {
      so.misfit = [&model](uint32_t recv, uint32_t send) { return misfit(model, recv, send).has_value(); };
    }
    Solution sol = solve(model, *built->prepared, raw, so);
    keep_thread_deadlocks(context, model, sol);

    std::vector<ProveFinding> findings;
    std::vector<const RawRace*> of;  // the race of each finding (nullptr: a deadlock)
    for (const RawWitness& w : sol.deadlocks) {
      findings.push_back(deadlock_finding(context, model, w));
      of.push_back(nullptr);
    }
    for (const RawRace& race : sol.races) {
      const bool any = std::any_of(race.alternatives.begin(), race.alternatives.end(),
                                   [](const RawAlternative& a) { return a.verdict == Verdict::sat; });
      if (!any) continue;
      ProveFinding f = race_finding(context, model, race, k_shown_steps);
      if (f.finding.severity == Severity::info && !m_options.harmless_races) continue;
      findings.push_back(std::move(f));
      of.push_back(&race);
    }
    if (m_mode == Mode::prove) keep_whole_witnesses(context, model, findings, of, m_options.tuning.witness_steps);
    if (m_mode != Mode::prove) {
      for (ProveFinding& f : findings) out.push_back(std::move(f.finding));
      if (sol.unknown) {
        Finding f;
        f.kind = std::string(name());
        f.severity = Severity::info;
        f.message = fmt::format("{} question{} left undecided within --smt-timeout {} s (unknown, not a proof)",
                                sol.unknown, sol.unknown == 1 ? "" : "s", m_options.smt_timeout_s);
        for (const std::string& why : sol.undecided) f.notes.push_back("undecided: " + why);
        out.push_back(std::move(f));
      }
      return;
    }
    ProveResult& result = *m_out;
    result.findings = std::move(findings);
    for (std::size_t i = 0; i < raw.size(); ++i) {
      result.answers.push_back(to_answer(model, m_options.questions[i], raw[i], std::move(sol.answers[i])));
    }
    for (const RawRace& race : sol.races) {
      Race r;
      r.receive = model.post_ref(race.recv);
      if (model.ops[race.recv].recorded != k_none) r.recorded = model.post_ref(model.ops[race.recv].recorded);
      for (const RawAlternative& a : race.alternatives) {
        // A bad end that reuses a changed status (find_status_reuse) is not known.
        r.alternatives.push_back(
            {model.post_ref(a.send), a.verdict, a.outcome,
             a.outcome_known && a.reuse.op == k_none && a.free_rank == k_none, a.alone});
      }
      result.races.push_back(std::move(r));
    }
    result.stats = std::move(sol.stats);
    result.unknown = sol.unknown;
    result.undecided = std::move(sol.undecided);
    result.smt2 = std::move(sol.smt2);
  }
  void stats(std::map<std::string, uint64_t>& out) const override {
    (void)out;  // only deterministic figures belong here; the unknown count depends on timing
  }

  analyzer::ScheduleOracle* schedule_oracle() override { return m_mode == Mode::deadlocks ? nullptr : this; }
  // The replay's point-to-point ops and matches are read only by
  // build_model: once the shared model was tried, never again.
  bool reads_replay_ops() const override { return !m_shared->tried(); }
  // Last, so that every check that reads the replay's ops has read them
  // before the model's build frees them (docs/bench.md, the twentieth round).
  FinishStage finish_stage() const override { return FinishStage::last; }

  // `later` can start before `earlier` returns when the last communication
  // call of later's rank before it can return before the first one of
  // earlier's rank at or after it is called: the events in between are
  // local, so each can run right after (before) them.
  std::vector<analyzer::ScheduleAnswer> can_reorder(const analyzer::Context& context,
                                                    const std::vector<analyzer::ScheduleQuestion>& questions) override {
    using V = analyzer::ScheduleAnswer::Verdict;
    std::vector<analyzer::ScheduleAnswer> answers(questions.size());
    if (m_mode != Mode::prove && !trace_complete(context)) {
      for (auto& a : answers) a.reason = "the trace is incomplete";
      return answers;
    }
    const Built* built = this->built(context);
    if (!built) {
      const std::optional<std::string> limit = m_shared->not_built();
      for (auto& a : answers) {
        a.reason = limit ? "the SMT model of the trace was not built: " + *limit
                         : std::string("the budget ran out before the SMT model of the trace was built");
      }
      return answers;
    }
    const Model& model = built->model;
    std::vector<RawQuestion> raw;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < questions.size(); ++i) {
      const analyzer::ScheduleQuestion& q = questions[i];
      if (q.later.rank >= model.ranks.size() || q.earlier.rank >= model.ranks.size()) continue;
      // p: the last communication call before `later`; e: the first at or after `earlier`.
      const uint32_t after_later = first_event_from(model, q.later.rank, q.later.seq);
      const uint32_t p = after_later == 0 ? k_none : after_later - 1;
      uint32_t e = first_event_from(model, q.earlier.rank, q.earlier.seq);
      if (e == model.ranks[q.earlier.rank].events.size()) e = k_none;
      if (p == k_none || e == k_none) {
        answers[i].reason = fmt::format("what orders {} before {} is outside the SMT model (no communication call {})",
                                        q.earlier.str(), q.later.str(), p == k_none ? "before the later access"
                                                                                    : "after the earlier one");
        continue;
      }
      RawQuestion r;
      r.kind = QuestionKind::can_precede;
      r.a_rank = q.later.rank;
      r.a_event = p;
      r.b_rank = q.earlier.rank;
      r.b_event = e;
      raw.push_back(r);
      index.push_back(i);
    }
    if (raw.empty()) return answers;
    SolveOptions so;
    so.buffering = m_options.buffering;
    so.timeout_s = budget_left();
    so.threads = m_options.threads;
    so.tuning = m_options.tuning;
    so.races = so.deadlocks = so.outcomes = false;
    Solution sol = solve(model, *built->prepared, raw, so);
    for (std::size_t k = 0; k < raw.size() && k < sol.answers.size(); ++k) {
      const analyzer::ScheduleQuestion& q = questions[index[k]];
      analyzer::ScheduleAnswer& a = answers[index[k]];
      RawAnswer& ans = sol.answers[k];
      Prediction kept{q.earlier_access, q.later_access, ans.verdict, std::nullopt};
      if (ans.verdict == Verdict::sat && ans.witness && ans.witness->reuse.op != k_none) {
        // The execution found calls with what a changed status gave in the recorded run: no witness.
        a.reason = "in the execution found, " + reuse_text(model, ans.witness->reuse) + ", so it proves nothing";
        kept.verdict = Verdict::unknown;
      } else if (ans.verdict == Verdict::sat && ans.witness) {
        a.verdict = V::feasible;
        for (const RawStep& step : ans.witness->steps) {
          if (step.action != StepAction::match) continue;
          const uint32_t recorded = model.ops[step.recv].recorded;
          if (recorded == step.send) continue;
          a.notes.push_back(fmt::format("in another execution {} takes {} (the run: {})",
                                        model.post_ref(step.recv).str(), model.post_ref(step.send).str(),
                                        recorded != k_none ? model.post_ref(recorded).str() : std::string("nothing")));
        }
        const Witness w = to_witness(model, *ans.witness);
        a.notes.push_back(fmt::format("then {} can start before {} returns: {} returns before {} is called",
                                      q.later_access.str(), q.earlier.str(), model.ref(raw[k].a_rank, raw[k].a_event).str(),
                                      model.ref(raw[k].b_rank, raw[k].b_event).str()));
        a.notes.push_back(schedule_note(w));
        kept.witness = w;
      } else if (ans.verdict == Verdict::unsat) {
        a.verdict = V::infeasible;
        a.notes = std::move(ans.explanation);
      } else {
        a.reason = ans.reason.empty() ? "unknown" : ans.reason;
      }
      if (m_predictions) m_predictions->push_back(std::move(kept));
    }
    return answers;
  }

 private:
  // Return the model of `context` and its preparation (built once, within
  // the budget, which it starts), or nullptr when the budget ran out first.
  // prove's report prints the match pairs' figures; check's reports none.
  const Built* built(const analyzer::Context& context) {
    return m_shared->get(context, m_options.tuning,
                         m_budget ? m_budget->end(SharedBudget::readers(context)) : deadline_in(m_options.smt_timeout_s),
                         m_mode == Mode::prove ? PairFigures::all : PairFigures::pairs_only, m_options.threads);
  }
  // Report that nothing was decided: the model was not built, within the
  // budget or, for a trace it cannot hold, at all.
  void not_built(const analyzer::Context& context, std::vector<Finding>& out) {
    uint64_t events = 0;
    for (uint32_t r = 0; r < context.world_size(); ++r) events += context.rank(r).events;
    const std::optional<std::string> limit = m_shared->not_built();
    const std::string why =
        limit ? fmt::format("the SMT model of the trace ({} events) was not built: {}: nothing was decided", events,
                            *limit)
              : fmt::format("the SMT model of the trace ({} events) was not built within --smt-timeout {} s: "
                            "nothing was decided",
                            events, m_options.smt_timeout_s);
    if (m_mode != Mode::prove) {
      Finding f;
      f.kind = std::string(name());
      f.severity = Severity::info;
      f.message = why + " (unknown, not a proof)";
      out.push_back(std::move(f));
      return;
    }
    ProveResult& result = *m_out;
    for (const Question& q : m_options.questions) {
      Answer a;
      a.question = q;
      a.reason = limit ? *limit : std::string("budget spent");
      result.answers.push_back(std::move(a));
    }
    result.unknown = 1 + m_options.questions.size();
    result.undecided.push_back(why);
  }
  double budget_left() const {
    return m_budget ? std::max(m_budget->left(), 0.001) : m_options.smt_timeout_s;
  }

  Mode m_mode;
  ProveOptions m_options;
  std::shared_ptr<ProveResult> m_out;
  std::shared_ptr<SharedBudget> m_budget;
  std::shared_ptr<SharedModel> m_shared;
  std::shared_ptr<std::vector<Prediction>> m_predictions;  // prove(): the answers, for its report
};

}  // namespace

std::string_view buffering_name(Buffering buffering) {
  return buffering == Buffering::zero ? "zero" : "infinite";
}

std::optional<Buffering> buffering_from_name(std::string_view name) {
  if (name == "infinite") return Buffering::infinite;
  if (name == "zero") return Buffering::zero;
  return std::nullopt;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::sat: return "sat";
    case Verdict::unsat: return "unsat";
    case Verdict::unknown: break;
  }
  return "unknown";
}

std::string_view question_name(QuestionKind kind) {
  return kind == QuestionKind::can_match ? "can-match" : "can-precede";
}

std::string_view step_action_name(StepAction action) {
  switch (action) {
    case StepAction::call: return "call";
    case StepAction::ret: return "return";
    case StepAction::match: return "match";
    case StepAction::blocked: break;
  }
  return "blocked";
}

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::match: return "match";
    case Outcome::precede: return "precede";
    case Outcome::deadlock: return "deadlock";
    case Outcome::unmatched: return "unmatched";
    case Outcome::mismatch: return "mismatch";
    case Outcome::harmless: break;
  }
  return "harmless";
}

ProveResult prove(const std::filesystem::path& dir, const ProveOptions& options) {
  auto result = std::make_shared<ProveResult>();
  auto predictions = std::make_shared<std::vector<Prediction>>();
  analyzer::Options analysis;
  analysis.checks = {std::string(k_prove)};
  // rma-race asks about accesses ordered only through wildcard matches (predictive races).
  if (options.races) analysis.checks.insert(std::string(k_rma_race));
  analysis.threads = options.threads;
  analysis.extra_checks.push_back([options, result, predictions] {
    return std::make_unique<SmtCheck>(Mode::prove, options, result, nullptr, nullptr, predictions);
  });
  const analyzer::Result analyzed = analyzer::analyze(dir, analysis);
  // The predictive races among rma-race's findings: those whose two accesses were asked about.
  for (const Finding& f : analyzed.findings) {
    if (f.kind != k_rma_race || f.locations.size() < 2) continue;
    const auto pair = std::minmax(f.locations[0].event, f.locations[1].event);
    for (const Prediction& p : *predictions) {
      if (std::minmax(p.first, p.second) != pair) continue;
      result->findings.push_back({f, p.verdict, p.witness});
      break;
    }
  }
  result->trace = dir.string();
  result->world_size = analyzed.world_size;
  result->complete = analyzed.complete;
  result->buffering = options.buffering;
  result->smt_timeout_s = options.smt_timeout_s;
  for (const auto& [key, value] : analyzed.stats) result->stats.emplace(key, value);
  std::stable_sort(result->findings.begin(), result->findings.end(), finding_before);
  return std::move(*result);
}

std::vector<std::function<std::unique_ptr<analyzer::Check>()>> check_factories(const CheckSettings& settings) {
  ProveOptions base;
  base.smt_timeout_s = settings.smt_timeout_s;
  base.buffering = settings.buffering;
  base.tuning = settings.tuning;
  base.harmless_races = false;
  ProveOptions races = base, deadlocks = base;
  races.deadlocks = false;
  deadlocks.races = false;
  auto shared = std::make_shared<SharedModel>();
  auto budget = std::make_shared<SharedBudget>(settings.smt_timeout_s, shared);
  return {
      [races, budget, shared] { return std::make_unique<SmtCheck>(Mode::races, races, nullptr, budget, shared); },
      [deadlocks, budget, shared] {
        return std::make_unique<SmtCheck>(Mode::deadlocks, deadlocks, nullptr, budget, shared);
      },
  };
}

std::vector<analyzer::RuleInfo> check_rules() {
  std::vector<analyzer::RuleInfo> out;
  for (const auto& make : check_factories({})) {
    const auto check = make();
    out.push_back({std::string(check->name()), check->severity(), std::string(check->description()), check->needs()});
  }
  return out;
}

}  // namespace smtrace::smt
