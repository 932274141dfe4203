// What each call means (trace_format/call_semantics.hpp): the columns of
// calls.def checked against each other, the buffers and synchronization of
// single events, and the cases where copies of these rules used to
// disagree, each decided from the MPI-3.1 standard.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "trace_format/call_semantics.hpp"

namespace f = smtrace::format;
using f::Buffer;
using f::BufferAccess;
using f::BufferArg;
using f::Call;
using f::CommPlace;
using f::Event;
using f::Lifetime;

namespace {

constexpr uint32_t k_int = 7;      // BasicType INT
constexpr uint32_t k_derived = 64; // a rank-file datatype id

const Call k_all[] = {
#define SMTRACE_CALL(ID, MpiName, ...) Call::MpiName,
#include "trace_format/calls.def"
#undef SMTRACE_CALL
};

std::vector<Buffer> buffers(const Event& e, CommPlace place = {0, 4, false}) {
  std::vector<Buffer> out;
  f::call_buffers(e, place, out);
  return out;
}

Buffer buffer(BufferArg arg, BufferAccess access, Lifetime life, uint64_t addr, int64_t count, uint32_t type,
              int64_t offset = 0, int32_t peer = -1, bool maybe = false) {
  Buffer b;
  b.arg = arg;
  b.access = access;
  b.lifetime = life;
  b.addr = addr;
  b.count = count;
  b.datatype = type;
  b.offset = offset;
  b.peer = peer;
  b.maybe = maybe;
  return b;
}

Event collective(Call call, bool in_place = false) {
  Event e;
  e.call = call;
  e.buf = in_place ? 0 : 0x1000;
  e.count = in_place ? 0 : 2;
  e.datatype = in_place ? 0 : k_int;
  e.recv_buf = 0x2000;
  e.recv_count = 2;
  e.recv_datatype = k_int;
  e.in_place = in_place;
  return e;
}

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::call_traits::the columns agree with each other") {
  for (Call c : k_all) {
    CAPTURE(f::call_name(c));
    const f::CallTraits& t = f::call_traits(c);
    CHECK(t.family == f::call_family(c));
    CHECK(t.blocks == f::call_blocks(c));
    CHECK(t.role != f::Role::none);
    // Collectives: in the coll family (with MPI_Reduce_local, a local
    // reduction), with a flow; rooted iff the flow has a root.
    CHECK((t.role == f::Role::collective) <= (t.family == f::Family::coll));
    CHECK((t.family == f::Family::coll) <= (t.role == f::Role::collective || t.role == f::Role::local));
    CHECK((t.role == f::Role::collective) == (t.flow != f::Flow::none));
    CHECK(t.rooted == (t.flow == f::Flow::root_to_all || t.flow == f::Flow::all_to_root));
    CHECK((t.op == f::Combine::reduce) <= (t.role == f::Role::collective || t.role == f::Role::local));
    CHECK(f::is_atomic(t.op) <= (t.role == f::Role::rma_comm));
    // A mode is a send's.
    CHECK((t.mode != f::SendMode::none) == (t.role == f::Role::send || t.role == f::Role::sendrecv));
    // Request effects beyond create/persistent belong to the request calls.
    const bool request_call = t.request != f::RequestEffect::none && t.request != f::RequestEffect::create &&
                              t.request != f::RequestEffect::persistent;
    CHECK(request_call <= (t.role == f::Role::request));
    // Request calls act on requests; MPI_Grequest_start creates one,
    // MPI_Grequest_complete marks one complete (a wait still ends it).
    CHECK((t.role == f::Role::request) <=
          (request_call || c == Call::Grequest_start || c == Call::Grequest_complete));
    CHECK((t.request == f::RequestEffect::persistent) <= (t.role == f::Role::send || t.role == f::Role::recv));
    // A call that returns a request does not block; a poll never blocks.
    CHECK((t.request == f::RequestEffect::create) <= !t.blocks);
    CHECK(t.poll <= !t.blocks);
    // Epoch effects are RMA synchronization (and MPI_Win_free).
    CHECK((t.epoch != f::EpochEffect::none) ==
          (t.role == f::Role::rma_sync || t.resource == f::Resource::win_free));
    // Resources are handles' (and a matched probe's message, which its receive frees).
    const bool message = t.resource == f::Resource::message_new || t.resource == f::Resource::message_free;
    CHECK((t.resource != f::Resource::none && !message) <= (t.role == f::Role::handle));
    CHECK((t.resource == f::Resource::message_new) == (t.role == f::Role::probe && c != Call::Probe && c != Call::Iprobe));
    // Buffers: every communication call has a layout; local accesses theirs.
    const bool communicates = t.role == f::Role::send || t.role == f::Role::recv || t.role == f::Role::sendrecv ||
                              t.role == f::Role::rma_comm || t.role == f::Role::local_access;
    CHECK(communicates <= (t.buffers != f::BufferLayout::none));
    CHECK((t.buffers != f::BufferLayout::none) <=
          (communicates || t.role == f::Role::collective || t.role == f::Role::local));
    CHECK((t.role == f::Role::local) <= (t.buffers != f::BufferLayout::none));
    // Twins come in pairs: one with a request, one without.
    if (t.twin != Call::unspecified) {
      const f::CallTraits& other = f::call_traits(t.twin);
      CHECK(other.twin == c);
      // Matched probes: MPI_Improbe polls where MPI_Mprobe blocks; no request.
      if (t.role == f::Role::probe)
        CHECK(t.blocks != other.blocks);
      else
        CHECK((t.request == f::RequestEffect::create) != (other.request == f::RequestEffect::create));
      CHECK(t.role == other.role);
      CHECK(t.buffers == other.buffers);
      CHECK(t.flow == other.flow);
      CHECK(t.op == other.op);
    }
  }
  CHECK(f::call_traits(static_cast<Call>(9999)).role == f::Role::none);
  CHECK(f::call_traits(Call::unspecified).role == f::Role::none);
}

