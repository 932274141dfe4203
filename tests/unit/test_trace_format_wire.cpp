// The hand-written encoder (trace_format/wire.hpp) against libprotobuf's
// parser of smtrace.proto: the bytes must mean what the schema says.
#include <doctest/doctest.h>

#include <google/protobuf/io/coded_stream.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "trace_format/call_semantics.hpp"
#include "trace_format/smtrace.pb.h"
#include "trace_format/wire.hpp"
#include "trace_format_full_event.hpp"

namespace fmt_ns = smtrace::format;
namespace pb = smtrace::v1;

namespace {

// Split a record stream into (field, payload) pairs, in order.
std::vector<std::pair<uint32_t, std::string>> split_records(const std::string& bytes) {
  std::vector<std::pair<uint32_t, std::string>> records;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (uint32_t tag = in.ReadTag()) {
    REQUIRE((tag & 7) == 2);
    uint32_t len = 0;
    REQUIRE(in.ReadVarint32(&len));
    std::string payload;
    REQUIRE(in.ReadString(&payload, static_cast<int>(len)));
    records.emplace_back(tag >> 3, std::move(payload));
  }
  REQUIRE(in.ConsumedEntireMessage());
  return records;
}


void check_status(const pb::Status& p, const fmt_ns::Status& s) {
  CHECK(p.has_source() == s.source.has_value());
  if (s.source) CHECK(p.source() == *s.source);
  CHECK(p.has_tag() == s.tag.has_value());
  if (s.tag) CHECK(p.tag() == *s.tag);
  CHECK(p.has_count() == s.count.has_value());
  if (s.count) CHECK(p.count() == *s.count);
  CHECK(p.cancelled() == s.cancelled);
  CHECK(p.error() == s.error);
}

template <class R, class V>
void check_repeated(const R& got, const V& want) {
  REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got.Get(static_cast<int>(i)) == want[i]);
}

// Check the fields after identity and time, which both codings share.
void check_body(const pb::Event& p, const fmt_ns::Event& e) {
  CHECK(p.site() == e.site);
  check_repeated(p.stack(), e.stack);
  CHECK(p.repeat() == e.repeat);
  CHECK(p.rc() == e.rc);
  CHECK(p.comm() == e.comm);
  CHECK(p.has_peer() == e.peer.has_value());
  CHECK(p.peer() == e.peer.value_or(0));
  CHECK(p.has_tag() == e.tag.has_value());
  CHECK(p.tag() == e.tag.value_or(0));
  CHECK(p.count() == e.count);
  CHECK(p.datatype() == e.datatype);
  CHECK(static_cast<uint64_t>(p.recv_buf()) == e.recv_buf);
  CHECK(p.recv_count() == e.recv_count);
  CHECK(p.recv_datatype() == e.recv_datatype);
  check_repeated(p.counts(), e.counts);
  check_repeated(p.displs(), e.displs);
  check_repeated(p.datatypes(), e.datatypes);
  check_repeated(p.recv_counts(), e.recv_counts);
  check_repeated(p.recv_displs(), e.recv_displs);
  check_repeated(p.recv_datatypes(), e.recv_datatypes);
  CHECK(p.has_recv_peer() == e.recv_peer.has_value());
  CHECK(p.recv_peer() == e.recv_peer.value_or(0));
  CHECK(p.has_recv_tag() == e.recv_tag.has_value());
  CHECK(p.recv_tag() == e.recv_tag.value_or(0));
  CHECK(p.op() == e.op);
  CHECK(p.in_place() == e.in_place);
  CHECK(p.request() == e.request);
  check_repeated(p.requests(), e.requests);
  REQUIRE(static_cast<std::size_t>(p.completed_size()) == e.completed.size());
  for (std::size_t i = 0; i < e.completed.size(); ++i) {
    const auto& c = p.completed(static_cast<int>(i));
    CHECK(c.index() == e.completed[i].index);
    CHECK(c.request() == e.completed[i].request);
    check_status(c.status(), e.completed[i].status);
  }
  check_status(p.status(), e.status);
  CHECK(p.has_flag() == e.flag.has_value());
  CHECK(p.flag() == e.flag.value_or(false));
  CHECK(p.new_comm() == e.new_comm);
  CHECK(p.color() == e.color);
  CHECK(p.key() == e.key);
  CHECK(p.group() == e.group);
  CHECK(p.new_datatype() == e.new_datatype);
  CHECK(p.window() == e.window);
  CHECK(p.win_base() == e.win_base);
  CHECK(p.win_size() == e.win_size);
  CHECK(p.disp_unit() == e.disp_unit);
  CHECK(p.target_disp() == e.target_disp);
  CHECK(p.target_count() == e.target_count);
  CHECK(p.target_datatype() == e.target_datatype);
  CHECK(static_cast<uint64_t>(p.result_buf()) == e.result_buf);
  CHECK(p.result_count() == e.result_count);
  CHECK(p.result_datatype() == e.result_datatype);
  CHECK(static_cast<uint64_t>(p.compare_buf()) == e.compare_buf);
  CHECK(static_cast<int>(p.lock_type()) == static_cast<int>(e.lock_type));
  CHECK(p.assert_flags() == e.assert_flags);
  CHECK(p.size() == e.size);
  CHECK(p.stride() == e.stride);
  CHECK(p.stream() == e.stream);
  CHECK(p.cuda_event() == e.cuda_event);
  CHECK(p.kernel() == e.kernel);
  REQUIRE(static_cast<std::size_t>(p.args_size()) == e.args.size());
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    const pb::KernelArg& a = p.args(static_cast<int>(i));
    CHECK(a.index() == e.args[i].index);
    CHECK(a.addr() == e.args[i].addr);
    CHECK(a.size() == e.args[i].size);
    CHECK(static_cast<int>(a.access()) == static_cast<int>(e.args[i].access));
  }
  CHECK(static_cast<int>(p.memory()) == static_cast<int>(e.memory));
  CHECK(static_cast<int>(p.recv_memory()) == static_cast<int>(e.recv_memory));
  CHECK(static_cast<int>(p.copy_kind()) == static_cast<int>(e.copy_kind));
  CHECK(p.flags() == e.flags);
}

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::crc32c::known vector") {
  CHECK(fmt_ns::crc32c("123456789", 9) == 0xE3069283u);
  CHECK(fmt_ns::crc32c("", 0) == 0u);
  // Continuing from a previous value equals one pass over the whole.
  const char* text = "The quick brown fox jumps over the lazy dog";
  uint32_t part = fmt_ns::crc32c(text, 10);
  CHECK(fmt_ns::crc32c(text + 10, std::strlen(text) - 10, part) ==
        fmt_ns::crc32c(text, std::strlen(text)));
}

