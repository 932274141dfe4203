// The field numbers come from the generated message (v1::Event::k...FieldNumber),
// so that this decoder follows smtrace.proto; the values are converted as
// the generated accessors and proto_convert.cpp's to_plain convert them
// (varints truncated to the field's width, sint fields zigzag-decoded,
// enums kept as numbers).
#include "trace_format/event_decoder.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/parse_context.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "trace_format/smtrace.pb.h"

namespace smtrace::format::detail {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::internal::WireFormatLite;
using V1Event = v1::Event;
using V1Status = v1::Status;
using V1Completed = v1::CompletedRequest;
using V1Arg = v1::KernelArg;

constexpr uint32_t k_varint = WireFormatLite::WIRETYPE_VARINT;
constexpr uint32_t k_length = WireFormatLite::WIRETYPE_LENGTH_DELIMITED;

// The bytes of a record (or of a message inside it) still to decode.
struct Cursor {
  const unsigned char* p;
  const unsigned char* end;
  const unsigned char* readable;  // >= end: the caller's buffer may be read up to here
  bool more() const { return p < end; }
};

// Read a varint of more than one byte with libprotobuf's parsers: the
// generated code's inline one where 10 bytes (the longest varint) may be
// read, else a CodedInputStream bounded by the record.
[[gnu::noinline]] bool read_long_varint(Cursor& c, uint64_t& v) {
  if (c.readable - c.p >= 10) {
    const char* q = google::protobuf::internal::VarintParse(reinterpret_cast<const char*>(c.p), &v);
    if (!q || reinterpret_cast<const unsigned char*>(q) > c.end) return false;
    c.p = reinterpret_cast<const unsigned char*>(q);
    return true;
  }
  CodedInputStream in(c.p, static_cast<int>(c.end - c.p));
  if (!in.ReadVarint64(&v)) return false;
  c.p += in.CurrentPosition();
  return true;
}

// Read a varint: values of one to three bytes (the most common: small
// numbers, deltas, two-byte tags) inline, byte by byte, the rest with
// read_long_varint. A varint that runs past the record's end is not taken
// inline, so read_long_varint refuses it as before.
[[gnu::always_inline]] inline bool read_varint(Cursor& c, uint64_t& v) {
  const std::ptrdiff_t left = c.end - c.p;
  if (left >= 1 && c.p[0] < 0x80) {  // one byte: most values
    v = *c.p++;
    return true;
  }
  if (left >= 2 && c.p[1] < 0x80) {
    v = (c.p[0] & 0x7fu) | static_cast<uint64_t>(c.p[1]) << 7;
    c.p += 2;
    return true;
  }
  if (left >= 3 && c.p[2] < 0x80) {
    v = (c.p[0] & 0x7fu) | static_cast<uint64_t>(c.p[1] & 0x7fu) << 7 | static_cast<uint64_t>(c.p[2]) << 14;
    c.p += 3;
    return true;
  }
  return read_long_varint(c, v);
}

// Tags longer than 5 bytes, or beyond 32 bits, are left to the generated parser.
[[gnu::always_inline]] inline bool read_tag(Cursor& c, uint32_t& tag) {
  const std::ptrdiff_t left = c.end - c.p;
  if (left >= 1 && c.p[0] < 0x80) {  // fields 1 to 15
    tag = *c.p++;
    return true;
  }
  if (left >= 2 && c.p[1] < 0x80) {  // fields 16 to 2047
    tag = (c.p[0] & 0x7fu) | static_cast<uint32_t>(c.p[1]) << 7;
    c.p += 2;
    return true;
  }
  const unsigned char* at = c.p;
  uint64_t v = 0;
  if (!read_varint(c, v) || c.p - at > 5 || v > UINT32_MAX) return false;
  tag = static_cast<uint32_t>(v);
  return true;
}

[[gnu::always_inline]] inline bool varint(Cursor& c, uint32_t wire, uint64_t& v) { return wire == k_varint && read_varint(c, v); }

// Return the length-delimited body that follows (and step over it), or false.
[[gnu::always_inline]] inline bool body(Cursor& c, uint32_t wire, Cursor& inner) {
  uint64_t len = 0;
  if (wire != k_length || !read_varint(c, len) || len > static_cast<uint64_t>(c.end - c.p)) return false;
  inner = Cursor{c.p, c.p + len, c.readable};
  c.p += len;
  return true;
}

// The body of a packed repeated scalar that follows, appended to `out`.
template <class T>
bool packed(Cursor& c, std::vector<T>& out) {
  Cursor in{};
  if (!body(c, k_length, in)) return false;
  uint64_t v = 0;
  while (in.more()) {
    if (!read_varint(in, v)) return false;
    out.push_back(static_cast<T>(v));
  }
  return true;
}

int32_t zigzag32(uint64_t v) { return WireFormatLite::ZigZagDecode32(static_cast<uint32_t>(v)); }
int64_t zigzag64(uint64_t v) { return WireFormatLite::ZigZagDecode64(v); }
int32_t int32(uint64_t v) { return static_cast<int32_t>(v); }

// Decode the message body that follows, calling `field(in, tag)` for each
// field (false: not taken here).
template <class Field>
bool message(Cursor& c, uint32_t wire, const Field& field) {
  Cursor in{};
  if (!body(c, wire, in)) return false;
  while (in.more()) {
    uint32_t tag = 0;
    if (!read_tag(in, tag) || !field(in, tag)) return false;
  }
  return true;
}

// Decode a Status body into `s` (merged: what it gives overwrites).
bool status(Cursor& c, uint32_t wire, Status& s) {
  return message(c, wire, [&](Cursor& in, uint32_t tag) {
    uint64_t v = 0;
    if (!varint(in, tag & 7, v)) return false;
    switch (tag >> 3) {
      case V1Status::kSourceFieldNumber: s.source = zigzag32(v); return true;
      case V1Status::kTagFieldNumber: s.tag = zigzag32(v); return true;
      case V1Status::kCountFieldNumber: s.count = static_cast<int64_t>(v); return true;
      case V1Status::kCancelledFieldNumber: s.cancelled = v != 0; return true;
      case V1Status::kErrorFieldNumber: s.error = int32(v); return true;
      default: return false;
    }
  });
}

bool completed(Cursor& c, uint32_t wire, CompletedRequest& r) {
  return message(c, wire, [&](Cursor& in, uint32_t tag) {
    uint64_t v = 0;
    switch (tag >> 3) {
      case V1Completed::kStatusFieldNumber: return status(in, tag & 7, r.status);
      case V1Completed::kIndexFieldNumber:
        if (!varint(in, tag & 7, v)) return false;
        r.index = static_cast<uint32_t>(v);
        return true;
      case V1Completed::kRequestFieldNumber:
        if (!varint(in, tag & 7, v)) return false;
        r.request = v;
        return true;
      default: return false;
    }
  });
}

bool kernel_arg(Cursor& c, uint32_t wire, KernelArg& a) {
  return message(c, wire, [&](Cursor& in, uint32_t tag) {
    uint64_t v = 0;
    if (!varint(in, tag & 7, v)) return false;
    switch (tag >> 3) {
      case V1Arg::kIndexFieldNumber: a.index = static_cast<uint32_t>(v); return true;
      case V1Arg::kAddrFieldNumber: a.addr = v; return true;
      case V1Arg::kSizeFieldNumber: a.size = v; return true;
      case V1Arg::kAccessFieldNumber: a.access = static_cast<ArgAccess>(int32(v)); return true;
      default: return false;
    }
  });
}

// Decode one field of tag `tag` into `e`; false: not taken here. A varint
// field's value is read before the field is looked up (one read for all of
// them); a field number this decoder does not take, or a wire type other
// than its own, gives false either way.
bool field(Cursor& in, uint32_t tag, Event& e, EventRecord& record) {
  const uint32_t wire = tag & 7;
  if (wire == k_length) {
    switch (tag >> 3) {
      case V1Event::kStackFieldNumber: return packed(in, e.stack);
      case V1Event::kCountsFieldNumber: return packed(in, e.counts);
      case V1Event::kDisplsFieldNumber: return packed(in, e.displs);
      case V1Event::kDatatypesFieldNumber: return packed(in, e.datatypes);
      case V1Event::kRecvCountsFieldNumber: return packed(in, e.recv_counts);
      case V1Event::kRecvDisplsFieldNumber: return packed(in, e.recv_displs);
      case V1Event::kRecvDatatypesFieldNumber: return packed(in, e.recv_datatypes);
      case V1Event::kRequestsFieldNumber: return packed(in, e.requests);
      case V1Event::kCompletedFieldNumber: return completed(in, wire, e.completed.emplace_back());
      case V1Event::kStatusFieldNumber: return status(in, wire, e.status);
      case V1Event::kArgsFieldNumber: return kernel_arg(in, wire, e.args.emplace_back());
      default: return false;  // unknown, or a scalar (all varints): the generated parser decides
    }
  }
  uint64_t v = 0;
  if (wire != k_varint || !read_varint(in, v)) return false;
  switch (tag >> 3) {
    // Repeated scalars, one element unpacked.
    case V1Event::kStackFieldNumber: e.stack.push_back(static_cast<uint32_t>(v)); return true;
    case V1Event::kCountsFieldNumber: e.counts.push_back(static_cast<int64_t>(v)); return true;
    case V1Event::kDisplsFieldNumber: e.displs.push_back(static_cast<int64_t>(v)); return true;
    case V1Event::kDatatypesFieldNumber: e.datatypes.push_back(static_cast<uint32_t>(v)); return true;
    case V1Event::kRecvCountsFieldNumber: e.recv_counts.push_back(static_cast<int64_t>(v)); return true;
    case V1Event::kRecvDisplsFieldNumber: e.recv_displs.push_back(static_cast<int64_t>(v)); return true;
    case V1Event::kRecvDatatypesFieldNumber: e.recv_datatypes.push_back(static_cast<uint32_t>(v)); return true;
    case V1Event::kRequestsFieldNumber: e.requests.push_back(v); return true;
    // Scalars.
    case V1Event::kSeqFieldNumber: e.seq = v; record.has_seq = true; return true;
    case V1Event::kCallFieldNumber: e.call = static_cast<Call>(int32(v)); return true;
    case V1Event::kThreadFieldNumber: e.thread = static_cast<uint32_t>(v); return true;
    case V1Event::kTStartFieldNumber: e.t_start = zigzag64(v); return true;
    case V1Event::kDurationFieldNumber: e.duration = v; return true;
    case V1Event::kPendingFieldNumber: e.pending = v != 0; return true;
    case V1Event::kCompletesFieldNumber: record.completes = v; return true;
    case V1Event::kSiteFieldNumber: e.site = static_cast<uint32_t>(v); return true;
    case V1Event::kRepeatFieldNumber: e.repeat = static_cast<uint32_t>(v); return true;
    case V1Event::kRcFieldNumber: e.rc = zigzag32(v); return true;
    case V1Event::kCommFieldNumber: e.comm = static_cast<uint32_t>(v); return true;
    case V1Event::kPeerFieldNumber: e.peer = zigzag32(v); return true;
    case V1Event::kTagFieldNumber: e.tag = zigzag32(v); return true;
    case V1Event::kBufFieldNumber: e.buf = static_cast<uint64_t>(zigzag64(v)); return true;
    case V1Event::kCountFieldNumber: e.count = static_cast<int64_t>(v); return true;
    case V1Event::kDatatypeFieldNumber: e.datatype = static_cast<uint32_t>(v); return true;
    case V1Event::kRecvBufFieldNumber: e.recv_buf = static_cast<uint64_t>(zigzag64(v)); return true;
    case V1Event::kRecvCountFieldNumber: e.recv_count = static_cast<int64_t>(v); return true;
    case V1Event::kRecvDatatypeFieldNumber: e.recv_datatype = static_cast<uint32_t>(v); return true;
    case V1Event::kRecvPeerFieldNumber: e.recv_peer = zigzag32(v); return true;
    case V1Event::kRecvTagFieldNumber: e.recv_tag = zigzag32(v); return true;
    case V1Event::kOpFieldNumber: e.op = static_cast<uint32_t>(v); return true;
    case V1Event::kInPlaceFieldNumber: e.in_place = v != 0; return true;
    case V1Event::kRequestFieldNumber: e.request = v; return true;
    case V1Event::kFlagFieldNumber: e.flag = v != 0; return true;
    case V1Event::kNewCommFieldNumber: e.new_comm = static_cast<uint32_t>(v); return true;
    case V1Event::kColorFieldNumber: e.color = zigzag32(v); return true;
    case V1Event::kKeyFieldNumber: e.key = zigzag32(v); return true;
    case V1Event::kGroupFieldNumber: e.group = static_cast<uint32_t>(v); return true;
    case V1Event::kNewDatatypeFieldNumber: e.new_datatype = static_cast<uint32_t>(v); return true;
    case V1Event::kWindowFieldNumber: e.window = static_cast<uint32_t>(v); return true;
    case V1Event::kWinBaseFieldNumber: e.win_base = v; return true;
    case V1Event::kWinSizeFieldNumber: e.win_size = v; return true;
    case V1Event::kDispUnitFieldNumber: e.disp_unit = int32(v); return true;
    case V1Event::kTargetDispFieldNumber: e.target_disp = v; return true;
    case V1Event::kTargetCountFieldNumber: e.target_count = static_cast<int64_t>(v); return true;
    case V1Event::kTargetDatatypeFieldNumber: e.target_datatype = static_cast<uint32_t>(v); return true;
    case V1Event::kResultBufFieldNumber: e.result_buf = static_cast<uint64_t>(zigzag64(v)); return true;
    case V1Event::kResultCountFieldNumber: e.result_count = static_cast<int64_t>(v); return true;
    case V1Event::kResultDatatypeFieldNumber: e.result_datatype = static_cast<uint32_t>(v); return true;
    case V1Event::kCompareBufFieldNumber: e.compare_buf = static_cast<uint64_t>(zigzag64(v)); return true;
    case V1Event::kLockTypeFieldNumber: e.lock_type = static_cast<LockType>(int32(v)); return true;
    case V1Event::kAssertFlagsFieldNumber: e.assert_flags = static_cast<uint32_t>(v); return true;
    case V1Event::kSizeFieldNumber: e.size = v; return true;
    case V1Event::kErrorClassFieldNumber: return true;  // reserved; the plain event has no place for it
    case V1Event::kStrideFieldNumber: e.stride = static_cast<int64_t>(v); return true;
    case V1Event::kStreamFieldNumber: e.stream = v; return true;
    case V1Event::kCudaEventFieldNumber: e.cuda_event = v; return true;
    case V1Event::kKernelFieldNumber: e.kernel = static_cast<uint32_t>(v); return true;
    case V1Event::kMemoryFieldNumber: e.memory = static_cast<MemoryKind>(int32(v)); return true;
    case V1Event::kRecvMemoryFieldNumber: e.recv_memory = static_cast<MemoryKind>(int32(v)); return true;
    case V1Event::kCopyKindFieldNumber: e.copy_kind = static_cast<CopyKind>(int32(v)); return true;
    case V1Event::kFlagsFieldNumber: e.flags = static_cast<uint32_t>(v); return true;
    case V1Event::kMessageFieldNumber: e.message = v; return true;
    case V1Event::kPeerCommFieldNumber: e.peer_comm = static_cast<uint32_t>(v); return true;
    default: return false;  // unknown, or a message field: the generated parser decides
  }
}

// Set `e` to a default Event, keeping its vectors' storage (a copy of an
// empty Event calls each vector's assignment out of line).
void reset(Event& e) {
  static_assert(sizeof(Event) == 608, "format::Event changed: list its vectors here and its fields in field()");
  Event fresh;
  auto keep = [](auto& from, auto& to) {
    to.swap(from);
    to.clear();
  };
  keep(e.stack, fresh.stack);
  keep(e.counts, fresh.counts);
  keep(e.displs, fresh.displs);
  keep(e.datatypes, fresh.datatypes);
  keep(e.recv_counts, fresh.recv_counts);
  keep(e.recv_displs, fresh.recv_displs);
  keep(e.recv_datatypes, fresh.recv_datatypes);
  keep(e.requests, fresh.requests);
  keep(e.completed, fresh.completed);
  keep(e.args, fresh.args);
  e = std::move(fresh);
}

}  // namespace

bool decode_event(const unsigned char* data, int size, int readable, Event& out, EventRecord& record) {
  reset(out);
  record = EventRecord{};
  Cursor in{data, data + size, data + std::max(size, readable)};
  while (in.more()) {
    uint32_t tag = 0;
    if (!read_tag(in, tag) || !field(in, tag, out, record)) return false;
  }
  return true;
}

}  // namespace smtrace::format::detail
