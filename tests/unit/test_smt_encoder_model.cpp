// The SMT model of real (written and analyzed) traces with MPI one-sided
// synchronization: fences as barriers over a window's members, post/start/
// complete/wait as messages, what blocks and what does not, pending calls,
// MPI_Win_test, and solver answers that respect them (can-precede, a
// deadlock that only post/start/complete/wait cause).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/core.h>

#include "analyzer/comms.hpp"
#include "analyzer/happens_before.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/wire.hpp"
#include "analyzer_trace_builder.hpp"
#include "smt_model_check.hpp"
#include "smt_encoder/match_pairs.hpp"
#include "smt_encoder/model.hpp"
#include "smt_encoder/parts.hpp"
#include "smt_encoder/prove.hpp"
#include "smt_encoder/solve.hpp"

namespace {

using namespace smtrace::test;
namespace smt = smtrace::smt;
using smt::k_none;
using smt::OpKind;

constexpr uint32_t k_win = 1;       // the window's rank-local id on every rank
constexpr uint64_t k_base = 0x10000;
constexpr uint32_t k_group = 40;    // first rank-local group id of group()

// A trace of `n` ranks that all created window k_win over MPI_COMM_WORLD.
struct Rma {
  Builder b;
  uint32_t groups = 0;

  explicit Rma(uint32_t n) : b(n) {
    for (uint32_t r = 0; r < n; ++r) b.win_create(r, k_win, k_base, 64);
  }
  // Return the seq of `call` by `rank` on the window, with `peers` as its group when given.
  uint64_t sync(Call call, uint32_t rank, std::vector<uint32_t> peers = {}) {
    tf::Event& e = b.win_sync(call, rank, k_win);
    if (!peers.empty()) {
      tf::CommDef g;
      g.id = k_group + groups++;
      g.world_ranks = std::move(peers);
      g.is_group = true;
      b.trace().ranks[rank].comms.emplace(g.id, g);
      e.group = g.id;
    }
    return e.seq;
  }
  // Return the seq of a blocking MPI_Send of `rank` to `peer` (tag 0,
  // MPI_COMM_WORLD), or with `call` MPI_Recv, of its receive that took peer's message.
  uint64_t p2p(uint32_t rank, uint32_t peer, Call call = Call::Send) {
    tf::Event& e = b.add(call, rank);
    e.comm = 0;
    e.peer = static_cast<int32_t>(peer);
    e.tag = 0;
    e.count = 1;
    e.datatype = k_int;
    if (call == Call::Recv) {
      e.status.source = static_cast<int32_t>(peer);
      e.status.tag = 0;
    }
    return e.seq;
  }
  uint64_t send(uint32_t rank, uint32_t dest) { return p2p(rank, dest); }
  uint64_t recv(uint32_t rank, uint32_t source) { return p2p(rank, source, Call::Recv); }
  // Add MPI_Finalize to the finalized ranks (once).
  void finish() {
    for (auto& rank : b.trace().ranks) {
      if (rank.end) b.add(Call::Finalize, rank.header.rank);
    }
  }
  // Return the model of the trace (finished first).
  smt::Model model() {
    finish();
    return model_of(b.trace());
  }
};

// Return the index of the event of `rank` with seq `seq` (k_none when not in the model).
uint32_t index_of(const smt::Model& m, uint32_t rank, uint64_t seq) {
  const auto& events = m.ranks[rank].events;
  for (uint32_t k = 0; k < events.size(); ++k) {
    if (m.ranks[rank].seq(k) == seq) return k;
  }
  return k_none;
}

// Return the ops posted at event `seq` of `rank`.
std::vector<smt::Op> posted(const smt::Model& m, uint32_t rank, uint64_t seq) {
  std::vector<smt::Op> out;
  const uint32_t k = index_of(m, rank, seq);
  REQUIRE(k != k_none);
  for (uint32_t op : m.posts(rank, k)) out.push_back(m.ops[op]);
  return out;
}

uint32_t op_at(const smt::Model& m, uint32_t rank, uint64_t seq, std::size_t nth = 0) {
  const uint32_t k = index_of(m, rank, seq);
  REQUIRE(k != k_none);
  REQUIRE(nth < m.posts(rank, k).size());
  return m.posts(rank, k)[nth];
}

smt::SolveOptions quick() {
  smt::SolveOptions o;
  o.timeout_s = 20;
  o.threads = 1;
  return o;
}

smt::RawQuestion precede(const smt::Model& m, uint32_t a_rank, uint64_t a_seq, uint32_t b_rank, uint64_t b_seq) {
  smt::RawQuestion q;
  q.kind = smt::QuestionKind::can_precede;
  q.a_rank = a_rank;
  q.a_event = index_of(m, a_rank, a_seq);
  q.b_rank = b_rank;
  q.b_event = index_of(m, b_rank, b_seq);
  REQUIRE(q.a_event != k_none);
  REQUIRE(q.b_event != k_none);
  return q;
}

// Return the verdict of one can-precede question (a sat answer has a replayed witness).
smt::Verdict ask(const smt::Model& m, const smt::RawQuestion& q) {
  const smt::Solution sol = smt::solve(m, {q}, quick());
  REQUIRE(sol.answers.size() == 1);
  if (sol.answers[0].verdict == smt::Verdict::sat) {
    REQUIRE(sol.answers[0].witness);
    CHECK(sol.answers[0].witness->replayed);
  }
  return sol.answers[0].verdict;
}

}  // namespace