TEST_CASE("trace_format::crc32c::hardware and portable agree") {
  std::string hw = fmt_ns::crc32c_hardware() ? "yes" : "no";
  MESSAGE("crc32c uses the CPU instruction: " << hw);
  CHECK(fmt_ns::crc32c_portable("123456789", 9) == 0xE3069283u);
  // Every length 0..300 at every alignment 0..7, and continuation from each split.
  std::vector<unsigned char> data(320);
  uint32_t x = 12345;
  for (auto& b : data) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 16);
  for (std::size_t align = 0; align < 8; ++align) {
    for (std::size_t n = 0; n + align <= 308; n += (n < 40 ? 1 : 13)) {
      const unsigned char* p = data.data() + align;
      uint32_t want = fmt_ns::crc32c_portable(p, n);
      REQUIRE(fmt_ns::crc32c(p, n) == want);
      std::size_t split = n / 3;
      CHECK(fmt_ns::crc32c(p + split, n - split, fmt_ns::crc32c(p, split)) == want);
      CHECK(fmt_ns::crc32c(p, n, 0xDEADBEEFu) == fmt_ns::crc32c_portable(p, n, 0xDEADBEEFu));
    }
  }
}

TEST_CASE("trace_format::crc32c::long buffers, streams side by side, agree with portable") {
  // crc32c_hw runs three streams over blocks of 1 KiB at a time: every
  // length around the multiples of 3 KiB, a chunk's 64 KiB, odd alignments
  // and continuation from any split.
  std::vector<unsigned char> data(70000);
  uint32_t x = 777;
  for (auto& b : data) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 16);
  for (std::size_t base : {std::size_t{3072}, std::size_t{6144}, std::size_t{9216}, std::size_t{65536}}) {
    for (std::size_t n = base - 9; n <= base + 9; ++n) {
      for (std::size_t align : {0, 3}) {
        const unsigned char* p = data.data() + align;
        const uint32_t want = fmt_ns::crc32c_portable(p, n);
        REQUIRE(fmt_ns::crc32c(p, n) == want);
        const std::size_t split = n / 2 + 1;
        CHECK(fmt_ns::crc32c(p + split, n - split, fmt_ns::crc32c(p, split)) == want);
        CHECK(fmt_ns::crc32c(p, n, 0xDEADBEEFu) == fmt_ns::crc32c_portable(p, n, 0xDEADBEEFu));
      }
    }
  }
  std::vector<unsigned char> zeros(65536 + 5, 0);
  CHECK(fmt_ns::crc32c(zeros.data(), zeros.size()) == fmt_ns::crc32c_portable(zeros.data(), zeros.size()));
}

TEST_CASE("trace_format::frame header::length and crc little endian") {
  std::string out;
  fmt_ns::append_frame_header(out, "123456789");
  REQUIRE(out.size() == fmt_ns::k_frame_header_size);
  const unsigned char want[8] = {9, 0, 0, 0, 0x83, 0x92, 0x06, 0xE3};
  CHECK(std::memcmp(out.data(), want, 8) == 0);
}

TEST_CASE("trace_format::RecordEncoder::event with every field set") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 7, 1'000'000, 2);
  fmt_ns::Event e = full_event();
  enc.event(out, e);

  pb::Chunk chunk;
  REQUIRE(chunk.ParseFromString(out));
  CHECK(chunk.info().first_seq() == 7);
  CHECK(chunk.info().t_base() == 1'000'000);
  CHECK(chunk.info().index() == 2);
  REQUIRE(chunk.event_size() == 1);
  const pb::Event& p = chunk.event(0);
  CHECK_FALSE(p.has_seq());  // implicit: first_seq
  CHECK(static_cast<int>(p.call()) == static_cast<int>(e.call));
  CHECK(p.thread() == e.thread);
  CHECK(p.t_start() == 500);  // delta to t_base
  CHECK(p.duration() == e.duration);
  CHECK(p.pending() == e.pending);
  CHECK(p.completes() == 0);
  CHECK(static_cast<uint64_t>(p.buf()) == e.buf);  // delta to 0 at chunk start
  check_body(p, e);
}

TEST_CASE("trace_format::RecordEncoder::strided access") {
  // A merged run of loads: 100 blocks of 8 bytes, 64 bytes apart, then a
  // store without stride (one block).
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  fmt_ns::Event load;
  load.call = fmt_ns::Call::Load;
  load.t_start = 10;
  load.site = 3;
  load.stack = {4, 5};
  load.buf = 0x7f00'0000'1000;
  load.size = 8;
  load.count = 100;
  load.stride = 64;
  enc.event(out, load);
  fmt_ns::Event store;
  store.seq = 1;
  store.call = fmt_ns::Call::Store;
  store.t_start = 20;
  store.buf = 0x7f00'0000'0ff8;
  store.size = 4;
  enc.event(out, store);

  pb::Chunk chunk;
  REQUIRE(chunk.ParseFromString(out));
  REQUIRE(chunk.event_size() == 2);
  CHECK(chunk.event(0).call() == pb::LOAD);
  CHECK(chunk.event(0).count() == 100);
  CHECK(chunk.event(0).size() == 8);
  CHECK(chunk.event(0).stride() == 64);
  check_body(chunk.event(0), load);
  CHECK(chunk.event(1).call() == pb::STORE);
  CHECK(chunk.event(1).stride() == 0);
  CHECK(chunk.event(1).count() == 0);
  CHECK(static_cast<uint64_t>(chunk.event(0).buf() + chunk.event(1).buf()) == store.buf);  // delta coded
  SUBCASE("negative stride") {
    fmt_ns::RecordEncoder again;
    std::string bytes;
    again.begin_chunk(bytes, 0, 0, 0);
    load.stride = -8;
    again.event(bytes, load);
    pb::Chunk parsed;
    REQUIRE(parsed.ParseFromString(bytes));
    CHECK(parsed.event(0).stride() == -8);
  }
}

TEST_CASE("trace_format::RecordEncoder::implicit seq and delta times") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 100, 5000, 0);
  fmt_ns::Event a;
  a.seq = 100;
  a.call = fmt_ns::Call::Send;
  a.t_start = 5100;
  a.buf = 0x1000;
  fmt_ns::Event b = a;
  b.seq = 101;
  b.t_start = 5050;  // earlier than a (another thread): negative delta
  b.buf = 0x0800;
  fmt_ns::Event c = a;
  c.seq = 105;  // gap: coded explicitly
  c.t_start = 6000;
  c.buf = 0x0800;
  enc.event(out, a);
  enc.event(out, b);
  enc.event(out, c);
  CHECK(enc.next_seq() == 106);

  auto records = split_records(out);
  REQUIRE(records.size() == 4);
  CHECK(records[0].first == 1);
  pb::Event pa, pb_, pc;
  REQUIRE(pa.ParseFromString(records[1].second));
  REQUIRE(pb_.ParseFromString(records[2].second));
  REQUIRE(pc.ParseFromString(records[3].second));
  CHECK_FALSE(pa.has_seq());
  CHECK_FALSE(pb_.has_seq());
  REQUIRE(pc.has_seq());
  CHECK(pc.seq() == 105);
  CHECK(pa.t_start() == 100);
  CHECK(pb_.t_start() == -50);
  CHECK(pc.t_start() == 950);
  CHECK(pa.buf() == 0x1000);
  CHECK(pb_.buf() == -0x800);
  CHECK(pc.buf() == 0);

  // A new chunk resets the delta state.
  enc.begin_chunk(out, 106, 7000, 1);
  fmt_ns::Event d = a;
  d.seq = 106;
  d.t_start = 7001;
  std::string tail;
  enc.event(tail, d);
  pb::Event pd;
  auto tail_records = split_records(tail);
  REQUIRE(pd.ParseFromString(tail_records.at(0).second));
  CHECK_FALSE(pd.has_seq());
  CHECK(pd.t_start() == 1);
  CHECK(pd.buf() == 0x1000);
}

