// Chrome trace-event JSON through nlohmann::json: each trace event is built
// as a JSON value and serialized on its own (the whole document is never
// held in memory), so escaping and number formatting are the library's and
// invalid UTF-8 in file or function names is replaced, not passed through.
//
// Flow events bind to slices by timestamp: an "s" binds to the slice that
// encloses its ts on its track, an "f" with "bp": "e" likewise, so both sit
// at the start of their slice. Pending calls (the rank stopped inside) end
// where their rank's trace ends.
#include "exchange/perfetto.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "analyzer/report.hpp"

namespace smtrace::exchange {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Where an event referred to by a flow or a finding was drawn.
struct Anchor {
  bool found = false;
  uint64_t tid = 0;
  double ts = 0;  // us
};

// The events some flow or finding refers to, per rank, and their anchors.
class Anchors {
 public:
  explicit Anchors(uint32_t world_size) : m_seqs(world_size), m_anchors(world_size) {}
  void want(const analyzer::EventRef& ref) {
    if (ref.rank < m_seqs.size()) m_seqs[ref.rank].push_back(ref.seq);
  }
  void seal() {
    for (std::size_t r = 0; r < m_seqs.size(); ++r) {
      auto& seqs = m_seqs[r];
      std::sort(seqs.begin(), seqs.end());
      seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
      m_anchors[r].assign(seqs.size(), {});
    }
  }
  // Return the anchor slot of `ref`, or nullptr when nothing refers to it.
  Anchor* find(const analyzer::EventRef& ref) {
    if (ref.rank >= m_seqs.size()) return nullptr;
    const auto& seqs = m_seqs[ref.rank];
    const auto it = std::lower_bound(seqs.begin(), seqs.end(), ref.seq);
    if (it == seqs.end() || *it != ref.seq) return nullptr;
    return &m_anchors[ref.rank][static_cast<std::size_t>(it - seqs.begin())];
  }

 private:
  std::vector<std::vector<uint64_t>> m_seqs;
  std::vector<std::vector<Anchor>> m_anchors;
};

// CUDA calls that put work on a stream (or order it): drawn on the stream's
// track as well as on the host thread's.
bool on_stream(format::Call call) {
  using format::Call;
  switch (call) {
    case Call::cudaLaunchKernel: case Call::cudaMemcpy: case Call::cudaMemcpyAsync:
    case Call::cudaMemset: case Call::cudaMemsetAsync: case Call::cudaEventRecord:
    case Call::cudaStreamWaitEvent: case Call::cudaStreamSynchronize:
      return true;
    default:
      return false;
  }
}

std::string stream_name(uint64_t stream) {
  if (stream == format::k_legacy_stream) return "CUDA legacy default stream";
  if (stream == format::k_per_thread_stream) return "CUDA per-thread default stream";
  return fmt::format("CUDA stream {}", stream);
}

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

class JsonArrayOut {
 public:
  explicit JsonArrayOut(std::ostream& out) : m_out(out) {}
  void add(const json& value) {
    m_out << (m_first ? "\n" : ",\n") << value.dump(-1, ' ', false, json::error_handler_t::replace);
    m_first = false;
  }

