// The content check of pending send buffers (tracer/content_hash.hpp): the
// hash, the input footprint of an operation (contiguous pieces, no holes,
// no MPI_IN_PLACE or receive buffers), the sample beyond the limit, and the
// table of pending hashes by request.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "tracer/content_hash.hpp"

using namespace smtrace::tracer;
using smtrace::format::Call;
using smtrace::format::Event;

namespace {

constexpr uint32_t k_int = 1;      // a basic type of 4 bytes in these tests
constexpr uint32_t k_vector = 64;  // a derived type: 3 ints, 16 bytes apart (extent 48)

bool fake_pieces(uint32_t type, std::vector<content::Piece>& pieces, int64_t& extent) {
  switch (type) {
    case k_int: pieces.push_back({0, 4}); extent = 4; return true;
    case k_vector:
      for (int k = 0; k < 3; ++k) pieces.push_back({16 * k, 4});
      extent = 48;
      return true;
    default: return false;
  }
}

uint64_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

std::vector<Range> inputs(const Event& e, CommFacts comm = {0, 2}) {
  std::vector<Range> out;
  content::input_ranges(e, comm, fake_pieces, out);
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::content::hash_bytes") {
  std::vector<unsigned char> a(1000, 7);
  const uint64_t h = content::hash_bytes(a.data(), a.size());
  CHECK(h == content::hash_bytes(a.data(), a.size()));
  for (std::size_t at : {0u, 5u, 31u, 32u, 500u, 996u, 999u}) {
    a[at] ^= 1;
    CHECK(content::hash_bytes(a.data(), a.size()) != h);
    a[at] ^= 1;
  }
  CHECK(content::hash_bytes(a.data(), 999) != h);  // the length counts
  CHECK(content::hash_bytes(a.data(), 0) == content::hash_bytes(a.data() + 1, 0));
}

TEST_CASE("tracer::content::input_ranges") {
  std::vector<int32_t> buf(64, 1);
  Event e;
  e.call = Call::Isend;
  e.buf = addr(buf.data());
  e.count = 10;
  e.datatype = k_int;
  e.peer = 1;
  CHECK(inputs(e) == std::vector<Range>{{e.buf, e.buf + 40}});

  // A derived type: its pieces only, the holes left out.
  e.datatype = k_vector;
  e.count = 1;
  CHECK(inputs(e) == std::vector<Range>{{e.buf, e.buf + 4}, {e.buf + 16, e.buf + 20}, {e.buf + 32, e.buf + 36}});

  // Zero bytes, a receive (written), NULL: nothing.
  e.count = 0;
  CHECK(inputs(e).empty());
  e.count = 1;
  e.call = Call::Irecv;
  CHECK(inputs(e).empty());
  e.call = Call::Isend;
  e.buf = 0;
  e.datatype = k_int;
  CHECK(inputs(e).empty());

  // Iallreduce: the send buffer, not the receive buffer; with MPI_IN_PLACE none.
  Event r;
  r.call = Call::Iallreduce;
  r.buf = addr(buf.data());
  r.recv_buf = addr(buf.data() + 32);
  r.count = 4;
  r.datatype = k_int;
  r.recv_count = 4;
  r.recv_datatype = k_int;
  CHECK(inputs(r) == std::vector<Range>{{r.buf, r.buf + 16}});
  r.in_place = true;
  r.buf = 0;
  CHECK(inputs(r).empty());

  // Ibcast: the root's buffer is read, another rank's written.
  Event b;
  b.call = Call::Ibcast;
  b.buf = addr(buf.data());
  b.count = 4;
  b.datatype = k_int;
  b.peer = 0;
  CHECK(inputs(b, {0, 2}) == std::vector<Range>{{b.buf, b.buf + 16}});
  CHECK(inputs(b, {1, 2}).empty());
  CHECK(inputs(b, {-1, 2}).empty());  // place unknown: maybe, not hashed
}

TEST_CASE("tracer::content::hash_ranges_sample") {
  std::vector<unsigned char> a(4096, 3);
  const std::vector<Range> whole{{addr(a.data()), addr(a.data()) + a.size()}};
  const uint64_t all = content::hash_ranges(whole, 1 << 20);
  const uint64_t sampled = content::hash_ranges(whole, 1024);
  a[100] = 9;  // in the first 512 bytes: both see it
  CHECK(content::hash_ranges(whole, 1 << 20) != all);
  CHECK(content::hash_ranges(whole, 1024) != sampled);
  a[100] = 3;
  a[2000] = 9;  // in the middle: only the full hash sees it
  CHECK(content::hash_ranges(whole, 1 << 20) != all);
  CHECK(content::hash_ranges(whole, 1024) == sampled);
  a[2000] = 3;
  a[4000] = 9;  // in the last 512 bytes: both
  CHECK(content::hash_ranges(whole, 1024) != sampled);
  a[4000] = 3;
  // Pieces: the sample spans them in address order.
  const std::vector<Range> pieces{{addr(a.data()), addr(a.data()) + 100}, {addr(a.data()) + 3000, addr(a.data()) + 4096}};
  const uint64_t p = content::hash_ranges(pieces, 256);
  a[50] = 1;
  CHECK(content::hash_ranges(pieces, 256) != p);
  a[50] = 3;
  a[2000] = 1;  // a hole
  CHECK(content::hash_ranges(pieces, 256) == p);
  a[4095] = 1;
  CHECK(content::hash_ranges(pieces, 256) != p);
}

TEST_CASE("tracer::content::table") {
  std::vector<int32_t> buf(16, 1);
  const std::vector<Range> r{{addr(buf.data()), addr(buf.data() + 16)}};
  content::Table t;
  Range where;
  t.posted(5, r);
  t.posted(6, r);  // the same buffer, pending twice
  CHECK(t.pending() == 2);
  CHECK_FALSE(t.changed(5, where));  // unchanged: still pending
  CHECK(t.any());
  buf[3] = 2;
  CHECK(t.changed(6, where));
  CHECK(where == r.front());
  CHECK_FALSE(t.changed(6, where));  // once per post
  t.completed(5);
  CHECK_FALSE(t.any());

  // A persistent request: hashed at each start, forgotten at the free.
  t.define(9, r);
  CHECK_FALSE(t.any());
  t.started(9);
  buf[3] = 3;
  CHECK(t.changed(9, where));
  t.started(9);  // written between the operations: a new hash
  CHECK_FALSE(t.changed(9, where));
  t.completed(9);
  t.freed(9);
  t.started(9);
  CHECK_FALSE(t.any());
  CHECK_FALSE(t.changed(42, where));  // never posted
}

TEST_SUITE_END();
