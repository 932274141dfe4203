#include "analyzer/replay.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/analyze.hpp"
#include "analyzer/channel_table.hpp"
#include "analyzer/comms.hpp"
#include "analyzer/request_map.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::analyzer {

using format::Call;
using format::Event;
using format::Family;
using format::RequestEffect;
using format::Role;

namespace {

int32_t value_or(const std::optional<int32_t>& v, int32_t fallback) { return v ? *v : fallback; }

// What a request stands for while it is active.
struct Active {
  Outstanding::Kind kind = Outstanding::Kind::other;
  uint32_t index = 0;   // into ops or colls
};


// A persistent request's template: the op each Start posts.
struct Persistent {
  P2POp op;
  uint32_t payload = 0;
  bool active = false;
};

struct PayloadHash {
  std::size_t operator()(const Payload& p) const {
    return std::hash<uint64_t>()(static_cast<uint64_t>(p.count) * 0x9E3779B97F4A7C15ull ^ p.datatype);
  }
};

// A rank's state in the replay besides its ops and payloads (Replay::RankP2P).
struct RankReplay {
  // Op index -> index into payloads, for the indices an op's payload_slot
  // has no room for (k_payload_aside there).
  std::unordered_map<uint32_t, uint32_t> payload_aside;
  std::unordered_map<Payload, uint32_t, PayloadHash> payload_index;
  std::vector<CollOp> colls;
  std::vector<RmaEvent> rma;
  std::vector<Outstanding> outstanding;
  std::optional<Event> blocked;
  RequestMap<Active> active;  // read in end() sorted by request
  std::unordered_map<uint64_t, Persistent> persistent;
  std::unordered_map<uint64_t, uint32_t> messages;  // matched probe's message -> its receive in ops
  std::deque<uint32_t> unnamed;  // receives of matched probes recorded without their message, in order
  RankThreads threads;
};

}  // namespace

struct Replay::Impl {
  std::vector<RankReplay> ranks;
  std::vector<std::vector<CollInstance>> instances;       // per global comm
  uint64_t matches = 0;
  std::vector<uint64_t> unmatched;  // per rank: its ops that matched nothing
  std::vector<CollInstance> no_instances;
  uint32_t aside_from = k_payload_aside;  // payload indices kept aside from the ops
};

namespace {

class ReplayPass final : public RankPass {
 public:
  ReplayPass(RankReplay& out, std::vector<P2POp>& ops, std::vector<Payload>& payloads,
             const format::RankHeader& header, uint32_t aside_from)
      : m(out), m_ops(ops), m_payloads(payloads), m_threads(out.threads, header), m_aside_from(aside_from) {}

