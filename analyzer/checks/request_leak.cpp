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
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analyzer/checks/checks.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;

bool is_persistent_init(Call c) {
  return c == Call::Send_init || c == Call::Bsend_init || c == Call::Ssend_init || c == Call::Rsend_init ||
         c == Call::Recv_init;
}

bool is_completion(Call c) {
  switch (c) {
    case Call::Wait: case Call::Waitall: case Call::Waitany: case Call::Waitsome:
    case Call::Test: case Call::Testall: case Call::Testany: case Call::Testsome: return true;
    default: return false;
  }
}

// Return true when `c` creates a request (non-blocking p2p, collective or
// RMA call, or a persistent init).
bool creates_request(Call c) {
  switch (c) {
    case Call::Isend: case Call::Ibsend: case Call::Issend: case Call::Irsend: case Call::Irecv:
    case Call::Rput: case Call::Rget: case Call::Raccumulate: case Call::Rget_accumulate:
      return true;
    default:
      return is_persistent_init(c) || (format::call_family(c) == format::Family::coll && !format::call_blocks(c));
  }
}

struct Open {
  uint64_t seq = 0;
  uint32_t site = 0;
  Call call = Call::unspecified;
  bool persistent = false;
  bool active = false;  // persistent: started and not completed since
};

class Pass final : public RankPass {
 public:
  void event(const Event& e) override {
    if (e.rc != 0 || e.pending) return;
    if (creates_request(e.call)) {
      if (e.request != 0)
        m_open[e.request] = Open{e.seq, e.site, e.call, is_persistent_init(e.call), !is_persistent_init(e.call)};
      return;
    }
    switch (e.call) {
      case Call::Start: set_active(e.request); return;
      case Call::Startall: for (uint64_t r : e.requests) set_active(r); return;
      case Call::Request_free: m_open.erase(e.request); return;
      default: break;
    }
    if (is_completion(e.call)) {
      for (const format::CompletedRequest& c : e.completed) {
        auto it = m_open.find(c.request);
        if (it == m_open.end()) continue;
        if (it->second.persistent) it->second.active = false;
        else m_open.erase(it);
      }
    }
  }

  // Requests still open at the end, in creation order.
  std::vector<Open> open() const {
    std::vector<Open> out;
    out.reserve(m_open.size());
    for (const auto& [request, o] : m_open) out.push_back(o);
    std::sort(out.begin(), out.end(), [](const Open& a, const Open& b) { return a.seq < b.seq; });
    return out;
  }

 private:
  void set_active(uint64_t request) {
    auto it = m_open.find(request);
    if (it != m_open.end()) it->second.active = true;
  }

  std::unordered_map<uint64_t, Open> m_open;  // by request id
};

class RequestLeak final : public Check {
 public:
  std::string_view name() const override { return "request-leak"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "a request is neither completed nor freed before MPI_Finalize";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData&) override { return std::make_unique<Pass>(); }

  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      auto* pass = dynamic_cast<Pass*>(passes[rank].get());
      if (!pass || rank >= context.world_size() || !context.rank(rank).finalized()) continue;
      // Group by (site, call, kind of leak); keep the first request of each.
      std::map<std::tuple<uint32_t, uint16_t, int>, std::pair<Open, uint64_t>> groups;
      std::vector<std::tuple<uint32_t, uint16_t, int>> order;
      for (const Open& o : pass->open()) {
        const int kind = !o.persistent ? 0 : o.active ? 1 : 2;
        auto key = std::make_tuple(o.site, static_cast<uint16_t>(o.call), kind);
        auto [it, fresh] = groups.try_emplace(key, o, 0);
        if (fresh) order.push_back(key);
        ++it->second.second;
      }
      for (const auto& key : order) {
        const auto& [first, n] = groups[key];
        out.push_back(finding(context, rank, first, n, std::get<2>(key)));
      }
    }
  }

 private:
  Finding finding(const Context& context, uint32_t rank, const Open& o, uint64_t n, int kind) const {
    const std::string_view call = format::call_name(o.call);
    const EventRef at{rank, o.seq};
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    const std::string what = n == 1 ? fmt::format("the request created by {} (rank {})", call, at.str())
                                    : fmt::format("{} requests created by {} (first at rank {})", n, call, at.str());
    switch (kind) {
      case 0: f.message = fmt::format("{} {} never completed or freed before MPI_Finalize", what, n == 1 ? "is" : "are"); break;
      case 1: f.message = fmt::format("{} {} started, never completed and never freed before MPI_Finalize", what, n == 1 ? "is" : "are"); break;
      default: f.message = fmt::format("{} {} never freed with MPI_Request_free before MPI_Finalize", what, n == 1 ? "is" : "are"); break;
    }
    f.locations.push_back(context.location(at, o.call, o.site, fmt::format("{} creates the request here", call)));
    if (kind == 0)
      f.notes.push_back("complete it with MPI_Wait/MPI_Test (or a variant) or release it with MPI_Request_free");
    else
      f.notes.push_back("a persistent request lives until MPI_Request_free, even when inactive");
    return f;
  }
};

}  // namespace

std::unique_ptr<Check> make_request_leak() { return std::make_unique<RequestLeak>(); }

}  // namespace smtrace::analyzer::checks
