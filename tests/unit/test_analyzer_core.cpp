#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/analyze.hpp"
#include "analyzer/check.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/rank_data.hpp"
#include "analyzer/replay.hpp"
#include "analyzer/request_map.hpp"
#include "analyzer/segment_map.hpp"
#include "tests/unit/analyzer_json_trace.hpp"

using smtrace::test::analyze_json;
using smtrace::test::count_kind;
using smtrace::test::JsonRank;

TEST_SUITE_BEGIN("analyzer");

namespace {
const char* k_init = R"({"call": "INIT"})";
const char* k_fin = R"({"call": "FINALIZE"})";
}  // namespace

TEST_CASE("analyzer::Replay::matches wildcard receives by status") {
  // Rank 0 receives twice from any source; the statuses say rank 2 first.
  std::vector<JsonRank> ranks(3);
  ranks[0].events = {k_init,
                     R"({"call": "RECV", "comm": 0, "peer": -1, "tag": -1, "status": {"source": 2, "tag": 5}})",
                     R"({"call": "RECV", "comm": 0, "peer": -1, "tag": -1, "status": {"source": 1, "tag": 5}})",
                     k_fin};
  ranks[1].events = {k_init, R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 5})", k_fin};
  ranks[2].events = {k_init, R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 5})", k_fin};
  auto result = analyze_json("replay-wildcard", ranks);
  CHECK(result.stats["matches"] == 2);
  CHECK(result.complete);
  CHECK(result.findings.empty());
}

TEST_CASE("analyzer::Replay::non-overtaking order on one channel") {
  // Two sends with the same tag: the first receive takes the first send.
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init,
                     R"({"call": "IRECV", "comm": 0, "peer": 1, "tag": 3, "request": "1"})",
                     R"({"call": "IRECV", "comm": 0, "peer": 1, "tag": 3, "request": "2"})",
                     R"({"call": "WAITALL", "requests": ["1", "2"], "completed": [{"index": 0, "request": "1", "status": {"source": 1, "tag": 3}}, {"index": 1, "request": "2", "status": {"source": 1, "tag": 3}}]})",
                     k_fin};
  ranks[1].events = {k_init, R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 3})",
                     R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 3})", k_fin};
  auto result = analyze_json("replay-order", ranks);
  CHECK(result.stats["matches"] == 2);
  CHECK(result.findings.empty());
}

TEST_CASE("analyzer::Replay::sends and receives alternating between communicators") {
  // Communicator 2 orders the world ranks 2, 0, 1; ranks 0 and 2 send
  // alternately on MPI_COMM_WORLD and on it.
  std::vector<JsonRank> ranks(3);
  for (auto& r : ranks) {
    r.comms = R"({"id": 2, "worldRanks": [2, 0, 1], "parent": 0})";
    r.events = {k_init, R"({"call": "COMM_SPLIT", "comm": 0, "newComm": 2, "color": 0})"};
  }
  for (int i = 0; i < 3; ++i) {
    const std::string tag = std::to_string(i);
    auto recv = [&](int comm, int source) {
      return R"({"call": "RECV", "comm": )" + std::to_string(comm) + R"(, "peer": )" + std::to_string(source) +
             R"(, "tag": )" + tag + R"(, "status": {"source": )" + std::to_string(source) + R"(, "tag": )" + tag +
             "}}";
    };
    auto send = [&](int comm, int dest) {
      return R"({"call": "SEND", "comm": )" + std::to_string(comm) + R"(, "peer": )" + std::to_string(dest) +
             R"(, "tag": )" + tag + "}";
    };
    ranks[0].events.push_back(send(0, 1));
    ranks[0].events.push_back(send(2, 0));  // to world rank 2
    ranks[1].events.push_back(recv(0, 0));
    ranks[2].events.push_back(recv(2, 1));  // from world rank 0
    ranks[2].events.push_back(send(0, 1));
    ranks[2].events.push_back(send(2, 2));  // to world rank 1
    ranks[1].events.push_back(recv(0, 2));
    ranks[1].events.push_back(recv(2, 0));  // from world rank 2
  }
  for (auto& r : ranks) {
    r.events.push_back(R"({"call": "COMM_FREE", "comm": 2})");
    r.events.push_back(k_fin);
  }
  auto result = analyze_json("replay-two-comms", ranks);
  CHECK(result.stats["matches"] == 12);
  CHECK(result.complete);
  CHECK(result.findings.empty());
}

namespace {
// Copies rank 0's outstanding requests out of the replay in finish().
std::vector<smtrace::analyzer::Outstanding> g_outstanding;
class OutstandingCopy final : public smtrace::analyzer::Check {
 public:
  std::string_view name() const override { return "outstanding-copy"; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "copies for the test"; }
  void finish(const smtrace::analyzer::Context& context, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>&) override {
    g_outstanding = context.replay().outstanding(0);
  }
};
}  // namespace

TEST_CASE("analyzer::Replay::requests outstanding at the end, sorted by request") {
  // 40 receives posted (requests in scrambled order), every third completed.
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init};
  std::vector<uint64_t> want;
  for (uint64_t i = 0; i < 40; ++i) {
    const uint64_t request = ((i * 17) % 40 + 1) * 0x40;
    ranks[0].events.push_back(R"({"call": "IRECV", "comm": 0, "peer": 1, "tag": 3, "request": ")" +
                              std::to_string(request) + R"("})");
    if (i % 3 == 0) {
      ranks[0].events.push_back(R"({"call": "WAIT", "requests": [")" + std::to_string(request) +
                                R"("], "completed": [{"index": 0, "request": ")" + std::to_string(request) +
                                R"(", "status": {"source": 1, "tag": 3}}]})");
    } else {
      want.push_back(request);
    }
  }
  ranks[0].events.push_back(k_fin);
  ranks[1].events = {k_init, k_fin};
  const auto dir = smtrace::test::write_json_trace("replay-outstanding", ranks);
  smtrace::analyzer::Options options;
  options.checks = {"outstanding-copy"};
  options.extra_checks.push_back([] { return std::make_unique<OutstandingCopy>(); });
  g_outstanding.clear();
  smtrace::analyzer::analyze(dir, options);
  std::sort(want.begin(), want.end());
  std::vector<uint64_t> got;
  for (const auto& o : g_outstanding) {
    CHECK(o.kind == smtrace::analyzer::Outstanding::Kind::p2p);
    got.push_back(o.request);
  }
  CHECK(got == want);
}

namespace {
// Copies every operation's match out of the replay in finish().
std::vector<std::vector<std::optional<smtrace::analyzer::OpRef>>> g_matched;
class MatchCopy final : public smtrace::analyzer::Check {
 public:
  std::string_view name() const override { return "match-copy"; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "copies for the test"; }
  void finish(const smtrace::analyzer::Context& context, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>&) override {
    const auto& replay = context.replay();
    g_matched.assign(replay.world_size(), {});
    for (uint32_t r = 0; r < replay.world_size(); ++r)
      for (uint32_t i = 0; i < replay.p2p(r).size(); ++i) g_matched[r].push_back(replay.matched({r, i}));
  }
};
}  // namespace

