// Plain structs of trace format v1: what the writer takes and the reader
// hands out. Nothing here depends on protobuf or MPI, so the tracer, the
// analyzer and the tests share these without pulling either in.
//
// Values are absolute here (seq, times since the rank's clock origin,
// addresses); the wire coding (delta times, implicit seq, completion
// records) is the encoder's and the reader's business.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smtrace::format {

// The version the writers write (docs/trace-format.md); readers read 1 to
// this. Version 2 changed the stream coding of buf (call_semantics.hpp,
// buf_in_stream).
inline constexpr uint32_t k_format_version = 2;

enum class Call : uint16_t {
  unspecified = 0,
#define SMTRACE_CALL(ID, MpiName, number, ...) MpiName = number,
#include "trace_format/calls.def"
#undef SMTRACE_CALL
};

enum class Family : uint8_t { none, env, comm, group, p2p, request, coll, rma, type, annotate, cuda, thread };
// Return true for the families whose calls are MPI calls (not annotations,
// loads and stores, CUDA calls or thread synchronization).
constexpr bool is_mpi(Family family) {
  switch (family) {
    case Family::env: case Family::comm: case Family::group: case Family::p2p: case Family::request:
    case Family::coll: case Family::rma: case Family::type:
      return true;
    case Family::none: case Family::annotate: case Family::cuda: case Family::thread:
      return false;
  }
  return false;
}

// Return "MPI_Send" for Call::Send, "smtrace_annotate_read",
// "smtrace_annotate_write", "smtrace_load" and "smtrace_store" for the
// non-MPI access calls, the CUDA runtime's name for CUDA calls
// ("cudaMemcpyAsync"), the C function's or OMPT event's name for thread
// synchronization ("pthread_mutex_lock", "omp_barrier"), "?" for an unknown
// value.
std::string_view call_name(Call call);
// Return the call named `name` ("MPI_Send", "Send", "SEND", any case;
// "smtrace_annotate_read"), if any.
std::optional<Call> call_from_name(std::string_view name);
// Return the family of `call` (Family::none for an unknown value).
Family call_family(Call call);
// Return the lower-case name of `family` ("p2p"), as SMTRACE_FAMILIES spells it.
std::string_view family_name(Family family);
// Return the MPI name of predefined datatype `id` (a BasicType value of
// smtrace.proto: "MPI_INT", "MPI_INTEGER"...), or "" when `id` is none of
// them (63, a predefined type unknown to smtrace, included).
std::string_view basic_type_name(uint32_t id);
// Return true when `call` may wait for another rank (calls.def).
bool call_blocks(Call call);
// Return true when `call` is a value of the table (archived traces may hold
// numbers this build does not know).
bool call_known(Call call);

// Special ranks and tags, independent of the MPI library's values.
inline constexpr int32_t k_any_source = -1;
inline constexpr int32_t k_proc_null = -2;
inline constexpr int32_t k_root = -3;
inline constexpr int32_t k_any_tag = -1;

// Ids below this are BasicType / Op values; at or above, rank-file defs.
inline constexpr uint32_t k_first_derived_id = 64;
inline constexpr uint32_t k_comm_world = 0;
inline constexpr uint32_t k_comm_self = 1;

// Handle ids that name no live object (docs/trace-format.md, "Handle ids").
// Null handles keep the values archived traces use: communicators and
// groups k_null_id (MPI_COMM_NULL, MPI_GROUP_NULL); datatypes, ops and
// windows 0 (MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_WIN_NULL); requests 0
// (MPI_REQUEST_NULL). A handle value that the tracer knows was freed, or
// that it can tell MPI never returned, is k_invalid_id (requests:
// k_invalid_request), so that the invalid-argument check can name it.
inline constexpr uint32_t k_null_id = UINT32_MAX;
// Message handles (Event.message: MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
// MPI_Imrecv): 0 MPI_MESSAGE_NULL, 1 MPI_MESSAGE_NO_PROC (a matched probe
// of MPI_PROC_NULL), messages from 2.
inline constexpr uint64_t k_message_null = 0;
inline constexpr uint64_t k_message_no_proc = 1;
inline constexpr uint32_t k_invalid_id = UINT32_MAX - 1;
inline constexpr uint64_t k_invalid_request = UINT64_MAX - 1;

