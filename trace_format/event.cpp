// Call table lookups, all generated from calls.def so that the table stays
// the single list of calls.
#include "trace_format/event.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace smtrace::format {
namespace {

struct CallInfo {
  Call call;
  std::string_view id;        // "SEND"
  std::string_view mpi_name;  // "MPI_Send"
  std::string_view bare;      // "Send"; CUDA and thread calls go by this name
  Family family;
  bool blocks;
};

constexpr CallInfo k_calls[] = {
#define SMTRACE_CALL(ID, MpiName, number, family, blocking, ...) \
  {Call::MpiName, #ID, "MPI_" #MpiName, #MpiName, Family::family, (blocking) != 0},
#include "trace_format/calls.def"
#undef SMTRACE_CALL
};

// Annotations and captured accesses are not MPI calls: name them after
// smtrace (annotations after their C API).
constexpr std::string_view annotation_name(Call call) {
  if (call == Call::Annotate_read) return "smtrace_annotate_read";
  if (call == Call::Annotate_write) return "smtrace_annotate_write";
  if (call == Call::Load) return "smtrace_load";
  if (call == Call::Store) return "smtrace_store";
  if (call == Call::Buffer_modified) return "smtrace_buffer_modified";
  return {};
}

// k_calls's position of each call number (-1: none), so that find() is one
// load: the analyzer asks for every event, several times.
constexpr std::size_t k_max_number = [] {
  std::size_t max = 0;
  for (const CallInfo& info : k_calls) max = std::max(max, static_cast<std::size_t>(info.call));
  return max;
}();
constexpr std::array<int16_t, k_max_number + 1> k_position = [] {
  std::array<int16_t, k_max_number + 1> out{};
  for (int16_t& p : out) p = -1;
  for (std::size_t i = 0; i < std::size(k_calls); ++i) {
    const auto n = static_cast<std::size_t>(k_calls[i].call);
    if (out[n] < 0) out[n] = static_cast<int16_t>(i);
  }
  return out;
}();
static_assert(std::size(k_calls) < INT16_MAX);

const CallInfo* find(Call call) {
  const auto n = static_cast<std::size_t>(call);
  return n <= k_max_number && k_position[n] >= 0 ? &k_calls[static_cast<std::size_t>(k_position[n])] : nullptr;
}

// Compare ignoring case and underscores, so "Comm_split", "COMM_SPLIT" and
// "commsplit" all name the same call.
bool loose_equal(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (true) {
    while (i < a.size() && a[i] == '_') ++i;
    while (j < b.size() && b[j] == '_') ++j;
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[j]))) {
      return false;
    }
    ++i;
    ++j;
  }
}

std::string_view strip_prefix(std::string_view name, std::string_view prefix) {
  if (name.size() >= prefix.size() && loose_equal(name.substr(0, prefix.size()), prefix)) {
    return name.substr(prefix.size());
  }
  return name;
}

}  // namespace

std::string_view call_name(Call call) {
  if (std::string_view name = annotation_name(call); !name.empty()) return name;
  const CallInfo* info = find(call);
  if (!info) return "?";
  return info->family == Family::cuda || info->family == Family::thread ? info->bare : info->mpi_name;
}

std::optional<Call> call_from_name(std::string_view name) {
  if (name.empty()) return std::nullopt;
  std::string_view bare = strip_prefix(strip_prefix(name, "MPI_"), "smtrace_");
  for (const CallInfo& info : k_calls) {
    const std::string_view annotation = annotation_name(info.call);
    if (loose_equal(bare, info.id) || loose_equal(name, info.mpi_name) ||
        (!annotation.empty() && loose_equal(name, annotation)) ||
        ((info.family == Family::cuda || info.family == Family::thread) && loose_equal(name, info.bare))) {
      return info.call;
    }
  }
  return std::nullopt;
}

Family call_family(Call call) {
  const CallInfo* info = find(call);
  return info ? info->family : Family::none;
}

std::string_view family_name(Family family) {
  switch (family) {
    case Family::none: return "none";
    case Family::env: return "env";
    case Family::comm: return "comm";
    case Family::group: return "group";
    case Family::p2p: return "p2p";
    case Family::request: return "request";
    case Family::coll: return "coll";
    case Family::rma: return "rma";
    case Family::type: return "type";
    case Family::annotate: return "annotate";
    case Family::cuda: return "cuda";
    case Family::thread: return "thread";
  }
  return "?";
}

