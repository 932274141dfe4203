// event_buffers: an MPI call's buffers with their bytes, computed once per
// event while an EventScope is open (the checks' passes share them).
#include <doctest/doctest.h>

#include "analyzer/mpi_buffers.hpp"
#include "tests/unit/analyzer_trace_builder.hpp"
#include "trace_format/call_semantics.hpp"

namespace an = smtrace::analyzer;
namespace tf = smtrace::format;
using tf::Call;

namespace {

tf::Event send(uint64_t seq, uint64_t addr, int64_t count) {
  tf::Event e;
  e.seq = seq;
  e.call = Call::Isend;
  e.comm = tf::k_comm_world;
  e.peer = 1;
  e.tag = 0;
  e.buf = addr;
  e.count = count;
  e.datatype = smtrace::test::k_int;
  e.request = 0x10;
  return e;
}

an::RankData rank_data() {
  an::RankData data;
  data.rank = 0;
  data.present = true;
  data.header.world_size = 2;
  return data;
}

}  // namespace

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::event_buffers: a send's buffer and its bytes") {
  const an::RankData data = rank_data();
  const tf::Event e = send(1, 0x1000, 100);
  const an::EventBuffers& b = an::event_buffers(e, data);
  REQUIRE(b.buffers.size() == 1);
  CHECK(b.buffers[0].buffer.addr == 0x1000);
  CHECK(b.buffers[0].buffer.count == 100);
  CHECK(b.buffers[0].buffer.access == tf::BufferAccess::read);
  REQUIRE(b.buffers[0].last - b.buffers[0].first == 1);
  CHECK(b.pieces[b.buffers[0].first].lo == 0x1000);
  CHECK(b.pieces[b.buffers[0].first].size == 400);
  // No bytes for an unknown datatype; the buffer is still listed.
  tf::Event unknown = send(2, 0x2000, 4);
  unknown.datatype = tf::k_first_derived_id + 5;  // never defined
  const an::EventBuffers& u = an::event_buffers(unknown, data);
  REQUIRE(u.buffers.size() == 1);
  CHECK(u.buffers[0].first == u.buffers[0].last);
  // A call without buffers.
  tf::Event barrier;
  barrier.call = Call::Barrier;
  CHECK(an::event_buffers(barrier, data).buffers.empty());
}

TEST_CASE("analyzer::event_buffers: computed once per event in a scope, afresh outside") {
  const an::RankData data = rank_data();
  tf::Event e = send(1, 0x1000, 100);
  {
    const an::EventScope scope(e);
    const an::EventBuffers& first = an::event_buffers(e, data);
    REQUIRE(first.buffers.size() == 1);
    // Another rank's data is computed for itself, then the event's own again.
    an::RankData other = rank_data();
    other.rank = 1;
    CHECK(an::event_buffers(e, other).buffers.size() == 1);
    const an::EventBuffers& again = an::event_buffers(e, data);
    CHECK(&again == &first);
    CHECK(again.buffers[0].buffer.addr == 0x1000);
  }
  // Outside a scope every call reads the event as it is now.
  e.buf = 0x3000;
  CHECK(an::event_buffers(e, data).buffers[0].buffer.addr == 0x3000);
  e.buf = 0x4000;
  CHECK(an::event_buffers(e, data).buffers[0].buffer.addr == 0x4000);
  // A scope of another event does not serve this one.
  const tf::Event other = send(2, 0x5000, 1);
  const an::EventScope scope(other);
  CHECK(an::event_buffers(other, data).buffers[0].buffer.addr == 0x5000);
  CHECK(an::event_buffers(e, data).buffers[0].buffer.addr == 0x4000);
  CHECK(an::event_buffers(other, data).buffers[0].buffer.addr == 0x5000);
}

TEST_SUITE_END();