// The analyzer's passes read a call's family, and whether it is known at
// all, from its row (call_traits is inline; call_family and call_known are
// not): the three must agree on every number, known or not.
TEST_CASE("trace_format::call_traits::family and known agree with event.hpp") {
  int known = 0;
  for (uint32_t n = 0; n <= UINT16_MAX; ++n) {  // every value of Call
    const Call c = static_cast<Call>(n);
    const f::CallTraits& t = f::call_traits(c);
    CHECK(t.family == f::call_family(c));
    CHECK((t.family != f::Family::none) == f::call_known(c));
    CHECK(t.blocks == f::call_blocks(c));
    known += f::call_known(c) ? 1 : 0;
  }
  CHECK(known > 100);
  CHECK(f::detail::k_call_table.size() == f::detail::k_call_slots);
}

// resource-leak and invalid-argument skip handle_use for calls whose row
// names no handle resource: it must name none for them, whatever the
// event's fields.
TEST_CASE("trace_format::handle_use::none for every call whose row names no resource") {
  int calls = 0;
  for (uint32_t n = 0; n <= UINT16_MAX; ++n) {
    const Call c = static_cast<Call>(n);
    if (f::call_traits(c).resource != f::Resource::none) continue;
    f::Event e;
    e.call = c;
    e.comm = 5;
    e.new_comm = 6;
    e.group = 7;
    e.datatype = 40;
    e.new_datatype = 41;
    e.window = 3;
    e.message = 9;
    e.flag = true;
    const f::HandleUse h = f::handle_use(e);
    CHECK(h.kind == f::HandleKind::none);
    CHECK(h.effect == f::HandleEffect::none);
    calls += f::call_known(c) ? 1 : 0;
  }
  CHECK(calls > 100);
}

TEST_CASE("trace_format::call_traits::rows") {
  CHECK(f::call_traits(Call::Issend).mode == f::SendMode::synchronous);
  CHECK(f::call_traits(Call::Bsend_init).request == f::RequestEffect::persistent);
  CHECK(f::call_traits(Call::Waitsome).request == f::RequestEffect::complete_some);
  CHECK(f::call_traits(Call::Testany).poll);
  CHECK(f::call_traits(Call::Iprobe).poll);
  CHECK(f::call_traits(Call::cudaEventQuery).poll);
  CHECK_FALSE(f::call_traits(Call::Wait).poll);
  CHECK(f::call_traits(Call::Gatherv).rooted);
  CHECK(f::call_traits(Call::Iexscan).flow == f::Flow::exscan);
  CHECK(f::call_traits(Call::Compare_and_swap).op == f::Combine::swap);
  CHECK(f::call_traits(Call::Comm_idup).request == f::RequestEffect::create);
  CHECK(f::base_form(Call::Ibcast) == Call::Bcast);
  CHECK(f::base_form(Call::Irsend) == Call::Rsend);
  CHECK(f::base_form(Call::Rget_accumulate) == Call::Get_accumulate);
  CHECK(f::base_form(Call::Bcast) == Call::Bcast);
  CHECK(f::base_form(Call::Send_init) == Call::Send_init);
  CHECK(f::base_form(Call::Test) == Call::Test);
}

