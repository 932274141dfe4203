// Call table lookups, all generated from calls.def so that the table stays
// the single list of calls.
#include "trace_format/event.hpp"

#include <cctype>

namespace smtrace::format {
namespace {

struct CallInfo {
  Call call;
  std::string_view id;        // "SEND"
  std::string_view mpi_name;  // "MPI_Send"
  Family family;
  bool blocks;
};

constexpr CallInfo k_calls[] = {
#define SMTRACE_CALL(ID, MpiName, number, family, blocking) \
  {Call::MpiName, #ID, "MPI_" #MpiName, Family::family, (blocking) != 0},
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
  return {};
}

const CallInfo* find(Call call) {
  // The table is sorted by number (calls.def says so); a binary search keeps
  // this cheap in dump loops.
  std::size_t lo = 0, hi = std::size(k_calls);
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    if (k_calls[mid].call < call) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < std::size(k_calls) && k_calls[lo].call == call) return &k_calls[lo];
  // Fall back to a scan in case the table is ever edited out of order.
  for (const CallInfo& info : k_calls) {
    if (info.call == call) return &info;
  }
  return nullptr;
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
  return info ? info->mpi_name : std::string_view("?");
}

std::optional<Call> call_from_name(std::string_view name) {
  if (name.empty()) return std::nullopt;
  std::string_view bare = strip_prefix(strip_prefix(name, "MPI_"), "smtrace_");
  for (const CallInfo& info : k_calls) {
    const std::string_view annotation = annotation_name(info.call);
    if (loose_equal(bare, info.id) || loose_equal(name, info.mpi_name) ||
        (!annotation.empty() && loose_equal(name, annotation))) {
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
  }
  return "?";
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
