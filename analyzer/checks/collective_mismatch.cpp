// collective-mismatch: per communicator, every member must make the same
// sequence of collective calls with the same root, reduction op and matching
// type signatures, with MPI_IN_PLACE at all members or none where the call's
// option is given at all processes (format::in_place_use). On an
// intercommunicator the same calls, and the roots of rooted ones as section
// 5.2.2 says (check_inter). The first divergence on each communicator is
// reported with both sides and the last collective all members agreed on.
//
// Type signatures are compared as MPI defines them: sequences of basic types
// (a derived type's TypeCount list repeated `count` times), never datatype
// ids, so 2 x MPI_INT matches 1 x contiguous(2, MPI_INT) and 8 x MPI_BYTE
// does not match 2 x MPI_INT. What must match is per collective: every
// rank's buffer against the root's (Bcast), all contributions (reductions),
// each sender against the root's receive (Gather, per peer for Gatherv;
// Scatter and Scatterv the other way), each pair of ranks (Allgather(v),
// Alltoall(v,w)), each edge of the topology (Neighbor_allgather(v),
// Neighbor_alltoall(v,w); the v and w forms on edges that appear once). Where a side is unknown (MPI_PACKED, a type smtrace does
// not know, a truncated definition) nothing is claimed.
#include <algorithm>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/collective_common.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/signature.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using Layout = format::BufferLayout;

// One side of a divergence: a member (rank in comm) and what it does there.
struct Side {
  std::size_t member = 0;
  std::string what;
};

struct Divergence {
  std::string reason;          // "" or "type signatures of MPI_Bcast differ: "
  Side a, b;
  bool b_stopped = false;      // b made no further collective on the communicator
  std::vector<std::string> notes;
};

std::string call_text(const CollRecord& r) {
  std::string s = fmt::format("calls {}", format::call_name(r.call));
  const format::CallTraits& t = format::call_traits(r.call);
  if (t.rooted && r.root != k_no_root) s += fmt::format(" (root {})", r.root);
  if (t.op == format::Combine::reduce) s += fmt::format(" ({})", op_name(r.op));
  return s;
}

class Comparer {
 public:
  Comparer(const Context& context, const CommSequence& seq, std::vector<const CollRecord*> at)
      : m_context(context), m_seq(seq), m_at(std::move(at)) {}

  // Return the first difference among the members' records at this position.
  std::optional<Divergence> compare() {
    std::size_t ref = m_at.size();
    for (std::size_t m = 0; m < m_at.size(); ++m) {
      if (m_at[m]) {
        ref = m;
        break;
      }
    }
    if (ref == m_at.size()) return std::nullopt;
    const CollRecord& r = *m_at[ref];
    const format::CallTraits& t = format::call_traits(r.call);
    // (In the same pass: a member that passes MPI_IN_PLACE where the others
    // do not, for the calls whose option is given at all members or none.)
    const bool every_member = format::in_place_use(r.call) == format::InPlaceUse::every_member;
    std::optional<std::size_t> in_place_differs;
    for (std::size_t m = ref + 1; m < m_at.size(); ++m) {
      if (!m_at[m]) continue;
      const CollRecord& o = *m_at[m];
      const bool differs =
          o.call != r.call ||
          (t.rooted && r.root != k_no_root && o.root != k_no_root && r.root != o.root) ||
          (t.op == format::Combine::reduce && ops_differ(r.op, o.op));
      if (!differs) {
        if (every_member && o.in_place != r.in_place && !in_place_differs) in_place_differs = m;
        continue;
      }
      Divergence d{"", {ref, call_text(r)}, {m, call_text(o)}, false, {}};
      if (o.call != r.call && format::base_form(o.call) == format::base_form(r.call)) {
        d.notes.push_back("a blocking and a non-blocking collective never match each other");
      }
      return d;
    }
    if (in_place_differs) return in_place_at_some(ref, *in_place_differs);
    return signatures(r.call);
  }

