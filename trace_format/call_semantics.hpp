// What each call means, read from the columns of calls.def (its header says
// how a row is read): what role it plays, what it does to requests, which
// buffers it reads and writes and for how long, what it orders, which RMA
// epochs it opens, closes or completes, and which handles it creates or
// frees. The tracer's watch set, replay, happens-before, every check, the
// SMT model and `smtrace dump` ask here; none keeps its own list of calls.
//
// Two kinds of answers: the row of a call (call_traits: a constant table,
// O(1) per lookup) and the answer for one recorded event (call_buffers,
// sync_of, epoch_of, handle_use), which applies the event's arguments:
// MPI_IN_PLACE, the root (a rank, MPI_ROOT or MPI_PROC_NULL), the counts
// and displacements, the flag of MPI_Win_test and Iprobe.
//
// Plain C++: no protobuf, no MPI (part of smtrace_format_wire, which the
// tracer links). Thread safety: every function is pure; the table is constant.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "trace_format/event.hpp"

namespace smtrace::format {

// --- the columns of calls.def ------------------------------------------------

enum class Role : uint8_t {
  none,          // not a call of the table
  env,           // Init, Init_thread, Finalize, Abort
  send,          // a send (blocking, non-blocking or persistent)
  recv,          // a receive (blocking, non-blocking or persistent)
  sendrecv,      // a send and a receive in one call
  probe,         // Probe, Iprobe: matches a message without receiving it
  collective,    // one instance of a collective on Event.comm
  rma_comm,      // a one-sided access: Put, Get, the accumulates
  rma_sync,      // an RMA synchronization call (EpochEffect says which)
  request,       // Start, Wait*, Test*, Request_free, Cancel (RequestEffect says which)
  handle,        // creates, commits or frees a handle (Resource says which)
  local_access,  // an annotated or captured load or store
  cuda,          // a CUDA runtime call (analyzer/cuda_streams.hpp models them)
  local,         // a local call that reads and writes memory: Pack, Unpack, Reduce_local
  query,         // a local query whose answer is recorded: Win_shared_query, Test_cancelled
  outside,       // a local query wrapped only to tell a call outside MPI's life (before
                 // MPI_Init, after MPI_Finalize): never recorded otherwise, nor imported
  thread,        // thread synchronization (ThreadEffect says what it orders)
};

enum class SendMode : uint8_t { none, standard, buffered, synchronous, ready };

enum class RequestEffect : uint8_t {
  none,
  create,         // returns an active request (Event.request)
  persistent,     // returns an inactive persistent request (Event.request)
  start,          // activates Event.request (Start) or Event.requests (Startall)
  complete_all,   // Wait, Waitall, Test, Testall: completes Event.completed
  complete_any,   // Waitany, Testany
  complete_some,  // Waitsome, Testsome
  free,           // Request_free: an active request still completes, unseen
  cancel,         // Cancel: the request still has to be completed
  query,          // Request_get_status: flag says Event.request is complete; it stays allocated
};

enum class BufferLayout : uint8_t {
  none,
  send, recv, sendrecv, sendrecv_replace,
  bcast, reduce, allreduce, reduce_scatter_block, reduce_scatter,
  gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, alltoallw,
  put, get, accumulate, get_accumulate, fetch_and_op, compare_and_swap,
  local_read, local_write,
  copy,          // reads buf (count, datatype), writes recv_buf (recv_count, recv_datatype): Pack, Unpack
  reduce_local,  // reads buf, reads and writes recv_buf (count, datatype each): Reduce_local
  // neighbourhood collectives: one block per neighbour (CommPlace::sources,
  // destinations), none for an MPI_PROC_NULL neighbour
  neighbor_allgather, neighbor_allgatherv, neighbor_alltoall, neighbor_alltoallv, neighbor_alltoallw,
};

enum class Flow : uint8_t {
  none,         // not a collective
  all_to_all,   // every member's entry precedes every member's exit
  root_to_all,  // the root's entry precedes every member's exit
  all_to_root,  // every member's entry precedes the root's exit
  scan,         // member i's exit follows the entries of members 0..i
  exscan,       // member i's exit follows the entries of members 0..i-1
  neighbor,     // a member's exit follows the entries of its topology's sources (CommDef.sources)
};

enum class Combine : uint8_t {
  none,
  reduce,      // a collective reduction with Event.op
  accumulate,  // an RMA accumulate with Event.op: atomic per basic element
  swap,        // MPI_Compare_and_swap: atomic, no op
};

enum class EpochEffect : uint8_t {
  none, fence, post, start, complete, wait,
  test,  // MPI_Win_test: as wait when it returns flag = true (epoch_of)
  lock, unlock, lock_all, unlock_all, flush, flush_local, flush_all, flush_local_all,
  sync,  // MPI_Win_sync: memory synchronization only
  free,  // MPI_Win_free: every operation on the window is complete
};

enum class Resource : uint8_t {
  none,
  comm_new, comm_free, group_new, group_free, type_new, type_commit, type_free, op_new, op_free,
  win_new,      // a window with memory (Event.win_base, Event.win_size, Event.disp_unit)
  win_dynamic,  // a window whose memory is attached later; its target displacements are addresses
  win_free, win_attach, win_detach,
  message_new,    // a matched probe's message handle (Event.message)
  message_free,   // receives the message of Event.message (Mrecv, Imrecv)
  buffer_attach,  // the buffer of buffered sends (Event.buf, Event.size bytes)
  buffer_detach,  // waits until the messages in that buffer are sent, returns it
  info_new,       // an info object (Event.new_datatype: its id)
  info_free,
};

// One row of calls.def, past its name and number.
struct CallTraits {
  Family family = Family::none;
  bool blocks = false;
  Role role = Role::none;
  SendMode mode = SendMode::none;
  RequestEffect request = RequestEffect::none;
  BufferLayout buffers = BufferLayout::none;
  Flow flow = Flow::none;
  bool rooted = false;
  Combine op = Combine::none;
  EpochEffect epoch = EpochEffect::none;
  Resource resource = Resource::none;
  bool poll = false;
  Call twin = Call::unspecified;
};

namespace detail {

// The rows of calls.def, indexed by call number (one load per lookup:
// the checks ask several times per event, so call_traits is inline).
inline constexpr std::size_t k_call_slots = [] {
  std::size_t top = 0;
#define SMTRACE_CALL(ID, MpiName, number, ...) top = std::max(top, static_cast<std::size_t>(Call::MpiName));
#include "trace_format/calls.def"
#undef SMTRACE_CALL
  return top + 1;
}();

inline constexpr std::array<CallTraits, k_call_slots> k_call_table = [] {
  std::array<CallTraits, k_call_slots> table{};
#define SMTRACE_CALL(ID, MpiName, number, family, blocking, role, mode, request, buffers, flow, rooted, op, \
                     epoch, resource, poll, twin)                                                        \
  table[static_cast<std::size_t>(Call::MpiName)] =                                                       \
      CallTraits{Family::family,        (blocking) != 0,       Role::role,   SendMode::mode,             \
                 RequestEffect::request, BufferLayout::buffers, Flow::flow,   (rooted) != 0,              \
                 Combine::op,           EpochEffect::epoch,    Resource::resource, (poll) != 0, Call::twin};
#include "trace_format/calls.def"
#undef SMTRACE_CALL
  return table;
}();

inline constexpr CallTraits k_no_traits{};

}  // namespace detail