 private:
  std::ostream& m_out;
  bool m_first = true;
};

bool uses_comm(format::Family family) {
  switch (family) {
    case format::Family::p2p: case format::Family::coll: case format::Family::comm: return true;
    case format::Family::none: case format::Family::env: case format::Family::group: case format::Family::request:
    case format::Family::rma: case format::Family::type: case format::Family::annotate: case format::Family::cuda:
    case format::Family::thread:
      return false;
  }
  return false;
}

json slice_args(const TraceView& view, uint32_t rank, const format::RankTrace& trace, const format::Event& e) {
  json args;
  args["event"] = fmt::format("{}:{}", rank, e.seq);
  if (const std::string site = site_text(trace, e.site); !site.empty()) args["site"] = site;
  const format::Family family = format::call_family(e.call);
  if (uses_comm(family)) {
    const uint32_t global = view.comms.global(rank, e.comm);
    args["comm"] = global == analyzer::k_no_comm ? fmt::format("comm#{}", e.comm) : view.comms.comm(global).name;
  }
  if (e.peer) args["peer"] = *e.peer;
  if (e.tag) args["tag"] = *e.tag;
  if (e.count != 0) args["count"] = e.count;
  if (e.request != 0) args["request"] = e.request;
  if (!e.requests.empty()) args["requests"] = e.requests;
  if (e.window != 0) args["window"] = e.window;
  if (family == format::Family::cuda) args["stream"] = e.stream;
  if (e.status.source) args["status_source"] = *e.status.source;
  if (e.status.tag) args["status_tag"] = *e.status.tag;
  if (e.repeat > 1) args["repeat"] = e.repeat;
  if (e.rc != 0) args["rc"] = e.rc;
  if (e.pending) args["pending"] = true;
  return args;
}

}  // namespace

