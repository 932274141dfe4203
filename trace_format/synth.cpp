// Synthetic traces. Each generator is a function that "runs" one rank of a
// communication pattern against a RankFile, the way the tracer records it:
// every call is one complete event (the tracer rewrites a blocking call's
// pending entry in place when nothing came between), requests are numbered
// from 1 per rank, receives carry the actual source, tag and count.
//
// A rank's events are decided by (generator, options, rank) alone, so ranks
// can be written in any order by any thread, and two ranks agree on the
// messages between them without talking: a generator computes what its peers
// do from their rank numbers.
#include "trace_format/synth.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "trace_format/content.hpp"
#include "trace_format/json.hpp"
#include "trace_format/parallel.hpp"
#include "trace_format/reader.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::format {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_chunk_bytes = 64u << 10;
constexpr uint32_t k_double = 14;  // BASIC_DOUBLE
constexpr uint32_t k_op_sum = 3;   // OP_SUM
constexpr int32_t k_sigterm = 15;
constexpr uint32_t k_max_ranks = 1u << 20;

// splitmix64: small, fast, and good enough for jitter in times and orders.
class Rng {
 public:
  explicit Rng(uint64_t seed) : m_state(seed) {}
  uint64_t next() {
    uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Return a value in [lo, lo + spread).
  uint64_t around(uint64_t lo, uint64_t spread) { return lo + next() % spread; }

 private:
  uint64_t m_state;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// One rank file being written: header, then sealed chunks of about 64 KiB,
// each written out as soon as it is full.
class RankFile {
 public:
  RankFile(fs::path path, const RankHeader& header) : m_path(std::move(path)) {
    m_file.reset(std::fopen(m_path.c_str(), "wb"));
    if (!m_file) fail("cannot create");
    std::setvbuf(m_file.get(), nullptr, _IOFBF, 1u << 20);
    write(k_magic, k_magic_size);
    frame(encode_rank_header(header));
    m_chunk.reserve(k_chunk_bytes + 4096);
  }

  // Append `e` as the next event (its seq is set here); return the seq.
  uint64_t event(Event& e) {
    e.seq = m_enc.next_seq();
    room(e.seq, e.t_start);
    m_enc.event(m_chunk, e);
    ++m_events;
    m_last_t = e.t_start;
    return e.seq;
  }
  void module(const Module& m) {
    room(m_enc.next_seq(), m_last_t);
    m_enc.module(m_chunk, m);
  }
  void site(const CallSite& s) {
    room(m_enc.next_seq(), m_last_t);
    m_enc.site(m_chunk, s);
  }
  // Append the termination record (last_seq and events filled in), seal and
  // close the file.
  void finish(Termination end) {
    end.last_seq = m_events ? m_enc.next_seq() - 1 : 0;
    end.events = m_events;
    room(m_enc.next_seq(), m_last_t);
    m_enc.termination(m_chunk, end);
    seal();
    if (std::fflush(m_file.get()) != 0) fail("cannot write");
    if (std::fclose(m_file.release()) != 0) fail("cannot close");
  }

  uint64_t events() const { return m_events; }
  uint64_t bytes() const { return m_bytes; }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw TraceError(m_path.string() + ": " + what + ": " + std::strerror(errno));
  }
  void write(const void* data, std::size_t size) {
    if (std::fwrite(data, 1, size, m_file.get()) != size) fail("cannot write");
    m_bytes += size;
  }
  void frame(std::string_view payload) {
    unsigned char header[k_frame_header_size];
    write_frame_header(header, payload);
    write(header, sizeof header);
    write(payload.data(), payload.size());
  }
  // Open a chunk when none is open or the open one is full.
  void room(uint64_t first_seq, int64_t t_base) {
    if (m_open && m_chunk.size() < k_chunk_bytes) return;
    seal();
    m_enc.begin_chunk(m_chunk, first_seq, t_base, m_index++);
    m_open = true;
  }
  void seal() {
    if (!m_open) return;
    frame(m_chunk);
    m_chunk.clear();
    m_open = false;
  }

  fs::path m_path;
  std::unique_ptr<std::FILE, FileCloser> m_file;
  RecordEncoder m_enc;
  std::string m_chunk;
  uint32_t m_index = 0;
  bool m_open = false;
  uint64_t m_events = 0;
  uint64_t m_bytes = 0;
  int64_t m_last_t = 0;
};

// Where a generated program's calls are: one module, a few source lines.
struct SiteSpec {
  uint32_t id;
  const char* function;
  uint32_t line;
};

// A rank being "run": its file, its clock and its random numbers.
class Rank {
 public:
  Rank(RankFile& file, uint64_t seed, uint32_t rank)
      : m_file(file), m_rng(seed * 0x2545F4914F6CDD1Dull + rank + 1) {}

  // Record `e` as called now, lasting about `duration` ns (jittered).
  uint64_t call(Event& e, uint64_t duration) {
    e.t_start = m_t;
    e.duration = m_rng.around(duration, duration / 2 + 1);
    m_t += static_cast<int64_t>(e.duration + m_rng.around(40, 80));
    return m_file.event(e);
  }
  // Record `e` as entered now and never returned.
  uint64_t hang(Event& e) {
    e.t_start = m_t;
    e.duration = 0;
    e.pending = true;
    return m_file.event(e);
  }
  // Let about `ns` of computation pass.
  void compute(uint64_t ns) { m_t += static_cast<int64_t>(m_rng.around(ns, ns / 2 + 1)); }
  // Let time pass until `t` (ns since the rank's start), if it is later.
  void wait_until(int64_t t) { m_t = std::max(m_t, t); }
  Rng& rng() { return m_rng; }
  int64_t now() const { return m_t; }

