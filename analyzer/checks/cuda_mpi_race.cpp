// cuda-mpi-race: an MPI call and work on a CUDA stream touch the same bytes,
// at least one of them writing, and nothing orders them.
//
// After "CUDA-aware MPI races" (seed cuda-aware-mpi-races.txt), Figures 4
// and 6. Two directions, both on one rank:
//  - CUDA, then MPI: stream work (a kernel, a copy, a memset) that the host
//    does not know finished (cuda_streams.hpp) when an MPI call starts using
//    a buffer it touches: kernel writes d_buf, then MPI_Send(d_buf) with no
//    synchronization (Figure 4 without line 4, Figure 6 B).
//  - MPI, then CUDA: work issued onto a stream while a non-blocking MPI
//    operation on those bytes is pending: MPI_Irecv(d_buf), a kernel on
//    d_buf, then MPI_Wait (Figure 4 without line 8, Figure 6 A). Work
//    issued while the operation is pending may run before it completes,
//    whatever synchronizes later.
// Read-read is no race. Kernel arguments count as writes unless the trace
// says read (CUPTI cannot tell). Every memory kind is checked: device and
// managed memory as the paper asks, and pinned host memory that an
// asynchronous copy still writes as well.
//
// Unfinished stream work is kept per stream in issue order and dropped
// from the front when the host learns that it finished, so a check costs the
// work still in flight. MPI buffers are the hulls of their footprints.
// Host threads are ordered by seq (as in local-concurrency).
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "analyzer/checks/checks.hpp"
#include "analyzer/cuda_streams.hpp"
#include "analyzer/footprint.hpp"
#include "analyzer/mpi_buffers.hpp"
#include "analyzer/request_map.hpp"
#include "analyzer/wire.hpp"
#include "trace_format/content.hpp"

namespace smtrace::analyzer::checks {
namespace {

using format::Call;
using format::Event;
using format::RequestEffect;

constexpr std::size_t k_max_reports = 64;

// A CUDA call's access: run on a stream (item set) or by the host during the call.
struct CudaUse {
  std::optional<StreamItem> item;
  CudaAccess access;
  uint64_t seq = 0;
  uint32_t site = 0;
  Call call = Call::unspecified;
  uint32_t kernel = 0;
};

// An MPI operation while it is pending (or, persistent, defined), apart from its buffers.
struct MpiHead {
  uint64_t seq = 0;
  uint64_t order = 0;  // when active: activations before it on the rank, + 1
  uint32_t site = 0;
  Call call = Call::unspecified;
  bool active = false;
  bool persistent = false;
};

// An operation of several buffers (an Iallreduce, say): the table's Many
// (request_map.hpp); one of one buffer (most) is its small One.
struct MpiOp : MpiHead {
  std::vector<CudaAccess> blocks;
};

// Set `op` to a new operation's defaults, keeping its blocks' storage (StableRequestMap).
void reset(MpiOp& op) {
  static_cast<MpiHead&>(op) = MpiHead{};
  op.blocks.clear();
}

using MpiOps = BlockRequestMap<MpiHead, CudaAccess, MpiOp>;

// A pending MPI operation whose `block` a CUDA access meets.
struct Hit {
  uint64_t order = 0;  // the operation's
  uint64_t seq = 0;
  uint32_t site = 0;
  Call call = Call::unspecified;
  CudaAccess block;
};

struct Record {
  bool cuda_first = false;
  CudaUse cuda;
  std::string stream;  // the stream's label; empty for a host access
  uint64_t mpi_seq = 0;
  uint32_t mpi_site = 0;
  Call mpi_call = Call::unspecified;
  bool mpi_write = false;
  uint64_t lo = 0, hi = 0;
};


// How an MPI call uses its buffers.
enum class Kind : uint8_t { none, blocking, post, define };

class Pass final : public RankPass {
 public:
  explicit Pass(const RankData& data) : m_data(data) {}