std::string_view basic_type_name(uint32_t id) {
  // BasicType of smtrace.proto, by value.
  static constexpr std::array<std::string_view, 61> k_names = {
      "MPI_DATATYPE_NULL", "MPI_CHAR", "MPI_SIGNED_CHAR", "MPI_UNSIGNED_CHAR", "MPI_BYTE",
      "MPI_SHORT", "MPI_UNSIGNED_SHORT", "MPI_INT", "MPI_UNSIGNED", "MPI_LONG",
      "MPI_UNSIGNED_LONG", "MPI_LONG_LONG", "MPI_UNSIGNED_LONG_LONG", "MPI_FLOAT", "MPI_DOUBLE",
      "MPI_LONG_DOUBLE", "MPI_WCHAR", "MPI_C_BOOL", "MPI_INT8_T", "MPI_INT16_T",
      "MPI_INT32_T", "MPI_INT64_T", "MPI_UINT8_T", "MPI_UINT16_T", "MPI_UINT32_T",
      "MPI_UINT64_T", "MPI_C_FLOAT_COMPLEX", "MPI_C_DOUBLE_COMPLEX", "MPI_C_LONG_DOUBLE_COMPLEX",
      "MPI_FLOAT_INT", "MPI_DOUBLE_INT", "MPI_LONG_INT", "MPI_2INT", "MPI_SHORT_INT",
      "MPI_LONG_DOUBLE_INT", "MPI_PACKED", "MPI_AINT", "MPI_OFFSET", "MPI_COUNT", "MPI_UB",
      "MPI_LB", "MPI_INTEGER", "MPI_REAL", "MPI_DOUBLE_PRECISION", "MPI_COMPLEX",
      "MPI_DOUBLE_COMPLEX", "MPI_LOGICAL", "MPI_CHARACTER", "MPI_2INTEGER", "MPI_2REAL",
      "MPI_2DOUBLE_PRECISION", "MPI_INTEGER1", "MPI_INTEGER2", "MPI_INTEGER4", "MPI_INTEGER8",
      "MPI_REAL4", "MPI_REAL8", "MPI_REAL16", "MPI_COMPLEX8", "MPI_COMPLEX16", "MPI_COMPLEX32"};
  return id < k_names.size() ? k_names[id] : std::string_view();
}

std::string_view topology_name(Topology topology) {
  switch (topology) {
    case Topology::none: return "none";
    case Topology::cart: return "cart";
    case Topology::graph: return "graph";
    case Topology::dist_graph: return "dist_graph";
  }
  return "?";
}

std::string_view memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::unspecified: return "unspecified";
    case MemoryKind::pageable: return "pageable";
    case MemoryKind::pinned: return "pinned";
    case MemoryKind::device: return "device";
    case MemoryKind::managed: return "managed";
  }
  return "?";
}

std::string_view copy_kind_name(CopyKind kind) {
  switch (kind) {
    case CopyKind::unspecified: return "unspecified";
    case CopyKind::host_to_host: return "HostToHost";
    case CopyKind::host_to_device: return "HostToDevice";
    case CopyKind::device_to_host: return "DeviceToHost";
    case CopyKind::device_to_device: return "DeviceToDevice";
    case CopyKind::inferred: return "Default";
  }
  return "?";
}

std::string_view arg_access_name(ArgAccess access) {
  switch (access) {
    case ArgAccess::unspecified: return "unspecified";
    case ArgAccess::read: return "read";
    case ArgAccess::write: return "write";
    case ArgAccess::read_write: return "read_write";
  }
  return "?";
}

std::string signal_name(int32_t signal) {
  switch (signal) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 5: return "SIGTRAP";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 10: return "SIGUSR1";
    case 11: return "SIGSEGV";
    case 12: return "SIGUSR2";
    case 13: return "SIGPIPE";
    case 14: return "SIGALRM";
    case 15: return "SIGTERM";
    case 24: return "SIGXCPU";
    case 25: return "SIGXFSZ";
    case 31: return "SIGSYS";
    default: return "signal " + std::to_string(signal);
  }
}

bool signal_from_outside(int32_t signal) {
  switch (signal) {
    case 1: case 2: case 3: case 9: case 13: case 14: case 15: case 24: case 25: return true;
    default: return false;
  }
}

bool call_blocks(Call call) {
  const CallInfo* info = find(call);
  return info && info->blocks;
}

bool call_known(Call call) { return find(call) != nullptr; }

std::string rank_file_name(uint32_t rank) {
  return "rank-" + std::to_string(rank) + ".smt";
}

}  // namespace smtrace::format