TEST_CASE("analyzer::Replay::matches as a search of each channel in the sender's order") {
  // Four ranks send each other messages on a few tags (some never
  // received, some receives never satisfied); every receive names its
  // source and tag in its status. Each receive, in the receiver's order,
  // must take the earliest send on its (sender, receiver, tag) that no
  // earlier receive took, found here by a plain search.
  constexpr uint32_t k_ranks = 4;
  std::mt19937 rng(7);
  struct Op {
    bool send;
    uint32_t peer;
    int32_t tag;
  };
  std::vector<std::vector<Op>> ops(k_ranks);
  std::vector<JsonRank> ranks(k_ranks);
  for (auto& r : ranks) r.events = {k_init};
  for (int n = 0; n < 400; ++n) {
    const uint32_t from = rng() % k_ranks, to = rng() % k_ranks;
    const int32_t tag = static_cast<int32_t>(rng() % 3);
    const std::string env = R"("comm": 0, "peer": )";
    if (rng() % 5 != 0) {
      ops[from].push_back({true, to, tag});
      ranks[from].events.push_back(R"({"call": "SEND", )" + env + std::to_string(to) + R"(, "tag": )" +
                                   std::to_string(tag) + "}");
    }
    if (rng() % 5 != 0) {
      // Posted with wildcards half the time: the status says which.
      const bool any = rng() % 2 == 0;
      ops[to].push_back({false, from, tag});
      ranks[to].events.push_back(R"({"call": "RECV", )" + env + (any ? "-1" : std::to_string(from)) +
                                 R"(, "tag": )" + (any ? "-1" : std::to_string(tag)) + R"(, "status": {"source": )" +
                                 std::to_string(from) + R"(, "tag": )" + std::to_string(tag) + "}}");
    }
  }
  for (auto& r : ranks) r.events.push_back(k_fin);
  const auto dir = smtrace::test::write_json_trace("replay-channels", ranks);
  smtrace::analyzer::Options options;
  options.checks = {"match-copy"};
  options.extra_checks.push_back([] { return std::make_unique<MatchCopy>(); });
  g_matched.clear();
  smtrace::analyzer::analyze(dir, options);
  REQUIRE(g_matched.size() == k_ranks);

  std::vector<std::vector<std::optional<smtrace::analyzer::OpRef>>> want(k_ranks);
  for (uint32_t r = 0; r < k_ranks; ++r) want[r].assign(ops[r].size(), std::nullopt);
  uint64_t matched = 0;
  for (uint32_t r = 0; r < k_ranks; ++r) {
    for (uint32_t i = 0; i < ops[r].size(); ++i) {
      const Op& recv = ops[r][i];
      if (recv.send) continue;
      const auto& sender = ops[recv.peer];
      for (uint32_t s = 0; s < sender.size(); ++s) {
        if (!sender[s].send || sender[s].peer != r || sender[s].tag != recv.tag || want[recv.peer][s]) continue;
        want[recv.peer][s] = smtrace::analyzer::OpRef{r, i};
        want[r][i] = smtrace::analyzer::OpRef{recv.peer, s};
        ++matched;
        break;
      }
    }
  }
  CHECK(matched > 100);
  for (uint32_t r = 0; r < k_ranks; ++r) {
    REQUIRE(g_matched[r].size() == want[r].size());
    for (uint32_t i = 0; i < want[r].size(); ++i) {
      INFO("rank " << r << " op " << i);
      CHECK(g_matched[r][i] == want[r][i]);
    }
  }
}

TEST_CASE("analyzer::Replay::payloads kept aside from the ops read as those kept in them") {
  // The same events into a Replay that keeps every payload index in its
  // ops and one that keeps indices from 2 on aside (as from
  // k_payload_aside on): sends of five payloads, and probes whose receive's
  // payload comes later with its MPI_Mrecv (the probe's (0, -1) kept
  // aside, then replaced once by an index kept in the op and once by
  // another kept aside).
  using smtrace::analyzer::OpRef;
  using smtrace::analyzer::Payload;
  using smtrace::analyzer::Replay;
  using smtrace::format::Call;
  using smtrace::format::Event;
  std::vector<Event> events;
  uint64_t seq = 0;
  auto send = [&](uint32_t datatype, int64_t count) {
    Event e;
    e.seq = ++seq;
    e.call = Call::Send;
    e.comm = 0;
    e.peer = 1;
    e.tag = 0;
    e.datatype = datatype;
    e.count = count;
    events.push_back(e);
  };
  auto probed = [&](uint64_t message, uint32_t datatype, int64_t count) {
    Event probe;
    probe.seq = ++seq;
    probe.call = Call::Mprobe;
    probe.comm = 0;
    probe.peer = 1;
    probe.tag = 0;
    probe.message = message;
    probe.status.source = 1;
    probe.status.tag = 0;
    events.push_back(probe);
    Event recv = probe;
    recv.seq = ++seq;
    recv.call = Call::Mrecv;
    recv.datatype = datatype;
    recv.count = count;
    events.push_back(recv);
  };
  send(1, 10);      // payload 0
  send(1, 20);      // 1
  send(2, 5);       // 2: aside
  probed(7, 1, 10);  // the probe's (0, -1) is payload 3, aside; its receive's 0
  send(2, 5);
  send(1, 20);
  probed(8, 3, 7);   // 3 again, then 4: aside
  send(1, 10);
  Replay plain;
  Replay aside;
  aside.keep_payloads_aside_from(2);
  for (Replay* replay : {&plain, &aside}) {
    smtrace::analyzer::RankData data;
    data.rank = 0;
    auto pass = replay->rank_pass(data);
    for (const Event& e : events) pass->event(e);
    pass->end();
  }
  const auto& ops = aside.p2p(0);
  REQUIRE(ops.size() == 8);
  REQUIRE(plain.p2p(0).size() == ops.size());
  const std::vector<Payload> want = {{1, 10}, {1, 20}, {2, 5}, {1, 10}, {2, 5}, {1, 20}, {3, 7}, {1, 10}};
  std::vector<Payload> got;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    INFO("op " << i);
    CHECK(aside.payload(OpRef{0, i}) == plain.payload(OpRef{0, i}));
    CHECK(ops[i].seq == plain.p2p(0)[i].seq);
    CHECK(ops[i].send == plain.p2p(0)[i].send);
    CHECK(ops[i].mode == plain.p2p(0)[i].mode);
    got.push_back(aside.payload(OpRef{0, i}));
  }
  CHECK(got == want);
  CHECK(ops[2].payload_slot == smtrace::analyzer::k_payload_aside);
  CHECK(ops[3].payload_slot == 0);  // set aside at the probe, in the op since its MPI_Mrecv
  CHECK(ops[6].payload_slot == smtrace::analyzer::k_payload_aside);
  CHECK(ops[3].done());
  CHECK(plain.p2p(0)[2].payload_slot == 2);
  CHECK(aside.payload(OpRef{0, 99}) == Payload{});
}

namespace {
// Copies, in op order as type-mismatch reads them, each op's payload and
// its match's payload out of the replay in finish().
struct PayloadRead {
  smtrace::analyzer::Payload own;
  std::optional<smtrace::analyzer::OpRef> matched;
  smtrace::analyzer::Payload other;
};
std::vector<std::vector<PayloadRead>> g_payloads;
std::vector<uint64_t> g_unmatched;  // Replay::unmatched of each rank
class PayloadCopy final : public smtrace::analyzer::Check {
 public:
  std::string_view name() const override { return "payload-copy"; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "copies for the test"; }
  void finish(const smtrace::analyzer::Context& context, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>&) override {
    const auto& replay = context.replay();
    g_payloads.assign(replay.world_size(), {});
    g_unmatched.assign(replay.world_size(), 0);
    for (uint32_t r = 0; r < replay.world_size(); ++r) {
      g_unmatched[r] = replay.unmatched(r);
      for (uint32_t i = 0; i < replay.p2p(r).size(); ++i) {
        PayloadRead read;
        read.matched = replay.matched({r, i});
        if (read.matched) read.other = replay.payload(*read.matched);
        read.own = replay.payload({r, i});
        g_payloads[r].push_back(read);
      }
    }
  }
};
}  // namespace

