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

[[gnu::always_inline]] inline bool varint(Cursor& c, uint32_t wire, uint64_t& v) {
  return wire == k_varint && read_varint(c, v);
}

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

// The tag of field `number` with a varint or a length-delimited value.
constexpr uint32_t varint_tag(int number) { return static_cast<uint32_t>(number) << 3 | k_varint; }
constexpr uint32_t length_tag(int number) { return static_cast<uint32_t>(number) << 3 | k_length; }

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

// Decode one field of tag `tag` into `e`; false: not taken here (a field
// number this decoder does not take, or a wire type other than the
// field's: the generated parser decides). One switch on the whole tag, each
// varint field reading its value.
bool field(Cursor& in, uint32_t tag, Event& e, EventRecord& record) {
  uint64_t v = 0;
  switch (tag) {
    case length_tag(V1Event::kStackFieldNumber): return packed(in, e.stack);
    case length_tag(V1Event::kCountsFieldNumber): return packed(in, e.counts);
    case length_tag(V1Event::kDisplsFieldNumber): return packed(in, e.displs);
    case length_tag(V1Event::kDatatypesFieldNumber): return packed(in, e.datatypes);
    case length_tag(V1Event::kRecvCountsFieldNumber): return packed(in, e.recv_counts);
    case length_tag(V1Event::kRecvDisplsFieldNumber): return packed(in, e.recv_displs);
    case length_tag(V1Event::kRecvDatatypesFieldNumber): return packed(in, e.recv_datatypes);
    case length_tag(V1Event::kRequestsFieldNumber): return packed(in, e.requests);
    case length_tag(V1Event::kCompletedFieldNumber): return completed(in, k_length, e.completed.emplace_back());
    case length_tag(V1Event::kStatusFieldNumber): return status(in, k_length, e.status);
    case length_tag(V1Event::kArgsFieldNumber): return kernel_arg(in, k_length, e.args.emplace_back());
    // Repeated scalars, one element unpacked.
    case varint_tag(V1Event::kStackFieldNumber):
      if (!read_varint(in, v)) return false;
      e.stack.push_back(static_cast<uint32_t>(v));
      return true;
    case varint_tag(V1Event::kCountsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.counts.push_back(static_cast<int64_t>(v));
      return true;
    case varint_tag(V1Event::kDisplsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.displs.push_back(static_cast<int64_t>(v));
      return true;
    case varint_tag(V1Event::kDatatypesFieldNumber):
      if (!read_varint(in, v)) return false;
      e.datatypes.push_back(static_cast<uint32_t>(v));
      return true;
    case varint_tag(V1Event::kRecvCountsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_counts.push_back(static_cast<int64_t>(v));
      return true;
    case varint_tag(V1Event::kRecvDisplsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_displs.push_back(static_cast<int64_t>(v));
      return true;
    case varint_tag(V1Event::kRecvDatatypesFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_datatypes.push_back(static_cast<uint32_t>(v));
      return true;
    case varint_tag(V1Event::kRequestsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.requests.push_back(v);
      return true;
    // Scalars.
    case varint_tag(V1Event::kSeqFieldNumber):
      if (!read_varint(in, v)) return false;
      e.seq = v;
      record.has_seq = true;
      return true;
    case varint_tag(V1Event::kCallFieldNumber):
      if (!read_varint(in, v)) return false;
      e.call = static_cast<Call>(int32(v));
      return true;
    case varint_tag(V1Event::kThreadFieldNumber):
      if (!read_varint(in, v)) return false;
      e.thread = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kTStartFieldNumber):
      if (!read_varint(in, v)) return false;
      e.t_start = zigzag64(v);
      return true;
    case varint_tag(V1Event::kDurationFieldNumber):
      if (!read_varint(in, v)) return false;
      e.duration = v;
      return true;
    case varint_tag(V1Event::kPendingFieldNumber):
      if (!read_varint(in, v)) return false;
      e.pending = v != 0;
      return true;
    case varint_tag(V1Event::kCompletesFieldNumber):
      if (!read_varint(in, v)) return false;
      record.completes = v;
      return true;
    case varint_tag(V1Event::kSiteFieldNumber):
      if (!read_varint(in, v)) return false;
      e.site = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kRepeatFieldNumber):
      if (!read_varint(in, v)) return false;
      e.repeat = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kRcFieldNumber):
      if (!read_varint(in, v)) return false;
      e.rc = zigzag32(v);
      return true;
    case varint_tag(V1Event::kCommFieldNumber):
      if (!read_varint(in, v)) return false;
      e.comm = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kPeerFieldNumber):
      if (!read_varint(in, v)) return false;
      e.peer = zigzag32(v);
      return true;
    case varint_tag(V1Event::kTagFieldNumber):
      if (!read_varint(in, v)) return false;
      e.tag = zigzag32(v);
      return true;
    case varint_tag(V1Event::kBufFieldNumber):
      if (!read_varint(in, v)) return false;
      e.buf = static_cast<uint64_t>(zigzag64(v));
      return true;
    case varint_tag(V1Event::kCountFieldNumber):
      if (!read_varint(in, v)) return false;
      e.count = static_cast<int64_t>(v);
      return true;
    case varint_tag(V1Event::kDatatypeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.datatype = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kRecvBufFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_buf = static_cast<uint64_t>(zigzag64(v));
      return true;
    case varint_tag(V1Event::kRecvCountFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_count = static_cast<int64_t>(v);
      return true;
    case varint_tag(V1Event::kRecvDatatypeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_datatype = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kRecvPeerFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_peer = zigzag32(v);
      return true;
    case varint_tag(V1Event::kRecvTagFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_tag = zigzag32(v);
      return true;
    case varint_tag(V1Event::kOpFieldNumber):
      if (!read_varint(in, v)) return false;
      e.op = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kInPlaceFieldNumber):
      if (!read_varint(in, v)) return false;
      e.in_place = v != 0;
      return true;
    case varint_tag(V1Event::kRequestFieldNumber):
      if (!read_varint(in, v)) return false;
      e.request = v;
      return true;
    case varint_tag(V1Event::kFlagFieldNumber):
      if (!read_varint(in, v)) return false;
      e.flag = v != 0;
      return true;
    case varint_tag(V1Event::kNewCommFieldNumber):
      if (!read_varint(in, v)) return false;
      e.new_comm = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kColorFieldNumber):
      if (!read_varint(in, v)) return false;
      e.color = zigzag32(v);
      return true;
    case varint_tag(V1Event::kKeyFieldNumber):
      if (!read_varint(in, v)) return false;
      e.key = zigzag32(v);
      return true;
    case varint_tag(V1Event::kGroupFieldNumber):
      if (!read_varint(in, v)) return false;
      e.group = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kNewDatatypeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.new_datatype = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kWindowFieldNumber):
      if (!read_varint(in, v)) return false;
      e.window = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kWinBaseFieldNumber):
      if (!read_varint(in, v)) return false;
      e.win_base = v;
      return true;
    case varint_tag(V1Event::kWinSizeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.win_size = v;
      return true;
    case varint_tag(V1Event::kDispUnitFieldNumber):
      if (!read_varint(in, v)) return false;
      e.disp_unit = int32(v);
      return true;
    case varint_tag(V1Event::kTargetDispFieldNumber):
      if (!read_varint(in, v)) return false;
      e.target_disp = v;
      return true;
    case varint_tag(V1Event::kTargetCountFieldNumber):
      if (!read_varint(in, v)) return false;
      e.target_count = static_cast<int64_t>(v);
      return true;
    case varint_tag(V1Event::kTargetDatatypeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.target_datatype = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kResultBufFieldNumber):
      if (!read_varint(in, v)) return false;
      e.result_buf = static_cast<uint64_t>(zigzag64(v));
      return true;
    case varint_tag(V1Event::kResultCountFieldNumber):
      if (!read_varint(in, v)) return false;
      e.result_count = static_cast<int64_t>(v);
      return true;
    case varint_tag(V1Event::kResultDatatypeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.result_datatype = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kCompareBufFieldNumber):
      if (!read_varint(in, v)) return false;
      e.compare_buf = static_cast<uint64_t>(zigzag64(v));
      return true;
    case varint_tag(V1Event::kLockTypeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.lock_type = static_cast<LockType>(int32(v));
      return true;
    case varint_tag(V1Event::kAssertFlagsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.assert_flags = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kSizeFieldNumber):
      if (!read_varint(in, v)) return false;
      e.size = v;
      return true;
    case varint_tag(V1Event::kErrorClassFieldNumber):
      if (!read_varint(in, v)) return false;
      return true;  // reserved; the plain event has no place for it
    case varint_tag(V1Event::kStrideFieldNumber):
      if (!read_varint(in, v)) return false;
      e.stride = static_cast<int64_t>(v);
      return true;
    case varint_tag(V1Event::kStreamFieldNumber):
      if (!read_varint(in, v)) return false;
      e.stream = v;
      return true;
    case varint_tag(V1Event::kCudaEventFieldNumber):
      if (!read_varint(in, v)) return false;
      e.cuda_event = v;
      return true;
    case varint_tag(V1Event::kKernelFieldNumber):
      if (!read_varint(in, v)) return false;
      e.kernel = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kMemoryFieldNumber):
      if (!read_varint(in, v)) return false;
      e.memory = static_cast<MemoryKind>(int32(v));
      return true;
    case varint_tag(V1Event::kRecvMemoryFieldNumber):
      if (!read_varint(in, v)) return false;
      e.recv_memory = static_cast<MemoryKind>(int32(v));
      return true;
    case varint_tag(V1Event::kCopyKindFieldNumber):
      if (!read_varint(in, v)) return false;
      e.copy_kind = static_cast<CopyKind>(int32(v));
      return true;
    case varint_tag(V1Event::kFlagsFieldNumber):
      if (!read_varint(in, v)) return false;
      e.flags = static_cast<uint32_t>(v);
      return true;
    case varint_tag(V1Event::kMessageFieldNumber):
      if (!read_varint(in, v)) return false;
      e.message = v;
      return true;
    case varint_tag(V1Event::kPeerCommFieldNumber):
      if (!read_varint(in, v)) return false;
      e.peer_comm = static_cast<uint32_t>(v);
      return true;
    default: return false;
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