  void event(const Event& e) override {
    m_threads.event(e);
    if (e.pending) m.blocked = e;
    const format::CallTraits& t = format::call_traits(e.call);
    // A call that returned an error (the program set MPI_ERRORS_RETURN)
    // posted no message, joined no collective and synchronized nothing. A
    // failed receive is kept: MPI_ERR_TRUNCATE still consumed its message.
    if (!e.pending && e.rc != 0 &&
        (t.role == Role::send || t.role == Role::collective || t.role == Role::rma_comm ||
         t.role == Role::rma_sync || t.request == RequestEffect::start))
      return;
    switch (t.request) {
      case RequestEffect::persistent: {
        Persistent p;
        p.op = base(e);
        p.op.send = t.role == Role::send;
        p.payload = payload(e.datatype, e.count);
        m.persistent[e.request] = std::move(p);
        return;
      }
      case RequestEffect::start:
        if (e.requests.empty()) start(e, e.request);
        for (uint64_t r : e.requests) start(e, r);
        return;
      case RequestEffect::complete_all: case RequestEffect::complete_any: case RequestEffect::complete_some:
        for (const format::CompletedRequest& done : e.completed) finish(e, done);
        return;
      case RequestEffect::free:
        // An active request freed still completes; the trace cannot tell when.
        m.persistent.erase(e.request);
        return;
      case RequestEffect::query:
        if (!e.pending && e.flag.value_or(false)) peek(e);
        return;
      case RequestEffect::cancel:
        if (const Active* a = m.active.find(e.request); a && a->kind == Outstanding::Kind::p2p)
          m_ops[a->index].cancel_asked = true;
        break;
      case RequestEffect::none: case RequestEffect::create:
        break;
    }
    if (t.resource == format::Resource::message_new) {
      matched_probe(e);
      return;
    }
    if (t.resource == format::Resource::message_free && matched_receive(e, t)) return;
    switch (t.role) {
      case Role::send: case Role::recv: {
        // Made in place: most events are sends and receives.
        const auto index = static_cast<uint32_t>(m_ops.size());
        P2POp& op = push_base(e, t, index, payload(e.datatype, e.count));
        const bool send = t.role == Role::send;
        if (send) op.send = true;
        if (!send && e.status.source) {
          op.status_source = *e.status.source;
          op.status_tag = value_or(e.status.tag, k_unknown);
        }
        const bool blocking = t.blocks;
        if (blocking && !e.pending) complete(op, e);
        if (!blocking && e.request) {
          m.active[e.request] = {Outstanding::Kind::p2p, index};
        }
        return;
      }
      case Role::sendrecv: {
        P2POp send = base(e);
        send.send = true;
        P2POp recv = base(e);
        recv.peer = value_or(e.recv_peer, k_unknown);
        recv.tag = value_or(e.recv_tag, k_unknown);
        if (e.status.source) {
          recv.status_source = *e.status.source;
          recv.status_tag = value_or(e.status.tag, k_unknown);
        }
        if (!e.pending) {
          complete(send, e);
          complete(recv, e);
        }
        push(std::move(send), payload(e.datatype, e.count));
        // Sendrecv_replace receives into its send buffer.
        push(std::move(recv), e.call == Call::Sendrecv_replace ? payload(e.datatype, e.count)
                                                               : payload(e.recv_datatype, e.recv_count));
        return;
      }
      case Role::collective: {
        CollOp op;
        op.seq = e.seq;
        op.site = e.site;
        op.comm = e.comm;
        op.call = e.call;
        op.pending = e.pending;
        op.in_place = e.in_place;
        op.root = value_or(e.peer, k_unknown);
        op.op = e.op;
        op.datatype = e.datatype;
        op.count = e.count;
        op.stack = e.stack;
        op.request = e.request;
        if (!e.request && !e.pending) op.done_seq = e.seq;
        m.colls.push_back(std::move(op));
        if (e.request) m.active[e.request] = {Outstanding::Kind::coll, static_cast<uint32_t>(m.colls.size() - 1)};
        return;
      }
      case Role::none: case Role::env: case Role::probe: case Role::rma_comm: case Role::rma_sync:
      case Role::request: case Role::handle: case Role::local_access: case Role::cuda: case Role::local:
      case Role::query: case Role::outside: case Role::thread:
        break;
    }
    if (t.family == Family::rma) {
      RmaEvent r;
      r.seq = e.seq;
      r.site = e.site;
      r.window = e.window;
      r.peer = value_or(e.peer, k_unknown);
      r.group = e.group;
      r.assert_flags = e.assert_flags;
      r.lock_type = e.lock_type;
      r.call = e.call;
      r.epoch = format::epoch_of(e);
      r.pending = e.pending;
      m.rma.push_back(r);
      // Rput, Rget, ...: completed like any request.
      if (e.request) m.active[e.request] = {Outstanding::Kind::other, static_cast<uint32_t>(m.rma.size() - 1)};
      return;
    }
  }

  void end() override {
    m.active.each([&](uint64_t request, const Active& a) { m.outstanding.push_back({a.kind, request, a.index}); });
    for (const auto& [request, p] : m.persistent) {
      if (!p.active) m.outstanding.push_back({Outstanding::Kind::other, request, 0});
    }
    // Active requests have distinct ids, inactive persistent ones too; an id
    // in both (a handle reused without a free) lists the active one first.
    std::stable_sort(m.outstanding.begin(), m.outstanding.end(),
                     [](const Outstanding& a, const Outstanding& b) { return a.request < b.request; });
    m.active.clear();
    m.persistent.clear();
    m.messages.clear();
    m.unnamed.clear();
    m.payload_index.clear();
  }