TEST_CASE("smt model: fences are barriers over the window's members") {
  Rma t(3);
  std::vector<uint64_t> first, second;
  for (uint32_t r = 0; r < 3; ++r) first.push_back(t.sync(Call::Win_fence, r));
  for (uint32_t r = 0; r < 3; ++r) second.push_back(t.sync(Call::Win_fence, r));
  t.b.win_sync(Call::Win_lock, 0, k_win, 1, tf::LockType::shared);   // orders nothing: left out
  t.b.win_sync(Call::Win_unlock, 0, k_win, 1);
  const smt::Model m = t.model();

  REQUIRE(m.instances.size() == 2);
  for (uint32_t k = 0; k < 2; ++k) {
    const smt::Instance& inst = m.instances[k];
    CHECK(inst.kind == smt::CollKind::full);
    CHECK(inst.call == Call::Win_fence);
    CHECK(inst.position == k);
    CHECK(m.comm_name(inst.comm) == "window 1 (fence)");
    REQUIRE(inst.members.size() == 3);
    for (uint32_t r = 0; r < 3; ++r) {
      const uint32_t op = inst.members[r];
      REQUIRE(op != k_none);
      CHECK(m.ops[op].kind == OpKind::coll);
      CHECK(m.ops[op].rank == r);
      CHECK(m.ops[op].member == r);
      CHECK(m.post_ref(op).seq == (k == 0 ? first[r] : second[r]));
      CHECK(m.ops[op].done == m.ops[op].post);
    }
  }
  for (uint32_t r = 0; r < 3; ++r) {
    REQUIRE(m.ranks[r].events.size() == 2);  // the fences only
    for (const smt::Event& e : m.ranks[r].events) {
      CHECK(e.call == Call::Win_fence);
      CHECK(e.may_block);
    }
    CHECK(m.ranks[r].limit == 4);
  }
  CHECK(smt::op_text(m, m.instances[0].members[1]) == fmt::format("1:{} MPI_Win_fence (window 1)", first[1]));

  // A fence of every rank is a point every rank passes: a cut.
  const std::vector<smt::Cut> cuts = smt::find_cuts(m);
  REQUIRE(cuts.size() == 2);
  CHECK(cuts[0].instance == 0);
  CHECK(cuts[1].instance == 1);
  CHECK(cuts[0].event == std::vector<uint32_t>{0, 0, 0});
}

TEST_CASE("smt model: fences cut the trace into parts") {
  // Two rounds of one message from rank 0 to rank 1, each closed by a fence.
  Rma t(2);
  for (int round = 0; round < 2; ++round) {
    t.send(0, 1);
    t.recv(1, 0);
    for (uint32_t r = 0; r < 2; ++r) t.sync(Call::Win_fence, r);
  }
  const smt::Model m = t.model();
  const std::vector<smt::Cut> cuts = smt::find_cuts(m);
  REQUIRE(cuts.size() == 2);
  const smt::Channels channels(m);
  const smt::MatchPairs pairs = smt::match_pairs(m, channels, cuts);
  const std::vector<smt::Part> parts = smt::split(m, cuts, pairs);
  CHECK(parts.size() == 2);  // a round each; nothing after the last fence
}

TEST_CASE("smt model: post/start/complete/wait are messages without a choice") {
  Rma t(3);
  // Rank 0 exposes the window to ranks 1 and 2; each accesses it.
  const uint64_t post = t.sync(Call::Win_post, 0, {1, 2});
  uint64_t start[3], complete[3];
  for (uint32_t o : {1u, 2u}) {
    start[o] = t.sync(Call::Win_start, o, {0});
    t.b.rma(Call::Put, o, k_win, 0, 0x30000, 1, 4 * o);
    complete[o] = t.sync(Call::Win_complete, o);
  }
  const uint64_t wait = t.sync(Call::Win_wait, 0);
  const smt::Model m = t.model();

  const uint32_t pscw = m.ops[op_at(m, 0, post)].comm;
  CHECK(m.comm_name(pscw) == "window 1 (post/start/complete/wait)");
  const std::vector<smt::Op> sends = posted(m, 0, post);
  REQUIRE(sends.size() == 2);
  for (uint32_t i = 0; i < 2; ++i) {
    CHECK(sends[i].kind == OpKind::send);
    CHECK(sends[i].mode == smt::SendMode::buffered);
    CHECK(sends[i].peer == static_cast<int32_t>(i + 1));
    CHECK(sends[i].comm == pscw);
  }
  const std::vector<smt::Op> waits = posted(m, 0, wait);
  REQUIRE(waits.size() == 2);
  for (uint32_t i = 0; i < 2; ++i) {
    CHECK(waits[i].kind == OpKind::recv);
    CHECK(waits[i].peer == static_cast<int32_t>(i + 1));
    CHECK(waits[i].done == waits[i].post);
    REQUIRE(waits[i].recorded != k_none);
    CHECK(m.post_ref(waits[i].recorded).rank == i + 1);
    CHECK(m.post_ref(waits[i].recorded).seq == complete[i + 1]);
  }
  for (uint32_t o : {1u, 2u}) {
    const std::vector<smt::Op> s = posted(m, o, start[o]);
    REQUIRE(s.size() == 1);
    CHECK(s[0].kind == OpKind::recv);
    CHECK(s[0].peer == 0);
    CHECK(s[0].done == s[0].post);
    CHECK(m.post_ref(s[0].recorded).seq == post);
    const std::vector<smt::Op> c = posted(m, o, complete[o]);
    REQUIRE(c.size() == 1);
    CHECK(c[0].kind == OpKind::send);
    CHECK(c[0].mode == smt::SendMode::buffered);
    CHECK(c[0].peer == 0);
    CHECK(c[0].tag != s[0].tag);  // a complete is never taken for a post
    CHECK(m.ranks[o].events.size() == 2);  // the Put orders nothing
    CHECK(m.event(o, index_of(m, o, start[o])).may_block);
    CHECK_FALSE(m.event(o, index_of(m, o, complete[o])).may_block);
  }
  CHECK_FALSE(m.event(0, index_of(m, 0, post)).may_block);
  CHECK(m.event(0, index_of(m, 0, wait)).may_block);
  CHECK(m.instances.empty());
  CHECK(smt::op_text(m, op_at(m, 0, post, 1)) == fmt::format("0:{} MPI_Win_post to rank 2 (window 1)", post));
  CHECK(smt::op_text(m, op_at(m, 1, start[1])) == fmt::format("1:{} MPI_Win_start from rank 0 (window 1)", start[1]));

  // No receive has a choice: no races, and the recorded run is the only one.
  const smt::Solution sol = smt::solve(m, {}, quick());
  CHECK(sol.races.empty());
  CHECK(sol.deadlocks.empty());
  CHECK(sol.unknown == 0);
  CHECK(ask(m, precede(m, 1, start[1], 0, post)) == smt::Verdict::unsat);     // start returns after the post
  CHECK(ask(m, precede(m, 0, wait, 2, complete[2])) == smt::Verdict::unsat);  // wait returns after both completes
  CHECK(ask(m, precede(m, 0, wait, 1, complete[1])) == smt::Verdict::unsat);
  CHECK(ask(m, precede(m, 1, complete[1], 2, start[2])) == smt::Verdict::sat);  // origins are independent
}