enum class LockType : uint8_t { unspecified = 0, exclusive = 1, shared = 2 };

namespace assert_flag {
inline constexpr uint32_t nocheck = 1, nostore = 2, noput = 4, noprecede = 8, nosucceed = 16;
inline constexpr uint32_t other = 32;  // bits that are none of the MPI_MODE_* constants
}

// CUDA (family cuda). Stream ids: 0 the legacy default stream (NULL), 1 the
// per-thread default stream (cudaStreamPerThread), created streams from 2.
inline constexpr uint64_t k_legacy_stream = 0;
inline constexpr uint64_t k_per_thread_stream = 1;
// Event.flags of cudaStreamCreateWithFlags: cudaStreamNonBlocking.
inline constexpr uint32_t k_stream_non_blocking = 1;
// Event.rc of a CUDA query whose work is not done: cudaErrorNotReady.
inline constexpr int32_t k_cuda_not_ready = 600;

// Where memory lives (smtrace.proto MemoryKind).
enum class MemoryKind : uint8_t { unspecified = 0, pageable = 1, pinned = 2, device = 3, managed = 4 };
// The direction a copy was given (smtrace.proto CopyKind; cudaMemcpyKind + 1).
enum class CopyKind : uint8_t {
  unspecified = 0,
  host_to_host = 1,
  host_to_device = 2,
  device_to_host = 3,
  device_to_device = 4,
  inferred = 5,  // cudaMemcpyDefault: from the pointers
};
// How a kernel uses a pointer argument (smtrace.proto ArgAccess); bit 0
// read, bit 1 write; unspecified is analyzed as a write.
enum class ArgAccess : uint8_t { unspecified = 0, read = 1, write = 2, read_write = 3 };

// Return "pageable", "pinned", "device", "managed" or "unspecified".
std::string_view memory_kind_name(MemoryKind kind);
// Return "HostToDevice" and the like (cudaMemcpyKind without its prefix).
std::string_view copy_kind_name(CopyKind kind);
// Return "read", "write", "read_write" or "unspecified".
std::string_view arg_access_name(ArgAccess access);

// A pointer argument of a kernel launch: the kernel may touch `size` bytes
// from `addr` (0: to the end of the allocation holding addr).
struct KernelArg {
  uint32_t index = 0;
  uint64_t addr = 0;
  uint64_t size = 0;
  ArgAccess access = ArgAccess::unspecified;
  bool operator==(const KernelArg&) const = default;
};

struct Status {
  std::optional<int32_t> source;
  std::optional<int32_t> tag;
  std::optional<int64_t> count;
  bool cancelled = false;
  int32_t error = 0;
  bool operator==(const Status&) const = default;
};

struct CompletedRequest {
  uint32_t index = 0;
  uint64_t request = 0;
  Status status;
  bool operator==(const CompletedRequest&) const = default;
};

// One recorded call. Fields a call does not use keep their defaults;
// docs/trace-format.md says which fields each call fills.
struct Event {
  uint64_t seq = 0;
  Call call = Call::unspecified;
  uint32_t thread = 0;
  int64_t t_start = 0;     // ns since the rank's clock origin
  uint64_t duration = 0;   // ns; meaningless while pending
  bool pending = false;    // entered and never returned (the rank stopped inside)
  uint32_t site = 0;
  std::vector<uint32_t> stack;
  uint32_t repeat = 0;     // folded identical polls (0 and 1: this call alone)
  int32_t rc = 0;

  uint32_t comm = 0;
  std::optional<int32_t> peer;
  std::optional<int32_t> tag;
  uint64_t buf = 0;
  int64_t count = 0;
  uint32_t datatype = 0;
  uint64_t recv_buf = 0;
  int64_t recv_count = 0;
  uint32_t recv_datatype = 0;
  std::vector<int64_t> counts, displs;
  std::vector<uint32_t> datatypes;
  std::vector<int64_t> recv_counts, recv_displs;
  std::vector<uint32_t> recv_datatypes;
  std::optional<int32_t> recv_peer;
  std::optional<int32_t> recv_tag;
  uint32_t op = 0;
  bool in_place = false;

