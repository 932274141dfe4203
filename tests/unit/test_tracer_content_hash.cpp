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

TEST_CASE("tracer::content::hash_ranges_short_pieces") {
  // A derived type's pieces shorter than the hash's 32-byte step: a change
  // in any of them, the first included, changes the hash (each piece's
  // hash continues the one before it, sampled or not).
  std::vector<unsigned char> a(1024, 7);
  const uint64_t base = addr(a.data());
  std::vector<Range> pieces;
  for (uint64_t k = 0; k < 16; ++k) pieces.push_back({base + 64 * k, base + 64 * k + 12});
  for (const uint64_t limit : {uint64_t{1} << 20, uint64_t{64}}) {
    const uint64_t h = content::hash_ranges(pieces, limit);
    for (const std::size_t at : {std::size_t{0}, std::size_t{11}, std::size_t{64 * 15 + 11}}) {
      a[at] = 8;
      CHECK(content::hash_ranges(pieces, limit) != h);
      a[at] = 7;
    }
    CHECK(content::hash_ranges(pieces, limit) == h);
  }
  // The bytes' order counts: two pieces' contents swapped.
  std::vector<unsigned char> b(64, 0);
  b[0] = 1;
  b[32] = 2;
  const std::vector<Range> two{{addr(b.data()), addr(b.data()) + 8}, {addr(b.data()) + 32, addr(b.data()) + 40}};
  const uint64_t h = content::hash_ranges(two, 1 << 20);
  std::swap(b[0], b[32]);
  CHECK(content::hash_ranges(two, 1 << 20) != h);
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

TEST_CASE("tracer::content::rma_origin") {
  // RMA operations without a request: pending per window and target until
  // a synchronization call completes them at the origin.
  std::vector<int32_t> a(16, 1), b(16, 2);
  const std::vector<Range> ra{{addr(a.data()), addr(a.data() + 16)}};
  const std::vector<Range> rb{{addr(b.data()), addr(b.data() + 16)}};
  content::Table t;
  std::vector<Range> changed;
  t.rma_issued(3, 1, ra);  // window 3, target 1
  t.rma_issued(3, 2, rb);  // window 3, target 2
  t.rma_issued(4, 1, rb);  // another window
  CHECK(t.pending() == 3);
  a[0] = 9;
  b[15] = 9;
  t.rma_completed(3, 2, false, changed);  // flush(2): only the target-2 one
  CHECK(changed == rb);
  CHECK(t.pending() == 2);
  changed.clear();
  t.rma_completed(3, 0, true, changed);  // fence: all of window 3
  CHECK(changed == ra);
  CHECK(t.pending() == 1);
  changed.clear();
  t.rma_completed(4, 1, false, changed);  // b changed since window 4's issue too
  CHECK(changed == rb);
  CHECK_FALSE(t.any());
  // Unchanged: nothing reported, still forgotten.
  changed.clear();
  t.rma_issued(3, 1, ra);
  t.rma_completed(3, 1, false, changed);
  CHECK(changed.empty());
  CHECK_FALSE(t.any());
  t.rma_issued(3, 1, {});  // nothing read: nothing kept
  CHECK_FALSE(t.any());
}

TEST_CASE("tracer::content::rma_with_request") {
  // MPI_Rput and the others with a request: pending until the request
  // completes (MPI-4.0 12.3.5) or a synchronization call on the window and
  // target completes the operation (12.5), whichever comes first.
  std::vector<int32_t> a(16, 1), b(16, 2);
  const std::vector<Range> ra{{addr(a.data()), addr(a.data() + 16)}};
  const std::vector<Range> rb{{addr(b.data()), addr(b.data() + 16)}};
  content::Table t;
  Range where;
  std::vector<Range> changed;
  t.rma_posted(7, 3, 1, ra.data(), ra.size());  // request 7, window 3, target 1
  t.rma_posted(8, 3, 2, rb.data(), rb.size());  // request 8, window 3, target 2
  CHECK(t.pending() == 2);
  CHECK_FALSE(t.changed(7, where));
  a[2] = 5;
  CHECK(t.changed(7, where));  // a store before MPI_Wait
  CHECK(where == ra.front());
  CHECK(t.pending() == 1);
  t.rma_completed(3, 1, false, changed);  // flush(1): not request 8's target
  CHECK(changed.empty());
  CHECK(t.pending() == 1);
  b[0] = 7;
  t.rma_completed(3, 0, true, changed);  // unlock_all: completes request 8's Rput
  CHECK(changed == rb);
  CHECK_FALSE(t.any());
  CHECK_FALSE(t.changed(8, where));  // its MPI_Wait after the unlock: forgotten
  // Completed by its request: a store after the wait and a later flush are fine.
  t.rma_posted(9, 3, 1, ra.data(), ra.size());
  t.completed(9);
  a[3] = 6;
  changed.clear();
  t.rma_completed(3, 1, false, changed);
  CHECK(changed.empty());
  CHECK_FALSE(t.any());
  // A request id reused by a point-to-point post is no longer an RMA one.
  t.rma_posted(10, 3, 1, ra.data(), ra.size());
  t.posted(10, rb);
  t.rma_completed(3, 1, false, changed);
  CHECK(t.pending() == 1);
  t.completed(10);
  CHECK_FALSE(t.any());
}

TEST_CASE("tracer::content::rma_origin_ranges") {
  // A Put's origin buffer is hashed, a Get's (written) and a Put to
  // MPI_PROC_NULL are not.
  std::vector<int32_t> buf(8, 0);
  Event e;
  e.call = Call::Put;
  e.buf = addr(buf.data());
  e.count = 8;
  e.datatype = k_int;
  e.peer = 1;
  e.window = 1;
  e.target_count = 8;
  e.target_datatype = k_int;
  CHECK(inputs(e) == std::vector<Range>{{e.buf, e.buf + 32}});
  e.call = Call::Get;
  CHECK(inputs(e).empty());
  e.call = Call::Put;
  e.peer = smtrace::format::k_proc_null;
  CHECK(inputs(e).empty());
}

TEST_SUITE_END();