 private:
  P2POp base(const Event& e) {
    P2POp op;
    fill_base(op, e, format::call_traits(e.call));
    return op;
  }

  // Set what every op takes from its posting event on a new `op` (`t`:
  // the traits of e.call).
  static void fill_base(P2POp& op, const Event& e, const format::CallTraits& t) {
    op.seq = e.seq;
    op.site = e.site;
    op.comm = e.comm;
    op.peer = value_or(e.peer, k_unknown);
    op.tag = value_or(e.tag, k_unknown);
    op.call = e.call;
    // Bit fields (a read-modify-write each): set only when not as made.
    if (e.pending) [[unlikely]] op.posted_pending = true;
    if (t.mode != format::SendMode::none) op.mode = t.mode;
  }

  // MPI_Mprobe, or an MPI_Improbe that found a message: the message is
  // matched here (MPI-3.1 section 3.8.2: it leaves the queue at the probe),
  // so its receive is posted here in matching order; the MPI_Mrecv or
  // MPI_Imrecv's completion that receives Event.message completes it.
  // Tracers before 2026-11-24 left the message out of a blocking
  // MPI_Mprobe: its receive is then the next MPI_Mrecv / MPI_Imrecv of a
  // message no recorded probe returned (matched_receive).
  void matched_probe(const Event& e) {
    if (e.pending || e.message == format::k_message_no_proc || !e.status.source || *e.status.source < 0) return;
    if (!format::call_traits(e.call).blocks && !e.flag.value_or(false)) return;
    P2POp op = base(e);
    op.status_source = *e.status.source;
    op.status_tag = value_or(e.status.tag, k_unknown);
    if (e.message == format::k_message_null) {
      m.unnamed.push_back(static_cast<uint32_t>(m_ops.size()));
    } else {
      m.messages[e.message] = static_cast<uint32_t>(m_ops.size());
    }
    // Datatype and count come with the MPI_Mrecv / MPI_Imrecv; until then a
    // negative count, which the signature checks leave alone.
    push(std::move(op), payload(0, -1));
  }

  // MPI_Mrecv / MPI_Imrecv of a message a recorded probe took: complete (or
  // start completing) its receive; false when the probe is not in the trace.
  bool matched_receive(const Event& e, const format::CallTraits& t) {
    if (e.message == format::k_message_no_proc) return true;  // from MPI_PROC_NULL: nothing arrives
    uint32_t index = 0;
    if (auto it = m.messages.find(e.message); it != m.messages.end()) {
      index = it->second;
      m.messages.erase(it);
    } else if (auto u = unnamed_probe(e); u != m.unnamed.end()) {
      index = *u;
      m.unnamed.erase(u);
    } else {
      return false;
    }
    set_payload(m_ops[index], index, payload(e.datatype, e.count));
    if (t.request == RequestEffect::create) {
      if (e.request) m.active[e.request] = {Outstanding::Kind::p2p, index};
    } else if (!e.pending) {
      complete(m_ops[index], e);
    }
    return true;
  }

  // The first probe recorded without its message whose message `e` can
  // be: on e's communicator, with e's status when e has one (MPI_Mrecv).
  std::deque<uint32_t>::iterator unnamed_probe(const Event& e) {
    return std::find_if(m.unnamed.begin(), m.unnamed.end(), [&](uint32_t i) {
      const P2POp& op = m_ops[i];
      return op.comm == e.comm && (!e.status.source || (op.status_source == *e.status.source &&
                                                        op.status_tag == value_or(e.status.tag, k_unknown)));
    });
  }