// Return the row of `call`; for a value the table does not hold (archived
// traces from a newer build), a row that says nothing.
inline const CallTraits& call_traits(Call call) {
  const auto i = static_cast<std::size_t>(call);
  return i < detail::k_call_table.size() ? detail::k_call_table[i] : detail::k_no_traits;
}

// Whether the stream coding of format version 2 (docs/trace-format.md
// section 3) codes `call`'s buf as a delta against the running buf and
// moves it: the calls with a buffer layout. The others (`buffers` none,
// and calls this build does not know) write buf as it is, absent when 0
// (most of them have none: Wait, Barrier, Win_flush), and leave the running
// buf alone; the few that set it (Buffer_attach, a thread call's object,
// a CUDA call's pointer) keep it. Which calls answer true is part of the
// coding: adding a call with a buffer, or changing a call's `buffers`
// between none and a layout, needs a new format version (old readers take
// a call they do not know as buffer-less). Calls added after version 2
// (k_calls_after_v2: a new call with a buffer layout goes there; one
// without, such as MPI_Type_get_contents, writes buf as it is anyway) write
// buf whole whatever their layout, as those readers read them, so that
// they need no new version. (Every event's coding reads this list: keep
// it short.)
inline constexpr Call k_calls_after_v2[] = {Call::Buffer_modified};
inline bool buf_in_stream(Call call) {
  for (const Call c : k_calls_after_v2)
    if (c == call) return false;
  return call_traits(call).buffers != BufferLayout::none;
}

