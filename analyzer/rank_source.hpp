// Where the analyzer gets one rank file's records from. By default a
// format::RankReader on the file; smtrace-mpi (distributed/) hands the
// analysis a source whose records another MPI process read and sent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "trace_format/reader.hpp"

namespace smtrace::analyzer {

class EventSet;

// What a source read of its rank's events when it delivered only some
// (smtrace-mpi: the analyzing process gets the events a consumer there still
// reads; the reader counts them all).
struct EventsRead {
  uint64_t events = 0;     // the events read from the file (as far as it was read)
  uint64_t last_seq = 0;   // the largest seq among them (0 when none)
  uint64_t delivered = 0;  // how many of them the source delivered
};

// The records of one rank file, in the order format::RankReader delivers
// them. Thread safety: one source is used from one thread at a time.
class RankSource {
 public:
  virtual ~RankSource() = default;
  // Deliver the records before the header (problems); return the header, or
  // nullopt when the file has none (format::RankReader::header).
  virtual std::optional<format::RankHeader> header(const format::RankReader::Callbacks& callbacks) = 0;
  // Deliver the rest of the records (format::RankReader::read_all). Throws
  // what the reader threw where it threw it.
  virtual void read_all(const format::RankReader::Callbacks& callbacks) = 0;
  // Return what run_saved_passes returned where the file was read, valid
  // until the source is destroyed; called once after read_all when
  // Options::passes_elsewhere names the rank.
  virtual std::string_view saved_passes() { throw std::logic_error("this rank source has no saved passes"); }
  // Return how many events the file held and their last seq when this
  // source left some out (as far as it has delivered records: set by the time
  // read_all returns or throws what the reader threw); nullopt when it
  // delivers every event (the file read here).
  virtual std::optional<EventsRead> events_read() const { return std::nullopt; }
  // smtrace-mpi's readers (run_saved_passes calls it before header()): of
  // the events, pass on to the analyzing process only those of the calls in
  // `calls`; the callbacks given here still get every one. A source that
  // passes nothing on ignores it.
  virtual void pass_on_only(const EventSet& calls) { (void)calls; }
};

// Makes the source of rank `rank`, whose file is `file`.
using RankSourceFactory = std::function<std::unique_ptr<RankSource>(uint32_t rank, const std::filesystem::path& file)>;

// Return a source that reads `file` with a format::RankReader.
std::unique_ptr<RankSource> read_rank_file_source(const std::filesystem::path& file,
                                                  uint32_t recovered_version = format::k_format_version);

}  // namespace smtrace::analyzer