TEST_CASE("trace_format::call_buffers::point_to_point") {
  Event e;
  e.call = Call::Isend;
  e.buf = 0x1000;
  e.count = 3;
  e.datatype = k_int;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::request, 0x1000, 3, k_int)});
  e.call = Call::Recv;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::write, Lifetime::call, 0x1000, 3, k_int)});
  e.call = Call::Recv_init;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::write, Lifetime::persistent, 0x1000, 3, k_int)});
  e.call = Call::Sendrecv_replace;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::update, Lifetime::call, 0x1000, 3, k_int)});
  e.call = Call::Sendrecv;
  e.recv_buf = 0x2000;
  e.recv_count = 1;
  e.recv_datatype = k_int;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 3, k_int),
                                  buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 1, k_int)});
  SUBCASE("address 0: NULL with a predefined datatype, MPI_BOTTOM with a derived one") {
    e.call = Call::Send;
    e.buf = 0;
    CHECK(buffers(e).empty());
    e.datatype = k_derived;
    CHECK(buffers(e).size() == 1);
  }
  SUBCASE("calls without buffers") {
    for (Call c : {Call::Probe, Call::Wait, Call::Barrier, Call::Win_fence, Call::Comm_dup, Call::cudaMemcpy}) {
      e.call = c;
      CHECK(buffers(e).empty());
    }
  }
}

TEST_CASE("trace_format::call_buffers::point-to-point with MPI_PROC_NULL touches no buffer") {
  // MPI-4.0 3.10: a communication with MPI_PROC_NULL has no effect; a
  // receive from it does not modify the receive buffer. Each half of a
  // Sendrecv is judged by its own peer.
  Event e;
  e.buf = 0x1000;
  e.count = 3;
  e.datatype = k_int;
  e.peer = f::k_proc_null;
  for (Call c : {Call::Send, Call::Isend, Call::Ssend, Call::Bsend, Call::Recv, Call::Irecv, Call::Send_init,
                 Call::Recv_init}) {
    e.call = c;
    CAPTURE(f::call_name(c));
    CHECK(buffers(e).empty());
  }
  e.call = Call::Sendrecv;
  e.recv_buf = 0x2000;
  e.recv_count = 1;
  e.recv_datatype = k_int;
  e.recv_peer = 1;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 1, k_int)});
  e.peer = 1;
  e.recv_peer = f::k_proc_null;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 3, k_int)});
  e.call = Call::Sendrecv_replace;  // sends only: read, not updated
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 3, k_int)});
  e.peer = f::k_proc_null;
  e.recv_peer = 1;  // receives only: written
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::write, Lifetime::call, 0x1000, 3, k_int)});
  e.recv_peer = f::k_proc_null;
  CHECK(buffers(e).empty());
}

TEST_CASE("trace_format::origin_read::agrees with call_buffers for every call") {
  // The tracer's hot paths ask origin_read instead of call_buffers: for each
  // call the two must name the same origin buffer.
  for (Call c : k_all) {
    const f::CallTraits& t = f::call_traits(c);
    CAPTURE(f::call_name(c));
    Event e;
    e.call = c;
    e.buf = 0x1000;
    e.count = 3;
    e.datatype = k_int;
    e.peer = 1;
    e.window = 1;
    e.target_count = 3;
    e.target_datatype = k_int;
    const f::OriginRead to_one = f::origin_read(t, 1);
    const f::OriginRead to_null = f::origin_read(t, f::k_proc_null);
    if (to_one == f::OriginRead::other) {
      CHECK(to_null == f::OriginRead::other);
      CHECK(f::origin_read(t, std::nullopt) == f::OriginRead::other);
      continue;
    }
    CHECK(to_one == f::OriginRead::block);
    CHECK(to_null == f::OriginRead::none);
    const auto out = buffers(e);
    const auto origin = std::find_if(out.begin(), out.end(), [](const Buffer& b) { return b.arg == BufferArg::buf; });
    REQUIRE(origin != out.end());
    CHECK(origin->access == BufferAccess::read);
    CHECK(origin->addr == 0x1000);
    CHECK(origin->count == 3);
    CHECK(origin->datatype == k_int);
    e.peer = f::k_proc_null;
    const auto none = buffers(e);
    CHECK(std::none_of(none.begin(), none.end(), [](const Buffer& b) { return b.arg == BufferArg::buf; }));
  }
}

