// type-mismatch: data that moves between two buffers whose type signatures
// do not match (MPI-3.1 section 3.3.1), or that does not fit where it goes
// (section 3.2.4: a message longer than the receive buffer is an overflow
// error, MPI_ERR_TRUNCATE).
//
// - Point-to-point: each receive against the send replay matched it with
//   (statuses and the non-overtaking rule): the send's signature must be a
//   prefix of the receive buffer's (a receive may be longer, never shorter).
// - RMA (section 11.3): a Put or an accumulate moves the origin buffer into
//   the target buffer (as a send from the origin, a receive at the target),
//   a Get the other way; Get_accumulate both. Both datatypes are the
//   origin's handles, so the check needs only the origin's events.
// Signatures are compared by analyzer/signature.hpp (the same comparison as
// collective-mismatch): basic types by name, derived types by their
// flattened type maps, pair types as their two parts, MPI_PACKED matching
// anything. Where a signature is unknown, only the sizes in bytes are
// compared (for truncation).
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/grouped.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/datatypes.hpp"
#include "analyzer/footprint.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/signature.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Event;

using Side = TransferSide;

// fits_at_once() of two payloads.
inline bool fine_at_once(const Payload& sent, const Payload& room) {
  return fits_at_once(sent.datatype, sent.count, room.datatype, room.count);
}

class Pass final : public RankPass {
 public:
  explicit Pass(const RankData& data) : m_data(data) {}

  void event(const Event& e) override {
    const format::CallTraits& t = format::call_traits(e.call);
    if (t.role != format::Role::rma_comm || e.peer == format::k_proc_null) return;
    const Side origin{&m_data, e.datatype, e.count};
    const Side target{&m_data, e.target_datatype, e.target_count};
    const Side result{&m_data, e.result_datatype, e.result_count};
    switch (t.buffers) {
      case format::BufferLayout::put: case format::BufferLayout::accumulate:
        check(e, origin, target, "the origin buffer", "the target buffer");
        return;
      case format::BufferLayout::get:
        check(e, target, origin, "the target buffer", "the origin buffer");
        return;
      case format::BufferLayout::get_accumulate:
        if (e.op != format::k_op_no_op) check(e, origin, target, "the origin buffer", "the target buffer");
        check(e, target, result, "the target buffer", "the result buffer");
        return;
      case format::BufferLayout::fetch_and_op: case format::BufferLayout::compare_and_swap:
        return;  // one datatype for every buffer
      case format::BufferLayout::none: case format::BufferLayout::send: case format::BufferLayout::recv:
      case format::BufferLayout::sendrecv: case format::BufferLayout::sendrecv_replace: case format::BufferLayout::bcast:
      case format::BufferLayout::reduce: case format::BufferLayout::allreduce:
      case format::BufferLayout::reduce_scatter_block: case format::BufferLayout::reduce_scatter:
      case format::BufferLayout::gather: case format::BufferLayout::gatherv: case format::BufferLayout::scatter:
      case format::BufferLayout::scatterv: case format::BufferLayout::allgather: case format::BufferLayout::allgatherv:
      case format::BufferLayout::alltoall: case format::BufferLayout::alltoallv: case format::BufferLayout::alltoallw:
      case format::BufferLayout::local_read: case format::BufferLayout::local_write: case format::BufferLayout::copy:
      case format::BufferLayout::reduce_local: case format::BufferLayout::neighbor_allgather:
      case format::BufferLayout::neighbor_allgatherv: case format::BufferLayout::neighbor_alltoall:
      case format::BufferLayout::neighbor_alltoallv: case format::BufferLayout::neighbor_alltoallw:
        return;
    }
  }

  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) { return t.role == format::Role::rma_comm; });
  }

  std::vector<RawProblem> problems;

 private:
  void check(const Event& e, const Side& from, const Side& into, const char* from_name, const char* into_name) {
    const Fit o = transfer_fit(from, into);
    if (o.kind == Fit::Kind::fine || problems.size() >= 4096) return;
    RawProblem p;
    const std::string call(format::call_name(e.call));
    const std::string a = describe_buffer(m_data, from.datatype, from.count);
    const std::string b = describe_buffer(m_data, into.datatype, into.count);
    if (o.kind == Fit::Kind::mismatch) {
      p.problem = "rma signature";
      p.message = fmt::format("{}: type signatures differ: {} is {}, {} is {}", call, from_name, a, into_name, b);
    } else {
      p.problem = "rma truncation";
      p.message = fmt::format("{}: {} ({}) does not fit {} ({})", call, from_name, a, into_name, b);
    }
    p.sites.push_back(raw_site(m_data.rank, e, o.detail));
    p.notes.push_back("an RMA call moves data as a send and a matching receive would: the signatures must match "
                      "(MPI-3.1 sections 3.3.1 and 11.3)");
    problems.push_back(std::move(p));
  }

  const RankData& m_data;
};