  uint64_t request = 0;
  std::vector<uint64_t> requests;
  std::vector<CompletedRequest> completed;
  Status status;
  std::optional<bool> flag;

  uint32_t new_comm = 0;
  int32_t color = 0;
  int32_t key = 0;
  uint32_t group = 0;
  uint32_t new_datatype = 0;
  uint64_t message = 0;     // message handle (k_message_null...): Mprobe/Improbe's, Mrecv/Imrecv's
  uint32_t peer_comm = 0;   // MPI_Intercomm_create: the peer communicator at the local leader (k_null_id elsewhere)

  uint32_t window = 0;
  uint64_t win_base = 0;
  uint64_t win_size = 0;
  int32_t disp_unit = 0;
  uint64_t target_disp = 0;
  int64_t target_count = 0;
  uint32_t target_datatype = 0;
  uint64_t result_buf = 0;
  int64_t result_count = 0;
  uint32_t result_datatype = 0;
  uint64_t compare_buf = 0;
  LockType lock_type = LockType::unspecified;
  uint32_t assert_flags = 0;

  // Accesses (Annotate_*, Load, Store): `count` blocks (0 or 1: one) of
  // `size` bytes, block k at buf + k * stride.
  uint64_t size = 0;
  int64_t stride = 0;

  // CUDA calls (docs/trace-format.md "CUDA events"): rc is the cudaError_t.
  uint64_t stream = 0;        // stream id (k_legacy_stream...); created stream for cudaStreamCreate*
  uint64_t cuda_event = 0;    // CUDA event id (>= 1)
  uint32_t kernel = 0;        // cudaLaunchKernel: CallSite id of the kernel
  std::vector<KernelArg> args;  // cudaLaunchKernel: pointer arguments
  MemoryKind memory = MemoryKind::unspecified;       // of buf
  MemoryKind recv_memory = MemoryKind::unspecified;  // of recv_buf (a copy's destination)
  CopyKind copy_kind = CopyKind::unspecified;
  uint32_t flags = 0;         // as passed: stream, cudaHostAlloc, cudaMallocManaged flags

  int64_t t_end() const { return t_start + static_cast<int64_t>(duration); }
  bool operator==(const Event&) const = default;
};

// `count` blocks of `length` bytes from `offset`, `stride` apart.
struct Run {
  int64_t offset = 0;
  uint64_t length = 0;
  uint64_t count = 1;
  int64_t stride = 0;
  bool operator==(const Run&) const = default;
};

struct TypeCount {
  uint32_t type = 0;  // BasicType value
  uint64_t count = 0;
  bool operator==(const TypeCount&) const = default;
};

struct DatatypeDef {
  uint32_t id = 0;
  Call combiner = Call::unspecified;
  uint64_t size = 0;
  int64_t lb = 0;
  int64_t extent = 0;
  std::vector<Run> runs;
  std::vector<TypeCount> signature;
  bool committed = false;
  bool truncated = false;
  bool operator==(const DatatypeDef&) const = default;
};

// The virtual topology of a communicator (smtrace.proto Topology).
enum class Topology : uint8_t { none = 0, cart = 1, graph = 2, dist_graph = 3 };
// Return "cart", "graph", "dist_graph" or "none".
std::string_view topology_name(Topology topology);

struct CommDef {
  uint32_t id = 0;
  std::vector<uint32_t> world_ranks;
  uint32_t parent = 0;
  bool is_group = false;
  bool inter = false;
  std::vector<uint32_t> remote_world_ranks;
  // A topology's neighbours of the defining rank, as ranks in the
  // communicator (k_proc_null for a missing Cartesian neighbour), in the
  // order of the blocks of a neighbourhood collective's buffers: the
  // members it receives from and those it sends to.
  Topology topology = Topology::none;
  std::vector<int32_t> sources;
  std::vector<int32_t> destinations;
  bool operator==(const CommDef&) const = default;
};