TEST_CASE("trace_format::RecordEncoder::buf of a call without a buffer is written as it is (version 2)") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  // Put, Win_flush, Put on one buffer; Buffer_attach (no buffer layout,
  // but a buf); Wait; Send 8 bytes further on than the Puts.
  const fmt_ns::Call calls[] = {fmt_ns::Call::Put, fmt_ns::Call::Win_flush, fmt_ns::Call::Put,
                                fmt_ns::Call::Buffer_attach, fmt_ns::Call::Wait, fmt_ns::Call::Send};
  const uint64_t bufs[] = {0x7f0000005000, 0, 0x7f0000005000, 0x9000, 0, 0x7f0000005008};
  for (uint64_t i = 0; i < 6; ++i) {
    fmt_ns::Event e;
    e.seq = i;
    e.call = calls[i];
    e.t_start = static_cast<int64_t>(i);
    e.buf = bufs[i];
    enc.event(out, e);
  }
  auto records = split_records(out);
  REQUIRE(records.size() == 7);
  std::vector<pb::Event> p(6);
  for (std::size_t i = 0; i < 6; ++i) REQUIRE(p[i].ParseFromString(records[i + 1].second));
  // No field 15 at all: buf 0, and the record is its canonical coding.
  auto no_buf = [&](std::size_t i) { return p[i].buf() == 0 && p[i].SerializeAsString() == records[i + 1].second; };
  CHECK(p[0].buf() == 0x7f0000005000);
  CHECK(no_buf(1));  // Win_flush: nothing, the running buf stays
  CHECK(no_buf(2));  // Put: delta 0
  CHECK(p[3].buf() == 0x9000);  // Buffer_attach: the address itself
  CHECK(no_buf(4));
  CHECK(p[5].buf() == 8);  // against the last Put
  CHECK(fmt_ns::buf_in_stream(fmt_ns::Call::Put));
  CHECK_FALSE(fmt_ns::buf_in_stream(fmt_ns::Call::Win_flush));
  CHECK_FALSE(fmt_ns::buf_in_stream(static_cast<fmt_ns::Call>(9999)));  // unknown: buffer-less
}

TEST_CASE("trace_format::RecordEncoder::completion records") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  fmt_ns::Event recv;
  recv.seq = 0;
  recv.call = fmt_ns::Call::Recv;
  recv.t_start = 10;
  recv.pending = true;
  recv.peer = fmt_ns::k_any_source;
  recv.buf = 0x4000;
  enc.event(out, recv);
  fmt_ns::Event other;
  other.seq = 1;
  other.call = fmt_ns::Call::Iprobe;
  other.t_start = 20;
  enc.event(out, other);

  fmt_ns::Event end;
  end.duration = 500;
  end.status.source = 3;
  end.status.tag = 9;
  end.status.count = 4;
  enc.completion(out, 0, end);
  CHECK(enc.next_seq() == 2);  // completions do not advance seq

  fmt_ns::Event next;
  next.seq = 2;
  next.call = fmt_ns::Call::Send;
  next.t_start = 30;
  next.buf = 0x4010;
  enc.event(out, next);

  auto records = split_records(out);
  REQUIRE(records.size() == 5);
  pb::Event c, n;
  REQUIRE(c.ParseFromString(records[3].second));
  CHECK(c.completes() == 2);  // latest seq 1 - completed 0 + 1
  CHECK_FALSE(c.has_seq());
  CHECK(c.t_start() == 0);
  CHECK(c.duration() == 500);
  CHECK(c.status().source() == 3);
  CHECK(c.status().tag() == 9);
  CHECK(c.status().count() == 4);
  CHECK(c.call() == pb::CALL_UNSPECIFIED);
  REQUIRE(n.ParseFromString(records[4].second));
  CHECK_FALSE(n.has_seq());
  CHECK(n.t_start() == 10);  // against the event at 20, not the completion
  CHECK(n.buf() == 0x10);  // against the Recv's 0x4000: Iprobe has no buffer (version 2)
}

TEST_CASE("trace_format::RecordEncoder::packed fields") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  fmt_ns::Event e;
  e.call = fmt_ns::Call::Waitall;
  for (uint64_t i = 0; i < 200; ++i) e.requests.push_back(i * 1000);  // > 127 bytes packed
  enc.event(out, e);
  auto records = split_records(out);
  REQUIRE(records.size() == 2);
  const std::string& payload = records[1].second;
  // Field 32, wire type 2 (packed), as a 2-byte tag.
  const std::string packed_tag = {static_cast<char>(0x82), static_cast<char>(0x02)};
  CHECK(payload.find(packed_tag) != std::string::npos);
  pb::Event p;
  REQUIRE(p.ParseFromString(payload));
  check_repeated(p.requests(), e.requests);
}

TEST_CASE("trace_format::RecordEncoder::large event goes through the heap path") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  fmt_ns::Event e = full_event();
  e.seq = 0;
  for (int i = 0; i < 5000; ++i) {
    e.counts.push_back(i);
    e.recv_displs.push_back(-i);
  }
  enc.event(out, e);
  pb::Chunk chunk;
  REQUIRE(chunk.ParseFromString(out));
  REQUIRE(chunk.event_size() == 1);
  check_body(chunk.event(0), e);
}

TEST_CASE("trace_format::RecordEncoder::records in place equal appended ones") {
  fmt_ns::Event small;
  small.call = fmt_ns::Call::Send;
  small.t_start = 1200;
  small.peer = 1;
  small.tag = 0;
  fmt_ns::Event full = full_event();
  fmt_ns::Event large = full_event();
  for (int i = 0; i < 300; ++i) large.counts.push_back(i);  // length needs 2+ bytes
  for (const fmt_ns::Event* src : {&small, &full, &large}) {
    fmt_ns::RecordEncoder a, b;
    std::string appended, info;
    a.begin_chunk(appended, 3, 1000, 0);
    b.begin_chunk(info, 3, 1000, 0);
    fmt_ns::Event e = *src;
    e.seq = 3;
    std::vector<unsigned char> in_place(info.begin(), info.end());
    auto put = [&](auto&& write) {
      std::size_t at = in_place.size();
      in_place.resize(at + fmt_ns::RecordEncoder::record_bound(e) + 64, 0);
      std::size_t n = write(in_place.data() + at);
      CHECK(in_place[at] == 0);  // the tag is the caller's to store
      // Nothing written past the record.
      for (std::size_t i = at + n; i < in_place.size(); ++i) REQUIRE(in_place[i] == 0);
      in_place[at] = fmt_ns::RecordEncoder::k_event_tag;
      in_place.resize(at + n);
    };
    a.event(appended, e);
    put([&](unsigned char* dst) { return b.event_at(dst, e); });
    fmt_ns::Event end;
    end.duration = 77;
    end.status.source = 1;
    a.completion(appended, 3, end);
    put([&](unsigned char* dst) { return b.completion_at(dst, 3, end); });
    e.seq = 9;  // a gap, then the stream state must agree
    e.t_start += 5;
    a.event(appended, e);
    put([&](unsigned char* dst) { return b.event_at(dst, e); });
    CHECK(std::string(in_place.begin(), in_place.end()) == appended);
    CHECK(a.next_seq() == b.next_seq());
  }
}

