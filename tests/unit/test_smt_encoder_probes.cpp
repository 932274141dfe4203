// The model's probe links (build_model, "Probes"): a probe that returned a
// status takes the first receive posted after it on its communicator whose
// envelope accepts that status (its recorded send when that receive took a
// message of that source and tag), and a wildcard probe narrower than that
// receive hands the receive its own envelope. Many probes, wildcard and
// named, on a trace whose links a scan of every receive from the rank's
// first (the model's earlier way) computes here as the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "smt_encoder/model.hpp"
#include "smt_model_check.hpp"

namespace {

using namespace smtrace::test;
namespace smt = smtrace::smt;
using smt::k_none;
using smt::OpKind;

// Rank 0's calls, in order: receives (envelope, and the message taken) and
// probes (envelope, and the status seen, if any).
struct Call0 {
  bool probe = false;
  int32_t peer = 0, tag = 0;     // envelope (smt::k_any for a wildcard)
  int32_t src = -1, stag = 0;    // probes: the status
  uint32_t message = 0;          // receives: the message taken
};

// What the reference expects of one probe, and of one receive at the end.
struct Expect {
  uint32_t linked = k_none;  // probes: the receive (rank 0's k-th) whose recorded send it takes
  uint32_t probe = k_none;   // receives: the probe (rank 0's j-th) bound to it
  int32_t peer = 0, tag = 0;
};

}  // namespace

