// e2e_check: asserts what a recorded end-to-end run must show in its trace.
//
//   e2e_check CASE TRACE_DIR [--np N] [--source FILE] [--output FILE]
//
// CASE names one check function below (one per test program, plus
// call_sites). --source is the program's source file, whose "site:NAME"
// markers give the lines call sites must resolve to; --output is the job's
// captured stdout, for cases that compare with what the program counted.
// Prints every failed expectation with the rank and event it concerns, then
// a SUMMARY line; exits 0 when all held, 1 otherwise, 2 on bad usage.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace {

namespace fmt = smtrace::format;
using fmt::Call;

// BasicType and Op values of smtrace.proto used below.
constexpr uint32_t k_char = 1, k_byte = 4, k_int = 7, k_long = 9, k_double = 14;
constexpr uint32_t k_op_max = 1, k_op_sum = 3;

struct Options {
  std::string name;
  std::filesystem::path dir;
  int np = 0;
  std::filesystem::path source;
  std::filesystem::path output;
};

// Collects failed expectations; each names the case and where it looked.
class Checker {
 public:
  Checker(const Options& options, const fmt::Trace& trace) : m_options(options), m_trace(trace) {}

  const fmt::Trace& trace() const { return m_trace; }
  const Options& options() const { return m_options; }

  // Record a failure unless `ok`; return `ok` so callers can stop early.
  bool expect(bool ok, const std::string& what) {
    if (!ok) {
      ++m_failures;
      std::fprintf(stderr, "e2e_check: %s: FAIL: %s\n", m_options.name.c_str(), what.c_str());
    }
    return ok;
  }
  void note(const std::string& what) {
    std::fprintf(stderr, "e2e_check: %s: note: %s\n", m_options.name.c_str(), what.c_str());
  }
  int failures() const { return m_failures; }

 private:
  const Options& m_options;
  const fmt::Trace& m_trace;
  int m_failures = 0;
};

std::string str(Call call) { return std::string(fmt::call_name(call)); }

std::string where(uint32_t rank, const fmt::Event& e) {
  std::ostringstream s;
  s << "event " << rank << ":" << e.seq << " (" << fmt::call_name(e.call) << ")";
  return s.str();
}

template <class T>
std::string show(const std::optional<T>& v) {
  return v ? std::to_string(*v) : std::string("absent");
}

template <class T>
std::string show(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<const fmt::Event*> events_of(const fmt::RankTrace& rank, Call call) {
  std::vector<const fmt::Event*> out;
  for (const auto& e : rank.events)
    if (e.call == call) out.push_back(&e);
  return out;
}

std::vector<const fmt::Event*> events_of(const fmt::RankTrace& rank, std::initializer_list<Call> calls) {
  std::vector<const fmt::Event*> out;
  for (const auto& e : rank.events)
    if (std::find(calls.begin(), calls.end(), e.call) != calls.end()) out.push_back(&e);
  return out;
}

// Expect exactly `n` events of `call` on `rank`; return them.
std::vector<const fmt::Event*> expect_n(Checker& c, uint32_t r, Call call, std::size_t n) {
  auto found = events_of(c.trace().ranks[r], call);
  c.expect(found.size() == n, "rank " + std::to_string(r) + ": expected " + std::to_string(n) + " " + str(call) +
                                  " events, found " + std::to_string(found.size()));
  return found;
}

uint64_t repeats(const fmt::Event& e) { return e.repeat == 0 ? 1 : e.repeat; }

// Every present rank: header consistent, seqs strictly increasing.
void check_common(Checker& c, bool expect_complete) {
  const auto& t = c.trace();
  const auto np = static_cast<std::size_t>(c.options().np);
  if (np != 0)
    c.expect(t.ranks.size() == np,
             "expected " + std::to_string(np) + " ranks, trace has " + std::to_string(t.ranks.size()));
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    const auto& rank = t.ranks[r];
    if (!c.expect(rank.present, "rank " + std::to_string(r) + ": rank file missing or without header")) continue;
    c.expect(rank.header.rank == r,
             "rank " + std::to_string(r) + ": header says rank " + std::to_string(rank.header.rank));
    if (np != 0)
      c.expect(rank.header.world_size == np,
               "rank " + std::to_string(r) + ": header world_size " + std::to_string(rank.header.world_size));
    c.expect(!rank.events.empty(), "rank " + std::to_string(r) + ": no events");
    std::set<uint64_t> seqs;
    for (std::size_t i = 0; i < rank.events.size(); ++i) {
      const auto& e = rank.events[i];
      c.expect(seqs.insert(e.seq).second,
               "rank " + std::to_string(r) + ": seq " + std::to_string(e.seq) + " appears twice");
      if (i > 0)
        c.expect(rank.events[i - 1].seq < e.seq,
                 "rank " + std::to_string(r) + ": events out of seq order at " + std::to_string(e.seq));
      c.expect(fmt::call_known(e.call), where(r, e) + ": unknown call number");
      if (expect_complete) c.expect(!e.pending, where(r, e) + ": pending in a run that finished");
    }
    if (!rank.events.empty() && expect_complete) {
      c.expect(rank.events.front().call == Call::Init || rank.events.front().call == Call::Init_thread,
               "rank " + std::to_string(r) + ": first event is " + str(rank.events.front().call) +
                   ", expected MPI_Init or MPI_Init_thread");
      c.expect(rank.events.back().call == Call::Finalize, "rank " + std::to_string(r) + ": last event is " +
                                                              str(rank.events.back().call) + ", expected MPI_Finalize");
    }
  }
  if (expect_complete) {
    c.expect(t.complete(), "trace not complete: some rank did not reach MPI_Finalize");
    for (const auto& p : t.all_problems())
      c.expect(p.severity != fmt::Problem::Severity::error, "read problem: " + p.to_string());
  } else {
    // A killed rank may leave a damaged tail; the reader must say where.
    for (const auto& p : t.all_problems()) c.note("read problem (allowed in a killed run): " + p.to_string());
  }
}

// ---------------------------------------------------------------------------
// Call sites: "site:NAME" markers in the program's source.

std::map<std::string, uint32_t> read_markers(const std::filesystem::path& source) {
  std::map<std::string, uint32_t> lines;
  std::ifstream in(source);
  std::string text;
  static const std::regex marker(R"(site:([A-Za-z0-9_]+))");
  for (uint32_t n = 1; std::getline(in, text); ++n) {
    std::smatch m;
    if (std::regex_search(text, m, marker)) lines[m[1]] = n;
  }
  return lines;
}

// Expect `e`'s call site to resolve to the marked line of the program source.
void expect_site(Checker& c, uint32_t r, const fmt::Event& e, const std::string& marker) {
  const auto markers = read_markers(c.options().source);
  const auto it = markers.find(marker);
  if (!c.expect(it != markers.end(), "no marker site:" + marker + " in " + c.options().source.string())) return;
  const auto& rank = c.trace().ranks[r];
  if (!c.expect(e.site != 0, where(r, e) + ": no call site")) return;
  const fmt::CallSite* site = rank.site(e.site);
  if (!c.expect(site != nullptr, where(r, e) + ": call site " + std::to_string(e.site) + " not defined")) return;
  const std::string want_file = c.options().source.filename().string();
  const bool file_ok = std::filesystem::path(site->file).filename() == want_file;
  c.expect(file_ok && site->line == it->second, where(r, e) + ": call site resolves to '" + site->file + ":" +
                                                    std::to_string(site->line) + "' (" + site->function +
                                                    "), expected " + want_file + ":" + std::to_string(it->second));
  c.expect(site->function.find("main") != std::string::npos || marker.rfind("annotate", 0) == 0,
           where(r, e) + ": call site function '" + site->function + "', expected main");
}