TEST_CASE("analyzer::Replay::payloads of receives and their sends, read in op order after the matching") {
  // Rank 0 sends 100 messages of counts 1..7 to rank 1, which receives
  // each into a count one larger, its own sends to rank 0 between them
  // (received there, and 3 of them never) and 2 receives at the end that
  // nothing sends: payload() of each op, of its match's, near the end of
  // the ops too (payload() fetches the send matched k ops on early).
  std::vector<JsonRank> ranks(2);
  for (auto& r : ranks) r.events = {k_init};
  auto p2p = [](const char* call, int peer, int tag, int count) {
    return std::string(R"({"call": ")") + call + R"(", "comm": 0, "peer": )" + std::to_string(peer) +
           R"(, "tag": )" + std::to_string(tag) + R"(, "count": ")" + std::to_string(count) +
           R"(", "datatype": 7)" + (call[0] == 'R' ? R"(, "status": {"source": )" + std::to_string(peer) +
                                                          R"(, "tag": )" + std::to_string(tag) + "}"
                                                    : std::string()) +
           "}";
  };
  for (int n = 0; n < 100; ++n) {
    ranks[0].events.push_back(p2p("SEND", 1, 0, n % 7 + 1));
    ranks[1].events.push_back(p2p("RECV", 0, 0, n % 7 + 2));
    if (n % 9 == 0) ranks[1].events.push_back(p2p("SEND", 0, 1, 50 + n));
  }
  for (int n = 0; n < 100; n += 9) {
    if (n < 80) ranks[0].events.push_back(p2p("RECV", 1, 1, 60 + n));
  }
  ranks[1].events.push_back(p2p("RECV", 0, 5, 3));
  ranks[1].events.push_back(p2p("RECV", 0, 5, 4));
  for (auto& r : ranks) r.events.push_back(k_fin);
  const auto dir = smtrace::test::write_json_trace("replay-payloads", ranks);
  smtrace::analyzer::Options options;
  options.checks = {"payload-copy"};
  options.extra_checks.push_back([] { return std::make_unique<PayloadCopy>(); });
  g_payloads.clear();
  smtrace::analyzer::analyze(dir, options);
  REQUIRE(g_payloads.size() == 2);
  REQUIRE(g_payloads[0].size() == 100 + 9);
  REQUIRE(g_payloads[1].size() == 100 + 12 + 2);
  uint32_t sends = 0, recvs = 0;
  for (uint32_t i = 0; i < g_payloads[1].size(); ++i) {
    INFO("rank 1 op " << i);
    const PayloadRead& read = g_payloads[1][i];
    if (i >= g_payloads[1].size() - 2) {  // nothing sent on tag 5
      CHECK(read.own.count == static_cast<int64_t>(i - (g_payloads[1].size() - 2) + 3));
      CHECK_FALSE(read.matched);
      continue;
    }
    if (read.own.count >= 50) {  // a send to rank 0: the first 9 are received
      CHECK(read.own.count == 50 + 9 * static_cast<int64_t>(sends));
      CHECK(read.matched.has_value() == (sends < 9));
      if (read.matched) CHECK(read.other.count == 60 + 9 * static_cast<int64_t>(sends));
      ++sends;
      continue;
    }
    REQUIRE(read.matched);
    CHECK(*read.matched == smtrace::analyzer::OpRef{0, recvs});
    CHECK(read.own == smtrace::analyzer::Payload{7, recvs % 7 + 2});
    CHECK(read.other == smtrace::analyzer::Payload{7, recvs % 7 + 1});
    ++recvs;
  }
  CHECK(recvs == 100);
  CHECK(sends == 12);
  // Replay::unmatched: the ops whose matched() is empty, counted by the matching.
  REQUIRE(g_unmatched.size() == 2);
  for (uint32_t r = 0; r < 2; ++r) {
    CAPTURE(r);
    const auto none = std::count_if(g_payloads[r].begin(), g_payloads[r].end(),
                                    [](const PayloadRead& read) { return !read.matched; });
    CHECK(g_unmatched[r] == static_cast<uint64_t>(none));
  }
  CHECK(g_unmatched[0] == 0);
  CHECK(g_unmatched[1] == 3 + 2);  // 3 sends to rank 0 never received, 2 receives on tag 5
}

TEST_CASE("analyzer::HappensBefore::edges of sends and collectives") {
  // 0: send to 1, bcast root 0.  1: recv, bcast.
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "SEND", "comm": 0, "peer": 1, "tag": 0})",
                     R"({"call": "BCAST", "comm": 0, "peer": 0})", k_fin};
  ranks[1].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 0, "tag": 0, "status": {"source": 0, "tag": 0}})",
                     R"({"call": "BCAST", "comm": 0, "peer": 0})", k_fin};
  smtrace::analyzer::Options options;
  options.happens_before = true;
  auto result = smtrace::analyzer::analyze(smtrace::test::write_json_trace("hb-edges", ranks), options);
  CHECK(result.stats["hb_cyclic"] == 0);
  CHECK(result.stats["hb_nodes"] == 7);        // send start, recv end, 2 bcast starts and ends, 1 hub
  CHECK(result.stats["hb_cross_edges"] == 4);  // send->recv, root->hub, hub->exit x2
}

TEST_CASE("analyzer::HappensBefore::fence and post/start/complete/wait") {
  std::vector<JsonRank> ranks(2);
  const char* create = R"({"call": "WIN_CREATE", "comm": 0, "window": 1, "winBase": "4096", "winSize": "64"})";
  ranks[0].events = {k_init, create, R"({"call": "WIN_FENCE", "window": 1})",
                     R"({"call": "WIN_POST", "window": 1, "group": 2})",
                     R"({"call": "WIN_WAIT", "window": 1})", k_fin};
  ranks[0].comms = R"({"id": 2, "worldRanks": [1], "isGroup": true})";
  ranks[1].events = {k_init, create, R"({"call": "WIN_FENCE", "window": 1})",
                     R"({"call": "WIN_START", "window": 1, "group": 2})",
                     R"({"call": "PUT", "window": 1, "peer": 0, "count": "1", "datatype": 7})",
                     R"({"call": "WIN_COMPLETE", "window": 1})", k_fin};
  ranks[1].comms = R"({"id": 2, "worldRanks": [0], "isGroup": true})";
  smtrace::analyzer::Options options;
  options.happens_before = true;
  auto result = smtrace::analyzer::analyze(smtrace::test::write_json_trace("hb-rma", ranks), options);
  CHECK(result.stats["windows"] == 1);
  // Window creation and fence: each 2 entries -> hub -> 2 exits; post ->
  // start; complete -> wait.
  CHECK(result.stats["hb_cross_edges"] == 10);
  CHECK(result.stats["hb_cyclic"] == 0);
}

TEST_CASE("analyzer::HappensBefore::window creation and MPI_Win_free order like barriers") {
  // docs/checks.md (rma-race): a store before MPI_Win_create precedes a
  // remote access in the first epoch; MPI_Win_free's return follows every
  // access to the window.
  std::vector<JsonRank> ranks(2);
  const char* create = R"({"call": "WIN_CREATE", "comm": 0, "window": 1, "winBase": "4096", "winSize": "64"})";
  const char* free = R"({"call": "WIN_FREE", "window": 1})";
  ranks[0].events = {k_init, R"({"call": "STORE", "buf": "4096", "size": "4"})", create, free,
                     R"({"call": "STORE", "buf": "4096", "size": "4"})", k_fin};
  ranks[1].events = {k_init, create, R"({"call": "WIN_LOCK", "window": 1, "peer": 0, "lockType": "LOCK_SHARED"})",
                     R"({"call": "GET", "window": 1, "peer": 0, "buf": "8192", "count": "1", "datatype": 7,
                         "targetCount": "1", "targetDatatype": 7})",
                     R"({"call": "WIN_UNLOCK", "window": 1, "peer": 0})", free, k_fin};
  smtrace::analyzer::Options options;
  options.checks = {"rma-race"};
  auto result = smtrace::analyzer::analyze(smtrace::test::write_json_trace("hb-win-life", ranks), options);
  CHECK(result.stats["hb_cross_edges"] == 8);
  CHECK(smtrace::test::count_kind(result, "rma-race") == 0);
}

TEST_CASE("analyzer::HappensBefore::a successful MPI_Win_test ends the exposure epoch") {
  // MPI-3.1 section 11.5.2: MPI_Win_test returning flag = true has the
  // effect of MPI_Win_wait returning (complete -> test), flag = false none.
  for (bool succeeds : {true, false}) {
    CAPTURE(succeeds);
    std::vector<JsonRank> ranks(2);
    const char* create = R"({"call": "WIN_CREATE", "comm": 0, "window": 1, "winBase": "4096", "winSize": "64"})";
    ranks[0].events = {k_init, create, R"({"call": "WIN_POST", "window": 1, "group": 2})",
                       R"({"call": "WIN_TEST", "window": 1, "flag": false})"};
    if (succeeds) ranks[0].events.push_back(R"({"call": "WIN_TEST", "window": 1, "flag": true})");
    ranks[0].events.push_back(k_fin);
    ranks[0].comms = R"({"id": 2, "worldRanks": [1], "isGroup": true})";
    ranks[1].events = {k_init, create, R"({"call": "WIN_START", "window": 1, "group": 2})",
                       R"({"call": "PUT", "window": 1, "peer": 0, "count": "1", "datatype": 7})",
                       R"({"call": "WIN_COMPLETE", "window": 1})", k_fin};
    ranks[1].comms = R"({"id": 2, "worldRanks": [0], "isGroup": true})";
    smtrace::analyzer::Options options;
    options.happens_before = true;
    auto result = smtrace::analyzer::analyze(
        smtrace::test::write_json_trace(succeeds ? "hb-win-test" : "hb-win-test-false", ranks), options);
    // Window creation (2 entries -> hub -> 2 exits), post -> start, and
    // complete -> the successful test.
    CHECK(result.stats["hb_cross_edges"] == (succeeds ? 6 : 5));
    CHECK(result.stats["hb_cyclic"] == 0);
  }
}

TEST_CASE("analyzer::deadlock::two ranks receiving first") {
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 1, "tag": 0, "pending": true})"};
  ranks[1].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 0, "tag": 0, "pending": true})"};
  ranks[0].end = ranks[1].end = R"({"kind": "SIGNAL", "signal": 15})";
  auto result = analyze_json("deadlock-cycle", ranks, {"deadlock"});
  REQUIRE(count_kind(result, "deadlock") == 1);
  const auto& f = result.findings.front();
  CHECK(f.message.find("cycle") != std::string::npos);
  REQUIRE(f.locations.size() == 2);
  CHECK(f.locations[0].event.str() == "0:1");
  CHECK(f.locations[1].event.str() == "1:1");
  CHECK(f.locations[0].file == "t.c");
  CHECK(f.locations[0].line == 2);
  CHECK(f.locations[1].line == 102);
}