  // MPI_Request_get_status returned true: the operation is complete, the
  // request stays allocated until a Wait, Test or Request_free.
  void peek(const Event& e) {
    const Active* a = m.active.find(e.request);
    if (!a) return;
    if (a->kind == Outstanding::Kind::p2p) {
      P2POp& op = m_ops[a->index];
      if (op.done()) return;
      complete(op, e);
      if (!op.send && e.status.source) {
        op.status_source = *e.status.source;
        op.status_tag = value_or(e.status.tag, k_unknown);
      }
    } else if (a->kind == Outstanding::Kind::coll && m.colls[a->index].done_seq == k_never) {
      m.colls[a->index].done_seq = e.seq;
    }
  }

  uint32_t payload(uint32_t datatype, int64_t count) {
    // Most programs post the same few payloads over and over: the last
    // two found are tried before the hash map (the last one here, inline).
    const uint32_t last = m_recent[0];
    if (last != k_none && m_payloads[last].datatype == datatype && m_payloads[last].count == count) return last;
    return find_payload(datatype, count);
  }

  [[gnu::noinline]] uint32_t find_payload(uint32_t datatype, int64_t count) {
    const Payload p{datatype, count};
    for (uint32_t i : m_recent)
      if (i != k_none && m_payloads[i] == p) return i;
    auto [it, fresh] = m.payload_index.try_emplace(p, static_cast<uint32_t>(m_payloads.size()));
    if (fresh) m_payloads.push_back(p);
    m_recent[1] = m_recent[0];
    m_recent[0] = it->second;
    return it->second;
  }

  void push(P2POp op, uint32_t payload_index) {
    m_ops.push_back(std::move(op));
    set_payload(m_ops.back(), static_cast<uint32_t>(m_ops.size() - 1), payload_index);
  }

  // Push base(e), ops[index] (`index`: m_ops.size() before), and return
  // it (`t`: the traits of e.call).
  P2POp& push_base(const Event& e, const format::CallTraits& t, uint32_t index, uint32_t payload_index) {
    P2POp& op = m_ops.emplace_back();
    fill_base(op, e, t);
    set_payload(op, index, payload_index);
    return op;
  }

  // Set the payload of `op`, ops[index]: in the op, or aside when its
  // index has no room there (an entry aside that a later set leaves
  // behind is not read: the op's slot is not k_payload_aside then).
  void set_payload(P2POp& op, uint32_t index, uint32_t payload_index) {
    if (payload_index < m_aside_from) [[likely]] {
      op.payload_slot = payload_index & k_payload_aside;
    } else {
      op.payload_slot = k_payload_aside;
      m.payload_aside[index] = payload_index;
    }
  }

  static void complete(P2POp& op, const Event& e) {
    op.done_delta = e.seq >= op.seq && e.seq - op.seq < k_none ? static_cast<uint32_t>(e.seq - op.seq) : k_none;
    op.done_site = e.site;
    op.done_call = e.call;
  }

  void start(const Event& e, uint64_t request) {
    auto it = m.persistent.find(request);
    if (it == m.persistent.end()) return;
    P2POp op = it->second.op;
    op.seq = e.seq;
    op.site = e.site;
    op.call = e.call;
    op.posted_pending = false;
    push(std::move(op), it->second.payload);
    m.active[request] = {Outstanding::Kind::p2p, static_cast<uint32_t>(m_ops.size() - 1)};
    it->second.active = true;
  }

  void finish(const Event& e, const format::CompletedRequest& done) {
    const Active* found = m.active.find(done.request);
    if (!found) return;
    const Active a = *found;
    m.active.erase(done.request);
    if (!m.persistent.empty()) {  // (find in an empty std::unordered_map still hashes)
      if (auto p = m.persistent.find(done.request); p != m.persistent.end()) p->second.active = false;
    }
    if (a.kind == Outstanding::Kind::p2p) {
      P2POp& op = m_ops[a.index];
      if (op.done()) return;  // MPI_Request_get_status saw it complete
      complete(op, e);
      if (done.status.cancelled) op.cancelled = true;  // (a bit field: not written when false, as made)
      if (!op.send && done.status.source) {
        op.status_source = *done.status.source;
        op.status_tag = value_or(done.status.tag, k_unknown);
      }
    } else if (a.kind == Outstanding::Kind::coll && m.colls[a.index].done_seq == k_never) {
      m.colls[a.index].done_seq = e.seq;
    }
  }