 private:
  // Where the in-place option is given at all members or at none
  // (format::InPlaceUse::every_member), member `m` passing MPI_IN_PLACE
  // while `ref` passes a send buffer (or the other way) diverges from it.
  Divergence in_place_at_some(std::size_t ref, std::size_t m) const {
    const CollRecord& r = *m_at[ref];
    auto what = [](const CollRecord& c) { return c.in_place ? "passes MPI_IN_PLACE" : "passes a send buffer"; };
    Divergence d{fmt::format("MPI_IN_PLACE of {} at some members only: ", format::call_name(r.call)),
                 {ref, what(r)}, {m, what(*m_at[m])}, false, {}};
    d.notes.push_back(fmt::format("{}'s in-place option is given at all members or at none (MPI-3.1 "
                                  "sections 5.7 to 5.10)",
                                  format::call_name(r.call)));
    return d;
  }

  static bool ops_differ(uint32_t a, uint32_t b) {
    if (a == 0 || b == 0) return false;  // not recorded
    const bool user_a = a >= format::k_first_derived_id, user_b = b >= format::k_first_derived_id;
    if (user_a || user_b) return user_a != user_b;  // user op ids are per rank: not comparable
    return a != b;
  }

  const RankData& data(std::size_t m) const { return m_context.rank(m_seq.members[m]); }
  const CollArrays* arrays(std::size_t m) const {
    const CollRecord& r = *m_at[m];
    if (r.arrays == k_coll_none) return nullptr;
    return &m_seq.passes[m]->arrays[r.arrays];
  }
  std::optional<std::size_t> root_member() const {
    for (const CollRecord* r : m_at) {
      if (r && r->root >= 0 && static_cast<std::size_t>(r->root) < m_at.size() && m_at[static_cast<std::size_t>(r->root)])
        return static_cast<std::size_t>(r->root);
    }
    return std::nullopt;
  }
  static int64_t at(const std::vector<int64_t>& v, std::size_t i) { return i < v.size() ? v[i] : -1; }
  static uint32_t at(const std::vector<uint32_t>& v, std::size_t i) { return i < v.size() ? v[i] : 0; }

  // One side's part: a datatype and count of member m.
  struct Part {
    std::size_t member;
    uint32_t datatype;
    int64_t count;
    std::string verb;   // "sends", "receives", ...
  };

  // Return a divergence when `x` and `y` are known and differ.
  std::optional<Divergence> check(const Part& x, const Part& y, Call call) const {
    if (x.count < 0 || y.count < 0) return std::nullopt;  // not recorded
    const Signature sx = signature(data(x.member), x.datatype, x.count);
    const Signature sy = signature(data(y.member), y.datatype, y.count);
    // Collectives need the same signature on both sides (MPI-3.1 section 5.1).
    const SignatureMatch::Kind same = compare_signatures(sx, sy).kind;
    if (same == SignatureMatch::Kind::same || same == SignatureMatch::Kind::unknown) return std::nullopt;
    Divergence d;
    d.reason = fmt::format("type signatures of {} differ: ", format::call_name(call));
    d.a = {x.member, fmt::format("{} {}", x.verb, describe_buffer(data(x.member), x.datatype, x.count))};
    d.b = {y.member, fmt::format("{} {}", y.verb, describe_buffer(data(y.member), y.datatype, y.count))};
    if (x.member == y.member) d.b.what = "while it " + d.b.what;
    return d;
  }

