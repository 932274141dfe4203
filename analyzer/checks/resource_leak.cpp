// resource-leak: communicators (other than world and self), groups, windows,
// derived datatypes, user ops and info objects (MPI_Info_create,
// MPI_Info_dup, MPI_Comm_get_info, MPI_Win_get_info) created on a rank that reached
// MPI_Finalize and never freed there, and messages a matched probe took
// (MPI_Mprobe, MPI_Improbe) and no MPI_Mrecv / MPI_Imrecv received.
//
// Only handles the rank's own events created count: a handle the tracer
// first met elsewhere (a family turned off, a library's own) is not ours to
// blame. Leaks are grouped by creating call site, with a count.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/wire.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;

enum class Kind : uint8_t { comm, group, window, datatype, op, message, info };

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::comm: return "communicator";
    case Kind::group: return "group";
    case Kind::window: return "window";
    case Kind::datatype: return "datatype";
    case Kind::op: return "reduction op";
    case Kind::message: return "matched message";
    case Kind::info: return "info object";
  }
  return "?";
}

std::string_view free_call(Kind k) {
  switch (k) {
    case Kind::comm: return "MPI_Comm_free";
    case Kind::group: return "MPI_Group_free";
    case Kind::window: return "MPI_Win_free";
    case Kind::datatype: return "MPI_Type_free";
    case Kind::op: return "MPI_Op_free";
    case Kind::message: return "MPI_Mrecv or MPI_Imrecv";
    case Kind::info: return "MPI_Info_free";
  }
  return "?";
}

struct Created {
  uint64_t seq = 0;
  uint32_t site = 0;
  Call call = Call::unspecified;
  Kind kind = Kind::comm;
};

class Pass final : public RankPass {
 public:
  void event(const Event& e) override {
    if (e.rc != 0 || e.pending) return;
    // A call whose row names no handle resource (most events) makes and
    // frees none: handle_use (out of line) returns HandleKind::none for it.
    if (format::call_traits(e.call).resource == format::Resource::none) return;
    const format::HandleUse use = format::handle_use(e);
    Kind kind = Kind::comm;
    switch (use.kind) {
      case format::HandleKind::none: return;
      case format::HandleKind::comm: kind = Kind::comm; break;
      case format::HandleKind::group: kind = Kind::group; break;
      case format::HandleKind::datatype: kind = Kind::datatype; break;
      case format::HandleKind::op: kind = Kind::op; break;
      case format::HandleKind::window: kind = Kind::window; break;
      case format::HandleKind::message: kind = Kind::message; break;
      case format::HandleKind::info: kind = Kind::info; break;
      case format::HandleKind::buffer: return;  // MPI_Buffer_attach: not a handle to free
    }
    switch (use.effect) {
      case format::HandleEffect::create:
        // Predefined handles (MPI_COMM_WORLD, MPI_COMM_SELF, basic datatypes) are never created.
        if ((kind == Kind::comm || kind == Kind::group) && use.id <= format::k_comm_self) return;
        if (kind == Kind::datatype && use.id < format::k_first_derived_id) return;
        create(kind, use.id, e);
        return;
      case format::HandleEffect::free:
        release(kind, use.id);
        return;
      case format::HandleEffect::none: case format::HandleEffect::commit: case format::HandleEffect::attach:
      case format::HandleEffect::detach:
        return;
    }
  }

  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) { return t.resource != format::Resource::none; });
  }

  // Handles still alive at the end, in creation order.
  std::vector<Created> alive() const {
    if (m_loaded) return *m_loaded;
    std::vector<Created> out;
    out.reserve(m_alive.size());
    for (const auto& [key, c] : m_alive) out.push_back(c);
    std::sort(out.begin(), out.end(), [](const Created& a, const Created& b) { return a.seq < b.seq; });
    return out;
  }

 private:
  static uint64_t key(Kind kind, uint32_t id) { return (static_cast<uint64_t>(kind) << 32) | id; }
  void create(Kind kind, uint32_t id, const Event& e) {
    if (id != 0) m_alive[key(kind, id)] = Created{e.seq, e.site, e.call, kind};
  }
  void release(Kind kind, uint32_t id) { m_alive.erase(key(kind, id)); }

  std::unordered_map<uint64_t, Created> m_alive;  // by (kind, rank-local id)

 public:
  // Check::saves_passes: alive() where the pass ran, and the pass that holds it elsewhere.
  void save(WireWriter& out) const { out.list(alive(), k_code); }
  void load(WireReader& in) { in.list(m_loaded.emplace(), k_code); }

 private:
  static constexpr auto k_code = [](auto& c, auto& created) {
    c(created.seq);
    c(created.site);
    c(created.call);
    c(created.kind);
  };
  std::optional<std::vector<Created>> m_loaded;  // load(): what alive() returned where the pass ran
};