// ---------------------------------------------------------------------------
// Footprints: runs expanded to merged byte intervals, so that equivalent
// descriptions compare equal.

using Intervals = std::vector<std::pair<int64_t, int64_t>>;  // [begin, end)

Intervals merge(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

Intervals footprint(const std::vector<fmt::Run>& runs) {
  Intervals v;
  for (const auto& run : runs) {
    const uint64_t n = run.count == 0 ? 1 : run.count;
    for (uint64_t k = 0; k < n && k < 100000; ++k) {
      const int64_t at = run.offset + static_cast<int64_t>(k) * run.stride;
      v.emplace_back(at, at + static_cast<int64_t>(run.length));
    }
  }
  return merge(v);
}

std::string show(const Intervals& v) {
  std::string s;
  for (const auto& [b, e] : v) s += "[" + std::to_string(b) + "," + std::to_string(e) + ")";
  return s.empty() ? "(empty)" : s;
}

std::vector<std::pair<uint32_t, uint64_t>> signature(const std::vector<fmt::TypeCount>& sig) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& tc : sig) {
    if (!out.empty() && out.back().first == tc.type)
      out.back().second += tc.count;
    else
      out.emplace_back(tc.type, tc.count);
  }
  return out;
}

std::string show(const std::vector<std::pair<uint32_t, uint64_t>>& sig) {
  std::string s;
  for (const auto& [t, n] : sig) s += "(type " + std::to_string(t) + " x" + std::to_string(n) + ")";
  return s;
}

// ---------------------------------------------------------------------------
// The cases.

void check_p2p_wildcard(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  const auto size = static_cast<int32_t>(t.ranks.size());
  if (size < 3 || !t.ranks[0].present) return;
  const auto recvs = expect_n(c, 0, Call::Recv, 3 * static_cast<std::size_t>(size - 1));
  if (recvs.size() == 3 * static_cast<std::size_t>(size - 1)) {
    for (std::size_t group = 0; group < 3; ++group) {
      std::set<int32_t> sources;
      for (int32_t i = 0; i < size - 1; ++i) {
        const auto& e = *recvs[group * static_cast<std::size_t>(size - 1) + static_cast<std::size_t>(i)];
        const int32_t want_tag = group == 0 ? 10 : group == 1 ? fmt::k_any_tag : 40;
        c.expect(e.peer == fmt::k_any_source, where(0, e) + ": posted source " + show(e.peer) + ", expected -1");
        c.expect(e.tag == want_tag,
                 where(0, e) + ": posted tag " + show(e.tag) + ", expected " + std::to_string(want_tag));
        c.expect(e.comm == fmt::k_comm_world && e.count == 1 && e.datatype == k_int,
                 where(0, e) + ": comm/count/datatype " + std::to_string(e.comm) + "/" + std::to_string(e.count) + "/" +
                     std::to_string(e.datatype) + ", expected 0/1/7");
        if (!c.expect(
                e.status.source.has_value() && e.status.tag.has_value(),
                where(0, e) + ": status source/tag missing (" + show(e.status.source) + "/" + show(e.status.tag) + ")"))
          continue;
        const int32_t src = *e.status.source;
        c.expect(src >= 1 && src < size, where(0, e) + ": status source " + std::to_string(src) + " out of range");
        sources.insert(src);
        const int32_t actual_tag = group == 0 ? 10 : group == 1 ? 20 + src : 40;
        c.expect(*e.status.tag == actual_tag, where(0, e) + ": status tag " + std::to_string(*e.status.tag) +
                                                  ", expected " + std::to_string(actual_tag));
        if (e.status.count) c.expect(*e.status.count == 1, where(0, e) + ": status count " + show(e.status.count));
      }
      c.expect(sources.size() == static_cast<std::size_t>(size - 1),
               "rank 0: receive group " + std::to_string(group) + ": actual sources not all distinct");
    }
  }
  const auto irecvs = expect_n(c, 0, Call::Irecv, static_cast<std::size_t>(size - 1));
  std::vector<uint64_t> ids;
  for (const auto* e : irecvs) {
    c.expect(e->peer == fmt::k_any_source && e->tag == fmt::k_any_tag,
             where(0, *e) + ": posted source/tag " + show(e->peer) + "/" + show(e->tag) + ", expected -1/-1");
    c.expect(e->request != 0, where(0, *e) + ": no request id");
    ids.push_back(e->request);
  }
  c.expect(std::set<uint64_t>(ids.begin(), ids.end()).size() == ids.size(), "rank 0: Irecv request ids not distinct");
  const auto waitalls = expect_n(c, 0, Call::Waitall, 1);
  if (!waitalls.empty()) {
    const auto& w = *waitalls[0];
    c.expect(w.requests == ids,
             where(0, w) + ": requests " + show(w.requests) + ", expected the Irecv ids " + show(ids));
    c.expect(w.completed.size() == ids.size(), where(0, w) + ": " + std::to_string(w.completed.size()) +
                                                   " completed requests, expected " + std::to_string(ids.size()));
    for (const auto& done : w.completed) {
      c.expect(done.index < ids.size() && ids[done.index] == done.request,
               where(0, w) + ": completed index " + std::to_string(done.index) + " request " +
                   std::to_string(done.request) + " does not match the Irecv at that index");
      if (c.expect(done.status.source && done.status.tag,
                   where(0, w) + ": completed request " + std::to_string(done.request) + " without source/tag"))
        c.expect(*done.status.tag == 30 + *done.status.source,
                 where(0, w) + ": completed request " + std::to_string(done.request) + ": source " +
                     std::to_string(*done.status.source) + " tag " + std::to_string(*done.status.tag));
    }
    for (const auto* e : irecvs) c.expect(e->seq < w.seq, where(0, *e) + ": Irecv after the Waitall that completes it");
  }
  for (uint32_t r = 1; r < t.ranks.size(); ++r) {
    if (!t.ranks[r].present) continue;
    const auto sends = expect_n(c, r, Call::Send, 3);
    if (sends.size() == 3) {
      c.expect(sends[0]->peer == 0 && sends[0]->tag == 10,
               where(r, *sends[0]) + ": dest/tag " + show(sends[0]->peer) + "/" + show(sends[0]->tag));
      c.expect(sends[1]->tag == 20 + static_cast<int32_t>(r), where(r, *sends[1]) + ": tag " + show(sends[1]->tag));
    }
    const auto isends = expect_n(c, r, Call::Isend, 1);
    const auto waits = expect_n(c, r, Call::Wait, 1);
    if (isends.size() == 1 && waits.size() == 1) {
      const auto& is = *isends[0];
      const auto& w = *waits[0];
      c.expect(is.request != 0, where(r, is) + ": no request id");
      c.expect(w.requests == std::vector<uint64_t>{is.request},
               where(r, w) + ": requests " + show(w.requests) + ", expected [" + std::to_string(is.request) + "]");
      c.expect(w.completed.size() == 1 && w.completed[0].request == is.request,
               where(r, w) + ": does not list Isend request " + std::to_string(is.request) + " as completed");
      c.expect(is.seq < w.seq, where(r, w) + ": Wait before its Isend");
    }
  }
}