namespace {
// HotEvents with each field unset, set, negative and large, in turn.
std::vector<fmt_ns::HotEvent> hot_events() {
  std::vector<fmt_ns::HotEvent> out;
  fmt_ns::HotEvent send;
  send.call = fmt_ns::Call::Send;
  send.t_start = 1500;
  send.site = 3;
  send.peer = 1;
  send.tag = 0;
  send.buf = 0x7fff0000;
  send.count = 1;
  send.datatype = 7;
  send.pending = true;
  out.push_back(send);
  fmt_ns::HotEvent recv = send;
  recv.call = fmt_ns::Call::Recv;
  recv.pending = false;
  recv.t_start = 1400;  // earlier: a negative delta
  recv.duration = 900;
  recv.peer = fmt_ns::k_any_source;
  recv.tag = fmt_ns::k_any_tag;
  recv.status.source = 1;
  recv.status.tag = 5;
  recv.status.count = 1;
  recv.rc = -1;
  recv.thread = 3;
  recv.comm = 70000;
  out.push_back(recv);
  fmt_ns::HotEvent isend = send;
  isend.call = fmt_ns::Call::Isend;
  isend.pending = false;
  isend.request = uint64_t{1} << 40;
  isend.buf = 0x10;  // a negative buf delta
  isend.count = -4;
  out.push_back(isend);
  fmt_ns::HotEvent put;
  put.call = fmt_ns::Call::Put;
  put.t_start = 1'000'000'000'000;
  put.window = 2;
  put.peer = 1;
  put.buf = 0x7fff0000;
  put.count = 1;
  put.datatype = 7;
  put.target_disp = 12;
  put.target_count = 3;
  put.target_datatype = 9;
  put.rc = 15;
  put.status.cancelled = true;
  put.status.error = -2;
  out.push_back(put);
  fmt_ns::HotEvent flush;  // no buf, no tag, nothing but the window and peer
  flush.call = fmt_ns::Call::Win_flush;
  flush.window = 2;
  flush.peer = 1;
  out.push_back(flush);
  fmt_ns::HotEvent wait;  // a Wait's entry, then its end with the request completed
  wait.call = fmt_ns::Call::Wait;
  wait.pending = true;
  wait.requests.push_back(uint64_t{1} << 40);
  out.push_back(wait);
  wait.pending = false;
  wait.duration = 70;
  fmt_ns::CompletedRequest done;
  done.request = uint64_t{1} << 40;
  done.status.source = 3;
  done.status.tag = -7;
  done.status.count = 1 << 20;
  wait.completed.push_back(done);
  out.push_back(wait);
  fmt_ns::HotEvent wait_null;  // a Wait on MPI_REQUEST_NULL: request 0, nothing completed
  wait_null.call = fmt_ns::Call::Wait;
  wait_null.requests.push_back(0);
  out.push_back(wait_null);
  fmt_ns::HotEvent waitall;  // as many requests as a HotEvent holds, statuses ignored
  waitall.call = fmt_ns::Call::Waitall;
  for (uint32_t i = 0; i < fmt_ns::HotEvent::k_max_requests; ++i) {
    waitall.requests.push_back(1000 + i);
    fmt_ns::CompletedRequest c;
    c.index = i;
    c.request = 1000 + i;
    waitall.completed.push_back(c);
  }
  out.push_back(waitall);
  fmt_ns::HotEvent test;  // an unsuccessful Test
  test.call = fmt_ns::Call::Test;
  test.requests.push_back(9);
  test.flag = false;
  out.push_back(test);
  fmt_ns::HotEvent testall = waitall;  // a successful Testall
  testall.call = fmt_ns::Call::Testall;
  testall.flag = true;
  out.push_back(testall);
  fmt_ns::HotEvent waitany;  // a Waitany's entry, then its end with the second request completed
  waitany.call = fmt_ns::Call::Waitany;
  waitany.pending = true;
  for (uint64_t r : {3, 4, 0}) waitany.requests.push_back(r);
  out.push_back(waitany);
  waitany.pending = false;
  waitany.duration = 9;
  waitany.completed.push_back(fmt_ns::CompletedRequest{1, 4, {2, 5, 8, false, 0}});
  out.push_back(waitany);
  fmt_ns::HotEvent testany;  // an unsuccessful Testany
  testany.call = fmt_ns::Call::Testany;
  for (uint64_t r : {3, 4}) testany.requests.push_back(r);
  testany.flag = false;
  out.push_back(testany);
  fmt_ns::HotEvent waitsome;  // two of four completed, out of order
  waitsome.call = fmt_ns::Call::Waitsome;
  for (uint64_t r : {5, 6, 7, 8}) waitsome.requests.push_back(r);
  waitsome.completed.push_back(fmt_ns::CompletedRequest{3, 8, {}});
  waitsome.completed.push_back(fmt_ns::CompletedRequest{1, 6, {0, 1, 2, false, 0}});
  out.push_back(waitsome);
  fmt_ns::HotEvent testsome = waitsome;  // a successful Testsome
  testsome.call = fmt_ns::Call::Testsome;
  testsome.flag = true;
  out.push_back(testsome);
  return out;
}
}  // namespace

