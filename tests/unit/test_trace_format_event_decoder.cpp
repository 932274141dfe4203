// The reader's direct Event decoder (trace_format/event_decoder.hpp) against
// libprotobuf's generated parser: what it takes must decode to the same plain
// event, and what it leaves to the parser it must refuse.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "trace_format/event_decoder.hpp"
#include "trace_format/proto_convert.hpp"
#include "trace_format/smtrace.pb.h"
#include "trace_format_full_event.hpp"

namespace fmt_ns = smtrace::format;
namespace detail = smtrace::format::detail;
namespace pb = smtrace::v1;

namespace {

// Decode `bytes` with decode_event (into an event that held other values
// before, as the reader's reused one does); return whether it took them.
bool decode(const std::string& bytes, fmt_ns::Event& out, detail::EventRecord& record) {
  out.stack = {1, 2, 3};
  out.completed.resize(2);
  out.status.source = 5;
  out.peer = 9;
  out.rc = 4;
  return detail::decode_event(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()),
                              static_cast<int>(bytes.size()), out, record);
}

// Return the plain event the generated parser makes of `bytes`.
fmt_ns::Event parsed(const std::string& bytes) {
  pb::Event p;
  REQUIRE(p.ParseFromString(bytes));
  return detail::to_plain(p);
}

// full_event() with large numbers where varints get long, and the fields it leaves alone.
fmt_ns::Event every_field() {
  fmt_ns::Event e = full_event();
  e.seq = 70000;
  e.t_start = -1234567;
  e.duration = 1ull << 40;
  e.buf = 0xffff'fffe'0000'1000;
  e.message = 2;
  e.peer_comm = 3;
  return e;
}

void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void field(std::string& out, uint32_t number, uint32_t wire) { varint(out, uint64_t{number} << 3 | wire); }
void bytes(std::string& out, uint32_t number, const std::string& body) {
  field(out, number, 2);
  varint(out, body.size());
  out += body;
}

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::decode_event::every field, as the generated parser") {
  const fmt_ns::Event e = every_field();
  pb::Event p;
  detail::to_proto(e, &p);
  const std::string wire = p.SerializeAsString();
  fmt_ns::Event out;
  detail::EventRecord record;
  REQUIRE(decode(wire, out, record));
  CHECK(out == e);
  CHECK(out == parsed(wire));
  CHECK(record.has_seq);
  CHECK(record.completes == 0);

  SUBCASE("a default event: every field back to its default") {
    REQUIRE(decode("", out, record));
    CHECK(out == fmt_ns::Event{});
    CHECK_FALSE(record.has_seq);
  }
  SUBCASE("pending and completion records are decoded too (the reader sends them to the parser)") {
    p.set_pending(true);
    p.set_completes(3);
    REQUIRE(decode(p.SerializeAsString(), out, record));
    CHECK(out.pending);
    CHECK(record.completes == 3);
  }
}

TEST_CASE("trace_format::decode_event::repeated and merged fields") {
  std::string wire;
  field(wire, 9, 0);  // stack, one element unpacked
  varint(wire, 5);
  std::string packed;
  varint(packed, 6);
  varint(packed, 1ull << 35);  // truncated to 32 bits, as the parser does
  bytes(wire, 9, packed);      // then packed: appended
  field(wire, 2, 0);           // call beyond uint16: kept as the parser keeps it
  varint(wire, 70000);
  field(wire, 11, 0);  // rc (sint32) given twice: the last one counts
  varint(wire, 3);
  field(wire, 11, 0);
  varint(wire, 4);
  std::string status1, status2;
  field(status1, 1, 0);  // source -1
  varint(status1, 1);
  field(status2, 3, 0);  // count 7
  varint(status2, 7);
  bytes(wire, 34, status1);  // status given twice: merged
  bytes(wire, 34, status2);
  field(wire, 55, 0);  // error_class: read, not kept
  varint(wire, 2);
  field(wire, 44, 0);  // disp_unit -1 in ten bytes
  varint(wire, UINT64_MAX);
  fmt_ns::Event out;
  detail::EventRecord record;
  REQUIRE(decode(wire, out, record));
  CHECK(out == parsed(wire));
  CHECK(out.stack == std::vector<uint32_t>{5, 6, 0});
  CHECK(out.rc == 2);
  CHECK(out.status.source == -1);
  CHECK(out.status.count == 7);
  CHECK(out.disp_unit == -1);
}

TEST_CASE("trace_format::decode_event::leaves the rest to the generated parser") {
  fmt_ns::Event out;
  detail::EventRecord record;
  std::string wire;
  SUBCASE("an unknown field, which the parser keeps") {
    field(wire, 100, 0);
    varint(wire, 1);
    CHECK(parsed(wire) == fmt_ns::Event{});
  }
  SUBCASE("a known field with another wire type, an unknown field to the parser") {
    field(wire, 2, 1);
    wire += std::string(8, '\x01');
    CHECK(parsed(wire) == fmt_ns::Event{});
  }
  SUBCASE("a group") {
    field(wire, 90, 3);
    field(wire, 90, 4);
    CHECK(parsed(wire) == fmt_ns::Event{});
  }
  SUBCASE("an unknown field inside a status") {
    std::string status;
    field(status, 9, 0);
    varint(status, 1);
    bytes(wire, 34, status);
  }
  SUBCASE("a varint cut by the end of the record") {
    field(wire, 5, 0);
    wire += '\x80';
    pb::Event p;
    CHECK_FALSE(p.ParseFromString(wire));
  }
  SUBCASE("a length beyond the record") {
    field(wire, 9, 2);
    varint(wire, 5);
    wire += "ab";
    pb::Event p;
    CHECK_FALSE(p.ParseFromString(wire));
  }
  SUBCASE("tag 0") {
    wire = std::string("\x10\x01\x00", 3);
    pb::Event p;
    CHECK_FALSE(p.ParseFromString(wire));
  }
  SUBCASE("a tag in six bytes") {
    wire = std::string("\x90\x80\x80\x80\x80\x00\x01", 7);
  }
  CHECK_FALSE(decode(wire, out, record));
}

