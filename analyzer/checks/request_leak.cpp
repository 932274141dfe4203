// request-leak: a request created on a rank that reached MPI_Finalize and
// neither completed (Wait*/Test* listing it in completed[]) nor freed
// (MPI_Request_free). A persistent request must be freed even when inactive.
//
// Ranks that did not finalize are skipped: their open requests are what the
// deadlock check explains. Leaks are grouped by creating call site, so a
// loop that leaks a million requests gives one finding with a count.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/open_requests.hpp"
#include "analyzer/wire.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;
using format::RequestEffect;

using Open = OpenRequest;

class Pass final : public RankPass {
 public:
  // `open`: the rank's table of open requests, which invalid-argument's
  // pass may share (open_requests.hpp); a loaded pass has none.
  explicit Pass(std::shared_ptr<OpenRequests> open = nullptr) : m_open(std::move(open)) {}

  void event(const Event& e) override { m_open->apply(e); }

  EventSet wants() const override {
    return EventSet::of([](const format::CallTraits& t) {
      return t.request != RequestEffect::none && t.request != RequestEffect::cancel &&
             t.request != RequestEffect::query;
    });
  }

  // Requests still open at the end, in creation order (one event creates
  // one request; by request id among events that share a seq, which only a
  // damaged trace has).
  std::vector<Open> open() const {
    if (m_loaded) return *m_loaded;
    std::vector<std::pair<uint64_t, Open>> all;
    all.reserve(m_open->size());
    m_open->each([&](uint64_t request, const Open& o) { all.emplace_back(request, o); });
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.second.seq != b.second.seq ? a.second.seq < b.second.seq : a.first < b.first;
    });
    std::vector<Open> out;
    out.reserve(all.size());
    for (const auto& [request, o] : all) out.push_back(o);
    return out;
  }

 private:
  std::shared_ptr<OpenRequests> m_open;  // by request id; open() sorts what it holds

 public:
  // Check::saves_passes: open() where the pass ran, and the pass that holds it elsewhere.
  void save(WireWriter& out) const { out.list(open(), k_code); }
  void load(WireReader& in) { in.list(m_loaded.emplace(), k_code); }

 private:
  static constexpr auto k_code = [](auto& c, auto& o) {
    c(o.seq);
    c(o.site);
    c(o.call);
    c(o.persistent);
    c(o.active);
  };
  std::optional<std::vector<Open>> m_loaded;  // load(): what open() returned where the pass ran
};

class RequestLeak final : public Check {
 public:
  std::string_view name() const override { return "request-leak"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "a request is neither completed nor freed before MPI_Finalize";
  }
  explicit RequestLeak(std::shared_ptr<OpenRequestBooks> books) : m_books(std::move(books)) {}
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override {
    return std::make_unique<Pass>(m_books->of(data, this));
  }
  // finish() reads each rank's open requests and whether that rank finalized.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override { save_pass_of<Pass>(pass, out); }
  std::unique_ptr<RankPass> load_pass(const RankData&, WireReader& in) const override { return load_pass_of<Pass>(in); }

  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    // One finding per source line, call and kind of leak, over all ranks (the
    // same leak on 64 ranks is one mistake); unsymbolized sites are per rank.
    std::map<std::string, Group> groups;
    std::vector<std::string> order;
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      auto* pass = dynamic_cast<Pass*>(passes[rank].get());
      if (!pass || rank >= context.world_size() || !context.rank(rank).finalized()) continue;
      for (const Open& o : pass->open()) {
        const int kind = !o.persistent ? 0 : o.active ? 1 : 2;
        Location where = context.location(EventRef{rank, o.seq}, o.call, o.site,
                                          fmt::format("{} creates the request here", format::call_name(o.call)));
        const std::string key =
            where.file.empty()
                ? fmt::format("{}#{}|{}|{}", rank, o.site, static_cast<int>(o.call), kind)
                : fmt::format("{}:{}:{}|{}|{}", where.file, where.line, where.column, static_cast<int>(o.call), kind);
        auto [it, fresh] = groups.try_emplace(key);
        Group& g = it->second;
        if (fresh) {
          order.push_back(key);
          g.first = o;
          g.first_rank = rank;
          g.kind = kind;
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
  std::shared_ptr<OpenRequestBooks> m_books;

  struct Group {
    Open first;
    uint32_t first_rank = 0;
    int kind = 0;  // 0 non-persistent, 1 persistent and active, 2 persistent and inactive
    uint64_t count = 0;
    std::vector<uint32_t> ranks;
    std::vector<Location> locations;  // the first leak of each rank, up to k_max_locations
  };

  Finding finding(const Group& g) const {
    const std::string_view call = format::call_name(g.first.call);
    const std::string at = EventRef{g.first_rank, g.first.seq}.str();
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    std::string what;
    if (g.count == 1) what = fmt::format("the request created by {} (rank {}) is", call, at);
    else if (g.ranks.size() == 1) what = fmt::format("{} requests created by {} (first at rank {}) are", g.count, call, at);
    else what = fmt::format("{} requests created by {} (first at rank {}, on {}) are", g.count, call, at,
                             plural(g.ranks.size(), "rank"));
    switch (g.kind) {
      case 0: f.message = fmt::format("{} never completed or freed before MPI_Finalize", what); break;
      case 1: f.message = fmt::format("{} started, never completed and never freed before MPI_Finalize", what); break;
      default: f.message = fmt::format("{} never freed with MPI_Request_free before MPI_Finalize", what); break;
    }
    f.locations = g.locations;
    if (g.ranks.size() > g.locations.size())
      f.notes.push_back(fmt::format("and on {} more", plural(g.ranks.size() - g.locations.size(), "rank")));
    if (g.kind == 0)
      f.notes.push_back("complete it with MPI_Wait/MPI_Test (or a variant) or release it with MPI_Request_free");
    else
      f.notes.push_back("a persistent request lives until MPI_Request_free, even when inactive");
    return f;
  }
};

}  // namespace

std::unique_ptr<Check> make_request_leak(std::shared_ptr<OpenRequestBooks> books) {
  return std::make_unique<RequestLeak>(books ? std::move(books) : std::make_shared<OpenRequestBooks>());
}

}  // namespace smtrace::analyzer::checks