  void event(const Event& e) override {
    const format::CallTraits& t = format::call_traits(e.call);
    if (t.family == format::Family::cuda) {
      cuda(e);
      return;
    }
    if (e.rc != 0) return;
    // How the call uses its buffers: at the call (blocking calls, and RMA
    // calls without a request: a simplification, their completion is the
    // epoch's), or while the operation it posts or defines is pending.
    Kind kind = Kind::none;
    switch (t.request) {
      case RequestEffect::complete_all: case RequestEffect::complete_any: case RequestEffect::complete_some:
        if (!e.pending)
          for (const format::CompletedRequest& c : e.completed) complete(c.request);
        return;
      case RequestEffect::start:
        if (e.requests.empty()) start(e, e.request);
        for (uint64_t r : e.requests) start(e, r);
        return;
      case RequestEffect::free: {
        // The operation goes on with no completion in the trace: it stays
        // pending to the end.
        m_ops.visit(e.request, [](MpiHead& op) { op.persistent = false; });
        return;
      }
      case RequestEffect::query:  // MPI_Request_get_status: flag true, the operation is complete
        if (e.flag.value_or(false) && !e.pending) complete(e.request);
        return;
      case RequestEffect::create:
        kind = Kind::post;
        break;
      case RequestEffect::persistent:
        kind = Kind::define;
        break;
      case RequestEffect::none: case RequestEffect::cancel:
        kind = Kind::blocking;
        break;
    }
    // With no stream work unfinished, the buffers of a call matter only to
    // the operation it leaves pending, if any (against_stream_work would
    // find nothing).
    if (kind == Kind::none || (m_unfinished == 0 && (kind == Kind::blocking || e.request == 0))) return;
    const std::span<const CudaAccess> blocks = buffers(e);
    if (blocks.empty()) return;
    if (kind != Kind::define && m_unfinished != 0) against_stream_work(e, blocks);
    if (kind == Kind::blocking || e.request == 0) return;
    m_ops.renew(e.request, blocks, [&](MpiHead& op) { define(op, e, kind); });
  }

  // CUDA calls, calls on requests, and calls with buffers (the others have
  // none to meet stream work with: event_buffers() is empty for them). None
  // on a rank whose header says that no CUDA call was traced
  // (format::cuda_untraced): with no CUDA event there is nothing for MPI
  // buffers to meet, and the pass ends as empty as it would have.
  EventSet wants() const override {
    if (format::cuda_untraced(m_data.header)) return EventSet::none();
    return EventSet::of([](const format::CallTraits& t) {
      return t.family == format::Family::cuda || t.request != RequestEffect::none ||
             (t.buffers != format::BufferLayout::none && t.role != format::Role::local_access);
    });
  }

  std::vector<Record> records;
  uint64_t suppressed = 0;
  uint64_t device_accesses = 0;
  uint64_t peak_unfinished = 0;
  uint32_t streams = 0;

  void end() override { streams = m_model.streams(); }

 private:
  // Set the fields of the operation `e` leaves pending (a post) or defines (persistent).
  void define(MpiHead& op, const Event& e, Kind kind) {
    op.seq = e.seq;
    op.site = e.site;
    op.call = e.call;
    op.active = kind == Kind::post;
    op.persistent = kind == Kind::define;
    if (op.active) op.order = ++m_activations;
  }

  void cuda(const Event& e) {
    const CudaStreams::Effect effect = m_model.apply(e);
    const CudaUse base{std::nullopt, {}, e.seq, e.site, e.call, e.kernel};
    for (const CudaAccess& a : effect.host) {
      CudaUse use = base;
      use.access = a;
      against_pending_mpi(use);
    }
    for (const CudaAccess& a : effect.device) {
      CudaUse use = base;
      use.item = effect.item;
      use.access = a;
      against_pending_mpi(use);
      if (m_work.size() <= use.item->stream) m_work.resize(use.item->stream + 1);
      m_work[use.item->stream].push_back(use);
      ++m_unfinished;
      ++device_accesses;
    }
    peak_unfinished = std::max(peak_unfinished, m_unfinished);
    if (effect.host_synchronized) {
      for (uint32_t s = 0; s < m_work.size(); ++s) {
        std::deque<CudaUse>& work = m_work[s];
        while (!work.empty() && m_model.finished(*work.front().item)) {
          work.pop_front();
          --m_unfinished;
        }
      }
    }
  }

  // MPI, then CUDA: `use` meets the buffers of pending MPI operations;
  // their records go in the order the operations were posted (the cap and
  // the deduplication keep the earliest).
  void against_pending_mpi(const CudaUse& use) {
    if (m_ops.size() == 0) return;
    m_hits.clear();
    auto meet = [&](const auto& op) {
      if (!op.active) return;
      for (const CudaAccess& b : MpiOps::blocks(op)) {
        if (!conflict(b, use.access)) continue;
        m_hits.push_back(Hit{op.order, op.seq, op.site, op.call, b});
        break;
      }
    };
    m_ops.each_one([&](uint64_t, const MpiOps::One& op) { meet(op); });
    m_ops.each_many(meet);
    // (Active operations have distinct orders: the tables' order does not matter.)
    std::sort(m_hits.begin(), m_hits.end(), [](const Hit& a, const Hit& b) { return a.order < b.order; });
    for (const Hit& h : m_hits)
      add(Record{false, use, label(use), h.seq, h.site, h.call, h.block.write, std::max(h.block.lo, use.access.lo),
                 std::min(h.block.hi, use.access.hi)});
  }