TEST_CASE("trace_format::call_buffers::rooted collectives") {
  Event e = collective(Call::Bcast);
  e.peer = 1;
  SUBCASE("Bcast: the root reads, the others write") {
    CHECK(buffers(e, {1, 4, false}) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 2, k_int)});
    CHECK(buffers(e, {0, 4, false}) == std::vector{buffer(BufferArg::buf, BufferAccess::write, Lifetime::call, 0x1000, 2, k_int)});
    // This rank's place unknown: a buffer only a conservative consumer takes.
    CHECK(buffers(e, {std::nullopt, 4, false}) ==
          std::vector{buffer(BufferArg::buf, BufferAccess::write, Lifetime::call, 0x1000, 2, k_int, 0, -1, true)});
  }
  SUBCASE("intercommunicator roots: MPI_ROOT, MPI_PROC_NULL, a rank of the remote group") {
    const CommPlace inter{1, 3, true};
    e.peer = f::k_root;
    CHECK(buffers(e, inter).at(0).access == BufferAccess::read);
    e.peer = f::k_proc_null;
    CHECK(buffers(e, inter).empty());
    e.peer = 1;  // the remote group's rank 1, not this rank 1
    CHECK(buffers(e, inter).at(0).access == BufferAccess::write);

    e = collective(Call::Gather);
    e.peer = f::k_root;  // the root's group's root receives n blocks and sends nothing
    CHECK(buffers(e, inter) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 6, k_int)});
    e.peer = 0;
    CHECK(buffers(e, inter) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 2, k_int)});
  }
  SUBCASE("Reduce in place at the root: the receive buffer is read and written") {
    e = collective(Call::Ireduce, true);
    e.peer = 0;
    CHECK(buffers(e, {0, 4, false}) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::update, Lifetime::request, 0x2000, 2, k_int)});
  }
  SUBCASE("Gather: the root receives n blocks, every rank sends") {
    e = collective(Call::Gather);
    e.peer = 0;
    CHECK(buffers(e, {0, 4, false}) ==
          std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 2, k_int),
                      buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 8, k_int)});
    CHECK(buffers(e, {2, 4, false}).size() == 1);
    // Size unknown: the receive buffer counted with one member, as a maybe.
    CHECK(buffers(e, {0, 0, false}).at(1).maybe);
  }
  SUBCASE("Gatherv/Scatterv: counts and displacements are significant at the root only") {
    // MPI-3.1 sections 5.5 and 5.6: recvcounts/displs (Gatherv) and
    // sendcounts/displs (Scatterv) are significant only at the root. The
    // analyzer's copy used them at every rank, the tracer's at the root.
    e = collective(Call::Scatterv);
    e.peer = 0;
    e.counts = {1, 2};
    e.displs = {0, 4};
    CHECK(buffers(e, {0, 2, false}) ==
          std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 1, k_int, 0, 0),
                      buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 2, k_int, 4, 1),
                      buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 2, k_int)});
    CHECK(buffers(e, {1, 2, false}) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 2, k_int)});
    e.call = Call::Igatherv;
    e.recv_counts = {1, 1};
    e.recv_displs = {1, 0};
    CHECK(buffers(e, {1, 2, false}) ==
          std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::request, 0x1000, 2, k_int)});
  }
}

TEST_CASE("trace_format::call_buffers::in-place Reduce_scatter reads the whole input") {
  // MPI-3.1 section 5.10.1: with MPI_IN_PLACE the input is taken from the
  // receive buffer (sum(recvcounts) elements) and this rank's result lands in
  // its first recvcounts[rank] elements. tracer/watch.cpp watched the whole
  // input, analyzer/mpi_buffers.cpp only the result block (and never read it).
  Event e = collective(Call::Ireduce_scatter, true);
  e.recv_counts = {1, 2, 3};
  CHECK(buffers(e, {1, 3, false}) ==
        std::vector{buffer(BufferArg::recv_buf, BufferAccess::update, Lifetime::request, 0x2000, 2, k_int),
                    buffer(BufferArg::recv_buf, BufferAccess::read, Lifetime::request, 0x2000, 4, k_int, 2)});
  SUBCASE("not in place: the send buffer holds the input") {
    e = collective(Call::Reduce_scatter);
    e.recv_counts = {1, 2, 3};
    CHECK(buffers(e, {1, 3, false}) ==
          std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 6, k_int),
                      buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 2, k_int)});
  }
  SUBCASE("this rank unknown: the whole buffer, as a maybe") {
    CHECK(buffers(e, {std::nullopt, 3, false}) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::update, Lifetime::request, 0x2000, 6, k_int, 0, -1, true)});
  }
  SUBCASE("Reduce_scatter_block in place: n blocks read, the first written") {
    e = collective(Call::Reduce_scatter_block, true);
    CHECK(buffers(e, {1, 3, false}) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::update, Lifetime::call, 0x2000, 2, k_int),
                      buffer(BufferArg::recv_buf, BufferAccess::read, Lifetime::call, 0x2000, 4, k_int, 2)});
  }
}

