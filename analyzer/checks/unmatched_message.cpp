// unmatched-message: in a trace where every rank reached MPI_Finalize, a
// message sent and never received, or a receive that never matched a send.
// Both are errors: MPI requires all communication to be complete at
// MPI_Finalize. (In an incomplete trace the deadlock check speaks instead.)
// Also a ready-mode send (Rsend, Irsend, a started Rsend_init) whose
// matching receive's posting does not happen before it: such a send may be
// started only once the receive is posted (MPI-3.1 section 3.4), and no
// happens-before path (analyzer/happens_before.hpp) says it was.
#include <iterator>
#include <vector>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/checks/checks.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::analyzer::checks {

namespace {

// Notes whether the rank made a ready-mode send (Rsend, Irsend, Rsend_init):
// finish() looks for the ready sends among the ops of those ranks only.
class ReadyPass final : public RankPass {
 public:
  void event(const format::Event&) override { ready = true; }
  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) { return t.mode == format::SendMode::ready; });
  }
  void save(WireWriter& out) const { out.put<uint8_t>(ready ? 1 : 0); }
  void load(WireReader& in) { ready = in.get<uint8_t>() != 0; }
  bool ready = false;
};

class UnmatchedMessage final : public Check {
 public:
  std::string_view name() const override { return "unmatched-message"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "a message sent and never received, a receive never matched, or a ready-mode send not "
           "preceded by its receive, in a trace where all ranks finalized";
  }

  std::unique_ptr<RankPass> rank_pass(const RankData&) override { return std::make_unique<ReadyPass>(); }
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_of<ReadyPass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData&, WireReader& in) const override {
    return load_pass_of<ReadyPass>(in);
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    for (uint32_t r = 0; r < ctx.world_size(); ++r) {
      if (!ctx.rank(r).present || !ctx.rank(r).finalized()) return;
    }
    // The ranks in parallel, each into its own list, appended in rank order.
    const uint32_t world_size = ctx.world_size();
    std::vector<std::vector<Finding>> of_rank(world_size);
    format::run_on_threads(format::thread_count(ctx.options().threads, world_size), world_size,
                           [&](std::size_t r) { rank_findings(ctx, static_cast<uint32_t>(r), of_rank[r]); });
    for (std::vector<Finding>& found : of_rank) {
      out.insert(out.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
    }
    ready_sends(ctx, passes, out);
  }

 private:
  // Append rank `r`'s sends and receives that matched nothing to `out`.
  void rank_findings(const Context& ctx, uint32_t r, std::vector<Finding>& out) const {
    const Replay& replay = ctx.replay();
    const CommTable& comms = ctx.comms();
    if (replay.unmatched(r) == 0) return;  // (a clean trace's ranks: nothing to look at)
    const auto& ops = replay.p2p(r);
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const P2POp& op = ops[i];
      // A cancelled operation never completed is request-leak's (MPI-3.1
      // section 3.8.4: a cancelled request must still be completed); whether
      // the cancel would have succeeded is not known.
      if (op.cancelled || (op.cancel_asked && !op.done()) || op.peer == format::k_proc_null ||
          replay.matched({r, i}))
        continue;
      if (!op.send && op.status_source == format::k_proc_null) continue;
      const uint32_t g = comms.global(r, op.comm);
      const std::string comm_name = g == k_no_comm ? "an unknown communicator" : comms.comm(g).name;
      auto peer = comms.world_rank(r, op.comm, op.peer);
      const std::string tag = tag_text(op);
      Finding f;
      f.kind = std::string(name());
      f.severity = severity();
      if (op.send) {
        f.message = fmt::format("message from rank {} to rank {} ({}, {}) is never received", r,
                                peer ? std::to_string(*peer) : "?", tag, comm_name);
        f.locations.push_back(ctx.location({r, op.seq}, op.call, op.site, "sent here"));
      } else {
        const std::string from = op.peer == format::k_any_source
                                     ? std::string("any rank")
                                     : fmt::format("rank {}", peer ? std::to_string(*peer) : "?");
        f.message = fmt::format("receive on rank {} from {} ({}, {}) never matches a message", r,
                                from, tag, comm_name);
        f.locations.push_back(ctx.location({r, op.seq}, op.call, op.site, "posted here"));
      }
      if (op.done() && op.done_seq() != op.seq) {
        f.locations.push_back(
            ctx.location({r, op.done_seq()}, op.done_call, op.done_site, "completed here"));
      }
      out.push_back(std::move(f));
    }
  }

  // Append the ready-mode sends whose matched receive is not posted before
  // them. (Most traces have none: only the ops of ranks that made a
  // ready-mode call are looked at, and the happens-before graph is built
  // only when one matched.)
  void ready_sends(const Context& ctx, const std::vector<std::unique_ptr<RankPass>>& passes,
                   std::vector<Finding>& out) const {
    const Replay& replay = ctx.replay();
    const CommTable& comms = ctx.comms();
    const HappensBefore* hb = nullptr;
    for (uint32_t r = 0; r < ctx.world_size() && r < passes.size(); ++r) {
      const auto* pass = dynamic_cast<const ReadyPass*>(passes[r].get());
      if (!pass || !pass->ready) continue;
      const auto& ops = replay.p2p(r);
      for (uint32_t i = 0; i < ops.size(); ++i) {
        const P2POp& op = ops[i];
        if (!op.send || op.mode != format::SendMode::ready) continue;
        const std::optional<OpRef> recv = replay.matched({r, i});
        if (!recv) continue;
        if (!hb) hb = &ctx.happens_before();
        const P2POp& rop = replay.p2p(recv->rank)[recv->index];
        if (hb->ordered({recv->rank, rop.seq}, {r, op.seq})) continue;
        const uint32_t g = comms.global(r, op.comm);
        Finding f;
        f.kind = std::string(name());
        f.severity = severity();
        f.message = fmt::format("ready-mode {} from rank {} to rank {} ({}, {}) may start before its receive is posted",
                                format::call_name(op.call), r, recv->rank, tag_text(op),
                                g == k_no_comm ? "an unknown communicator" : comms.comm(g).name);
        f.locations.push_back(ctx.location({r, op.seq}, op.call, op.site, "sent here in ready mode"));
        f.locations.push_back(ctx.location({recv->rank, rop.seq}, rop.call, rop.site,
                                           "the receive it matched is posted here, not ordered before the send"));
        f.notes.push_back("a ready-mode send may be started only if the matching receive is already posted "
                          "(MPI-3.1 section 3.4); post the receive first and order it before the send, e.g. "
                          "by a message or a barrier");
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Check> make_unmatched_message() { return std::make_unique<UnmatchedMessage>(); }

}  // namespace smtrace::analyzer::checks
