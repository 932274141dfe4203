#include "analyzer/comms.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/core.h>

#include "analyzer/rank_data.hpp"
#include "trace_format/call_semantics.hpp"

namespace smtrace::analyzer {

using format::Call;

namespace {

std::string members_text(const std::vector<uint32_t>& ranks) {
  if (ranks.size() > 8) return fmt::format("{} ranks", ranks.size());
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    s += (i ? "," : "") + (ranks[i] == UINT32_MAX ? std::string("?") : std::to_string(ranks[i]));  // ?: not in MPI_COMM_WORLD
  return s;
}

uint32_t lookup(const std::vector<std::pair<uint32_t, uint32_t>>& sorted, uint32_t id) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(id, 0u));
  return it != sorted.end() && it->first == id ? it->second : k_no_comm;
}

}  // namespace

std::optional<int32_t> GlobalComm::rank_of(uint32_t world) const {
  for (std::size_t i = 0; i < world_ranks.size(); ++i) {
    if (world_ranks[i] == world) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

std::optional<uint32_t> GlobalComm::inter_peer(uint32_t self, int32_t rank) const {
  if (rank < 0) return std::nullopt;
  const auto me = rank_of(self);
  if (!me) return std::nullopt;
  const bool first = static_cast<std::size_t>(*me) < first_group;
  const std::size_t begin = first ? first_group : 0;
  const std::size_t end = first ? world_ranks.size() : first_group;
  if (static_cast<std::size_t>(rank) >= end - begin) return std::nullopt;
  const uint32_t w = world_ranks[begin + static_cast<std::size_t>(rank)];
  if (w == UINT32_MAX) return std::nullopt;  // a process outside MPI_COMM_WORLD (spawned, connected)
  return w;
}

std::vector<uint32_t> GlobalComm::peers(uint32_t self) const {
  if (!inter) return world_ranks;
  std::vector<uint32_t> out;
  const auto me = rank_of(self);
  for (std::size_t i = 0; i < world_ranks.size(); ++i)
    if (me && !same_group(i, static_cast<std::size_t>(*me)) && world_ranks[i] != UINT32_MAX)
      out.push_back(world_ranks[i]);
  return out;
}

void CommTable::reserve_ranks(uint32_t world_size) {
  m_creations.assign(world_size, {});
  m_local.assign(world_size, {});
  m_local_win.assign(world_size, {});
}

void CommTable::record(uint32_t rank, const format::Event& e) {
  if (rank >= m_creations.size()) return;
  const format::CallTraits& traits = format::call_traits(e.call);
  if (creates_comm(traits)) {
    m_creations[rank].push_back({e.seq, e.call, e.comm, e.new_comm ? e.new_comm : UINT32_MAX, false});
  } else if (creates_window(traits)) {
    m_creations[rank].push_back({e.seq, e.call, e.comm, e.window ? e.window : UINT32_MAX, true});
  }
}

CommTable::Inter CommTable::canonical(const format::CommDef& def) {
  if (def.remote_world_ranks < def.world_ranks) return {def.remote_world_ranks, def.world_ranks};
  return {def.world_ranks, def.remote_world_ranks};
}

uint32_t CommTable::intercomm(std::map<Key, uint32_t>& by_key, const Inter& groups, uint32_t k,
                              const std::string& how) {
  std::vector<uint32_t> members = groups.first;
  members.insert(members.end(), groups.second.begin(), groups.second.end());
  auto [it, fresh] = by_key.emplace(Key{k_inter_parent, k, members}, static_cast<uint32_t>(m_comms.size()));
  if (fresh) {
    GlobalComm g;
    g.index = it->second;
    g.inter = true;
    g.first_group = static_cast<uint32_t>(groups.first.size());
    g.world_ranks = std::move(members);
    g.remote_world_ranks = groups.second;
    g.name = fmt::format("intercomm {} ({}{}{} and {})", g.index, how, how.empty() ? "" : ", ",
                         members_text(groups.first), members_text(groups.second));
    m_comms.push_back(std::move(g));
  }
  return it->second;
}

uint32_t CommTable::add_comm(std::map<Key, uint32_t>& by_key, const Key& key, format::Call call, uint32_t parent) {
  auto [it, fresh] = by_key.emplace(key, static_cast<uint32_t>(m_comms.size()));
  if (fresh) {
    GlobalComm g;
    g.index = it->second;
    g.world_ranks = std::get<2>(key);
    g.name = fmt::format("comm {} ({} of {}, {})", g.index, format::call_name(call),
                         parent == k_no_comm ? "?" : m_comms[parent].name, members_text(g.world_ranks));
    m_comms.push_back(std::move(g));
  }
  return it->second;
}

void CommTable::resolve(const std::vector<RankData>& ranks) {
  const uint32_t world_size = static_cast<uint32_t>(ranks.size());
  if (m_creations.size() != world_size) reserve_ranks(world_size);
  m_comms.clear();
  m_windows.clear();

  GlobalComm world;
  world.index = 0;
  for (uint32_t r = 0; r < world_size; ++r) world.world_ranks.push_back(r);
  world.name = "MPI_COMM_WORLD";
  m_comms.push_back(std::move(world));
  std::vector<std::map<uint32_t, uint32_t>> local(world_size);
  std::vector<std::map<uint32_t, uint32_t>> local_win(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    GlobalComm self;
    self.index = static_cast<uint32_t>(m_comms.size());
    self.world_ranks = {r};
    self.name = fmt::format("MPI_COMM_SELF of rank {}", r);
    local[r][format::k_comm_world] = 0;
    local[r][format::k_comm_self] = self.index;
    m_comms.push_back(std::move(self));
  }

  // A communicator is the k-th creation on its parent with these members.
  std::map<Key, uint32_t> by_key;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> window_by_key;
  for (uint32_t r = 0; r < world_size; ++r) {
    const RankData& data = ranks[r];
    std::map<uint32_t, uint32_t> ordinal;      // parent global -> creations seen
    std::map<uint32_t, uint32_t> win_ordinal;  // comm global -> window creations seen
    std::map<Inter, uint32_t> inter_ordinal;   // intercommunicators seen, by their groups
    std::map<std::vector<uint32_t>, uint32_t> group_ordinal;  // MPI_Comm_create_group, by members
    auto creations = m_creations[r];
    std::sort(creations.begin(), creations.end(),
              [](const Creation& a, const Creation& b) { return a.seq < b.seq; });
    for (const Creation& c : creations) {
      const uint32_t parent = local[r].count(c.parent) ? local[r][c.parent] : k_no_comm;
      if (c.window) {
        const uint32_t k = win_ordinal[parent]++;
        if (c.created == UINT32_MAX) continue;
        auto [it, fresh] = window_by_key.emplace(std::make_pair(parent, k),
                                                 static_cast<uint32_t>(m_windows.size()));
        if (fresh) {
          GlobalWindow w;
          w.index = it->second;
          w.comm = parent;
          w.name = fmt::format("window {} ({} on {})", w.index + 1, format::call_name(c.call),
                               parent == k_no_comm ? "?" : m_comms[parent].name);
          m_windows.push_back(std::move(w));
        }
        local_win[r][c.created] = it->second;
        continue;
      }
      const format::CommDef* created = c.created == UINT32_MAX ? nullptr : data.comm(c.created);
      if (created && created->inter) {
        // Named by its two groups and the ordinal among this rank's
        // intercommunicators with them (the parents differ between sides).
        const Inter groups = canonical(*created);
        const uint32_t k = inter_ordinal[groups]++;
        local[r][c.created] = intercomm(by_key, groups, k, fmt::format("{} of {}", format::call_name(c.call),
                                                                       parent == k_no_comm ? "?" : m_comms[parent].name));
        continue;
      }
      if (c.call == format::Call::Comm_create_group) {
        // Collective over the group only (MPI-3.1 section 6.4.2): the
        // parent's other members do not call it, so it takes no ordinal of
        // the parent; it is the k-th MPI_Comm_create_group of these members.
        const format::CommDef* def = created;
        if (!def || def->is_group) continue;
        const uint32_t k = group_ordinal[def->world_ranks]++;
        local[r][c.created] = add_comm(by_key, Key{k_group_parent, k, def->world_ranks}, c.call, parent);
        continue;
      }
      const uint32_t k = ordinal[parent]++;
      if (c.created == UINT32_MAX) continue;  // MPI_COMM_NULL (color MPI_UNDEFINED)
      const format::CommDef* def = created;
      if (!def || def->is_group) continue;
      local[r][c.created] = add_comm(by_key, Key{parent, k, def->world_ranks}, c.call, parent);
    }
    // Communicators defined without a recorded creation: by members and order.
    std::map<std::vector<uint32_t>, uint32_t> orphan_ordinal;
    std::map<Inter, uint32_t> orphan_inter;
    std::vector<uint32_t> ids;
    for (const auto& [id, def] : data.comms) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (uint32_t id : ids) {
      const format::CommDef& def = data.comms.at(id);
      if (def.is_group || local[r].count(id)) continue;
      if (def.inter) {
        const Inter groups = canonical(def);
        const uint32_t k = orphan_inter[groups]++;
        local[r][id] = intercomm(by_key, groups, k | 0x80000000u, "");
        continue;
      }
      const uint32_t k = orphan_ordinal[def.world_ranks]++;
      Key key{k_no_comm - 1, k, def.world_ranks};
      auto [it, fresh] = by_key.emplace(key, static_cast<uint32_t>(m_comms.size()));
      if (fresh) {
        GlobalComm g;
        g.index = it->second;
        g.world_ranks = def.world_ranks;
        g.inter = def.inter;
        g.remote_world_ranks = def.remote_world_ranks;
        g.name = fmt::format("comm {} ({})", g.index, members_text(g.world_ranks));
        m_comms.push_back(std::move(g));
      }
      local[r][id] = it->second;
    }
  }
  for (uint32_t r = 0; r < world_size; ++r) {
    m_local[r].assign(local[r].begin(), local[r].end());
    m_local_win[r].assign(local_win[r].begin(), local_win[r].end());
  }
}

uint32_t CommTable::global(uint32_t rank, uint32_t local_id) const {
  if (rank >= m_local.size()) return k_no_comm;
  return lookup(m_local[rank], local_id);
}

std::optional<uint32_t> CommTable::world_rank(uint32_t rank, uint32_t local_id,
                                              int32_t rank_in_comm) const {
  const uint32_t g = global(rank, local_id);
  if (g == k_no_comm || rank_in_comm < 0) return std::nullopt;
  return m_comms[g].peer(rank, rank_in_comm);
}

uint32_t CommTable::window(uint32_t rank, uint32_t local_id) const {
  if (rank >= m_local_win.size()) return k_no_comm;
  return lookup(m_local_win[rank], local_id);
}

}  // namespace smtrace::analyzer