TEST_CASE("trace_format::RecordEncoder::hot_event_at writes event_at's bytes") {
  // The same stream of events both ways, seqs in order and with a gap: the
  // records and the stream state must agree after each one.
  const auto events = hot_events();
  fmt_ns::RecordEncoder general, hot;
  std::string info;
  general.begin_chunk(info, 5, 1000, 0);
  hot.begin_chunk(info, 5, 1000, 0);
  uint64_t seq = 5;
  for (int pass = 0; pass < 2; ++pass) {
    for (fmt_ns::HotEvent e : events) {
      e.seq = seq;
      seq += pass == 1 ? 3 : 1;  // the second pass leaves gaps
      unsigned char a[4096] = {}, b[4096] = {};
      const fmt_ns::Event full = e.to_event();
      REQUIRE(fmt_ns::RecordEncoder::k_hot_record_bound <= sizeof a);
      const std::size_t na = general.event_at(a, full);
      const std::size_t nb = hot.hot_event_at(b, e);
      CHECK(nb <= fmt_ns::RecordEncoder::k_hot_record_bound);
      REQUIRE(na == nb);
      CHECK(std::memcmp(a, b, sizeof a) == 0);  // nothing written past the record either
      CHECK(general.next_seq() == hot.next_seq());
      // And libprotobuf reads the record as the Event.
      b[0] = fmt_ns::RecordEncoder::k_event_tag;
      pb::Chunk chunk;
      REQUIRE(chunk.ParseFromArray(b, static_cast<int>(nb)));
      REQUIRE(chunk.event_size() == 1);
      CHECK(chunk.event(0).call() == static_cast<int>(e.call));
      CHECK(chunk.event(0).pending() == e.pending);
      CHECK(chunk.event(0).window() == e.window);
      CHECK(chunk.event(0).target_count() == e.target_count);
      CHECK(chunk.event(0).request() == e.request);
      CHECK(chunk.event(0).status().error() == e.status.error);
      REQUIRE(static_cast<std::size_t>(chunk.event(0).requests_size()) == e.requests.size());
      for (std::size_t i = 0; i < e.requests.size(); ++i)
        CHECK(chunk.event(0).requests(static_cast<int>(i)) == e.requests[i]);
      REQUIRE(static_cast<std::size_t>(chunk.event(0).completed_size()) == e.completed.size());
      for (std::size_t i = 0; i < e.completed.size(); ++i) {
        const auto& c = chunk.event(0).completed(static_cast<int>(i));
        CHECK(c.index() == e.completed[i].index);
        CHECK(c.request() == e.completed[i].request);
        CHECK(c.status().tag() == e.completed[i].status.tag.value_or(0));
      }
      CHECK(chunk.event(0).has_flag() == e.flag.has_value());
      if (e.flag) CHECK(chunk.event(0).flag() == *e.flag);
    }
  }
}

TEST_CASE("trace_format::HotEvent's constructor clears every field to its default") {
  // The constructor clears the fields before the lists in wide stores, not
  // field by field: over memory full of ones, every field must come out at
  // its default (to_event() is a default Event) and the lists empty.
  alignas(fmt_ns::HotEvent) unsigned char memory[sizeof(fmt_ns::HotEvent)];
  std::memset(memory, 0xff, sizeof memory);
  auto* e = new (memory) fmt_ns::HotEvent;
  CHECK(e->to_event() == fmt_ns::Event{});
  CHECK(e->requests.empty());
  CHECK(e->completed.empty());
  CHECK(!e->peer.has_value());
  CHECK(!e->tag.has_value());
  CHECK(!e->flag.has_value());
  CHECK(e->status == fmt_ns::Status{});
  e->~HotEvent();
}

TEST_CASE("trace_format::RecordEncoder::hot_event_at equals event_at on random events") {
  // hot_event_at tests some fields in groups (requests and completion,
  // window and target, outputs): random subsets of every HotEvent field,
  // with values of every varint length and sign, must still give event_at's
  // bytes, its entry flag and its stream state.
  std::mt19937_64 rng(19);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto value = [&]() -> uint64_t {  // 0 half the time, else 1 to 64 bits
    if (pick(2) == 0) return 0;
    const int bits = 1 + pick(64);
    return bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1);
  };
  auto status = [&]() {
    fmt_ns::Status s;
    if (pick(3) == 0) return s;
    if (pick(2)) s.source = static_cast<int32_t>(value());
    if (pick(2)) s.tag = static_cast<int32_t>(value());
    if (pick(2)) s.count = static_cast<int64_t>(value());
    s.cancelled = pick(4) == 0;
    if (pick(4) == 0) s.error = static_cast<int32_t>(value());
    return s;
  };
  fmt_ns::RecordEncoder general, hot;
  std::string info;
  general.begin_chunk(info, 1, 500, 0);
  hot.begin_chunk(info, 1, 500, 0);
  uint64_t seq = 1;
  int64_t t = 500;
  int entries = 0;
  int checked[10] = {};
  for (int i = 0; i < 20000; ++i) {
    fmt_ns::HotEvent e;
    e.seq = seq;
    seq += pick(8) == 0 ? 2 + value() % 1000 : 1;
    e.call = static_cast<fmt_ns::Call>(1 + pick(300));
    if (pick(4) == 0) e.thread = static_cast<uint32_t>(value());
    t += static_cast<int64_t>(value() % 100000) - 20000;
    e.t_start = t;
    e.pending = pick(2) == 0;
    // An entry half the time (no outputs), else outputs at random.
    if (!e.pending || pick(2)) {
      e.duration = value();
      e.rc = static_cast<int32_t>(pick(3) == 0 ? value() : 0);
      e.status = status();
    }
    e.site = static_cast<uint32_t>(value());
    e.comm = static_cast<uint32_t>(value());
    if (pick(2)) e.peer = static_cast<int32_t>(value());
    if (pick(2)) e.tag = static_cast<int32_t>(value());
    e.buf = pick(2) ? value() : 0x7fff0000;
    e.count = static_cast<int64_t>(value());
    e.datatype = static_cast<uint32_t>(value());
    if (pick(3) == 0) {  // a request or completion call's fields, each at random
      if (pick(2)) e.request = value();
      for (int k = pick(5); k > 0; --k) e.requests.push_back(value());
      for (int k = pick(4); k > 0; --k)
        e.completed.push_back(fmt_ns::CompletedRequest{static_cast<uint32_t>(value()), value(), status()});
      if (pick(2)) e.flag = pick(2) == 0;
    }
    if (pick(3) == 0) {  // a one-sided call's fields, each at random
      if (pick(2)) e.window = static_cast<uint32_t>(value());
      if (pick(2)) e.target_disp = value();
      if (pick(2)) e.target_count = static_cast<int64_t>(value());
      if (pick(2)) e.target_datatype = static_cast<uint32_t>(value());
    }
    unsigned char a[4096] = {}, b[4096] = {};
    bool a_entry = false, b_entry = true;
    const fmt_ns::RecordEncoder before = general;
    const std::size_t na = general.event_at(a, e.to_event(), &a_entry);
    const std::size_t nb = hot.hot_event_at(b, e, &b_entry);
    REQUIRE(nb <= fmt_ns::RecordEncoder::k_hot_record_bound);
    REQUIRE(na == nb);
    REQUIRE(std::memcmp(a, b, sizeof a) == 0);
    REQUIRE(a_entry == b_entry);
    REQUIRE(general.next_seq() == hot.next_seq());
    entries += b_entry;
    // Every set of groups the tracer uses (SMTRACE_HOT_GROUP_SETS) whose
    // `no` groups `e` leaves at their defaults (hot_groups_hold): event_at's
    // bytes too.
    int set = 0;
    auto same = [&]<fmt_ns::HotGroups G>() {
      ++set;
      if (!fmt_ns::hot_groups_hold(G, e)) return;
      fmt_ns::RecordEncoder coder = before;
      unsigned char c[4096] = {};
      bool c_entry = !a_entry;
      REQUIRE(coder.hot_event_at<G>(c, e, &c_entry) == na);
      REQUIRE(std::memcmp(a, c, sizeof a) == 0);
      REQUIRE(c_entry == a_entry);
      REQUIRE(coder.next_seq() == general.next_seq());
      ++checked[set - 1];
    };
#define SAME_BYTES(G) same.template operator()<G>();
    SMTRACE_HOT_GROUP_SETS(SAME_BYTES)
#undef SAME_BYTES
  }
  CHECK(entries > 1000);  // entries were among them
  for (int k = 0; k < 10; ++k) CHECK(checked[k] > 500);  // every set met events it fits
}

