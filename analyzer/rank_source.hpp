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

#include "trace_format/reader.hpp"

namespace smtrace::analyzer {

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
  // Return what run_saved_passes returned where the file was read; called
  // once after read_all when Options::passes_elsewhere names the rank.
  virtual std::string saved_passes() { throw std::logic_error("this rank source has no saved passes"); }
};

// Makes the source of rank `rank`, whose file is `file`.
using RankSourceFactory = std::function<std::unique_ptr<RankSource>(uint32_t rank, const std::filesystem::path& file)>;

// Return a source that reads `file` with a format::RankReader.
std::unique_ptr<RankSource> read_rank_file_source(const std::filesystem::path& file);

}  // namespace smtrace::analyzer