TEST_CASE("trace_format::in_place_use::where MPI_IN_PLACE may be given (MPI-3.1 section 5.2.1)") {
  using U = f::InPlaceUse;
  CHECK(f::in_place_use(Call::Reduce) == U::root_only);
  CHECK(f::in_place_use(Call::Igatherv) == U::root_only);
  CHECK(f::in_place_use(Call::Scatter) == U::root_only);
  CHECK(f::in_place_use(Call::Allreduce) == U::every_member);
  CHECK(f::in_place_use(Call::Iallgather) == U::every_member);
  CHECK(f::in_place_use(Call::Alltoallw) == U::every_member);
  CHECK(f::in_place_use(Call::Reduce_scatter_block) == U::every_member);
  CHECK(f::in_place_use(Call::Scan) == U::any_member);
  CHECK(f::in_place_use(Call::Iexscan) == U::any_member);
  CHECK(f::in_place_use(Call::Bcast) == U::never);
  CHECK(f::in_place_use(Call::Neighbor_allgather) == U::never);
  CHECK(f::in_place_use(Call::Send) == U::never);
  // Every call with an in-place option is a collective.
  for (Call c : k_all) {
    if (f::in_place_use(c) != U::never) CHECK(f::call_traits(c).role == f::Role::collective);
  }
}

TEST_CASE("trace_format::call_buffers::all-to-all collectives") {
  SUBCASE("Allreduce and Allgather in place update the receive buffer") {
    CHECK(buffers(collective(Call::Allreduce, true)) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::update, Lifetime::call, 0x2000, 2, k_int)});
    CHECK(buffers(collective(Call::Iallgather, true)) ==
          std::vector{buffer(BufferArg::recv_buf, BufferAccess::update, Lifetime::request, 0x2000, 8, k_int)});
  }
  SUBCASE("Alltoall: n blocks each way") {
    CHECK(buffers(collective(Call::Alltoall)) ==
          std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::call, 0x1000, 8, k_int),
                      buffer(BufferArg::recv_buf, BufferAccess::write, Lifetime::call, 0x2000, 8, k_int)});
  }
  SUBCASE("Alltoallw: byte displacements, a datatype per block") {
    Event e = collective(Call::Alltoallw);
    e.counts = {1, 1};
    e.displs = {0, 16};
    e.datatypes = {k_int, k_derived};
    e.recv_counts = {2};
    e.recv_displs = {8};
    e.recv_datatypes = {k_derived};
    const auto out = buffers(e, {0, 2, false});
    REQUIRE(out.size() == 3);
    CHECK(out[1].datatype == k_derived);
    CHECK(out[1].offset == 16);
    CHECK(out[1].unit == f::OffsetUnit::bytes);
    CHECK(out[1].peer == 1);
    CHECK(out[2].arg == BufferArg::recv_buf);
    CHECK(out[2].offset == 8);
  }
}

