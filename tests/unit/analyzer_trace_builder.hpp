// Small traces for analyzer unit tests built event by event in C++ (see
// analyzer_json_trace.hpp for the JSON way): finalized ranks, every event
// with its own call site (line = seq + 10), written as a real trace
// directory and analyzed like any other.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "analyzer/analyze.hpp"
#include "trace_format/json.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::test {

namespace fs = std::filesystem;
namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using tf::Call;

constexpr uint32_t k_int = 7;

// Return what the analyzer (one thread) finds in `trace`, written to a
// fresh temporary directory that is removed afterwards.
inline an::Result analyze_trace(const tf::Trace& trace, an::Options options) {
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() /
                       ("smtrace-unit-builder-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  tf::write_trace(trace, dir);
  options.threads = 1;
  an::Result result = an::analyze(dir, options);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return result;
}

// A trace of finalized ranks built event by event; every event has its own
// call site, line = seq + 10.
class Builder {
 public:
  explicit Builder(uint32_t n = 1) {
    m_trace.has_manifest = true;
    m_trace.manifest.world_size = n;
    m_trace.ranks.resize(n);
    for (uint32_t r = 0; r < n; ++r) {
      tf::RankTrace& rank = m_trace.ranks[r];
      rank.present = true;
      rank.header.rank = r;
      rank.header.world_size = n;
      rank.end = tf::Termination{};
      rank.end->kind = tf::TerminationKind::finalized;
      add(Call::Init, r);
    }
  }

  tf::Event& add(Call call, uint32_t rank = 0) {
    auto& r = m_trace.ranks[rank];
    tf::Event e;
    e.seq = r.events.size();
    e.call = call;
    e.t_start = static_cast<int64_t>(1000 * (e.seq + 1));
    e.duration = 10;
    tf::CallSite s;
    s.id = static_cast<uint32_t>(e.seq + 1);
    s.function = "main";
    s.file = "prog.c";
    s.line = static_cast<uint32_t>(e.seq + 10);
    r.sites.emplace(s.id, s);
    e.site = s.id;
    r.events.push_back(e);
    return r.events.back();
  }
  // A buffer call: `call` on `count` elements of `type` at `buf`.
  tf::Event& buf(Call call, uint64_t addr, int64_t count, uint32_t type = k_int, uint64_t request = 0) {
    tf::Event& e = add(call);
    e.comm = 0;
    e.peer = 0;
    e.tag = 0;
    e.buf = addr;
    e.count = count;
    e.datatype = type;
    e.request = request;
    return e;
  }
  // A point-to-point call of `rank` on one int at `addr`: MPI_COMM_WORLD, tag 0.
  tf::Event& p2p(Call call, uint32_t rank, int32_t peer, uint64_t addr, uint64_t request = 0) {
    tf::Event& e = add(call, rank);
    e.comm = 0;
    e.peer = peer;
    e.tag = 0;
    e.buf = addr;
    e.count = 1;
    e.datatype = k_int;
    e.request = request;
    return e;
  }
  tf::Event& annotate(Call call, uint64_t addr, uint64_t size) {
    tf::Event& e = add(call);
    e.buf = addr;
    e.size = size;
    return e;
  }
  // A completion call of `rank` over `requests`, completing `done` of them.
  tf::Event& complete(Call call, std::vector<uint64_t> requests, std::vector<uint64_t> done, uint32_t rank = 0) {
    tf::Event& e = add(call, rank);
    e.requests = std::move(requests);
    for (uint64_t r : done) {
      tf::CompletedRequest c;
      c.request = r;
      for (std::size_t i = 0; i < e.requests.size(); ++i)
        if (e.requests[i] == r) c.index = static_cast<uint32_t>(i);
      e.completed.push_back(c);
    }
    if (call == Call::Test || call == Call::Testall || call == Call::Testany || call == Call::Testsome)
      e.flag = !done.empty();
    return e;
  }
  tf::Event& wait(uint64_t request, uint32_t rank = 0) { return complete(Call::Wait, {request}, {request}, rank); }
  // Define `id` as a vector of `blocks` ints `stride` ints apart, resized to
  // `extent` bytes (0: the vector's own extent).
  void vector_type(uint32_t id, uint64_t blocks, int64_t stride, int64_t extent = 0, uint32_t rank = 0) {
    tf::DatatypeDef def;
    def.id = id;
    def.combiner = Call::Type_vector;
    def.size = 4 * blocks;
    def.extent = extent ? extent : static_cast<int64_t>((blocks - 1) * static_cast<uint64_t>(stride) * 4 + 4);
    def.runs = {tf::Run{0, 4, blocks, stride * 4}};
    def.signature = {tf::TypeCount{k_int, blocks}};
    def.committed = true;
    m_trace.ranks[rank].datatypes.emplace(id, def);
  }
  void unfinalize(uint32_t rank = 0) { m_trace.ranks[rank].end.reset(); }
  // End `rank` another way than MPI_Finalize (run() then adds no MPI_Finalize).
  void end_with(uint32_t rank, tf::TerminationKind kind, int32_t signal = 0) {
    m_trace.ranks[rank].end->kind = kind;
    m_trace.ranks[rank].end->signal = signal;
  }

  // RMA: window `window` over MPI_COMM_WORLD at `base` on `rank`.
  tf::Event& win_create(uint32_t rank, uint32_t window, uint64_t base, uint64_t size, int32_t disp_unit = 1) {
    tf::Event& e = add(Call::Win_create, rank);
    e.comm = 0;
    e.window = window;
    e.win_base = base;
    e.win_size = size;
    e.disp_unit = disp_unit;
    return e;
  }
  // A synchronization call of `rank` on `window` (target: Win_lock, unlock,
  // flush; -1 none).
  tf::Event& win_sync(Call call, uint32_t rank, uint32_t window, int32_t target = -1,
                      tf::LockType lock = tf::LockType::unspecified) {
    tf::Event& e = add(call, rank);
    e.window = window;
    if (target >= 0) e.peer = target;
    e.lock_type = lock;
    return e;
  }
  // An RMA call of `rank`: `count` elements of `type` at `addr`, to `target`
  // at displacement `disp` (the same type and count there).
  tf::Event& rma(Call call, uint32_t rank, uint32_t window, int32_t target, uint64_t addr, int64_t count,
                 uint64_t disp, uint32_t type = k_int) {
    tf::Event& e = add(call, rank);
    e.window = window;
    e.peer = target;
    e.buf = addr;
    e.count = count;
    e.datatype = type;
    e.target_disp = disp;
    e.target_count = count;
    e.target_datatype = type;
    return e;
  }
  // A load or store (Call::Load, Store, Annotate_*): `count` blocks of `size`
  // bytes, `stride` apart.
  tf::Event& access(Call call, uint32_t rank, uint64_t addr, uint64_t size, int64_t count = 1, int64_t stride = 0) {
    tf::Event& e = add(call, rank);
    e.buf = addr;
    e.size = size;
    e.count = count;
    e.stride = stride;
    return e;
  }
  tf::Event& barrier(uint32_t rank) {
    tf::Event& e = add(Call::Barrier, rank);
    e.comm = 0;
    return e;
  }

  an::Result run(const std::string& check) {
    for (auto& rank : m_trace.ranks)
      if (rank.end && rank.end->kind == tf::TerminationKind::finalized) add(Call::Finalize, rank.header.rank);
    an::Options options;
    options.checks = {check};
    return analyze_trace(m_trace, options);
  }

  tf::Trace& trace() { return m_trace; }

 private:
  tf::Trace m_trace;
};

// Request ids for `n` operations, in posting order: consecutive, reversed,
// and scattered 64-bit values (as handles are), so that a report that
// followed a hash table's order of the ids would differ between them.
inline std::vector<std::vector<uint64_t>> id_orders(std::size_t n) {
  std::vector<std::vector<uint64_t>> out(3);
  for (std::size_t i = 0; i < n; ++i) {
    out[0].push_back(i + 1);
    out[1].push_back(n - i);
    out[2].push_back(0x55d0'0000'0000 + ((i * 0x9e37) % 0x1'0000) * 0x40);
  }
  return out;
}

}  // namespace smtrace::test