TEST_CASE("analyzer::deadlock::partner finalized or still running") {
  SUBCASE("receive from a rank that finalized") {
    std::vector<JsonRank> ranks(2);
    ranks[0].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 1, "tag": 0, "pending": true})"};
    ranks[0].end = R"({"kind": "SIGNAL", "signal": 15})";
    ranks[1].events = {k_init, k_fin};
    auto result = analyze_json("deadlock-finalized", ranks, {"deadlock"});
    REQUIRE(count_kind(result, "deadlock") == 1);
    CHECK(result.findings.front().message.find("blocked forever") != std::string::npos);
  }
  SUBCASE("the sender was computing when killed: no finding") {
    std::vector<JsonRank> ranks(2);
    ranks[0].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 1, "tag": 0, "pending": true})"};
    ranks[0].end = R"({"kind": "SIGNAL", "signal": 15})";
    ranks[1].events = {k_init};
    ranks[1].end = R"({"kind": "SIGNAL", "signal": 15})";
    auto result = analyze_json("deadlock-running", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 0);
  }
  SUBCASE("the message was already sent: no finding") {
    std::vector<JsonRank> ranks(2);
    ranks[0].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 1, "tag": 0, "pending": true})"};
    ranks[0].end = R"({"kind": "SIGNAL", "signal": 15})";
    ranks[1].events = {k_init, R"({"call": "SEND", "comm": 0, "peer": 0, "tag": 0})",
                       R"({"call": "BARRIER", "comm": 1, "pending": true})"};
    ranks[1].end = R"({"kind": "SIGNAL", "signal": 15})";
    auto result = analyze_json("deadlock-sent", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 0);
  }
}

TEST_CASE("analyzer::deadlock::collective some rank never entered") {
  std::vector<JsonRank> ranks(3);
  for (int r = 0; r < 2; ++r) {
    ranks[r].events = {k_init, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
    ranks[r].end = R"({"kind": "SIGNAL", "signal": 15})";
  }
  ranks[2].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 0, "tag": 9, "pending": true})"};
  ranks[2].end = R"({"kind": "SIGNAL", "signal": 15})";
  auto result = analyze_json("deadlock-coll", ranks, {"deadlock"});
  REQUIRE(count_kind(result, "deadlock") == 1);
  CHECK(result.findings.front().locations.size() == 3);
}

TEST_CASE("analyzer::deadlock::a rank stopped in an erroneous call was not waiting") {
  // MPI's default error handler ends the job inside the call: rank 1's
  // barrier waits for a rank the error ended, not for a deadlock.
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 1, "tag": -5, "count": "1", "datatype": 7,
                                 "pending": true})"};
  ranks[1].events = {k_init, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
  ranks[0].end = ranks[1].end = R"({"kind": "SIGNAL", "signal": 15})";
  SUBCASE("with invalid-argument: the error alone") {
    auto result = analyze_json("deadlock-erroneous", ranks, {"deadlock", "invalid-argument"});
    CHECK(count_kind(result, "invalid-argument") == 1);
    CHECK(count_kind(result, "deadlock") == 0);
  }
  SUBCASE("without it nothing says the call was wrong: a cycle") {
    auto result = analyze_json("deadlock-erroneous-alone", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 1);
  }
}

TEST_CASE("analyzer::deadlock::passive-target synchronization waits for lock holders only") {
  const char* create = R"({"call": "WIN_CREATE", "comm": 0, "window": 1, "winBase": "4096", "winSize": "64"})";
  const char* lock_x = R"({"call": "WIN_LOCK", "window": 1, "peer": 1, "lockType": "LOCK_EXCLUSIVE"})";
  std::vector<JsonRank> ranks(3);
  for (auto& r : ranks) r.end = R"({"kind": "SIGNAL", "signal": 15})";
  ranks[1].events = {k_init, create, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
  SUBCASE("a lock waits for the holder of an exclusive lock, who waits in a barrier") {
    ranks[0].events = {k_init, create, lock_x, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
    ranks[2].events = {k_init, create,
                       R"({"call": "WIN_LOCK", "window": 1, "peer": 1, "lockType": "LOCK_SHARED", "pending": true})"};
    auto result = analyze_json("deadlock-lock-holder", ranks, {"deadlock"});
    REQUIRE(count_kind(result, "deadlock") == 1);
    CHECK(result.findings.front().message.find("rank 0 -> rank 2") != std::string::npos);
  }
  SUBCASE("an unlock needs no call of its target: no deadlock") {
    ranks[0].events = {k_init, create, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
    ranks[2].events = {k_init, create, lock_x, R"({"call": "WIN_UNLOCK", "window": 1, "peer": 1, "pending": true})"};
    auto result = analyze_json("deadlock-unlock", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 0);
  }
  SUBCASE("two ranks in unlocks of exclusive locks on one target compete: one gets it") {
    ranks[0].events = {k_init, create, lock_x, R"({"call": "WIN_UNLOCK", "window": 1, "peer": 1, "pending": true})"};
    ranks[2].events = ranks[0].events;
    auto result = analyze_json("deadlock-unlock-compete", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 0);
  }
}

TEST_CASE("analyzer::deadlock::active-target epochs wait for their partners only") {
  const char* create = R"({"call": "WIN_CREATE", "comm": 0, "window": 1, "winBase": "4096", "winSize": "64"})";
  std::vector<JsonRank> ranks(3);
  for (auto& r : ranks) r.end = R"({"kind": "SIGNAL", "signal": 15})";
  ranks[0].comms = R"({"id": 2, "worldRanks": [1], "isGroup": true})";
  ranks[1].comms = R"({"id": 2, "worldRanks": [0], "isGroup": true})";
  ranks[2].events = {k_init, create, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
  SUBCASE("origin in MPI_Win_complete after the target's post, target in MPI_Win_wait: both go on") {
    ranks[0].events = {k_init, create, R"({"call": "WIN_START", "window": 1, "group": 2})",
                       R"({"call": "WIN_COMPLETE", "window": 1, "pending": true})"};
    ranks[1].events = {k_init, create, R"({"call": "WIN_POST", "window": 1, "group": 2})",
                       R"({"call": "WIN_WAIT", "window": 1, "pending": true})"};
    auto result = analyze_json("deadlock-pscw-going", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 0);
  }
  SUBCASE("the target in a barrier before its post: a cycle of origin and target") {
    ranks[0].events = {k_init, create, R"({"call": "WIN_START", "window": 1, "group": 2})",
                       R"({"call": "WIN_COMPLETE", "window": 1, "pending": true})"};
    ranks[1].events = {k_init, create, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
    auto result = analyze_json("deadlock-pscw-stuck", ranks, {"deadlock"});
    REQUIRE(count_kind(result, "deadlock") == 1);
    CHECK(result.findings.front().message.find("rank 0 -> rank 1") != std::string::npos);
  }
}

TEST_CASE("analyzer::deadlock::wording (issue 14 item 6)") {
  SUBCASE("a rank receiving from itself waits for itself") {
    std::vector<JsonRank> ranks(2);
    ranks[0].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 0, "tag": 0, "pending": true})"};
    ranks[0].end = R"({"kind": "SIGNAL", "signal": 15})";
    ranks[1].events = {k_init, k_fin};
    auto result = analyze_json("deadlock-self", ranks, {"deadlock"});
    REQUIRE(count_kind(result, "deadlock") == 1);
    CHECK(result.findings.front().message == "deadlock: rank 0 waits for itself");
  }
  SUBCASE("members all inside the same collective wait for nobody") {
    std::vector<JsonRank> ranks(2);
    for (auto& r : ranks) {
      r.events = {k_init, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
      r.end = R"({"kind": "SIGNAL", "signal": 15})";
    }
    auto result = analyze_json("deadlock-all-inside", ranks, {"deadlock"});
    CHECK(count_kind(result, "deadlock") == 0);
  }
  SUBCASE("a collective names the members not inside it") {
    std::vector<JsonRank> ranks(3);
    for (int r = 0; r < 2; ++r) {
      ranks[r].events = {k_init, R"({"call": "BARRIER", "comm": 0, "pending": true})"};
      ranks[r].end = R"({"kind": "SIGNAL", "signal": 15})";
    }
    ranks[2].events = {k_init, R"({"call": "RECV", "comm": 0, "peer": 0, "tag": 9, "pending": true})"};
    ranks[2].end = R"({"kind": "SIGNAL", "signal": 15})";
    auto result = analyze_json("deadlock-coll-wording", ranks, {"deadlock"});
    REQUIRE(count_kind(result, "deadlock") == 1);
    bool named = false;
    for (const auto& l : result.findings.front().locations) {
      CHECK(l.note.find("other members") == std::string::npos);
      CHECK(l.note.find("(unknown)") == std::string::npos);
      if (l.note.find("MPI_Barrier on MPI_COMM_WORLD waits for rank 2 that never entered it") != std::string::npos)
        named = true;
    }
    CHECK(named);
  }
}

TEST_CASE("analyzer::unmatched-message::a send's tag -1 is not any tag") {
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "BSEND", "comm": 0, "peer": 1, "tag": -1})", k_fin};
  ranks[1].events = {k_init, k_fin};
  auto result = analyze_json("unmatched-tag-minus-one", ranks, {"unmatched-message"});
  REQUIRE(count_kind(result, "unmatched-message") == 1);
  const auto& f = result.findings.front();
  std::string text = f.message;
  for (const auto& l : f.locations) text += "\n" + l.note;
  CHECK(text.find("any tag") == std::string::npos);
  CHECK(text.find("tag -1") != std::string::npos);
}

TEST_CASE("analyzer::unmatched-message::send never received") {
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "BSEND", "comm": 0, "peer": 1, "tag": 4})", k_fin};
  ranks[1].events = {k_init, k_fin};
  auto result = analyze_json("unmatched-send", ranks, {"unmatched-message"});
  REQUIRE(count_kind(result, "unmatched-message") == 1);
  CHECK(result.findings.front().locations.front().event.str() == "0:1");
  SUBCASE("not in an incomplete trace") {
    ranks[1].end = "";
    auto partial = analyze_json("unmatched-partial", ranks, {"unmatched-message"});
    CHECK(count_kind(partial, "unmatched-message") == 0);
  }
}