TEST_CASE("trace_format::call_buffers::one-sided") {
  Event e;
  e.call = Call::Put;
  e.peer = 2;
  e.buf = 0x1000;
  e.count = 4;
  e.datatype = k_int;
  e.target_disp = 3;
  e.target_count = 4;
  e.target_datatype = k_int;
  Buffer target = buffer(BufferArg::target, BufferAccess::write, Lifetime::rma_remote, 0, 4, k_int, 3, 2);
  target.unit = f::OffsetUnit::disp_units;
  CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::rma_local, 0x1000, 4, k_int),
                                  target});
  SUBCASE("request-based: the origin buffer until the request completes") {
    e.call = Call::Rget;
    target.access = BufferAccess::read;
    // The read of the target is done when the data is at the origin: after
    // MPI_Wait on the request (MPI-3.1 example 11.21).
    target.lifetime = Lifetime::request;
    CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::write, Lifetime::request, 0x1000, 4, k_int),
                                    target});
  }
  SUBCASE("MPI_PROC_NULL as target: nothing moves") {
    // MPI-3.1 section 11.3: an RMA call to MPI_PROC_NULL has the effect of
    // a point-to-point call to it (no data moves). The tracer's watch set
    // skipped it, the analyzer's checks read its origin buffer.
    e.peer = f::k_proc_null;
    CHECK(buffers(e).empty());
    e.call = Call::Compare_and_swap;
    CHECK(buffers(e).empty());
  }
  SUBCASE("Get_accumulate with MPI_NO_OP ignores its origin buffer") {
    // MPI-3.1 section 11.3.4: with MPI_NO_OP the origin buffer is ignored
    // and the target only read. rma-race skipped the origin buffer,
    // local-concurrency and the tracer's watch set read it.
    e.call = Call::Get_accumulate;
    e.op = f::k_op_no_op;
    e.result_buf = 0x3000;
    e.result_count = 4;
    e.result_datatype = k_int;
    target.access = BufferAccess::read;
    target.lifetime = Lifetime::rma_local;  // read once the result is at the origin
    CHECK(buffers(e) == std::vector{buffer(BufferArg::result_buf, BufferAccess::write, Lifetime::rma_local, 0x3000, 4, k_int),
                                    target});
    e.op = 3;  // MPI_SUM
    target.access = BufferAccess::update;
    target.lifetime = Lifetime::rma_remote;
    CHECK(buffers(e) == std::vector{buffer(BufferArg::buf, BufferAccess::read, Lifetime::rma_local, 0x1000, 4, k_int),
                                    buffer(BufferArg::result_buf, BufferAccess::write, Lifetime::rma_local, 0x3000, 4, k_int),
                                    target});
  }
  SUBCASE("Compare_and_swap: one element of each, the target updated") {
    e.call = Call::Compare_and_swap;
    e.compare_buf = 0x4000;
    e.result_buf = 0x3000;
    const auto out = buffers(e);
    REQUIRE(out.size() == 4);
    CHECK(out[0] == buffer(BufferArg::buf, BufferAccess::read, Lifetime::rma_local, 0x1000, 1, k_int));
    CHECK(out[1] == buffer(BufferArg::compare_buf, BufferAccess::read, Lifetime::rma_local, 0x4000, 1, k_int));
    CHECK(out[2] == buffer(BufferArg::result_buf, BufferAccess::write, Lifetime::rma_local, 0x3000, 1, k_int));
    CHECK(out[3].access == BufferAccess::update);
    CHECK(out[3].count == 1);
  }
}

TEST_CASE("trace_format::call_buffers::local accesses") {
  Event e;
  e.call = Call::Store;
  e.buf = 0x1000;
  e.size = 8;
  e.count = 3;
  e.stride = 16;
  const auto out = buffers(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].arg == BufferArg::local);
  CHECK(out[0].access == BufferAccess::write);
  CHECK(out[0].size == 8);
  CHECK(out[0].stride == 16);
  e.call = Call::Annotate_read;
  CHECK(buffers(e).at(0).access == BufferAccess::read);
}

// Each call's buffers are in use for as long as its row says: until its
// request completes (request create), from each start (persistent), until
// an epoch completes it locally (an RMA call's origin), else during the
// call; written target memory until remote completion.
TEST_CASE("trace_format::call_buffers::every call's buffers live as its row says") {
  std::size_t seen = 0;
  for (const Call call : k_all) {
    CAPTURE(f::call_name(call));
    Event e;
    e.call = call;
    e.comm = f::k_comm_world;
    e.peer = 1;
    e.buf = 0x1000;
    e.recv_buf = 0x2000;
    e.compare_buf = 0x3000;
    e.result_buf = 0x4000;
    e.count = e.recv_count = e.target_count = e.result_count = 1;
    e.datatype = e.recv_datatype = e.target_datatype = e.result_datatype = k_int;
    e.counts = e.recv_counts = {1, 1, 1, 1};
    e.displs = e.recv_displs = {0, 1, 2, 3};
    e.datatypes = e.recv_datatypes = {k_int, k_int, k_int, k_int};
    e.size = 8;
    const f::CallTraits& t = f::call_traits(call);
    const Lifetime want = t.request == f::RequestEffect::create       ? Lifetime::request
                          : t.request == f::RequestEffect::persistent ? Lifetime::persistent
                          : t.role == f::Role::rma_comm               ? Lifetime::rma_local
                                                                      : Lifetime::call;
    for (const Buffer& b : buffers(e)) {
      ++seen;
      if (b.arg == BufferArg::target) {
        CHECK(b.lifetime == (b.access == BufferAccess::read ? want : Lifetime::rma_remote));
      } else {
        CHECK(b.lifetime == want);
      }
    }
  }
  CHECK(seen > 100);
  // A call past the table has no row, and no buffers.
  Event past;
  past.call = static_cast<Call>(f::detail::k_call_slots + 5);
  past.buf = 0x1000;
  past.count = 1;
  past.datatype = k_int;
  CHECK(buffers(past).empty());
}

