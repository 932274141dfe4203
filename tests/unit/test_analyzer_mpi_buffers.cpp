// event_buffers: an MPI call's buffers with their bytes, computed once per
// event while an EventScope is open (the checks' passes share them).
#include <doctest/doctest.h>

#include <iterator>
#include <optional>
#include <vector>

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

// A recorded vector type (3 blocks of 4 bytes, 16 apart) and its id.
constexpr uint32_t k_vector = tf::k_first_derived_id + 2;
an::RankData rank_data_with_vector() {
  an::RankData data = rank_data();
  tf::DatatypeDef vec;
  vec.id = k_vector;
  vec.combiner = Call::Type_vector;
  vec.size = 12;
  vec.extent = 36;
  vec.runs = {tf::Run{0, 4, 3, 16}};
  vec.committed = true;
  data.datatypes.emplace(vec.id, vec);
  return data;
}

// A linear congruential generator: next(n) is in [0, n).
struct Lcg {
  uint64_t state;
  uint64_t operator()(uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  }
};

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
  // The next scope on the same event object (the Sequencer reuses one for
  // every event) computes its buffers afresh, both views.
  for (const uint64_t buf : {uint64_t{0x6000}, uint64_t{0x7000}}) {
    e.buf = buf;
    const an::EventScope scope(e);
    CHECK(an::event_call_buffers(e, data)[0].addr == buf);
    CHECK(an::event_buffers(e, data).buffers[0].buffer.addr == buf);
    CHECK(an::event_call_buffers(e, data)[0].addr == buf);
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

// event_buffers is derived from event_call_buffers (NullBuffers::keep) by
// leaving out what NullBuffers::skip leaves out: the same buffers as
// call_buffers(..., skip) gives, on calls with NULL buffers, MPI_IN_PLACE,
// MPI_BOTTOM with a derived type, RMA targets and collectives.
TEST_CASE("analyzer::event_buffers: the buffers of call_buffers without NULL ones") {
  const an::RankData data = rank_data();
  std::vector<tf::Event> events;
  events.push_back(send(1, 0x1000, 4));
  events.push_back(send(2, 0, 4));  // NULL
  tf::Event bottom = send(3, 0, 1);
  bottom.datatype = tf::k_first_derived_id + 1;  // MPI_BOTTOM with absolute addresses
  events.push_back(bottom);
  tf::Event sendrecv = send(4, 0x2000, 2);
  sendrecv.call = Call::Sendrecv;
  sendrecv.recv_buf = 0;
  sendrecv.recv_count = 2;
  sendrecv.recv_datatype = smtrace::test::k_int;
  sendrecv.recv_peer = 1;
  events.push_back(sendrecv);
  for (const uint64_t buf : {uint64_t{0}, uint64_t{0x3000}}) {
    tf::Event allreduce;
    allreduce.seq = 5;
    allreduce.call = Call::Allreduce;
    allreduce.comm = tf::k_comm_world;
    allreduce.buf = buf;  // 0: MPI_IN_PLACE
    allreduce.recv_buf = 0x4000;
    allreduce.count = allreduce.recv_count = 3;
    allreduce.datatype = allreduce.recv_datatype = smtrace::test::k_int;
    events.push_back(allreduce);
  }
  tf::Event put;
  put.seq = 6;
  put.call = Call::Put;
  put.window = 1;
  put.peer = 1;
  put.buf = 0;
  put.count = put.target_count = 2;
  put.datatype = put.target_datatype = smtrace::test::k_int;
  events.push_back(put);
  tf::Event barrier;
  barrier.call = Call::Barrier;
  events.push_back(barrier);
  for (const tf::Event& e : events) {
    CAPTURE(tf::call_name(e.call));
    CAPTURE(e.buf);
    for (const bool scoped : {false, true}) {
      std::optional<an::EventScope> scope;
      if (scoped) scope.emplace(e);
      const tf::CommPlace place = tf::call_traits(e.call).role == tf::Role::collective
                                      ? an::comm_place(data, e.comm)
                                      : tf::CommPlace{};
      std::vector<tf::Buffer> keep, skip;
      tf::call_buffers(e, place, keep, tf::NullBuffers::keep);
      tf::call_buffers(e, place, skip);
      const std::vector<tf::Buffer> raw = an::event_call_buffers(e, data);
      REQUIRE(raw.size() == keep.size());
      for (std::size_t i = 0; i < raw.size(); ++i) {
        CHECK(raw[i].addr == keep[i].addr);
        CHECK(raw[i].arg == keep[i].arg);
        CHECK(raw[i].count == keep[i].count);
      }
      std::vector<uint64_t> want;
      for (const tf::Buffer& b : skip)
        if (!b.maybe && b.arg != tf::BufferArg::target && b.arg != tf::BufferArg::local) want.push_back(b.addr);
      std::vector<uint64_t> got;
      for (const an::BufferBytes& b : an::event_buffers(e, data).buffers) got.push_back(b.buffer.addr);
      CHECK(got == want);
    }
  }
}

// The buffers of calls with one buffer argument (most MPI calls) against a
// reference made here from call_buffers(..., keep) and Footprint: random sends, receives,
// a broadcast and a Reduce_local (two buffers: the loop), with NULL and
// nonzero addresses, negative, zero and positive counts, predefined types
// with and without a size (MPI_UB, MPI_LB), a recorded vector type and an
// unknown one.
TEST_CASE("analyzer::event_buffers: one buffer of a predefined type, as the general rule makes it") {
  const an::RankData data = rank_data_with_vector();
  const Call calls[] = {Call::Isend, Call::Irecv, Call::Send, Call::Recv, Call::Send_init, Call::Bcast,
                        Call::Reduce_local};
  const uint32_t types[] = {smtrace::test::k_int, 0, 1, 10, 39, 40, k_vector, tf::k_first_derived_id + 9};
  const int64_t counts[] = {-1, 0, 1, 7};
  Lcg next{12345};
  for (int i = 0; i < 2000; ++i) {
    tf::Event e = send(static_cast<uint64_t>(i + 1), next(3) == 0 ? 0 : 0x1000 + 8 * next(64), counts[next(4)]);
    e.call = calls[next(std::size(calls))];
    e.datatype = types[next(std::size(types))];
    e.peer = 0;
    e.recv_buf = next(2) == 0 ? 0 : 0x9000;
    e.recv_count = e.count;
    e.recv_datatype = e.datatype;
    CAPTURE(tf::call_name(e.call));
    CAPTURE(e.buf);
    CAPTURE(e.count);
    CAPTURE(e.datatype);
    const an::EventScope scope(e);
    const tf::CommPlace place =
        tf::call_traits(e.call).role == tf::Role::collective ? an::comm_place(data, e.comm) : tf::CommPlace{};
    std::vector<tf::Buffer> keep;
    tf::call_buffers(e, place, keep, tf::NullBuffers::keep);
    std::vector<an::CallBuffer> want;
    std::vector<smtrace::analyzer::Strided> want_pieces;
    std::vector<std::size_t> want_sizes;
    const an::Footprint footprint(data);
    for (const tf::Buffer& b : keep) {
      if (b.maybe || (b.addr == 0 && b.datatype < tf::k_first_derived_id)) continue;
      REQUIRE(b.offset == 0);
      want.push_back(an::CallBuffer{b.addr, b.count, b.datatype, b.access, b.lifetime, b.arg});
      const std::size_t before = want_pieces.size();
      footprint.add(want_pieces, b.addr, b.count, b.datatype);
      want_sizes.push_back(want_pieces.size() - before);
    }
    const an::EventBuffers& got = an::event_buffers(e, data);
    REQUIRE(got.buffers.size() == want.size());
    CHECK(got.pieces == want_pieces);
    uint32_t first = 0;
    for (std::size_t j = 0; j < want.size(); ++j) {
      const an::BufferBytes& b = got.buffers[j];
      CHECK(b.buffer.addr == want[j].addr);
      CHECK(b.buffer.count == want[j].count);
      CHECK(b.buffer.datatype == want[j].datatype);
      CHECK(b.buffer.access == want[j].access);
      CHECK(b.buffer.lifetime == want[j].lifetime);
      CHECK(b.buffer.arg == want[j].arg);
      CHECK(b.first == first);
      CHECK(b.last - b.first == want_sizes[j]);
      first = b.last;
    }
  }
}

// Sends and receives (one buffer, Event.buf) take a path of their own for
// each view (compute_raw_one, compute_value_one): every call of the table whose layout is send
// or recv, with NULL and nonzero addresses, several counts and types,
// asked in either order, in a scope and outside one, against
// call_buffers(..., keep) and the general derivation (a Reduce_local's).
TEST_CASE("analyzer::event_buffers: a send's or a receive's one buffer, both views in either order") {
  const an::RankData data = rank_data_with_vector();
  std::vector<Call> calls;
  for (uint32_t c = 0; c < 1024; ++c) {
    const auto call = static_cast<Call>(c);
    const tf::BufferLayout layout = tf::call_traits(call).buffers;
    if (layout == tf::BufferLayout::send || layout == tf::BufferLayout::recv) calls.push_back(call);
  }
  REQUIRE(calls.size() >= 16);  // Send ... Irsend, Recv, Irecv, the inits, Mrecv, Imrecv
  const uint32_t types[] = {smtrace::test::k_int, 0, 40, k_vector, tf::k_first_derived_id + 9};
  const int64_t counts[] = {-1, 0, 3};
  Lcg next{777};
  for (int i = 0; i < 3000; ++i) {
    tf::Event e = send(static_cast<uint64_t>(i + 1), next(3) == 0 ? 0 : 0x1000 + 8 * next(64), counts[next(3)]);
    e.call = calls[next(calls.size())];
    e.datatype = types[next(std::size(types))];
    CAPTURE(tf::call_name(e.call));
    CAPTURE(e.buf);
    CAPTURE(e.count);
    CAPTURE(e.datatype);
    std::vector<tf::Buffer> keep;
    tf::call_buffers(e, tf::CommPlace{}, keep, tf::NullBuffers::keep);
    // The general derivation of the same buffer: a Reduce_local's first
    // (read) buffer, Event.buf.
    tf::Event general = e;
    general.call = Call::Reduce_local;
    general.recv_buf = 0;
    std::optional<an::BufferBytes> want;
    std::vector<an::Strided> want_pieces;
    {
      const an::EventBuffers& g = an::event_buffers(general, data);
      if (!g.buffers.empty() && g.buffers[0].buffer.addr == e.buf) {
        want = g.buffers[0];
        want_pieces.assign(g.pieces.begin() + g.buffers[0].first, g.pieces.begin() + g.buffers[0].last);
      }
    }
    const bool scoped = next(2) == 0, raw_first = next(2) == 0;
    std::optional<an::EventScope> scope;
    if (scoped) scope.emplace(e);
    auto check_raw = [&] { CHECK(an::event_call_buffers(e, data) == keep); };
    if (raw_first) check_raw();
    const an::EventBuffers& got = an::event_buffers(e, data);
    REQUIRE(got.buffers.size() == (want ? 1u : 0u));
    if (want) {
      const an::BufferBytes& b = got.buffers[0];
      CHECK(b.buffer.addr == want->buffer.addr);
      CHECK(b.buffer.count == want->buffer.count);
      CHECK(b.buffer.datatype == want->buffer.datatype);
      CHECK(b.buffer.access == keep[0].access);
      CHECK(b.buffer.lifetime == keep[0].lifetime);
      CHECK(b.buffer.arg == tf::BufferArg::buf);
      CHECK(b.first == 0);
      CHECK(std::vector<an::Strided>(got.pieces.begin() + b.first, got.pieces.begin() + b.last) == want_pieces);
      CHECK(got.pieces.size() == b.last);
    }
    if (!raw_first) check_raw();
    CHECK(keep.size() == 1);
  }
}

// one_buffer's promise, which invalid-argument relies on to read a send's
// or a receive's buffer from the event: every call of the table with such
// a layout gets from call_buffers(..., keep) exactly one Buffer, Event.buf
// at offset 0 with the event's count and datatype, BufferArg::buf, not
// `maybe`, whatever the addresses and counts; and the calls it leaves out
// include the ones with other layouts.
TEST_CASE("analyzer::one_buffer: the calls whose one buffer is the event's") {
  int one = 0;
  for (uint32_t c = 0; c < 1024; ++c) {
    const auto call = static_cast<Call>(c);
    const tf::BufferLayout layout = tf::call_traits(call).buffers;
    if (!an::one_buffer(layout)) continue;
    ++one;
    CAPTURE(tf::call_name(call));
    for (const uint64_t addr : {uint64_t{0}, uint64_t{0x1000}}) {
      for (const int64_t count : {int64_t{-2}, int64_t{0}, int64_t{5}}) {
        tf::Event e = send(1, addr, count);
        e.call = call;
        e.recv_buf = 0x9000;  // (a second address a general rule could take)
        e.recv_count = 7;
        std::vector<tf::Buffer> keep;
        tf::call_buffers(e, tf::CommPlace{}, keep, tf::NullBuffers::keep);
        REQUIRE(keep.size() == 1);
        CHECK(keep[0].arg == tf::BufferArg::buf);
        CHECK_FALSE(keep[0].maybe);
        CHECK(keep[0].offset == 0);
        CHECK(keep[0].addr == addr);
        CHECK(keep[0].count == count);
        CHECK(keep[0].datatype == e.datatype);
      }
    }
  }
  CHECK(one >= 16);
  CHECK_FALSE(an::one_buffer(tf::BufferLayout::sendrecv));
  CHECK_FALSE(an::one_buffer(tf::BufferLayout::bcast));
  CHECK_FALSE(an::one_buffer(tf::BufferLayout::put));
}

TEST_CASE("analyzer::Footprint::data_span: true bounds of count elements") {
  an::RankData data = rank_data_with_vector();
  const an::Footprint fp(data);
  using Span = std::optional<an::DataSpan>;
  CHECK(fp.data_span(3, smtrace::test::k_int) == Span(an::DataSpan{0, 12}));
  CHECK(fp.data_span(0, smtrace::test::k_int) == std::nullopt);
  CHECK(fp.data_span(-1, smtrace::test::k_int) == std::nullopt);
  CHECK(fp.data_span(1, 63) == std::nullopt);  // a predefined type smtrace does not know
  // The vector: blocks at 0, 16, 32 of 4 bytes, extent 36: the second element starts at 36.
  CHECK(fp.data_span(1, k_vector) == Span(an::DataSpan{0, 36}));
  CHECK(fp.data_span(2, k_vector) == Span(an::DataSpan{0, 72}));
  // MPI_DOUBLE_INT: 16 bytes apart, its data ends at 12 (the parts' sizes).
  CHECK(fp.data_span(2, 30) == Span(an::DataSpan{0, 28}));
  auto define = [&](uint32_t id, int64_t lb, int64_t extent, std::vector<tf::Run> runs, bool truncated = false) {
    tf::DatatypeDef def;
    def.id = id;
    def.lb = lb;
    def.extent = extent;
    def.runs = std::move(runs);
    def.truncated = truncated;
    data.datatypes.emplace(id, def);
  };
  // A negative lower bound; a negative stride; a negative extent (resized).
  define(80, -8, 12, {tf::Run{-8, 4, 1, 0}});
  CHECK(fp.data_span(2, 80) == Span(an::DataSpan{-8, 8}));
  define(81, -8, 12, {tf::Run{0, 4, 2, -8}});
  CHECK(fp.data_span(1, 81) == Span(an::DataSpan{-8, 4}));
  define(82, 0, -16, {tf::Run{0, 4, 1, 0}});
  CHECK(fp.data_span(3, 82) == Span(an::DataSpan{-32, 4}));
  // Not known for certain: a hull, no runs, a span beyond int64_t.
  define(83, 0, 64, {tf::Run{0, 64, 1, 0}}, true);
  CHECK(fp.data_span(1, 83) == std::nullopt);
  define(84, 0, 8, {});
  CHECK(fp.data_span(1, 84) == std::nullopt);
  define(85, 0, int64_t{1} << 62, {tf::Run{0, 4, 1, 0}});
  CHECK(fp.data_span(4, 85) == std::nullopt);
  CHECK(fp.data_span(2, 85) == Span(an::DataSpan{0, (int64_t{1} << 62) + 4}));
}