TEST_CASE("trace_format::decode_event::reads no byte beyond what it may") {
  // A varint that runs past the record's end, where the frame goes on: not
  // this record's value.
  std::string frame;
  field(frame, 5, 0);
  frame += std::string("\xff\xff", 2);  // the record ends here, inside the varint
  const int record_size = static_cast<int>(frame.size());
  frame += std::string(16, '\x01');
  fmt_ns::Event out;
  detail::EventRecord record;
  CHECK_FALSE(detail::decode_event(reinterpret_cast<const unsigned char*>(frame.data()), record_size,
                                   static_cast<int>(frame.size()), out, record));
}

TEST_CASE("trace_format::decode_event::varints of every length, near the record's and the buffer's end") {
  // Every varint length from 1 to 10 bytes (the inline reads take 1 to 3),
  // as the last field of the record, with nothing or more bytes readable
  // after it: each decodes as the generated parser decodes it.
  for (int bits = 0; bits <= 64; ++bits) {
    const uint64_t below = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
    const uint64_t at = bits < 64 ? uint64_t{1} << bits : 0;
    for (const uint64_t v : {below, at}) {
      // duration, t_start (sint64), request, buf: one- and two-byte tags
      for (const uint32_t number : {5u, 4u, 31u, 16u}) {
        std::string wire;
        field(wire, 2, 0);  // call
        varint(wire, 3);
        field(wire, number, 0);
        varint(wire, v);
        for (const std::size_t after : {0, 1, 2, 9, 16}) {
          CAPTURE(v);
          CAPTURE(number);
          CAPTURE(after);
          const std::string frame = wire + std::string(after, '\x81');  // continuation bytes: not part of the record
          fmt_ns::Event out;
          detail::EventRecord record;
          const auto* data = reinterpret_cast<const unsigned char*>(frame.data());
          REQUIRE(detail::decode_event(data, static_cast<int>(wire.size()), static_cast<int>(frame.size()), out, record));
          CHECK(out == parsed(wire));
        }
      }
    }
  }
}

TEST_CASE("trace_format::decode_event::every cut of a record, as the generated parser") {
  // A record cut at every byte (the frame's bytes after the cut still
  // readable): decode_event takes the prefix exactly when the generated
  // parser does, and then decodes it the same.
  fmt_ns::Event halo;  // an Irecv and a Waitall as the halo pattern writes them
  halo.call = fmt_ns::Call::Waitall;
  halo.t_start = 300;
  halo.duration = 1500;
  halo.completed.resize(2);
  halo.completed[0].request = 70000;
  halo.completed[0].status.source = 3;
  halo.completed[0].status.tag = 1;
  halo.completed[0].status.count = 4096;
  halo.completed[1].index = 1;
  halo.completed[1].request = 70001;
  halo.requests = {70000, 70001, 1ull << 40};
  for (const fmt_ns::Event& e : {every_field(), halo}) {
    pb::Event p;
    detail::to_proto(e, &p);
    const std::string wire = p.SerializeAsString();
    for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
      CAPTURE(cut);
      const std::string prefix = wire.substr(0, cut);
      pb::Event q;
      const bool parses = q.ParseFromString(prefix);
      fmt_ns::Event out;
      detail::EventRecord record;
      const auto* data = reinterpret_cast<const unsigned char*>(wire.data());
      const bool decodes = detail::decode_event(data, static_cast<int>(cut), static_cast<int>(wire.size()), out, record);
      CHECK(decodes == parses);
      if (decodes && parses) CHECK(out == detail::to_plain(q));
    }
  }
}

TEST_CASE("trace_format::decode_event::every field number with every wire type") {
  // One field, numbers 0 to 70 (beyond the last one of Event too), each
  // wire type well formed: decode_event takes the record exactly when the
  // generated parser reads it with no unknown field, and then as it does.
  for (uint32_t number = 0; number <= 70; ++number) {
    for (const uint32_t wire_type : {0u, 1u, 2u, 5u}) {
      CAPTURE(number);
      CAPTURE(wire_type);
      std::string wire;
      field(wire, 2, 0);  // call
      varint(wire, 3);
      field(wire, number, wire_type);
      if (wire_type == 0) varint(wire, 300);
      if (wire_type == 1) wire += std::string(8, '\x02');
      if (wire_type == 2) wire += std::string("\x02\x08\x01", 3);  // packed {8, 1}, or a message whose field 1 is 1
      if (wire_type == 5) wire += std::string(4, '\x02');
      pb::Event p;
      const bool parses = p.ParseFromString(wire) && p.GetReflection()->GetUnknownFields(p).empty();
      fmt_ns::Event out;
      detail::EventRecord record;
      const bool decodes = decode(wire, out, record);
      CHECK(decodes == parses);
      if (decodes && parses) CHECK(out == detail::to_plain(p));
    }
  }
}

TEST_SUITE_END();