void check_call_sites(Checker& c) {
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() >= 3 && t.ranks[0].present && t.ranks[1].present, "ranks 0 and 1 needed")) return;
  const auto recvs = events_of(t.ranks[0], Call::Recv);
  if (c.expect(!recvs.empty(), "rank 0: no MPI_Recv")) expect_site(c, 0, *recvs[0], "recv_any_source");
  const auto irecvs = events_of(t.ranks[0], Call::Irecv);
  if (c.expect(!irecvs.empty(), "rank 0: no MPI_Irecv")) {
    expect_site(c, 0, *irecvs[0], "irecv_any");
    if (irecvs.size() > 1)
      c.expect(irecvs[0]->site == irecvs[1]->site, "rank 0: two Irecv of one line have distinct call sites");
  }
  const auto waitalls = events_of(t.ranks[0], Call::Waitall);
  if (c.expect(!waitalls.empty(), "rank 0: no MPI_Waitall")) expect_site(c, 0, *waitalls[0], "waitall");
  const auto sends = events_of(t.ranks[1], Call::Send);
  if (c.expect(!sends.empty(), "rank 1: no MPI_Send")) expect_site(c, 1, *sends[0], "send");
  const auto isends = events_of(t.ranks[1], Call::Isend);
  if (c.expect(!isends.empty(), "rank 1: no MPI_Isend")) expect_site(c, 1, *isends[0], "isend");
  // Every call of this program is made from main: every event resolves there.
  const std::string want_file = c.options().source.filename().string();
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    for (const auto& e : t.ranks[r].events) {
      const fmt::CallSite* site = t.ranks[r].site(e.site);
      const bool ok = site != nullptr && std::filesystem::path(site->file).filename() == want_file && site->line > 0;
      c.expect(ok, where(r, e) + ": call site " + std::to_string(e.site) + " does not resolve to a line of " +
                       want_file + (site ? " ('" + site->file + ":" + std::to_string(site->line) + "')" : ""));
    }
  }
  // Each distinct address is defined once: distinct ids must not share an offset.
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    std::set<std::pair<uint32_t, uint64_t>> addresses;
    for (const auto& [id, site] : t.ranks[r].sites)
      c.expect(addresses.insert({site.module, site.offset}).second,
               "rank " + std::to_string(r) + ": call site address defined twice (id " + std::to_string(id) + ")");
  }
}

void check_coll_split(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 4, "coll_split needs 4 ranks")) return;
  for (uint32_t r = 0; r < 4; ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    const std::string rs = "rank " + std::to_string(r);
    const auto world = rank.comms.find(fmt::k_comm_world);
    if (world != rank.comms.end() && !world->second.world_ranks.empty())
      c.expect(world->second.world_ranks == std::vector<uint32_t>{0, 1, 2, 3},
               rs + ": CommDef 0 world_ranks " + show(world->second.world_ranks));
    const auto splits = expect_n(c, r, Call::Comm_split, 1);
    if (splits.empty()) continue;
    const auto& s = *splits[0];
    c.expect(s.comm == fmt::k_comm_world && s.color == static_cast<int32_t>(r % 2) && s.key == -static_cast<int32_t>(r),
             where(r, s) + ": comm/color/key " + std::to_string(s.comm) + "/" + std::to_string(s.color) + "/" +
                 std::to_string(s.key));
    const uint32_t half = s.new_comm;
    c.expect(half >= 2, where(r, s) + ": new_comm " + std::to_string(half) + ", expected >= 2");
    const auto def = rank.comms.find(half);
    const std::vector<uint32_t> want = r % 2 == 0 ? std::vector<uint32_t>{2, 0} : std::vector<uint32_t>{3, 1};
    if (c.expect(def != rank.comms.end(), rs + ": no CommDef for new_comm " + std::to_string(half))) {
      c.expect(def->second.world_ranks == want, rs + ": CommDef " + std::to_string(half) + " world_ranks " +
                                                    show(def->second.world_ranks) + ", expected " + show(want));
      c.expect(def->second.parent == fmt::k_comm_world && !def->second.is_group && !def->second.inter,
               rs + ": CommDef " + std::to_string(half) + " parent/is_group/inter wrong");
      c.expect(rank.world_rank(half, 0) == want[0] && rank.world_rank(half, 1) == want[1],
               rs + ": world_rank() disagrees with the CommDef");
    }
    struct Expect {
      Call call;
      uint32_t comm;
      std::optional<int32_t> root;
      uint32_t op;
    };
    const std::vector<Expect> expected = {
        {Call::Bcast, half, 0, 0},      {Call::Reduce, half, 1, k_op_sum},  {Call::Allreduce, half, {}, k_op_max},
        {Call::Barrier, half, {}, 0},   {Call::Gatherv, half, 0, 0},        {Call::Bcast, 0, 2, 0},
        {Call::Reduce, 0, 3, k_op_sum}, {Call::Allreduce, 0, {}, k_op_max}, {Call::Barrier, 0, {}, 0},
        {Call::Gatherv, 0, 1, 0},
    };
    const auto colls = events_of(rank, {Call::Bcast, Call::Reduce, Call::Allreduce, Call::Barrier, Call::Gatherv});
    if (!c.expect(colls.size() == expected.size(), rs + ": " + std::to_string(colls.size()) +
                                                       " collectives recorded, expected " +
                                                       std::to_string(expected.size())))
      continue;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& e = *colls[i];
      const auto& x = expected[i];
      c.expect(e.call == x.call, where(r, e) + ": expected " + str(x.call) + " here");
      c.expect(e.comm == x.comm,
               where(r, e) + ": comm " + std::to_string(e.comm) + ", expected " + std::to_string(x.comm));
      if (x.root) c.expect(e.peer == x.root, where(r, e) + ": root " + show(e.peer) + ", expected " + show(x.root));
      if (x.op)
        c.expect(e.op == x.op, where(r, e) + ": op " + std::to_string(e.op) + ", expected " + std::to_string(x.op));
      if (x.call == Call::Bcast || x.call == Call::Reduce || x.call == Call::Allreduce)
        c.expect(e.count == 1 && e.datatype == k_int, where(r, e) + ": count/datatype " + std::to_string(e.count) +
                                                          "/" + std::to_string(e.datatype) + ", expected 1/7");
      if (x.call == Call::Gatherv) {
        const uint32_t me_in_comm = x.comm == 0 ? r : (want[0] == r ? 0u : 1u);
        c.expect(e.count == me_in_comm + 1 && e.datatype == k_double,
                 where(r, e) + ": send count/datatype " + std::to_string(e.count) + "/" + std::to_string(e.datatype));
        if (static_cast<int32_t>(me_in_comm) == *x.root) {
          const std::vector<int64_t> counts =
              x.comm == 0 ? std::vector<int64_t>{1, 2, 3, 4} : std::vector<int64_t>{1, 2};
          const std::vector<int64_t> displs =
              x.comm == 0 ? std::vector<int64_t>{0, 1, 3, 6} : std::vector<int64_t>{0, 1};
          c.expect(e.recv_counts == counts && e.recv_displs == displs,
                   where(r, e) + ": root's recv_counts " + show(e.recv_counts) + " recv_displs " + show(e.recv_displs) +
                       ", expected " + show(counts) + " " + show(displs));
          c.expect(e.recv_datatype == k_double && e.recv_buf != 0, where(r, e) + ": root's recv datatype/buffer");
        }
      }
    }
    const auto frees = expect_n(c, r, Call::Comm_free, 1);
    if (!frees.empty())
      c.expect(frees[0]->comm == half, where(r, *frees[0]) + ": comm " + std::to_string(frees[0]->comm));
  }
}