  // CUDA, then MPI: MPI call `e` starts using `blocks` while stream work on them may still run.
  void against_stream_work(const Event& e, std::span<const CudaAccess> blocks) {
    if (m_unfinished == 0) return;
    for (const std::deque<CudaUse>& work : m_work) {
      for (const CudaUse& use : work) {
        for (const CudaAccess& b : blocks) {
          if (!conflict(b, use.access)) continue;
          add(Record{true, use, label(use), e.seq, e.site, e.call, b.write, std::max(b.lo, use.access.lo),
                     std::min(b.hi, use.access.hi)});
          break;
        }
      }
    }
  }

  static bool conflict(const CudaAccess& a, const CudaAccess& b) {
    return (a.write || b.write) && a.lo < b.hi && b.lo < a.hi;
  }

  std::string label(const CudaUse& use) const { return use.item ? m_model.stream_label(use.item->stream) : ""; }

  void add(Record r) {
    auto key = std::make_tuple(r.cuda.site, r.cuda.kernel, static_cast<uint16_t>(r.cuda.call), r.mpi_site,
                               static_cast<uint16_t>(r.mpi_call));
    if (!m_reported.insert(key).second) return;
    if (records.size() >= k_max_reports) {
      ++suppressed;
      return;
    }
    records.push_back(std::move(r));
  }

  void start(const Event& e, uint64_t request) {
    m_ops.visit(request, [&](auto& op) {
      if (!op.persistent || op.active) return;
      against_stream_work(e, MpiOps::blocks(op));
      op.active = true;
      op.order = ++m_activations;
      op.seq = e.seq;
      op.site = e.site;
    });
  }

  void complete(uint64_t request) {
    m_ops.settle(request, [](MpiHead& op) {
      if (op.persistent) op.active = false;
      return op.persistent;
    });
  }

  // Return the buffers of MPI call `e` (hulls of their footprints, the
  // empty ones left out): in m_one for a call of one buffer (most), else
  // in m_blocks. Valid until the next call.
  std::span<const CudaAccess> buffers(const Event& e) {
    const EventBuffers& buffers = event_buffers(e, m_data);
    if (buffers.buffers.size() == 1) {
      if (!hull(buffers, buffers.buffers.front(), m_one)) return {};
      return {&m_one, 1};
    }
    m_blocks.clear();
    for (const BufferBytes& b : buffers.buffers)
      if (hull(buffers, b, m_one)) m_blocks.push_back(m_one);
    return m_blocks;
  }
  // Set `out` to the hull of buffer `b`'s bytes; return false when it is empty.
  static bool hull(const EventBuffers& buffers, const BufferBytes& b, CudaAccess& out) {
    if (b.first == b.last) return false;
    const Strided& first = buffers.pieces[b.first];
    uint64_t lo = first.lo, hi = end_of(first);
    for (uint32_t i = b.first + 1; i < b.last; ++i) {  // (none for one piece, most)
      const Strided& p = buffers.pieces[i];
      lo = std::min(lo, p.lo);
      hi = std::max(hi, end_of(p));
    }
    if (hi <= lo) return false;
    out = CudaAccess{lo, hi, writes(b.buffer.access)};
    return true;
  }
  // Return the end of piece `p`'s hull: of one block that does not wrap
  // (most) in line, else as hull_end (out of line) gives it.
  static uint64_t end_of(const Strided& p) {
    const bool plain = p.count == 1 && p.size != 0 && p.lo + p.size > p.lo;
    return plain ? p.lo + p.size : hull_end(p);
  }

  const RankData& m_data;
  CudaStreams m_model;
  std::vector<std::deque<CudaUse>> m_work;         // per model stream: unfinished work, in issue order
  uint64_t m_unfinished = 0;
  MpiOps m_ops;                                    // by request id
  uint64_t m_activations = 0;
  std::vector<Hit> m_hits;                         // scratch: against_pending_mpi's
  std::vector<CudaAccess> m_blocks;                // scratch: the current MPI call's buffers (two or more)
  CudaAccess m_one;                                // scratch: its one buffer, or the last hull
  std::set<std::tuple<uint32_t, uint32_t, uint16_t, uint32_t, uint16_t>> m_reported;
};

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

class CudaMpiRace final : public Check {
 public:
  std::string_view name() const override { return "cuda-mpi-race"; }
  // Accesses are address ranges: without buffer addresses there is nothing to compare.
  format::ContentSet needs() const override { return format::content_bit(format::Content::buffers); }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override {
    return "an MPI call and work on a CUDA stream (kernel, copy, memset) touch the same bytes with no "
           "synchronization between them";
  }
  std::unique_ptr<RankPass> rank_pass(const RankData& data) override { return std::make_unique<Pass>(data); }
  // finish() reads each rank's records and figures, one rank at a time.
  bool saves_passes() const override { return true; }
  void save_pass(const RankPass& pass, WireWriter& out) const override {
    code_pass(out, dynamic_cast<const Pass&>(pass));
  }
  std::unique_ptr<RankPass> load_pass(const RankData& data, WireReader& in) const override {
    auto p = std::make_unique<Pass>(data);
    code_pass(in, *p);
    return p;
  }

