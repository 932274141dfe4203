// The OTF2 reader. Global definitions first (names are resolved once all
// are read: OTF2 does not promise strings before their users), then each
// location's events on its own, so that a damaged event file costs that
// location's rest and nothing else.
//
// An MPI region (an Enter/Leave pair of a region of the MPI paradigm whose
// name is a call smtrace knows) is one event; the MPI records inside it fill
// its fields. What OTF2 cannot say is taken from smtrace's attributes when
// the archive has them (our own exports) and otherwise left unknown, never
// guessed: a receive's posted source and tag become those of the message it
// matched (so it is not a wildcard), collectives have no type signature.
#include "exchange/otf2.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <variant>

#include <fmt/core.h>

#include "analyzer/footprint.hpp"
#include "exchange/otf2_calls.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/json.hpp"

namespace smtrace::exchange {

namespace fs = std::filesystem;
using format::Call;
using format::Event;
using namespace detail;

namespace {

// More ranks than this is not a trace we can hold in memory (an import
// builds the whole trace before writing it); the archive is refused.
constexpr uint64_t k_max_ranks = 1u << 18;
// Local ids of what OTF2 defines globally (docs/trace-format.md section 7).
constexpr uint32_t k_first_comm_id = 2;
constexpr uint32_t k_first_group_id = 1u << 24;
constexpr uint32_t k_unknown_comm = 0xFFFFFFF0u;
// Call-site ids: calling contexts from 1, user regions from here.
constexpr uint32_t k_region_site = 1u << 30;
constexpr uint32_t k_byte = 4;  // BasicType MPI_BYTE

// Collects the OTF2 library's error messages instead of letting it print
// them; installed for the duration of one import.
class ErrorCapture {
 public:
  ErrorCapture() { m_previous = OTF2_Error_RegisterCallback(&ErrorCapture::callback, this); }
  ~ErrorCapture() { OTF2_Error_RegisterCallback(m_previous, nullptr); }
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;
  // Return the last message and forget it.
  std::string take() { return std::exchange(m_last, {}); }

 private:
  static OTF2_ErrorCode callback(void* user, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                                 const char* format, va_list args) {
    auto* self = static_cast<ErrorCapture*>(user);
    char text[512] = {};
    if (format != nullptr) std::vsnprintf(text, sizeof text, format, args);
    self->m_last = fmt::format("{}{}{}", OTF2_Error_GetName(code), text[0] != '\0' ? ": " : "", text);
    return code;
  }
  OTF2_ErrorCallback m_previous = nullptr;
  std::string m_last;
};

std::string otf2_error(OTF2_ErrorCode code, ErrorCapture& capture) {
  std::string detail = capture.take();
  if (detail.empty()) detail = fmt::format("{} ({})", OTF2_Error_GetName(code), OTF2_Error_GetDescription(code));
  return detail;
}

struct Defs {
  std::unordered_map<OTF2_StringRef, std::string> strings;
  struct Region {
    OTF2_StringRef name;
    OTF2_Paradigm paradigm;
    OTF2_StringRef file;
    uint32_t line;
  };
  std::unordered_map<OTF2_RegionRef, Region> regions;
  struct Group {
    OTF2_GroupType type;
    std::vector<uint64_t> members;
  };
  std::map<OTF2_GroupRef, Group> groups;
  struct Comm {
    OTF2_StringRef name;
    OTF2_GroupRef group;
    OTF2_CommRef parent;
  };
  std::map<OTF2_CommRef, Comm> comms;
  struct Location {
    OTF2_LocationType type;
    OTF2_LocationGroupRef group;
    uint64_t events;  // the records its definition declares (OTF2's writer counts them; 0: not said)
  };
  std::map<OTF2_LocationRef, Location> locations;
  std::map<OTF2_LocationGroupRef, OTF2_SystemTreeNodeRef> location_groups;
  std::unordered_map<OTF2_SystemTreeNodeRef, OTF2_StringRef> nodes;
  std::unordered_map<OTF2_SourceCodeLocationRef, std::pair<OTF2_StringRef, uint32_t>> scls;
  struct Context {
    OTF2_RegionRef region;
    OTF2_SourceCodeLocationRef scl;
    OTF2_CallingContextRef parent;
  };
  std::unordered_map<OTF2_CallingContextRef, Context> contexts;
  std::map<OTF2_AttributeRef, std::pair<OTF2_StringRef, OTF2_Type>> attributes;
  std::unordered_map<OTF2_RmaWinRef, OTF2_CommRef> windows;
  uint64_t resolution = 0;
  uint64_t offset = 0;

