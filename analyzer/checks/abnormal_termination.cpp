// abnormal-termination: a rank whose run did not end in MPI_Finalize. A run
// that ended abnormally is never reported clean, whatever else the trace
// shows (a crash often leaves a trace in which no other check finds
// anything: every call before it was correct).
//
// How a rank ended is its Termination record (trace_format/event.hpp):
// - aborted: the rank called MPI_Abort (its error code is the event's count);
// - signal: a signal the rank raised itself (SIGSEGV, SIGABRT from an
//   assert, SIGFPE, SIGBUS...) is a crash; one that comes from outside
//   (SIGTERM, SIGKILL, SIGINT...: the launcher tearing the job down after
//   another rank failed, a time limit) stopped it;
// - exit_without_finalize: the process exited (exit(), return from main,
//   or an MPI error handler: MPI_ERRORS_ARE_FATAL ends the process from
//   inside the failing call, which is then the rank's pending event);
// - no record at all: the rank was killed by a signal no handler sees
//   (SIGKILL) or its file was cut;
// - tracer_stopped: the tracer gave up (disk full): says nothing about the
//   program, no finding.
// A rank that reached MPI_Finalize and then called MPI (MPI-3.1 section
// 8.7: nothing but MPI_Initialized, MPI_Finalized and MPI_Get_version may
// follow; Open MPI aborts the process) has that call after its end record:
// the tracer opens the file again to write it (tracer/handlers.hpp,
// record_after_finalize). One finding per call site, naming the ranks.
// A call before MPI_Init (Open MPI aborts there too) starts a trace that
// holds only that call (format::started_before_init): one finding per rank.
// So is a second MPI_Init or MPI_Init_thread (section 8.7: one per
// process), which the tracer records as any call.
// Each rank that failed by itself is one finding naming the rank, what
// ended it, and the call it was in (or its last call) with its site. Ranks
// stopped from outside are a note of those findings; when no rank failed by
// itself, they are one finding of their own (the run was stopped before it
// finished).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/content.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Event;
using format::TerminationKind;

// What the findings name of a call: kept per event, so a few fields
// rather than a copy of the Event (about 600 bytes and its vectors).
struct CallSeen {
  uint64_t seq = 0;
  format::Call call = format::Call::unspecified;
  uint32_t site = 0;
  int64_t count = 0;  // MPI_Abort's error code
  CallSeen() = default;
  explicit CallSeen(const Event& e) : seq(e.seq), call(e.call), site(e.site), count(e.count) {}
};

// The last call a rank made and the call it stopped inside, if any.
struct LastCalls {
  std::optional<CallSeen> last;     // the last event that returned
  std::optional<CallSeen> pending;  // the call the rank stopped inside
  // The first MPI call written after the end record, or before MPI_Init (Pass::after_end).
  std::optional<CallSeen> outside;
  std::optional<CallSeen> first_init, init_again;  // MPI_Init(_thread), and a second one
};

class Pass final : public RankPass {
 public:
  void event(const Event& e) override {
    const format::CallTraits& t = format::call_traits(e.call);
    // Loads and stores say little about where a rank stopped: keep the
    // last MPI (or CUDA) call.
    if (t.role == format::Role::local_access) return;
    if (e.pending) calls.pending.emplace(e);
    else calls.last.emplace(e);
    if (e.call == format::Call::Init || e.call == format::Call::Init_thread) {
      if (!calls.first_init) calls.first_init.emplace(e);
      else if (!calls.init_again) calls.init_again.emplace(e);
    }
  }
  void after_end(const Event& e) override {
    if (!calls.outside && format::is_mpi(format::call_traits(e.call).family)) calls.outside.emplace(e);
  }
  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) { return t.role != format::Role::local_access; });
  }
  LastCalls calls;

  // Check::saves_passes: `calls` where the pass ran, and back into a pass elsewhere.
  void save(WireWriter& out) const {
    out.optional(calls.last, k_code);
    out.optional(calls.pending, k_code);
    out.optional(calls.outside, k_code);
    out.optional(calls.first_init, k_code);
    out.optional(calls.init_again, k_code);
  }
  void load(WireReader& in) {
    in.optional(calls.last, k_code);
    in.optional(calls.pending, k_code);
    in.optional(calls.outside, k_code);
    in.optional(calls.first_init, k_code);
    in.optional(calls.init_again, k_code);
  }

 private:
  static constexpr auto k_code = [](auto& c, auto& seen) {
    c(seen.seq);
    c(seen.call);
    c(seen.site);
    c(seen.count);
  };
};