  // What member m sends to member j (Allgather, Alltoall and their v/w
  // forms: signatures() calls it for those layouts only).
  std::optional<Part> send_to(Layout kind, std::size_t m, std::size_t j) const {
    const CollRecord& r = *m_at[m];
    const CollArrays* a = arrays(m);
    const std::string verb = fmt::format("sends rank {}", m_seq.members[j]);
    if (kind == Layout::allgather || kind == Layout::alltoall) {
      if (r.in_place) return Part{m, r.recv_datatype, r.recv_count, "sends"};
      return Part{m, r.datatype, r.count, "sends"};
    }
    if (kind == Layout::allgatherv) {
      if (!r.in_place) return Part{m, r.datatype, r.count, "sends"};
      if (!a) return std::nullopt;
      return Part{m, r.recv_datatype, at(a->recv_counts, m), "sends"};
    }
    if (!a) return std::nullopt;
    if (kind == Layout::alltoallv) {
      if (r.in_place) return Part{m, r.recv_datatype, at(a->recv_counts, j), verb};
      return Part{m, r.datatype, at(a->counts, j), verb};
    }
    if (r.in_place) return Part{m, at(a->recv_datatypes, j), at(a->recv_counts, j), verb};
    return Part{m, at(a->datatypes, j), at(a->counts, j), verb};
  }
  // What member j expects from member m.
  std::optional<Part> recv_from(Layout kind, std::size_t j, std::size_t m) const {
    const CollRecord& r = *m_at[j];
    const CollArrays* a = arrays(j);
    const std::string verb = fmt::format("expects from rank {}", m_seq.members[m]);
    if (kind == Layout::allgather || kind == Layout::alltoall)
      return Part{j, r.recv_datatype, r.recv_count, "expects per rank"};
    if (!a) return std::nullopt;
    if (kind == Layout::alltoallw) return Part{j, at(a->recv_datatypes, m), at(a->recv_counts, m), verb};
    return Part{j, r.recv_datatype, at(a->recv_counts, m), verb};
  }

  std::optional<Divergence> signatures(Call call) const {
    // What must match follows from the buffers each member hands over.
    const Layout kind = format::call_traits(call).buffers;
    const std::size_t n = m_at.size();
    switch (kind) {
      case Layout::bcast: {
        const auto root = root_member();
        if (!root) return std::nullopt;
        const CollRecord& rr = *m_at[*root];
        for (std::size_t m = 0; m < n; ++m) {
          if (!m_at[m] || m == *root) continue;
          if (auto d = check({*root, rr.datatype, rr.count, "(root) sends"},
                             {m, m_at[m]->datatype, m_at[m]->count, "receives"}, call))
            return d;
        }
        return std::nullopt;
      }
      case Layout::reduce: case Layout::allreduce: case Layout::reduce_scatter_block: {
        auto part = [&](std::size_t m) {
          const CollRecord& r = *m_at[m];
          if (!r.in_place && r.datatype != 0) return Part{m, r.datatype, r.count, "reduces"};
          return Part{m, r.recv_datatype, r.recv_count, "reduces"};
        };
        std::optional<std::size_t> ref;
        for (std::size_t m = 0; m < n; ++m) {
          if (!m_at[m]) continue;
          if (!ref) {
            ref = m;
            continue;
          }
          if (auto d = check(part(*ref), part(m), call)) return d;
        }
        return std::nullopt;
      }
      case Layout::reduce_scatter: {
        std::optional<std::size_t> ref;
        for (std::size_t m = 0; m < n; ++m) {
          if (!m_at[m] || !arrays(m)) continue;
          if (!ref) {
            ref = m;
            continue;
          }
          const auto& rc_ref = arrays(*ref)->recv_counts;
          const auto& rc = arrays(m)->recv_counts;
          for (std::size_t j = 0; j < std::min(rc_ref.size(), rc.size()); ++j) {
            const std::string verb = fmt::format("gives rank {}", m_seq.members[j]);
            if (auto d = check({*ref, m_at[*ref]->recv_datatype, rc_ref[j], verb},
                               {m, m_at[m]->recv_datatype, rc[j], verb}, call))
              return d;
          }
        }
        return std::nullopt;
      }
      case Layout::gather: case Layout::gatherv: {
        const auto root = root_member();
        if (!root) return std::nullopt;
        const CollRecord& rr = *m_at[*root];
        const CollArrays* ra = arrays(*root);
        if (kind == Layout::gatherv && !ra) return std::nullopt;
        for (std::size_t m = 0; m < n; ++m) {
          if (!m_at[m] || (m == *root && rr.in_place)) continue;
          const int64_t expected = kind == Layout::gather ? rr.recv_count : at(ra->recv_counts, m);
          if (auto d = check({m, m_at[m]->datatype, m_at[m]->count, "sends"},
                             {*root, rr.recv_datatype, expected,
                              fmt::format("(root) expects from rank {}", m_seq.members[m])},
                             call))
            return d;
        }
        return std::nullopt;
      }
      case Layout::scatter: case Layout::scatterv: {
        const auto root = root_member();
        if (!root) return std::nullopt;
        const CollRecord& rr = *m_at[*root];
        const CollArrays* ra = arrays(*root);
        if (kind == Layout::scatterv && !ra) return std::nullopt;
        for (std::size_t m = 0; m < n; ++m) {
          if (!m_at[m] || (m == *root && rr.in_place)) continue;
          const int64_t sent = kind == Layout::scatter ? rr.count : at(ra->counts, m);
          if (auto d = check({*root, rr.datatype, sent,
                              fmt::format("(root) sends rank {}", m_seq.members[m])},
                             {m, m_at[m]->recv_datatype, m_at[m]->recv_count, "receives"}, call))
            return d;
        }
        return std::nullopt;
      }
      case Layout::allgather: case Layout::alltoall: case Layout::allgatherv: case Layout::alltoallv:
      case Layout::alltoallw: {
        // Uniform blocks (Allgather, Alltoall) need one reference; the v and
        // w forms are checked per pair.
        const bool per_pair = kind != Layout::allgather && kind != Layout::alltoall;
        for (std::size_t m = 0; m < n; ++m) {
          if (!m_at[m]) continue;
          for (std::size_t j = 0; j < n; ++j) {
            if (!m_at[j]) continue;
            const auto s = send_to(kind, m, j);
            const auto r = recv_from(kind, j, m);
            if (s && r) {
              if (auto d = check(*s, *r, call)) return d;
            }
          }
          if (!per_pair) break;
        }
        if (!per_pair) {
          // Every sender against the first one too: a receiver gets both.
          std::optional<Part> first;
          for (std::size_t m = 0; m < n; ++m) {
            if (!m_at[m]) continue;
            const auto s = send_to(kind, m, m);
            if (!s) continue;
            if (!first) first = s;
            else if (auto d = check(*first, *s, call)) return d;
          }
        }
        return std::nullopt;
      }
      case Layout::none: case Layout::send: case Layout::recv: case Layout::sendrecv:
      case Layout::sendrecv_replace: case Layout::put: case Layout::get: case Layout::accumulate:
      case Layout::get_accumulate: case Layout::fetch_and_op: case Layout::compare_and_swap:
      case Layout::local_read: case Layout::local_write: case Layout::copy: case Layout::reduce_local:
      case Layout::neighbor_allgather: case Layout::neighbor_allgatherv: case Layout::neighbor_alltoall:
        return neighbor_signatures(kind, call);
      case Layout::neighbor_alltoallv: case Layout::neighbor_alltoallw:
        return neighbor_block_signatures(kind, call);
    }
    return std::nullopt;
  }