TEST_CASE("analyzer::analyze::unknown check name") {
  std::vector<JsonRank> ranks(1);
  ranks[0].events = {k_init, k_fin};
  CHECK_THROWS_AS(analyze_json("unknown-check", ranks, {"no-such-check"}), std::invalid_argument);
}

namespace {

// A check that throws where a test tells it to: in its pass on `rank` at
// event `seq`, or in finish(); or runs out of memory on a worker.
class ThrowingCheck final : public smtrace::analyzer::Check {
 public:
  enum class Where { pass, finish, bad_alloc };
  explicit ThrowingCheck(Where where) : m_where(where) {}
  std::string_view name() const override { return "throwing"; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "throws for the test"; }
  std::unique_ptr<smtrace::analyzer::RankPass> rank_pass(const smtrace::analyzer::RankData& data) override {
    struct Pass final : smtrace::analyzer::RankPass {
      Where where;
      const smtrace::analyzer::RankData* data;
      void event(const smtrace::format::Event& e) override {
        if (data->rank != 1 || e.seq != 1) return;
        if (where == Where::pass) throw std::logic_error("invariant broken");
        if (where == Where::bad_alloc) throw std::bad_alloc();
      }
    };
    auto pass = std::make_unique<Pass>();
    pass->where = m_where;
    pass->data = &data;
    return pass;
  }
  void finish(const smtrace::analyzer::Context&, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>& out) override {
    smtrace::analyzer::Finding half;
    half.kind = "throwing";
    out.push_back(half);  // half made, then the failure: must not reach the report
    if (m_where == Where::finish) throw std::out_of_range("map::at");
  }

 private:
  Where m_where;
};

}  // namespace

TEST_CASE("analyzer::analyze::a check that throws leaves the others' findings") {
  // The unmatched send is found by unmatched-message, whatever "throwing" does.
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "BSEND", "comm": 0, "peer": 1, "tag": 4})", k_fin};
  ranks[1].events = {k_init, R"({"call": "BARRIER", "comm": 1})", k_fin};
  const auto dir = smtrace::test::write_json_trace("throwing-check", ranks);
  auto run = [&](ThrowingCheck::Where where,
                 smtrace::analyzer::CheckErrors policy = smtrace::analyzer::CheckErrors::report) {
    smtrace::analyzer::Options options;
    options.check_errors = policy;
    options.threads = 2;
    options.checks = {"unmatched-message", "throwing"};
    options.extra_checks.push_back([where] { return std::make_unique<ThrowingCheck>(where); });
    return smtrace::analyzer::analyze(dir, options);
  };
  SUBCASE("in a rank pass, on a loading thread") {
    auto result = run(ThrowingCheck::Where::pass);
    CHECK(count_kind(result, "unmatched-message") == 1);
    CHECK(count_kind(result, "throwing") == 0);
    REQUIRE(result.failures.size() == 1);
    CHECK(result.failures[0].check == "throwing");
    CHECK(result.failures[0].message == "rank 1: event 1:1: invariant broken");
  }
  SUBCASE("in finish") {
    auto result = run(ThrowingCheck::Where::finish);
    CHECK(count_kind(result, "unmatched-message") == 1);
    CHECK(count_kind(result, "throwing") == 0);
    REQUIRE(result.failures.size() == 1);
    CHECK(result.failures[0].message == "map::at");
  }
  SUBCASE("out of memory ends the analysis") {
    CHECK_THROWS_AS(run(ThrowingCheck::Where::bad_alloc), std::bad_alloc);
  }
  SUBCASE("CheckErrors::rethrow: the worker's exception comes out of analyze") {
    // From a loading thread it comes with the rank file and how far loading got.
    CHECK_THROWS_WITH_AS(run(ThrowingCheck::Where::pass, smtrace::analyzer::CheckErrors::rethrow),
                         doctest::Contains("rank-1.smt: rank 1: loading stopped after 2 events: invariant broken"),
                         std::runtime_error);
    CHECK_THROWS_AS(run(ThrowingCheck::Where::finish, smtrace::analyzer::CheckErrors::rethrow), std::out_of_range);
  }
}

namespace {

// A check whose pass throws at rank 0's first event; the passes of the
// other ranks count the events they are given.
std::atomic<int> g_after_failure{0};
class FailsOnRankZero final : public smtrace::analyzer::Check {
 public:
  std::string_view name() const override { return "fails-on-rank-zero"; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "throws for the test"; }
  std::unique_ptr<smtrace::analyzer::RankPass> rank_pass(const smtrace::analyzer::RankData& data) override {
    struct Pass final : smtrace::analyzer::RankPass {
      uint32_t rank = 0;
      void event(const smtrace::format::Event&) override {
        if (rank == 0) throw std::logic_error("broken at once");
        ++g_after_failure;
      }
    };
    auto pass = std::make_unique<Pass>();
    pass->rank = data.rank;
    return pass;
  }
  void finish(const smtrace::analyzer::Context&, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>&) override {}
};

}  // namespace

TEST_CASE("analyzer::analyze::a check that failed on one rank gets no events on the ranks read after") {
  std::vector<JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "BARRIER", "comm": 1})", k_fin};
  ranks[1].events = {k_init, R"({"call": "BARRIER", "comm": 1})", k_fin};
  const auto dir = smtrace::test::write_json_trace("fails-on-rank-zero", ranks);
  smtrace::analyzer::Options options;
  options.check_errors = smtrace::analyzer::CheckErrors::report;
  options.threads = 1;  // rank 0 is read before rank 1
  options.checks = {"fails-on-rank-zero"};
  options.extra_checks.push_back([] { return std::make_unique<FailsOnRankZero>(); });
  g_after_failure = 0;
  const auto result = smtrace::analyzer::analyze(dir, options);
  REQUIRE(result.failures.size() == 1);
  CHECK(result.failures[0].message == "rank 0: event 0:0: broken at once");
  CHECK(g_after_failure == 0);
}

namespace {

// Checks whose passes record the seqs they are given, per rank; "seq-thrower"
// throws at rank 0's event 2 (its passes before and after it in the
// sequencer's list go on).
std::mutex g_seen_mutex;
std::map<std::pair<std::string, uint32_t>, std::vector<uint64_t>> g_seen;
class SeqRecorder final : public smtrace::analyzer::Check {
 public:
  explicit SeqRecorder(std::string name) : m_name(std::move(name)) {}
  std::string_view name() const override { return m_name; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "records for the test"; }
  std::unique_ptr<smtrace::analyzer::RankPass> rank_pass(const smtrace::analyzer::RankData& data) override {
    struct Pass final : smtrace::analyzer::RankPass {
      std::string name;
      uint32_t rank = 0;
      void event(const smtrace::format::Event& e) override {
        {
          std::lock_guard lock(g_seen_mutex);
          g_seen[{name, rank}].push_back(e.seq);
        }
        if (name == "seq-thrower" && rank == 0 && e.seq == 2) throw std::logic_error("broken at 2");
      }
    };
    auto pass = std::make_unique<Pass>();
    pass->name = m_name;
    pass->rank = data.rank;
    return pass;
  }
  void finish(const smtrace::analyzer::Context&, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>&) override {}