// rma_accumulate.c (3 ranks, either version): lock_all epochs on one window;
// rank 1 accumulates (SUM, long) into rank 0 and annotates a write of its
// origin buffer; rank 2 puts there (bug) or accumulates (fixed).
void check_rma_accumulate(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 3, "rma_accumulate needs 3 ranks")) return;
  for (uint32_t r = 0; r < 3; ++r) {
    if (!t.ranks[r].present) continue;
    expect_n(c, r, Call::Win_create, 1);
    expect_n(c, r, Call::Win_lock_all, 1);
    expect_n(c, r, Call::Win_unlock_all, 1);
    expect_n(c, r, Call::Win_free, 1);
  }
  for (const auto* a : expect_n(c, 1, Call::Accumulate, 1))
    c.expect(a->peer == 0 && a->target_disp == 0 && a->op == k_op_sum && a->datatype == k_long && a->count == 1,
             where(1, *a) + ": target/disp/op/datatype/count");
  for (const auto* w : expect_n(c, 1, Call::Annotate_write, 1))
    c.expect(w->size == 8 && w->buf != 0, where(1, *w) + ": annotated size " + std::to_string(w->size));
  const auto puts = events_of(t.ranks[2], Call::Put);
  const auto accs = events_of(t.ranks[2], Call::Accumulate);
  c.expect(puts.size() + accs.size() == 1, "rank 2: expected one MPI_Put or MPI_Accumulate");
}

// rma_wildcard.c (3 ranks, either version): rank 1 puts into rank 0's
// window under a shared lock and sends; rank 2 sends; rank 0 receives twice
// (MPI_ANY_SOURCE, or named sources when fixed) around an annotated read.
void check_rma_wildcard(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 3, "rma_wildcard needs 3 ranks")) return;
  for (uint32_t r = 0; r < 3; ++r) {
    if (!t.ranks[r].present) continue;
    expect_n(c, r, Call::Win_create, 1);
    expect_n(c, r, Call::Win_free, 1);
  }
  for (const auto* p : expect_n(c, 1, Call::Put, 1))
    c.expect(p->peer == 0 && p->target_disp == 2 && p->count == 1, where(1, *p) + ": target/disp/count");
  expect_n(c, 1, Call::Win_lock, 1);
  expect_n(c, 1, Call::Win_unlock, 1);
  expect_n(c, 2, Call::Send, 1);
  for (const auto* rd : expect_n(c, 0, Call::Annotate_read, 1))
    c.expect(rd->size == 4 && rd->buf != 0, where(0, *rd) + ": annotated size " + std::to_string(rd->size));
  for (const auto* r : expect_n(c, 0, Call::Recv, 2)) {
    c.expect(r->status.source && (*r->status.source == 1 || *r->status.source == 2),
             where(0, *r) + ": status source 1 or 2");
  }
}

void check_rma_fence(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  const auto size = static_cast<int32_t>(t.ranks.size());
  if (!c.expect(size >= 3, "rma_fence needs 3 ranks or more")) return;
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    const int32_t right = (static_cast<int32_t>(r) + 1) % size, left = (static_cast<int32_t>(r) + size - 1) % size;
    const auto creates = expect_n(c, r, Call::Win_create, 1);
    const auto allocs = expect_n(c, r, Call::Win_allocate, 1);
    if (creates.empty() || allocs.empty()) continue;
    const auto& wc = *creates[0];
    const auto& wa = *allocs[0];
    c.expect(wc.window != 0 && wa.window != 0 && wc.window != wa.window,
             "rank " + std::to_string(r) + ": window ids " + std::to_string(wc.window) + " and " +
                 std::to_string(wa.window) + " must be distinct and non-zero");
    c.expect(wc.comm == 0 && wc.win_base != 0 && wc.win_size == 64 && wc.disp_unit == 4,
             where(r, wc) + ": comm/base/size/disp_unit " + std::to_string(wc.comm) + "/" +
                 std::to_string(wc.win_base) + "/" + std::to_string(wc.win_size) + "/" + std::to_string(wc.disp_unit) +
                 ", expected 0/!=0/64/4");
    c.expect(wa.comm == 0 && wa.win_base != 0 && wa.win_size == 32 && wa.disp_unit == 8,
             where(r, wa) + ": comm/base/size/disp_unit " + std::to_string(wa.comm) + "/" +
                 std::to_string(wa.win_base) + "/" + std::to_string(wa.win_size) + "/" + std::to_string(wa.disp_unit) +
                 ", expected 0/!=0/32/8");
    const auto fences = expect_n(c, r, Call::Win_fence, 5);
    if (fences.size() == 5) {
      const std::vector<uint32_t> windows = {wc.window, wc.window, wc.window, wa.window, wa.window};
      const std::vector<uint32_t> asserts = {fmt::assert_flag::noprecede, 0, fmt::assert_flag::nosucceed, 0, 0};
      for (std::size_t i = 0; i < 5; ++i) {
        c.expect(fences[i]->window == windows[i],
                 where(r, *fences[i]) + ": window " + std::to_string(fences[i]->window));
        c.expect(fences[i]->assert_flags == asserts[i], where(r, *fences[i]) + ": assert_flags " +
                                                            std::to_string(fences[i]->assert_flags) + ", expected " +
                                                            std::to_string(asserts[i]));
      }
    }
    const auto puts = expect_n(c, r, Call::Put, 2);
    if (puts.size() == 2) {
      const auto& p = *puts[0];
      c.expect(p.window == wc.window && p.peer == right && p.target_disp == r && p.count == 1 && p.datatype == k_int &&
                   p.target_count == 1 && p.target_datatype == k_int && p.buf != 0,
               where(r, p) + ": window/target/disp/count/type " + std::to_string(p.window) + "/" + show(p.peer) + "/" +
                   std::to_string(p.target_disp) + "/" + std::to_string(p.count) + "/" + std::to_string(p.datatype) +
                   ", expected " + std::to_string(wc.window) + "/" + std::to_string(right) + "/" + std::to_string(r) +
                   "/1/7");
      const auto& q = *puts[1];
      c.expect(q.window == wa.window && q.peer == left && q.target_disp == 2 && q.datatype == k_double &&
                   q.target_datatype == k_double,
               where(r, q) + ": window/target/disp/type " + std::to_string(q.window) + "/" + show(q.peer) + "/" +
                   std::to_string(q.target_disp) + "/" + std::to_string(q.datatype));
    }
    const auto gets = expect_n(c, r, Call::Get, 1);
    if (!gets.empty()) {
      const auto& g = *gets[0];
      c.expect(g.window == wc.window && g.peer == left && g.target_disp == 5 && g.target_count == 1,
               where(r, g) + ": window/target/disp " + std::to_string(g.window) + "/" + show(g.peer) + "/" +
                   std::to_string(g.target_disp) + ", expected " + std::to_string(wc.window) + "/" +
                   std::to_string(left) + "/5");
    }
    const auto accs = expect_n(c, r, Call::Accumulate, 1);
    if (!accs.empty()) {
      const auto& a = *accs[0];
      c.expect(a.window == wc.window && a.peer == 0 && a.target_disp == 10 && a.op == k_op_sum && a.datatype == k_int,
               where(r, a) + ": window/target/disp/op " + std::to_string(a.window) + "/" + show(a.peer) + "/" +
                   std::to_string(a.target_disp) + "/" + std::to_string(a.op) + ", expected " +
                   std::to_string(wc.window) + "/0/10/3");
    }
    const auto frees = expect_n(c, r, Call::Win_free, 2);
    if (frees.size() == 2)
      c.expect(frees[0]->window == wa.window && frees[1]->window == wc.window,
               "rank " + std::to_string(r) + ": Win_free windows " + std::to_string(frees[0]->window) + "," +
                   std::to_string(frees[1]->window));
  }
}

