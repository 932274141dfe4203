// Communicators and windows across ranks. Each rank numbers its own
// communicators (CommDef ids); the same communicator has a different id on
// each member. CommTable gives every communicator one global index, found by
// how it was made: the k-th communicator-creating call on parent P (a
// collective over P) yields, on each member, the one with the same members.
// Communicators whose creation was not recorded fall back to (members, order
// of first definition). Windows likewise: the k-th window creation on a
// communicator is the same window on all its members.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::analyzer {

struct RankData;

inline constexpr uint32_t k_no_comm = UINT32_MAX;

struct GlobalComm {
  uint32_t index = 0;
  std::vector<uint32_t> world_ranks;   // rank in comm -> world rank
  bool inter = false;
  std::vector<uint32_t> remote_world_ranks;
  std::string name;                    // "MPI_COMM_WORLD", "MPI_COMM_SELF(rank 2)", "comm 3 (Comm_split of MPI_COMM_WORLD)"
  // Return the rank in this comm of world rank `world`, if a member.
  std::optional<int32_t> rank_of(uint32_t world) const;
};

struct GlobalWindow {
  uint32_t index = 0;
  uint32_t comm = k_no_comm;           // global comm index
  std::string name;                    // "window 1 (Win_create on MPI_COMM_WORLD)"
};

class CommTable {
 public:
  // Record, from rank `rank`'s thread while loading, that event `event`
  // created communicator or window ids. Thread safe across distinct ranks.
  void observe(uint32_t rank, const format::Event& event);
  // Assign global indices once all ranks are loaded.
  void resolve(const std::vector<RankData>& ranks);

  // Return the global index of rank `rank`'s communicator `local_id`
  // (k_no_comm when unknown or a group).
  uint32_t global(uint32_t rank, uint32_t local_id) const;
  const GlobalComm& comm(uint32_t index) const { return m_comms[index]; }
  uint32_t size() const { return static_cast<uint32_t>(m_comms.size()); }
  // Return the world rank of `rank_in_comm` in rank `rank`'s communicator
  // `local_id`; nullopt for special values (any source, proc null) or unknown.
  std::optional<uint32_t> world_rank(uint32_t rank, uint32_t local_id, int32_t rank_in_comm) const;

  // Return the global window index of rank `rank`'s window `local_id` (k_no_comm when unknown).
  uint32_t window(uint32_t rank, uint32_t local_id) const;
  const GlobalWindow& window_info(uint32_t index) const { return m_windows[index]; }
  uint32_t window_count() const { return static_cast<uint32_t>(m_windows.size()); }

  // Per-rank creation records, filled by observe().
  struct Creation {
    uint64_t seq = 0;
    format::Call call = format::Call::unspecified;
    uint32_t parent = 0;     // local comm id the call was made on
    uint32_t created = 0;    // local id of the new comm / window (UINT32_MAX: none, e.g. MPI_UNDEFINED)
    bool window = false;
  };
  void reserve_ranks(uint32_t world_size);

 private:
  std::vector<std::vector<Creation>> m_creations;                    // per rank
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_local;    // per rank: sorted (local id, global)
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_local_win;
  std::vector<GlobalComm> m_comms;
  std::vector<GlobalWindow> m_windows;
};

}  // namespace smtrace::analyzer