 private:
  std::string m_name;
};

}  // namespace

TEST_CASE("analyzer::analyze::a pass dropped mid-rank: the passes around it get every event, in order") {
  std::vector<JsonRank> ranks(2);
  for (auto& r : ranks) {
    r.events = {k_init};
    for (int n = 0; n < 5; ++n) r.events.push_back(R"({"call": "BARRIER", "comm": 1})");
    r.events.push_back(k_fin);
  }
  const auto dir = smtrace::test::write_json_trace("seq-recorders", ranks);
  smtrace::analyzer::Options options;
  options.check_errors = smtrace::analyzer::CheckErrors::report;
  options.threads = 1;  // rank 0 is read before rank 1
  options.checks = {"seq-before", "seq-thrower", "seq-after"};
  for (const char* name : {"seq-before", "seq-thrower", "seq-after"})
    options.extra_checks.push_back([name] { return std::make_unique<SeqRecorder>(name); });
  g_seen.clear();
  const auto result = smtrace::analyzer::analyze(dir, options);
  REQUIRE(result.failures.size() == 1);
  CHECK(result.failures[0].check == "seq-thrower");
  CHECK(result.failures[0].message == "rank 0: event 0:2: broken at 2");
  const std::vector<uint64_t> all = {0, 1, 2, 3, 4, 5, 6};
  for (uint32_t r = 0; r < 2; ++r) {
    INFO("rank " << r);
    CHECK(g_seen[{"seq-before", r}] == all);
    CHECK(g_seen[{"seq-after", r}] == all);
  }
  CHECK(g_seen[{"seq-thrower", 0}] == std::vector<uint64_t>{0, 1, 2});
  CHECK(g_seen.count({"seq-thrower", 1}) == 0);  // failed on rank 0, read before
}

TEST_CASE("analyzer::GlobalComm::peer in an intracommunicator and an intercommunicator") {
  smtrace::analyzer::GlobalComm intra;
  intra.world_ranks = {4, 2, UINT32_MAX, 0};
  CHECK(intra.peer(2, 0) == 4u);
  CHECK(intra.peer(9, 3) == 0u);  // whoever asks: the members of an intracommunicator
  CHECK_FALSE(intra.peer(2, 2));  // a process outside MPI_COMM_WORLD
  CHECK_FALSE(intra.peer(2, 4));
  CHECK_FALSE(intra.peer(2, -1));
  CHECK_FALSE(intra.peer(2, smtrace::format::k_proc_null));
  smtrace::analyzer::GlobalComm inter;
  inter.inter = true;
  inter.world_ranks = {0, 1, 5, 6, 7};  // groups {0, 1} and {5, 6, 7}
  inter.first_group = 2;
  CHECK(inter.peer(1, 0) == 5u);
  CHECK(inter.peer(0, 2) == 7u);
  CHECK_FALSE(inter.peer(0, 3));
  CHECK(inter.peer(6, 1) == 1u);
  CHECK_FALSE(inter.peer(6, 2));
  CHECK_FALSE(inter.peer(3, 0));  // not a member
  CHECK_FALSE(inter.peer(5, -1));
}

namespace {
struct Slot {
  int value = 0;
  std::vector<int> items;
};
void reset(Slot& s) {
  s.value = 0;
  s.items.clear();
}
}  // namespace

TEST_CASE("analyzer::StableRequestMap::the same entries as std::unordered_map, visited whatever the ids") {
  // Two tables fed the same operations, one with the ids of the other
  // scattered: each() visits the same values in the same order in both
  // (local-concurrency and cuda-mpi-race sort what they report anyway).
  smtrace::analyzer::StableRequestMap<Slot> map, scattered;
  std::unordered_map<uint64_t, int> plain;
  auto scatter = [](uint64_t request) { return (request * 0x9e3779b97f4a7c15ULL) | 1; };
  std::mt19937_64 random(7);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t request = random() % 300;
    if (random() % 4 < 2) {
      const bool had = plain.count(request) != 0;
      Slot& s = map[request];
      Slot& t = scattered[scatter(request)];
      if (had) {
        CHECK(s.value == plain[request]);  // an existing entry is returned as it is
      } else {
        CHECK(s.value == 0);  // a new one with its defaults, even in a reused place
        CHECK(s.items.empty());
      }
      s.value = t.value = static_cast<int>(step) + 1;
      s.items.push_back(step);
      t.items.push_back(step);
      plain[request] = s.value;
    } else {
      map.erase(request);
      scattered.erase(scatter(request));
      plain.erase(request);
    }
    REQUIRE(map.size() == plain.size());
    if (step % 97 == 0) {
      std::vector<int> a, b;
      map.each([&](Slot& s) { a.push_back(s.value); });
      scattered.each([&](Slot& s) { b.push_back(s.value); });
      CHECK(a == b);
      std::vector<int> c;
      for (const auto& [k, v] : plain) {
        const Slot* s = map.find(k);
        REQUIRE(s != nullptr);
        CHECK(s->value == v);
        c.push_back(v);
      }
      std::sort(a.begin(), a.end());
      std::sort(c.begin(), c.end());
      CHECK(a == c);
    }
  }
  CHECK(map.find(1000) == nullptr);
  map.clear();
  CHECK(map.size() == 0);
}

TEST_CASE("analyzer::StableRequestMap::renew and settle as operator[] with reset, and find with erase") {
  // local-concurrency and cuda-mpi-race post with renew() and complete
  // with settle(): a table driven that way holds what one driven the old
  // way holds, in the same places (each() visits them in the same order).
  smtrace::analyzer::StableRequestMap<Slot> old_way, new_way;
  std::mt19937_64 random(11);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t request = random() % 200;
    switch (random() % 3) {
      case 0: {  // post (a request present already is renewed too)
        Slot& s = old_way[request];
        reset(s);
        Slot& t = new_way.renew(request);
        CHECK(t.value == 0);
        CHECK(t.items.empty());
        s.value = t.value = step + 1;
        s.items.push_back(step);
        t.items.push_back(step);
        break;
      }
      case 1: {  // complete: an odd value stays (persistent), an even one goes
        bool found_old = false, found_new = false;
        if (Slot* s = old_way.find(request)) {
          found_old = true;
          s->items.push_back(-step);
          if (s->value % 2 == 0) old_way.erase(request);
        }
        new_way.settle(request, [&](Slot& t) {
          found_new = true;
          CHECK(new_way.find(request) == nullptr);
          t.items.push_back(-step);
          return t.value % 2 != 0;
        });
        CHECK(found_old == found_new);
        break;
      }
      default:
        old_way.erase(request);
        new_way.erase(request);
        break;
    }
    REQUIRE(old_way.size() == new_way.size());
    if (step % 89 == 0) {
      std::vector<std::pair<int, std::vector<int>>> a, b;
      old_way.each([&](Slot& s) { a.emplace_back(s.value, s.items); });
      new_way.each([&](Slot& s) { b.emplace_back(s.value, s.items); });
      CHECK(a == b);
      for (uint64_t r = 0; r < 200; ++r) {
        const Slot* s = old_way.find(r);
        const Slot* t = new_way.find(r);
        REQUIRE((s == nullptr) == (t == nullptr));
        if (s) CHECK(s->value == t->value);
      }
    }
  }
}

