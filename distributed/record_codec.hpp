// The records of one rank file as format::RankReader delivers them (header,
// definitions, events, problems, end), coded for sending to another process:
// smtrace-mpi's readers send them to the process that runs the analysis.
//
// The coding is plain: fixed-width little-endian fields in declaration
// order, lengths before strings and vectors, one kind byte per record. It is
// made for decoding fast between processes of one job (same build, same
// byte order), never stored; the rank file's own wire coding is compact but
// costs a protobuf parse per event, which is the work the readers take off
// the analyzing process.
//
// Thread safety: a RecordWriter is used from one thread; decode_record is
// reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/rank_source.hpp"
#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::distributed {

enum class RecordKind : uint8_t {
  event,
  site,
  module,
  comm,
  datatype,
  end,
  note,
  problem,
  header,         // RankReader::header's result: a header, or none
  done,           // read_all returned: the rank's last record
  error,          // the reader threw: its message
  out_of_memory,  // the reader threw std::bad_alloc
  events_read,    // how many events the reader read and passed on (before done and error)
};

// Appends records to a byte string.
class RecordWriter {
 public:
  // Return callbacks that append each record they are given.
  format::RankReader::Callbacks callbacks();
  void header(const std::optional<format::RankHeader>& header);
  void done();
  void error(std::string_view message);
  void out_of_memory();
  void events_read(const analyzer::EventsRead& read);
  // Return the bytes written so far.
  std::string_view bytes() const { return std::string_view(m_out).substr(0, m_size); }
  std::size_t size() const { return m_size; }
  // Make room for `bytes` bytes of records (the room grows when needed).
  void reserve(std::size_t bytes);
  // Move the bytes written so far into `into` and start again, writing in
  // into's former storage (a sender's message in flight, once sent).
  void take(std::string& into);

 private:
  void kind_only(RecordKind kind);

  std::string m_out;       // the bytes written, then room to write in
  std::size_t m_size = 0;  // the bytes written
};

// What decode_record found.
struct Decoded {
  RecordKind kind = RecordKind::done;
  std::optional<format::RankHeader> header;  // kind == header
  std::string message;                       // kind == error
  analyzer::EventsRead read;                 // kind == events_read
};

// Decode the record at the start of `in`, advance `in` past it, and hand
// definitions, events, problems and the end to `callbacks` (those not set
// are skipped); return its kind and, for header and error, what it holds.
// Throw std::runtime_error when `in` ends inside a record or holds an
// unknown kind (a bug: the coding never leaves the job that wrote it).
Decoded decode_record(std::string_view& in, const format::RankReader::Callbacks& callbacks);

// Return `rank` coded whole (smtrace-mpi info: format::read_rank_file's
// result, read by another process), or, for `error`, the message of what
// read_rank_file threw.
std::string encode_rank_trace(const format::RankTrace& rank);
std::string encode_rank_error(std::string_view error);
// Return the RankTrace in `in`; throw std::runtime_error with the message
// encode_rank_error coded, or when `in` is not a whole coded RankTrace.
format::RankTrace decode_rank_trace(std::string_view in);

}  // namespace smtrace::distributed