PerfettoStats write_perfetto(const fs::path& dir, const TraceView& view, std::ostream& out,
                             const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  const RankSource source(dir);
  const uint32_t n = std::max(view.world_size, source.world_size());
  PerfettoStats stats;

  Anchors anchors(n);
  for (const Message& m : view.messages) {
    anchors.want(m.send);
    anchors.want(m.recv);
  }
  const std::vector<analyzer::Finding>& findings = view.result.findings;
  std::map<analyzer::EventRef, std::vector<std::size_t>> findings_at;  // event -> findings naming it
  for (std::size_t i = 0; i < findings.size(); ++i) {
    for (const analyzer::Location& location : findings[i].locations) {
      anchors.want(location.event);
      auto& list = findings_at[location.event];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }
  anchors.seal();

  out << "{\"displayTimeUnit\": \"ns\",\n\"otherData\": ";
  json other;
  other["tool"] = "smtrace";
  other["version"] = SMTRACE_VERSION;
  other["trace"] = dir.string();
  other["ranks"] = n;
  other["findings"] = findings.size();
  out << other.dump(-1, ' ', false, json::error_handler_t::replace);
  out << ",\n\"traceEvents\": [";
  JsonArrayOut events(out);

  for (uint32_t r = 0; r < n; ++r) {
    const format::RankTrace trace = source.read(r);
    if (!trace.present) continue;
    say(fmt::format("export: rank {}/{}", r + 1, n));
    const int64_t offset = r < view.time_offset.size() ? view.time_offset[r] : 0;
    // A call that never returned lasts to where the trace ends.
    const int64_t trace_end = view.end - offset;

    std::string process = fmt::format("rank {}", r);
    if (!trace.header.host.empty()) process += fmt::format(" ({}, pid {})", trace.header.host, trace.header.pid);
    events.add({{"ph", "M"}, {"name", "process_name"}, {"pid", r}, {"tid", 0}, {"args", {{"name", process}}}});
    events.add({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", r}, {"tid", 0}, {"args", {{"sort_index", r}}}});
    std::set<uint32_t> threads;
    std::set<uint64_t> streams;
    for (const format::Event& e : trace.events) {
      threads.insert(e.thread);
      if (on_stream(e.call)) streams.insert(e.stream);
    }
    for (uint32_t thread : threads) {
      events.add({{"ph", "M"}, {"name", "thread_name"}, {"pid", r}, {"tid", thread},
                  {"args", {{"name", thread == 0 ? std::string("main thread") : fmt::format("thread {}", thread)}}}});
    }
    for (uint64_t stream : streams) {
      events.add({{"ph", "M"}, {"name", "thread_name"}, {"pid", r}, {"tid", k_stream_tid + stream},
                  {"args", {{"name", stream_name(stream)}}}});
    }

    for (const format::Event& e : trace.events) {
      const int64_t start = offset + e.t_start;
      const int64_t end = offset + (e.pending ? std::max(trace_end, e.t_start) : e.t_end());
      json args = slice_args(view, r, trace, e);
      const analyzer::EventRef ref{r, e.seq};
      if (auto it = findings_at.find(ref); it != findings_at.end()) {
        json marks = json::array();
        for (std::size_t i : it->second) marks.push_back(fmt::format("{} [{}]", findings[i].message, findings[i].kind));
        args["findings"] = std::move(marks);
      }
      std::string name(format::call_name(e.call));
      if (e.pending) name += " (never returned)";
      const std::string category(format::family_name(format::call_family(e.call)));
      events.add({{"ph", "X"}, {"name", name}, {"cat", category}, {"pid", r}, {"tid", e.thread},
                  {"ts", us(start)}, {"dur", us(end - start)}, {"args", args}});
      ++stats.slices;
      if (on_stream(e.call)) {
        json stream_args = {{"event", fmt::format("{}:{}", r, e.seq)},
                            {"note", "the host call that put this on the stream (device times are not recorded)"}};
        events.add({{"ph", "X"}, {"name", name}, {"cat", "cuda-stream"}, {"pid", r}, {"tid", k_stream_tid + e.stream},
                    {"ts", us(start)}, {"dur", us(end - start)}, {"args", stream_args}});
        ++stats.slices;
      }
      if (Anchor* anchor = anchors.find(ref)) *anchor = {true, e.thread, us(start)};
    }
  }

  // Messages: one flow each, from the send to where its receive completed.
  uint64_t id = 0;
  for (const Message& m : view.messages) {
    const Anchor* from = anchors.find(m.send);
    const Anchor* to = anchors.find(m.recv);
    ++id;
    if (from == nullptr || to == nullptr || !from->found || !to->found) continue;
    events.add({{"ph", "s"}, {"name", "message"}, {"cat", "message"}, {"id", id}, {"pid", m.send.rank},
                {"tid", from->tid}, {"ts", from->ts}});
    events.add({{"ph", "f"}, {"bp", "e"}, {"name", "message"}, {"cat", "message"}, {"id", id}, {"pid", m.recv.rank},
                {"tid", to->tid}, {"ts", to->ts}});
    ++stats.flows;
  }

  // Findings: an instant event on each location, and a flow chain through them.
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const analyzer::Finding& finding = findings[i];
    std::vector<std::pair<const analyzer::Location*, const Anchor*>> placed;
    for (const analyzer::Location& location : finding.locations) {
      const Anchor* anchor = anchors.find(location.event);
      if (anchor == nullptr || !anchor->found) continue;
      json args = {{"finding", i + 1},
                   {"kind", finding.kind},
                   {"severity", analyzer::severity_name(finding.severity)},
                   {"message", finding.message},
                   {"location", analyzer::location_description(location)}};
      if (const std::string where = analyzer::location_where(location); !where.empty()) args["where"] = where;
      events.add({{"ph", "i"}, {"s", "t"}, {"name", fmt::format("{}: {}", analyzer::severity_name(finding.severity),
                                                                finding.kind)},
                  {"cat", "finding"}, {"pid", location.event.rank}, {"tid", anchor->tid}, {"ts", anchor->ts},
                  {"args", args}});
      ++stats.finding_marks;
      placed.emplace_back(&location, anchor);
    }
    if (placed.size() < 2) continue;
    ++id;
    for (std::size_t k = 0; k < placed.size(); ++k) {
      const std::string phase = k == 0 ? "s" : k + 1 == placed.size() ? "f" : "t";
      json flow = {{"ph", phase}, {"name", finding.kind}, {"cat", "finding"}, {"id", id},
                   {"pid", placed[k].first->event.rank}, {"tid", placed[k].second->tid}, {"ts", placed[k].second->ts}};
      if (phase != "s") flow["bp"] = "e";
      events.add(flow);
    }
  }
  out << "\n]}\n";
  return stats;
}

}  // namespace smtrace::exchange
