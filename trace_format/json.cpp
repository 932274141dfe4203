// The JSON document (absolute coding) and the trace writer. Writing goes
// through RecordEncoder, the tracer's own encoder, so that files made by
// import-json are coded exactly like recorded ones.
#include "trace_format/json.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <utility>

#include "trace_format/proto_convert.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::format {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_chunk_bytes = 64u << 10;
constexpr const char* k_type_url_prefix = "type.googleapis.com";

CommDef implicit_comm(uint32_t id, const RankHeader& header, uint32_t world_size) {
  CommDef c;
  c.id = id;
  if (id == k_comm_world) {
    for (uint32_t i = 0; i < world_size; ++i) c.world_ranks.push_back(i);
  } else {
    c.world_ranks.push_back(header.rank);
  }
  return c;
}

// Comms 0 and 1 as the reader adds them need not be written out.
bool is_implicit(const CommDef& c, const RankHeader& header) {
  return (c.id == k_comm_world || c.id == k_comm_self) &&
         c == implicit_comm(c.id, header, header.world_size);
}

template <class T>
std::vector<const T*> sorted_by_id(const std::unordered_map<uint32_t, T>& map) {
  std::vector<const T*> out;
  out.reserve(map.size());
  for (const auto& [id, value] : map) out.push_back(&value);
  std::sort(out.begin(), out.end(), [](const T* a, const T* b) { return a->id < b->id; });
  return out;
}

void to_document(const RankTrace& r, v1::RankDocument* doc) {
  detail::to_proto(r.header, doc->mutable_header());
  for (const Event& e : r.events) detail::to_proto(e, doc->add_events());
  for (const CallSite* s : sorted_by_id(r.sites)) detail::to_proto(*s, doc->add_sites());
  for (const Module* m : sorted_by_id(r.modules)) detail::to_proto(*m, doc->add_modules());
  for (const CommDef* c : sorted_by_id(r.comms)) {
    if (!is_implicit(*c, r.header)) detail::to_proto(*c, doc->add_comms());
  }
  for (const DatatypeDef* t : sorted_by_id(r.datatypes)) {
    detail::to_proto(*t, doc->add_datatypes());
  }
  if (r.end) detail::to_proto(*r.end, doc->mutable_end());
  for (const TracerNote& n : r.notes) detail::to_proto(n, doc->add_notes());
}

// MessageToJsonString prints map fields (RankHeader.options) in hash order;
// going through deterministic (key-sorted) binary makes the same trace
// always give the same text, so dump -> import-json -> dump is stable.
std::string json_of(const google::protobuf::Message& message) {
  std::string binary;
  {
    google::protobuf::io::StringOutputStream stream(&binary);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!message.SerializeToCodedStream(&coded)) throw TraceError("cannot write JSON: serialization failed");
  }
  static const std::unique_ptr<google::protobuf::util::TypeResolver> resolver(
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          k_type_url_prefix, google::protobuf::DescriptorPool::generated_pool()));
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = false;
  options.preserve_proto_field_names = true;
  std::string out;
  auto status = google::protobuf::util::BinaryToJsonString(
      resolver.get(), std::string(k_type_url_prefix) + "/" + message.GetDescriptor()->full_name(),
      binary, &out, options);
  if (!status.ok()) throw TraceError("cannot write JSON: " + std::string(status.message()));
  return out;
}

// Documents written before ClockKind's values got their CLOCK_KIND_ prefix
// spell them "CLOCK_MONOTONIC"; keep reading those.
std::string with_current_enum_names(std::string_view json) {
  static constexpr std::pair<std::string_view, std::string_view> k_renamed[] = {
      {"\"CLOCK_UNSPECIFIED\"", "\"CLOCK_KIND_UNSPECIFIED\""},
      {"\"CLOCK_MONOTONIC\"", "\"CLOCK_KIND_MONOTONIC\""},
      {"\"CLOCK_REALTIME\"", "\"CLOCK_KIND_REALTIME\""},
  };
  std::string out(json);
  for (const auto& [old_name, new_name] : k_renamed) {
    for (std::size_t at = out.find(old_name); at != std::string::npos;
         at = out.find(old_name, at + new_name.size())) {
      if (at > 0 && out[at - 1] == '\\') {  // inside a string: \"CLOCK_MONOTONIC\"
        at += 1;
        continue;
      }
      out.replace(at, old_name.size(), new_name);
    }
  }
  return out;
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) throw TraceError(path.string() + ": cannot write: " + std::strerror(errno));
}