  RankReplay& m;
  std::vector<P2POp>& m_ops;
  std::vector<Payload>& m_payloads;
  ThreadCollector m_threads;
  std::array<uint32_t, 2> m_recent{k_none, k_none};  // payload indices last found
  uint32_t m_aside_from;  // payload indices from here on are kept aside
};

}  // namespace

Replay::Replay() : m_impl(std::make_unique<Impl>()) {}
Replay::~Replay() = default;

std::unique_ptr<RankPass> Replay::rank_pass(const RankData& data) {
  if (m_impl->ranks.size() <= data.rank) {
    // Sized up front by analyze() before any thread starts; this is the
    // single-threaded fallback for tests.
    resize_ranks(data.rank + 1);
  }
  RankReplay& out = m_impl->ranks[data.rank];
  RankP2P& p2p = m_p2p[data.rank];
  // Sends and receives are most events of a large trace: reserve for an
  // estimate (about 20 bytes per event on disk) so the vector rarely moves;
  // pages never touched cost nothing. No huge pages (MADV_HUGEPAGE) for it:
  // in a VM whose free 2 MiB blocks go back to the host, each huge page's
  // first touch costs the host's fault as well: check's system time on a
  // 16 x 500k halo was about 2.5 times the 4 KiB pages' (docs/bench.md,
  // issue 19 item 2).
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(data.file, ec);
  if (!ec) {
    p2p.ops.reserve(static_cast<std::size_t>(std::min<uintmax_t>(bytes / 16, uintmax_t{1} << 28)));
  }
  return std::make_unique<ReplayPass>(out, p2p.ops, p2p.payloads, data.header, m_impl->aside_from);
}

void Replay::resize_ranks(std::size_t ranks) {
  m_impl->ranks.resize(ranks);
  m_p2p.resize(ranks);
}

void Replay::reserve_ranks(uint32_t world_size) { resize_ranks(world_size); }

void Replay::keep_payloads_aside_from(uint32_t index) { m_impl->aside_from = std::min(index, k_payload_aside); }

