#include "distributed/record_codec.hpp"

#include <functional>
#include <stdexcept>
#include <type_traits>

#include "analyzer/record_coding.hpp"

namespace smtrace::distributed {

namespace {

using format::RankReader;
// The coding itself is the analyzer's (analyzer/record_coding.hpp), which
// the passes that travel use for the events they keep.
using analyzer::record_coding::Decoder;
using analyzer::record_coding::Encoder;

// Append a record to `out`, whose first `size` bytes are written (the rest
// is room), and advance `size` past it.
template <class T>
void append(std::string& out, std::size_t& size, RecordKind kind, const T& value) {
  Encoder encode(out, size);
  encode(kind);
  if constexpr (std::is_same_v<T, format::Event>) {
    analyzer::record_coding::put_event(encode, value);
  } else {
    encode(value);
  }
  size = encode.size();
}

template <class T>
void deliver(Decoder& decode, const std::function<void(const T&)>& callback) {
  // Events are the bulk: decoded into one reused object per thread, whose
  // vectors keep their capacity (every field is overwritten).
  thread_local T value;
  if constexpr (std::is_same_v<T, format::Event>) {
    analyzer::record_coding::get_event(decode, value);
  } else {
    decode(value);
  }
  if (callback) callback(value);
}

}  // namespace

RankReader::Callbacks RecordWriter::callbacks() {
  RankReader::Callbacks cb;
  cb.event = [this](const format::Event& e) { append(m_out, m_size, RecordKind::event, e); };
  cb.site = [this](const format::CallSite& s) { append(m_out, m_size, RecordKind::site, s); };
  cb.module = [this](const format::Module& m) { append(m_out, m_size, RecordKind::module, m); };
  cb.comm = [this](const format::CommDef& c) { append(m_out, m_size, RecordKind::comm, c); };
  cb.datatype = [this](const format::DatatypeDef& t) { append(m_out, m_size, RecordKind::datatype, t); };
  cb.end = [this](const format::Termination& t) { append(m_out, m_size, RecordKind::end, t); };
  cb.note = [this](const format::TracerNote& n) { append(m_out, m_size, RecordKind::note, n); };
  cb.problem = [this](const format::Problem& p) { append(m_out, m_size, RecordKind::problem, p); };
  return cb;
}

void RecordWriter::header(const std::optional<format::RankHeader>& header) {
  append(m_out, m_size, RecordKind::header, header);
}

void RecordWriter::done() { kind_only(RecordKind::done); }

void RecordWriter::error(std::string_view message) { append(m_out, m_size, RecordKind::error, std::string(message)); }

void RecordWriter::out_of_memory() { kind_only(RecordKind::out_of_memory); }

void RecordWriter::events_read(const analyzer::EventsRead& read) {
  Encoder encode(m_out, m_size);
  encode(RecordKind::events_read, read.events, read.last_seq, read.delivered);
  m_size = encode.size();
}

void RecordWriter::kind_only(RecordKind kind) {
  Encoder encode(m_out, m_size);
  encode(kind);
  m_size = encode.size();
}

void RecordWriter::reserve(std::size_t bytes) {
  if (m_out.size() < bytes) m_out.resize(bytes);
}

void RecordWriter::take(std::string& into) {
  m_out.resize(m_size);
  into.swap(m_out);
  m_size = 0;  // into's old bytes are room to write in
}

Decoded decode_record(std::string_view& in, const RankReader::Callbacks& callbacks) {
  Decoder decode(in);
  Decoded out;
  decode(out.kind);
  switch (out.kind) {
    case RecordKind::event: deliver(decode, callbacks.event); break;
    case RecordKind::site: deliver(decode, callbacks.site); break;
    case RecordKind::module: deliver(decode, callbacks.module); break;
    case RecordKind::comm: deliver(decode, callbacks.comm); break;
    case RecordKind::datatype: deliver(decode, callbacks.datatype); break;
    case RecordKind::end: deliver(decode, callbacks.end); break;
    case RecordKind::note: deliver(decode, callbacks.note); break;
    case RecordKind::problem: deliver(decode, callbacks.problem); break;
    case RecordKind::header: decode(out.header); break;
    case RecordKind::done: break;
    case RecordKind::error: decode(out.message); break;
    case RecordKind::out_of_memory: break;
    case RecordKind::events_read: decode(out.read.events, out.read.last_seq, out.read.delivered); break;
    default: throw std::runtime_error("smtrace-mpi: unknown record kind in transfer");
  }
  return out;
}

std::string encode_rank_trace(const format::RankTrace& rank) {
  std::string out;
  Encoder encode(out, 0);
  encode(true, rank);
  out.resize(encode.size());
  return out;
}

std::string encode_rank_error(std::string_view error) {
  std::string out;
  Encoder encode(out, 0);
  encode(false, std::string(error));
  out.resize(encode.size());
  return out;
}

format::RankTrace decode_rank_trace(std::string_view in) {
  Decoder decode(in);
  bool ok = false;
  decode(ok);
  if (!ok) {
    std::string message;
    decode(message);
    throw std::runtime_error(message);
  }
  format::RankTrace rank;
  decode(rank);
  if (decode.left() != 0) throw std::runtime_error("smtrace-mpi: a rank's records were longer than coded");
  return rank;
}

}  // namespace smtrace::distributed
