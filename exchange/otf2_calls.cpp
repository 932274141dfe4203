// The tables of otf2_calls.hpp: calls that are not written as a plain
// region are listed with their shape; every other call (communicator and
// group management, datatypes, flushes, CUDA, annotations) is a region alone.
#include "exchange/otf2_calls.hpp"

#include <utility>

namespace smtrace::exchange::detail {

using format::Call;

namespace {

constexpr std::pair<Call, Shape> k_shapes[] = {
    {Call::Send, Shape::send}, {Call::Bsend, Shape::send}, {Call::Ssend, Shape::send}, {Call::Rsend, Shape::send},
    {Call::Isend, Shape::isend}, {Call::Ibsend, Shape::isend}, {Call::Issend, Shape::isend},
    {Call::Irsend, Shape::isend},
    {Call::Recv, Shape::recv}, {Call::Irecv, Shape::irecv},
    {Call::Sendrecv, Shape::sendrecv}, {Call::Sendrecv_replace, Shape::sendrecv},
    {Call::Probe, Shape::probe}, {Call::Iprobe, Shape::probe},
    {Call::Send_init, Shape::persistent}, {Call::Bsend_init, Shape::persistent},
    {Call::Ssend_init, Shape::persistent}, {Call::Rsend_init, Shape::persistent},
    {Call::Recv_init, Shape::persistent},
    {Call::Start, Shape::start}, {Call::Startall, Shape::start},
    {Call::Wait, Shape::completion}, {Call::Waitall, Shape::completion}, {Call::Waitany, Shape::completion},
    {Call::Waitsome, Shape::completion}, {Call::Test, Shape::completion}, {Call::Testall, Shape::completion},
    {Call::Testany, Shape::completion}, {Call::Testsome, Shape::completion},
    {Call::Cancel, Shape::cancel},
    {Call::Win_create, Shape::win_create}, {Call::Win_allocate, Shape::win_create},
    {Call::Win_allocate_shared, Shape::win_create}, {Call::Win_create_dynamic, Shape::win_create},
    {Call::Win_free, Shape::win_free},
    {Call::Win_fence, Shape::win_fence},
    {Call::Win_lock, Shape::win_lock}, {Call::Win_lock_all, Shape::win_lock},
    {Call::Win_unlock, Shape::win_unlock}, {Call::Win_unlock_all, Shape::win_unlock},
    {Call::Win_post, Shape::win_group_sync}, {Call::Win_start, Shape::win_group_sync},
    {Call::Put, Shape::rma_put}, {Call::Rput, Shape::rma_put},
    {Call::Get, Shape::rma_get}, {Call::Rget, Shape::rma_get},
    {Call::Accumulate, Shape::rma_atomic}, {Call::Get_accumulate, Shape::rma_atomic},
    {Call::Fetch_and_op, Shape::rma_atomic}, {Call::Compare_and_swap, Shape::rma_atomic},
    {Call::Raccumulate, Shape::rma_atomic}, {Call::Rget_accumulate, Shape::rma_atomic},
};

// Blocking collectives; the non-blocking form of each is its number + 20
// (calls.def) and maps to the same operation.
constexpr std::pair<Call, OTF2_CollectiveOp> k_collectives[] = {
    {Call::Barrier, OTF2_COLLECTIVE_OP_BARRIER},
    {Call::Bcast, OTF2_COLLECTIVE_OP_BCAST},
    {Call::Reduce, OTF2_COLLECTIVE_OP_REDUCE},
    {Call::Allreduce, OTF2_COLLECTIVE_OP_ALLREDUCE},
    {Call::Gather, OTF2_COLLECTIVE_OP_GATHER},
    {Call::Gatherv, OTF2_COLLECTIVE_OP_GATHERV},
    {Call::Scatter, OTF2_COLLECTIVE_OP_SCATTER},
    {Call::Scatterv, OTF2_COLLECTIVE_OP_SCATTERV},
    {Call::Allgather, OTF2_COLLECTIVE_OP_ALLGATHER},
    {Call::Allgatherv, OTF2_COLLECTIVE_OP_ALLGATHERV},
    {Call::Alltoall, OTF2_COLLECTIVE_OP_ALLTOALL},
    {Call::Alltoallv, OTF2_COLLECTIVE_OP_ALLTOALLV},
    {Call::Alltoallw, OTF2_COLLECTIVE_OP_ALLTOALLW},
    {Call::Reduce_scatter, OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
    {Call::Reduce_scatter_block, OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
    {Call::Scan, OTF2_COLLECTIVE_OP_SCAN},
    {Call::Exscan, OTF2_COLLECTIVE_OP_EXSCAN},
};
constexpr uint16_t k_nonblocking_offset = 20;

// Return the blocking collective `call` is (itself, or the blocking form of
// a non-blocking one), if it is one.
std::optional<std::pair<Call, OTF2_CollectiveOp>> blocking_collective(Call call) {
  for (const auto& entry : k_collectives) {
    const auto number = static_cast<uint16_t>(entry.first);
    if (entry.first == call || static_cast<uint16_t>(call) == number + k_nonblocking_offset) return entry;
  }
  return std::nullopt;
}

}  // namespace

Shape shape(Call call) {
  for (const auto& [c, s] : k_shapes) {
    if (c == call) return s;
  }
  if (const auto coll = blocking_collective(call)) return coll->first == call ? Shape::collective : Shape::icollective;
  return Shape::plain;
}

std::optional<OTF2_CollectiveOp> collective_op(Call call) {
  if (const auto coll = blocking_collective(call)) return coll->second;
  return std::nullopt;
}

OTF2_RegionRole region_role(Call call) {
  if (const auto op = collective_op(call)) {
    switch (*op) {
      case OTF2_COLLECTIVE_OP_BARRIER: return OTF2_REGION_ROLE_BARRIER;
      case OTF2_COLLECTIVE_OP_BCAST: case OTF2_COLLECTIVE_OP_SCATTER: case OTF2_COLLECTIVE_OP_SCATTERV:
        return OTF2_REGION_ROLE_COLL_ONE2ALL;
      case OTF2_COLLECTIVE_OP_GATHER: case OTF2_COLLECTIVE_OP_GATHERV: case OTF2_COLLECTIVE_OP_REDUCE:
        return OTF2_REGION_ROLE_COLL_ALL2ONE;
      case OTF2_COLLECTIVE_OP_SCAN: case OTF2_COLLECTIVE_OP_EXSCAN: return OTF2_REGION_ROLE_COLL_OTHER;
      default: return OTF2_REGION_ROLE_COLL_ALL2ALL;
    }
  }
  switch (format::call_family(call)) {
    case format::Family::p2p: case format::Family::request: return OTF2_REGION_ROLE_POINT2POINT;
    case format::Family::rma: return OTF2_REGION_ROLE_RMA;
    case format::Family::none: case format::Family::env: case format::Family::comm: case format::Family::group:
    case format::Family::coll: case format::Family::type: case format::Family::annotate: case format::Family::cuda:
    case format::Family::thread:
      return OTF2_REGION_ROLE_FUNCTION;
  }
  return OTF2_REGION_ROLE_FUNCTION;
}

OTF2_Paradigm paradigm(Call call) {
  switch (format::call_family(call)) {
    case format::Family::cuda: return OTF2_PARADIGM_CUDA;
    case format::Family::annotate: return OTF2_PARADIGM_USER;
    case format::Family::thread:
      return format::call_name(call).starts_with("omp_") ? OTF2_PARADIGM_OPENMP : OTF2_PARADIGM_PTHREAD;
    case format::Family::none: case format::Family::env: case format::Family::comm: case format::Family::group:
    case format::Family::p2p: case format::Family::request: case format::Family::coll: case format::Family::rma:
    case format::Family::type:
      return OTF2_PARADIGM_MPI;
  }
  return OTF2_PARADIGM_MPI;
}

OTF2_RmaAtomicType atomic_type(Call call) {
  switch (call) {
    case Call::Compare_and_swap: return OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP;
    case Call::Fetch_and_op: case Call::Get_accumulate: case Call::Rget_accumulate:
      return OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
    default: return OTF2_RMA_ATOMIC_TYPE_ACCUMULATE;
  }
}

}  // namespace smtrace::exchange::detail