struct Module {
  uint32_t id = 0;
  std::string path;
  uint64_t base = 0;
  std::string build_id;  // raw bytes
  bool operator==(const Module&) const = default;
};

struct CallSite {
  uint32_t id = 0;
  uint32_t module = 0;
  uint64_t offset = 0;
  std::string function;
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  bool operator==(const CallSite&) const = default;
};

enum class ClockKind : uint8_t { unspecified = 0, monotonic = 1, realtime = 2 };

// RankHeader::thread_sync bits: which thread synchronization the tracer
// recorded as thread-family events (docs/trace-format.md "Thread events").
namespace thread_sync {
inline constexpr uint32_t pthreads = 1;  // pthread create/join, mutexes, rwlocks, spin locks, conditions, barriers, semaphores
inline constexpr uint32_t libgomp = 2;   // GCC's libgomp, through its GOMP_* entry points
inline constexpr uint32_t ompt = 4;      // an OpenMP runtime with OMPT (LLVM's libomp)
}  // namespace thread_sync

struct RankHeader {
  uint32_t format_version = k_format_version;
  uint32_t rank = 0;
  uint32_t world_size = 0;
  std::string host;
  uint32_t pid = 0;
  std::string mpi_library;
  uint32_t mpi_version = 0;
  ClockKind clock = ClockKind::monotonic;
  int64_t clock_origin_ns = 0;
  int64_t realtime_origin_ns = 0;
  std::string tracer_version;
  std::map<std::string, std::string> options;
  std::string executable;
  std::vector<std::string> argv;
  int32_t thread_level = 0;
  uint32_t chunk_bytes = 0;
  uint32_t thread_sync = 0;  // ThreadSync bits: what thread synchronization was recorded
  // Not read from the file: its header frame was lost and the reader
  // resynchronized on the chunks after it. Only rank and world size are
  // known (from the file name and the manifest: check_rank_header).
  bool recovered = false;
  bool operator==(const RankHeader&) const = default;
};

enum class TerminationKind : uint8_t {
  unspecified = 0,
  finalized = 1,
  signal = 2,
  aborted = 3,
  tracer_stopped = 4,
  exit_without_finalize = 5,
};

// Return "SIGSEGV" for 11 and the like (Linux numbering, as Termination.signal
// records it); "signal N" for a number without a name here.
std::string signal_name(int32_t signal);
// Return true for a signal that a process gets from outside when it is
// stopped (SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM,
// SIGXCPU, SIGXFSZ: the launcher tearing the job down, a time limit, a
// user), as opposed to one its own code raised (SIGSEGV, SIGABRT...).
bool signal_from_outside(int32_t signal);

struct Termination {
  TerminationKind kind = TerminationKind::unspecified;
  int32_t signal = 0;
  int64_t t = 0;
  std::string message;
  uint64_t last_seq = 0;
  uint64_t events = 0;
  uint64_t dropped = 0;
  // Threads whose last loads and stores (load/store runtime) could not be
  // written when tracing ended: the trace lacks some of their accesses.
  uint32_t accesses_lost = 0;
  bool operator==(const Termination&) const = default;
  // Return true when event `seq` was written after this record: a call
  // after MPI_Finalize, which the tracer appends to the closed trace
  // (tracer/handlers.hpp, record_after_finalize). A record that counts no
  // events (hand-made or imported without them) says nothing.
  bool precedes(uint64_t seq) const { return events > 0 && seq > last_seq; }
};

struct TracerNote {
  int64_t t = 0;
  std::string message;
  bool operator==(const TracerNote&) const = default;
};

struct Manifest {
  uint32_t format_version = k_format_version;
  uint32_t world_size = 0;
  std::string rank_file_pattern = "rank-{rank}.smt";
  std::string created_utc;
  std::string command;
  std::string tracer_version;
  std::string mpi_library;
  std::string job;
  bool operator==(const Manifest&) const = default;
};

// File names inside a trace directory.
inline constexpr std::string_view k_manifest_file = "manifest.json";
inline constexpr std::string_view k_symbols_file = "symbols.smt";
// Return "rank-<rank>.smt".
std::string rank_file_name(uint32_t rank);

}  // namespace smtrace::format