TEST_CASE("trace_format::epoch_of::a successful MPI_Win_test ends the exposure epoch") {
  // MPI-3.1 section 11.5.2: MPI_Win_test returning flag = true has the same
  // effect as MPI_Win_wait returning; flag = false has no visible effect.
  // happens_before.cpp ignored MPI_Win_test, smt_encoder/model.cpp closed
  // the epoch at a successful one.
  Event e;
  e.call = Call::Win_test;
  e.flag = true;
  CHECK(f::epoch_of(e) == f::EpochEffect::wait);
  const f::EpochStep step = f::epoch_step(f::epoch_of(e));
  CHECK(step.kind == f::EpochKind::exposure);
  CHECK(step.closes);
  CHECK_FALSE(step.opens);
  e.flag = false;
  CHECK(f::epoch_of(e) == f::EpochEffect::none);
  e.flag.reset();
  CHECK(f::epoch_of(e) == f::EpochEffect::none);
  e.flag = true;
  e.pending = true;
  CHECK(f::epoch_of(e) == f::EpochEffect::none);
  e.call = Call::Win_wait;
  CHECK(f::epoch_of(e) == f::EpochEffect::wait);
}

TEST_CASE("trace_format::epoch_step::opens, closes and completes") {
  CHECK(f::epoch_step(f::EpochEffect::fence).opens);
  CHECK(f::epoch_step(f::EpochEffect::fence).closes);
  CHECK(f::epoch_step(f::EpochEffect::fence).completes == f::Completion::remote);
  CHECK(f::epoch_step(f::EpochEffect::post).kind == f::EpochKind::exposure);
  CHECK(f::epoch_step(f::EpochEffect::start).kind == f::EpochKind::access);
  CHECK(f::epoch_step(f::EpochEffect::complete).all_targets);
  CHECK(f::epoch_step(f::EpochEffect::unlock).completes == f::Completion::remote);
  CHECK_FALSE(f::epoch_step(f::EpochEffect::unlock).all_targets);
  CHECK(f::epoch_step(f::EpochEffect::flush_local).completes == f::Completion::local);
  CHECK(f::epoch_step(f::EpochEffect::flush_local_all).all_targets);
  CHECK(f::epoch_step(f::EpochEffect::free).completes == f::Completion::remote);
  CHECK(f::epoch_step(f::EpochEffect::lock).kind == f::EpochKind::passive);
  CHECK(f::epoch_step(f::EpochEffect::sync).completes == f::Completion::none);
  CHECK(f::epoch_step(f::EpochEffect::wait).completes == f::Completion::none);
  // May wait for other ranks: a fence, a start, a wait; not a test, a
  // complete, a lock (whose order is the run's choice).
  CHECK(f::epoch_step(f::EpochEffect::fence).waits);
  CHECK(f::epoch_step(f::EpochEffect::start).waits);
  CHECK(f::epoch_step(f::EpochEffect::wait).waits);
  CHECK_FALSE(f::epoch_step(f::EpochEffect::test).waits);
  CHECK_FALSE(f::epoch_step(f::EpochEffect::complete).waits);
  // (A table by value now: the first and the last value, and one past it.)
  CHECK(f::epoch_step(f::EpochEffect::none).kind == f::EpochKind::none);
  CHECK_FALSE(f::epoch_step(f::EpochEffect::none).opens);
  CHECK(f::epoch_step(f::EpochEffect::free).all_targets);
  CHECK(f::epoch_step(static_cast<f::EpochEffect>(static_cast<int>(f::EpochEffect::free) + 1)).kind ==
        f::EpochKind::none);
  CHECK_FALSE(f::epoch_step(f::EpochEffect::lock).waits);
}