// One random step on `map` (a FlatRequestMap or a RequestMap of values with
// `seq` and `site`) and on `plain` alike: insert, erase, extract, settle or
// find `request`, checking that the two agree; every thousandth step also
// visits every entry.
template <class Map>
void random_step(Map& map, std::unordered_map<uint64_t, uint64_t>& plain, uint64_t request, uint64_t step,
                 std::mt19937_64& random) {
  switch (random() % 6) {
    case 0: case 1: {
      auto& v = map[request];
      if (plain.count(request)) CHECK(v.seq == plain[request]);
      else CHECK(v.seq == 0);
      v.seq = step;
      plain[request] = step;
      break;
    }
    case 2:
      map.erase(request);
      plain.erase(request);
      break;
    case 3: {
      const auto v = map.extract(request);
      REQUIRE(v.has_value() == (plain.count(request) != 0));
      if (v) CHECK(v->seq == plain[request]);
      plain.erase(request);
      break;
    }
    case 4: {
      // settle: keep an entry whose seq is odd (marked), erase the others.
      bool called = false;
      map.settle(request, [&](auto& v) {
        called = true;
        CHECK(v.seq == plain[request]);
        v.site = 1;
        return v.seq % 2 == 1;
      });
      REQUIRE(called == (plain.count(request) != 0));
      if (called && plain[request] % 2 == 0) plain.erase(request);
      if (called && plain.count(request)) CHECK(map.find(request)->site == 1);
      break;
    }
    default: {
      const auto* v = map.find(request);
      REQUIRE((v != nullptr) == (plain.count(request) != 0));
      if (v) CHECK(v->seq == plain[request]);
    }
  }
  REQUIRE(map.size() == plain.size());
  if (step % 1000 == 0) {
    std::size_t visited = 0;
    map.each([&](uint64_t k, const auto& v) {
      ++visited;
      CHECK(plain.count(k) == 1);
      CHECK(v.seq == plain[k]);
    });
    CHECK(visited == plain.size());
  }
}

TEST_CASE("analyzer::FlatRequestMap::the same entries as std::unordered_map") {
  struct Value {
    uint64_t seq = 0;
    uint32_t site = 0;
  };
  std::mt19937_64 random(11);
  // Keys in few home slots (multiples of a large power of two, and 0) make
  // long probe runs, so erasing has runs to close.
  for (const uint64_t spread : {uint64_t{1}, uint64_t{1} << 40, uint64_t{4096}}) {
    smtrace::analyzer::FlatRequestMap<Value> map;
    std::unordered_map<uint64_t, uint64_t> plain;
    for (uint64_t step = 1; step <= 30000; ++step) {
      const uint64_t request = (random() % 500) * spread;
      random_step(map, plain, request, step, random);
      if (step % 1000 == 0) {
        for (const auto& [k, seq] : plain) {
          const Value* v = map.find(k);
          REQUIRE(v != nullptr);
          CHECK(v->seq == seq);
        }
      }
    }
    map.clear();
    CHECK(map.size() == 0);
    CHECK(map.find(spread) == nullptr);
    map[spread].seq = 1;
    CHECK(map.find(spread)->seq == 1);
  }
}

TEST_CASE("analyzer::RequestMap::the same entries as std::unordered_map, in the window or beside it") {
  struct Value {
    uint64_t seq = 0;
    uint32_t site = 0;
  };
  std::mt19937_64 random(12);
  // Ids as the tracer numbers them (consecutive, a sliding range wider than
  // the window, so some share a slot), ids that all share one slot
  // (multiples of the window and more), and scattered ones.
  enum class Ids { sliding, one_slot, scattered };
  for (const Ids ids : {Ids::sliding, Ids::one_slot, Ids::scattered}) {
    smtrace::analyzer::RequestMap<Value> map;
    std::unordered_map<uint64_t, uint64_t> plain;
    for (uint64_t step = 1; step <= 30000; ++step) {
      uint64_t request = 0;
      switch (ids) {
        case Ids::sliding: request = step / 8 + random() % 300; break;
        case Ids::one_slot: request = (random() % 200) * 4096; break;
        case Ids::scattered: request = random() % 2 ? random() : random() % 500; break;
      }
      random_step(map, plain, request, step, random);
    }
    map.clear();
    CHECK(map.size() == 0);
    CHECK(map.find(4096) == nullptr);
    map[4096].seq = 1;
    map[0].seq = 2;  // the same slot: beside the window
    CHECK(map.find(4096)->seq == 1);
    CHECK(map.find(0)->seq == 2);
    CHECK(map.size() == 2);
  }
  SUBCASE("the window grows with the consecutive ids alive, the others stay beside") {
    smtrace::analyzer::RequestMap<Value> map;
    map[1u << 20].seq = 7;  // slot 0, then beside once id 0 comes
    for (uint64_t id = 0; id < 3000; ++id) map[id].seq = id + 1;
    REQUIRE(map.size() == 3001);
    for (uint64_t id = 0; id < 3000; ++id) REQUIRE(map.find(id)->seq == id + 1);
    CHECK(map.find(1u << 20)->seq == 7);
    for (uint64_t id = 0; id < 3000; id += 2) map.erase(id);
    CHECK(map.size() == 1501);
    for (uint64_t id = 0; id < 3000; ++id) CHECK((map.find(id) != nullptr) == (id % 2 == 1));
    std::size_t visited = 0;
    map.each([&](uint64_t, const Value&) { ++visited; });
    CHECK(visited == 1501);
  }
}

namespace {
struct OpHeadForTest {
  uint64_t seq = 0;
  bool persistent = false;
};
struct ManyForTest : OpHeadForTest {
  std::vector<int> blocks;
  std::vector<int> extra;  // what a Many has beyond its blocks (local-concurrency's conflicts)
};
void reset(ManyForTest& m) {
  static_cast<OpHeadForTest&>(m) = OpHeadForTest{};
  m.blocks.clear();
  m.extra.clear();
}
}  // namespace

TEST_CASE("analyzer::BlockRequestMap::the same operations as a plain map of block lists") {
  // local-concurrency's and cuda-mpi-race's pending operations: renew with
  // one block (a One) or several or none (a Many), visit, settle (an odd
  // seq stays, persistent), erase and to_many, against a std::map of
  // (seq, blocks, extra); each_one and each_many together visit it all.
  using Map = smtrace::analyzer::BlockRequestMap<OpHeadForTest, int, ManyForTest>;
  struct Plain {
    uint64_t seq;
    std::vector<int> blocks, extra;
    bool many;  // where it should be: several blocks or none, or moved by to_many
  };
  std::mt19937_64 random(31);
  for (const uint64_t spread : {uint64_t{1}, uint64_t{4096}}) {
    Map map;
    std::map<uint64_t, Plain> plain;
    for (uint64_t step = 1; step <= 20000; ++step) {
      const uint64_t request = (random() % 40) * spread;
      auto seen = [&](const auto& op) {
        const Plain& p = plain.at(request);
        CHECK(op.seq == p.seq);
        const auto blocks = Map::blocks(op);
        CHECK(std::vector<int>(blocks.begin(), blocks.end()) == p.blocks);
      };
      switch (random() % 6) {
        case 0: case 1: {
          std::vector<int> blocks(random() % 3 == 0 ? random() % 4 : 1);
          for (int& b : blocks) b = static_cast<int>(random() % 100);
          map.renew(request, blocks, [&](auto& op) {
            CHECK(op.seq == 0);
            op.seq = step;
          });
          plain[request] = Plain{step, blocks, {}, blocks.size() != 1};
          break;
        }
        case 2: {
          const bool found = map.visit(request, seen);
          CHECK(found == (plain.count(request) != 0));
          break;
        }
        case 3: {
          bool called = false;
          map.settle(request, [&](auto& op) {
            called = true;
            seen(op);
            return op.seq % 2 == 1;
          });
          CHECK(called == (plain.count(request) != 0));
          if (called && plain[request].seq % 2 == 0) plain.erase(request);
          break;
        }
        case 4: {
          ManyForTest* m = map.to_many(request);
          REQUIRE((m != nullptr) == (plain.count(request) != 0));
          if (m) {
            seen(*m);
            CHECK(m->extra == plain[request].extra);
            m->extra.push_back(static_cast<int>(step));
            plain[request].extra.push_back(static_cast<int>(step));
            plain[request].many = true;
          }
          break;
        }
        default:
          map.erase(request);
          plain.erase(request);
      }
      REQUIRE(map.size() == plain.size());
      if (step % 500 == 0) {
        std::size_t ones = 0, manies = 0;
        map.each_one([&](uint64_t r, const Map::One& op) {
          ++ones;
          REQUIRE(plain.count(r) == 1);
          CHECK(!plain[r].many);
          CHECK(op.seq == plain[r].seq);
        });
        map.each_many([&](ManyForTest& op) {
          ++manies;
          const auto it = std::find_if(plain.begin(), plain.end(), [&](const auto& kv) { return kv.second.seq == op.seq; });
          REQUIRE(it != plain.end());
          CHECK(it->second.many);
          CHECK(op.blocks == it->second.blocks);
          CHECK(op.extra == it->second.extra);
        });
        CHECK(ones + manies == plain.size());
      }
    }
  }
}