TEST_CASE("trace_format::hot_groups_hold is exactly when hot_event_at<G> writes event_at's bytes") {
  // For each set of groups the tracer uses (SMTRACE_HOT_GROUP_SETS) and
  // each field of a HotEvent's groups set alone on a point-to-point call:
  // a field of a group the set allows gives event_at's record byte for
  // byte; a field of a group it says `no` is not written (the record
  // differs), and hot_groups_hold says so (the check a build with
  // SMTRACE_CHECK_HOT_GROUPS makes in hot_event_at). A wrapper that sets
  // such a field loses it on the wire.
  enum Group { requests, rma, outputs };
  struct Field {
    const char* name;
    Group group;
    void (*set)(fmt_ns::HotEvent&);
  };
  const Field fields[] = {
      {"request", requests, [](fmt_ns::HotEvent& e) { e.request = 0x7f0001; }},
      {"requests", requests, [](fmt_ns::HotEvent& e) { e.requests.push_back(9); }},
      {"completed", requests,
       [](fmt_ns::HotEvent& e) {
         fmt_ns::CompletedRequest c{1, 9, {}};
         e.completed.push_back(c);
       }},
      {"flag", requests, [](fmt_ns::HotEvent& e) { e.flag = false; }},
      {"window", rma, [](fmt_ns::HotEvent& e) { e.window = 3; }},
      {"target_disp", rma, [](fmt_ns::HotEvent& e) { e.target_disp = 64; }},
      {"target_count", rma, [](fmt_ns::HotEvent& e) { e.target_count = 8; }},
      {"target_datatype", rma, [](fmt_ns::HotEvent& e) { e.target_datatype = 2; }},
      {"duration", outputs, [](fmt_ns::HotEvent& e) { e.duration = 1500; }},
      {"rc", outputs, [](fmt_ns::HotEvent& e) { e.rc = 1; }},
      {"status", outputs, [](fmt_ns::HotEvent& e) { e.status.error = 5; }},
  };
  fmt_ns::HotEvent base;
  base.seq = 10;
  base.call = fmt_ns::Call::Send;
  base.t_start = 1200;
  base.site = 4;
  base.comm = 1;
  base.peer = 1;
  base.tag = 7;
  base.buf = 0x7fff0000;
  base.count = 100;
  base.datatype = 3;
  int allowed = 0, dropped = 0;
  auto check = [&]<fmt_ns::HotGroups G>() {
    for (bool pending : {false, true}) {
      fmt_ns::HotEvent plain = base;
      plain.pending = pending;
      REQUIRE(fmt_ns::hot_groups_hold(G, plain));
      for (const Field& f : fields) {
        fmt_ns::HotEvent e = plain;
        f.set(e);
        const fmt_ns::HotGroups::Has has = f.group == requests ? G.requests : f.group == rma ? G.rma : G.outputs;
        fmt_ns::RecordEncoder general, hot;
        std::string info;
        general.begin_chunk(info, 10, 1000, 0);
        hot.begin_chunk(info, 10, 1000, 0);
        unsigned char a[4096] = {}, b[4096] = {};
        const std::size_t na = general.event_at(a, e.to_event());
        const std::size_t nb = hot.hot_event_at<G>(b, e);
        const bool same = na == nb && std::memcmp(a, b, sizeof a) == 0;
        INFO("field ", std::string(f.name), ", groups ", int(G.requests), "/", int(G.rma), "/", int(G.outputs), ", pending ", pending);
        CHECK(fmt_ns::hot_groups_hold(G, e) == (has != fmt_ns::HotGroups::no));
        CHECK(same == (has != fmt_ns::HotGroups::no));
        (has != fmt_ns::HotGroups::no ? allowed : dropped) += 1;
      }
    }
  };
#define CHECK_SET(G) check.template operator()<G>();
  SMTRACE_HOT_GROUP_SETS(CHECK_SET)
#undef CHECK_SET
  CHECK(allowed == 110);  // 55 field and set pairs, entry and not
  CHECK(dropped == 110);
}

TEST_CASE("trace_format::write_entry_outputs completes an entry as event_at writes the complete event") {
  // Each hot event's inputs as an entry (pending, no outputs) through both
  // encoders, finished with each set of outputs: the entry ends with its
  // pending field, and the entry up to it followed by write_entry_outputs
  // is event_at's record of the complete event (but for the length byte,
  // which the caller sets), nothing written past the outputs. Records with
  // an output, or complete ones, are not entries.
  struct Outputs {
    uint64_t duration;
    int32_t rc;
    fmt_ns::Status status;
  };
  const std::vector<Outputs> outputs = {
      {250, 0, {}}, {0, 0, {}}, {1, -3, {}}, {uint64_t{1} << 40, 15, {}}, {900, 0, {1, 5, 1, false, 0}},
      {0, 7, {std::nullopt, std::nullopt, -1, true, -2}}};
  for (fmt_ns::HotEvent inputs : hot_events()) {
    inputs.duration = 0;
    inputs.rc = 0;
    inputs.status = {};
    inputs.request = 0;
    inputs.requests.clear();
    inputs.completed.clear();
    inputs.flag.reset();
    inputs.pending = false;
    for (const Outputs& o : outputs) {
      for (int hot = 0; hot < 2; ++hot) {
        fmt_ns::RecordEncoder entry_coder, complete_coder;
        std::string info;
        entry_coder.begin_chunk(info, 5, 1000, 0);
        complete_coder.begin_chunk(info, 5, 1000, 0);
        fmt_ns::HotEvent entry = inputs;
        entry.seq = 5;
        entry.pending = true;
        fmt_ns::HotEvent done = inputs;
        done.seq = 5;
        done.duration = o.duration;
        done.rc = o.rc;
        done.status = o.status;
        unsigned char record[4096] = {}, want[4096] = {};
        bool is_entry = false;
        const std::size_t n = hot ? entry_coder.hot_event_at(record, entry, &is_entry)
                                  : entry_coder.event_at(record, entry.to_event(), &is_entry);
        REQUIRE(is_entry);
        REQUIRE(n >= 2 + sizeof fmt_ns::k_pending_field);
        CHECK(std::memcmp(record + n - 2, fmt_ns::k_pending_field, 2) == 0);
        bool complete_is_entry = true;
        const std::size_t m = hot ? complete_coder.hot_event_at(want, done, &complete_is_entry)
                                  : complete_coder.event_at(want, done.to_event(), &complete_is_entry);
        CHECK_FALSE(complete_is_entry);
        unsigned char* end = fmt_ns::write_entry_outputs(record + n - 2, o.duration, o.rc, o.status);
        INFO("call ", static_cast<int>(inputs.call), " hot ", hot, " duration ", o.duration, " rc ", o.rc);
        REQUIRE(static_cast<std::size_t>(end - record) == m);
        CHECK(end - (record + n - 2) <= static_cast<std::ptrdiff_t>(fmt_ns::k_entry_outputs_bound));
        CHECK(std::memcmp(record + 2, want + 2, m - 2) == 0);
        // Past the outputs: zeros, or, where the complete event is shorter
        // (no outputs at all), the entry's pending field, which the caller
        // clears.
        for (std::size_t i = m; i < sizeof record; ++i)
          REQUIRE(record[i] == (i < n ? fmt_ns::k_pending_field[i - (n - 2)] : 0));
      }
    }
  }
  // Not entries: pending with an output already (an rc), and pending with
  // a body of 0x80 bytes or more.
  fmt_ns::RecordEncoder coder;
  std::string info;
  coder.begin_chunk(info, 0, 0, 0);
  unsigned char record[4096] = {};
  fmt_ns::HotEvent e = hot_events()[0];
  e.pending = true;
  e.rc = 3;
  bool is_entry = true;
  coder.hot_event_at(record, e, &is_entry);
  CHECK_FALSE(is_entry);
  fmt_ns::Event big = hot_events()[0].to_event();
  big.pending = true;
  big.stack.assign(60, 100000);
  is_entry = true;
  coder.event_at(record, big, &is_entry);
  CHECK_FALSE(is_entry);
}