// `case Call::X:` for every call of calls.def outside the cuda family, for
// a switch over the CUDA calls that must still list every value (no
// default:, so -Wswitch names a new CUDA call it forgot):
//   #define SMTRACE_CALL(ID, MpiName, number, family, ...) SMTRACE_CASE_UNLESS_CUDA_##family(MpiName)
//   #include "trace_format/calls.def"
//   #undef SMTRACE_CALL
// A new family needs its line here (the expansion names it otherwise).
#define SMTRACE_CASE_UNLESS_CUDA_env(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_comm(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_group(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_p2p(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_request(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_coll(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_rma(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_type(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_annotate(MpiName) case ::smtrace::format::Call::MpiName:
#define SMTRACE_CASE_UNLESS_CUDA_cuda(MpiName)
#define SMTRACE_CASE_UNLESS_CUDA_thread(MpiName) case ::smtrace::format::Call::MpiName:

// Return the form of `call` without a request: Send for Isend, Bcast for
// Ibcast, Put for Rput, Comm_dup for Comm_idup; `call` itself otherwise.
Call base_form(Call call);

// Where a call's MPI_IN_PLACE option may be given (MPI-3.1 section 5.2.1).
enum class InPlaceUse : uint8_t {
  never,       // no in-place option: Bcast, point-to-point, RMA, neighbourhood collectives (section 7.6)
  root_only,   // at the root only: Reduce, Gather(v), Scatter(v)
  every_member,  // at all members or at none: Allreduce (5.9.6), Allgather(v) (5.7),
                 // Alltoall(v,w) (5.8), Reduce_scatter(_block) (5.10)
  any_member,  // at any member, each on its own: Scan, Exscan (section 5.11)
};

// Return where the MPI_IN_PLACE option of `call` may be given, from its
// buffer layout and flow. Never on an intercommunicator (section 5.2.2).
InPlaceUse in_place_use(Call call);

// Return true for the request effects that complete requests (Wait*, Test*).
constexpr bool completes_requests(RequestEffect effect) {
  return effect == RequestEffect::complete_all || effect == RequestEffect::complete_any ||
         effect == RequestEffect::complete_some;
}
// Return true for the accesses MPI makes atomic with each other (the
// accumulate family and compare-and-swap, MPI-3.1 section 11.7.1).
constexpr bool is_atomic(Combine op) { return op == Combine::accumulate || op == Combine::swap; }

// Op.OP_NO_OP (smtrace.proto): with it, Get_accumulate and Fetch_and_op only
// read the target, and ignore their origin buffer (MPI-3.1 section 11.3.4).
inline constexpr uint32_t k_op_no_op = 14;

// --- buffers -----------------------------------------------------------------

