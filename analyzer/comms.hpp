// Communicators and windows across ranks. Each rank numbers its own
// communicators (CommDef ids); the same communicator has a different id on
// each member. CommTable gives every communicator one global index, found by
// how it was made: the k-th communicator-creating call on parent P (a
// collective over P) yields, on each member, the one with the same members.
// Communicators whose creation was not recorded fall back to (members, order
// of first definition). Windows likewise: the k-th window creation on a
// communicator is the same window on all its members.
//
// An intercommunicator has two groups, and each side's CommDef names its own
// group first: both sides name it by its two groups in a canonical order
// (the lexicographically smaller first) and by how many intercommunicators
// with those groups the rank created before (MPI_Intercomm_create's parents
// differ between the sides). Its members are both groups, the first group's
// ranks first; point-to-point peers and roots name ranks of the other group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::format {
struct CallTraits;
}  // namespace smtrace::format

namespace smtrace::analyzer {

struct RankData;

inline constexpr uint32_t k_no_comm = UINT32_MAX;

struct GlobalComm {
  uint32_t index = 0;
  // Member -> world rank: the ranks of the communicator, or of both groups
  // of an intercommunicator (the first group's, then the second's).
  std::vector<uint32_t> world_ranks;
  bool inter = false;
  uint32_t first_group = 0;            // an intercommunicator: members of its first group
  std::vector<uint32_t> remote_world_ranks;  // an intercommunicator: its second group
  std::string name;                    // "MPI_COMM_WORLD", "MPI_COMM_SELF(rank 2)", "comm 3 (Comm_split of MPI_COMM_WORLD)"
  // Return the member index of world rank `world` (on an intercommunicator,
  // its index among both groups), if a member.
  std::optional<int32_t> rank_of(uint32_t world) const;
  // Return the world rank that world rank `self` names `rank` here: a
  // member (in the other group on an intercommunicator).
  std::optional<uint32_t> peer(uint32_t self, int32_t rank) const {
    if (inter) return inter_peer(self, rank);  // (out of line: the rare case)
    if (rank < 0 || static_cast<std::size_t>(rank) >= world_ranks.size()) return std::nullopt;
    const uint32_t w = world_ranks[static_cast<std::size_t>(rank)];
    // UINT32_MAX: a process outside MPI_COMM_WORLD (spawned, connected).
    return w != UINT32_MAX ? std::optional<uint32_t>(w) : std::optional<uint32_t>();
  }
  // Return the members world rank `self` communicates with point to point:
  // all (an intracommunicator) or the other group's.
  std::vector<uint32_t> peers(uint32_t self) const;
  // Return true when member indices `a` and `b` are in the same group.
  bool same_group(std::size_t a, std::size_t b) const {
    return !inter || (a < first_group) == (b < first_group);
  }

 private:
  // peer() on an intercommunicator.
  std::optional<uint32_t> inter_peer(uint32_t self, int32_t rank) const;
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
  // (Inline: most events create none, and return here.)
  void observe(uint32_t rank, const format::Event& event) {
    if (observes(format::call_traits(event.call))) record(rank, event);
  }
  // Return true when observe() records events of a call with `traits` (it
  // ignores the others): EventSet::of(observes) is what it reads.
  static bool observes(const format::CallTraits& traits) { return creates_comm(traits) || creates_window(traits); }
  static bool creates_comm(const format::CallTraits& t) { return t.resource == format::Resource::comm_new; }
  static bool creates_window(const format::CallTraits& t) {
    return t.resource == format::Resource::win_new || t.resource == format::Resource::win_dynamic;
  }
  // Assign global indices once all ranks are loaded.
  void resolve(const std::vector<RankData>& ranks);

  // Return the global index of rank `rank`'s communicator `local_id`
  // (k_no_comm when unknown or a group).
  uint32_t global(uint32_t rank, uint32_t local_id) const;
  const GlobalComm& comm(uint32_t index) const { return m_comms[index]; }
  uint32_t size() const { return static_cast<uint32_t>(m_comms.size()); }
  // Return the world rank of `rank_in_comm` in rank `rank`'s communicator
  // `local_id` (in the remote group of an intercommunicator); nullopt for
  // special values (any source, proc null) or unknown.
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
  // observe() of an event that creates a communicator or a window.
  void record(uint32_t rank, const format::Event& event);

  using Key = std::tuple<uint32_t, uint32_t, std::vector<uint32_t>>;  // parent, ordinal, members
  using Inter = std::pair<std::vector<uint32_t>, std::vector<uint32_t>>;  // an intercommunicator's groups
  static constexpr uint32_t k_inter_parent = k_no_comm - 2;
  static constexpr uint32_t k_group_parent = k_no_comm - 3;  // MPI_Comm_create_group: keyed by its members
  // Return the global index of the communicator of `key` (made by `call`
  // on global `parent`), adding it on first sight.
  uint32_t add_comm(std::map<Key, uint32_t>& by_key, const Key& key, format::Call call, uint32_t parent);
  // Return `def`'s two groups, the lexicographically smaller first.
  static Inter canonical(const format::CommDef& def);
  // Return the global index of the `k`-th intercommunicator of `groups`
  // (created by `how`), adding it on first sight.
  uint32_t intercomm(std::map<Key, uint32_t>& by_key, const Inter& groups, uint32_t k, const std::string& how);

  std::vector<std::vector<Creation>> m_creations;                    // per rank
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_local;    // per rank: sorted (local id, global)
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_local_win;
  std::vector<GlobalComm> m_comms;
  std::vector<GlobalWindow> m_windows;
};

}  // namespace smtrace::analyzer