void Replay::replay(const Context& context) {
  Impl& m = *m_impl;
  const uint32_t world_size = context.world_size();
  resize_ranks(world_size);
  const CommTable& comms = context.comms();

  // Sends by channel (comm, sender, receiver, tag), in the sender's order:
  // each channel's queue is its first and last send not yet received, and
  // a queued send's match slot links it to the next (OpRef::index, its rank
  // left k_none: not matched) until a receive takes it. One table per
  // sender, so that the ranks run in parallel, in three steps with nothing
  // shared but disjoint slots: each sender makes its own table and links;
  // each receiver takes, in its posting order, from the channels to it (a
  // channel has one receiver, so each queue and each send's slot is
  // touched by one thread, the tables' layout by none); each sender
  // unlinks what no receive took. The matches are the same whatever the
  // thread count: each channel's sends are taken in its receiver's order.
  static_assert(ChannelTable::k_empty == k_none, "a queued send's link is an OpRef index");
  // Rank r's local communicator -> global index (k_no_comm when unknown),
  // remembered for the last communicator asked: most ops of a rank name
  // the one they named before. One per job (rank).
  struct LastComm {
    const CommTable& comms;
    uint32_t rank = k_no_comm, local = 0, global = k_no_comm;
    uint32_t operator()(uint32_t r, uint32_t id) {
      if (r != rank || id != local) {
        rank = r;
        local = id;
        global = comms.global(r, id);
      }
      return global;
    }
  };
  std::vector<ChannelTable> channels(world_size);
  m_match.assign(world_size, {});
  // Each rank's match slots by world rank, and its ops, as plain arrays
  // (the loops below index them once or twice per op).
  std::vector<OpRef*> links_of(world_size);
  std::vector<uint64_t> matches(world_size, 0);  // per receiver: its receives that took a send
  std::vector<uint64_t> queued(world_size, 0);   // per sender: its sends queued, and of them
  std::vector<uint64_t> left(world_size, 0);     // those no receive took
  const unsigned threads = format::thread_count(context.options().threads, world_size);
  // Step 0: each sender's table and links.
  auto link_sends = [&](uint32_t r) {
    m_match[r].assign(m_p2p[r].ops.size(), OpRef{});
    links_of[r] = m_match[r].data();
    LastComm global_of{comms};
    ChannelTable& mine = channels[r];
    OpRef* const links = links_of[r];
    const P2POp* const ops = m_p2p[r].ops.data();
    const auto n = static_cast<uint32_t>(m_p2p[r].ops.size());
    uint64_t sends = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const P2POp& op = ops[i];
      if (!op.send || op.peer < 0) continue;
      // As comms.world_rank(r, op.comm, op.peer), the global index looked up once.
      const uint32_t g = global_of(r, op.comm);
      if (g == k_no_comm) continue;
      auto dest = comms.comm(g).peer(r, op.peer);
      if (!dest) continue;
      ChannelTable::Queue& q = mine[{g, r, *dest, op.tag}];
      if (q.tail == ChannelTable::k_empty) q.head = i;
      else links[q.tail].index = i;
      q.tail = i;
      ++sends;
    }
    queued[r] = sends;
  };
  // Step 1: each receiver takes from the channels to it.
  auto take_sends = [&](uint32_t r) {
    LastComm global_of{comms};
    OpRef* const links = links_of[r];
    const P2POp* const ops = m_p2p[r].ops.data();
    const auto n = static_cast<uint32_t>(m_p2p[r].ops.size());
    uint64_t taken = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const P2POp& op = ops[i];
      if (op.send || op.cancelled) continue;
      int32_t source = op.status_source;
      int32_t tag = op.status_tag;
      if (source == k_unknown) {
        // Never completed: it can only have been waiting for a specific send.
        if (op.peer < 0 || op.tag == format::k_any_tag) continue;
        source = op.peer;
        tag = op.tag;
      }
      if (source < 0) continue;  // MPI_PROC_NULL
      const uint32_t g = global_of(r, op.comm);
      if (g == k_no_comm) continue;
      auto from = comms.comm(g).peer(r, source);
      if (!from || *from >= world_size) continue;
      ChannelTable::Queue* q = channels[*from].find({g, *from, r, tag});
      if (!q || q->head == ChannelTable::k_empty) continue;
      const uint32_t s = q->head;
      OpRef& sent = links_of[*from][s];
      q->head = sent.index;  // k_none (k_empty) after the last
      if (q->head == ChannelTable::k_empty) q->tail = ChannelTable::k_empty;
      sent = OpRef{r, i};
      links[i] = OpRef{*from, s};
      ++taken;
    }
    matches[r] = taken;
  };
  // Step 2: sends no receive took: unlink them (no match).
  auto unlink_rest = [&](uint32_t job) {
    OpRef* const links = links_of[job];
    uint64_t unlinked = 0;
    channels[job].each([&](const ChannelKey&, const ChannelTable::Queue& q) {
      for (uint32_t s = q.head; s != ChannelTable::k_empty; ++unlinked) {
        OpRef& sent = links[s];
        s = sent.index;
        sent = OpRef{};
      }
    });
    left[job] = unlinked;
    channels[job].clear();
  };
  // The three steps on threads started once, each step after the one before.
  format::run_steps_on_threads(threads, 3, world_size, [&](std::size_t step, std::size_t job) {
    const auto r = static_cast<uint32_t>(job);
    if (step == 0) link_sends(r);
    else if (step == 1) take_sends(r);
    else unlink_rest(r);
  });
  m.matches = 0;
  for (const uint64_t taken : matches) m.matches += taken;
  // Every match links one receive and one send: a rank's ops less its
  // receives that took a send and its sends that a receive took.
  m.unmatched.assign(world_size, 0);
  for (uint32_t r = 0; r < world_size; ++r) m.unmatched[r] = m_p2p[r].ops.size() - matches[r] - (queued[r] - left[r]);

  // Collectives: the n-th call of each member on a communicator.
  m.instances.assign(comms.size(), {});
  for (uint32_t r = 0; r < world_size; ++r) {
    std::unordered_map<uint32_t, uint32_t> position;  // global comm -> calls so far
    const auto& colls = m.ranks[r].colls;
    for (uint32_t i = 0; i < colls.size(); ++i) {
      const uint32_t g = comms.global(r, colls[i].comm);
      if (g == k_no_comm) continue;
      const GlobalComm& comm = comms.comm(g);
      auto me = comm.rank_of(r);
      if (!me) continue;
      const uint32_t n = position[g]++;
      auto& list = m.instances[g];
      while (list.size() <= n) {
        CollInstance inst;
        inst.comm = g;
        inst.position = static_cast<uint32_t>(list.size());
        inst.member_op.assign(comm.world_ranks.size(), k_none);
        list.push_back(std::move(inst));
      }
      list[n].member_op[static_cast<std::size_t>(*me)] = i;
    }
  }
}