void check_rma_lock_all(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  const auto size = static_cast<uint32_t>(t.ranks.size());
  for (uint32_t r = 0; r < size; ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    const auto allocs = expect_n(c, r, Call::Win_allocate, 1);
    if (allocs.empty()) continue;
    const auto& wa = *allocs[0];
    const uint32_t w = wa.window;
    c.expect(w != 0 && wa.win_base != 0 && wa.win_size == 64 && wa.disp_unit == 8,
             where(r, wa) + ": window/base/size/disp_unit " + std::to_string(w) + "/" + std::to_string(wa.win_base) +
                 "/" + std::to_string(wa.win_size) + "/" + std::to_string(wa.disp_unit));
    const auto locks = expect_n(c, r, Call::Win_lock, 2);
    if (locks.size() == 2) {
      c.expect(locks[0]->lock_type == fmt::LockType::exclusive && locks[0]->peer == static_cast<int32_t>(r) &&
                   locks[0]->window == w,
               where(r, *locks[0]) + ": expected an exclusive lock of itself");
      c.expect(locks[1]->lock_type == fmt::LockType::shared, where(r, *locks[1]) + ": expected a shared lock");
    }
    const auto lock_all = expect_n(c, r, Call::Win_lock_all, 1);
    const auto unlock_all = expect_n(c, r, Call::Win_unlock_all, 1);
    const auto puts = expect_n(c, r, Call::Put, size - 1);
    const auto flushes = expect_n(c, r, Call::Win_flush, size - 1);
    if (lock_all.empty() || unlock_all.empty() || puts.size() != size - 1 || flushes.size() != size - 1) continue;
    c.expect(lock_all[0]->window == w && unlock_all[0]->window == w,
             "rank " + std::to_string(r) + ": lock_all/unlock_all on another window");
    std::size_t i = 0;
    for (uint32_t target = 0; target < size; ++target) {
      if (target == r) continue;
      const auto& p = *puts[i];
      const auto& f = *flushes[i];
      ++i;
      c.expect(p.window == w && p.peer == static_cast<int32_t>(target) && p.target_disp == r && p.datatype == k_long &&
                   p.target_datatype == k_long && p.count == 1,
               where(r, p) + ": window/target/disp/type " + std::to_string(p.window) + "/" + show(p.peer) + "/" +
                   std::to_string(p.target_disp) + "/" + std::to_string(p.datatype) + ", expected " +
                   std::to_string(w) + "/" + std::to_string(target) + "/" + std::to_string(r) + "/9");
      c.expect(f.window == w && f.peer == static_cast<int32_t>(target), where(r, f) + ": flush target " + show(f.peer));
      c.expect(lock_all[0]->seq < p.seq && p.seq < f.seq && f.seq < unlock_all[0]->seq,
               where(r, p) + ": lock_all < put < flush < unlock_all order broken");
    }
  }
}

void check_derived_types(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 2, "derived_types needs 2 ranks")) return;
  struct Want {
    const char* name;
    Call combiner;
    uint64_t size;
    Intervals bytes;
    std::vector<std::pair<uint32_t, uint64_t>> sig;
  };
  Intervals vec;
  for (int64_t k = 0; k < 100; ++k) vec.emplace_back(32 * k, 32 * k + 8);
  Intervals sub;
  for (int64_t row = 2; row < 6; ++row) sub.emplace_back((row * 8 + 1) * 4, (row * 8 + 1) * 4 + 12);
  const std::vector<Want> wants = {
      {"vector", Call::Type_vector, 800, vec, {{k_double, 100}}},
      {"indexed", Call::Type_indexed, 24, {{0, 8}, {20, 32}, {40, 44}}, {{k_int, 6}}},
      {"struct", Call::Type_create_struct, 15, {{0, 4}, {8, 19}}, {{k_int, 1}, {k_double, 1}, {k_char, 3}}},
      {"subarray", Call::Type_create_subarray, 48, sub, {{k_int, 12}}},
  };
  for (uint32_t r = 0; r < 2; ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    const auto xfers = expect_n(c, r, r == 0 ? Call::Send : Call::Recv, 4);
    if (xfers.size() != 4) continue;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto& e = *xfers[i];
      const auto& w = wants[i];
      const std::string what = where(r, e) + " (" + w.name + ")";
      c.expect(e.tag == static_cast<int32_t>(i + 1) && e.count == 1,
               what + ": tag/count " + show(e.tag) + "/" + std::to_string(e.count));
      if (!c.expect(e.datatype >= fmt::k_first_derived_id,
                    what + ": datatype " + std::to_string(e.datatype) + " is not a derived type id"))
        continue;
      const auto def = rank.datatypes.find(e.datatype);
      if (!c.expect(def != rank.datatypes.end(), what + ": no DatatypeDef " + std::to_string(e.datatype))) continue;
      const auto& d = def->second;
      c.expect(d.combiner == w.combiner, what + ": combiner " + str(d.combiner) + ", expected " + str(w.combiner));
      c.expect(d.size == w.size, what + ": size " + std::to_string(d.size) + ", expected " + std::to_string(w.size));
      // Committed before use: the def says so, or an MPI_Type_commit of it precedes.
      bool commit_seen = false;
      for (const auto* commit : events_of(rank, Call::Type_commit))
        commit_seen = commit_seen || (commit->datatype == e.datatype && commit->seq < e.seq);
      c.expect(d.committed || commit_seen, what + ": neither DatatypeDef.committed nor an MPI_Type_commit before use");
      if (!d.committed) c.note(what + ": DatatypeDef.committed is false (an MPI_Type_commit event precedes)");
      c.expect(!d.truncated, what + ": footprint truncated");
      const Intervals got = footprint(d.runs);
      c.expect(got == w.bytes, what + ": footprint " + show(got) + ", expected " + show(w.bytes));
      const auto sig = signature(d.signature);
      c.expect(sig == w.sig, what + ": signature " + show(sig) + ", expected " + show(w.sig));
      if (std::string_view(w.name) == "vector") {
        c.expect(d.runs.size() == 1 && d.runs[0].count == 100 && d.runs[0].stride == 32 && d.runs[0].length == 8,
                 what + ": a vector of 100 blocks must be one strided Run, found " + std::to_string(d.runs.size()) +
                     " runs");
        c.expect(d.lb == 0 && d.extent == 99 * 32 + 8,
                 what + ": lb/extent " + std::to_string(d.lb) + "/" + std::to_string(d.extent) + ", expected 0/3176");
      }
      if (std::string_view(w.name) == "subarray")
        c.expect(d.lb == 0 && d.extent == 256,
                 what + ": lb/extent " + std::to_string(d.lb) + "/" + std::to_string(d.extent) + ", expected 0/256");
    }
    // The constructor events name what they built.
    const auto vectors = expect_n(c, r, Call::Type_vector, 1);
    if (!vectors.empty())
      c.expect(vectors[0]->count == 100 && vectors[0]->datatype == k_double &&
                   vectors[0]->new_datatype == xfers[0]->datatype,
               where(r, *vectors[0]) + ": count/oldtype/new_datatype " + std::to_string(vectors[0]->count) + "/" +
                   std::to_string(vectors[0]->datatype) + "/" + std::to_string(vectors[0]->new_datatype));
    expect_n(c, r, Call::Type_commit, 4);
    expect_n(c, r, Call::Type_free, 4);
  }
}