class AbnormalTermination final : public Check {
 public:
  std::string_view name() const override { return "abnormal-termination"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "a rank aborted, crashed, exited without MPI_Finalize, was stopped before it finished, called MPI "
           "before MPI_Init or after MPI_Finalize, or initialized MPI twice";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData&) override { return std::make_unique<Pass>(); }
  // finish() reads each rank's last calls and its RankData (how it ended).
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_of<Pass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData&, WireReader& in) const override { return load_pass_of<Pass>(in); }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    std::vector<Finding> failed;
    std::vector<uint32_t> stopped;        // from outside, by rank
    std::vector<std::string> stop_notes;  // one line each
    std::vector<Location> stop_locations;
    after_finalize(ctx, passes, out);
    for (uint32_t r = 0; r < ctx.world_size(); ++r) {
      const RankData& data = ctx.rank(r);
      const auto* pass = r < passes.size() ? dynamic_cast<const Pass*>(passes[r].get()) : nullptr;
      if (data.present && pass && pass->calls.init_again) {
        // The second initialization says why the rank ended, if it did.
        failed.push_back(init_again(ctx, r, pass->calls));
        continue;
      }
      if (!data.present || data.finalized()) continue;
      const LastCalls calls = pass ? pass->calls : LastCalls{};
      const CallSeen* inside = calls.pending ? &*calls.pending : nullptr;
      const CallSeen* last = calls.last ? &*calls.last : nullptr;
      const CallSeen* at = inside ? inside : last;
      auto where = [&](std::string note) -> std::optional<Location> {
        if (!at) return std::nullopt;
        return ctx.location({r, at->seq}, at->call, at->site, std::move(note));
      };
      const std::string place = inside ? fmt::format(" inside {}", format::call_name(inside->call))
                                : last ? fmt::format(" after {} ({}:{})", format::call_name(last->call), r, last->seq)
                                       : std::string(" before its first MPI call");
      if (!data.end) {
        stopped.push_back(r);
        stop_notes.push_back(fmt::format("rank {} left no end record{} (killed by SIGKILL, or its trace file was cut)",
                                         r, place));
        if (auto l = where(inside ? "it stopped inside this call" : "its last call")) stop_locations.push_back(*l);
        continue;
      }
      const format::Termination& end = *data.end;
      Finding f;
      f.kind = std::string(name());
      f.severity = severity();
      switch (end.kind) {
        case TerminationKind::finalized: continue;
        case TerminationKind::tracer_stopped: continue;  // the tracer's trouble, not the program's
        case TerminationKind::aborted: {
          const CallSeen* abort = inside && inside->call == format::Call::Abort ? inside
                               : last && last->call == format::Call::Abort   ? last
                                                                             : nullptr;
          if (abort) {
            f.message = fmt::format("rank {} called MPI_Abort with error code {}", r, abort->count);
            f.locations.push_back(ctx.location({r, abort->seq}, abort->call, abort->site, "MPI_Abort is called here"));
          } else {
            f.message = fmt::format("rank {} aborted{}", r, place);
            if (auto l = where("its last call")) f.locations.push_back(*l);
          }
          break;
        }
        case TerminationKind::signal: {
          const std::string sig = format::signal_name(end.signal);
          if (format::signal_from_outside(end.signal)) {
            stopped.push_back(r);
            stop_notes.push_back(fmt::format("rank {} was stopped by {}{}", r, sig, place));
            if (auto l = where(fmt::format("{} stopped it {}", sig, inside ? "inside this call" : "after this call")))
              stop_locations.push_back(*l);
            continue;
          }
          f.message = fmt::format("rank {} crashed with {}{}", r, sig,
                                  inside ? fmt::format(" inside {}", format::call_name(inside->call)) : place);
          if (auto l = where(inside ? fmt::format("{} arrived while the rank was inside this call", sig)
                                    : fmt::format("the last MPI call before {}", sig)))
            f.locations.push_back(*l);
          if (end.signal == 6) f.notes.push_back("SIGABRT: a failed assert(), abort(), or a fatal error of a library");
          break;
        }
        case TerminationKind::exit_without_finalize:
          if (format::started_before_init(data.header) && calls.outside) {
            const CallSeen& call = *calls.outside;
            f.message = fmt::format("rank {} called {} before MPI_Init", r, format::call_name(call.call));
            f.locations.push_back(ctx.location({r, call.seq}, call.call, call.site,
                                               "called here, before MPI_Init; the process ended inside it"));
            f.notes.push_back("before MPI_Init a process may call only MPI_Initialized, MPI_Finalized and "
                              "MPI_Get_version (MPI-3.1 section 8.7); Open MPI aborts the process at such a call");
            failed.push_back(std::move(f));
            continue;
          }
          if (inside) {
            f.message = fmt::format("rank {} exited inside {} without calling MPI_Finalize", r,
                                    format::call_name(inside->call));
            f.locations.push_back(*where("the call never returned"));
            f.notes.push_back("a process that ends inside an MPI call was most likely ended by MPI's error "
                              "handler (MPI_ERRORS_ARE_FATAL): the call failed; see the invalid-argument findings");
          } else {
            f.message = fmt::format("rank {} exited without calling MPI_Finalize{}", r, place);
            if (auto l = where("its last MPI call")) f.locations.push_back(*l);
            f.notes.push_back("every rank must call MPI_Finalize before it exits (MPI-3.1 section 8.7)");
          }
          break;
        case TerminationKind::unspecified:
          f.message = fmt::format("rank {} ended{} in a way its trace does not say", r, place);
          if (auto l = where("its last call")) f.locations.push_back(*l);
          break;
      }
      if (!end.message.empty()) f.notes.push_back(fmt::format("rank {}'s end record: {}", r, end.message));
      failed.push_back(std::move(f));
    }
    if (!failed.empty()) {
      if (!stopped.empty()) {
        failed.front().notes.push_back(fmt::format(
            "{} {} then stopped from outside (the launcher ends the job when one rank fails)",
            stopped.size() == 1 ? "rank" : "ranks", rank_list(stopped)));
        for (const std::string& note : stop_notes) failed.front().notes.push_back(note);
      }
      for (Finding& f : failed) out.push_back(std::move(f));
      return;
    }
    if (stopped.empty()) return;
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    f.message = fmt::format("the run was stopped before it finished: {} {} did not reach MPI_Finalize",
                            stopped.size() == 1 ? "rank" : "ranks", rank_list(stopped));
    f.locations = std::move(stop_locations);
    f.notes = std::move(stop_notes);
    f.notes.push_back("a signal from outside (a time limit, the launcher, a user) or SIGKILL ended the job");
    // A finding at the same calls (a deadlock) says why the run did not finish.
    f.generic = true;
    out.push_back(std::move(f));
  }

 private:
  // The finding of rank `r`'s second MPI_Init (or MPI_Init_thread).
  Finding init_again(const Context& ctx, uint32_t r, const LastCalls& calls) const {
    const CallSeen& again = *calls.init_again;
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    f.message = fmt::format("rank {} called {} a second time", r, format::call_name(again.call));
    f.locations.push_back(ctx.location({r, again.seq}, again.call, again.site, "initializes MPI again here"));
    if (calls.first_init) {
      const CallSeen& first = *calls.first_init;
      f.locations.push_back(ctx.location({r, first.seq}, first.call, first.site, "MPI was initialized here"));
    }
    f.notes.push_back("a process may initialize MPI once, with MPI_Init or MPI_Init_thread (MPI-3.1 section "
                      "8.7); Open MPI aborts the process at a second call");
    return f;
  }
  // The calls written after a finalized rank's end record: one finding per
  // call site (and call), in the order of its first rank.
  void after_finalize(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
                      std::vector<Finding>& out) const {
    struct Place {
      format::Call call;
      uint32_t site;
      std::vector<uint32_t> ranks;
      std::vector<Location> locations;
    };
    std::vector<Place> places;
    for (uint32_t r = 0; r < ctx.world_size() && r < passes.size(); ++r) {
      const RankData& data = ctx.rank(r);
      const auto* pass = dynamic_cast<const Pass*>(passes[r].get());
      if (!data.present || !data.finalized() || !pass || !pass->calls.outside) continue;
      const CallSeen& call = *pass->calls.outside;
      Location l = ctx.location({r, call.seq}, call.call, call.site, "called here, after MPI_Finalize returned");
      auto same = [&](const Place& p) {
        return p.call == call.call && !p.locations.empty() && p.locations.front().file == l.file &&
               p.locations.front().line == l.line && (!l.file.empty() || p.site == call.site);
      };
      auto it = std::find_if(places.begin(), places.end(), same);
      if (it == places.end()) it = places.insert(places.end(), Place{call.call, call.site, {}, {}});
      it->ranks.push_back(r);
      if (it->locations.size() < 4) it->locations.push_back(std::move(l));
    }
    for (Place& p : places) {
      Finding f;
      f.kind = std::string(name());
      f.severity = severity();
      f.message = fmt::format("{} {} called {} after MPI_Finalize", p.ranks.size() == 1 ? "rank" : "ranks",
                              rank_list(p.ranks), format::call_name(p.call));
      f.locations = std::move(p.locations);
      f.notes.push_back("after MPI_Finalize a process may call only MPI_Initialized, MPI_Finalized and "
                        "MPI_Get_version (MPI-3.1 section 8.7); Open MPI aborts the process at such a call");
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Check> make_abnormal_termination() { return std::make_unique<AbnormalTermination>(); }

}  // namespace smtrace::analyzer::checks