namespace {

// Random adds, removes (of what was added, with the place add gave, a
// wrong place, or none) and conflict queries on `map` and on the map
// alone (BasicSegmentMap<0>, the reference), over `space` bytes: the
// same conflicts (the same bytes named) and emptiness at every step.
template <std::size_t MaxFew>
void compare_with_map_alone(uint64_t seed, uint64_t space, int steps) {
  using smtrace::analyzer::AccessMode;
  smtrace::analyzer::BasicSegmentMap<MaxFew> map;
  smtrace::analyzer::BasicSegmentMap<0> alone;
  struct Added {
    uint64_t lo, hi;
    AccessMode mode;
    uint32_t place;
  };
  std::vector<Added> added;
  std::mt19937_64 random(seed);
  for (int step = 0; step < steps; ++step) {
    const uint64_t lo = random() % space;
    const uint64_t hi = lo + random() % 24;  // maybe empty
    const AccessMode mode = random() % 2 ? AccessMode::write : AccessMode::read;
    switch (random() % 5) {
      case 0: case 1: {  // post: add_apart first, as local-concurrency does
        uint32_t place = map.add_apart(lo, hi, mode);
        if (place == 0) place = map.add(lo, hi, mode);
        CHECK(alone.add(lo, hi, mode) == 0);
        added.push_back(Added{lo, hi, mode, place});
        break;
      }
      case 2: case 3: {
        if (added.empty()) break;
        const std::size_t k = random() % added.size();
        const Added a = added[k];
        added.erase(added.begin() + static_cast<std::ptrdiff_t>(k));
        const uint32_t place = random() % 8 == 0 ? static_cast<uint32_t>(random() % (MaxFew + 2)) : a.place;
        map.remove(a.lo, a.hi, a.mode, place);
        alone.remove(a.lo, a.hi, a.mode);
        break;
      }
      default:
        CHECK(map.conflict(lo, hi, mode) == alone.conflict(lo, hi, mode));
        break;
    }
    REQUIRE(map.empty() == alone.empty());
    REQUIRE(map.empty() == std::none_of(added.begin(), added.end(), [](const Added& a) { return a.lo < a.hi; }));
    if (step % 50 == 0)
      for (uint64_t at = 0; at < space; at += 3)
        CHECK(map.conflict(at, at + 5, AccessMode::read) == alone.conflict(at, at + 5, AccessMode::read));
  }
}

}  // namespace

TEST_CASE("analyzer::SegmentMap::the small vector with its places names what the map alone names") {
  // local-concurrency's footprint of pending operations: buffers mostly
  // apart (the small vector, its holes and places), sometimes overlapping
  // (the map, then back to the vector once empty), against the map alone.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    compare_with_map_alone<16>(seed, seed % 2 ? 4096 : 96, 600);
    compare_with_map_alone<4>(seed + 100, seed % 2 ? 4096 : 96, 600);
  }
}

TEST_CASE("analyzer::analyze::fuzz regressions") {
  // Every input tests/fuzz's check target found a crash with
  // (tests/fuzz/regressions/check/), as the one rank file of a trace: the
  // analysis ends with problems, not a crash or an exception.
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SMTRACE_SOURCE_DIR) / "tests/fuzz/regressions/check";
  const fs::path trace = fs::temp_directory_path() / ("smtrace-unit-fuzz-check-" + std::to_string(::getpid()));
  std::size_t inputs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    fs::remove_all(trace);
    fs::create_directories(trace);
    fs::copy_file(entry.path(), trace / "rank-0.smt");
    smtrace::analyzer::Options options;
    options.threads = 1;
    options.happens_before = true;
    smtrace::analyzer::Result result;
    CHECK_NOTHROW(result = smtrace::analyzer::analyze(trace, options));
    ++inputs;
  }
  fs::remove_all(trace);
  CHECK(inputs > 0);
}

TEST_SUITE_END();

namespace {
// Asks in finish() for the replay to free (Context::releasable_replay) and,
// when it gets it, frees every rank's ops and matches, as the SMT model's
// build does; says it reads them no more when `done`.
struct ReleaseSeen {
  bool got = false;
  std::vector<std::size_t> ops_after;  // per rank: p2p(rank).size() after the finish
};
class ReleaseProbe final : public smtrace::analyzer::Check {
 public:
  ReleaseProbe(std::string name, bool done, ReleaseSeen* seen, FinishStage stage = FinishStage::normal)
      : m_name(std::move(name)), m_done(done), m_seen(seen), m_stage(stage) {}
  FinishStage finish_stage() const override { return m_stage; }
  std::string_view name() const override { return m_name; }
  smtrace::analyzer::Severity severity() const override { return smtrace::analyzer::Severity::error; }
  std::string_view description() const override { return "frees the replay's ops for the test"; }
  bool reads_replay_ops() const override { return !m_done; }
  void finish(const smtrace::analyzer::Context& context, std::vector<std::unique_ptr<smtrace::analyzer::RankPass>>&,
              std::vector<smtrace::analyzer::Finding>&) override {
    if (!m_seen) return;
    smtrace::analyzer::Replay* replay = context.releasable_replay();
    m_seen->got = replay != nullptr;
    if (replay) {
      for (uint32_t r = 0; r < context.world_size(); ++r) {
        replay->release_p2p(r);
        replay->release_matches(r);
        CHECK_FALSE(context.replay().matched({r, 0}));
        CHECK(context.replay().payload({r, 0}) == smtrace::analyzer::Payload{});
      }
    }
    for (uint32_t r = 0; r < context.world_size(); ++r) m_seen->ops_after.push_back(context.replay().p2p(r).size());
  }

 private:
  std::string m_name;
  bool m_done;
  ReleaseSeen* m_seen;
  FinishStage m_stage;
};
}  // namespace

TEST_CASE("analyzer: the replay's ops are handed out for freeing only when no check finishing from then on reads them") {
  std::vector<smtrace::test::JsonRank> ranks(2);
  ranks[0].events = {k_init, R"({"call": "SEND", "comm": 0, "peer": 1, "tag": 3, "count": 1, "datatype": 1})", k_fin};
  ranks[1].events = {k_init,
                     R"({"call": "RECV", "comm": 0, "peer": -1, "tag": -1, "count": 1, "datatype": 1,)"
                     R"( "status": {"source": 0, "tag": 3}})",
                     k_fin};
  const auto dir = smtrace::test::write_json_trace("release-replay", ranks);
  // The probe finishes first, then a check that says `later_done`.
  auto run = [&](bool probe_done, std::optional<bool> later_done, ReleaseSeen& seen) {
    smtrace::analyzer::Options options;
    options.checks = {"release-probe"};
    options.extra_checks.push_back(
        [&seen, probe_done] { return std::make_unique<ReleaseProbe>("release-probe", probe_done, &seen); });
    if (later_done) {
      options.checks.insert("release-later");
      options.extra_checks.push_back(
          [later_done] { return std::make_unique<ReleaseProbe>("release-later", *later_done, nullptr); });
    }
    return smtrace::analyzer::analyze(dir, options);
  };
  ReleaseSeen kept;
  const smtrace::analyzer::Result before = run(false, std::nullopt, kept);
  CHECK_FALSE(kept.got);
  CHECK(kept.ops_after == std::vector<std::size_t>{1, 1});
  CHECK(before.stats.at("p2p_operations") == 2);
  CHECK(before.stats.at("matches") == 1);
  SUBCASE("the last check, done with them: freed, and the stats count them as before") {
    ReleaseSeen seen;
    const smtrace::analyzer::Result after = run(true, std::nullopt, seen);
    CHECK(seen.got);
    CHECK(seen.ops_after == std::vector<std::size_t>{0, 0});
    CHECK(after.stats == before.stats);
  }
  SUBCASE("a later check that still reads them: not handed out") {
    ReleaseSeen seen;
    run(true, false, seen);
    CHECK_FALSE(seen.got);
    CHECK(seen.ops_after == std::vector<std::size_t>{1, 1});
  }
  SUBCASE("a later check done with them too: handed out") {
    ReleaseSeen seen;
    run(true, true, seen);
    CHECK(seen.got);
  }
  // The deadlock check reads them and finishes after the marks, after the
  // normal checks: a probe at the normal stage finishes before it and gets
  // nothing; one at the last stage, as the SMT checks are, gets them.
  for (const auto stage : {smtrace::analyzer::Check::FinishStage::normal,
                           smtrace::analyzer::Check::FinishStage::last}) {
    CAPTURE(static_cast<int>(stage));
    ReleaseSeen seen;
    smtrace::analyzer::Options options;
    options.checks = {"release-probe", "deadlock"};
    options.extra_checks.push_back(
        [&seen, stage] { return std::make_unique<ReleaseProbe>("release-probe", true, &seen, stage); });
    smtrace::analyzer::analyze(dir, options);
    CHECK(seen.got == (stage == smtrace::analyzer::Check::FinishStage::last));
  }
}