enum class BufferAccess : uint8_t {
  read,
  write,
  update,  // read, then written: an MPI_IN_PLACE receive buffer, Sendrecv_replace, an accumulate's target
};

// How long MPI may touch a buffer.
enum class Lifetime : uint8_t {
  call,        // during the call
  request,     // from the call until the request it returns completes
  persistent,  // from each MPI_Start of the request until that activation completes
  rma_local,   // an RMA origin buffer: until the epoch completes the operation locally
               // (flush_local, flush, unlock, fence, complete, Win_free)
  rma_remote,  // RMA target memory written: until the operation completes remotely
               // (target memory only read ends with the origin's: rma_local or request)
};

// How long a call's buffers (other than written RMA target memory) are in
// use, from its row: until its request completes, from each start of a
// persistent one, until an RMA epoch completes an operation locally, or
// during the call (call_buffers' Buffer::lifetime).
constexpr Lifetime buffer_lifetime(const CallTraits& t) {
  switch (t.request) {
    case RequestEffect::create: return Lifetime::request;
    case RequestEffect::persistent: return Lifetime::persistent;
    case RequestEffect::none: case RequestEffect::start: case RequestEffect::complete_all:
    case RequestEffect::complete_any: case RequestEffect::complete_some: case RequestEffect::free:
    case RequestEffect::cancel: case RequestEffect::query:
      break;
  }
  return t.role == Role::rma_comm ? Lifetime::rma_local : Lifetime::call;
}

// Which argument a buffer is.
enum class BufferArg : uint8_t {
  buf,          // Event.buf (send buffer; the only buffer of Recv, Bcast, Put...)
  recv_buf,     // Event.recv_buf
  result_buf,   // Event.result_buf (Get_accumulate, Fetch_and_op, Compare_and_swap)
  compare_buf,  // Event.compare_buf (Compare_and_swap)
  target,       // target memory of an RMA call, at the target rank
  local,        // an annotated or captured access: `size`-byte blocks
};

// The unit of Buffer::offset.
enum class OffsetUnit : uint8_t {
  elements,    // extents of the buffer's datatype (v collectives)
  bytes,       // bytes (Alltoallw)
  disp_units,  // the target window's displacement unit (RMA targets)
};

// One buffer, or one block of a buffer, that a call touches at the calling
// rank (at the target rank for BufferArg::target).
struct Buffer {
  BufferArg arg = BufferArg::buf;
  BufferAccess access = BufferAccess::read;
  Lifetime lifetime = Lifetime::call;
  uint64_t addr = 0;           // the argument's address (0 for a target: the window's base is the target's)
  int64_t offset = 0;          // where the block starts, from `addr`, in `unit`s
  OffsetUnit unit = OffsetUnit::elements;
  int64_t count = 0;           // elements of `datatype`
  uint32_t datatype = 0;
  int32_t peer = -1;           // the member this block goes to or comes from; the target rank; -1: all or none
  // The call touches this buffer only if this rank is the root, or its
  // count depends on a communicator size that is unknown (counted with one
  // member): a consumer that over-approximates (the tracer's watch set)
  // takes it, one that must not raise false alarms leaves it out.
  bool maybe = false;
  // BufferArg::local: `count` blocks (0 and 1: one) of `size` bytes, `stride` apart.
  uint64_t size = 0;
  int64_t stride = 0;
  bool operator==(const Buffer&) const = default;
};

// The calling rank's place in an event's communicator.
struct CommPlace {
  std::optional<int32_t> rank;  // in the (local group of the) communicator
  uint64_t size = 0;            // members; the remote group's on an intercommunicator; 0: unknown
  bool inter = false;           // an intercommunicator: roots are MPI_ROOT, MPI_PROC_NULL or a remote rank
  // A topology's neighbours of the calling rank (CommDef.sources,
  // destinations), for neighbourhood collectives; nullptr: unknown.
  const std::vector<int32_t>* sources = nullptr;
  const std::vector<int32_t>* destinations = nullptr;
};