namespace {

// The fields of a CollOp, in order: `io` is a WireWriter (`c` const) or a WireReader.
template <class Io, class Coll>
void code_coll(Io& io, Coll& c) {
  io(c.seq);
  io(c.done_seq);
  io(c.request);
  io(c.site);
  io(c.comm);
  io(c.root);
  io(c.op);
  io(c.datatype);
  io(c.count);
  io(c.signature_bytes);
  io.plain(c.stack);
  io(c.call);
  io(c.pending);
  io(c.in_place);
}

// The fields of a ThreadEvent, as code_coll.
template <class Io, class Thread>
void code_thread_event(Io& io, Thread& t) {
  io(t.seq);
  io(t.t_start);
  io(t.t_end);
  io(t.effect);
  io(t.lane);
  io(t.thread);
  io(t.object);
  io(t.other);
  io(t.peer);
  io(t.count);
  io.plain(t.dep_addrs);
  io.plain(t.dep_kinds);
  io(t.pending);
}

// An entry of RankReplay::payload_aside.
struct Aside {
  uint32_t op = 0;
  uint32_t payload = 0;
};

}  // namespace

void Replay::save_rank(uint32_t rank, WireWriter& out) const {
  const RankP2P& p2p = m_p2p.at(rank);
  const RankReplay& r = m_impl->ranks.at(rank);
  // Room for the plain copies at once: grown by doubling, the bytes would
  // hold up to twice the ops (and three copies while one is moved), which
  // is what bounds a reading process's memory (one rank per thread).
  std::string& bytes = out.bytes();
  bytes.reserve(bytes.size() + p2p.ops.size() * sizeof(P2POp) + p2p.payloads.size() * sizeof(Payload) +
                r.colls.size() * sizeof(CollOp) + r.rma.size() * sizeof(RmaEvent) +
                r.outstanding.size() * sizeof(Outstanding) + (std::size_t{1} << 12));
  out.plain(p2p.ops);
  out.plain(p2p.payloads);
  std::vector<Aside> aside;
  aside.reserve(r.payload_aside.size());
  for (const auto& [op, payload] : r.payload_aside) aside.push_back({op, payload});
  std::sort(aside.begin(), aside.end(), [](const Aside& a, const Aside& b) { return a.op < b.op; });  // same bytes each time
  out.plain(aside);
  out.list(r.colls, [](WireWriter& w, const CollOp& c) { code_coll(w, c); });
  out.plain(r.rma);
  out.plain(r.outstanding);
  out.optional(r.blocked, [](WireWriter& w, const Event& e) { w(e); });
  out.put(r.threads.modelled);
  out.plain(r.threads.lanes);
  out.list(r.threads.events, [](WireWriter& w, const ThreadEvent& t) { code_thread_event(w, t); });
  out.plain(r.threads.lane_of);
}