TEST_CASE("trace_format::sync_of::matching, collectives, requests") {
  Event e;
  e.call = Call::Issend;
  CHECK(f::sync_of(e).match == f::Match::send);
  CHECK(f::sync_of(e).request == f::RequestEffect::create);
  e.call = Call::Ssend_init;  // posts nothing until MPI_Start
  CHECK(f::sync_of(e).match == f::Match::none);
  e.call = Call::Sendrecv;
  CHECK(f::sync_of(e).match == f::Match::send_recv);
  e.call = Call::Probe;
  CHECK(f::sync_of(e).match == f::Match::probe);
  e.call = Call::Iprobe;
  e.flag = false;
  CHECK(f::sync_of(e).match == f::Match::none);
  e.flag = true;
  CHECK(f::sync_of(e).match == f::Match::probe);
  e.call = Call::Iscatterv;
  CHECK(f::sync_of(e).flow == f::Flow::root_to_all);
  CHECK(f::sync_of(e).match == f::Match::none);
  e.call = Call::Win_unlock_all;
  CHECK(f::sync_of(e).step.completes == f::Completion::remote);
  e.call = Call::Testsome;
  CHECK(f::completes_requests(f::sync_of(e).request));
}

TEST_CASE("trace_format::handle_use::where each handle's id is") {
  Event e;
  e.comm = 3;
  e.new_comm = 4;
  e.group = 5;
  e.datatype = 70;
  e.new_datatype = 71;
  e.window = 2;
  auto use = [&](Call c) {
    e.call = c;
    return f::handle_use(e);
  };
  CHECK(use(Call::Comm_split).kind == f::HandleKind::comm);
  CHECK(use(Call::Comm_split).id == 4);
  CHECK(use(Call::Comm_free).id == 3);
  CHECK(use(Call::Comm_free).effect == f::HandleEffect::free);
  CHECK(use(Call::Win_get_group).kind == f::HandleKind::group);
  CHECK(use(Call::Win_get_group).id == 4);
  CHECK(use(Call::Group_free).id == 5);
  CHECK(use(Call::Type_vector).id == 71);
  CHECK(use(Call::Type_commit).effect == f::HandleEffect::commit);
  CHECK(use(Call::Type_free).id == 70);
  CHECK(use(Call::Op_free).kind == f::HandleKind::op);
  CHECK(use(Call::Op_free).id == 71);
  CHECK(use(Call::Win_allocate).id == 2);
  CHECK(use(Call::Win_detach).effect == f::HandleEffect::detach);
  CHECK(use(Call::Send).kind == f::HandleKind::none);
}

// The rule of docs/ARCHITECTURE.md "How to add an MPI call": a switch on
// Call lists every value and has no default, so -Wswitch names the switch a
// new call was not given to. Most code switches on the columns instead.
TEST_CASE("trace_format::calls.def::no switch on Call has a default") {
  namespace fs = std::filesystem;
  const fs::path top = SMTRACE_SOURCE_DIR;
  std::vector<std::string> offenders;
  for (const char* folder : {"trace_format", "tracer", "analyzer", "smt_encoder", "cli", "bench"}) {
    if (!fs::exists(top / folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(top / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      // Each `switch (...) {`: its body at depth 1, cases and default.
      for (std::size_t at = s.find("switch ("); at != std::string::npos; at = s.find("switch (", at + 1)) {
        std::size_t open = s.find('{', at);
        if (open == std::string::npos) break;
        int depth = 0;
        bool calls = false, fallback = false;
        for (std::size_t i = open; i < s.size(); ++i) {
          if (s[i] == '{') ++depth;
          if (s[i] == '}' && --depth == 0) break;
          if (depth != 1) continue;
          if (s.compare(i, 11, "case Call::") == 0 || s.compare(i, 19, "case format::Call::") == 0) calls = true;
          if (s.compare(i, 8, "default:") == 0 && (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))))
            fallback = true;
        }
        if (calls && fallback) {
          const auto line = 1 + std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(at), '\n');
          offenders.push_back(fs::relative(entry.path(), top).string() + ":" + std::to_string(line));
        }
      }
    }
  }
  for (const std::string& where : offenders) CAPTURE(where);
  std::string all;
  for (const std::string& where : offenders) all += where + " ";
  INFO("switches on Call with a default: ", all);
  CHECK(offenders.empty());
}

TEST_SUITE_END();

// Format version 2 codes buf by buf_in_stream (docs/trace-format.md section
// 3): which calls answer true is part of the coding. When this fails, a
// call with a buffer was added or a call's `buffers` changed between none
// and a layout: that needs a new format version (section 8), then new
// figures here.
TEST_CASE("call_semantics::buf_in_stream: the calls of format version 2") {
  uint64_t count = 0, sum = 0, hash = 0;
  for (uint32_t n = 0; n < 65536; ++n) {
    if (!f::buf_in_stream(static_cast<f::Call>(n))) continue;
    ++count;
    sum += n;
    hash = (hash * 31 + n) % 1000000007;
  }
  CHECK(count == 80);
  CHECK(sum == 10166);
  CHECK(hash == 866881545);
}