TEST_CASE("smt model: probe links, many wildcard and named probes, against a scan from the rank's first receive") {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    uint64_t state = seed * 0x9e3779b97f4a7c15ULL;
    auto next = [&](uint32_t n) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<uint32_t>((state >> 33) % n);
    };
    // Messages in the order rank 0 receives them: (sender, tag).
    const uint32_t n = 400;
    std::vector<std::pair<int32_t, int32_t>> messages;
    for (uint32_t i = 0; i < n; ++i) messages.emplace_back(1 + next(2), 3 + next(3));
    auto envelope = [&](int32_t src, int32_t tag, uint32_t pick) {
      return std::pair{pick & 1 ? smt::k_any : src, pick & 2 ? smt::k_any : tag};
    };
    std::vector<Call0> calls;
    for (uint32_t i = 0; i < n; ++i) {
      // Up to three probes before each receive: of this message, or of the
      // next or the one after (linked past this receive, or stopped at it).
      for (uint32_t k = next(4); k > 0; --k) {
        Call0 c;
        c.probe = true;
        const uint32_t what = next(5);
        const uint32_t ahead = what == 4 ? 2 : what == 3 ? 1 : 0;
        const auto& m = messages[std::min(i + ahead, n - 1)];
        c.src = m.first;
        c.stag = m.second;
        std::tie(c.peer, c.tag) = envelope(m.first, m.second, next(4));
        calls.push_back(c);
      }
      Call0 r;
      std::tie(r.peer, r.tag) = envelope(messages[i].first, messages[i].second, next(4));
      r.message = i;
      calls.push_back(r);
    }

    // The reference: the earlier scan, over rank 0's receives from the first.
    std::vector<Call0> recvs;
    std::vector<uint32_t> recv_at;  // position in `calls`
    for (uint32_t c = 0; c < calls.size(); ++c) {
      if (!calls[c].probe) {
        recvs.push_back(calls[c]);
        recv_at.push_back(c);
      }
    }
    std::vector<Expect> probes_expected, recvs_expected(recvs.size());
    for (uint32_t k = 0; k < recvs.size(); ++k) {
      recvs_expected[k].peer = recvs[k].peer;
      recvs_expected[k].tag = recvs[k].tag;
    }
    for (uint32_t c = 0; c < calls.size(); ++c) {
      if (!calls[c].probe) continue;
      const Call0& p = calls[c];
      Expect e;
      const auto j = static_cast<uint32_t>(probes_expected.size());
      for (uint32_t k = 0; k < recvs.size(); ++k) {
        Expect& rk = recvs_expected[k];
        if (recv_at[k] <= c) continue;
        if ((rk.peer != smt::k_any && rk.peer != p.src) || (rk.tag != smt::k_any && rk.tag != p.stag)) continue;
        const auto& m = messages[recvs[k].message];
        if (m.first == p.src && m.second == p.stag) {
          e.linked = k;
          const bool narrower = (p.peer == smt::k_any && rk.peer != smt::k_any) ||
                                (p.tag == smt::k_any && rk.tag != smt::k_any);
          if (narrower && rk.probe == k_none) {
            rk.probe = j;
            rk.peer = p.peer;
            rk.tag = p.tag;
          }
        }
        break;
      }
      probes_expected.push_back(e);
    }

    // The trace: the senders post in the order rank 0 takes their messages.
    Builder b(3);
    for (const Call0& c : calls) {
      if (c.probe) {
        tf::Event& e = b.add(Call::Probe, 0);
        e.comm = 0;
        e.peer = c.peer == smt::k_any ? tf::k_any_source : c.peer;
        e.tag = c.tag == smt::k_any ? tf::k_any_tag : c.tag;
        e.status.source = c.src;
        e.status.tag = c.stag;
        continue;
      }
      const auto& m = messages[c.message];
      tf::Event& s = b.add(Call::Send, static_cast<uint32_t>(m.first));
      s.comm = 0;
      s.peer = 0;
      s.tag = m.second;
      s.count = 1;
      s.datatype = k_int;
      tf::Event& e = b.add(Call::Recv, 0);
      e.comm = 0;
      e.peer = c.peer == smt::k_any ? tf::k_any_source : c.peer;
      e.tag = c.tag == smt::k_any ? tf::k_any_tag : c.tag;
      e.count = 1;
      e.datatype = k_int;
      e.status.source = m.first;
      e.status.tag = m.second;
    }
    for (uint32_t r = 0; r < 3; ++r) b.add(Call::Finalize, r);
    const smt::Model model = model_of(b.trace());

    std::vector<uint32_t> model_recvs, model_probes;
    for (uint32_t i = 0; i < model.ops.size(); ++i) {
      const smt::Op& o = model.ops[i];
      if (o.rank != 0) continue;
      if (o.kind == OpKind::recv) model_recvs.push_back(i);
      if (o.kind == OpKind::probe) model_probes.push_back(i);
    }
    auto by_post = [&](uint32_t a, uint32_t c) { return model.ops[a].post < model.ops[c].post; };
    std::sort(model_recvs.begin(), model_recvs.end(), by_post);
    std::sort(model_probes.begin(), model_probes.end(), by_post);
    REQUIRE(model_recvs.size() == recvs.size());
    REQUIRE(model_probes.size() == probes_expected.size());
    uint32_t linked = 0, bound = 0;
    for (uint32_t j = 0; j < model_probes.size(); ++j) {
      const smt::Op& p = model.ops[model_probes[j]];
      const Expect& e = probes_expected[j];
      INFO("seed " << seed << ", probe " << j);
      if (e.linked == k_none) {
        CHECK(p.recorded == k_none);
      } else {
        const smt::Op& r = model.ops[model_recvs[e.linked]];
        REQUIRE(r.recorded != k_none);
        CHECK(p.recorded == r.recorded);
        ++linked;
      }
    }
    for (uint32_t k = 0; k < model_recvs.size(); ++k) {
      const smt::Op& r = model.ops[model_recvs[k]];
      const Expect& e = recvs_expected[k];
      INFO("seed " << seed << ", receive " << k);
      CHECK(r.probe == (e.probe == k_none ? k_none : model_probes[e.probe]));
      CHECK(r.peer == e.peer);
      CHECK(r.tag == e.tag);
      bound += e.probe != k_none;
    }
    // The pattern reaches every branch: links, bindings, probes left unlinked.
    CHECK(linked > 100);
    CHECK(bound > 20);
    CHECK(linked < model_probes.size());
  }
}