 private:
  // The coding of a pass's records and figures, for WireWriter and WireReader alike.
  template <class Coder, class P>
  static void code_pass(Coder& c, P& p) {
    c.list(p.records, [](auto& cr, auto& r) {
      cr(r.cuda_first);
      cr.optional(r.cuda.item, [](auto& ci, auto& item) {
        ci(item.stream);
        ci(item.index);
      });
      cr(r.cuda.access.lo);
      cr(r.cuda.access.hi);
      cr(r.cuda.access.write);
      cr(r.cuda.seq);
      cr(r.cuda.site);
      cr(r.cuda.call);
      cr(r.cuda.kernel);
      cr(r.stream);
      cr(r.mpi_seq);
      cr(r.mpi_site);
      cr(r.mpi_call);
      cr(r.mpi_write);
      cr(r.lo);
      cr(r.hi);
    });
    c(p.suppressed);
    c(p.device_accesses);
    c(p.peak_unfinished);
    c(p.streams);
  }

 public:
  void finish(const Context& context, std::vector<std::unique_ptr<RankPass>>& passes,
              std::vector<Finding>& out) override {
    for (uint32_t rank = 0; rank < passes.size(); ++rank) {
      auto* pass = dynamic_cast<Pass*>(passes[rank].get());
      if (!pass) continue;
      m_device_accesses += pass->device_accesses;
      m_peak_unfinished = std::max(m_peak_unfinished, pass->peak_unfinished);
      m_streams += pass->streams;
      for (const Record& r : pass->records) out.push_back(finding(context, rank, r));
      if (pass->suppressed > 0 && !out.empty() && out.back().kind == name())
        out.back().notes.push_back(
            fmt::format("{} more CUDA/MPI races on rank {} are not reported", pass->suppressed, rank));
    }
  }

  void stats(std::map<std::string, uint64_t>& out) const override {
    out["cuda_mpi_race_streams"] = m_streams;
    out["cuda_mpi_race_device_accesses"] = m_device_accesses;
    out["cuda_mpi_race_peak_unfinished"] = m_peak_unfinished;
  }

 private:
  Finding finding(const Context& context, uint32_t rank, const Record& r) const {
    const CudaUse& c = r.cuda;
    std::string what(format::call_name(c.call));
    if (c.kernel != 0) {
      const format::CallSite* k = context.rank(rank).site(c.kernel);
      what += fmt::format(" (kernel {})", k && !k->function.empty() ? k->function : fmt::format("site#{}", c.kernel));
    }
    const std::string_view mpi = format::call_name(r.mpi_call);
    const EventRef cuda_at{rank, c.seq}, mpi_at{rank, r.mpi_seq};
    const std::string range = fmt::format("[{}, +{})", hex(r.lo), r.hi - r.lo);
    const char* cuda_verb = c.access.write ? "writes" : "reads";
    const char* mpi_verb = r.mpi_write ? "receives into" : "sends from";
    const std::string where = c.item ? "on " + r.stream : "on the host during the call";
    Finding f;
    f.kind = std::string(name());
    f.severity = severity();
    if (r.cuda_first) {
      f.message = fmt::format("{} {} {} {} (rank {}) and {} {} it (rank {}) before the host synchronizes with that work",
                              what, where, cuda_verb, range, cuda_at.str(), mpi, mpi_verb, mpi_at.str());
    } else {
      f.message = fmt::format("{} {} {} (rank {}), still pending when {} {} {} it (rank {})", mpi, mpi_verb, range,
                              mpi_at.str(), what, where, cuda_verb, cuda_at.str());
    }
    const Location cuda_loc = context.location(cuda_at, c.call, c.site,
                                               fmt::format("{} {} {} {} here", what, cuda_verb, range, where));
    const Location mpi_loc = context.location(mpi_at, r.mpi_call, r.mpi_site,
                                              fmt::format("{} {} the same bytes here", mpi, mpi_verb));
    if (r.cuda_first) {
      f.locations = {cuda_loc, mpi_loc};
      f.notes.push_back("synchronize with the stream (cudaStreamSynchronize, cudaEventSynchronize, "
                        "cudaDeviceSynchronize) before the MPI call uses the buffer");
    } else {
      f.locations = {mpi_loc, cuda_loc};
      f.notes.push_back("complete the MPI operation (MPI_Wait, MPI_Test) before CUDA work touches its buffer");
    }
    return f;
  }

  uint64_t m_device_accesses = 0;
  uint64_t m_peak_unfinished = 0;
  uint64_t m_streams = 0;
};

}  // namespace

std::unique_ptr<Check> make_cuda_mpi_race() { return std::make_unique<CudaMpiRace>(); }

}  // namespace smtrace::analyzer::checks