  // Neighbourhood collectives (MPI-3.1 section 7.6): along each edge of the
  // topology, from member m to its destination d, what m sends (the same
  // sendcount x sendtype to every destination for these three) must match
  // what d expects from each of its sources that is m (recvcount x recvtype;
  // Neighbor_allgatherv: recvcounts[k] for the k-th source). Each member's
  // neighbours come from its own communicator definition; an unknown
  // topology or a missing neighbour claims nothing.
  std::optional<Divergence> neighbor_signatures(Layout kind, Call call) const {
    const std::size_t n = m_at.size();
    for (std::size_t m = 0; m < n; ++m) {
      if (!m_at[m] || m_at[m]->in_place) continue;
      const CollRecord& r = *m_at[m];
      const format::CommPlace from = comm_place(data(m), r.comm);
      if (!from.destinations) continue;
      for (const int32_t dest : *from.destinations) {
        if (dest < 0 || static_cast<std::size_t>(dest) >= n) continue;
        const auto d = static_cast<std::size_t>(dest);
        if (!m_at[d]) continue;
        const CollRecord& rd = *m_at[d];
        const format::CommPlace to = comm_place(data(d), rd.comm);
        if (!to.sources) continue;
        const CollArrays* a = arrays(d);
        if (kind == Layout::neighbor_allgatherv && !a) continue;
        const std::string sends = fmt::format("sends rank {}", m_seq.members[d]);
        for (std::size_t k = 0; k < to.sources->size(); ++k) {
          if ((*to.sources)[k] != static_cast<int32_t>(m)) continue;
          const int64_t expected = kind == Layout::neighbor_allgatherv ? at(a->recv_counts, k) : rd.recv_count;
          if (auto div = check({m, r.datatype, r.count, sends},
                               {d, rd.recv_datatype, expected, fmt::format("expects from rank {}", m_seq.members[m])},
                               call))
            return div;
        }
      }
    }
    return std::nullopt;
  }