TEST_CASE("trace_format::completion_ends_entry: no input the encoder writes after the completed requests") {
  fmt_ns::HotEvent e;
  e.call = fmt_ns::Call::Waitall;
  e.requests.push_back(7);
  CHECK(fmt_ns::completion_ends_entry(e));
  // A window (41) or a target (45-47) comes after completed (33) and flag (35).
  for (int field = 0; field < 4; ++field) {
    fmt_ns::HotEvent x = e;
    if (field == 0) x.window = 2;
    if (field == 1) x.target_disp = 8;
    if (field == 2) x.target_count = 1;
    if (field == 3) x.target_datatype = 3;
    CHECK_FALSE(fmt_ns::completion_ends_entry(x));
  }
}

TEST_CASE("trace_format::write_entry_completion appends a completion's outputs as event_at writes them") {
  // A completion call's entry (its requests the last input, no window or
  // target), through both encoders, finished with completed requests, a
  // flag and the outputs: byte for byte event_at's complete event, nothing
  // written past it, within entry_completion_bound; libprotobuf reads it.
  fmt_ns::Status recv_status{3, -7, int64_t{1} << 20, false, 0};
  fmt_ns::Status cancelled{std::nullopt, std::nullopt, std::nullopt, true, 5};
  struct End {
    std::vector<fmt_ns::CompletedRequest> completed;
    std::optional<bool> flag;
    uint64_t duration;
    int32_t rc;
    fmt_ns::Status status;
  };
  std::vector<fmt_ns::CompletedRequest> all;
  for (uint32_t i = 0; i < fmt_ns::HotEvent::k_max_requests; ++i)
    all.push_back({i, 1000 + i, i % 2 ? recv_status : fmt_ns::Status{}});
  const std::vector<End> ends = {
      {{{0, uint64_t{1} << 40, {}}}, std::nullopt, 70, 0, {}},
      {{{0, uint64_t{1} << 40, recv_status}}, std::nullopt, 0, 0, {}},
      {{{1, 1001, cancelled}, {0, 1000, {}}}, std::nullopt, 1234567, 0, {}},
      {{}, false, 20, 0, {}},
      {{{0, 5, recv_status}}, true, 20, -3, {}},
      {{{0, 5, {}}}, std::nullopt, 9, 0, recv_status},
      {all, std::nullopt, 300, 0, {}},
  };
  struct Inputs {
    fmt_ns::Call call;
    std::vector<uint64_t> requests;
  };
  const std::vector<Inputs> inputs = {{fmt_ns::Call::Wait, {uint64_t{1} << 40}},
                                      {fmt_ns::Call::Waitall, {1000, 1001}},
                                      {fmt_ns::Call::Waitsome, {5, 0, 7}},
                                      {fmt_ns::Call::Waitany, {}}};
  for (const Inputs& in : inputs) {
    for (const End& o : ends) {
      for (int hot = 0; hot < 2; ++hot) {
        fmt_ns::RecordEncoder entry_coder, complete_coder;
        std::string info;
        entry_coder.begin_chunk(info, 5, 1000, 0);
        complete_coder.begin_chunk(info, 5, 1000, 0);
        fmt_ns::HotEvent entry;
        entry.call = in.call;
        entry.seq = 5;
        entry.t_start = 1700;
        entry.site = 4;
        entry.thread = 2;
        for (uint64_t r : in.requests) entry.requests.push_back(r);
        entry.pending = true;
        REQUIRE(fmt_ns::completion_ends_entry(entry));
        fmt_ns::HotEvent done = entry;
        done.pending = false;
        for (const auto& c : o.completed) done.completed.push_back(c);
        done.flag = o.flag;
        done.duration = o.duration;
        done.rc = o.rc;
        done.status = o.status;
        unsigned char record[8192] = {}, want[8192] = {};
        bool is_entry = false;
        const std::size_t n = hot ? entry_coder.hot_event_at(record, entry, &is_entry)
                                  : entry_coder.event_at(record, entry.to_event(), &is_entry);
        REQUIRE(is_entry);
        const std::size_t m = hot ? complete_coder.hot_event_at(want, done) : complete_coder.event_at(want, done.to_event());
        unsigned char* end = fmt_ns::write_entry_completion(record + n - 2, done.completed.data(), done.completed.size(),
                                                            done.flag, o.duration, o.rc, o.status);
        INFO("call ", static_cast<int>(in.call), " hot ", hot, " completed ", o.completed.size());
        CHECK(end - (record + n - 2) <= static_cast<std::ptrdiff_t>(fmt_ns::entry_completion_bound(o.completed.size())));
        // The body as event_at writes it; a body of 0x80 bytes or more (16
        // completed with statuses) takes a two-byte length there
        // (Recorder::complete_last moves the body one byte on for it).
        const auto body = static_cast<std::size_t>(end - record) - 2;
        const std::size_t head = body < 0x80 ? 2 : 3;
        REQUIRE(body + head == m);
        CHECK(std::memcmp(record + 2, want + head, body) == 0);
        for (std::size_t i = 2 + body; i < sizeof record; ++i)
          REQUIRE(record[i] == (i < n ? fmt_ns::k_pending_field[i - (n - 2)] : 0));
        if (head == 2) {  // a one-byte length: what the tracer keeps
          record[0] = fmt_ns::RecordEncoder::k_event_tag;
          record[1] = static_cast<unsigned char>(m - 2);
          pb::Chunk chunk;
          REQUIRE(chunk.ParseFromArray(record, static_cast<int>(m)));
          REQUIRE(chunk.event_size() == 1);
          CHECK_FALSE(chunk.event(0).pending());
          CHECK(chunk.event(0).duration() == o.duration);
          CHECK(static_cast<std::size_t>(chunk.event(0).requests_size()) == in.requests.size());
          REQUIRE(static_cast<std::size_t>(chunk.event(0).completed_size()) == o.completed.size());
          for (std::size_t i = 0; i < o.completed.size(); ++i)
            CHECK(chunk.event(0).completed(static_cast<int>(i)).request() == o.completed[i].request);
          CHECK(chunk.event(0).has_flag() == o.flag.has_value());
        }
      }
    }
  }
}