TEST_CASE("smt solve: a fence orders what follows it after the other ranks' fences") {
  // Rank 0: fence, send to 1. Rank 1: fence, receive from 0.
  Rma t(2);
  const uint64_t fence0 = t.sync(Call::Win_fence, 0);
  const uint64_t send = t.send(0, 1);
  const uint64_t fence1 = t.sync(Call::Win_fence, 1);
  t.recv(1, 0);
  const smt::Model m = t.model();
  REQUIRE(m.instances.size() == 1);

  // Can rank 0's send (after its fence) return before rank 1 calls its fence?
  const smt::RawQuestion q = precede(m, 0, send, 1, fence1);
  CHECK(ask(m, q) == smt::Verdict::unsat);
  CHECK(ask(m, precede(m, 0, fence0, 1, fence1)) == smt::Verdict::unsat);

  // The same trace without the fences' synchronization: it can.
  smt::Model loose = m;
  for (smt::Op& op : loose.ops) {
    if (op.kind == smt::OpKind::coll) op.instance = k_none;
  }
  loose.instances.clear();
  CHECK(ask(loose, q) == smt::Verdict::sat);

  // The unsat explanation names the fence readably.
  const smt::Solution sol = smt::solve(m, {q}, quick());
  REQUIRE(sol.answers.size() == 1);
  std::string why;
  for (const std::string& line : sol.answers[0].explanation) why += line + "\n";
  CAPTURE(why);
  CHECK(why.find("MPI_Win_fence number 0 on window 1 (fence)") != std::string::npos);
}