  const std::string& string(OTF2_StringRef ref) const {
    static const std::string k_none;
    auto it = strings.find(ref);
    return it == strings.end() ? k_none : it->second;
  }
};

// The global definition callbacks: store, resolve later.
namespace def {
Defs& of(void* user) { return *static_cast<Defs*>(user); }
OTF2_CallbackCode clock(void* u, uint64_t resolution, uint64_t offset, uint64_t, uint64_t) {
  of(u).resolution = resolution;
  of(u).offset = offset;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode string(void* u, OTF2_StringRef self, const char* text) {
  of(u).strings[self] = text != nullptr ? text : "";
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
                         OTF2_RegionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef file,
                         uint32_t line, uint32_t) {
  of(u).regions[self] = {name, paradigm, file, line};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm,
                        OTF2_GroupFlag, uint32_t count, const uint64_t* members) {
  Defs::Group& g = of(u).groups[self];
  g.type = type;
  if (members != nullptr) g.members.assign(members, members + count);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent,
                       OTF2_CommFlag) {
  of(u).comms[self] = {name, group, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode location(void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType type, uint64_t events,
                           OTF2_LocationGroupRef group) {
  of(u).locations[self] = {type, group, events};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef, OTF2_LocationGroupType,
                                 OTF2_SystemTreeNodeRef parent, OTF2_LocationGroupRef) {
  of(u).location_groups[self] = parent;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef,
                       OTF2_SystemTreeNodeRef) {
  of(u).nodes[self] = name;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode scl(void* u, OTF2_SourceCodeLocationRef self, OTF2_StringRef file, uint32_t line) {
  of(u).scls[self] = {file, line};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode context(void* u, OTF2_CallingContextRef self, OTF2_RegionRef region, OTF2_SourceCodeLocationRef scl,
                          OTF2_CallingContextRef parent) {
  of(u).contexts[self] = {region, scl, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode attribute(void* u, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_Type type) {
  of(u).attributes[self] = {name, type};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode window(void* u, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm, OTF2_RmaWinFlag) {
  of(u).windows[self] = comm;
  return OTF2_CALLBACK_SUCCESS;
}
}  // namespace def

// An event being built from an MPI region and the records inside it.
struct Building {
  Event e;
  uint32_t rank = 0;
  bool has_seq = false;
  uint64_t order = 0;          // reading order, for a stable seq when there is none
  bool envelope_attr = false;  // peer/tag came from smtrace's attributes
  bool comm_attr = false;
  bool datatype_attr = false;
  bool target_attr = false;  // target count or datatype from smtrace's attributes
  uint64_t context = OTF2_UNDEFINED_CALLING_CONTEXT;  // smtrace::call_site
  std::vector<uint32_t> user_frames;                  // user regions open around it, innermost first
};

struct Open {
  OTF2_RegionRef region;
  std::optional<std::size_t> building;  // index into Importer::m_built, for MPI regions
};

struct LocationState {
  uint32_t rank = 0;
  uint32_t thread = 0;
  std::vector<Open> stack;
};

struct RankState {
  std::set<uint32_t> threads;
  std::optional<format::Termination> end;
  int64_t finalize_left = -1;               // when MPI_Finalize returned (ns), -1: never
  std::unordered_map<uint64_t, std::size_t> posted;      // request -> last building that posted it
  std::unordered_map<uint64_t, std::size_t> persistent;  // request -> *_init building
  std::set<uint32_t> groups;                // OTF2 groups used by RmaGroupSync
  std::string host;
  std::optional<int32_t> thread_level;      // smtrace::thread_level of its MPI_Init
};

class Importer {
 public:
  Importer(const Defs& defs, std::string archive) : m_defs(defs), m_archive(std::move(archive)) {
    // An attribute the archive does not define is looked up by a reference
    // that no list holds (not 0, another attribute's).
    for (OTF2_AttributeRef& ref : m_attr) ref = OTF2_UNDEFINED_ATTRIBUTE;
    for (const auto& [ref, attribute] : defs.attributes) {
      const std::string& name = defs.string(attribute.first);
      for (std::size_t i = 0; i < k_attribute_count; ++i) {
        if (k_attributes[i].name == name && k_attributes[i].type == attribute.second) {
          m_attr[i] = ref;
          m_smtrace_attributes = true;
        }
      }
    }
  }

  // Map locations to ranks and threads, communicators to local ids. Return
  // an error when the archive has no usable MPI locations.
  std::string layout(std::vector<format::Problem>& problems) {
    const Defs::Group* locations = nullptr;
    for (const auto& [ref, group] : m_defs.groups) {
      if (group.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
        locations = &group;
        break;
      }
    }
    std::map<OTF2_LocationGroupRef, uint32_t> rank_of_group;
    if (locations != nullptr) {
      if (locations->members.size() > k_max_ranks) return fmt::format("{} MPI ranks: too many", locations->members.size());
      for (std::size_t i = 0; i < locations->members.size(); ++i) {
        auto it = m_defs.locations.find(locations->members[i]);
        if (it == m_defs.locations.end()) {
          problems.push_back(problem(fmt::format("MPI rank {} is location {}, which is not defined", i,
                                                 locations->members[i])));
          continue;
        }
        rank_of_group.emplace(it->second.group, static_cast<uint32_t>(i));
        m_master[locations->members[i]] = static_cast<uint32_t>(i);
      }
      m_world_size = static_cast<uint32_t>(locations->members.size());
    } else {
      // No MPI communication locations: a rank per process in definition order.
      for (const auto& [ref, node] : m_defs.location_groups) {
        if (rank_of_group.size() >= k_max_ranks) return "too many processes";
        rank_of_group.emplace(ref, static_cast<uint32_t>(rank_of_group.size()));
      }
      m_world_size = static_cast<uint32_t>(rank_of_group.size());
    }
    if (m_world_size == 0) return "the archive defines no MPI rank (no COMM_LOCATIONS group, no process)";
    m_ranks.assign(m_world_size, {});
    std::map<uint32_t, std::vector<OTF2_LocationRef>> by_rank;
    for (const auto& [ref, location] : m_defs.locations) {
      if (location.type != OTF2_LOCATION_TYPE_CPU_THREAD) continue;
      auto rank = rank_of_group.find(location.group);
      if (rank == rank_of_group.end()) continue;
      by_rank[rank->second].push_back(ref);
    }
    for (auto& [rank, refs] : by_rank) {
      // The MPI location is thread 0, the others follow in id order.
      std::stable_partition(refs.begin(), refs.end(), [&](OTF2_LocationRef l) { return m_master.count(l) != 0; });
      for (std::size_t t = 0; t < refs.size(); ++t) m_locations[refs[t]] = {rank, static_cast<uint32_t>(t), {}};
      auto group = m_defs.locations.at(refs.front()).group;
      if (auto node = m_defs.location_groups.find(group); node != m_defs.location_groups.end()) {
        if (auto name = m_defs.nodes.find(node->second); name != m_defs.nodes.end()) {
          m_ranks[rank].host = m_defs.string(name->second);
        }
      }
    }
    layout_comms(problems);
    return {};
  }

  std::vector<OTF2_LocationRef> locations() const {
    std::vector<OTF2_LocationRef> out;
    for (const auto& [ref, state] : m_locations) out.push_back(ref);
    return out;
  }
  // Return "rank R thread T" for a problem about `location`.
  std::optional<uint32_t> rank_of(OTF2_LocationRef location) const {
    auto it = m_locations.find(location);
    return it == m_locations.end() ? std::nullopt : std::optional<uint32_t>(it->second.rank);
  }

  // --- event callbacks -------------------------------------------------------

  void enter(OTF2_LocationRef location, OTF2_TimeStamp time, OTF2_AttributeList* attributes, OTF2_RegionRef region) {
    LocationState* state = state_of(location);
    if (state == nullptr) return;
    if (!m_defs.regions.contains(region)) m_undefined_regions.try_emplace(region, location);
    const std::optional<Call> call = mpi_call(region);
    if (!call) {
      state->stack.push_back({region, std::nullopt});
      return;
    }
    Building b;
    b.rank = state->rank;
    b.order = m_built.size();
    b.e.call = *call;
    b.e.thread = state->thread;
    b.e.t_start = ns(time);
    b.e.pending = true;
    b.e.comm = k_unknown_comm;
    read_attributes(b, attributes);
    for (auto open = state->stack.rbegin(); open != state->stack.rend(); ++open) {
      if (!open->building) b.user_frames.push_back(open->region);
    }
    state->stack.push_back({region, m_built.size()});
    m_built.push_back(std::move(b));
    if (shape(*call) == Shape::persistent && m_built.back().e.request != 0) {
      m_ranks[state->rank].persistent[m_built.back().e.request] = m_built.size() - 1;
    }
  }

  void leave(OTF2_LocationRef location, OTF2_TimeStamp time, OTF2_RegionRef region) {
    LocationState* state = state_of(location);
    if (state == nullptr) return;
    if (state->stack.empty()) {
      note(location, fmt::format("Leave of region {} without an Enter", region_name(region)));
      return;
    }
    if (state->stack.back().region != region) {
      note(location, fmt::format("Leave of region {} inside region {}", region_name(region),
                                 region_name(state->stack.back().region)));
    }
    const Open open = state->stack.back();
    state->stack.pop_back();
    if (!open.building) return;
    Building& b = m_built[*open.building];
    b.e.pending = false;
    const int64_t end = ns(time);
    b.e.duration = static_cast<uint64_t>(std::max<int64_t>(0, end - b.e.t_start));
    if (b.e.call == Call::Finalize) m_ranks[b.rank].finalize_left = end;
  }

  void send(OTF2_LocationRef location, uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length,
            std::optional<uint64_t> request) {
    Building* b = current(location, "MpiSend/MpiIsend");
    if (b == nullptr) return;
    const Shape s = shape(b->e.call);
    if (s == Shape::start && request) {
      started(*b, *request, /*send=*/true, receiver, comm, tag, length);
      return;
    }
    set_envelope(*b, static_cast<int32_t>(receiver), comm, static_cast<int32_t>(tag));
    if (!b->datatype_attr) {
      b->e.count = static_cast<int64_t>(length);
      b->e.datatype = k_byte;
    }
    if (request) {
      b->e.request = *request;
      m_ranks[b->rank].posted[*request] = index_of(*b);
    }
  }

  void irecv_request(OTF2_LocationRef location, uint64_t request) {
    Building* b = current(location, "MpiIrecvRequest");
    if (b == nullptr) return;
    if (shape(b->e.call) == Shape::start) {
      started(*b, request, /*send=*/false, 0, OTF2_UNDEFINED_COMM, 0, 0);
      return;
    }
    b->e.request = request;
    m_ranks[b->rank].posted[request] = index_of(*b);
  }

  void recv(OTF2_LocationRef location, uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
    Building* b = current(location, "MpiRecv");
    if (b == nullptr) return;
    format::Status status = received(sender, tag, length, b->datatype_attr ? b->e.datatype : k_byte);
    if (shape(b->e.call) == Shape::sendrecv) {
      b->e.recv_peer = status.source;
      b->e.recv_tag = status.tag;
      if (!b->datatype_attr) b->e.recv_datatype = k_byte;
      b->e.recv_count = status.count.value_or(0);
    } else {
      set_envelope(*b, static_cast<int32_t>(sender), comm, static_cast<int32_t>(tag));
      if (!b->datatype_attr) {
        b->e.count = static_cast<int64_t>(length);
        b->e.datatype = k_byte;
      }
    }
    b->e.status = std::move(status);
  }

  // A request completed (or tested, or cancelled) inside a Wait/Test region.
  enum class Done : uint8_t { isend, irecv, collective, tested, cancelled };
  void completion(OTF2_LocationRef location, uint64_t request, Done done, uint32_t sender = 0,
                  OTF2_CommRef comm = OTF2_UNDEFINED_COMM, uint32_t tag = 0, uint64_t length = 0,
                  uint32_t root = OTF2_COLLECTIVE_ROOT_NONE) {
    Building* b = current(location, "a request completion");
    if (b == nullptr) return;
    if (shape(b->e.call) != Shape::completion) {
      note(location, fmt::format("request completion record inside {}", format::call_name(b->e.call)));
      return;
    }
    Event& e = b->e;
    const bool single = e.call == Call::Wait || e.call == Call::Test;
    auto at = std::find(e.requests.begin(), e.requests.end(), request);
    if (single) {
      if (e.request == 0) e.request = request;
    } else if (at == e.requests.end()) {
      e.requests.push_back(request);
      at = e.requests.end() - 1;
    }
    if (done == Done::tested) return;
    format::CompletedRequest c;
    c.index = single ? 0 : static_cast<uint32_t>(at - e.requests.begin());
    c.request = request;
    Building* origin = posted(b->rank, request);
    if (done == Done::cancelled) c.status.cancelled = true;
    if (done == Done::irecv) {
      c.status = received(sender, tag, length, origin != nullptr && origin->datatype_attr ? origin->e.datatype : k_byte);
      if (origin != nullptr) {
        set_envelope(*origin, static_cast<int32_t>(sender), comm, static_cast<int32_t>(tag));
        if (!origin->datatype_attr) origin->e.datatype = k_byte;
      }
    }
    if (done == Done::collective && origin != nullptr) {
      set_collective(*origin, comm, root);
    }
    e.completed.push_back(std::move(c));
  }

  void collective_end(OTF2_LocationRef location, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root) {
    Building* b = current(location, "MpiCollectiveEnd");
    if (b == nullptr) return;
    // Score-P also writes collective records around communicator creation
    // (CREATE_HANDLE): only the collectives themselves carry a root.
    if (collective_op(b->e.call) != op) return;
    set_collective(*b, comm, root);
  }

  void icollective_request(OTF2_LocationRef location, uint64_t request) {
    Building* b = current(location, "NonBlockingCollectiveRequest");
    if (b == nullptr) return;
    b->e.request = request;
    m_ranks[b->rank].posted[request] = index_of(*b);
  }

  void window(OTF2_LocationRef location, OTF2_RmaWinRef win, std::optional<uint32_t> remote = std::nullopt,
              std::optional<OTF2_LockType> lock = std::nullopt) {
    Building* b = current(location, "an RMA record");
    if (b == nullptr) return;
    b->e.window = win + 1;
    if (shape(b->e.call) == Shape::win_create && !b->comm_attr) {
      auto it = m_defs.windows.find(win);
      if (it != m_defs.windows.end()) b->e.comm = local_comm(it->second);
    }
    if (remote && *remote != OTF2_UNDEFINED_UINT32 && !b->envelope_attr) b->e.peer = static_cast<int32_t>(*remote);
    if (lock) b->e.lock_type = *lock == OTF2_LOCK_SHARED ? format::LockType::shared : format::LockType::exclusive;
  }

  void rma_transfer(OTF2_LocationRef location, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes) {
    window(location, win, remote);
    Building* b = current(location, "an RMA record");
    if (b != nullptr && !b->datatype_attr) {
      b->e.count = static_cast<int64_t>(bytes);
      b->e.datatype = k_byte;
    }
  }

  void group_sync(OTF2_LocationRef location, OTF2_RmaWinRef win, OTF2_GroupRef group) {
    window(location, win);
    Building* b = current(location, "RmaGroupSync");
    if (b == nullptr) return;
    b->e.group = k_first_group_id + group;
    m_ranks[b->rank].groups.insert(group);
  }

  void program_end(OTF2_LocationRef location, OTF2_TimeStamp time, OTF2_AttributeList* attributes, int64_t status) {
    LocationState* state = state_of(location);
    if (state == nullptr) return;
    format::Termination end;
    end.t = ns(time);
    uint8_t kind = 0;
    if (m_smtrace_attributes && OTF2_AttributeList_GetUint8(attributes, attr(Attr::termination), &kind) == OTF2_SUCCESS &&
        kind <= static_cast<uint8_t>(format::TerminationKind::exit_without_finalize)) {
      end.kind = static_cast<format::TerminationKind>(kind);
      if (end.kind == format::TerminationKind::signal && status > 128) end.signal = static_cast<int32_t>(status - 128);
    } else if (status > 128 && status < 128 + 65) {
      end.kind = format::TerminationKind::signal;
      end.signal = static_cast<int32_t>(status - 128);
    } else {
      end.kind = format::TerminationKind::exit_without_finalize;  // finalized, if MPI_Finalize returned (finish())
    }
    m_ranks[state->rank].end = end;
  }

  // Return the error for events that entered regions the global definitions
  // lack (a valid archive defines every region it refers to: the definitions
  // were cut short or damaged), or an empty string.
  std::string undefined_regions() const {
    if (m_undefined_regions.empty()) return {};
    const auto& [region, location] = *m_undefined_regions.begin();
    return fmt::format("events refer to {} region(s) the global definitions do not define (region {} first, at location {}): "
                       "the definitions are truncated or damaged; those calls are left out",
                       m_undefined_regions.size(), region, location);
  }

  void note(OTF2_LocationRef location, std::string message) {
    if (m_notes >= 20) return;  // enough to show what is wrong
    if (++m_notes == 20) message += " (further such problems not listed)";
    format::Problem p = problem(std::move(message));
    p.severity = format::Problem::Severity::warning;
    p.rank = rank_of(location);
    m_problems.push_back(std::move(p));
  }

  // --- the trace -------------------------------------------------------------

  format::Trace finish(const fs::path& out, format::ContentSet& lacks) {
    // (The import makes no CommDef topology.)
    lacks = content_bit(format::Content::buffers) | content_bit(format::Content::topologies);
    // The thread level is known when every rank's MPI_Init carried it
    // (archives smtrace exported); the check that reads it is skipped otherwise.
    for (uint32_t r = 0; r < m_world_size; ++r) {
      if (!m_ranks[r].thread_level) lacks |= content_bit(format::Content::thread_level);
    }
    if (!m_smtrace_attributes) {
      lacks |= content_bit(format::Content::receive_envelope) | content_bit(format::Content::type_signatures);
    }
    format::Trace trace;
    trace.dir = out;
    trace.has_manifest = true;
    trace.manifest.world_size = m_world_size;
    trace.manifest.command = fmt::format("smtrace import-otf2 {}", m_archive);
    trace.manifest.tracer_version = fmt::format("OTF2 import (smtrace {})", SMTRACE_VERSION);
    trace.ranks.resize(m_world_size);
    std::vector<std::vector<std::size_t>> per_rank(m_world_size);
    for (std::size_t i = 0; i < m_built.size(); ++i) per_rank[m_built[i].rank].push_back(i);
    std::set<uint32_t> with_locations;
    for (const auto& [ref, state] : m_locations) with_locations.insert(state.rank);
    for (uint32_t r = 0; r < m_world_size; ++r) {
      if (!with_locations.contains(r)) continue;  // a rank the archive has no events for
      format::RankTrace& rank = trace.ranks[r];
      rank.present = true;
      rank.header.rank = r;
      rank.header.world_size = m_world_size;
      rank.header.host = m_ranks[r].host;
      rank.header.thread_level = m_ranks[r].thread_level.value_or(0);
      rank.header.clock = format::ClockKind::monotonic;
      rank.header.tracer_version = trace.manifest.tracer_version;
      rank.header.options[std::string(format::k_imported_option)] = "otf2:" + m_archive;
      format::set_lacks(rank.header, lacks);
      add_comms(rank, r);
      number_events(per_rank[r]);
      for (std::size_t i : per_rank[r]) {
        Building& b = m_built[i];
        b.e.site = site(rank, b);
        // Calls without a communicator keep the default; an MPI call whose
        // communicator is unknown keeps an id no CommDef has.
        if (b.e.comm == k_unknown_comm && !uses_comm(b.e.call)) b.e.comm = 0;
        // An RMA call's target buffer, where no attribute said it: the
        // origin's (in bytes where OTF2 gave only its size), as MPI requires
        // the two signatures to match (MPI-3.1 section 11.3): nothing to compare.
        if (!b.target_attr && format::call_traits(b.e.call).role == format::Role::rma_comm) {
          b.e.target_count = b.e.count;
          b.e.target_datatype = b.e.datatype;
        }
        rank.events.push_back(std::move(b.e));
      }
      std::sort(rank.events.begin(), rank.events.end(), [](const Event& a, const Event& b) { return a.seq < b.seq; });
      RankState& state = m_ranks[r];
      if (state.finalize_left >= 0) {
        format::Termination end = state.end.value_or(format::Termination{});
        end.kind = format::TerminationKind::finalized;
        end.t = std::max(end.t, state.finalize_left);
        state.end = end;
      }
      if (state.end) {
        state.end->events = rank.events.size();
        state.end->last_seq = rank.events.empty() ? 0 : rank.events.back().seq;
        rank.end = state.end;
      }
    }
    return trace;
  }

  const std::vector<format::Problem>& problems() const { return m_problems; }
  std::vector<format::Problem>& problems() { return m_problems; }
  uint32_t world_size() const { return m_world_size; }
  uint64_t events() const { return m_built.size(); }

 private:
  format::Problem problem(std::string message) const {
    format::Problem p;
    p.file = m_archive;
    p.message = std::move(message);
    return p;
  }

  LocationState* state_of(OTF2_LocationRef location) {
    auto it = m_locations.find(location);
    return it == m_locations.end() ? nullptr : &it->second;
  }

  std::string region_name(OTF2_RegionRef region) const {
    auto it = m_defs.regions.find(region);
    return it == m_defs.regions.end() ? fmt::format("#{}", region) : m_defs.string(it->second.name);
  }

  // Return the call of an MPI region: MPI paradigm (or an unknown one) and
  // the name of a call smtrace knows, spelled as MPI spells it.
  std::optional<Call> mpi_call(OTF2_RegionRef region) {
    auto cached = m_region_calls.find(region);
    if (cached != m_region_calls.end()) return cached->second;
    std::optional<Call> call;
    auto it = m_defs.regions.find(region);
    if (it != m_defs.regions.end()) {
      const std::string& name = m_defs.string(it->second.name);
      const bool mpi_paradigm = it->second.paradigm == OTF2_PARADIGM_MPI || it->second.paradigm == OTF2_PARADIGM_UNKNOWN;
      if (mpi_paradigm && name.starts_with("MPI_")) {
        call = format::call_from_name(name);
        if (call && (format::call_family(*call) == format::Family::cuda ||
                     format::call_family(*call) == format::Family::annotate ||
                     format::call_traits(*call).role == format::Role::outside)) {
          call.reset();
        }
      }
    }
    m_region_calls.emplace(region, call);
    return call;
  }

  int64_t ns(OTF2_TimeStamp time) const {
    const uint64_t since = time >= m_defs.offset ? time - m_defs.offset : 0;
    if (m_defs.resolution == 1000000000 || m_defs.resolution == 0) {
      return static_cast<int64_t>(std::min<uint64_t>(since, std::numeric_limits<int64_t>::max()));
    }
    const long double value = static_cast<long double>(since) * 1e9L / static_cast<long double>(m_defs.resolution);
    return value >= static_cast<long double>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(value);
  }

  OTF2_AttributeRef attr(Attr a) const { return m_attr[static_cast<std::size_t>(a)]; }

  void read_attributes(Building& b, OTF2_AttributeList* list) {
    if (!m_smtrace_attributes || list == nullptr) return;
    uint64_t u64 = 0;
    int64_t i64 = 0;
    int32_t i32 = 0;
    uint32_t u32 = 0;
    OTF2_CommRef comm = 0;
    OTF2_CallingContextRef context = 0;
    if (OTF2_AttributeList_GetUint64(list, attr(Attr::seq), &u64) == OTF2_SUCCESS) {
      b.e.seq = u64;
      b.has_seq = true;
    }
    if (OTF2_AttributeList_GetCallingContextRef(list, attr(Attr::call_site), &context) == OTF2_SUCCESS) {
      b.context = context;
    }
    if (OTF2_AttributeList_GetCommRef(list, attr(Attr::comm), &comm) == OTF2_SUCCESS) {
      b.e.comm = local_comm(comm);
      b.comm_attr = true;
    }
    if (OTF2_AttributeList_GetInt32(list, attr(Attr::peer), &i32) == OTF2_SUCCESS) {
      b.e.peer = i32;
      b.envelope_attr = true;
    }
    if (OTF2_AttributeList_GetInt32(list, attr(Attr::tag), &i32) == OTF2_SUCCESS) {
      b.e.tag = i32;
      b.envelope_attr = true;
    }
    if (OTF2_AttributeList_GetInt64(list, attr(Attr::count), &i64) == OTF2_SUCCESS) b.e.count = i64;
    if (OTF2_AttributeList_GetUint32(list, attr(Attr::datatype), &u32) == OTF2_SUCCESS &&
        u32 < format::k_first_derived_id) {
      b.e.datatype = u32;
      b.datatype_attr = true;
    }
    if (OTF2_AttributeList_GetUint32(list, attr(Attr::op), &u32) == OTF2_SUCCESS) b.e.op = u32;
    OTF2_RmaWinRef win = 0;
    if (OTF2_AttributeList_GetRmaWinRef(list, attr(Attr::window), &win) == OTF2_SUCCESS) b.e.window = win + 1;
    if (OTF2_AttributeList_GetInt64(list, attr(Attr::target_count), &i64) == OTF2_SUCCESS) {
      b.e.target_count = i64;
      b.target_attr = true;
    }
    if (OTF2_AttributeList_GetUint32(list, attr(Attr::target_datatype), &u32) == OTF2_SUCCESS &&
        u32 < format::k_first_derived_id) {
      b.e.target_datatype = u32;
      b.target_attr = true;
    }
    if (OTF2_AttributeList_GetUint64(list, attr(Attr::request), &u64) == OTF2_SUCCESS) b.e.request = u64;
    uint8_t u8 = 0;
    if (OTF2_AttributeList_GetUint8(list, attr(Attr::thread_level), &u8) == OTF2_SUCCESS && u8 <= 3 &&
        b.rank < m_ranks.size()) {
      m_ranks[b.rank].thread_level = u8;
    }
  }

  Building* current(OTF2_LocationRef location, std::string_view record) {
    LocationState* state = state_of(location);
    if (state == nullptr) return nullptr;
    for (auto open = state->stack.rbegin(); open != state->stack.rend(); ++open) {
      if (open->building) return &m_built[*open->building];
    }
    note(location, fmt::format("{} record outside any MPI region: ignored", record));
    return nullptr;
  }
  std::size_t index_of(const Building& b) const { return static_cast<std::size_t>(&b - m_built.data()); }
  Building* posted(uint32_t rank, uint64_t request) {
    auto it = m_ranks[rank].posted.find(request);
    return it == m_ranks[rank].posted.end() ? nullptr : &m_built[it->second];
  }

  void set_envelope(Building& b, int32_t peer, OTF2_CommRef comm, int32_t tag) {
    if (!b.comm_attr && comm != OTF2_UNDEFINED_COMM) b.e.comm = local_comm(comm);
    if (b.envelope_attr) return;
    b.e.peer = peer;
    b.e.tag = tag;
  }

  void set_collective(Building& b, OTF2_CommRef comm, uint32_t root) {
    if (!b.comm_attr && comm != OTF2_UNDEFINED_COMM) b.e.comm = local_comm(comm);
    if (b.envelope_attr) return;
    const std::optional<OTF2_CollectiveOp> op = collective_op(b.e.call);
    const bool rooted = op && (*op == OTF2_COLLECTIVE_OP_BCAST || *op == OTF2_COLLECTIVE_OP_GATHER ||
                               *op == OTF2_COLLECTIVE_OP_GATHERV || *op == OTF2_COLLECTIVE_OP_SCATTER ||
                               *op == OTF2_COLLECTIVE_OP_SCATTERV || *op == OTF2_COLLECTIVE_OP_REDUCE);
    if (!rooted || root == OTF2_COLLECTIVE_ROOT_NONE) return;
    if (root == OTF2_COLLECTIVE_ROOT_SELF) b.e.peer = format::k_root;
    else if (root == OTF2_COLLECTIVE_ROOT_THIS_GROUP) b.e.peer = format::k_proc_null;
    else b.e.peer = static_cast<int32_t>(root);
  }

  format::Status received(uint32_t sender, uint32_t tag, uint64_t length, uint32_t datatype) const {
    format::Status status;
    status.source = static_cast<int32_t>(sender);
    status.tag = static_cast<int32_t>(tag);
    const uint64_t size = datatype == k_byte ? 1 : analyzer::basic_type_size(datatype);
    status.count = static_cast<int64_t>(size > 0 ? length / size : length);
    return status;
  }

  // A persistent request started: the *_init event gets its request (and,
  // without smtrace's attributes, its envelope); a Start of a request whose
  // *_init is not known (Score-P writes nothing at *_init) stands for the
  // non-blocking call it starts.
  void started(Building& b, uint64_t request, bool send, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
               uint64_t length) {
    RankState& rank = m_ranks[b.rank];
    if (b.e.call == Call::Start) b.e.request = request;
    else if (std::find(b.e.requests.begin(), b.e.requests.end(), request) == b.e.requests.end()) b.e.requests.push_back(request);
    auto init = rank.persistent.find(request);
    if (init != rank.persistent.end()) {
      Building& i = m_built[init->second];
      if (send) set_envelope(i, static_cast<int32_t>(receiver), comm, static_cast<int32_t>(tag));
      rank.posted[request] = init->second;
      return;
    }
    if (b.e.call != Call::Start) {
      rank.posted[request] = index_of(b);
      return;
    }
    b.e.call = send ? Call::Isend : Call::Irecv;
    if (send) {
      set_envelope(b, static_cast<int32_t>(receiver), comm, static_cast<int32_t>(tag));
      if (!b.datatype_attr) {
        b.e.count = static_cast<int64_t>(length);
        b.e.datatype = k_byte;
      }
    }
    rank.posted[request] = index_of(b);
  }

  static bool uses_comm(Call call) {
    const format::Family family = format::call_family(call);
    return family == format::Family::p2p || family == format::Family::coll || family == format::Family::comm ||
           shape(call) == Shape::win_create || call == Call::Abort;
  }

  // --- communicators -----------------------------------------------------------

  void layout_comms(std::vector<format::Problem>& problems) {
    std::optional<OTF2_CommRef> world;
    for (const auto& [ref, comm] : m_defs.comms) {
      if (m_defs.string(comm.name) == "MPI_COMM_WORLD") {
        world = ref;
        break;
      }
    }
    for (const auto& [ref, comm] : m_defs.comms) {
      auto group = m_defs.groups.find(comm.group);
      if (group == m_defs.groups.end()) {
        problems.push_back(problem(fmt::format("communicator {} names group {}, which is not defined", ref, comm.group)));
        continue;
      }
      if (group->second.type == OTF2_GROUP_TYPE_COMM_SELF) {
        m_comm_ids[ref] = format::k_comm_self;
        continue;
      }
      const auto& members = group->second.members;
      bool whole = members.size() == m_world_size;
      for (std::size_t i = 0; whole && i < members.size(); ++i) whole = members[i] == i;
      if (!world && whole && comm.parent == OTF2_UNDEFINED_COMM) world = ref;
      if (world && *world == ref) {
        m_comm_ids[ref] = format::k_comm_world;
        continue;
      }
      if (ref > std::numeric_limits<uint32_t>::max() - k_first_comm_id - 16) continue;
      m_comm_ids[ref] = k_first_comm_id + ref;
    }
  }

  uint32_t local_comm(OTF2_CommRef comm) const {
    auto it = m_comm_ids.find(comm);
    return it == m_comm_ids.end() ? k_unknown_comm : it->second;
  }

  std::vector<uint32_t> world_ranks(const std::vector<uint64_t>& members) const {
    std::vector<uint32_t> out;
    for (uint64_t m : members) {
      if (m >= m_world_size) return {};
      out.push_back(static_cast<uint32_t>(m));
    }
    return out;
  }

  void add_comms(format::RankTrace& rank, uint32_t r) {
    for (const auto& [ref, id] : m_comm_ids) {
      if (id == format::k_comm_world || id == format::k_comm_self) continue;
      const Defs::Comm& comm = m_defs.comms.at(ref);
      const std::vector<uint32_t> members = world_ranks(m_defs.groups.at(comm.group).members);
      if (std::find(members.begin(), members.end(), r) == members.end()) continue;
      format::CommDef def;
      def.id = id;
      def.world_ranks = members;
      def.parent = comm.parent == OTF2_UNDEFINED_COMM ? format::k_comm_world : local_comm(comm.parent);
      rank.comms.emplace(id, std::move(def));
    }
    for (uint32_t group : m_ranks[r].groups) {
      auto it = m_defs.groups.find(group);
      if (it == m_defs.groups.end()) continue;
      format::CommDef def;
      def.id = k_first_group_id + group;
      def.is_group = true;
      def.world_ranks = world_ranks(it->second.members);
      rank.comms.emplace(def.id, std::move(def));
    }
  }

  // --- numbering and call sites ------------------------------------------------

  // Events keep smtrace's numbers when every one of the rank has one (and
  // they are distinct); otherwise they are numbered by start time.
  void number_events(std::vector<std::size_t>& indices) {
    std::set<uint64_t> seqs;
    bool keep = true;
    for (std::size_t i : indices) keep = keep && m_built[i].has_seq && seqs.insert(m_built[i].e.seq).second;
    if (keep) return;
    std::stable_sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
      const Event& x = m_built[a].e;
      const Event& y = m_built[b].e;
      return x.t_start != y.t_start ? x.t_start < y.t_start : m_built[a].order < m_built[b].order;
    });
    for (std::size_t k = 0; k < indices.size(); ++k) m_built[indices[k]].e.seq = k;
  }

  // Return the site id of `b` in `rank`, defining the sites it needs: its
  // calling context and the contexts above it (as the stack), or else the
  // user regions open around it.
  uint32_t site(format::RankTrace& rank, Building& b) {
    if (b.context != OTF2_UNDEFINED_CALLING_CONTEXT && m_defs.contexts.count(b.context) != 0) {
      const uint32_t id = context_site(rank, b.context);
      std::set<uint64_t> seen{b.context};
      for (auto parent = m_defs.contexts.at(b.context).parent;
           parent != OTF2_UNDEFINED_CALLING_CONTEXT && m_defs.contexts.count(parent) != 0 && seen.insert(parent).second &&
           b.e.stack.size() < 64;
           parent = m_defs.contexts.at(parent).parent) {
        b.e.stack.push_back(context_site(rank, parent));
      }
      return id;
    }
    if (b.user_frames.empty()) return 0;
    const uint32_t id = region_site(rank, b.user_frames.front());
    for (std::size_t k = 1; k < b.user_frames.size() && k <= 64; ++k) b.e.stack.push_back(region_site(rank, b.user_frames[k]));
    return id;
  }

  uint32_t context_site(format::RankTrace& rank, OTF2_CallingContextRef context) {
    const uint32_t id = static_cast<uint32_t>(context % (k_region_site - 1)) + 1;
    if (rank.sites.count(id) != 0) return id;
    const Defs::Context& c = m_defs.contexts.at(context);
    format::CallSite site;
    site.id = id;
    site.offset = id;  // distinct per context where nothing else tells sites apart
    if (auto region = m_defs.regions.find(c.region); region != m_defs.regions.end()) {
      site.function = m_defs.string(region->second.name);
    }
    if (auto scl = m_defs.scls.find(c.scl); scl != m_defs.scls.end()) {
      site.file = m_defs.string(scl->second.first);
      site.line = scl->second.second;
    }
    rank.sites.emplace(id, std::move(site));
    return id;
  }

  uint32_t region_site(format::RankTrace& rank, OTF2_RegionRef region) {
    const uint32_t id = k_region_site + static_cast<uint32_t>(region % k_region_site);
    if (rank.sites.count(id) != 0) return id;
    format::CallSite site;
    site.id = id;
    site.offset = id;
    if (auto it = m_defs.regions.find(region); it != m_defs.regions.end()) {
      site.function = m_defs.string(it->second.name);
      site.file = m_defs.string(it->second.file);
      site.line = it->second.line;
      if (site.file.empty()) site.line = 0;
    }
    rank.sites.emplace(id, std::move(site));
    return id;
  }

  const Defs& m_defs;
  std::string m_archive;
  OTF2_AttributeRef m_attr[k_attribute_count] = {};
  bool m_smtrace_attributes = false;
  uint32_t m_world_size = 0;
  std::map<OTF2_LocationRef, uint32_t> m_master;   // MPI location -> rank
  std::map<OTF2_LocationRef, LocationState> m_locations;
  std::vector<RankState> m_ranks;
  std::map<OTF2_CommRef, uint32_t> m_comm_ids;
  std::unordered_map<OTF2_RegionRef, std::optional<Call>> m_region_calls;
  std::map<OTF2_RegionRef, OTF2_LocationRef> m_undefined_regions;  // region -> first location entering it
  std::vector<Building> m_built;
  std::vector<format::Problem> m_problems;
  int m_notes = 0;
};

// --- event callbacks: forward to the Importer -----------------------------------

namespace evt {
Importer& of(void* user) { return *static_cast<Importer*>(user); }
OTF2_CallbackCode enter(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                        OTF2_RegionRef region) {
  of(u).enter(l, t, a, region);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode leave(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
                        OTF2_RegionRef region) {
  of(u).leave(l, t, region);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode send(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, uint32_t receiver,
                       OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  of(u).send(l, receiver, comm, tag, length, std::nullopt);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode isend(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, uint32_t receiver,
                        OTF2_CommRef comm, uint32_t tag, uint64_t length, uint64_t request) {
  of(u).send(l, receiver, comm, tag, length, request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode isend_complete(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                 uint64_t request) {
  of(u).completion(l, request, Importer::Done::isend);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode irecv_request(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                uint64_t request) {
  of(u).irecv_request(l, request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode recv(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, uint32_t sender,
                       OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  of(u).recv(l, sender, comm, tag, length);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode irecv(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, uint32_t sender,
                        OTF2_CommRef comm, uint32_t tag, uint64_t length, uint64_t request) {
  of(u).completion(l, request, Importer::Done::irecv, sender, comm, tag, length);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode request_test(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                               uint64_t request) {
  of(u).completion(l, request, Importer::Done::tested);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode request_cancelled(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                    uint64_t request) {
  of(u).completion(l, request, Importer::Done::cancelled);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode collective_end(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                 OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t, uint64_t) {
  of(u).collective_end(l, op, comm, root);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode icollective_request(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                      uint64_t request) {
  of(u).icollective_request(l, request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode icollective_complete(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                       OTF2_CollectiveOp, OTF2_CommRef comm, uint32_t root, uint64_t, uint64_t,
                                       uint64_t request) {
  of(u).completion(l, request, Importer::Done::collective, 0, comm, 0, 0, root);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode win_create(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                             OTF2_RmaWinRef win) {
  of(u).window(l, win);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode rma_collective_end(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                                     OTF2_CollectiveOp, OTF2_RmaSyncLevel, OTF2_RmaWinRef win, uint32_t, uint64_t,
                                     uint64_t) {
  of(u).window(l, win);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode group_sync(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                             OTF2_RmaSyncLevel, OTF2_RmaWinRef win, OTF2_GroupRef group) {
  of(u).group_sync(l, win, group);
  return OTF2_CALLBACK_SUCCESS;
}
// Score-P's record of MPI_Win_flush and its kin: the window and target.
OTF2_CallbackCode sync(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RmaWinRef win,
                       uint32_t remote, OTF2_RmaSyncType) {
  of(u).window(l, win, remote);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode lock(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RmaWinRef win,
                       uint32_t remote, uint64_t, OTF2_LockType type) {
  of(u).window(l, win, remote, type);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode release(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                          OTF2_RmaWinRef win, uint32_t remote, uint64_t) {
  of(u).window(l, win, remote);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode transfer(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                           OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t) {
  of(u).rma_transfer(l, win, remote, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode atomic(OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                         OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType, uint64_t sent, uint64_t, uint64_t) {
  of(u).rma_transfer(l, win, remote, sent);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode program_end(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                              int64_t status) {
  of(u).program_end(l, t, a, status);
  return OTF2_CALLBACK_SUCCESS;
}
}  // namespace evt

struct ReaderCloser {
  void operator()(OTF2_Reader* reader) const { OTF2_Reader_Close(reader); }
};
struct GlobalDefCallbacksDeleter {
  void operator()(OTF2_GlobalDefReaderCallbacks* callbacks) const { OTF2_GlobalDefReaderCallbacks_Delete(callbacks); }
};
struct EvtCallbacksDeleter {
  void operator()(OTF2_EvtReaderCallbacks* callbacks) const { OTF2_EvtReaderCallbacks_Delete(callbacks); }
};

// Return the anchor file of `archive`, or an error.
std::variant<fs::path, std::string> anchor_file(const fs::path& archive) {
  std::error_code ec;
  if (fs::is_directory(archive, ec)) {
    std::vector<fs::path> anchors;
    for (const auto& entry : fs::directory_iterator(archive, ec)) {
      if (entry.path().extension() == ".otf2" && entry.is_regular_file(ec)) anchors.push_back(entry.path());
    }
    if (anchors.size() == 1) return anchors.front();
    if (anchors.empty()) return fmt::format("{}: no OTF2 anchor file (*.otf2) in this directory", archive.string());
    return fmt::format("{}: {} anchor files (*.otf2) in this directory; name one", archive.string(), anchors.size());
  }
  if (!fs::is_regular_file(archive, ec)) return fmt::format("{}: no such file or directory", archive.string());
  return archive;
}

// OTF2's writers end every file with its end-of-file token (a single byte,
// 1). Return an error when the global definition file of an uncompressed
// POSIX archive ends otherwise: it was cut short. libotf2 does not always say
// so itself: it may read the missing tail from a reused buffer.
std::string unterminated_definitions(OTF2_Reader* reader, const fs::path& anchor) {
  constexpr char k_end_of_file = 1;
  OTF2_FileSubstrate substrate{};
  OTF2_Compression compression{};
  if (OTF2_Reader_GetFileSubstrate(reader, &substrate) != OTF2_SUCCESS || substrate != OTF2_SUBSTRATE_POSIX ||
      OTF2_Reader_GetCompression(reader, &compression) != OTF2_SUCCESS || compression != OTF2_COMPRESSION_NONE) {
    return {};
  }
  fs::path defs = anchor;
  defs.replace_extension(".def");
  std::ifstream in(defs, std::ios::binary | std::ios::ate);
  if (!in) return {};  // OTF2 names the missing file itself
  const std::streamoff size = in.tellg();
  char last = 0;
  if (size > 0) {
    in.seekg(size - 1);
    in.get(last);
  }
  if (size > 0 && last == k_end_of_file) return {};
  return fmt::format("global definitions {} end at byte {} without OTF2's end-of-file token: the file was cut short",
                     defs.filename().string(), size);
}

Otf2Import import(const fs::path& archive, const fs::path& out) {
  Otf2Import result;
  ErrorCapture capture;
  const auto anchor = anchor_file(archive);
  if (const std::string* error = std::get_if<std::string>(&anchor)) {
    result.error = *error;
    return result;
  }
  const std::string path = std::get<fs::path>(anchor).string();
  std::unique_ptr<OTF2_Reader, ReaderCloser> reader(OTF2_Reader_Open(path.c_str()));
  if (!reader) {
    result.error = fmt::format("{}: not an OTF2 archive ({})", path, capture.take());
    return result;
  }
  if (OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(reader.get()); rc != OTF2_SUCCESS) {
    result.error = fmt::format("{}: {}", path, otf2_error(rc, capture));
    return result;
  }
  if (char* creator = nullptr; OTF2_Reader_GetCreator(reader.get(), &creator) == OTF2_SUCCESS && creator != nullptr) {
    result.creator = creator;
    std::free(creator);
  }

  if (std::string cut = unterminated_definitions(reader.get(), std::get<fs::path>(anchor)); !cut.empty()) {
    result.error = fmt::format("{}: {}", path, cut);
    return result;
  }
  Defs defs;
  OTF2_GlobalDefReader* global = OTF2_Reader_GetGlobalDefReader(reader.get());
  if (global == nullptr) {
    result.error = fmt::format("{}: cannot open the global definitions ({})", path, capture.take());
    return result;
  }
  {
    std::unique_ptr<OTF2_GlobalDefReaderCallbacks, GlobalDefCallbacksDeleter> callbacks(
        OTF2_GlobalDefReaderCallbacks_New());
    if (!callbacks) throw std::bad_alloc();
    OTF2_GlobalDefReaderCallbacks* c = callbacks.get();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(c, def::clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(c, def::string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(c, def::region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(c, def::group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(c, def::comm);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(c, def::location);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(c, def::location_group);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(c, def::node);
    OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(c, def::scl);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(c, def::context);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(c, def::attribute);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(c, def::window);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), global, c, &defs);
  }
  uint64_t definitions = 0;
  if (OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader.get(), global, &definitions);
      rc != OTF2_SUCCESS) {
    result.error = fmt::format("{}: global definitions damaged after {} of them: {}", path, definitions,
                               otf2_error(rc, capture));
    return result;
  }
  OTF2_Reader_CloseGlobalDefReader(reader.get(), global);

  Importer importer(defs, path);
  if (std::string error = importer.layout(result.problems); !error.empty()) {
    result.error = fmt::format("{}: {}", path, error);
    return result;
  }
  const std::vector<OTF2_LocationRef> locations = importer.locations();
  for (OTF2_LocationRef l : locations) OTF2_Reader_SelectLocation(reader.get(), l);
  const bool def_files = OTF2_Reader_OpenDefFiles(reader.get()) == OTF2_SUCCESS;
  capture.take();  // archives without local definition files are fine
  if (OTF2_ErrorCode rc = OTF2_Reader_OpenEvtFiles(reader.get()); rc != OTF2_SUCCESS) {
    result.error = fmt::format("{}: cannot open the event files: {}", path, otf2_error(rc, capture));
    return result;
  }
  std::unique_ptr<OTF2_EvtReaderCallbacks, EvtCallbacksDeleter> callbacks(OTF2_EvtReaderCallbacks_New());
  if (!callbacks) throw std::bad_alloc();
  {
    OTF2_EvtReaderCallbacks* c = callbacks.get();
    OTF2_EvtReaderCallbacks_SetEnterCallback(c, evt::enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(c, evt::leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(c, evt::send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(c, evt::isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(c, evt::isend_complete);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(c, evt::irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(c, evt::recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(c, evt::irecv);
    OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(c, evt::request_test);
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(c, evt::request_cancelled);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(c, evt::collective_end);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(c, evt::icollective_request);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(c, evt::icollective_complete);
    OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(c, evt::win_create);
    OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(c, evt::win_create);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(c, evt::rma_collective_end);
    OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(c, evt::group_sync);
    OTF2_EvtReaderCallbacks_SetRmaSyncCallback(c, evt::sync);
    OTF2_EvtReaderCallbacks_SetRmaRequestLockCallback(c, evt::lock);
    OTF2_EvtReaderCallbacks_SetRmaAcquireLockCallback(c, evt::lock);
    OTF2_EvtReaderCallbacks_SetRmaReleaseLockCallback(c, evt::release);
    OTF2_EvtReaderCallbacks_SetRmaPutCallback(c, evt::transfer);
    OTF2_EvtReaderCallbacks_SetRmaGetCallback(c, evt::transfer);
    OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(c, evt::atomic);
    OTF2_EvtReaderCallbacks_SetProgramEndCallback(c, evt::program_end);
  }
  // A problem of `location`'s files; `fatal`: also the import's error (the first one).
  auto location_problem = [&](OTF2_LocationRef location, std::string message, bool fatal) {
    format::Problem p;
    p.file = path;
    p.rank = importer.rank_of(location);
    p.message = fmt::format("location {}: {}", location, message);
    if (fatal && result.error.empty()) result.error = fmt::format("{}: {}", path, p.message);
    result.problems.push_back(std::move(p));
  };
  for (OTF2_LocationRef location : locations) {
    if (def_files) {
      // Local definitions hold the mappings of local to global ids (Score-P).
      if (OTF2_DefReader* local = OTF2_Reader_GetDefReader(reader.get(), location)) {
        uint64_t read = 0;
        if (OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(reader.get(), local, &read); rc != OTF2_SUCCESS) {
          location_problem(location, fmt::format("local definitions damaged: {}", otf2_error(rc, capture)), false);
        }
        OTF2_Reader_CloseDefReader(reader.get(), local);
      }
      capture.take();
    }
    OTF2_EvtReader* events = OTF2_Reader_GetEvtReader(reader.get(), location);
    if (events == nullptr) {
      location_problem(location, fmt::format("no event file ({})", capture.take()), true);
      continue;
    }
    OTF2_Reader_RegisterEvtCallbacks(reader.get(), events, callbacks.get(), &importer);
    uint64_t read = 0;
    if (OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalEvents(reader.get(), events, &read); rc != OTF2_SUCCESS) {
      location_problem(location, fmt::format("events damaged after {} records: {}", read, otf2_error(rc, capture)),
                       true);
    } else if (auto it = defs.locations.find(location);
               it != defs.locations.end() && it->second.events != 0 && read != it->second.events) {
      // A cut file can read cleanly: OTF2 reads whole chunks, and past the
      // file's end what its buffer held may parse as records and an end.
      location_problem(location,
                       fmt::format("events damaged: {} records read, its definition declares {} "
                                   "(the event file is truncated or overwritten)",
                                   read, it->second.events),
                       true);
    }
    OTF2_Reader_CloseEvtReader(reader.get(), events);
  }
  if (def_files) OTF2_Reader_CloseDefFiles(reader.get());
  OTF2_Reader_CloseEvtFiles(reader.get());
  reader.reset();

  format::Trace trace = importer.finish(out, result.lacks);
  for (format::Problem& p : importer.problems()) result.problems.push_back(std::move(p));
  if (std::string undefined = importer.undefined_regions(); !undefined.empty()) {
    format::Problem p;
    p.file = path;
    p.message = undefined;
    result.problems.push_back(std::move(p));
    if (result.error.empty()) result.error = fmt::format("{}: {}", path, undefined);
  }
  result.ranks = importer.world_size();
  result.events = importer.events();
  try {
    format::write_trace(trace, out);
    result.written = true;
  } catch (const format::TraceError& e) {
    if (result.error.empty()) result.error = e.what();
  }
  return result;
}

}  // namespace

Otf2Import import_otf2(const fs::path& archive, const fs::path& out) noexcept {
  try {
    return import(archive, out);
  } catch (const std::bad_alloc&) {
    Otf2Import result;
    result.error = fmt::format("{}: out of memory while importing", archive.string());
    return result;
  } catch (const std::exception& e) {
    Otf2Import result;
    result.error = fmt::format("{}: {}", archive.string(), e.what());
    return result;
  }
}

}  // namespace smtrace::exchange
