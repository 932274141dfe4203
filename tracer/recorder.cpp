#include "tracer/recorder.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace smtrace::tracer {

namespace {
constexpr uint64_t k_page = 4096;
uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
// The largest file this process may write (RLIMIT_FSIZE), UINT64_MAX when unlimited.
uint64_t file_size_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return limit.rlim_cur;
}
void store_u32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// 1 MiB a write, not 64 KiB: about 100 ns less a page here (the kernel's
// per-write work), 0.5-1 ns per event. In .bss, never written: no bytes in
// the library, and its pages read as the shared zero page.
unsigned char g_zeros[1024 * 1024];

// pwrite zeros over file range [from, to); stop at the first error (a hint).
void write_zeros(int fd, uint64_t from, uint64_t to) {
  while (from < to) {
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(sizeof g_zeros, to - from));
    const ssize_t done = ::pwrite(fd, g_zeros, n, static_cast<off_t>(from));
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) break;
    from += static_cast<uint64_t>(done);
  }
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t seen) {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>& word) {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace

// The grow-ahead thread and what it shares with the writer (the thread
// holding the recorder's lock in grow). The file's zeros are written in
// claims, in file order: `claimed` is the end of the zeros taken so far, by
// either thread, and only moves up (compare-and-swap). The helper claims at
// most 1 MiB at a time, up to `target` (the writer's request: the segment
// after the mapping), announcing the claim's start in `busy` before it
// takes it. grow() takes everything up to the end it is about to map,
// then waits while `busy` is below that end (a write of at most 1 MiB in
// flight), and writes what it took itself: so no zero is ever written
// where a record may be, the mapping's range is the writer's alone once
// mapped. All sequentially consistent: the helper's store of `busy` and its
// claim against grow's claim and load of `busy` (either the helper's claim
// fails, or grow sees it busy).
struct Recorder::GrowAhead {
  int fd = -1;
  pid_t pid = 0;
  pthread_t thread{};
  std::atomic<uint64_t> claimed{0};
  std::atomic<uint64_t> busy{UINT64_MAX};  // UINT64_MAX: no write in flight
  std::atomic<uint64_t> target{0};
  std::atomic<uint32_t> wake{0};  // futex word: bumped with each request
  std::atomic<bool> stop{false};

  static void* run(void* self) {
    auto* a = static_cast<GrowAhead*>(self);
    for (;;) {
      const uint32_t seen = a->wake.load();
      if (a->stop.load()) return nullptr;
      uint64_t from = a->claimed.load();
      // Never past RLIMIT_FSIZE (SIGXFSZ would kill the application).
      const uint64_t to = std::min(a->target.load(), file_size_limit());
      if (from >= to) {
        futex_wait(a->wake, seen);
        continue;
      }
      const uint64_t end = std::min(to, from + sizeof g_zeros);
      a->busy.store(from);
      if (a->claimed.compare_exchange_strong(from, end)) write_zeros(a->fd, from, end);
      a->busy.store(UINT64_MAX);
    }
  }
  // Take the zeros below `to` for the writer; wait for the helper's write
  // in flight below it. Return where the writer's own part starts (`to`:
  // nothing left to it).
  uint64_t take(uint64_t to) {
    uint64_t c = claimed.load();
    while (c < to && !claimed.compare_exchange_weak(c, to)) {
    }
    while (busy.load() < to) sched_yield();
    return std::min(c, to);
  }
  void request(uint64_t to) {
    target.store(to);
    wake.fetch_add(1);
    futex_wake(wake);
  }
};

Recorder::GrowAhead* Recorder::ahead_here() const {
  return m_ahead && m_ahead->pid == getpid() ? m_ahead : nullptr;
}

bool Recorder::grow_ahead() const { return ahead_here() != nullptr; }

bool Recorder::start_grow_ahead() {
  if (m_ahead || !m_active) return false;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0 || CPU_COUNT(&cpus) < 2) return false;
  auto* a = new GrowAhead;
  a->fd = m_fd;
  a->pid = getpid();
  a->claimed.store(std::max(m_filled, m_map_off + m_map_len));
  a->target.store(a->claimed.load() + m_segment);
  // Every signal blocked in the thread from its start: the application's
  // signals go to its own threads, as without the tracer.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(&a->thread, nullptr, &GrowAhead::run, a);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    delete a;
    return false;
  }
  m_ahead = a;
  return true;
}