  // Neighbor_alltoallv and _alltoallw: member m's k-th block (sendcounts[k]
  // x sendtype, or sendtypes[k]) goes to its k-th destination d and lands in
  // d's block for the source that is m (recvcounts[k'] x recvtype, or
  // recvtypes[k']). Where d appears more than once among m's destinations,
  // or m among d's sources (a periodic Cartesian dimension of size 1 or 2, a
  // graph with repeated edges), which block meets which follows from the
  // topology's construction, not from the lists: such edges are not
  // compared.
  std::optional<Divergence> neighbor_block_signatures(Layout kind, Call call) const {
    const std::size_t n = m_at.size();
    const bool w = kind == Layout::neighbor_alltoallw;
    const auto once = [](const std::vector<int32_t>& list, int32_t who) {
      return std::count(list.begin(), list.end(), who) == 1;
    };
    for (std::size_t m = 0; m < n; ++m) {
      if (!m_at[m] || m_at[m]->in_place) continue;
      const CollRecord& r = *m_at[m];
      const CollArrays* am = arrays(m);
      const format::CommPlace from = comm_place(data(m), r.comm);
      if (!am || !from.destinations) continue;
      const std::vector<int32_t>& dests = *from.destinations;
      for (std::size_t k = 0; k < dests.size(); ++k) {
        const int32_t dest = dests[k];
        if (dest < 0 || static_cast<std::size_t>(dest) >= n || !once(dests, dest)) continue;
        const auto d = static_cast<std::size_t>(dest);
        if (!m_at[d]) continue;
        const CollRecord& rd = *m_at[d];
        const CollArrays* ad = arrays(d);
        const format::CommPlace to = comm_place(data(d), rd.comm);
        if (!ad || !to.sources || !once(*to.sources, static_cast<int32_t>(m))) continue;
        const auto source = std::find(to.sources->begin(), to.sources->end(), static_cast<int32_t>(m));
        const auto j = static_cast<std::size_t>(source - to.sources->begin());
        const Part sent{m, w ? at(am->datatypes, k) : r.datatype, at(am->counts, k),
                        fmt::format("sends rank {}", m_seq.members[d])};
        const Part expected{d, w ? at(ad->recv_datatypes, j) : rd.recv_datatype, at(ad->recv_counts, j),
                            fmt::format("expects from rank {}", m_seq.members[m])};
        if (auto div = check(sent, expected, call)) return div;
      }
    }
    return std::nullopt;
  }

  const Context& m_context;
  const CommSequence& m_seq;
  std::vector<const CollRecord*> m_at;
};

std::string where(const Context& context, uint32_t rank, uint32_t site) {
  const format::CallSite* s = context.rank(rank).site(site);
  if (!s || s->file.empty()) return "an unknown site";
  return s->line ? fmt::format("{}:{}", s->file, s->line) : s->file;
}