 private:
  RankFile& m_file;
  Rng m_rng;
  int64_t m_t = 1000;
};

Event make_event(Call call, uint32_t site) {
  Event e;
  e.call = call;
  e.site = site;
  return e;
}

Status status_of(int32_t source, int32_t tag, int64_t count) {
  Status s;
  s.source = source;
  s.tag = tag;
  s.count = count;
  return s;
}

// Reorder `items` at random (Fisher-Yates).
void shuffle(std::vector<int32_t>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.next() % i]);
}

// Return 1..n (world ranks), in order.
std::vector<int32_t> ranks_from_one(uint32_t n) {
  std::vector<int32_t> out(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(i + 1);
  return out;
}

// A rank's nonblocking calls: requests numbered from 1, completed by
// MPI_Wait or MPI_Waitall as the tracer records them.
class Requests {
 public:
  // Record `e` (MPI_Isend, MPI_Irecv, ...) with the next request; return it.
  uint64_t start(Rank& r, Event& e, uint64_t duration) {
    e.request = m_next++;
    r.call(e, duration);
    return e.request;
  }
  // Record MPI_Wait(`request`) at `site`; `status` for a receive.
  void wait(Rank& r, uint32_t site, uint64_t request, const Status& status, uint64_t duration) {
    Event wait = make_event(Call::Wait, site);
    wait.requests = {request};
    wait.completed = {{0, request, status}};
    r.call(wait, duration);
  }
  // Record MPI_Waitall over `requests` at `site`; `statuses[i]` for
  // request i (empty for sends).
  void wait_all(Rank& r, uint32_t site, const std::vector<uint64_t>& requests,
                const std::vector<Status>& statuses, uint64_t duration) {
    Event waitall = make_event(Call::Waitall, site);
    waitall.requests = requests;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      waitall.completed.push_back({static_cast<uint32_t>(i), requests[i],
                                   i < statuses.size() ? statuses[i] : Status{}});
    }
    r.call(waitall, duration);
  }

 private:
  uint64_t m_next = 1;
};

// A point-to-point call on MPI_COMM_WORLD of `count` elements of `datatype`
// at `buf`.
Event p2p_event(Call call, uint32_t site, int32_t peer, int32_t tag, uint64_t buf, int64_t count,
                uint32_t datatype) {
  Event e = make_event(call, site);
  e.comm = k_comm_world;
  e.peer = peer;
  e.tag = tag;
  e.buf = buf;
  e.count = count;
  e.datatype = datatype;
  return e;
}