void Replay::load_rank(uint32_t rank, WireReader& in) {
  if (m_impl->ranks.size() <= rank) resize_ranks(rank + 1);
  RankP2P& p2p = m_p2p[rank];
  RankReplay& r = m_impl->ranks[rank];
  in.plain(p2p.ops);
  in.plain(p2p.payloads);
  std::vector<Aside> aside;
  in.plain(aside);
  r.payload_aside.clear();
  for (const Aside& a : aside) r.payload_aside[a.op] = a.payload;
  in.list(r.colls, [](WireReader& w, CollOp& c) { code_coll(w, c); });
  in.plain(r.rma);
  in.plain(r.outstanding);
  in.optional(r.blocked, [](WireReader& w, Event& e) { w(e); });
  r.threads.modelled = in.get<bool>();
  in.plain(r.threads.lanes);
  in.list(r.threads.events, [](WireReader& w, ThreadEvent& t) { code_thread_event(w, t); });
  in.plain(r.threads.lane_of);
}

uint32_t Replay::world_size() const { return static_cast<uint32_t>(m_impl->ranks.size()); }

std::string tag_text(const P2POp& op) {
  if (!op.send && op.tag == format::k_any_tag) return "any tag";
  return "tag " + std::to_string(op.tag);
}

Payload Replay::payload_aside(const RankP2P& r, uint32_t index) const {
  const auto rank = static_cast<std::size_t>(&r - m_p2p.data());
  return r.payloads[m_impl->ranks.at(rank).payload_aside.at(index)];
}

const std::vector<CollOp>& Replay::collectives(uint32_t rank) const {
  return m_impl->ranks.at(rank).colls;
}

const std::vector<CollInstance>& Replay::instances(uint32_t comm) const {
  if (comm >= m_impl->instances.size()) return m_impl->no_instances;
  return m_impl->instances[comm];
}

const std::vector<Outstanding>& Replay::outstanding(uint32_t rank) const {
  return m_impl->ranks.at(rank).outstanding;
}

const std::vector<RmaEvent>& Replay::rma(uint32_t rank) const { return m_impl->ranks.at(rank).rma; }

std::optional<format::Event> Replay::blocked(uint32_t rank) const {
  return m_impl->ranks.at(rank).blocked;
}

uint64_t Replay::matches() const { return m_impl->matches; }

uint64_t Replay::unmatched(uint32_t rank) const {
  return rank < m_impl->unmatched.size() ? m_impl->unmatched[rank] : 0;
}

const RankThreads& Replay::threads(uint32_t rank) const { return m_impl->ranks.at(rank).threads; }

void Replay::release_p2p(uint32_t rank) {
  if (rank >= m_p2p.size()) return;
  std::vector<P2POp>().swap(m_p2p[rank].ops);
  std::vector<Payload>().swap(m_p2p[rank].payloads);
  if (rank < m_impl->ranks.size()) std::unordered_map<uint32_t, uint32_t>().swap(m_impl->ranks[rank].payload_aside);
}

void Replay::release_matches(uint32_t rank) {
  if (rank < m_match.size()) std::vector<OpRef>().swap(m_match[rank]);
}

std::optional<EventRef> receive_completion(const Replay& replay, uint32_t rank, uint64_t seq) {
  const auto& ops = replay.p2p(rank);
  auto it = std::lower_bound(ops.begin(), ops.end(), seq, [](const P2POp& op, uint64_t s) { return op.seq < s; });
  for (; it != ops.end() && it->seq == seq; ++it) {
    if (!it->send) continue;
    const auto recv = replay.matched({rank, static_cast<uint32_t>(it - ops.begin())});
    if (!recv) return std::nullopt;
    const P2POp& done = replay.p2p(recv->rank)[recv->index];
    if (!done.done()) return std::nullopt;
    return EventRef{recv->rank, done.done_seq()};
  }
  return std::nullopt;
}

}  // namespace smtrace::analyzer