void check_persistent(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 2, "persistent needs 2 ranks")) return;
  for (uint32_t r = 0; r < 2; ++r) {
    if (!t.ranks[r].present) continue;
    const int32_t peer = 1 - static_cast<int32_t>(r);
    const auto sinit = expect_n(c, r, Call::Send_init, 1);
    const auto rinit = expect_n(c, r, Call::Recv_init, 1);
    if (sinit.empty() || rinit.empty()) continue;
    const uint64_t a = sinit[0]->request, b = rinit[0]->request;
    c.expect(a != 0 && b != 0 && a != b,
             "rank " + std::to_string(r) + ": persistent request ids " + std::to_string(a) + "," + std::to_string(b));
    c.expect(sinit[0]->peer == peer && sinit[0]->tag == 5 && rinit[0]->peer == peer && rinit[0]->tag == 5,
             "rank " + std::to_string(r) + ": Send_init/Recv_init peer or tag wrong");
    const std::vector<uint64_t> both = {a, b};
    const auto starts = expect_n(c, r, Call::Startall, 5);
    for (const auto* s : starts)
      c.expect(s->requests == both, where(r, *s) + ": requests " + show(s->requests) + ", expected " + show(both));
    const auto waits = expect_n(c, r, Call::Waitall, 5);
    for (const auto* w : waits) {
      c.expect(w->requests == both, where(r, *w) + ": requests " + show(w->requests) + ", expected " + show(both));
      bool recv_seen = false;
      for (const auto& done : w->completed) {
        if (done.request != b) continue;
        recv_seen = true;
        c.expect(done.index == 1 && done.status.source == peer && done.status.tag == 5,
                 where(r, *w) + ": receive completion index/source/tag " + std::to_string(done.index) + "/" +
                     show(done.status.source) + "/" + show(done.status.tag));
      }
      c.expect(recv_seen, where(r, *w) + ": the persistent receive is not among the completed requests");
    }
    for (std::size_t i = 0; i < std::min(starts.size(), waits.size()); ++i)
      c.expect(starts[i]->seq < waits[i]->seq, "rank " + std::to_string(r) + ": Startall/Waitall out of order");
    const auto frees = expect_n(c, r, Call::Request_free, 2);
    if (frees.size() == 2)
      c.expect(frees[0]->request == a && frees[1]->request == b, "rank " + std::to_string(r) + ": Request_free ids " +
                                                                     std::to_string(frees[0]->request) + "," +
                                                                     std::to_string(frees[1]->request));
  }
}

// Add the tags of `e`'s completed receives to `tags`; expect each from rank 1.
void completed_tags(Checker& c, const fmt::Event& e, std::multiset<int32_t>& tags) {
  for (const auto& done : e.completed) {
    c.expect(done.index < e.requests.size() && e.requests[done.index] == done.request && done.request != 0,
             where(0, e) + ": completed request " + std::to_string(done.request) + " at index " +
                 std::to_string(done.index) + " is not among " + show(e.requests));
    c.expect(done.status.source == 1, where(0, e) + ": completed receive from " + show(done.status.source));
    if (done.status.tag) tags.insert(*done.status.tag);
  }
}

// Expect the tags completed by `events` (each over `n` requests, or any
// number when n is 0) to be first .. first + count - 1, each once; a poll's
// flag true exactly where it completed something.
void expect_tags(Checker& c, const std::vector<const fmt::Event*>& events, std::size_t n, int32_t first, int32_t count,
                 bool poll) {
  std::multiset<int32_t> tags, wanted;
  for (int32_t t = first; t < first + count; ++t) wanted.insert(t);
  for (const auto* e : events) {
    if (n) c.expect(e->requests.size() == n, where(0, *e) + ": requests " + show(e->requests));
    completed_tags(c, *e, tags);
    if (poll)
      c.expect(e->flag == !e->completed.empty(),
               where(0, *e) + ": flag " + show(e->flag) + " with " + std::to_string(e->completed.size()) + " completed");
  }
  c.expect(tags == wanted, "rank 0: " + (events.empty() ? std::string("no") : str(events[0]->call)) +
                               " events completed tags other than " + std::to_string(first) + ".." +
                               std::to_string(first + count - 1));
}

void check_any_some(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 2, "any_some needs 2 ranks") || !t.ranks[0].present) return;
  constexpr std::size_t many = 17;  // more requests than the tracer's fast path holds
  const auto waitany = expect_n(c, 0, Call::Waitany, 4);
  if (waitany.size() == 4) {
    expect_tags(c, {waitany[0], waitany[1], waitany[2]}, 3, 1, 3, false);
    for (int k = 0; k < 3; ++k)
      c.expect(waitany[k]->completed.size() == 1, where(0, *waitany[k]) + ": one request completed expected");
    c.expect(waitany[3]->requests == std::vector<uint64_t>{0, 0} && waitany[3]->completed.empty(),
             where(0, *waitany[3]) + ": null requests " + show(waitany[3]->requests) + ", nothing completed expected");
  }
  const auto testany = events_of(t.ranks[0], Call::Testany);
  expect_tags(c, testany, 2, 4, 2, true);
  c.expect(testany.size() <= 16, "rank 0: " + std::to_string(testany.size()) + " Testany events: not folded");
  c.expect(std::any_of(testany.begin(), testany.end(), [](const fmt::Event* e) { return e->repeat > 1; }),
           "rank 0: no folded Testany (repeat > 1)");
  std::vector<const fmt::Event*> two, all;
  for (const auto* e : events_of(t.ranks[0], Call::Waitsome)) (e->requests.size() == many ? all : two).push_back(e);
  expect_tags(c, two, 2, 6, 2, false);
  expect_tags(c, all, many, 100, static_cast<int32_t>(many), false);
  c.expect(!all.empty(), "rank 0: no Waitsome of " + std::to_string(many) + " requests");
  for (const auto* e : two) c.expect(!e->completed.empty(), where(0, *e) + ": nothing completed");
  const auto testsome = events_of(t.ranks[0], Call::Testsome);
  expect_tags(c, testsome, 2, 8, 2, true);
  c.expect(std::any_of(testsome.begin(), testsome.end(), [](const fmt::Event* e) { return e->repeat > 1; }),
           "rank 0: no folded Testsome (repeat > 1)");
  for (const auto* e : events_of(t.ranks[0], {Call::Waitany, Call::Waitsome}))
    c.expect(!e->pending && e->rc == 0, where(0, *e) + ": pending or failed");
  if (t.ranks[1].present) expect_n(c, 1, Call::Send, 9 + many);
  expect_n(c, 0, Call::Send, 2);  // "about to poll", twice
}

// Return the poll count rank `rank` printed, from the captured output.
std::optional<uint64_t> printed_polls(const std::filesystem::path& output, uint32_t rank) {
  std::ifstream in(output);
  std::string line;
  static const std::regex pattern(R"(e2e polling: rank (\d+) polls (\d+))");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, pattern) && std::stoul(m[1]) == rank) return std::stoull(m[2]);
  }
  return std::nullopt;
}

void check_polling(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 2, "polling needs 2 ranks")) return;
  for (uint32_t r = 0; r < 2; ++r) {
    if (!t.ranks[r].present) continue;
    const Call call = r == 0 ? Call::Test : Call::Iprobe;
    const auto polls = events_of(t.ranks[r], call);
    uint64_t total = 0;
    uint32_t max_repeat = 0;
    for (const auto* e : polls) {
      total += repeats(*e);
      max_repeat = std::max(max_repeat, e->repeat);
    }
    const std::string rs = "rank " + std::to_string(r) + ": ";
    c.note(rs + std::to_string(polls.size()) + " " + str(call) + " events for " + std::to_string(total) + " calls");
    if (!c.expect(!polls.empty(), rs + "no " + str(call) + " events")) continue;
    c.expect(polls.size() <= 16,
             rs + std::to_string(polls.size()) + " " + str(call) + " events: the spin loop is not folded");
    c.expect(max_repeat > 1, rs + "no " + str(call) + " event with repeat > 1");
    if (const auto printed = printed_polls(c.options().output, r))
      c.expect(total == *printed, rs + "folded " + str(call) + " events account for " + std::to_string(total) +
                                      " calls, the program made " + std::to_string(*printed));
    else if (!c.options().output.empty())
      c.expect(false, rs + "no poll count in " + c.options().output.string());
    const auto& last = *polls.back();
    c.expect(last.flag == true, where(r, last) + ": last poll's flag is " +
                                    (last.flag ? std::string(*last.flag ? "true" : "false") : "absent"));
    for (std::size_t i = 0; i + 1 < polls.size(); ++i)
      c.expect(polls[i]->flag != true, where(r, *polls[i]) + ": a successful poll before the last");
    if (r == 0) {
      c.expect(last.completed.size() == 1 && last.completed[0].status.source == 1 && last.completed[0].status.tag == 7,
               where(r, last) + ": completed receive with source 1 tag 7 expected");
    } else {
      c.expect(last.peer == 0 && last.tag == 8,
               where(r, last) + ": source/tag " + show(last.peer) + "/" + show(last.tag));
      c.expect(last.status.source == 0 && last.status.tag == 8,
               where(r, last) + ": status source/tag " + show(last.status.source) + "/" + show(last.status.tag));
    }
  }
}