// Append to `out` the buffers that call `e` reads and writes at the calling
// rank (and, for RMA calls, at the target), with how long each is in use:
// MPI_IN_PLACE applied (the in-place buffer is updated, the unused one left
// out), buffers only significant at the root kept there, v and w
// collectives as one block per member at its displacement, counts that
// scale with the communicator size multiplied by `place.size`. Left out:
// buffers at address 0 with a predefined datatype (NULL: an address 0 is
// only meaningful as MPI_BOTTOM with a derived datatype), and the buffers
// of a point-to-point call or an RMA call to (or from) MPI_PROC_NULL: such a
// communication has no effect and leaves the buffer untouched (MPI-4.0
// 3.10, 12.3; origin_read).
// Buffers with count 0 are kept (their footprint is empty). With
// NullBuffers::keep, buffers at address 0 are kept too (the argument
// checks look for NULL buffers with a count).
// The origin buffer of a call whose layout is send, put or accumulate is
// its (buf, count, datatype): `block`, or `none` for a communication with
// MPI_PROC_NULL; `other` for every other layout (ask call_buffers).
// call_buffers applies it; the tracer's hot paths ask it directly, without
// building an Event.
enum class OriginRead : uint8_t { other, none, block };
OriginRead origin_read(const CallTraits& t, std::optional<int32_t> peer);

enum class NullBuffers : uint8_t { skip, keep };
void call_buffers(const Event& e, const CommPlace& place, std::vector<Buffer>& out,
                  NullBuffers nulls = NullBuffers::skip);

// --- synchronization ---------------------------------------------------------

enum class EpochKind : uint8_t { none, fence, access, exposure, passive };
enum class Completion : uint8_t { none, local, remote };

// What an RMA synchronization call does: the epoch it opens or closes (a
// fence does both), which pending RMA operations of the calling rank on the
// window it completes (all of them, or those to Event.peer), and whether it
// may wait for other ranks' matching calls (MPI may, but need not, make a
// fence, a start or a wait block; a lock's order is the run's choice).
struct EpochStep {
  EpochKind kind = EpochKind::none;
  bool opens = false;
  bool closes = false;
  Completion completes = Completion::none;
  bool all_targets = false;
  bool waits = false;
};
// Return the step of `effect` (EpochEffect::test as wait; use epoch_of for
// an event).
EpochStep epoch_step(EpochEffect effect);
// Return the epoch effect of event `e`: its row's, but EpochEffect::wait
// for an MPI_Win_test that returned flag = true (MPI-3.1 section 11.5.2:
// the same effect as a return of MPI_Win_wait) and none for one that
// returned false or never returned.
EpochEffect epoch_of(const Event& e);

enum class Match : uint8_t {
  none,
  send,       // posts a send (Event.peer, Event.tag)
  recv,       // posts a receive (Event.peer, Event.tag)
  send_recv,  // a send (Event.peer, Event.tag) and a receive (Event.recv_peer, Event.recv_tag)
  probe,      // matches a message without receiving it (a blocking probe, or an Iprobe that found one)
};

// What event `e` takes part in across ranks.
struct Sync {
  Match match = Match::none;  // persistent inits post nothing (their Starts do)
  Flow flow = Flow::none;     // a collective instance on Event.comm
  EpochEffect epoch = EpochEffect::none;  // epoch_of(e)
  EpochStep step;             // epoch_step(epoch)
  RequestEffect request = RequestEffect::none;
};
// Return what event `e` synchronizes.
Sync sync_of(const Event& e);

// --- threads -----------------------------------------------------------------