void init_call(Rank& r) {
  Event init = make_event(Call::Init, 1);
  r.call(init, 150'000);
}

void finalize_call(Rank& r, uint32_t site) {
  Event finalize = make_event(Call::Finalize, site);
  r.call(finalize, 50'000);
}

// ---------------------------------------------------------------------------
// halo: a 2-D periodic grid; per iteration Irecv from and Isend to each
// neighbour, Waitall; an Allreduce every 10 iterations and after the last,
// a Barrier every 100.

constexpr SiteSpec k_halo_sites[] = {
    {1, "main", 20},             // MPI_Init
    {2, "exchange_halo", 42},    // MPI_Irecv
    {3, "exchange_halo", 47},    // MPI_Isend
    {4, "exchange_halo", 51},    // MPI_Waitall
    {5, "main", 58},             // MPI_Allreduce
    {6, "main", 60},             // MPI_Bcast (the planted mismatch)
    {7, "main", 63},             // MPI_Barrier
    {8, "main", 70},             // MPI_Finalize
};
constexpr uint32_t k_allreduce_every = 10;
constexpr uint32_t k_barrier_every = 100;
constexpr int64_t k_halo_count = 1024;  // doubles per face
constexpr uint64_t k_halo_recv_buf = 0x7f3a00000000ull;
constexpr uint64_t k_halo_send_buf = 0x7f3a00100000ull;
constexpr uint64_t k_residual_buf = 0x7ffd00001000ull;

struct Grid {
  uint32_t px = 1, py = 1;
  explicit Grid(uint32_t n) {
    for (uint32_t d = 1; d * d <= n; ++d) {
      if (n % d == 0) px = d;
    }
    py = n / px;
  }
  // The neighbours of `rank` in directions west, east, south, north; a
  // dimension of size 1 has none.
  struct Neighbour {
    uint32_t dir;
    int32_t rank;
  };
  std::vector<Neighbour> neighbours(uint32_t rank) const {
    const uint32_t x = rank % px, y = rank / px;
    std::vector<Neighbour> out;
    if (px > 1) {
      out.push_back({0, static_cast<int32_t>(y * px + (x + px - 1) % px)});
      out.push_back({1, static_cast<int32_t>(y * px + (x + 1) % px)});
    }
    if (py > 1) {
      out.push_back({2, static_cast<int32_t>(((y + py - 1) % py) * px + x)});
      out.push_back({3, static_cast<int32_t>(((y + 1) % py) * px + x)});
    }
    return out;
  }
  uint32_t directions() const { return (px > 1 ? 2 : 0) + (py > 1 ? 2 : 0); }
};

// A message sent towards direction d carries tag d; it arrives from the
// opposite direction.
constexpr int32_t opposite(uint32_t dir) { return static_cast<int32_t>(dir ^ 1u); }

uint64_t halo_iterations(const SynthOptions& o) {
  const uint64_t per_100 = (2 * Grid(o.ranks).directions() + 1) * 100 + 100 / k_allreduce_every +
                           100 / k_barrier_every;
  const uint64_t body = o.events > 2 ? o.events - 2 : 0;
  return std::max<uint64_t>(1, body * 100 / per_100);
}

void halo_rank(Rank& r, uint32_t rank, uint64_t iterations, const SynthOptions& o) {
  const Grid grid(o.ranks);
  const auto nbrs = grid.neighbours(rank);
  const std::size_t nd = nbrs.size();
  const uint64_t allreduces = (iterations + k_allreduce_every - 1) / k_allreduce_every;
  const uint64_t mismatch_at = o.bug == SynthBug::collective_mismatch ? allreduces / 2 : ~0ull;
  const bool mismatch_rank = rank + 1 == o.ranks;

  Event irecv = make_event(Call::Irecv, 2), isend = make_event(Call::Isend, 3),
        waitall = make_event(Call::Waitall, 4), allreduce = make_event(Call::Allreduce, 5),
        bcast = make_event(Call::Bcast, 6), barrier = make_event(Call::Barrier, 7);
  for (Event* e : {&irecv, &isend}) {
    e->comm = k_comm_world;
    e->count = k_halo_count;
    e->datatype = k_double;
  }
  allreduce.buf = k_residual_buf;
  allreduce.recv_buf = k_residual_buf + 8;
  allreduce.count = allreduce.recv_count = 1;
  allreduce.datatype = allreduce.recv_datatype = k_double;
  allreduce.op = k_op_sum;
  bcast.peer = 0;
  bcast.buf = k_residual_buf + 8;
  bcast.count = 1;
  bcast.datatype = k_double;

  uint64_t next_request = 1, ncoll = 0;
  Event init = make_event(Call::Init, 1);
  r.call(init, 150'000);
  for (uint64_t it = 0; it < iterations; ++it) {
    const bool last = it + 1 == iterations;
    const bool deadlock = last && o.bug == SynthBug::deadlock;
    r.compute(20'000);
    waitall.requests.resize(deadlock ? nd : 2 * nd);
    waitall.completed.resize(deadlock ? 0 : 2 * nd);
    for (std::size_t i = 0; i < nd; ++i) {
      irecv.peer = nbrs[i].rank;
      irecv.tag = opposite(nbrs[i].dir);
      irecv.buf = k_halo_recv_buf + nbrs[i].dir * k_halo_count * 8;
      irecv.request = next_request++;
      r.call(irecv, 300);
      waitall.requests[i] = irecv.request;
      if (!deadlock) {
        waitall.completed[i] = {static_cast<uint32_t>(i), irecv.request,
                                status_of(nbrs[i].rank, *irecv.tag, k_halo_count)};
      }
    }
    if (deadlock) {
      r.hang(waitall);
      return;
    }
    for (std::size_t i = 0; i < nd; ++i) {
      isend.peer = nbrs[i].rank;
      isend.tag = static_cast<int32_t>(nbrs[i].dir);
      isend.buf = k_halo_send_buf + nbrs[i].dir * k_halo_count * 8;
      isend.request = next_request++;
      r.call(isend, 500);
      waitall.requests[nd + i] = isend.request;
      waitall.completed[nd + i] = {static_cast<uint32_t>(nd + i), isend.request, Status{}};
    }
    r.call(waitall, 8'000);
    if ((it + 1) % k_allreduce_every == 0 || last) {
      r.call(ncoll++ == mismatch_at && mismatch_rank ? bcast : allreduce, 6'000);
    }
    if ((it + 1) % k_barrier_every == 0) r.call(barrier, 4'000);
  }
  Event finalize = make_event(Call::Finalize, 8);
  r.call(finalize, 50'000);
}

// ---------------------------------------------------------------------------
// pingpong: ranks 2k and 2k+1 bounce a message (even sends first); a
// Barrier every 100 round trips. An odd last rank only joins the barriers.

constexpr SiteSpec k_pingpong_sites[] = {
    {1, "main", 12}, {2, "main", 25}, {3, "main", 26}, {4, "main", 29},
    {5, "main", 30}, {6, "main", 34}, {7, "main", 40},
};
constexpr int64_t k_pingpong_count = 128;
constexpr uint64_t k_pingpong_buf = 0x7ffc0000a000ull;

uint64_t pingpong_iterations(const SynthOptions& o) {
  const uint64_t body = o.events > 2 ? o.events - 2 : 0;
  return std::max<uint64_t>(1, body * 100 / (2 * 100 + 100 / k_barrier_every));
}

void pingpong_rank(Rank& r, uint32_t rank, uint64_t iterations, const SynthOptions& o) {
  const bool even = rank % 2 == 0;
  const bool alone = even && rank + 1 == o.ranks;
  const int32_t peer = static_cast<int32_t>(even ? rank + 1 : rank - 1);
  Event send = make_event(Call::Send, even ? 2 : 5), recv = make_event(Call::Recv, even ? 3 : 4);
  send.comm = recv.comm = k_comm_world;
  send.peer = recv.peer = peer;
  send.tag = recv.tag = 0;
  send.buf = recv.buf = k_pingpong_buf;
  send.count = recv.count = k_pingpong_count;
  send.datatype = recv.datatype = k_double;
  recv.status = status_of(peer, 0, k_pingpong_count);
  Event barrier = make_event(Call::Barrier, 6);

  Event init = make_event(Call::Init, 1);
  r.call(init, 150'000);
  for (uint64_t it = 0; it < iterations; ++it) {
    if (!alone) {
      r.compute(1'000);
      if (even) {
        r.call(send, 800);
        r.call(recv, 2'000);
      } else {
        r.call(recv, 2'000);
        r.call(send, 800);
      }
    }
    if ((it + 1) % k_barrier_every == 0) r.call(barrier, 4'000);
  }
  Event finalize = make_event(Call::Finalize, 7);
  r.call(finalize, 50'000);
}

// ---------------------------------------------------------------------------
// wildcard: per iteration each worker sends a result to rank 0 and waits for
// new work; rank 0 receives from MPI_ANY_SOURCE, in an order that differs
// from iteration to iteration, and answers whoever it heard from.

constexpr SiteSpec k_wildcard_sites[] = {
    {1, "main", 15}, {2, "master", 31}, {3, "master", 36}, {4, "worker", 52},
    {5, "worker", 55}, {6, "main", 80},
};
constexpr int64_t k_wildcard_count = 16;

uint64_t wildcard_iterations(const SynthOptions& o) {
  const uint64_t body = o.events > 2 ? o.events - 2 : 0;
  return std::max<uint64_t>(1, body * o.ranks / (4 * (o.ranks - 1)));
}

void wildcard_rank(Rank& r, uint32_t rank, uint64_t iterations, const SynthOptions& o) {
  Event send = make_event(Call::Send, rank == 0 ? 3 : 4),
        recv = make_event(Call::Recv, rank == 0 ? 2 : 5);
  send.comm = recv.comm = k_comm_world;
  send.buf = 0x7ffc00010000ull;
  recv.buf = 0x7ffc00020000ull;
  send.count = recv.count = k_wildcard_count;
  send.datatype = recv.datatype = k_double;
  const int32_t result_tag = 1, work_tag = 2;

  Event init = make_event(Call::Init, 1);
  r.call(init, 150'000);
  if (rank == 0) {
    recv.peer = k_any_source;
    recv.tag = result_tag;
    send.tag = work_tag;
    std::vector<int32_t> order = ranks_from_one(o.ranks - 1);
    for (uint64_t it = 0; it < iterations; ++it) {
      shuffle(order, r.rng());  // who reports first this time
      for (int32_t w : order) {
        recv.status = status_of(w, result_tag, k_wildcard_count);
        r.call(recv, 1'000);
        send.peer = w;
        r.call(send, 500);
      }
    }
  } else {
    send.peer = recv.peer = 0;
    send.tag = result_tag;
    recv.tag = work_tag;
    recv.status = status_of(0, work_tag, k_wildcard_count);
    for (uint64_t it = 0; it < iterations; ++it) {
      r.compute(10'000);
      r.call(send, 500);
      r.call(recv, 5'000);
    }
  }
  Event finalize = make_event(Call::Finalize, 6);
  r.call(finalize, 50'000);
}

// ---------------------------------------------------------------------------
// masterworker: the classic task farm. Rank 0 hands out `iterations` tasks:
// it receives a request from MPI_ANY_SOURCE (tag 1; a request carries the
// result of the worker's previous task), and sends the next task (tag 2) to
// the rank the status names. Once every task is out, it answers each
// worker's next request with a stop message (tag 3). A worker sends a
// request, receives from rank 0 with MPI_ANY_TAG, stops on tag 3, else
// computes (a seeded duration) and asks again. Which worker gets which task
// follows from the durations: the simulation below serves requests in the
// order they arrive, and every rank replays it to write its own events.

constexpr SiteSpec k_masterworker_sites[] = {
    {1, "main", 14},   {2, "master", 31}, {3, "master", 36}, {4, "master", 44},
    {5, "master", 45}, {6, "worker", 60}, {7, "worker", 62}, {8, "main", 80},
};
constexpr int32_t k_tag_request = 1, k_tag_task = 2, k_tag_stop = 3;
constexpr int64_t k_task_count = 64;  // doubles per message
constexpr uint64_t k_task_buf = 0x7ffc00050000ull;
constexpr uint64_t k_result_buf = 0x7ffc00060000ull;

uint64_t masterworker_iterations(const SynthOptions&) { return 60; }

// The schedule of a master/worker run: the order in which rank 0 serves
// requests (tasks first, then the stop messages), with the times.
struct FarmStep {
  int32_t worker = 0;
  bool stop = false;
  int64_t request_sent = 0;  // when the worker sent the request
  int64_t answered = 0;      // when rank 0 sent the task or stop message
};

std::vector<FarmStep> masterworker_schedule(uint32_t ranks, uint64_t tasks, uint64_t seed) {
  Rng rng(seed ^ 0xfa4dull);
  const uint32_t workers = ranks - 1;
  // Pending requests: (arrival, worker); the earliest is served next.
  std::vector<std::pair<int64_t, int32_t>> pending;
  for (uint32_t w = 1; w <= workers; ++w) pending.emplace_back(static_cast<int64_t>(rng.around(2'000, 3'000)), w);
  auto earliest = [&] {
    auto it = std::min_element(pending.begin(), pending.end());
    const auto out = *it;
    pending.erase(it);
    return out;
  };
  std::vector<FarmStep> out;
  int64_t now = 1'000;
  for (uint64_t t = 0; t < tasks + workers; ++t) {
    const auto [arrival, w] = earliest();
    now = std::max(now, arrival + 500) + 1'500;
    const bool stop = t >= tasks;
    out.push_back({w, stop, arrival, now});
    if (!stop) pending.emplace_back(now + 2'000 + static_cast<int64_t>(rng.around(20'000, 60'000)), w);
  }
  return out;
}

void masterworker_rank(Rank& r, uint32_t rank, uint64_t iterations, const SynthOptions& o) {
  const std::vector<FarmStep> schedule = masterworker_schedule(o.ranks, iterations, o.seed);
  init_call(r);
  if (rank == 0) {
    Event recv = p2p_event(Call::Recv, 2, k_any_source, k_tag_request, k_result_buf, k_task_count, k_double);
    Event send = p2p_event(Call::Send, 3, 0, k_tag_task, k_task_buf, k_task_count, k_double);
    for (const FarmStep& step : schedule) {
      r.wait_until(step.answered - 1'500);
      recv.site = step.stop ? 4 : 2;
      recv.status = status_of(step.worker, k_tag_request, k_task_count);
      r.call(recv, 1'000);
      send.site = step.stop ? 5 : 3;
      send.peer = step.worker;
      send.tag = step.stop ? k_tag_stop : k_tag_task;
      send.count = step.stop ? 0 : k_task_count;
      r.call(send, 400);
    }
  } else {
    Event request = p2p_event(Call::Send, 6, 0, k_tag_request, k_result_buf, k_task_count, k_double);
    Event answer = p2p_event(Call::Recv, 7, 0, k_any_tag, k_task_buf, k_task_count, k_double);
    for (const FarmStep& step : schedule) {
      if (step.worker != static_cast<int32_t>(rank)) continue;
      r.wait_until(step.request_sent);
      r.call(request, 500);
      r.wait_until(step.answered);
      answer.status = status_of(0, step.stop ? k_tag_stop : k_tag_task, step.stop ? 0 : k_task_count);
      r.call(answer, 800);
    }
  }
  finalize_call(r, 8);
}

// ---------------------------------------------------------------------------
// The seed's benchmark programs (smt-match-pairs-mcapi, section 5), as MPI
// programs. Their traces are small; what they exercise is the number of
// feasible matchings of wildcard receives, not the event count.

constexpr uint32_t k_int = 7;  // BASIC_INT
constexpr uint64_t k_small_recv_buf = 0x7ffc00030000ull;
constexpr uint64_t k_small_send_buf = 0x7ffc00040000ull;

// senders: Table 1. Ranks 1..K each MPI_Send one int (tag 0) to rank 0,
// which posts K MPI_Recv(MPI_ANY_SOURCE, tag 0) into consecutive ints. Any
// of the K! matchings is feasible; the recorded one takes the senders in a
// seeded order whose last receive is not sender K's (K > 1), so the seed's
// property, "the last receive can take sender K's message" (--can-match
// 0:K K:1), asks for another matching than the recorded one.

constexpr SiteSpec k_senders_sites[] = {
    {1, "main", 12}, {2, "receiver", 21}, {3, "sender", 30}, {4, "main", 38},
};

void senders_rank(Rank& r, uint32_t rank, uint64_t, const SynthOptions& o) {
  init_call(r);
  if (rank == 0) {
    const uint32_t k = o.ranks - 1;
    std::vector<int32_t> order = ranks_from_one(k);
    Rng rng(o.seed);
    shuffle(order, rng);
    if (k > 1 && order.back() == static_cast<int32_t>(k)) std::swap(order.front(), order.back());
    Event recv = p2p_event(Call::Recv, 2, k_any_source, 0, k_small_recv_buf, 1, k_int);
    for (int32_t sender : order) {
      recv.status = status_of(sender, 0, 1);
      r.call(recv, 2'000);
      recv.buf += 4;
    }
  } else {
    r.compute(5'000);
    Event send = p2p_event(Call::Send, 3, 0, 0, k_small_send_buf, 1, k_int);
    r.call(send, 1'000);
  }
  finalize_call(r, 4);
}

// leader: Table 2's "LE", leader election on a unidirectional ring
// (LeLann-Chang-Roberts). Rank r holds the candidate id ids[r], a seeded
// permutation of 0..N-1; it sends its id to rank r+1, forwards the ids
// greater than its own and drops the others; the rank whose own id comes
// back is the leader and sends an "elected" message (tag 2) around the ring,
// which every rank forwards once before it stops. Receives are
// MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Wait, one posted at a time and
// the first before the rank's first send, so the program does not rely on
// buffering; sends are MPI_Isend, completed by one MPI_Waitall at the end.
// Only rank r-1 sends to rank r, so non-overtaking leaves every wildcard
// receive a single candidate: many messages, no choice.

constexpr SiteSpec k_leader_sites[] = {
    {1, "main", 14}, {2, "elect", 33}, {3, "elect", 36}, {4, "elect", 41},
    {5, "elect", 52}, {6, "main", 60},
};
constexpr int32_t k_tag_candidate = 1, k_tag_elected = 2;

// Return the candidate ids of an election among `n` ranks.
std::vector<int32_t> leader_ids(uint32_t n, uint64_t seed) {
  std::vector<int32_t> ids = ranks_from_one(n);
  for (int32_t& id : ids) --id;
  Rng rng(seed ^ 0x1eade4ull);
  shuffle(ids, rng);
  return ids;
}

void leader_rank(Rank& r, uint32_t rank, uint64_t, const SynthOptions& o) {
  const uint32_t n = o.ranks;
  const std::vector<int32_t> ids = leader_ids(n, o.seed);
  const int32_t own = ids[rank];
  const auto prev = static_cast<int32_t>((rank + n - 1) % n);
  const auto next = static_cast<int32_t>((rank + 1) % n);

  // The candidate ids that reach this rank, in the order they arrive: rank
  // r-d's id gets here when it exceeds every id between, and links are FIFO,
  // so nearer ones come first. The leader's own id comes back last.
  std::vector<int32_t> arrivals;
  int32_t between = -1;
  for (uint32_t d = 1; d < n; ++d) {
    const int32_t id = ids[(rank + n - d) % n];
    if (id > between) arrivals.push_back(id);
    between = std::max(between, id);
  }
  const bool leader = own > between;
  if (leader) arrivals.push_back(own);

  Requests requests;
  std::vector<uint64_t> sends;
  Event irecv = p2p_event(Call::Irecv, 2, k_any_source, k_any_tag, k_small_recv_buf, 1, k_int);
  Event isend = p2p_event(Call::Isend, 3, next, k_tag_candidate, k_small_send_buf, 1, k_int);
  const auto send = [&](int32_t tag) {
    isend.tag = tag;
    sends.push_back(requests.start(r, isend, 600));
    isend.buf += 4;
  };

  init_call(r);
  uint64_t posted = requests.start(r, irecv, 400);
  send(k_tag_candidate);
  for (std::size_t i = 0; i <= arrivals.size(); ++i) {
    const bool elected = i == arrivals.size();
    r.compute(3'000);
    requests.wait(r, 4, posted, status_of(prev, elected ? k_tag_elected : k_tag_candidate, 1), 4'000);
    if (elected) {
      if (!leader) send(k_tag_elected);
      break;
    }
    posted = requests.start(r, irecv, 400);
    if (arrivals[i] > own) send(k_tag_candidate);
    if (arrivals[i] == own) send(k_tag_elected);
  }
  requests.wait_all(r, 5, sends, {}, 2'000);
  finalize_call(r, 6);
}

// router: Table 2's "Router", distance-vector routing on a ring. In each
// round every rank posts two MPI_Irecv(MPI_ANY_SOURCE, tag round % 2) for
// its neighbours' tables (N ints), MPI_Isends its table to the previous and
// to the next rank, and completes the four with MPI_Waitall. After N / 2
// rounds (the default) every table has a route to every rank. Each receive
// can take either neighbour's table (2 candidates); a table of a later round
// with the same tag comes only after this round's MPI_Waitall. The recorded
// run picks per rank and round which neighbour the first receive took.

constexpr SiteSpec k_router_sites[] = {
    {1, "main", 18}, {2, "exchange", 40}, {3, "exchange", 44}, {4, "exchange", 49},
    {5, "main", 75},
};

uint64_t router_iterations(const SynthOptions& o) { return std::max<uint64_t>(1, o.ranks / 2); }

void router_rank(Rank& r, uint32_t rank, uint64_t iterations, const SynthOptions& o) {
  const uint32_t n = o.ranks;
  const auto prev = static_cast<int32_t>((rank + n - 1) % n);
  const auto next = static_cast<int32_t>((rank + 1) % n);
  const int64_t table = n;
  Requests requests;
  init_call(r);
  for (uint64_t round = 0; round < iterations; ++round) {
    const auto tag = static_cast<int32_t>(round % 2);
    r.compute(8'000);
    Event irecv = p2p_event(Call::Irecv, 2, k_any_source, tag, k_small_recv_buf, table, k_int);
    const uint64_t a = requests.start(r, irecv, 400);
    irecv.buf += 4 * n;
    const uint64_t b = requests.start(r, irecv, 400);
    Event isend = p2p_event(Call::Isend, 3, prev, tag, k_small_send_buf, table, k_int);
    const uint64_t to_prev = requests.start(r, isend, 600);
    isend.peer = next;
    const uint64_t to_next = requests.start(r, isend, 600);
    const bool prev_first = r.rng().next() % 2 == 0;
    requests.wait_all(r, 4, {a, b, to_prev, to_next},
                      {status_of(prev_first ? prev : next, tag, table),
                       status_of(prev_first ? next : prev, tag, table)},
                      6'000);
  }
  finalize_call(r, 5);
}

// fig6: the seed's Figure 6 program, MCAPI's msg_send_i / msg_rcv_i + wait
// translated to MPI_Isend / MPI_Irecv(MPI_ANY_SOURCE) + MPI_Wait (tag 0),
// repeated `iterations` times without synchronization (Table 2's "MultiM"):
//   rank 0: R(*) W  R(*) W  S(1) W  R(*) W
//   rank 1: S(0) W  R(*) W  S(0) W
//   rank 2: S(0) W
// The recorded run matches within each iteration: rank 0's first two
// receives take ranks 1's and 2's first messages (a seeded order), its last
// one rank 1's second. With two iterations or more, rank 2's later messages
// may be taken by earlier receives; under zero-buffer semantics that can
// leave rank 1 in its first MPI_Wait while rank 0 waits in its send to rank 1.

constexpr SiteSpec k_fig6_sites[] = {
    {1, "main", 10}, {2, "task0", 1}, {3, "task0", 2}, {4, "task0", 3}, {5, "task0", 4},
    {6, "task1", 1}, {7, "task1", 2}, {8, "task1", 3}, {9, "task2", 1}, {10, "main", 30},
};

uint64_t fig6_iterations(const SynthOptions&) { return 1; }

void fig6_rank(Rank& r, uint32_t rank, uint64_t iterations, const SynthOptions&) {
  Requests requests;
  // One MCAPI call and its wait: MPI_Isend or MPI_Irecv at `site`, MPI_Wait
  // at the same line.
  const auto call_and_wait = [&](Call call, uint32_t site, int32_t peer, int32_t source) {
    Event e = p2p_event(call, site, peer, 0, call == Call::Irecv ? k_small_recv_buf : k_small_send_buf,
                        1, k_int);
    const uint64_t request = requests.start(r, e, 500);
    requests.wait(r, site, request, source >= 0 ? status_of(source, 0, 1) : Status{}, 2'000);
  };
  init_call(r);
  for (uint64_t it = 0; it < iterations; ++it) {
    r.compute(5'000);
    if (rank == 0) {
      const bool one_first = r.rng().next() % 2 == 0;
      call_and_wait(Call::Irecv, 2, k_any_source, one_first ? 1 : 2);
      call_and_wait(Call::Irecv, 3, k_any_source, one_first ? 2 : 1);
      call_and_wait(Call::Isend, 4, 1, -1);
      call_and_wait(Call::Irecv, 5, k_any_source, 1);
    } else if (rank == 1) {
      call_and_wait(Call::Isend, 6, 0, -1);
      call_and_wait(Call::Irecv, 7, k_any_source, 0);
      call_and_wait(Call::Isend, 8, 0, -1);
    } else {
      call_and_wait(Call::Isend, 9, 0, -1);
    }
  }
  finalize_call(r, 10);
}

// ---------------------------------------------------------------------------

// How long a generator's trace is: `events` per rank (whole iterations), or
// the program's own length (iterations, when it has a loop).
enum class Length : uint8_t { events, program };

struct Generator {
  const char* name;
  const SiteSpec* sites;
  std::size_t nsites;
  uint32_t min_ranks;
  uint32_t max_ranks;
  bool plants_bugs;
  Length length;
  // The default iterations; nullptr: the program has no loop.
  uint64_t (*iterations)(const SynthOptions&);
  void (*rank)(Rank&, uint32_t, uint64_t, const SynthOptions&);
};

template <std::size_t N>
constexpr Generator generator(const char* name, const SiteSpec (&sites)[N], uint32_t min_ranks,
                              uint32_t max_ranks, bool plants_bugs, Length length,
                              uint64_t (*iterations)(const SynthOptions&),
                              void (*rank)(Rank&, uint32_t, uint64_t, const SynthOptions&)) {
  return {name, sites, N, min_ranks, max_ranks, plants_bugs, length, iterations, rank};
}

const Generator k_generators[] = {
    generator("halo", k_halo_sites, 1, k_max_ranks, true, Length::events, halo_iterations,
              halo_rank),
    generator("pingpong", k_pingpong_sites, 1, k_max_ranks, false, Length::events,
              pingpong_iterations, pingpong_rank),
    generator("wildcard", k_wildcard_sites, 2, k_max_ranks, false, Length::events,
              wildcard_iterations, wildcard_rank),
    generator("senders", k_senders_sites, 2, k_max_ranks, false, Length::program, nullptr,
              senders_rank),
    generator("leader", k_leader_sites, 2, k_max_ranks, false, Length::program, nullptr,
              leader_rank),
    generator("router", k_router_sites, 3, k_max_ranks, false, Length::program,
              router_iterations, router_rank),
    generator("fig6", k_fig6_sites, 3, 3, false, Length::program, fig6_iterations, fig6_rank),
    generator("masterworker", k_masterworker_sites, 2, k_max_ranks, false, Length::program,
              masterworker_iterations, masterworker_rank),
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string default_command(const Generator& g, const SynthOptions& o) {
  const std::string name = g.name;
  std::string command = "smtrace synth " + name;
  if (name == "senders") {
    command += " --k " + std::to_string(o.ranks - 1);
  } else if (name == "leader" || name == "router") {
    command += " --n " + std::to_string(o.ranks);
  } else if (name != "fig6") {
    command += " --ranks " + std::to_string(o.ranks);
  }
  if (o.iterations != 0) {
    command += " --iterations " + std::to_string(o.iterations);
  } else if (g.length == Length::events) {
    command += " --events " + std::to_string(o.events);
  }
  command += " --seed " + std::to_string(o.seed);
  if (o.bug != SynthBug::none) command += " --bug " + std::string(synth_bug_name(o.bug));
  return command;
}

// Write rank `rank`'s file; return its events and bytes.
std::pair<uint64_t, uint64_t> write_rank(const Generator& g, const fs::path& dir, uint32_t rank,
                                         uint64_t iterations, const SynthOptions& o) {
  RankHeader header;
  header.rank = rank;
  header.world_size = o.ranks;
  header.host = "synth" + std::to_string(rank / 16);
  header.pid = 10'000 + rank;
  header.mpi_library = "synthetic";
  header.mpi_version = 31;
  header.clock_origin_ns = 1'000'000'000 + static_cast<int64_t>(rank) * 1'000;
  header.tracer_version = SMTRACE_VERSION;
  header.options["SMTRACE_SYNTH"] = g.name;
  header.options[std::string(k_cuda_option)] = std::string(k_cuda_untraced);  // no generator makes CUDA calls
  header.executable = std::string("/synthetic/") + g.name;
  header.argv = {g.name};
  header.chunk_bytes = k_chunk_bytes;

  RankFile file(dir / rank_file_name(rank), header);
  Module module;
  module.id = 1;
  module.path = header.executable;
  module.base = 0x555555554000ull;
  file.module(module);
  const std::string source = std::string(g.name) + ".c";
  for (std::size_t i = 0; i < g.nsites; ++i) {
    CallSite s;
    s.id = g.sites[i].id;
    s.module = module.id;
    s.offset = 0x1000 + g.sites[i].line * 0x10;
    s.function = g.sites[i].function;
    s.file = source;
    s.line = g.sites[i].line;
    file.site(s);
  }

  Rank r(file, o.seed, rank);
  g.rank(r, rank, iterations, o);

  Termination end;
  end.t = r.now();
  if (o.bug == SynthBug::deadlock) {
    end.kind = TerminationKind::signal;
    end.signal = k_sigterm;
  } else {
    end.kind = TerminationKind::finalized;
  }
  file.finish(end);
  return {file.events(), file.bytes()};
}

}  // namespace

std::vector<std::string> synth_generators() {
  std::vector<std::string> names;
  for (const Generator& g : k_generators) names.emplace_back(g.name);
  return names;
}

std::string_view synth_bug_name(SynthBug bug) {
  switch (bug) {
    case SynthBug::none: return "none";
    case SynthBug::deadlock: return "deadlock";
    case SynthBug::collective_mismatch: return "collective-mismatch";
  }
  return "?";
}

SynthResult write_synthetic_trace(std::string_view name, const fs::path& dir,
                                  const SynthOptions& options) {
  const Generator* g = nullptr;
  for (const Generator& candidate : k_generators) {
    if (name == candidate.name) g = &candidate;
  }
  if (!g) throw TraceError("synth: no generator named '" + std::string(name) + "'");
  if (options.ranks < std::max<uint32_t>(1, g->min_ranks) || options.ranks > g->max_ranks) {
    throw TraceError("synth " + std::string(name) + ": ranks must be " +
                     (g->min_ranks == g->max_ranks
                          ? std::to_string(g->max_ranks)
                          : std::to_string(std::max<uint32_t>(1, g->min_ranks)) + ".." +
                                std::to_string(g->max_ranks)));
  }
  if (options.iterations != 0 && !g->iterations) {
    throw TraceError("synth " + std::string(name) + ": the program has no loop (no iterations)");
  }
  if (options.bug != SynthBug::none) {
    if (!g->plants_bugs) {
      throw TraceError("synth " + std::string(name) + ": cannot plant --bug " +
                       std::string(synth_bug_name(options.bug)) + " (only halo can)");
    }
    if (options.ranks < 2) {
      throw TraceError("synth " + std::string(name) + ": --bug " +
                       std::string(synth_bug_name(options.bug)) + " needs at least 2 ranks");
    }
  }

  // The manifest through the JSON writer, which also clears an earlier
  // trace's rank and symbol files out of `dir`.
  Trace skeleton;
  skeleton.has_manifest = true;
  skeleton.manifest.world_size = options.ranks;
  skeleton.manifest.created_utc = utc_now();
  skeleton.manifest.command = options.command.empty() ? default_command(*g, options) : options.command;
  skeleton.manifest.tracer_version = SMTRACE_VERSION;
  skeleton.manifest.mpi_library = "synthetic";
  skeleton.manifest.job = "synth";
  write_trace(skeleton, dir);

  const uint64_t iterations =
      options.iterations ? options.iterations : g->iterations ? g->iterations(options) : 1;

  std::atomic<uint64_t> events{0}, bytes{0};
  run_on_threads(thread_count(options.threads, options.ranks), options.ranks, [&](std::size_t rank) {
    auto [e, b] = write_rank(*g, dir, static_cast<uint32_t>(rank), iterations, options);
    events += e;
    bytes += b;
  });

  SynthResult result;
  result.ranks = options.ranks;
  result.events = events;
  result.iterations = iterations;
  result.bytes = bytes;
  return result;
}

}  // namespace smtrace::format