void check_hang(Checker& c) {
  check_common(c, false);
  const auto& t = c.trace();
  c.expect(!t.complete(), "a killed run reads as complete");
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present || rank.events.empty()) continue;
    c.expect(!rank.finalized(), "rank " + std::to_string(r) + ": says it reached MPI_Finalize");
    const auto& last = rank.events.back();
    c.expect(last.call == Call::Recv && last.pending, where(r, last) + ": last event should be a pending MPI_Recv" +
                                                          (last.pending ? "" : " (it is not pending)"));
    c.expect(last.peer == 1 - static_cast<int32_t>(r) && last.tag == 3,
             where(r, last) + ": source/tag " + show(last.peer) + "/" + show(last.tag));
    const auto barriers = events_of(rank, Call::Barrier);
    c.expect(barriers.size() == 1 && !barriers[0]->pending,
             "rank " + std::to_string(r) + ": the barrier before the hang is missing or pending");
    if (rank.end)
      c.note("rank " + std::to_string(r) + ": termination kind " + std::to_string(static_cast<int>(rank.end->kind)) +
             " signal " + std::to_string(rank.end->signal));
    else
      c.note("rank " + std::to_string(r) + ": no termination record");
  }
}

enum class Crash { segv, sigkill };

void check_crash(Checker& c, Crash crash) {
  check_common(c, false);
  const auto& t = c.trace();
  c.expect(!t.complete(), "a crashed run reads as complete");
  if (t.ranks.size() != 2) return;
  for (uint32_t r = 0; r < 2; ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    const auto exchanges = events_of(rank, Call::Sendrecv);
    c.expect(exchanges.size() == 3, "rank " + std::to_string(r) + ": " + std::to_string(exchanges.size()) +
                                        " Sendrecv events readable, expected 3");
    for (const auto* e : exchanges) c.expect(!e->pending, where(r, *e) + ": completed exchange reads as pending");
  }
  const auto& r1 = t.ranks[1];
  if (r1.present && !r1.events.empty()) {
    c.expect(!r1.finalized(), "rank 1 crashed but says it reached MPI_Finalize");
    const auto& last = r1.events.back();
    c.expect(last.call == Call::Send && last.tag == 9, where(1, last) + ": last event should be the MPI_Send of tag 9");
    if (crash == Crash::sigkill) {
      // Nothing runs at SIGKILL: the trace just stops after the last event.
      c.expect(!r1.end || r1.end->kind != fmt::TerminationKind::finalized, "rank 1: killed but reads as finalized");
    } else if (r1.end) {
      c.expect(r1.end->kind == fmt::TerminationKind::signal && r1.end->signal == 11,
               "rank 1: termination kind " + std::to_string(static_cast<int>(r1.end->kind)) + " signal " +
                   std::to_string(r1.end->signal) + ", expected SIGNAL 11");
    } else {
      c.note("rank 1: no termination record (tracer did not record the signal)");
    }
  }
  const auto& r0 = t.ranks[0];
  if (r0.present) {
    const auto recvs = events_of(r0, Call::Recv);
    c.expect(recvs.size() == 1 && recvs[0]->tag == 9 && !recvs[0]->pending, "rank 0: the MPI_Recv of tag 9 is missing");
  }
}

// The deadlock's fixed twin: the same exchange completes.
void check_hang_fixed(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    if (!t.ranks[r].present) continue;
    const auto xfers = events_of(t.ranks[r], {Call::Send, Call::Recv});
    if (!c.expect(xfers.size() == 2, "rank " + std::to_string(r) + ": expected one MPI_Send and one MPI_Recv"))
      continue;
    const Call first = r == 0 ? Call::Send : Call::Recv;
    c.expect(xfers[0]->call == first, where(r, *xfers[0]) + ": expected " + str(first) + " first");
    for (const auto* e : xfers)
      c.expect(e->peer == 1 - static_cast<int32_t>(r) && e->tag == 3,
               where(r, *e) + ": peer/tag " + show(e->peer) + "/" + show(e->tag));
  }
}

void check_segv(Checker& c) { check_crash(c, Crash::segv); }
void check_sigkill(Checker& c) { check_crash(c, Crash::sigkill); }

void check_abort(Checker& c) {
  check_common(c, false);
  const auto& t = c.trace();
  c.expect(!t.complete(), "an aborted run reads as complete");
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    c.expect(!rank.finalized(), "rank " + std::to_string(r) + ": says it reached MPI_Finalize");
    const auto bcasts = events_of(rank, Call::Bcast);
    c.expect(bcasts.size() == 1 && !bcasts[0]->pending, "rank " + std::to_string(r) + ": the MPI_Bcast is missing");
  }
  if (t.ranks.size() < 2 || !t.ranks[1].present || t.ranks[1].events.empty()) return;
  const auto& r1 = t.ranks[1];
  const auto& last = r1.events.back();
  c.expect(last.call == Call::Abort && last.comm == 0 && last.count == 3,
           where(1, last) + ": last event should be MPI_Abort(MPI_COMM_WORLD, 3), count " + std::to_string(last.count));
  if (r1.end)
    c.expect(r1.end->kind == fmt::TerminationKind::aborted,
             "rank 1: termination kind " + std::to_string(static_cast<int>(r1.end->kind)) + ", expected ABORTED");
  else
    c.note("rank 1: no termination record");
}

void check_threads(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 2, "threads needs 2 ranks")) return;
  for (uint32_t r = 0; r < 2; ++r) {
    const auto& rank = t.ranks[r];
    if (!rank.present) continue;
    const std::string rs = "rank " + std::to_string(r) + ": ";
    const auto inits = expect_n(c, r, Call::Init_thread, 1);
    c.expect(rank.header.thread_level == 3, rs + "header thread_level " + std::to_string(rank.header.thread_level));
    const auto dups = expect_n(c, r, Call::Comm_dup, 1);
    if (dups.empty()) continue;
    const uint32_t comm = dups[0]->new_comm;
    c.expect(comm >= 2, rs + "Comm_dup new_comm " + std::to_string(comm));
    const auto p2p = events_of(rank, {Call::Send, Call::Recv});
    c.expect(p2p.size() == 200, rs + std::to_string(p2p.size()) + " Send/Recv events, expected 200");
    std::map<uint32_t, std::map<int32_t, int>> per_thread_tag;
    for (const auto* e : p2p) {
      c.expect(e->comm == comm,
               where(r, *e) + ": comm " + std::to_string(e->comm) + ", expected " + std::to_string(comm));
      c.expect(e->thread != 0, where(r, *e) + ": recorded on thread 0, but the worker threads made it");
      if (e->tag) ++per_thread_tag[e->thread][*e->tag];
    }
    // Each worker thread uses one tag, 50 sends and 50 receives.
    c.expect(per_thread_tag.size() == 2,
             rs + std::to_string(per_thread_tag.size()) + " distinct threads made p2p calls, expected 2");
    for (const auto& [thread, tags] : per_thread_tag)
      c.expect(tags.size() == 1 && tags.begin()->second == 100,
               rs + "thread " + std::to_string(thread) + " made calls on " + std::to_string(tags.size()) + " tags");
  }
}

