#include "distributed/transfer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "analyzer/analyze.hpp"
#include "analyzer/check.hpp"
#include "distributed/record_codec.hpp"
#include "trace_format/parallel.hpp"

namespace smtrace::distributed {

namespace {

// Wait until `ready()` returns true. Open MPI's blocking calls spin on a
// core; a reader thread waiting for process 0, or a loading thread waiting
// for a reader, would take the core the other needs. A message holds
// milliseconds of work (thousands of events), so the sleeps grow to 1 ms:
// polling every 50 us cost a reader a third of a core on 64x1M.
template <class Ready>
void poll(const Ready& ready) {
  auto pause = std::chrono::microseconds(20);
  for (int spins = 0; !ready(); ++spins) {
    if (spins < 16) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

void send_pieces(const std::string& bytes, uint32_t rank, MPI_Comm comm);

// Wait until `request` completes (at once for MPI_REQUEST_NULL).
void complete(MPI_Request& request) {
  poll([&] {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
}

// Sends one rank's messages, one in flight while the next is filled.
class Sender {
 public:
  Sender(uint32_t rank, MPI_Comm comm) : m_tag(static_cast<int>(rank)), m_comm(comm) {}
  ~Sender() { wait(); }
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  // Send what `writer` wrote (whole records) and leave it empty; it writes
  // the next message in the storage of the one sent before.
  void send(RecordWriter& writer) {
    wait();
    writer.take(m_in_flight);
    MPI_Isend(m_in_flight.data(), static_cast<int>(m_in_flight.size()), MPI_BYTE, 0, m_tag, m_comm, &m_request);
  }

 private:
  void wait() { complete(m_request); }

  int m_tag;
  MPI_Comm m_comm;
  std::string m_in_flight;
  MPI_Request m_request = MPI_REQUEST_NULL;
};

// The reading process's view of a rank it reads: the rank file, whose
// records go both to process 0 (`writer`, sent by `sender` a message at a
// time) and to the analyzer's callbacks (run_saved_passes). Of the events,
// process 0 gets those of the calls that run_saved_passes names
// (pass_on_only: what a consumer there still reads), in the order read, and
// before the end or an error, how many the file held (an events_read record).
// What the reader throws goes to process 0 as a record, to be thrown there
// after the same records as `smtrace check` would have seen, and to the
// analyzer. What the analyzer's callbacks throw (a pass failing under
// CheckErrors::rethrow) stops only the analyzer: process 0 needs every
// record all the same, so it is thrown at the end of read_all.
class TeeSource final : public analyzer::RankSource {
 public:
  TeeSource(const std::filesystem::path& file, uint32_t recovered_version, RecordWriter& writer, Sender& sender)
      : m_file(file), m_recovered_version(recovered_version), m_writer(writer), m_sender(sender) {}

  void pass_on_only(const analyzer::EventSet& calls) override { m_pass_on = calls; }

  std::optional<format::RankHeader> header(const format::RankReader::Callbacks& callbacks) override {
    std::optional<format::RankHeader> header;
    guarded([&] {
      m_reader.emplace(m_file, m_recovered_version);
      header = m_reader->header(tee(callbacks));
    });
    m_writer.header(header);
    rethrow();
    return header;
  }
  void read_all(const format::RankReader::Callbacks& callbacks) override {
    guarded([&] { m_reader->read_all(tee(callbacks)); });
    m_writer.events_read(m_read);
    m_writer.done();
    m_sender.send(m_writer);  // process 0 need not wait for the passes' end
    rethrow();
  }

 private:
  // Run `read`; send what the reader throws to process 0 and rethrow it.
  template <class Read>
  void guarded(const Read& read) {
    try {
      read();
    } catch (const std::bad_alloc&) {
      m_writer.out_of_memory();
      throw;
    } catch (const std::exception& e) {
      m_writer.events_read(m_read);
      m_writer.error(e.what());
      throw;
    }
  }
  // Return callbacks that hand each record to the writer, then to `to`.
  format::RankReader::Callbacks tee(const format::RankReader::Callbacks& to) {
    format::RankReader::Callbacks cb = m_writer.callbacks();
    auto both = [this](auto first, auto second) -> decltype(first) {
      if (!first && !second) return {};
      return [this, first = std::move(first), second](const auto& record) {
        if (first) first(record);
        if (second && !m_stopped) {
          try {
            second(record);
          } catch (...) {
            m_stopped = std::current_exception();
          }
        }
      };
    };
    cb.site = both(std::move(cb.site), to.site);
    cb.module = both(std::move(cb.module), to.module);
    cb.comm = both(std::move(cb.comm), to.comm);
    cb.datatype = both(std::move(cb.datatype), to.datatype);
    cb.end = both(std::move(cb.end), to.end);
    cb.note = both(std::move(cb.note), to.note);
    cb.problem = both(std::move(cb.problem), to.problem);
    cb.event = [this, to_writer = std::move(cb.event),
                to_analyzer = both(decltype(cb.event){}, to.event)](const format::Event& e) {
      ++m_read.events;
      m_read.last_seq = std::max(m_read.last_seq, e.seq);
      if (m_pass_on.has(e.call)) {
        ++m_read.delivered;
        to_writer(e);
        if (m_writer.size() >= k_message_bytes) m_sender.send(m_writer);
      }
      if (to_analyzer) to_analyzer(e);
    };
    return cb;
  }
  void rethrow() {
    if (m_stopped) std::rethrow_exception(std::exchange(m_stopped, nullptr));
  }

  std::filesystem::path m_file;
  uint32_t m_recovered_version;  // the version a lost header is read in (format::recovered_version)
  RecordWriter& m_writer;
  Sender& m_sender;
  std::optional<format::RankReader> m_reader;
  std::exception_ptr m_stopped;  // what the analyzer's callbacks threw
  analyzer::EventSet m_pass_on = analyzer::EventSet::every();
  analyzer::EventsRead m_read;   // the events read, and of them those passed on
};

// Send rank `rank`'s records to process 0, then the state of the passes that
// run here (analyzer::run_saved_passes), in messages of at most k_piece_bytes.
void send_rank(const format::TraceFiles& files, uint32_t rank, const analyzer::Options& options, MPI_Comm comm) {
  RecordWriter writer;
  writer.reserve(k_message_bytes + 4096);
  std::string saved;
  {
    Sender sender(rank, comm);
    TeeSource source(files.rank_files[rank], format::recovered_version(files), writer, sender);
    saved = analyzer::run_saved_passes(files, rank, source, options);
    if (writer.size() != 0) sender.send(writer);
  }
  send_pieces(saved, rank, comm);
}

std::string receive_pieces(int from, uint32_t rank, MPI_Comm comm);

// Wait for the next message from `from` with tag `rank`; return its size in
// bytes, `message` set for MPI_Mrecv.
int probe_message(int from, uint32_t rank, MPI_Comm comm, MPI_Message& message) {
  MPI_Status status;
  poll([&] {
    int found = 0;
    MPI_Improbe(from, static_cast<int>(rank), comm, &found, &message, &status);
    return found != 0;
  });
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return count;
}

// Return the next message from `from` with tag `rank`, received whole.
void receive_message(int from, uint32_t rank, MPI_Comm comm, std::string& into, std::size_t at) {
  MPI_Message message;
  const int count = probe_message(from, rank, comm, message);
  into.resize(at + static_cast<std::size_t>(count));
  MPI_Mrecv(into.data() + at, count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
}

// What send_pieces sent, received into storage that is not zeroed first
// (a std::string is: about a tenth of process 0's instructions went into
// zeroing the replay's state of every rank before MPI_Mrecv overwrote it).
class Pieces {
 public:
  // Receive the pieces that process `from` sent with tag `rank`.
  void receive(int from, uint32_t rank, MPI_Comm comm) {
    for (;;) {
      MPI_Message message;
      const int count = probe_message(from, rank, comm, message);
      const auto n = static_cast<std::size_t>(count);
      if (m_size + n > m_room) {
        // More than one piece (over k_piece_bytes): rare, so copied.
        auto more = std::make_unique_for_overwrite<char[]>(m_size + n);
        if (m_size != 0) std::memcpy(more.get(), m_bytes.get(), m_size);
        m_bytes = std::move(more);
        m_room = m_size + n;
      }
      MPI_Mrecv(m_bytes.get() + m_size, count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      m_size += n;
      if (n < k_piece_bytes) return;
    }
  }
  std::string_view bytes() const { return {m_bytes.get(), m_size}; }

 private:
  std::unique_ptr<char[]> m_bytes;
  std::size_t m_size = 0, m_room = 0;
};

// Process 0's view of a rank another process reads.
class Receiver final : public analyzer::RankSource {
 public:
  Receiver(int from, uint32_t rank, MPI_Comm comm) : m_from(from), m_rank(rank), m_comm(comm) {}

  std::optional<format::RankHeader> header(const format::RankReader::Callbacks& callbacks) override {
    for (;;) {
      Decoded d = next(callbacks);
      if (d.kind == RecordKind::header) return std::move(d.header);
      if (d.kind == RecordKind::done) protocol_error("the end before the header");
    }
  }
  void read_all(const format::RankReader::Callbacks& callbacks) override {
    for (;;) {
      const Decoded d = next(callbacks);
      if (d.kind == RecordKind::done) return;
      if (d.kind == RecordKind::header) protocol_error("a second header");
    }
  }
  std::string_view saved_passes() override {
    if (!m_rest.empty()) protocol_error("records after the end");
    m_saved.receive(m_from, m_rank, m_comm);
    return m_saved.bytes();
  }
  std::optional<analyzer::EventsRead> events_read() const override { return m_read; }

 private:
  // Decode the next record (receiving a message when none is left); throw
  // what the reader threw.
  Decoded next(const format::RankReader::Callbacks& callbacks) {
    for (;;) {
      if (m_rest.empty()) receive();
      Decoded d = decode_record(m_rest, callbacks);
      switch (d.kind) {
        case RecordKind::event: ++m_delivered; break;
        case RecordKind::events_read:
          if (d.read.delivered != m_delivered) protocol_error("another count of events than received");
          m_read = d.read;
          continue;
        case RecordKind::error: throw std::runtime_error(d.message);
        case RecordKind::out_of_memory: throw std::bad_alloc();
        default: break;
      }
      return d;
    }
  }
  void receive() {
    receive_message(m_from, m_rank, m_comm, m_buffer, 0);
    m_rest = m_buffer;
    if (m_rest.empty()) protocol_error("an empty message");
  }
  [[noreturn]] void protocol_error(const char* what) const {
    throw std::logic_error(fmt::format("smtrace-mpi: rank {} from process {}: {}", m_rank, m_from, what));
  }

  int m_from;
  uint32_t m_rank;
  MPI_Comm m_comm;
  std::string m_buffer;
  std::string_view m_rest;
  Pieces m_saved;                              // the saved passes
  uint64_t m_delivered = 0;                   // events decoded
  std::optional<analyzer::EventsRead> m_read;  // the reader's count, once it came
};

// Rank r's messages carry tag r: every rank needs a tag.
void check_tags(uint32_t world_size, MPI_Comm comm) {
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &found);
  if (found && world_size > 0 && static_cast<int64_t>(world_size) - 1 > *tag_ub) {
    throw std::runtime_error(fmt::format("smtrace-mpi: {} ranks need tags up to {}; this MPI's MPI_TAG_UB is {}",
                                         world_size, world_size - 1, *tag_ub));
  }
}

// The ranks of `files` that `process` reads, ascending.
std::vector<uint32_t> share_of(const format::TraceFiles& files, int process, int processes, MPI_Comm comm) {
  const uint32_t world_size = static_cast<uint32_t>(files.rank_files.size());
  check_tags(world_size, comm);
  std::vector<uint32_t> mine;
  for (uint32_t r : files.present) {
    if (reader_of(r, world_size, processes) == process) mine.push_back(r);
  }
  return mine;
}

// Send `bytes` to process 0 in pieces of at most k_piece_bytes; the last one
// is shorter (empty when the size is a multiple).
void send_pieces(const std::string& bytes, uint32_t rank, MPI_Comm comm) {
  std::size_t at = 0;
  for (;;) {
    const std::size_t n = std::min(k_piece_bytes, bytes.size() - at);
    MPI_Request request;
    MPI_Isend(bytes.data() + at, static_cast<int>(n), MPI_BYTE, 0, static_cast<int>(rank), comm, &request);
    complete(request);
    at += n;
    if (n < k_piece_bytes) return;
  }
}

std::string receive_pieces(int from, uint32_t rank, MPI_Comm comm) {
  std::string bytes;
  for (;;) {
    const std::size_t at = bytes.size();
    receive_message(from, rank, comm, bytes, at);
    if (bytes.size() - at < k_piece_bytes) return bytes;
  }
}

}  // namespace

void send_rank_traces(const format::TraceFiles& files, int process, int processes, unsigned threads,
                      MPI_Comm comm) {
  const std::vector<uint32_t> mine = share_of(files, process, processes, comm);
  format::run_on_threads(format::thread_count(threads, mine.size()), mine.size(), [&](std::size_t i) {
    std::string bytes;
    try {
      bytes = encode_rank_trace(format::read_rank_file(files.rank_files[mine[i]], format::recovered_version(files)));
    } catch (const std::exception& e) {
      bytes = encode_rank_error(e.what());
    }
    send_pieces(bytes, mine[i], comm);
  });
}

std::function<format::RankTrace(uint32_t, const std::filesystem::path&)> receive_rank_traces(
    const format::TraceFiles& files, int processes, MPI_Comm comm) {
  const auto world_size = static_cast<uint32_t>(files.rank_files.size());
  const uint32_t version = format::recovered_version(files);
  if (processes > 1) check_tags(world_size, comm);
  return [world_size, version, processes, comm](uint32_t rank, const std::filesystem::path& file) {
    const int from = reader_of(rank, world_size, processes);
    if (from == 0) return format::read_rank_file(file, version);
    return decode_rank_trace(receive_pieces(from, rank, comm));
  };
}

void send_ranks(const format::TraceFiles& files, int process, int processes, const analyzer::Options& options,
                MPI_Comm comm) {
  const std::vector<uint32_t> mine = share_of(files, process, processes, comm);
  format::run_on_threads(format::thread_count(options.threads, mine.size()), mine.size(),
                         [&](std::size_t i) { send_rank(files, mine[i], options, comm); });
}

analyzer::RankSourceFactory receive_ranks(const format::TraceFiles& files, int processes, MPI_Comm comm) {
  const auto world_size = static_cast<uint32_t>(files.rank_files.size());
  const uint32_t version = format::recovered_version(files);
  if (processes > 1) check_tags(world_size, comm);
  return [world_size, version, processes, comm](uint32_t rank, const std::filesystem::path& file)
             -> std::unique_ptr<analyzer::RankSource> {
    const int from = reader_of(rank, world_size, processes);
    if (from == 0) return analyzer::read_rank_file_source(file, version);
    return std::make_unique<Receiver>(from, rank, comm);
  };
}

std::function<bool(uint32_t)> passes_elsewhere(uint32_t world_size, int processes) {
  return [world_size, processes](uint32_t rank) { return reader_of(rank, world_size, processes) != 0; };
}

}  // namespace smtrace::distributed
