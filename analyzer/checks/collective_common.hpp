// What the two collective checks (collective-mismatch, collective-misaligned)
// share: a rank pass that keeps each collective call in a compact record,
// the grouping of those records into per-communicator sequences, and names
// of datatypes and ops for messages. Internal to analyzer/checks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/check.hpp"
#include "analyzer/datatypes.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer::checks {

inline constexpr uint32_t k_coll_none = UINT32_MAX;
inline constexpr int32_t k_no_root = INT32_MIN;

// One collective call, as little as the checks need (about 64 bytes).
struct CollRecord {
  uint64_t seq = 0;
  int64_t count = 0;                  // send side (Bcast: the buffer)
  int64_t recv_count = 0;
  uint32_t comm = 0;                  // rank-local communicator id
  uint32_t site = 0;
  uint32_t op = 0;
  uint32_t datatype = 0;
  uint32_t recv_datatype = 0;
  uint32_t arrays = k_coll_none;      // index into CollectivePass::arrays (v and w variants)
  uint32_t stack = k_coll_none;       // index into CollectivePass::stacks
  int32_t root = k_no_root;           // rooted collectives: as given (rank in comm)
  format::Call call = format::Call::unspecified;
  bool in_place = false;
  bool pending = false;
};

// Per-peer arguments of the v and w variants.
struct CollArrays {
  std::vector<int64_t> counts, recv_counts;
  std::vector<uint32_t> datatypes, recv_datatypes;
};

enum class KeepArrays : uint8_t { no, yes };
enum class KeepStacks : uint8_t { no, yes };

// Collects one rank's collective calls while loading (from that rank's thread only).
class CollectivePass final : public RankPass {
 public:
  CollectivePass(KeepArrays arrays, KeepStacks stacks) : m_keep_arrays(arrays), m_keep_stacks(stacks) {}
  void event(const format::Event& event) override;
  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) { return t.role == format::Role::collective; });
  }
  // Check::saves_passes: append records, arrays and stacks to `out`; read
  // them back from `in` (into a pass made with the same KeepArrays and KeepStacks).
  void save(WireWriter& out) const;
  void load(WireReader& in);

  std::vector<CollRecord> records;
  std::vector<CollArrays> arrays;
  // Interned call stacks: site first, then the outer frames (Event.stack).
  std::vector<std::vector<uint32_t>> stacks;

 private:
  KeepArrays m_keep_arrays;
  KeepStacks m_keep_stacks;
  std::map<std::vector<uint32_t>, uint32_t> m_stack_ids;
  std::vector<uint32_t> m_scratch;
};


// The collective sequence of one communicator: for each member (rank in
// comm), the indices of its records on that communicator, in call order.
struct CommSequence {
  uint32_t comm = 0;                              // global index
  std::vector<uint32_t> members;                  // world ranks, by rank in comm
  std::vector<const CollectivePass*> passes;      // per member; nullptr for an absent rank
  std::vector<std::vector<uint32_t>> calls;       // per member: indices into passes[m]->records
};

// Group every rank's records by global communicator. Skip communicators with
// fewer than two members, and intercommunicators (Intercomms::skip: both
// sides' arguments do not pair as on one group) or all others
// (Intercomms::only: members are both groups, the first group's first, as
// GlobalComm::world_ranks). `passes` holds CollectivePass objects (index = world rank).
enum class Intercomms : uint8_t { skip, only };
std::vector<CommSequence> comm_sequences(const Context& context,
                                         const std::vector<std::unique_ptr<RankPass>>& passes,
                                         Intercomms inter = Intercomms::skip);

// Return "MPI_COMM_WORLD" or the comm table's name for global comm `comm`.
std::string comm_label(const Context& context, uint32_t comm);

}  // namespace smtrace::analyzer::checks
