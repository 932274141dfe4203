// Internal to exchange/: how each call is written as OTF2 records, shared
// by the exporter and the importer so that they read one table, and the
// attributes smtrace adds to OTF2's records for what OTF2 does not carry.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace_format/event.hpp"

namespace smtrace::exchange::detail {

// The OTF2 records written inside a call's Enter/Leave region.
enum class Shape : uint8_t {
  plain,          // the region alone
  send,           // MpiSend                                   (Send, Bsend, Ssend, Rsend)
  isend,          // MpiIsend                                  (Isend, Ibsend, Issend, Irsend)
  recv,           // MpiRecv at the end                        (Recv)
  irecv,          // MpiIrecvRequest                           (Irecv)
  sendrecv,       // MpiSend, then MpiRecv at the end          (Sendrecv, Sendrecv_replace)
  probe,          // the region, envelope in attributes        (Probe, Iprobe)
  persistent,     // the region; MpiIsend/MpiIrecvRequest come at each Start (*_init)
  start,          // MpiIsend or MpiIrecvRequest per request   (Start, Startall)
  completion,     // per request: MpiIsendComplete, MpiIrecv, NonBlockingCollectiveComplete,
                  //   MpiRequestCancelled or MpiRequestTest   (Wait*, Test*)
  cancel,         // the region (MpiRequestCancelled comes with the completion)
  collective,     // MpiCollectiveBegin, MpiCollectiveEnd      (blocking collectives)
  icollective,    // NonBlockingCollectiveRequest              (non-blocking collectives)
  win_create,     // RmaCollectiveBegin, RmaWinCreate, RmaCollectiveEnd(CREATE_HANDLE)
  win_free,       // RmaCollectiveBegin, RmaWinDestroy, RmaCollectiveEnd(DESTROY_HANDLE)
  win_fence,      // RmaCollectiveBegin, RmaCollectiveEnd(BARRIER)
  win_lock,       // RmaRequestLock, RmaAcquireLock            (Win_lock, Win_lock_all: remote undefined)
  win_unlock,     // RmaReleaseLock                            (Win_unlock, Win_unlock_all)
  win_group_sync, // RmaGroupSync                              (Win_post, Win_start)
  rma_put,        // RmaPut                                    (Put, Rput)
  rma_get,        // RmaGet                                    (Get, Rget)
  rma_atomic,     // RmaAtomic                                 (Accumulate, Get_accumulate, Fetch_and_op, ...)
};

// Return how `call` is written.
Shape shape(format::Call call);
// Return OTF2's collective operation for a (blocking or non-blocking)
// collective, nothing for other calls.
std::optional<OTF2_CollectiveOp> collective_op(format::Call call);
// Return the region role Vampir shows for `call`.
OTF2_RegionRole region_role(format::Call call);
// Return the paradigm of `call`'s region (MPI, CUDA, or USER for smtrace's
// own access calls).
OTF2_Paradigm paradigm(format::Call call);
// Return the atomic type of an RMA atomic call.
OTF2_RmaAtomicType atomic_type(format::Call call);

// The attributes smtrace writes on Enter records (and on ProgramEnd), by
// name. Readers that do not know them ignore them; the importer reads them
// back where present (docs/cli.md, "smtrace export").
struct AttributeSpec {
  std::string_view name;
  std::string_view description;
  OTF2_Type type;
};
enum class Attr : uint8_t {
  seq, call_site, comm, peer, tag, count, datatype, op, request, termination, thread_level,
  window, target_count, target_datatype, count_
};
inline constexpr AttributeSpec k_attributes[] = {
    {"smtrace::seq", "the event's number in its rank (RANK:SEQ in smtrace's reports)", OTF2_TYPE_UINT64},
    {"smtrace::call_site", "where the call was made: the calling context of its call site", OTF2_TYPE_CALLING_CONTEXT},
    {"smtrace::comm", "the communicator the call was made on", OTF2_TYPE_COMM},
    {"smtrace::peer", "destination, source as posted (-1 any source, -2 proc null), root or target", OTF2_TYPE_INT32},
    {"smtrace::tag", "the tag as posted (-1 any tag)", OTF2_TYPE_INT32},
    {"smtrace::count", "the element count of the (send) buffer", OTF2_TYPE_INT64},
    {"smtrace::datatype", "the predefined datatype of the (send) buffer (smtrace BasicType value)", OTF2_TYPE_UINT32},
    {"smtrace::op", "the reduction operation (smtrace Op value; >= 64: user op)", OTF2_TYPE_UINT32},
    {"smtrace::request", "the request the call created or started", OTF2_TYPE_UINT64},
    {"smtrace::termination", "how the rank ended (smtrace TerminationKind value)", OTF2_TYPE_UINT8},
    {"smtrace::thread_level", "the thread level MPI provided (0 single .. 3 multiple), on MPI_Init(_thread)", OTF2_TYPE_UINT8},
    // (Added later: an archive without them imports as before.)
    {"smtrace::window", "the window of an RMA call (also those OTF2 writes no RMA record for: flush, sync, PSCW)",
     OTF2_TYPE_RMA_WIN},
    {"smtrace::target_count", "the element count of an RMA call's target buffer", OTF2_TYPE_INT64},
    {"smtrace::target_datatype", "the predefined datatype of an RMA call's target buffer (smtrace BasicType value)",
     OTF2_TYPE_UINT32},
};
inline constexpr std::size_t k_attribute_count = static_cast<std::size_t>(Attr::count_);
static_assert(sizeof(k_attributes) / sizeof(k_attributes[0]) == k_attribute_count);

// The name of the anchor file inside an exported archive directory.
inline constexpr std::string_view k_archive_name = "traces";

}  // namespace smtrace::exchange::detail
