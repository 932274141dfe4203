// Reads trace directories into plain structs. Bad input is normal input: a
// reader never throws for a damaged file; it keeps every record it could read
// and lists each problem with file, byte offset and rank.
//
// Thread safety: distinct RankReader objects may be used from distinct
// threads; read_trace reads ranks in parallel itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::format {

// The one exception type of trace_format: input that cannot be used at all
// (no such directory, no rank file in it, unreadable JSON).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something wrong met while reading, and where.
struct Problem {
  enum class Severity : uint8_t { warning, error };
  Severity severity = Severity::error;
  std::string file;          // path as given to the reader
  uint64_t offset = 0;       // byte offset in `file` where the problem starts
  std::optional<uint32_t> rank;
  std::optional<uint64_t> seq;  // the event it concerns, when there is one
  std::string message;
  // Return "FILE: byte OFFSET: [rank R: event R:SEQ: ]MESSAGE".
  std::string to_string() const;
};

// Everything read from one rank file.
struct RankTrace {
  bool present = false;      // the file existed and its header was read
  std::string file;
  RankHeader header;
  std::vector<Event> events;  // in seq order, completions merged
  std::unordered_map<uint32_t, CallSite> sites;
  std::unordered_map<uint32_t, Module> modules;
  std::unordered_map<uint32_t, CommDef> comms;   // includes 0 (world) and 1 (self)
  std::unordered_map<uint32_t, DatatypeDef> datatypes;
  std::optional<Termination> end;
  std::vector<TracerNote> notes;
  std::vector<Problem> problems;
  uint64_t bytes = 0;         // size of the file
  uint64_t chunks = 0;        // frames read (sealed or open)
  bool truncated = false;     // stopped before a clean end of data

  // Return true when the rank reached MPI_Finalize.
  bool finalized() const { return end && end->kind == TerminationKind::finalized; }
  // Return true when the rank's trace holds every access it captured
  // (Termination::accesses_lost).
  bool accesses_kept() const { return !end || end->accesses_lost == 0; }
  // Return the event with `seq`, or nullptr.
  const Event* find(uint64_t seq) const;
  // Return the call site `id`, or nullptr.
  const CallSite* site(uint32_t id) const;
  // Return the world rank of `rank_in_comm` in communicator `comm` (in its
  // remote group on an intercommunicator: peers are named there), if known.
  std::optional<uint32_t> world_rank(uint32_t comm, int32_t rank_in_comm) const;
};

struct Trace {
  std::filesystem::path dir;
  Manifest manifest;
  bool has_manifest = false;
  std::vector<RankTrace> ranks;      // index = world rank; absent ranks have present == false
  std::vector<Problem> problems;     // directory-level problems (missing rank, manifest)

  // Return all problems, directory-level first, then by rank.
  std::vector<Problem> all_problems() const;
  // Return true when every rank is present and finalized.
  bool complete() const;
};

struct ReadOptions {
  bool symbols = true;        // load symbols.smt when present
  unsigned threads = 0;       // 0: hardware concurrency
  // Reads rank `rank`'s file `file` (smtrace-mpi: receives what another MPI
  // process read); empty: read_rank_file(file). Called from several threads.
  std::function<RankTrace(uint32_t rank, const std::filesystem::path& file)> read_rank;
};

// The files of a trace directory, found without reading any rank file.
struct TraceFiles {
  std::filesystem::path dir;
  Manifest manifest;
  bool has_manifest = false;
  std::vector<std::filesystem::path> rank_files;  // index = world rank (expected path when missing)
  std::vector<uint32_t> present;                  // ranks whose file exists, ascending
  std::vector<Problem> problems;                  // manifest damage, missing rank files
};

// Find the manifest and rank files of `dir` (the world size is the larger of
// the manifest's and the highest rank file + 1). Throw TraceError when `dir`
// is not a directory or holds neither a manifest nor any rank file.
TraceFiles find_trace_files(const std::filesystem::path& dir);

// The format version in which to read a rank file of `files` whose header
// is lost: the manifest's, else this reader's. A version this reader does
// not know is returned as it is: such a file's chunks are not read (a
// problem says why).
uint32_t recovered_version(const TraceFiles& files);

// Return a warning when rank `rank`'s header disagrees with its file name or
// the manifest (`ok` false), else set `ok` true. A header rebuilt after its
// loss (`header.recovered`) takes its rank from the file name and its world
// size from the manifest (else the number of rank slots) here.
Problem check_rank_header(const TraceFiles& files, uint32_t rank, RankHeader& header, bool& ok);

// Read the trace directory `dir`. Throw TraceError when it is not a
// directory or holds neither a manifest nor any rank file.
Trace read_trace(const std::filesystem::path& dir, const ReadOptions& options = {});

// Read one rank file. Never throws for damaged content. A file whose
// header is lost is read as format version `recovered_version` (read_trace
// passes the manifest's).
RankTrace read_rank_file(const std::filesystem::path& file, uint32_t recovered_version = k_format_version);

// Streams one rank file record by record, for large traces: events are
// handed out when complete (their completion record seen) or at the end
// (still pending). Definitions are delivered before the events that use them.
class RankReader {
 public:
  struct Callbacks {
    std::function<void(const Event&)> event;
    std::function<void(const CallSite&)> site;
    std::function<void(const Module&)> module;
    std::function<void(const CommDef&)> comm;
    std::function<void(const DatatypeDef&)> datatype;
    std::function<void(const Termination&)> end;
    std::function<void(const TracerNote&)> note;
    std::function<void(const Problem&)> problem;
  };
  // A file whose header is lost is read as format version `recovered_version`.
  explicit RankReader(std::filesystem::path file, uint32_t recovered_version = k_format_version);
  ~RankReader();
  RankReader(const RankReader&) = delete;
  RankReader& operator=(const RankReader&) = delete;
  // Read the header; return it, or nullopt (a problem was reported) when the
  // file has no usable header. A file whose header frame was lost (bad magic,
  // a damaged or unparsable frame) but whose chunks can be found gives a
  // header with `recovered` set (an error problem says where reading
  // resumes); read_all then reads those chunks.
  std::optional<RankHeader> header(const Callbacks& callbacks);
  // Read the rest of the file, calling `callbacks`; return the number of events.
  uint64_t read_all(const Callbacks& callbacks);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace smtrace::format