// What a call of the thread family orders between the threads (and the
// OpenMP tasks) of one rank. Each recorded event has a start and an end
// point: a release is taken at the event's start, an acquire at its end,
// so a blocking call (a condition wait, a barrier) releases when it is
// entered and acquires when it returns. The fields each effect reads (the
// tracer fills them, docs/trace-format.md "Thread events"):
//   buf      the synchronization object: the address of a mutex, rwlock,
//            spin lock, condition variable, semaphore, barrier, OpenMP lock
//            or critical section; the id of an OpenMP team or task
//   peer     the other thread (tracer thread id) of create, begin, join
//   count    a barrier's round (pthread and OpenMP); the team of a task
//   recv_buf the mutex a condition wait releases and takes again; the
//            parent task of an OpenMP task
//   displs, counts  an OpenMP task's dependences: addresses and kinds
//            (ThreadDependence)
enum class ThreadEffect : uint8_t {
  none,
  create,          // pthread_create of thread `peer`: before that thread's begin
  begin,           // the first event of a created thread: after its creation
  end,             // the last event of a thread: before a join of it returns
  join,            // pthread_join of thread `peer`: after that thread's end
  acquire,         // a lock `buf` taken (exclusive): after every release of it
  acquire_shared,  // a reader lock taken: after every exclusive release of it
  release,         // a lock released (shared when its holder took it shared)
  signal,          // cond signal/broadcast, sem_post: a release on object `buf`
  take_signal,     // sem_wait returned: after every earlier signal of `buf`
  wait_signal,     // cond wait: releases lock `recv_buf` at its start; at its
                   // end takes it again and is after every earlier signal of `buf`
  barrier,         // round `count` of barrier `buf`: every member's start before every member's end
  fork,            // an OpenMP parallel region (team `buf`) begins: before its implicit tasks
  implicit_begin,  // an implicit task of team `buf` begins: after the fork
  implicit_end,    // an implicit task of team `buf` ends: before the join
  join_team,       // the region of team `buf` ends: after every implicit task's end
                   // and every explicit task of the team
  team_barrier,    // OpenMP barrier `count` of team `buf`: as barrier, and its end
                   // after every explicit task of the team completed before it
  taskwait,        // its end: after the completion of every child task of task `buf`
  taskgroup,       // its end: after the completion of every descendant task of task `buf`
  task_create,     // explicit task `buf` (parent `recv_buf`, team `count`) is created
  task_begin,      // task `buf` starts, as a logical thread of its own: after its
                   // creation and the completion of the tasks it depends on
  task_end,        // task `buf` completes: its logical thread ends
  section_begin,   // a section starts as a logical thread of its own, after what
                   // the executing thread did before
  section_end,     // the section's logical thread ends
};
// Return the ThreadEffect of `call` (none outside the thread family).
ThreadEffect thread_effect(Call call);

// An OpenMP task dependence's kind (Event.counts of omp_task_create).
enum class ThreadDependence : uint8_t { none = 0, in = 1, out = 2, inout = 3, mutexinoutset = 4, inoutset = 5 };

// --- handles -----------------------------------------------------------------

enum class HandleKind : uint8_t {
  none, comm, group, datatype, op, window,
  message,  // a matched probe's message (Event.message): created by Mprobe/Improbe, freed by Mrecv/Imrecv
  buffer,   // the attached buffer of buffered sends (one per process; id 1)
  info,     // an info object (Event.new_datatype; 1 is MPI_INFO_ENV)
};
enum class HandleEffect : uint8_t { none, create, commit, free, attach, detach };

struct HandleUse {
  HandleKind kind = HandleKind::none;
  HandleEffect effect = HandleEffect::none;
  uint32_t id = 0;  // the rank-local id of the handle, from the event field the call fills
};
// Return the handle event `e` creates, commits, frees, attaches memory to
// or detaches it from, and its id (Event.new_comm for new communicators
// and groups, Event.new_datatype for datatypes and ops, Event.window for
// windows, Event.message (low 32 bits) for messages; the freed handle's own
// field for frees). A matched probe that found no message (MPI_Improbe
// with flag false) or took MPI_MESSAGE_NO_PROC creates nothing.
HandleUse handle_use(const Event& e);

}  // namespace smtrace::format