TEST_CASE("smt solve: waiting at MPI_Win_start for a post that follows a receive deadlocks") {
  // Rank 0 starts an access epoch to rank 1, then sends to it; rank 1
  // receives first and posts after. The run completed (its MPI_Win_start
  // did not wait for the post), but MPI allows it to wait: then neither
  // rank ever goes on.
  Rma t(2);
  const uint64_t start = t.sync(Call::Win_start, 0, {1});
  t.send(0, 1);
  t.sync(Call::Win_complete, 0);
  const uint64_t recv = t.recv(1, 0);
  t.sync(Call::Win_post, 1, {0});
  t.sync(Call::Win_wait, 1);
  const smt::Model m = t.model();

  smt::SolveOptions o = quick();
  const smt::Solution sol = smt::solve(m, {}, o);
  REQUIRE(sol.deadlocks.size() == 1);
  const smt::RawWitness& w = sol.deadlocks[0];
  CHECK(w.replayed);
  REQUIRE(w.cycle.size() == 2);
  std::vector<std::pair<uint32_t, uint64_t>> blocked;
  for (const smt::RawBlocked& b : w.cycle) blocked.emplace_back(b.rank, m.ref(b.rank, b.event).seq);
  std::sort(blocked.begin(), blocked.end());
  CHECK(blocked == std::vector<std::pair<uint32_t, uint64_t>>{{0, start}, {1, recv}});
  for (const smt::RawBlocked& b : w.cycle) CHECK(b.waits_for == std::vector<uint32_t>{1 - b.rank});

  // The same through prove() and the text report: no tag or communicator
  // of the model's own messages shows.
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() / ("smtrace-unit-smt-model-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter++));
  fs::remove_all(dir);
  tf::write_trace(t.b.trace(), dir);
  smt::ProveOptions po;
  po.threads = 1;
  po.smt_timeout_s = 20;
  const smt::ProveResult result = smt::prove(dir, po);
  fs::remove_all(dir);
  const std::string text = smt::render_text(result);
  CAPTURE(text);
  CHECK(text.find("potential-deadlock") != std::string::npos);
  CHECK(text.find("MPI_Win_start") != std::string::npos);
  CHECK(text.find("post/start/complete/wait") == std::string::npos);
  CHECK(text.find("tag") == std::string::npos);
}

TEST_CASE("smt model: pending RMA synchronization calls and MPI_Win_test") {
  SUBCASE("a rank stopped inside MPI_Win_wait") {
    Rma t(2);
    t.sync(Call::Win_post, 0, {1});
    const uint64_t wait = t.sync(Call::Win_wait, 0);
    t.b.trace().ranks[0].events.back().pending = true;
    t.b.unfinalize(0);
    t.sync(Call::Win_start, 1, {0});
    t.sync(Call::Win_fence, 1);  // a later fence of rank 1's own: rank 0 never gets there
    const smt::Model m = t.model();
    const uint32_t k = index_of(m, 0, wait);
    REQUIRE(k == 1);
    CHECK(m.ranks[0].limit == 2 * k + 1);
    const std::vector<smt::Op> recv = posted(m, 0, wait);
    REQUIRE(recv.size() == 1);
    CHECK(recv[0].done == k_none);
    CHECK(recv[0].recorded == k_none);
    REQUIRE(m.instances.size() == 1);
    CHECK(m.instances[0].members[0] == k_none);
  }
  SUBCASE("MPI_Win_test: only the successful call closes the epoch") {
    Rma t(2);
    const uint64_t post = t.sync(Call::Win_post, 0, {1});
    const uint64_t failed = t.sync(Call::Win_test, 0);
    t.b.trace().ranks[0].events.back().flag = false;
    const uint64_t passed = t.sync(Call::Win_test, 0);
    t.b.trace().ranks[0].events.back().flag = true;
    t.sync(Call::Win_start, 1, {0});
    const uint64_t complete = t.sync(Call::Win_complete, 1);
    const smt::Model m = t.model();
    CHECK(index_of(m, 0, failed) == k_none);
    const std::vector<smt::Op> recv = posted(m, 0, passed);
    REQUIRE(recv.size() == 1);
    CHECK(recv[0].peer == 1);
    CHECK(m.post_ref(recv[0].recorded).seq == complete);
    CHECK_FALSE(m.event(0, index_of(m, 0, passed)).may_block);  // a loop of tests, not a blocking call
    CHECK(index_of(m, 0, post) == 0);
    CHECK(ask(m, precede(m, 0, passed, 1, complete)) == smt::Verdict::unsat);
  }
}

namespace {

// Rank 1 sends one int with tag 7 to rank 0, which takes it with
// MPI_Mprobe(`source`, 7) and MPI_Mrecv, then one with tag 9, taken with
// MPI_Improbe(1, MPI_ANY_TAG), MPI_Imrecv and MPI_Wait, then probes and receives
// MPI_PROC_NULL (MPI_MESSAGE_NO_PROC). `with_ids`: the probes carry the
// message ids they returned (older tracers left them out of the blocking
// MPI_Mprobe). `crossed`: each rank first sends to the other (tag 8) and
// rank 1 receives it at the end, so both can block in their sends.
tf::Trace matched_probe_trace(int32_t source, bool with_ids, bool crossed) {
  Builder b(2);
  auto p2p = [&](Call call, uint32_t rank, int32_t peer, int32_t tag) -> tf::Event& {
    tf::Event& e = b.add(call, rank);
    e.comm = 0;
    e.peer = peer;
    e.tag = tag;
    e.count = 1;
    e.datatype = k_int;
    return e;
  };
  auto mprobe = [&](int32_t peer, int32_t tag, std::optional<int32_t> found, uint64_t message) {
    tf::Event& e = p2p(Call::Mprobe, 0, peer, tag);
    e.count = 0;
    e.datatype = 0;
    if (found) {
      e.status.source = *found;
      e.status.tag = tag;
    }
    if (with_ids) e.message = message;
  };
  auto mrecv = [&](uint64_t message, std::optional<int32_t> from, int32_t tag) {
    tf::Event& e = b.add(Call::Mrecv, 0);
    e.comm = 0;
    e.message = message;
    e.count = from ? 1 : 0;
    e.datatype = k_int;
    if (from) {
      e.status.source = *from;
      e.status.tag = tag;
    }
  };
  if (crossed) p2p(Call::Send, 0, 1, 8);
  mprobe(source, 7, 1, 2);
  mrecv(2, 1, 7);
  // A second message taken with MPI_Improbe (its id was always recorded),
  // MPI_Imrecv and MPI_Wait.
  tf::Event& improbe = p2p(Call::Improbe, 0, 1, tf::k_any_tag);
  improbe.count = 0;
  improbe.datatype = 0;
  improbe.flag = true;
  improbe.message = 3;
  improbe.status.source = 1;
  improbe.status.tag = 9;
  tf::Event& imrecv = b.add(Call::Imrecv, 0);
  imrecv.comm = 0;
  imrecv.message = 3;
  imrecv.count = 1;
  imrecv.datatype = k_int;
  imrecv.request = 1;
  tf::Event& wait = b.wait(1);
  wait.completed[0].status.source = 1;
  wait.completed[0].status.tag = 9;
  mprobe(tf::k_proc_null, 0, std::nullopt, tf::k_message_no_proc);
  mrecv(tf::k_message_no_proc, std::nullopt, 0);
  p2p(Call::Send, 1, 0, 7);
  p2p(Call::Send, 1, 0, 9);
  if (crossed) {
    tf::Event& r = p2p(Call::Recv, 1, 0, 8);
    r.status.source = 0;
    r.status.tag = 8;
  }
  b.add(Call::Finalize, 0);
  b.add(Call::Finalize, 1);
  return b.trace();
}

// Return the findings of `trace`: the analyzer's checks and prove()'s.
std::vector<an::Finding> all_findings(const tf::Trace& trace) {
  std::vector<an::Finding> out = analyze_trace(trace, an::Options{}).findings;
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() / ("smtrace-unit-smt-mprobe-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter++));
  fs::remove_all(dir);
  tf::write_trace(trace, dir);
  smt::ProveOptions po;
  po.threads = 1;
  po.smt_timeout_s = 20;
  const smt::ProveResult result = smt::prove(dir, po);
  fs::remove_all(dir);
  for (const smt::ProveFinding& f : result.findings) out.push_back(f.finding);
  return out;
}

}  // namespace

TEST_CASE("smt prove: a matched probe's receive takes what the probe saw (MPI_Mprobe, MPI_Mrecv)") {
  for (const bool with_ids : {true, false}) {
    for (const int32_t source : {1, tf::k_any_source}) {
      CAPTURE(with_ids);
      CAPTURE(source);
      // The message leaves the queue at the probe: nothing waits for ever,
      // nothing stays unreceived.
      for (const an::Finding& f : all_findings(matched_probe_trace(source, with_ids, false))) {
        CAPTURE(f.message);
        CHECK(f.severity == an::Severity::info);
      }
      // Both ranks send first: under zero buffering both block (rank 0 in
      // its MPI_Send, rank 1 in its MPI_Send that rank 0's MPI_Mprobe would match).
      const std::vector<an::Finding> found = all_findings(matched_probe_trace(source, with_ids, true));
      const auto deadlock = std::find_if(found.begin(), found.end(),
                                         [](const an::Finding& f) { return f.kind == "potential-deadlock"; });
      REQUIRE(deadlock != found.end());
      std::vector<std::string> calls;
      for (const an::Location& l : deadlock->locations) calls.push_back(l.call);
      CHECK(calls == std::vector<std::string>{"MPI_Send", "MPI_Send"});
    }
  }
}

TEST_CASE("smt checks: one collecting pass per rank for both checks") {
  smt::Collector collector;
  an::RankData data;
  data.rank = 1;
  CHECK(collector.rank_pass(data) != nullptr);
  CHECK(collector.rank_pass(data) == nullptr);  // the second check's: the first pass collects for both
  data.rank = 0;
  CHECK(collector.rank_pass(data) != nullptr);
}

// A rank source that takes `delay` before it delivers the events: reading
// that takes longer than the SMT budget.
class SlowSource final : public an::RankSource {
 public:
  SlowSource(std::unique_ptr<an::RankSource> inner, std::chrono::milliseconds delay)
      : m_inner(std::move(inner)), m_delay(delay) {}
  std::optional<tf::RankHeader> header(const tf::RankReader::Callbacks& callbacks) override {
    return m_inner->header(callbacks);
  }
  void read_all(const tf::RankReader::Callbacks& callbacks) override {
    std::this_thread::sleep_for(m_delay);
    m_inner->read_all(callbacks);
  }

 private:
  std::unique_ptr<an::RankSource> m_inner;
  std::chrono::milliseconds m_delay;
};

TEST_CASE("smt checks: the budget counts from when they need their model, after reading") {
  // Both ranks send first, then receive: a deadlock without buffering. Each
  // rank then makes many local calls, which the collecting passes see.
  auto trace = [] {
    Builder b(2);
    for (uint32_t r = 0; r < 2; ++r) {
      for (const Call call : {Call::Send, Call::Recv}) {
        tf::Event& e = b.add(call, r);
        e.comm = 0;
        e.peer = static_cast<int32_t>(1 - r);
        e.tag = 0;
        e.buf = 0x1000;
        e.count = 1;
        e.datatype = k_int;
        if (call == Call::Recv) {
          e.status.source = e.peer;
          e.status.tag = 0;
          e.status.count = 4;
        }
      }
      for (int i = 0; i < 10'000; ++i) b.add(Call::Test_cancelled, r);
      b.add(Call::Finalize, r);
    }
    return b;
  };
  auto kinds = [&](double seconds, std::chrono::milliseconds reading = std::chrono::milliseconds(0)) {
    Builder b = trace();
    an::Options options;
    options.checks = {"message-race", "potential-deadlock"};
    if (reading.count() > 0) {
      options.rank_source = [reading](uint32_t, const fs::path& file) -> std::unique_ptr<an::RankSource> {
        return std::make_unique<SlowSource>(an::read_rank_file_source(file), reading);
      };
    }
    smt::CheckSettings settings;
    settings.smt_timeout_s = seconds;
    options.extra_checks = smt::check_factories(settings);
    return analyze_trace(b.trace(), options).findings;
  };
  SUBCASE("within the budget: the deadlock is found") {
    const std::vector<an::Finding> found = kinds(60);
    REQUIRE(found.size() == 1);
    CHECK(found[0].kind == "potential-deadlock");
    CHECK(found[0].severity == an::Severity::error);
  }
  SUBCASE("reading longer than the budget does not count against it") {
    // Two ranks read one after the other (one thread), 0.6 s each: 1.2 s of
    // reading, and the budget of 1 s still decides the deadlock after it.
    const std::vector<an::Finding> found = kinds(1, std::chrono::milliseconds(600));
    REQUIRE(found.size() == 1);
    CHECK(found[0].kind == "potential-deadlock");
    CHECK(found[0].severity == an::Severity::error);
  }
  SUBCASE("a budget spent before the model is built: both checks say so, and nothing else is claimed") {
    const std::vector<an::Finding> found = kinds(1e-9);
    REQUIRE(found.size() == 2);
    for (const an::Finding& f : found) {
      CAPTURE(f.message);
      CHECK(f.severity == an::Severity::info);
      CHECK(f.message.find("the SMT model of the trace (20008 events) was not built within --smt-timeout 1e-09 s: "
                           "nothing was decided") != std::string::npos);
      CHECK(f.message.find("unknown, not a proof") != std::string::npos);
    }
  }
}

TEST_CASE("smt model: a world too large for the model is a reason of its own, not the budget") {
  CHECK_NOTHROW(smt::check_world_size(smt::k_max_world - 1));
  CHECK_THROWS_AS(smt::check_world_size(smt::k_max_world), smt::ModelLimit);
  CHECK_THROWS_WITH(smt::check_world_size(smt::k_max_world),
                    "a world of 16777216 ranks is larger than the model holds (16777215 ranks at most)");
  // A context of 2^24 ranks, each present, finalized and of one event:
  // both SMT checks say why nothing was decided, with a budget to spare.
  class HugeWorld final : public an::Context {
   public:
    HugeWorld() {
      m_rank.present = true;
      m_rank.events = 1;
      m_rank.end = tf::Termination{};
      m_rank.end->kind = tf::TerminationKind::finalized;
    }
    uint32_t world_size() const override { return smt::k_max_world; }
    const an::RankData& rank(uint32_t) const override { return m_rank; }
    const an::CommTable& comms() const override { return m_comms; }
    const an::Replay& replay() const override { return m_replay; }
    const an::HappensBefore& happens_before() const override { return m_hb; }
    const an::Options& options() const override { return m_options; }

   private:
    an::RankData m_rank;
    an::CommTable m_comms;
    an::Replay m_replay;
    an::HappensBefore m_hb;
    an::Options m_options;
  };
  const HugeWorld context;
  smt::CheckSettings settings;
  settings.smt_timeout_s = 600;
  std::vector<an::Finding> found;
  for (const auto& make : smt::check_factories(settings)) {
    std::vector<std::unique_ptr<an::RankPass>> passes;
    make()->finish(context, passes, found);
  }
  REQUIRE(found.size() == 2);
  for (const an::Finding& f : found) {
    CAPTURE(f.message);
    CHECK(f.severity == an::Severity::info);
    CHECK(f.message ==
          "the SMT model of the trace (16777216 events) was not built: a world of 16777216 ranks is larger than the "
          "model holds (16777215 ranks at most): nothing was decided (unknown, not a proof)");
  }
}

TEST_CASE("smt collector: its passes time what they collect, and the time travels with a saved rank") {
  smt::Collector collector;
  an::RankData data;
  data.rank = 1;
  std::unique_ptr<an::RankPass> pass = collector.rank_pass(data);
  REQUIRE(pass);
  // It takes the probes and the calls that complete requests, nothing else.
  const an::EventSet wants = pass->wants();
  CHECK(wants.has(Call::Probe));
  CHECK(wants.has(Call::Iprobe));
  CHECK(wants.has(Call::Wait));
  CHECK(wants.has(Call::Testall));
  CHECK_FALSE(wants.has(Call::Send));
  CHECK_FALSE(wants.has(Call::Isend));
  CHECK_FALSE(wants.has(Call::Barrier));
  CHECK_FALSE(wants.has(Call::Comm_dup));
  CHECK(collector.spent().count() == 0);
  for (uint64_t seq = 0; seq < 10'000; ++seq) {
    tf::Event e;
    e.seq = seq;
    e.call = Call::Wait;
    e.completed.push_back({});
    pass->event(e);
  }
  pass->end();
  const std::chrono::nanoseconds spent = collector.spent();
  CHECK(spent.count() > 0);
  an::WireWriter out;
  smt::Collector::save(*pass, out);
  smt::Collector loaded;
  an::WireReader in(out.bytes());
  CHECK(loaded.load(data, in) != nullptr);
  CHECK(in.at_end());
  CHECK(loaded.spent() == spent);  // process 0 counts what the reader's pass spent
}

TEST_CASE("smt pace: a stage gives up once its pace says it ends well past the deadline") {
  using namespace std::chrono_literals;
  auto in = [](std::chrono::milliseconds ms) { return smt::Deadline(std::chrono::steady_clock::now() + ms); };
  SUBCASE("no deadline: never") {
    smt::Pace pace({}, 100);
    std::this_thread::sleep_for(5ms);
    CHECK_NOTHROW(pace.now(1));
  }
  SUBCASE("past the deadline: at once") {
    smt::Pace pace(in(1ms), 100);
    std::this_thread::sleep_for(5ms);
    CHECK_THROWS_AS(pace.now(0), smt::BudgetSpent);
  }
  SUBCASE("an eighth done in at least 0.25 s of a second: it would take 2 s, and gives up") {
    smt::Pace pace(in(1000ms), 800);
    std::this_thread::sleep_for(250ms);
    CHECK_THROWS_AS(pace.now(100), smt::BudgetSpent);
  }
  SUBCASE("less than a sixty-fourth done: no projection yet") {
    smt::Pace pace(in(1000ms), 6400);
    std::this_thread::sleep_for(250ms);
    CHECK_NOTHROW(pace.now(99));
  }
  SUBCASE("less than a tenth of the time it had: no projection yet") {
    // A sixty-fourth in 0.3 s would take 19 s of a budget of 10 s, but 0.3 s is too short to tell.
    smt::Pace pace(in(10000ms), 64000);
    std::this_thread::sleep_for(300ms);
    CHECK_NOTHROW(pace.now(1000));
  }
  SUBCASE("a quarter in 0.3 s of a second: 1.2 s projected, within half again past it, goes on") {
    smt::Pace pace(in(1000ms), 400);
    std::this_thread::sleep_for(300ms);
    CHECK_NOTHROW(pace.now(100));
  }
  SUBCASE("half done at once, of 10 s: on pace") {
    smt::Pace pace(in(10000ms), 100);
    CHECK_NOTHROW(pace.now(50));
    CHECK_NOTHROW(pace.now(100));
  }
  SUBCASE("at() looks at the clock once every 4,096 calls") {
    smt::Pace pace(in(1ms), 100);
    std::this_thread::sleep_for(5ms);
    for (int i = 0; i < 4095; ++i) pace.at(0);
    CHECK_THROWS_AS(pace.at(0), smt::BudgetSpent);
  }
}

namespace {

// A pass that hands each event to two passes (the same Collector's events
// collected twice).
class TwoPasses final : public an::RankPass {
 public:
  TwoPasses(std::unique_ptr<an::RankPass> a, std::unique_ptr<an::RankPass> b)
      : m_a(std::move(a)), m_b(std::move(b)), m_b_wants(m_b->wants()) {}
  // `a` gets every event, `b` those its wants() holds, as the Sequencer hands them.
  void event(const tf::Event& e) override {
    m_a->event(e);
    if (m_b_wants.has(e.call)) m_b->event(e);
  }
  void end() override {
    m_a->end();
    m_b->end();
  }
  an::RankPass& saved() { return *m_b; }

 private:
  std::unique_ptr<an::RankPass> m_a, m_b;
  an::EventSet m_b_wants;
};

// What RoundTripCheck built: the model from the Collector that collected
// here and from the one that loaded the other's saved passes, and the bytes saved.
struct RoundTrip {
  smt::Model here, loaded;
  std::size_t saved_bytes = 0;
};

// Builds the model twice: from a Collector that collected every event here,
// and from one that loaded what a second Collector's passes saved from the
// events they want (smtrace-mpi's readers save, its process 0 loads);
// checks damaged bytes on the way.
class RoundTripCheck final : public an::Check {
 public:
  explicit RoundTripCheck(std::shared_ptr<RoundTrip> out) : m_out(std::move(out)) {}
  std::string_view name() const override { return "smt-model-round-trip"; }
  an::Severity severity() const override { return an::Severity::info; }
  std::string_view description() const override { return "builds the SMT model from saved passes (unit test)"; }
  std::unique_ptr<an::RankPass> rank_pass(const an::RankData& data) override {
    return std::make_unique<TwoPasses>(m_here.rank_pass(data), m_there.rank_pass(data));
  }
  void finish(const an::Context& context, std::vector<std::unique_ptr<an::RankPass>>& passes,
              std::vector<an::Finding>&) override {
    for (uint32_t r = 0; r < passes.size(); ++r) {
      if (!passes[r]) continue;
      an::WireWriter out;
      smt::Collector::save(static_cast<TwoPasses&>(*passes[r]).saved(), out);
      const std::string bytes = out.bytes();
      m_out->saved_bytes += bytes.size();
      if (bytes.size() > 8) {
        smt::Collector damaged;
        an::WireReader cut(std::string_view(bytes).substr(0, bytes.size() - 1));
        CHECK_THROWS_AS(damaged.load(context.rank(r), cut), std::runtime_error);
      }
      an::WireReader in(bytes);
      CHECK(m_loaded.load(context.rank(r), in) != nullptr);
      CHECK(in.at_end());
      an::WireReader again(bytes);
      CHECK_THROWS_AS(m_loaded.load(context.rank(r), again), std::logic_error);  // collected twice
      // Saving frees the collection where it was saved.
      an::WireWriter emptied;
      smt::Collector::save(static_cast<TwoPasses&>(*passes[r]).saved(), emptied);
      CHECK(emptied.bytes().size() == 3 * sizeof(uint64_t));  // two empty lists and the time spent
    }
    m_out->here = smt::build_model(context, m_here);
    m_out->loaded = smt::build_model(context, m_loaded);
  }

 private:
  std::shared_ptr<RoundTrip> m_out;
  smt::Collector m_here, m_there, m_loaded;
};

void check_same_model(const smt::Model& a, const smt::Model& b) {
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    CAPTURE(r);
    REQUIRE(a.ranks[r].events.size() == b.ranks[r].events.size());
    CHECK(a.ranks[r].limit == b.ranks[r].limit);
    for (std::size_t i = 0; i < a.ranks[r].events.size(); ++i) {
      const smt::Event& x = a.ranks[r].events[i];
      const smt::Event& y = b.ranks[r].events[i];
      CHECK(a.ranks[r].seq(static_cast<uint32_t>(i)) == b.ranks[r].seq(static_cast<uint32_t>(i)));
      CHECK(x.site == y.site);
      CHECK(x.call == y.call);
      CHECK(x.waits == y.waits);
      CHECK(x.may_block == y.may_block);
      CHECK(x.first == y.first);
      CHECK(a.ranks[r].posted(static_cast<uint32_t>(i)) == b.ranks[r].posted(static_cast<uint32_t>(i)));
      const auto xc = a.ranks[r].completes(static_cast<uint32_t>(i)), yc = b.ranks[r].completes(static_cast<uint32_t>(i));
      CHECK(std::vector<uint32_t>(xc.begin(), xc.end()) == std::vector<uint32_t>(yc.begin(), yc.end()));
    }
  }
  REQUIRE(a.ops.size() == b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const smt::Op& x = a.ops[i];
    const smt::Op& y = b.ops[i];
    CAPTURE(i);
    CHECK((x.kind == y.kind && x.mode == y.mode && x.rank == y.rank && x.post == y.post && x.done == y.done &&
           x.comm == y.comm && x.peer == y.peer && x.tag == y.tag && x.recorded == y.recorded && x.probe == y.probe &&
           x.instance == y.instance && x.member == y.member));
  }
  REQUIRE(a.instances.size() == b.instances.size());
  for (std::size_t i = 0; i < a.instances.size(); ++i) CHECK(a.instances[i].members == b.instances[i].members);
  CHECK(a.comm_names == b.comm_names);
}

}  // namespace

TEST_CASE("smt checks: the collecting pass saved and loaded builds the same model") {
  for (const bool crossed : {false, true}) {
    for (const int32_t source : {1, tf::k_any_source}) {
      CAPTURE(crossed);
      CAPTURE(source);
      auto out = std::make_shared<RoundTrip>();
      an::Options options;
      options.checks = {"smt-model-round-trip"};
      options.extra_checks.push_back([out] { return std::make_unique<RoundTripCheck>(out); });
      analyze_trace(matched_probe_trace(source, true, crossed), options);
      CHECK(out->saved_bytes > 4 * sizeof(uint64_t));  // probes and completions travelled
      CHECK(!out->here.ops.empty());
      check_same_model(out->here, out->loaded);
    }
  }
}

TEST_CASE("smt model: sorted_union against sort and unique, on sorted and unsorted lists") {
  std::mt19937_64 rng(20261202);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::vector<uint64_t>> lists(rng() % 6);
    std::vector<uint64_t> all;
    for (std::vector<uint64_t>& list : lists) {
      const std::size_t n = rng() % 200;
      const uint64_t range = 1 + rng() % 500;
      for (std::size_t i = 0; i < n; ++i) list.push_back(rng() % range);
      // Most lists ascending already (as the model's are), some not.
      if (rng() % 4 != 0) std::sort(list.begin(), list.end());
      all.insert(all.end(), list.begin(), list.end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<uint64_t> out = {7, 7};  // replaced
    smt::sorted_union(lists, out);
    CHECK(out == all);
  }
}

TEST_CASE("smt model: link_ops against a list of posts and one of completions per event") {
  std::mt19937_64 rng(20261203);
  for (int round = 0; round < 300; ++round) {
    smt::Model m;
    m.world_size = 1 + static_cast<uint32_t>(rng() % 4);
    m.ranks.resize(m.world_size);
    for (smt::RankEvents& rank : m.ranks) {
      rank.events.resize(rng() % 30);
      // Stale offsets (a part's events are copied from the whole model's): link_ops resets them.
      for (smt::Event& e : rank.events) {
        e.first = static_cast<uint32_t>(rng() % 9);
        e.few_posted = static_cast<uint16_t>(rng() % 9);
        e.waits = rng() % 2 == 0;
      }
    }
    const std::size_t ops = rng() % 120;
    for (std::size_t i = 0; i < ops; ++i) {
      const auto r = static_cast<uint32_t>(rng() % m.world_size);
      const auto n = static_cast<uint32_t>(m.ranks[r].events.size());
      if (n == 0) continue;
      smt::Op op;
      op.rank = r;
      op.post = static_cast<uint32_t>(rng() % n);
      op.done = rng() % 3 == 0 ? k_none : op.post + static_cast<uint32_t>(rng() % (n - op.post));
      m.ops.push_back(op);
    }
    // The old way: a list of each per event, pushed in op order.
    std::vector<std::vector<std::vector<uint32_t>>> posts(m.world_size), completes(m.world_size);
    for (uint32_t r = 0; r < m.world_size; ++r) {
      posts[r].resize(m.ranks[r].events.size());
      completes[r].resize(m.ranks[r].events.size());
    }
    uint64_t linked = 0;
    for (uint32_t i = 0; i < m.ops.size(); ++i) {
      posts[m.ops[i].rank][m.ops[i].post].push_back(i);
      if (m.ops[i].done != k_none) completes[m.ops[i].rank][m.ops[i].done].push_back(i);
      linked += m.ops[i].done != k_none ? 2 : 1;
    }
    smt::link_ops(m);
    uint64_t ids = 0;
    for (uint32_t r = 0; r < m.world_size; ++r) {
      ids += m.ranks[r].op_ids.size();
      for (uint32_t k = 0; k < m.ranks[r].events.size(); ++k) {
        CAPTURE(round);
        CAPTURE(r);
        CAPTURE(k);
        const auto p = m.posts(r, k), c = m.completes(r, k);
        CHECK(std::vector<uint32_t>(p.begin(), p.end()) == posts[r][k]);
        CHECK(std::vector<uint32_t>(c.begin(), c.end()) == completes[r][k]);
        const bool waits = m.ranks[r].events[k].waits;
        CHECK(waits == !completes[r][k].empty());
      }
    }
    CHECK(ids == linked);  // exact size
  }
}

TEST_CASE("smt model: Op keeps ranks of 24 bits beside its kind and mode, a collective's member in its tag's word") {
  // (Copies of the bit-fields: CHECK takes its operands by reference.)
  smt::Op op;
  CHECK(smt::OpKind{op.kind} == smt::OpKind::send);
  CHECK(smt::SendMode{op.mode} == smt::SendMode::standard);
  CHECK(uint32_t{op.rank} == 0);
  CHECK(op.tag == 0);
  CHECK(op.probe == smt::k_none);
  const uint32_t top = smt::k_max_world - 1;
  op.rank = top;
  op.kind = smt::OpKind::coll;
  op.mode = smt::SendMode::buffered;
  op.member = top - 1;
  CHECK(uint32_t{op.rank} == top);
  CHECK(op.member == top - 1);
  CHECK(smt::OpKind{op.kind} == smt::OpKind::coll);
  CHECK(smt::SendMode{op.mode} == smt::SendMode::buffered);
  op.rank = 3;
  CHECK(smt::OpKind{op.kind} == smt::OpKind::coll);
  CHECK(smt::SendMode{op.mode} == smt::SendMode::buffered);
  op.kind = smt::OpKind::probe;
  CHECK(uint32_t{op.rank} == 3);
  CHECK(smt::SendMode{op.mode} == smt::SendMode::buffered);
  op.mode = smt::SendMode::sync;
  CHECK(smt::OpKind{op.kind} == smt::OpKind::probe);
  CHECK(uint32_t{op.rank} == 3);
  op.member = UINT32_MAX;  // members are not bounded by k_max_world
  CHECK(op.member == UINT32_MAX);
  CHECK(op.peer == 0);
  CHECK(op.recorded == smt::k_none);
}

TEST_CASE("smt model: Event keeps 16 bytes, the rank keeps seqs past 2^32 and many posts per event") {
  static_assert(sizeof(smt::Event) == 16);
  // Seqs below and past 2^32, two changes of their high bits, one event that
  // posts more ops than Event counts itself.
  const std::vector<uint64_t> seqs = {3, 4, (uint64_t{1} << 32) + 2, (uint64_t{1} << 32) + 9, (uint64_t{5} << 32) + 1,
                                      (uint64_t{5} << 32) + 7};
  smt::Model m;
  m.world_size = 1;
  m.ranks.resize(1);
  m.ranks[0].set_seqs(seqs);
  REQUIRE(m.ranks[0].events.size() == seqs.size());
  for (uint32_t k = 0; k < seqs.size(); ++k) {
    CHECK(m.ranks[0].seq(k) == seqs[k]);
    CHECK(m.ref(0, k).seq == seqs[k]);
    CHECK(m.ranks[0].first_from(seqs[k]) == k);
    CHECK(m.ranks[0].first_from(seqs[k] + 1) == k + 1);
  }
  CHECK(m.ranks[0].first_from(0) == 0);
  smt::RankEvents added;
  for (uint64_t s : seqs) added.add(s);
  CHECK(added.seq_high == m.ranks[0].seq_high);
  // A part's copy from event 3 on: its own high bits from its first event.
  smt::RankEvents part;
  part.assign(m.ranks[0], 3, 6);
  REQUIRE(part.events.size() == 3);
  for (uint32_t k = 0; k < 3; ++k) CHECK(part.seq(k) == seqs[3 + k]);
  part.assign(m.ranks[0], 0, 2);
  CHECK(part.seq_high.empty());
  CHECK(part.seq(1) == 4);
  // Event 1 posts k_many_posted + 2 sends, events 0 and 2 one each, event 3 completes them all.
  auto add_send = [&](uint32_t post, uint32_t done) {
    smt::Op op;
    op.kind = smt::OpKind::send;
    op.post = post;
    op.done = done;
    m.ops.push_back(op);
  };
  add_send(0, 3);
  for (uint32_t i = 0; i < smt::k_many_posted + 2; ++i) add_send(1, 3);
  add_send(2, 3);
  smt::link_ops(m);
  CHECK(m.ranks[0].posted(0) == 1);
  CHECK(m.ranks[0].posted(1) == smt::k_many_posted + 2);
  CHECK(m.ranks[0].posted(2) == 1);
  CHECK(m.ranks[0].posted(3) == 0);
  CHECK(m.posts(0, 1).size() == smt::k_many_posted + 2);
  CHECK(m.posts(0, 1).front() == 1);
  CHECK(m.posts(0, 2).front() == m.ops.size() - 1);
  CHECK(m.completes(0, 1).empty());
  CHECK(m.completes(0, 3).size() == m.ops.size());
  CHECK(m.ranks[0].many_posted.size() == 1);
  smt::link_ops(m);  // again: the same, nothing kept twice
  CHECK(m.ranks[0].many_posted.size() == 1);
  CHECK(m.ranks[0].posted(1) == smt::k_many_posted + 2);
}