// Turn protobuf's parse error into "line L, column C: message" when it names
// an offset; protobuf 3.21 reports JSON syntax errors without one, so the
// position of the first syntax error is also found here.
std::string json_position(std::string_view json, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < json.size(); ++i) {
    if (json[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
         std::to_string(offset) + ")";
}

// Return the offset of the first JSON syntax error in `json`, if any: a small
// recursive-descent check, enough to point at the broken spot.
class JsonSyntax {
 public:
  explicit JsonSyntax(std::string_view json) : m_json(json) {}
  std::optional<std::size_t> first_error() {
    skip_space();
    if (!value(0)) return m_pos;
    skip_space();
    if (m_pos != m_json.size()) return m_pos;
    return std::nullopt;
  }

 private:
  bool value(int depth) {
    if (depth > 100) return false;
    skip_space();
    if (m_pos >= m_json.size()) return false;
    char c = m_json[m_pos];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return string();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    return literal("true") || literal("false") || literal("null");
  }
  bool object(int depth) {
    ++m_pos;
    skip_space();
    if (peek('}')) return ++m_pos, true;
    while (true) {
      skip_space();
      if (!peek('"') || !string()) return false;
      skip_space();
      if (!peek(':')) return false;
      ++m_pos;
      if (!value(depth + 1)) return false;
      skip_space();
      if (peek(',')) {
        ++m_pos;
        continue;
      }
      if (peek('}')) return ++m_pos, true;
      return false;
    }
  }
  bool array(int depth) {
    ++m_pos;
    skip_space();
    if (peek(']')) return ++m_pos, true;
    while (true) {
      if (!value(depth + 1)) return false;
      skip_space();
      if (peek(',')) {
        ++m_pos;
        continue;
      }
      if (peek(']')) return ++m_pos, true;
      return false;
    }
  }
  bool string() {
    ++m_pos;
    while (m_pos < m_json.size()) {
      char c = m_json[m_pos++];
      if (c == '"') return true;
      if (c == '\\') ++m_pos;
      if (static_cast<unsigned char>(c) < 0x20) return --m_pos, false;
    }
    return false;
  }
  bool number() {
    std::size_t start = m_pos;
    while (m_pos < m_json.size() && std::strchr("+-0123456789.eE", m_json[m_pos])) ++m_pos;
    return m_pos > start;
  }
  bool literal(std::string_view word) {
    if (m_json.substr(m_pos, word.size()) != word) return false;
    m_pos += word.size();
    return true;
  }
  bool peek(char c) const { return m_pos < m_json.size() && m_json[m_pos] == c; }
  void skip_space() {
    while (m_pos < m_json.size() && std::strchr(" \t\r\n", m_json[m_pos])) ++m_pos;
  }

  std::string_view m_json;
  std::size_t m_pos = 0;
};

}  // namespace

std::string to_json(const Trace& trace, std::optional<uint32_t> rank) {
  v1::TraceDocument doc;
  detail::to_proto(trace.manifest, doc.mutable_manifest());
  for (std::size_t i = 0; i < trace.ranks.size(); ++i) {
    const RankTrace& r = trace.ranks[i];
    if (!r.present) continue;
    if (rank && *rank != i) continue;
    to_document(r, doc.add_ranks());
  }
  return json_of(doc);
}

Trace from_json(std::string_view json) {
  v1::TraceDocument doc;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const std::string text = with_current_enum_names(json);
  auto status = google::protobuf::util::JsonStringToMessage(text, &doc, options);
  if (!status.ok()) {
    std::string where;
    if (auto at = JsonSyntax(json).first_error()) where = json_position(json, *at) + ": ";
    throw TraceError("JSON: " + where + std::string(status.message()));
  }
  Trace trace;
  trace.has_manifest = doc.has_manifest();
  trace.manifest = detail::to_plain(doc.manifest());
  if (trace.manifest.format_version == 0) trace.manifest.format_version = k_format_version;
  if (trace.manifest.rank_file_pattern.empty()) trace.manifest.rank_file_pattern = "rank-{rank}.smt";
  constexpr uint32_t k_max_world_size = 1u << 22;
  uint32_t world_size = trace.manifest.world_size;
  for (const v1::RankDocument& rd : doc.ranks()) {
    if (rd.header().rank() >= k_max_world_size || rd.header().world_size() > k_max_world_size) {
      throw TraceError("JSON: rank " + std::to_string(rd.header().rank()) + " of " +
                       std::to_string(rd.header().world_size()) + " is out of range");
    }
    world_size = std::max({world_size, rd.header().rank() + 1, rd.header().world_size()});
  }
  if (world_size > k_max_world_size) {
    throw TraceError("JSON: world size " + std::to_string(world_size) + " is out of range");
  }
  trace.manifest.world_size = world_size;
  trace.ranks.resize(world_size);
  for (uint32_t r = 0; r < world_size; ++r) trace.ranks[r].header.rank = r;
  for (const v1::RankDocument& rd : doc.ranks()) {
    RankTrace& r = trace.ranks[rd.header().rank()];
    if (r.present) {
      throw TraceError("JSON: rank " + std::to_string(rd.header().rank()) + " appears twice");
    }
    r.present = true;
    r.header = detail::to_plain(rd.header());
    if (r.header.format_version == 0) r.header.format_version = k_format_version;
    if (r.header.world_size == 0) r.header.world_size = world_size;
    for (const v1::Event& e : rd.events()) r.events.push_back(detail::to_plain(e));
    std::stable_sort(r.events.begin(), r.events.end(),
                     [](const Event& a, const Event& b) { return a.seq < b.seq; });
    for (const v1::CallSite& s : rd.sites()) r.sites[s.id()] = detail::to_plain(s);
    for (const v1::Module& m : rd.modules()) r.modules[m.id()] = detail::to_plain(m);
    for (const v1::CommDef& c : rd.comms()) r.comms[c.id()] = detail::to_plain(c);
    for (const v1::DatatypeDef& t : rd.datatypes()) r.datatypes[t.id()] = detail::to_plain(t);
    if (rd.has_end()) r.end = detail::to_plain(rd.end());
    for (const v1::TracerNote& n : rd.notes()) r.notes.push_back(detail::to_plain(n));
    for (uint32_t id : {k_comm_world, k_comm_self}) {
      if (!r.comms.count(id)) r.comms.emplace(id, implicit_comm(id, r.header, r.header.world_size));
    }
  }
  return trace;
}

void write_rank_file(const RankTrace& rank, const fs::path& file) {
  std::string out(k_magic, k_magic_size);
  // RecordEncoder writes this reader's version, whatever the events were
  // read from.
  RankHeader written = rank.header;
  written.format_version = k_format_version;
  const std::string header = encode_rank_header(written);
  append_frame_header(out, header);
  out += header;

  RecordEncoder enc;
  std::string chunk;
  chunk.reserve(k_chunk_bytes + 4096);
  uint32_t index = 0;
  bool open = false;
  auto seal = [&] {
    if (!open) return;
    append_frame_header(out, chunk);
    out += chunk;
    chunk.clear();
    open = false;
  };
  auto begin = [&](uint64_t first_seq, int64_t t_base) {
    if (open && chunk.size() < k_chunk_bytes) return;
    seal();
    enc.begin_chunk(chunk, first_seq, t_base, index++);
    open = true;
  };

  // Definitions first: they come before the events that use them.
  const uint64_t first_seq = rank.events.empty() ? 0 : rank.events.front().seq;
  const int64_t t_base = rank.events.empty() ? 0 : rank.events.front().t_start;
  begin(first_seq, t_base);
  for (const Module* m : sorted_by_id(rank.modules)) enc.module(chunk, *m);
  for (const CallSite* s : sorted_by_id(rank.sites)) {
    begin(first_seq, t_base);
    enc.site(chunk, *s);
  }
  for (const CommDef* c : sorted_by_id(rank.comms)) {
    if (is_implicit(*c, rank.header)) continue;
    begin(first_seq, t_base);
    enc.comm(chunk, *c);
  }
  for (const DatatypeDef* t : sorted_by_id(rank.datatypes)) {
    begin(first_seq, t_base);
    enc.datatype(chunk, *t);
  }
  // Events after the end record (calls after MPI_Finalize, as the tracer
  // appends them) go after it, in a chunk of their own.
  auto after_end = [&](const Event& e) { return rank.end && rank.end->precedes(e.seq); };
  for (const Event& e : rank.events) {
    if (after_end(e)) continue;
    begin(e.seq, e.t_start);
    enc.event(chunk, e);
  }
  for (const TracerNote& n : rank.notes) {
    begin(enc.next_seq(), 0);
    enc.note(chunk, n);
  }
  if (rank.end) {
    begin(enc.next_seq(), 0);
    enc.termination(chunk, *rank.end);
  }
  seal();
  for (const Event& e : rank.events) {
    if (!after_end(e)) continue;
    begin(e.seq, e.t_start);
    enc.event(chunk, e);
  }
  seal();
  write_file(file, out);
}

void write_trace(const Trace& trace, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw TraceError(dir.string() + ": cannot create: " + ec.message());

  Manifest manifest = trace.manifest;
  manifest.world_size = std::max<uint32_t>(manifest.world_size,
                                           static_cast<uint32_t>(trace.ranks.size()));
  manifest.rank_file_pattern = "rank-{rank}.smt";
  manifest.format_version = k_format_version;  // the rank files' (write_rank_file)
  v1::Manifest message;
  detail::to_proto(manifest, &message);
  write_file(dir / std::string(k_manifest_file), json_of(message));

  // Rank files of an earlier trace in `dir` would mix with this one; the
  // sites written here are already symbolized, so symbols.smt goes as well.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if ((name.rfind("rank-", 0) == 0 && name.size() > 9 &&
         name.compare(name.size() - 4, 4, ".smt") == 0) ||
        name == k_symbols_file) {
      fs::remove(entry.path(), ec);
    }
  }
  for (std::size_t i = 0; i < trace.ranks.size(); ++i) {
    const RankTrace& r = trace.ranks[i];
    if (!r.present) continue;
    write_rank_file(r, dir / rank_file_name(static_cast<uint32_t>(i)));
  }
}

}  // namespace smtrace::format