class ResourceLeak final : public Check {
 public:
  std::string_view name() const override { return "resource-leak"; }
  Severity severity() const override { return Severity::warning; }
  std::string_view description() const override {
    return "a communicator, group, window, datatype, op or info object is created and never freed before "
           "MPI_Finalize, or a "
           "message taken by a matched probe is never received";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData&) override { return std::make_unique<Pass>(); }
  // finish() reads each rank's live handles and whether that rank finalized.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_of<Pass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData&, WireReader& in) const override { return load_pass_of<Pass>(in); }

  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    // One finding per source line, call and kind of handle, over all ranks
    // (the same leak on 64 ranks is one mistake); unsymbolized sites are per rank.
    std::map<std::string, Group> groups;
    std::vector<std::string> order;
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      auto* pass = dynamic_cast<Pass*>(passes[rank].get());
      if (!pass || rank >= context.world_size() || !context.rank(rank).finalized()) continue;
      for (const Created& c : pass->alive()) {
        Location where = context.location(EventRef{rank, c.seq}, c.call, c.site,
                                          fmt::format("{} creates the {} here", format::call_name(c.call),
                                                      kind_name(c.kind)));
        const std::string key =
            where.file.empty()
                ? fmt::format("{}#{}|{}|{}", rank, c.site, static_cast<int>(c.call), static_cast<int>(c.kind))
                : fmt::format("{}:{}:{}|{}|{}", where.file, where.line, where.column, static_cast<int>(c.call),
                              static_cast<int>(c.kind));
        auto [it, fresh] = groups.try_emplace(key);
        Group& g = it->second;
        if (fresh) {
          order.push_back(key);
          g.first = c;
          g.first_rank = rank;
        }
        ++g.count;
        if (g.ranks.empty() || g.ranks.back() != rank) {
          g.ranks.push_back(rank);
          if (g.locations.size() < k_max_locations) g.locations.push_back(std::move(where));
        }
      }
    }
    for (const std::string& key : order) out.push_back(finding(groups[key]));
  }

 private:
  static constexpr std::size_t k_max_locations = 8;

  struct Group {
    Created first;
    uint32_t first_rank = 0;
    uint64_t count = 0;
    std::vector<uint32_t> ranks;
    std::vector<Location> locations;  // the first leak of each rank, up to k_max_locations
  };

  Finding finding(const Group& g) const {
    const Created& c = g.first;
    const std::string_view call = format::call_name(c.call);
    const std::string at = EventRef{g.first_rank, c.seq}.str();
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    if (c.kind == Kind::message) {
      f.message = g.count == 1
                      ? fmt::format("the message {} took (rank {}) is never received before MPI_Finalize", call, at)
                      : fmt::format("{} messages {} took (first at rank {}) are never received before MPI_Finalize",
                                    g.count, call, at);
    } else if (g.count == 1) {
      f.message = fmt::format("the {} created by {} (rank {}) is never freed before MPI_Finalize", kind_name(c.kind),
                              call, at);
    } else {
      const std::string where = g.ranks.size() == 1 ? fmt::format("first at rank {}", at)
                                                    : fmt::format("first at rank {}, on {}", at, plural(g.ranks.size(), "rank"));
      f.message = fmt::format("{} {}s created by {} ({}) are never freed before MPI_Finalize", g.count,
                              kind_name(c.kind), call, where);
    }
    f.locations = g.locations;
    if (g.ranks.size() > g.locations.size())
      f.notes.push_back(fmt::format("and on {} more", plural(g.ranks.size() - g.locations.size(), "rank")));
    f.notes.push_back(fmt::format("{} it with {}", c.kind == Kind::message ? "receive" : "release", free_call(c.kind)));
    return f;
  }
};

}  // namespace

std::unique_ptr<Check> make_resource_leak() { return std::make_unique<ResourceLeak>(); }

}  // namespace smtrace::analyzer::checks