void check_annotate(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    if (!t.ranks[r].present) continue;
    const auto writes = expect_n(c, r, Call::Annotate_write, 1);
    const auto reads = expect_n(c, r, Call::Annotate_read, 1);
    const auto exchanges = expect_n(c, r, Call::Sendrecv, 1);
    if (writes.size() == 1) {
      c.expect(writes[0]->buf != 0 && writes[0]->size == 256, where(r, *writes[0]) + ": buf/size " +
                                                                  std::to_string(writes[0]->buf) + "/" +
                                                                  std::to_string(writes[0]->size));
      expect_site(c, r, *writes[0], "annotate_write");
      if (exchanges.size() == 1) {
        c.expect(writes[0]->buf == exchanges[0]->buf, where(r, *writes[0]) + ": address differs from the send buffer");
        c.expect(writes[0]->seq < exchanges[0]->seq, where(r, *writes[0]) + ": out of order");
      }
    }
    if (reads.size() == 1) {
      c.expect(
          reads[0]->buf != 0 && reads[0]->size == 64,
          where(r, *reads[0]) + ": buf/size " + std::to_string(reads[0]->buf) + "/" + std::to_string(reads[0]->size));
      expect_site(c, r, *reads[0], "annotate_read");
      if (exchanges.size() == 1)
        c.expect(reads[0]->buf == exchanges[0]->recv_buf,
                 where(r, *reads[0]) + ": address differs from the receive buffer");
    }
  }
}

void check_own_protobuf(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  if (!c.expect(t.ranks.size() == 2, "own_protobuf needs 2 ranks")) return;
  if (t.ranks[0].present) {
    const auto sends = expect_n(c, 0, Call::Send, 1);
    if (!sends.empty())
      c.expect(sends[0]->datatype == k_byte && sends[0]->count > 20, where(0, *sends[0]) + ": datatype/count " +
                                                                         std::to_string(sends[0]->datatype) + "/" +
                                                                         std::to_string(sends[0]->count));
  }
  if (t.ranks[1].present) {
    const auto probes = expect_n(c, 1, Call::Probe, 1);
    if (!probes.empty())
      c.expect(probes[0]->status.source == 0 && probes[0]->status.tag == 1, where(1, *probes[0]) + ": status");
    expect_n(c, 1, Call::Recv, 1);
  }
}

// CUDA events (hand-written or from the CUPTI tracer) refer to what the
// trace defined before: streams used were created (0 and 1 always exist),
// CUDA events waited for were recorded, kernels name a call site, copies
// and allocations have sizes.
void check_cuda(Checker& c) {
  check_common(c, true);
  const auto& t = c.trace();
  uint64_t cuda_events = 0;
  for (uint32_t r = 0; r < t.ranks.size(); ++r) {
    if (!t.ranks[r].present) continue;
    std::set<uint64_t> streams = {fmt::k_legacy_stream, fmt::k_per_thread_stream};
    std::set<uint64_t> recorded;
    for (const fmt::Event& e : t.ranks[r].events) {
      if (fmt::call_family(e.call) != fmt::Family::cuda) continue;
      ++cuda_events;
      switch (e.call) {
        case Call::cudaStreamCreate: case Call::cudaStreamCreateWithFlags:
          c.expect(streams.insert(e.stream).second, where(r, e) + ": stream " + std::to_string(e.stream) + " created twice");
          break;
        case Call::cudaEventRecord:
          recorded.insert(e.cuda_event);
          c.expect(streams.count(e.stream) != 0, where(r, e) + ": unknown stream " + std::to_string(e.stream));
          break;
        case Call::cudaEventSynchronize: case Call::cudaEventQuery: case Call::cudaStreamWaitEvent:
          c.expect(recorded.count(e.cuda_event) != 0, where(r, e) + ": CUDA event " + std::to_string(e.cuda_event) +
                                                         " never recorded before");
          break;
        case Call::cudaLaunchKernel:
          c.expect(e.kernel != 0 && t.ranks[r].site(e.kernel) != nullptr, where(r, e) + ": kernel without a call site");
          c.expect(streams.count(e.stream) != 0, where(r, e) + ": unknown stream " + std::to_string(e.stream));
          break;
        case Call::cudaMalloc: case Call::cudaMallocManaged: case Call::cudaMallocHost: case Call::cudaHostAlloc:
        case Call::cudaMemcpy: case Call::cudaMemcpyAsync: case Call::cudaMemset: case Call::cudaMemsetAsync:
          c.expect(e.size != 0 && e.buf != 0, where(r, e) + ": no buffer or size");
          c.expect(streams.count(e.stream) != 0, where(r, e) + ": unknown stream " + std::to_string(e.stream));
          break;
        default: break;
      }
    }
  }
  c.expect(cuda_events > 0, "no CUDA events");
}

const std::map<std::string, std::function<void(Checker&)>>& cases() {
  static const std::map<std::string, std::function<void(Checker&)>> table = {
      {"p2p_wildcard", check_p2p_wildcard},
      {"call_sites", check_call_sites},
      {"coll_split", check_coll_split},
      {"rma_fence", check_rma_fence},
      {"rma_lock_all", check_rma_lock_all},
      {"rma_accumulate", check_rma_accumulate},
      {"rma_wildcard", check_rma_wildcard},
      {"derived_types", check_derived_types},
      {"persistent", check_persistent},
      {"polling", check_polling},
      {"any_some", check_any_some},
      {"hang", check_hang},
      {"hang_fixed", check_hang_fixed},
      {"segv", check_segv},
      {"sigkill", check_sigkill},
      {"abort", check_abort},
      {"threads", check_threads},
      {"annotate", check_annotate},
      {"own_protobuf", check_own_protobuf},
      {"cuda", check_cuda},
  };
  return table;
}

int usage() {
  std::fprintf(stderr, "usage: e2e_check CASE TRACE_DIR [--np N] [--source FILE] [--output FILE]\ncases:");
  for (const auto& [name, fn] : cases()) std::fprintf(stderr, " %s", name.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  Options options;
  options.name = argv[1];
  options.dir = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--np")
      options.np = std::atoi(argv[i + 1]);
    else if (flag == "--source")
      options.source = argv[i + 1];
    else if (flag == "--output")
      options.output = argv[i + 1];
    else
      return usage();
  }
  const auto found = cases().find(options.name);
  if (found == cases().end()) return usage();

  fmt::Trace trace;
  try {
    trace = fmt::read_trace(options.dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "e2e_check: %s: FAIL: cannot read %s: %s\nSUMMARY: e2e_check %s: unreadable trace\n",
                 options.name.c_str(), options.dir.c_str(), e.what(), options.name.c_str());
    return 1;
  }
  Checker checker(options, trace);
  found->second(checker);
  uint64_t events = 0;
  for (const auto& rank : trace.ranks) events += rank.events.size();
  if (checker.failures() == 0) {
    std::printf("SUMMARY: e2e_check %s: ok (%zu ranks, %llu events)\n", options.name.c_str(), trace.ranks.size(),
                static_cast<unsigned long long>(events));
    return 0;
  }
  std::printf("SUMMARY: e2e_check %s: %d failed expectations (%zu ranks, %llu events)\n", options.name.c_str(),
              checker.failures(), trace.ranks.size(), static_cast<unsigned long long>(events));
  return 1;
}