void Recorder::stop_grow_ahead() {
  GrowAhead* a = ahead_here();
  if (!a) return;  // none, or a forked parent's: not ours to join
  a->stop.store(true);
  a->wake.fetch_add(1);
  futex_wake(a->wake);
  pthread_join(a->thread, nullptr);
  delete a;
  m_ahead = nullptr;
}

Recorder::~Recorder() {
  stop_grow_ahead();
  if (m_map) munmap(m_map, m_map_len);
  if (m_fd >= 0) ::close(m_fd);
}

void Recorder::fail(const std::string& what) {
  if (!m_active) return;
  m_active = false;
  m_last.entry = false;
  m_error = m_path + ": " + what;
}

// The magic and the header go into the file with write(2), before the file
// is grown or mapped. Once write returns they are in the page cache, which a
// killed process leaves behind: from then on the file reads as a rank file
// (with no chunk yet) whatever happens to the process. Growing first
// (posix_fallocate, then MADV_POPULATE_WRITE of 4 MiB: milliseconds on a
// loaded machine) and copying the header into the mapping after left a
// window in which MPI_Abort's SIGKILL of a sibling left a 4 MiB file of
// zeros: no magic, nothing to read (issue 17: 10 files in 1,200 abort runs).
// The file is also locked (flock, shared by nobody) for as long as the
// process lives: `smtrace record` waits for the locks to go before it reads
// the trace, so that it never reads a file a dying rank still writes.
bool Recorder::open(const std::string& path, const format::RankHeader& header, uint32_t chunk_bytes) {
  m_path = path;
  m_chunk_bytes = chunk_bytes;
  m_segment = std::max<uint64_t>(4u << 20, round_up(4ull * chunk_bytes, k_page));
  m_scratch.reserve(2 * chunk_bytes + 4096);
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m_fd < 0) {
    m_error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  (void)flock(m_fd, LOCK_EX | LOCK_NB);  // advisory; a file system without locks is no error
  std::string head(format::k_magic, format::k_magic_size);
  std::string payload = format::encode_rank_header(header);
  m_header_bytes = payload.size();
  format::append_frame_header(head, payload);
  head += payload;
  if (head.size() > file_size_limit()) {
    m_error = path + ": cannot write the header: " + std::strerror(EFBIG) + " (RLIMIT_FSIZE)";
    return false;
  }
  for (std::size_t done = 0; done < head.size();) {
    const ssize_t n = ::write(m_fd, head.data() + done, head.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      m_error = path + ": cannot write the header: " + std::strerror(n < 0 ? errno : ENOSPC);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  m_active = true;
  m_chunk_start = 0;
  m_pos = head.size();
  m_filled = m_pos;  // the magic and header: never filled over
  return true;
}

// ensure's slow path.
bool Recorder::grow(uint64_t end) {
  if (!m_active) return false;
  if (m_map && end <= m_map_off + m_map_len) return true;
  uint64_t off = (m_chunk_open ? m_chunk_start : m_pos) / k_page * k_page;
  uint64_t len = round_up(end - off, m_segment);
  // Never grow past RLIMIT_FSIZE: the kernel would answer with SIGXFSZ,
  // which kills the application, not with an error return.
  // (Read at each growth, once per segment: the application may change it.)
  const uint64_t limit = file_size_limit();
  if (end > limit) {
    fail(std::string("cannot grow the file: ") + std::strerror(EFBIG) + " (RLIMIT_FSIZE)");
    return false;
  }
  len = std::min(len, limit - off);
  int rc = posix_fallocate(m_fd, static_cast<off_t>(off), static_cast<off_t>(len));
  if (rc == ENOSPC || rc == EFBIG) {
    // Nearly full: go on with just what this record needs, until nothing is left.
    len = round_up(end - off, k_page);
    len = std::min(len, limit - off);
    rc = posix_fallocate(m_fd, static_cast<off_t>(off), static_cast<off_t>(len));
  }
  if (rc != 0) {
    fail(std::string("cannot grow the file: ") + std::strerror(rc));
    return false;
  }
  GrowAhead* ahead = ahead_here();
  // The zeros the grow-ahead thread has taken are its (and written once
  // take returns); the rest are written here.
  fill_page_cache(std::max({off, m_filled, ahead ? ahead->take(off + len) : 0}), off + len);
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, static_cast<off_t>(off));
  if (p == MAP_FAILED) {
    fail(std::string("cannot map the file: ") + std::strerror(errno));
    return false;
  }
#ifdef MADV_POPULATE_WRITE
  // Fault the segment in writable with one call (Linux >= 5.14) instead of
  // one write fault per 4 KiB page on the hot path; older kernels say
  // EINVAL and fault as they go.
  (void)madvise(p, len, MADV_POPULATE_WRITE);
#endif
  if (m_map) munmap(m_map, m_map_len);
  m_map = static_cast<unsigned char*>(p);
  m_map_off = off;
  m_map_len = len;
  if (ahead) ahead->request(std::min(off + len + m_segment, limit));
  return true;
}

// Put the zeros of file range [from, to), reserved but never written, into
// the page cache with pwrite(2), before the range is mapped and prefaulted.
// Only a hint, errors are ignored (the range is reserved and reads as zeros
// either way): on this machine's ext4 (kernel 6.18, under KVM) a prefaulted
// 4 KiB page of the mapping costs about 1.5 us of kernel time after the
// pwrite, 5 us without (the fault then reads the unwritten extent in, page
// by page), and every byte of the trace is paid at that rate: 25-40 ns per
// recorded call before. Never past RLIMIT_FSIZE: the caller keeps `to`
// within it. m_filled only grows, to the end of every range mapped whatever
// the pwrites did: records are written below it, never filled over.
void Recorder::fill_page_cache(uint64_t from, uint64_t to) {
  write_zeros(m_fd, from, to);
  m_filled = std::max(m_filled, to);
}

void Recorder::put(const void* data, std::size_t size, bool first_byte_last) {
  if (size == 0 || !ensure(m_pos + size)) return;
  unsigned char* dst = m_map + (m_pos - m_map_off);
  auto src = static_cast<const unsigned char*>(data);
  if (first_byte_last) {
    // A record becomes visible to a reader of the killed rank's file only
    // once its first (tag) byte is non-zero: store that byte last.
    std::memcpy(dst + 1, src + 1, size - 1);
    __atomic_store_n(dst, src[0], __ATOMIC_RELEASE);
  } else {
    std::memcpy(dst, src, size);
  }
  m_pos += size;
}

void Recorder::open_chunk(int64_t t) {
  unsigned char frame[format::k_frame_header_size] = {};
  store_u32(frame, format::k_open_frame);
  m_chunk_start = m_pos;
  m_chunk_open = true;  // before put: the mapping must start at the chunk
  put(frame, sizeof frame, false);
  if (!m_active) return;
  m_chunk_payload = 0;
  m_chunk_crc = 0;
  m_scratch.clear();
  m_encoder.begin_chunk(m_scratch, m_next_seq, t, m_chunk_index++);
  m_chunk_payload += m_scratch.size();
  m_info_bytes = m_scratch.size();
  put(m_scratch.data(), m_scratch.size(), true);
}

void Recorder::seal() {
  if (!m_chunk_open || !m_active) return;
  if (!ensure(m_pos)) return;
  unsigned char* head = m_map + (m_chunk_start - m_map_off);
  // The CRC is computed here, over the chunk in the mapping (which always
  // starts at or before the open chunk), not per record: once per byte, in
  // bulk, and never for records taken back by rewrite_last.
  m_chunk_crc = format::crc32c(head + format::k_frame_header_size, m_chunk_payload);
  // CRC first, then the length: a frame with a real length has a real CRC.
  store_u32(head + 4, m_chunk_crc);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  store_u32(head, static_cast<uint32_t>(m_chunk_payload));
  m_chunk_open = false;
  m_last.entry = false;
}

template <class Encode>
void Recorder::record(int64_t t, Encode&& encode) {
  if (!m_active) return;
  if (!m_chunk_open) open_chunk(t);
  m_scratch.clear();
  m_last.encoder_before = m_encoder;
  encode(m_scratch);
  if (m_chunk_payload > m_info_bytes && m_chunk_payload + m_scratch.size() > m_chunk_bytes) {
    seal();
    open_chunk(t);
    m_scratch.clear();
    m_last.encoder_before = m_encoder;
    encode(m_scratch);  // re-encoded: the new chunk restarts the delta coding
  }
  if (!m_active) return;
  m_last.is_event = false;
  m_last.entry = false;
  m_last.start = m_pos;
  m_last.size = m_scratch.size();
  m_chunk_payload += m_scratch.size();
  put(m_scratch.data(), m_scratch.size(), true);
}

// Events and completions, the hot path, are encoded straight into the
// mapping (no scratch buffer, no copy): every byte but the first, then the
// first. Until then the record starts with a zero byte, where readers stop.
template <class Encode>
bool Recorder::record_in_place(int64_t t, std::size_t bound, Encode&& encode) {
  if (!m_active) return false;
  if (!m_chunk_open) open_chunk(t);
  if (!ensure(m_pos + bound)) return false;
  m_last.encoder_before = m_encoder;
  m_last.entry = false;  // the event encodings set it
  unsigned char* dst = m_map + (m_pos - m_map_off);
  std::size_t size = encode(dst);
  if (m_chunk_payload > m_info_bytes && m_chunk_payload + size > m_chunk_bytes) {
    // Does not fit: clear the unpublished bytes (the space after the last
    // record stays zero), seal, and encode again against the new chunk.
    std::memset(dst + 1, 0, size - 1);
    seal();
    open_chunk(t);
    if (!ensure(m_pos + bound)) return false;
    m_last.encoder_before = m_encoder;
    dst = m_map + (m_pos - m_map_off);
    size = encode(dst);
  }
  m_last.is_event = false;
  m_last.start = m_pos;
  m_last.size = size;
  m_chunk_payload += size;
  __atomic_store_n(dst, format::RecordEncoder::k_event_tag, __ATOMIC_RELEASE);
  m_pos += size;
  return true;
}

template <class E, class Encode>
uint64_t Recorder::stream_event(E& e, std::size_t bound, Encode&& encode) {
  if (!m_active) {
    ++m_dropped;
    return 0;
  }
  e.seq = m_next_seq;
  bool written = record_in_place(e.t_start, bound, encode);
  if (!written || !m_active) {
    ++m_dropped;
    return e.seq;
  }
  ++m_next_seq;
  ++m_events;
  m_last_t = e.t_start;
  m_last.is_event = true;
  m_last.seq = e.seq;
  return e.seq;
}

uint64_t Recorder::event(format::Event& e) {
  return stream_event(e, format::RecordEncoder::record_bound(e),
                      [&](unsigned char* dst) { return m_encoder.event_at(dst, e, &m_last.entry); });
}

template <format::HotGroups G>
uint64_t Recorder::hot_event(format::HotEvent& e) {
  return stream_event(e, format::RecordEncoder::k_hot_record_bound,
                      [&](unsigned char* dst) { return m_encoder.hot_event_at<G>(dst, e, &m_last.entry); });
}

bool Recorder::rewrite_last(uint64_t seq, format::Event& e) {
  if (!take_back_last(seq)) return false;
  event(e);
  return true;
}

template <format::HotGroups G>
bool Recorder::rewrite_last(uint64_t seq, format::HotEvent& e) {
  if (!take_back_last(seq)) return false;
  hot_event<G>(e);
  return true;
}

#define SMTRACE_HOT_EVENT(G)                                     \
  template uint64_t Recorder::hot_event<G>(format::HotEvent&); \
  template bool Recorder::rewrite_last<G>(uint64_t, format::HotEvent&);
SMTRACE_HOT_GROUP_SETS(SMTRACE_HOT_EVENT)
#undef SMTRACE_HOT_EVENT

bool Recorder::take_back_last(uint64_t seq) {
  if (!m_active || !m_chunk_open || !m_last.is_event || m_last.seq != seq || m_last.start + m_last.size != m_pos ||
      m_last.start < m_map_off)
    return false;
  // Take the pending record back: its first byte first (a reader of a killed
  // rank's file then stops there), then the rest, so no mix of old and new
  // bytes ever parses. The call has returned: its entry no longer has to be
  // durable on its own.
  unsigned char* p = m_map + (m_last.start - m_map_off);
  __atomic_store_n(p, static_cast<unsigned char>(0), __ATOMIC_RELEASE);
  std::memset(p + 1, 0, m_last.size - 1);
  m_pos = m_last.start;
  m_chunk_payload -= m_last.size;
  m_encoder = m_last.encoder_before;
  m_last.entry = false;
  m_next_seq = seq;
  --m_events;
  return true;
}

// The complete event of a call whose only outputs are duration, rc and
// status is its entry up to its pending field, the entry's last, followed
// by those (format::write_entry_outputs): no Event to encode, nothing of the
// entry read or moved. Entries the encoder did not mark as such (a longer
// than one-byte length, an output already there), or a complete event that
// would not fit the chunk or a one-byte length, are left to rewrite_last.
template <bool k_long, class Write>
bool Recorder::finish_entry(uint64_t seq, std::size_t bound, Write&& write) {
  // m_last.entry holds only while the entry is the open chunk's last
  // record, mapped, and the recorder active: every write of a record resets
  // it (record, record_in_place), and seal, fail and take_back_last clear
  // it, so it stands for those tests (recorder.hpp: LastRecord).
  if (!m_last.entry || m_last.seq != seq || m_pos + bound > m_map_off + m_map_len) return false;
  unsigned char* dst = m_map + (m_last.start - m_map_off);
  unsigned char* pending = dst + m_last.size - sizeof format::k_pending_field;
  // As in rewrite_last: the first byte goes to zero first (a reader of a
  // killed rank's file stops there), the tag comes back last.
  __atomic_store_n(dst, static_cast<unsigned char>(0), __ATOMIC_RELEASE);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  unsigned char* end = write(pending);
  const auto body = static_cast<std::size_t>(end - dst) - 2;
  // A two-byte length from 0x80 on (k_long; else declined).
  const std::size_t size = k_long && body >= 0x80 ? body + 3 : body + 2;
  if (body >= (k_long ? 0x4000 : 0x80) || m_chunk_payload - m_last.size + size > m_chunk_bytes) {
    // Does not fit the chunk: put the entry back as it was (the space after it zero).
    std::memset(pending, 0, static_cast<std::size_t>(end - pending));
    std::memcpy(pending, format::k_pending_field, sizeof format::k_pending_field);
    __atomic_store_n(dst, format::RecordEncoder::k_event_tag, __ATOMIC_RELEASE);
    return false;
  }
  if (size < m_last.size) std::memset(end, 0, m_last.size - size);  // no duration: two bytes less
  if (!k_long || body < 0x80) {
    dst[1] = static_cast<unsigned char>(size - 2);
  } else {
    // A body that outgrew the one-byte length (a Waitall's statuses): moved
    // one byte on, as the encoder does (put_record_at), for a two-byte one.
    std::memmove(dst + 3, dst + 2, body);
    dst[1] = static_cast<unsigned char>(body | 0x80);
    dst[2] = static_cast<unsigned char>(body >> 7);
  }
  __atomic_store_n(dst, format::RecordEncoder::k_event_tag, __ATOMIC_RELEASE);
  m_chunk_payload = m_chunk_payload - m_last.size + size;
  m_pos = m_last.start + size;
  m_last.size = size;
  m_last.entry = false;  // complete now
  return true;
}

bool Recorder::complete_last(uint64_t seq, uint64_t duration, int32_t rc, const format::Status& status) {
  return finish_entry<false>(seq, format::k_entry_outputs_bound, [&](unsigned char* pending) {
    return format::write_entry_outputs(pending, duration, rc, status);
  });
}

bool Recorder::complete_last(uint64_t seq, const format::CompletedRequest* completed, std::size_t n_completed,
                             const std::optional<bool>& flag, uint64_t duration, int32_t rc,
                             const format::Status& status) {
  return finish_entry<true>(seq, format::entry_completion_bound(n_completed) + 1, [&](unsigned char* pending) {
    return format::write_entry_completion(pending, completed, n_completed, flag, duration, rc, status);
  });
}

// One pwrite of frame and payload together: once it returns the page cache
// holds the new header, which a killed process leaves behind as it leaves
// open()'s (a process kill does not tear a write).
bool Recorder::rewrite_header(const format::RankHeader& header) {
  if (m_fd < 0) return false;
  std::string payload = format::encode_rank_header(header);
  if (payload.size() != m_header_bytes) return false;
  std::string frame;
  format::append_frame_header(frame, payload);
  frame += payload;
  const ssize_t n = ::pwrite(m_fd, frame.data(), frame.size(), static_cast<off_t>(format::k_magic_size));
  return n == static_cast<ssize_t>(frame.size());
}

void Recorder::completion(uint64_t seq, const format::Event& end) {
  record_in_place(m_last_t, format::RecordEncoder::record_bound(end),
                  [&](unsigned char* dst) { return m_encoder.completion_at(dst, seq, end); });
}
void Recorder::site(const format::CallSite& s) {
  record(m_last_t, [&](std::string& out) { m_encoder.site(out, s); });
}
void Recorder::module(const format::Module& m) {
  record(m_last_t, [&](std::string& out) { m_encoder.module(out, m); });
}
void Recorder::comm(const format::CommDef& c) {
  record(m_last_t, [&](std::string& out) { m_encoder.comm(out, c); });
}
void Recorder::datatype(const format::DatatypeDef& d) {
  record(m_last_t, [&](std::string& out) { m_encoder.datatype(out, d); });
}
void Recorder::note(const format::TracerNote& n) {
  record(m_last_t, [&](std::string& out) { m_encoder.note(out, n); });
}
void Recorder::termination(format::Termination end) {
  end.last_seq = m_next_seq ? m_next_seq - 1 : 0;
  end.events = m_events;
  end.dropped = m_dropped;
  record(m_last_t, [&](std::string& out) { m_encoder.termination(out, end); });
}

bool Recorder::reopen() {
  if (m_active || m_fd >= 0 || m_path.empty() || !m_error.empty()) return false;
  const int fd = ::open(m_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != m_pos) {
    ::close(fd);
    return false;
  }
  m_fd = fd;
  m_active = true;
  m_chunk_open = false;
  m_filled = m_pos;
  m_map_off = 0;
  m_map_len = 0;
  return true;
}

void Recorder::close() {
  seal();
  m_last.entry = false;
  stop_grow_ahead();  // its last write done before the file is cut
  if (m_map) {
    munmap(m_map, m_map_len);
    m_map = nullptr;
  }
  if (m_fd >= 0) {
    if (ftruncate(m_fd, static_cast<off_t>(m_pos)) != 0 && m_active)
      fail(std::string("cannot truncate: ") + std::strerror(errno));
    ::close(m_fd);
    m_fd = -1;
  }
  m_active = false;
}

}  // namespace smtrace::tracer