class TypeMismatch final : public Check {
 public:
  std::string_view name() const override { return "type-mismatch"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "a send and its receive (or an RMA origin and target) with different type signatures, or a "
           "message longer than the buffer that receives it";
  }
  // Signatures and the receive counts as posted: an import without them
  // (OTF2 records only message lengths) cannot tell a mismatch.
  format::ContentSet needs() const override { return format::content_bit(format::Content::type_signatures); }
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // The passes collect the RMA calls' problems from their rank's own
  // datatypes; the point-to-point half of finish() reads the replay.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_problems<Pass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    return load_pass_problems<Pass>(data, in);
  }

  void finish(const Context& ctx, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    Grouped grouped(std::string(name()), severity());
    point_to_point(ctx, grouped);
    for (auto& p : passes) {
      auto* pass = dynamic_cast<Pass*>(p.get());
      if (!pass) continue;
      for (RawProblem& problem : pass->problems) grouped.add(ctx, std::move(problem));
    }
    grouped.emit(out);
  }

 private:
  // The receives of every rank against their sends: the ranks in parallel,
  // each into its own groups, merged in rank order (the findings, their
  // order and counts as when one thread adds them all in rank order).
  static void point_to_point(const Context& ctx, Grouped& grouped) {
    const uint32_t world_size = ctx.world_size();
    std::vector<Grouped> of_rank(world_size, Grouped(grouped.kind(), grouped.severity()));
    format::run_on_threads(format::thread_count(ctx.options().threads, world_size), world_size,
                           [&](std::size_t r) { rank_point_to_point(ctx, static_cast<uint32_t>(r), of_rank[r]); });
    for (Grouped& rank : of_rank) grouped.merge(std::move(rank));
  }

  // The receives of rank `r` against their sends, into `grouped`.
  static void rank_point_to_point(const Context& ctx, uint32_t r, Grouped& grouped) {
    const Replay& replay = ctx.replay();
    if (!ctx.rank(r).present) return;
    const auto& ops = replay.p2p(r);
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const P2POp& recv = ops[i];
      if (recv.send || recv.cancelled) continue;
      const auto matched = replay.matched({r, i});
      if (!matched) continue;
      const P2POp& send = replay.p2p(matched->rank)[matched->index];
      const Payload sp = replay.payload(*matched);
      const Payload rp = replay.payload({r, i});
      if (fine_at_once(sp, rp)) continue;
      const Side from{&ctx.rank(matched->rank), sp.datatype, sp.count};
      const Side into{&ctx.rank(r), rp.datatype, rp.count};
      const Fit o = transfer_fit(from, into);
      if (o.kind == Fit::Kind::fine) continue;
      const std::string sent = describe_buffer(*from.data, sp.datatype, sp.count);
      const std::string room = describe_buffer(*into.data, rp.datatype, rp.count);
      RawProblem p;
      if (o.kind == Fit::Kind::mismatch) {
        p.problem = "p2p signature";
        p.message = fmt::format("type signatures differ: rank {} sends {} and rank {} receives {}", matched->rank,
                                sent, r, room);
        p.notes.push_back("the types of a send and its receive must match (MPI-3.1 section 3.3.1); only "
                          "MPI_PACKED matches any type");
      } else {
        p.problem = "p2p truncation";
        p.message = fmt::format("message truncated: rank {} sends {} and rank {} receives into {}", matched->rank,
                                sent, r, room);
        p.notes.push_back("a receive buffer must hold the whole message (MPI-3.1 section 3.2.4: MPI_ERR_TRUNCATE)");
      }
      p.sites.push_back(RawSite{r, recv.seq, recv.call, recv.site, fmt::format("receives here ({})", o.detail)});
      p.sites.push_back(RawSite{matched->rank, send.seq, send.call, send.site, "the message is sent here"});
      grouped.add(ctx, std::move(p));
    }
  }
};

}  // namespace

std::unique_ptr<Check> make_type_mismatch() { return std::make_unique<TypeMismatch>(); }

}  // namespace smtrace::analyzer::checks
