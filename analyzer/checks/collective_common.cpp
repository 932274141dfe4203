#include "analyzer/checks/collective_common.hpp"

#include "analyzer/comms.hpp"

namespace smtrace::analyzer::checks {

void CollectivePass::event(const format::Event& e) {
  if (format::call_traits(e.call).role != format::Role::collective) return;
  CollRecord r;
  r.seq = e.seq;
  r.count = e.count;
  r.recv_count = e.recv_count;
  r.comm = e.comm;
  r.site = e.site;
  r.op = e.op;
  r.datatype = e.datatype;
  r.recv_datatype = e.recv_datatype;
  r.root = e.peer ? *e.peer : k_no_root;
  r.call = e.call;
  r.in_place = e.in_place;
  r.pending = e.pending;
  if (m_keep_arrays == KeepArrays::yes &&
      !(e.counts.empty() && e.recv_counts.empty() && e.datatypes.empty() && e.recv_datatypes.empty())) {
    r.arrays = static_cast<uint32_t>(arrays.size());
    arrays.push_back({e.counts, e.recv_counts, e.datatypes, e.recv_datatypes});
  }
  if (m_keep_stacks == KeepStacks::yes) {
    // Stacks repeat (loops, the same call path); intern them so a record costs one index.
    m_scratch.clear();
    m_scratch.push_back(e.site);
    m_scratch.insert(m_scratch.end(), e.stack.begin(), e.stack.end());
    auto [it, fresh] = m_stack_ids.emplace(m_scratch, static_cast<uint32_t>(stacks.size()));
    if (fresh) stacks.push_back(m_scratch);
    r.stack = it->second;
  }
  records.push_back(r);
}

namespace {

constexpr auto k_code_values = [](auto& c, auto& value) { c(value); };
constexpr auto k_code_record = [](auto& c, auto& r) {
  c(r.seq);
  c(r.count);
  c(r.recv_count);
  c(r.comm);
  c(r.site);
  c(r.op);
  c(r.datatype);
  c(r.recv_datatype);
  c(r.arrays);
  c(r.stack);
  c(r.root);
  c(r.call);
  c(r.in_place);
  c(r.pending);
};
constexpr auto k_code_arrays = [](auto& c, auto& a) {
  c.list(a.counts, k_code_values);
  c.list(a.recv_counts, k_code_values);
  c.list(a.datatypes, k_code_values);
  c.list(a.recv_datatypes, k_code_values);
};
constexpr auto k_code_stack = [](auto& c, auto& stack) { c.list(stack, k_code_values); };

}  // namespace

void CollectivePass::save(WireWriter& out) const {
  out.list(records, k_code_record);
  out.list(arrays, k_code_arrays);
  out.list(stacks, k_code_stack);
}

void CollectivePass::load(WireReader& in) {
  in.list(records, k_code_record);
  in.list(arrays, k_code_arrays);
  in.list(stacks, k_code_stack);
}

std::vector<CommSequence> comm_sequences(const Context& context,
                                         const std::vector<std::unique_ptr<RankPass>>& passes, Intercomms inter) {
  const CommTable& table = context.comms();
  std::vector<CommSequence> out;
  std::vector<uint32_t> slot(table.size(), k_coll_none);  // global comm -> index in out
  const uint32_t world = context.world_size();
  for (uint32_t rank = 0; rank < world && rank < passes.size(); ++rank) {
    const auto* pass = dynamic_cast<const CollectivePass*>(passes[rank].get());
    if (!pass) continue;
    for (uint32_t i = 0; i < pass->records.size(); ++i) {
      const uint32_t g = table.global(rank, pass->records[i].comm);
      if (g == k_no_comm || g >= table.size()) continue;
      const GlobalComm& comm = table.comm(g);
      if (comm.inter != (inter == Intercomms::only) || comm.world_ranks.size() < 2) continue;
      const auto member = comm.rank_of(rank);
      if (!member) continue;
      if (slot[g] == k_coll_none) {
        slot[g] = static_cast<uint32_t>(out.size());
        CommSequence s;
        s.comm = g;
        s.members = comm.world_ranks;
        s.passes.assign(s.members.size(), nullptr);
        s.calls.resize(s.members.size());
        for (std::size_t m = 0; m < s.members.size(); ++m) {
          const uint32_t w = s.members[m];
          if (w < passes.size()) s.passes[m] = dynamic_cast<const CollectivePass*>(passes[w].get());
        }
        out.push_back(std::move(s));
      }
      out[slot[g]].calls[static_cast<std::size_t>(*member)].push_back(i);
    }
  }
  return out;
}

std::string comm_label(const Context& context, uint32_t comm) {
  const CommTable& table = context.comms();
  if (comm >= table.size()) return "communicator ?";
  return table.comm(comm).name;
}

}  // namespace smtrace::analyzer::checks