class CollectiveMismatch final : public Check {
 public:
  std::string_view name() const override { return "collective-mismatch"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "members of a communicator call different collectives, roots, ops or type signatures";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData&) override {
    return std::make_unique<CollectivePass>(KeepArrays::yes, KeepStacks::no);
  }
  // The passes keep each rank's collectives as its own ids; finish() groups
  // them by communicator identity (the comm table) across ranks.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_of<CollectivePass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData&, WireReader& in) const override {
    return load_pass_of<CollectivePass>(in, KeepArrays::yes, KeepStacks::no);
  }
  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    bool all_finalized = context.world_size() > 0;
    for (uint32_t r = 0; r < context.world_size(); ++r) {
      all_finalized = all_finalized && context.rank(r).present && context.rank(r).finalized();
    }
    for (const CommSequence& seq : comm_sequences(context, passes)) check_comm(context, seq, all_finalized, out);
    for (const CommSequence& seq : comm_sequences(context, passes, Intercomms::only)) check_inter(context, seq, out);
  }

 private:
  // An intercommunicator: the members of both groups make the same sequence
  // of collective calls, and a rooted one has its root in one group: there
  // the root passes MPI_ROOT and the others MPI_PROC_NULL, while every member
  // of the other group passes the root's rank in the root's group (MPI-3.1
  // section 5.2.2). Type signatures are not compared.
  void check_inter(const Context& context, const CommSequence& seq, std::vector<Finding>& out) const {
    const std::size_t n = seq.members.size();
    const GlobalComm& comm = context.comms().comm(seq.comm);
    const std::size_t first = comm.first_group;
    const std::string label = comm_label(context, seq.comm);
    for (std::size_t p = 0;; ++p) {
      std::vector<const CollRecord*> at(n, nullptr);
      bool all = true;
      for (std::size_t m = 0; m < n && all; ++m) {
        all = seq.passes[m] && p < seq.calls[m].size();
        if (all) at[m] = &seq.passes[m]->records[seq.calls[m][p]];
      }
      if (!all) return;  // a member's calls end here: the deadlock check's or the trace's end
      std::optional<Divergence> d;
      for (std::size_t m = 1; m < n && !d; ++m) {
        if (at[m]->call != at[0]->call) d = Divergence{"", {0, call_text(*at[0])}, {m, call_text(*at[m])}, false, {}};
      }
      if (!d && format::call_traits(at[0]->call).rooted) d = inter_roots(at, first);
      if (d) {
        out.push_back(report(context, seq, p, *d, label));
        return;
      }
    }
  }

  // Return how the roots of one rooted collective on an intercommunicator
  // (members [0, first) one group, [first, n) the other) disagree, if they do.
  static std::optional<Divergence> inter_roots(const std::vector<const CollRecord*>& at, std::size_t first) {
    const std::size_t n = at.size();
    for (const CollRecord* r : at) {
      if (r->root == k_no_root) return std::nullopt;  // not recorded
    }
    auto root_side = [&](std::size_t m) { return at[m]->root == format::k_root || at[m]->root == format::k_proc_null; };
    auto what = [&](std::size_t m) {
      if (at[m]->root == format::k_root) return std::string("passes MPI_ROOT");
      if (at[m]->root == format::k_proc_null) return std::string("passes MPI_PROC_NULL");
      return fmt::format("names root {} of the other group", at[m]->root);
    };
    const std::string reason =
        fmt::format("the roots of {} on an intercommunicator disagree: ", format::call_name(at[0]->call));
    const std::string note =
        "on an intercommunicator the root passes MPI_ROOT, the other members of its group MPI_PROC_NULL, and every "
        "member of the other group the root's rank in its group (MPI-3.1 section 5.2.2)";
    auto diverge = [&](std::size_t a, std::size_t b) {
      return Divergence{reason, {a, what(a)}, {b, what(b)}, false, {note}};
    };
    // Within each group: all on the root's side, or all naming the same rank.
    for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{0, first}, {first, n}}) {
      for (std::size_t m = lo + 1; m < hi; ++m) {
        if (root_side(m) != root_side(lo) || (!root_side(lo) && at[m]->root != at[lo]->root)) return diverge(lo, m);
      }
    }
    if (first == 0 || first >= n) return std::nullopt;
    if (root_side(0) == root_side(first)) return diverge(0, first);  // both groups the root's, or neither
    const std::size_t lo = root_side(0) ? 0 : first, hi = root_side(0) ? first : n;
    const std::size_t other = root_side(0) ? first : 0;
    std::optional<std::size_t> root;
    for (std::size_t m = lo; m < hi; ++m) {
      if (at[m]->root != format::k_root) continue;
      if (root) return diverge(*root, m);  // two roots
      root = m;
    }
    if (!root) return diverge(lo, other);  // no root
    if (at[other]->root != static_cast<int32_t>(*root - lo)) return diverge(*root, other);
    return std::nullopt;
  }

  void check_comm(const Context& context, const CommSequence& seq, bool all_finalized,
                  std::vector<Finding>& out) const {
    const std::size_t n = seq.members.size();
    std::size_t longest = 0;
    for (const auto& calls : seq.calls) longest = std::max(longest, calls.size());
    const std::string comm = comm_label(context, seq.comm);
    for (std::size_t p = 0; p < longest; ++p) {
      std::vector<const CollRecord*> at(n, nullptr);
      std::optional<std::size_t> stopped;   // a finalized member with no collective here
      std::size_t present = 0;
      for (std::size_t m = 0; m < n; ++m) {
        if (!seq.passes[m]) continue;
        if (p < seq.calls[m].size()) {
          at[m] = &seq.passes[m]->records[seq.calls[m][p]];
          ++present;
        } else if (all_finalized && !stopped) {
          stopped = m;
        }
      }
      std::optional<Divergence> d;
      if (present >= 2) d = Comparer(context, seq, at).compare();
      if (!d && stopped && present >= 1) {
        std::size_t a = 0;
        while (!at[a]) ++a;
        d = Divergence{"", {a, call_text(*at[a])}, {*stopped, "calls no further collective on it"}, true, {}};
        d->notes.push_back(fmt::format("rank {} made {} on {} and then reached MPI_Finalize", seq.members[*stopped],
                                       plural(p, "collective call"), comm));
      }
      if (d) {
        out.push_back(report(context, seq, p, *d, comm));
        return;
      }
      if (present < 2) return;
    }
  }

  Finding report(const Context& context, const CommSequence& seq, std::size_t p, const Divergence& d,
                 const std::string& comm) const {
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    const uint32_t wa = seq.members[d.a.member], wb = seq.members[d.b.member];
    if (wa == wb) {
      f.message = fmt::format("collectives diverge on {} at collective #{}: {}rank {} {}, {}", comm, p + 1,
                              d.reason, wa, d.a.what, d.b.what);
    } else {
      f.message = fmt::format("collectives diverge on {} at collective #{}: {}rank {} {}, rank {} {}", comm,
                              p + 1, d.reason, wa, d.a.what, wb, d.b.what);
    }
    auto record = [&](std::size_t member, std::size_t position) -> const CollRecord* {
      if (!seq.passes[member] || position >= seq.calls[member].size()) return nullptr;
      return &seq.passes[member]->records[seq.calls[member][position]];
    };
    auto add = [&](std::size_t member, const std::string& what) {
      if (const CollRecord* r = record(member, p)) {
        f.locations.push_back(context.location({seq.members[member], r->seq}, r->call, r->site,
                                               fmt::format("rank {} {} (collective #{} on {})",
                                                           seq.members[member], what, p + 1, comm)));
      }
    };
    add(d.a.member, d.a.what);
    if (wb != wa) {
      if (d.b_stopped) {
        if (p > 0) {
          if (const CollRecord* r = record(d.b.member, p - 1)) {
            f.locations.push_back(context.location(
                {wb, r->seq}, r->call, r->site,
                fmt::format("rank {}'s last collective on {} (#{}); it finalized without calling #{}", wb, comm,
                            p, p + 1)));
          }
        }
      } else {
        add(d.b.member, d.b.what);
      }
    }
    if (p == 0) {
      f.notes.push_back(fmt::format("no collective on {} was agreed on before this one", comm));
    } else {
      const CollRecord* last = nullptr;
      uint32_t last_rank = 0;
      for (std::size_t m = 0; m < seq.members.size() && !last; ++m) {
        last = record(m, p - 1);
        last_rank = seq.members[m];
      }
      if (last) {
        f.notes.push_back(fmt::format("last collective all members agreed on: #{} {} (rank {} at {})", p,
                                      format::call_name(last->call), last_rank,
                                      where(context, last_rank, last->site)));
      }
    }
    for (const std::string& note : d.notes) f.notes.push_back(note);
    return f;
  }
};

}  // namespace

std::unique_ptr<Check> make_collective_mismatch() { return std::make_unique<CollectiveMismatch>(); }

}  // namespace smtrace::analyzer::checks