TEST_CASE("trace_format::RecordEncoder::send-like event is small") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  std::size_t before = out.size();
  fmt_ns::Event e;
  e.call = fmt_ns::Call::Send;
  e.t_start = 1500;
  e.duration = 900;
  e.site = 3;
  e.peer = 1;
  e.tag = 0;
  e.datatype = 7;
  e.count = 1;
  enc.event(out, e);
  CHECK(out.size() - before <= 24);  // 22: record head 2, fields 20
  // No allocation once `out` has capacity.
  out.reserve(4096);
  const char* data = out.data();
  for (int i = 0; i < 50; ++i) {
    e.seq = enc.next_seq();
    e.t_start += 100;
    enc.event(out, e);
  }
  CHECK(out.data() == data);
}

TEST_CASE("trace_format::RecordEncoder::definitions, termination and notes") {
  fmt_ns::RecordEncoder enc;
  std::string out;
  enc.begin_chunk(out, 0, 0, 0);
  fmt_ns::CallSite site{4, 1, 0x1234, "main", "a.c", 12, 3};
  fmt_ns::Module mod{1, "/bin/app", 0x400000, std::string("\x01\x00\xff", 3)};
  fmt_ns::CommDef comm{2, {0, 2, 4}, 0, false, true, {1, 3}, fmt_ns::Topology::dist_graph, {1, -2}, {0}};
  fmt_ns::DatatypeDef type;
  type.id = 64;
  type.combiner = fmt_ns::Call::Type_vector;
  type.size = 24;
  type.lb = -8;
  type.extent = 72;
  type.runs = {{0, 8, 3, 24}, {-8, 4, 1, 0}};
  type.signature = {{14, 3}};
  type.committed = true;
  fmt_ns::Termination end{fmt_ns::TerminationKind::signal, 9, 123456, "killed", 41, 42, 1};
  fmt_ns::TracerNote note{77, "buffer full"};
  enc.site(out, site);
  enc.module(out, mod);
  enc.comm(out, comm);
  enc.datatype(out, type);
  enc.termination(out, end);
  enc.note(out, note);

  pb::Chunk chunk;
  REQUIRE(chunk.ParseFromString(out));
  REQUIRE(chunk.site_size() == 1);
  CHECK(chunk.site(0).id() == 4);
  CHECK(chunk.site(0).module() == 1);
  CHECK(chunk.site(0).offset() == 0x1234);
  CHECK(chunk.site(0).function() == "main");
  CHECK(chunk.site(0).file() == "a.c");
  CHECK(chunk.site(0).line() == 12);
  CHECK(chunk.site(0).column() == 3);
  REQUIRE(chunk.module_size() == 1);
  CHECK(chunk.module(0).path() == "/bin/app");
  CHECK(chunk.module(0).base() == 0x400000);
  CHECK(chunk.module(0).build_id() == mod.build_id);
  REQUIRE(chunk.comm_size() == 1);
  check_repeated(chunk.comm(0).world_ranks(), comm.world_ranks);
  check_repeated(chunk.comm(0).remote_world_ranks(), comm.remote_world_ranks);
  CHECK(chunk.comm(0).inter());
  REQUIRE(chunk.datatype_size() == 1);
  const pb::DatatypeDef& t = chunk.datatype(0);
  CHECK(t.id() == 64);
  CHECK(t.combiner() == pb::TYPE_VECTOR);
  CHECK(t.size() == 24);
  CHECK(t.lb() == -8);
  CHECK(t.extent() == 72);
  REQUIRE(t.runs_size() == 2);
  CHECK(t.runs(0).count() == 3);
  CHECK(t.runs(0).stride() == 24);
  CHECK(t.runs(1).offset() == -8);
  CHECK(t.runs(1).count() == 0);  // a single block
  REQUIRE(t.signature_size() == 1);
  CHECK(t.signature(0).type() == pb::BASIC_DOUBLE);
  CHECK(t.signature(0).count() == 3);
  CHECK(t.committed());
  CHECK(chunk.end().kind() == pb::Termination::SIGNAL);
  CHECK(chunk.end().signal() == 9);
  CHECK(chunk.end().t() == 123456);
  CHECK(chunk.end().message() == "killed");
  CHECK(chunk.end().last_seq() == 41);
  CHECK(chunk.end().events() == 42);
  CHECK(chunk.end().dropped() == 1);
  REQUIRE(chunk.note_size() == 1);
  CHECK(chunk.note(0).t() == 77);
  CHECK(chunk.note(0).message() == "buffer full");
}

TEST_CASE("trace_format::encode_rank_header::parses as RankHeader") {
  fmt_ns::RankHeader h;
  h.rank = 3;
  h.world_size = 4;
  h.host = "node7";
  h.pid = 4242;
  h.mpi_library = "Open MPI v4.1.4";
  h.mpi_version = 31;
  h.clock = fmt_ns::ClockKind::monotonic;
  h.clock_origin_ns = 123456789;
  h.realtime_origin_ns = 1700000000000000000;
  h.tracer_version = "0.1.0";
  h.options = {{"SMTRACE_DIR", "/tmp/t"}, {"SMTRACE_STACK", "4"}};
  h.executable = "/bin/app";
  h.argv = {"app", "", "-n"};
  h.thread_level = 3;
  h.chunk_bytes = 65536;
  pb::RankHeader p;
  REQUIRE(p.ParseFromString(fmt_ns::encode_rank_header(h)));
  CHECK(p.format_version() == fmt_ns::k_format_version);
  CHECK(p.rank() == 3);
  CHECK(p.world_size() == 4);
  CHECK(p.host() == "node7");
  CHECK(p.pid() == 4242);
  CHECK(p.mpi_library() == h.mpi_library);
  CHECK(p.mpi_version() == 31);
  CHECK(p.clock() == pb::CLOCK_KIND_MONOTONIC);
  CHECK(p.clock_origin_ns() == h.clock_origin_ns);
  CHECK(p.realtime_origin_ns() == h.realtime_origin_ns);
  CHECK(p.tracer_version() == "0.1.0");
  REQUIRE(p.options_size() == 2);
  CHECK(p.options().at("SMTRACE_DIR") == "/tmp/t");
  CHECK(p.options().at("SMTRACE_STACK") == "4");
  CHECK(p.executable() == "/bin/app");
  REQUIRE(p.argv_size() == 3);
  CHECK(p.argv(1).empty());
  CHECK(p.argv(2) == "-n");
  CHECK(p.thread_level() == 3);
  CHECK(p.chunk_bytes() == 65536);
}

TEST_SUITE_END();
