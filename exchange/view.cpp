// The view is collected by a check of its own, run with the others: its
// finish() sees the analyzer's Context (comm table, replay) while it lives.
#include "exchange/view.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include <fmt/core.h>

#include "analyzer/check.hpp"
#include "analyzer/replay.hpp"
#include "trace_format/symbols.hpp"

namespace smtrace::exchange {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_collector = "exchange-view";

// The latest time each rank reached, for TraceView::end.
class EndPass final : public analyzer::RankPass {
 public:
  void event(const format::Event& e) override { last = std::max(last, e.pending ? e.t_start : e.t_end()); }
  int64_t last = 0;
};

class ViewCollector final : public analyzer::Check {
 public:
  explicit ViewCollector(TraceView* view) : m_view(view) {}
  std::unique_ptr<analyzer::RankPass> rank_pass(const analyzer::RankData&) override {
    return std::make_unique<EndPass>();
  }
  std::string_view name() const override { return k_collector; }
  analyzer::Severity severity() const override { return analyzer::Severity::info; }
  std::string_view description() const override { return "what smtrace export needs of a trace (no findings)"; }

  void finish(const analyzer::Context& context, std::vector<std::unique_ptr<analyzer::RankPass>>& passes,
              std::vector<analyzer::Finding>&) override {
    TraceView& view = *m_view;
    const uint32_t n = context.world_size();
    view.world_size = n;
    view.comms = context.comms();
    view.headers.assign(n, {});
    view.present.assign(n, false);
    bool aligned = true;
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (uint32_t r = 0; r < n; ++r) {
      const analyzer::RankData& data = context.rank(r);
      if (!data.present) continue;
      view.present[r] = true;
      view.headers[r] = data.header;
      if (data.header.realtime_origin_ns == 0) aligned = false;
      earliest = std::min(earliest, data.header.realtime_origin_ns);
    }
    view.time_offset.assign(n, 0);
    if (aligned) {
      for (uint32_t r = 0; r < n; ++r) {
        if (view.present[r]) view.time_offset[r] = view.headers[r].realtime_origin_ns - earliest;
      }
    }
    for (uint32_t r = 0; r < n && r < passes.size(); ++r) {
      if (!view.present[r] || !passes[r]) continue;
      int64_t last = static_cast<const EndPass&>(*passes[r]).last;
      if (const auto& end = context.rank(r).end) last = std::max(last, end->t);
      view.end = std::max(view.end, view.time_offset[r] + last);
    }
    const analyzer::Replay& replay = context.replay();
    for (uint32_t r = 0; r < n; ++r) {
      if (!view.present[r]) continue;
      const auto& ops = replay.p2p(r);
      for (uint32_t i = 0; i < ops.size(); ++i) {
        if (!ops[i].send) continue;
        const auto partner = replay.matched({r, i});
        if (!partner || partner->rank >= n) continue;
        const analyzer::P2POp& recv = replay.p2p(partner->rank)[partner->index];
        Message message;
        message.send = {r, ops[i].seq};
        message.recv_done = recv.done();
        message.recv = {partner->rank, recv.done() ? recv.done_seq() : recv.seq};
        view.messages.push_back(message);
      }
    }
  }

 private:
  TraceView* m_view;
};

}  // namespace

TraceView collect_view(const fs::path& dir, analyzer::Options options, WithFindings findings) {
  TraceView view;
  options.extra_checks.push_back([&view] { return std::make_unique<ViewCollector>(&view); });
  if (findings == WithFindings::no) options.checks = {std::string(k_collector)};
  // The collector must run even when --checks names others.
  else if (!options.checks.empty()) options.checks.insert(std::string(k_collector));
  view.result = analyzer::analyze(dir, options);
  return view;
}

RankSource::RankSource(const fs::path& dir) : m_files(format::find_trace_files(dir)) {
  const fs::path symbols = dir / std::string(format::k_symbols_file);
  std::error_code ec;
  if (fs::exists(symbols, ec)) m_symbols = format::read_symbols(symbols, m_problems);
}

format::RankTrace RankSource::read(uint32_t rank) const {
  if (rank >= m_files.rank_files.size()) return {};
  std::error_code ec;
  if (!fs::exists(m_files.rank_files[rank], ec)) return {};
  format::RankTrace trace = format::read_rank_file(m_files.rank_files[rank], format::recovered_version(m_files));
  if (auto it = m_symbols.find(rank); it != m_symbols.end()) format::apply_symbols(trace, it->second);
  return trace;
}

std::string site_text(const format::RankTrace& rank, uint32_t site) {
  const format::CallSite* s = rank.site(site);
  if (s == nullptr) return {};
  if (!s->file.empty() && s->line != 0) {
    std::string text = fmt::format("{}:{}", s->file, s->line);
    if (!s->function.empty()) text += fmt::format(" ({})", s->function);
    return text;
  }
  return s->function;
}

}  // namespace smtrace::exchange
