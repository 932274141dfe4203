// The MPI layer: the only file that includes mpi.h. Each wrapper of
// wrappers.def gathers its arguments, turns handles into plain ids through
// the tables below and hands plain values to handlers::CallScope; it calls
// PMPI_X exactly once and returns its rc. See tracer.hpp for the ground rules.
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tracer/access.hpp"
#include "tracer/content_hash.hpp"
#include "tracer/flatten.hpp"
#include "tracer/force.hpp"
#include "tracer/fortran.hpp"
#include "tracer/handlers.hpp"
#include "tracer/request_table.hpp"
#include "tracer/tables.hpp"
#include "tracer/tracer.hpp"
#include "trace_format/call_semantics.hpp"

namespace smtrace::tracer {
namespace {

using format::Call;
using format::Event;
using handlers::CallScope;

// ---------------------------------------------------------------------------
// Handle tables. Ids are what the trace names objects by.

// A communicator the tracer has defined: its id and the rank's place in it.
struct CommInfo {
  uint32_t id = 0;
  CommFacts facts;
};

// A topology's neighbours (CommDef.sources, destinations), kept until exit:
// CommFacts point at them.
struct Neighbors {
  std::vector<int32_t> sources, destinations;
};

struct Tables {
  HandleMap<CommInfo> comms;
  HandleMap<uint32_t> groups;
  HandleMap<uint32_t> types;
  HandleMap<uint32_t> ops;
  HandleMap<uint32_t> infos;
  HandleMap<uint32_t> windows;
  RequestTable requests;
  std::atomic<uint32_t> next_comm{2};  // comms and groups share CommDef ids
  std::atomic<uint32_t> next_type{format::k_first_derived_id};
  std::atomic<uint32_t> next_op{format::k_first_derived_id};
  std::atomic<uint32_t> next_info{2};  // 1: MPI_INFO_ENV
  std::atomic<uint32_t> next_window{1};
  std::atomic<uint64_t> next_request{1};
  // Matched probes: the message handles MPI_Mprobe/Improbe returned and not
  // yet received, by handle value (a value MPI reuses after the receive gets
  // a new id).
  struct Message {
    uint64_t id = 0;
    uint32_t comm = 0;
  };
  HandleMap<Message> messages;
  std::atomic<uint64_t> next_message{2};
  HandleMap<format::DatatypeDef*> defs;  // type id -> flattened def (children of later types)
  MPI_Group world_group = MPI_GROUP_NULL;
  uint32_t world_size = 1;
  // The rank's place in each communicator (by id >= 2), for load/store
  // capture (access.hpp), and the sizes of the predefined datatypes.
  HandleMap<CommFacts> comm_facts;
  CommFacts world_facts;
  int64_t basic_size[format::k_first_derived_id] = {};
};
Tables* g_tables = new Tables;  // never destroyed (used until exit)

// Per-thread caches of the lookups every call makes (its communicator,
// datatypes, window): no lock on a hit.
thread_local LookupCache<CommInfo> t_comm_cache SMTRACE_FAST_TLS;
thread_local LookupCache<uint32_t> t_type_cache SMTRACE_FAST_TLS;
thread_local LookupCache<uint32_t> t_window_cache SMTRACE_FAST_TLS;

template <class H>
uintptr_t key(H handle) {
  uintptr_t k = 0;
  static_assert(sizeof(H) <= sizeof(uintptr_t));
  std::memcpy(&k, &handle, sizeof(H));
  return k;
}

int32_t rank_value(int r) {
  if (r == MPI_ANY_SOURCE) return format::k_any_source;
  if (r == MPI_PROC_NULL) return format::k_proc_null;
  if (r == MPI_ROOT) return format::k_root;
  return r;
}
int32_t tag_value(int t) { return t == MPI_ANY_TAG ? format::k_any_tag : t; }
uint64_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

std::vector<uint32_t> world_ranks_of_group(MPI_Group group) {
  std::vector<uint32_t> out;
  int n = 0;
  if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &n) != MPI_SUCCESS || n <= 0) return out;
  std::vector<int> local(static_cast<size_t>(n)), world(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) local[static_cast<size_t>(i)] = i;
  if (PMPI_Group_translate_ranks(group, n, local.data(), g_tables->world_group, world.data()) != MPI_SUCCESS) {
    handlers::count_error();
    return out;
  }
  for (int w : world) out.push_back(w == MPI_UNDEFINED ? UINT32_MAX : static_cast<uint32_t>(w));
  return out;
}

// Fill `def`'s topology with the neighbours of this rank in `comm`
// (MPI-3.1 section 7.6: Cartesian neighbours dimension by dimension, the
// negative direction first, MPI_PROC_NULL where there is none).
void topology_of(MPI_Comm comm, format::CommDef& def) {
  int topo = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return;
  if (topo == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    def.topology = format::Topology::cart;
    for (int d = 0; d < ndims; ++d) {
      int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &source, &dest);
      def.sources.push_back(rank_value(source));
      def.sources.push_back(rank_value(dest));
    }
    def.destinations = def.sources;
  } else if (topo == MPI_GRAPH) {
    int rank = 0, n = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    std::vector<int> list(static_cast<size_t>(std::max(n, 0)));
    if (n > 0) PMPI_Graph_neighbors(comm, rank, n, list.data());
    def.topology = format::Topology::graph;
    for (int r : list) def.sources.push_back(rank_value(r));
    def.destinations = def.sources;
  } else if (topo == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    std::vector<int> sources(static_cast<size_t>(std::max(in, 1))), dests(static_cast<size_t>(std::max(out, 1)));
    std::vector<int> sw(sources.size()), dw(dests.size());
    PMPI_Dist_graph_neighbors(comm, in, sources.data(), sw.data(), out, dests.data(), dw.data());
    def.topology = format::Topology::dist_graph;
    for (int i = 0; i < in; ++i) def.sources.push_back(rank_value(sources[static_cast<size_t>(i)]));
    for (int i = 0; i < out; ++i) def.destinations.push_back(rank_value(dests[static_cast<size_t>(i)]));
  }
}

// Return what the tracer knows of `comm`, defining it (CommDef record) on
// first sight from the groups of `members` (`comm` itself unless given:
// MPI_Comm_idup's new communicator may not be used before its request
// completes, and has its parent's groups).
CommInfo comm_info(MPI_Comm comm, uint32_t parent = 0, MPI_Comm members = MPI_COMM_NULL) {
  if (comm == MPI_COMM_WORLD) return {format::k_comm_world, g_tables->world_facts};
  if (comm == MPI_COMM_SELF) return {format::k_comm_self, CommFacts{0, 1}};
  if (comm == MPI_COMM_NULL) return {format::k_null_id, CommFacts{}};
  CommInfo info;
  if (t_comm_cache.find(g_tables->comms, key(comm), info)) return info;
  info.id = g_tables->next_comm.fetch_add(1);
  format::CommDef def;
  def.id = info.id;
  def.parent = parent;
  const MPI_Comm handle = comm;
  if (members != MPI_COMM_NULL) comm = members;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  def.inter = inter != 0;
  MPI_Group group = MPI_GROUP_NULL;
  if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS) {
    def.world_ranks = world_ranks_of_group(group);
    PMPI_Group_free(&group);
  }
  if (inter && PMPI_Comm_remote_group(comm, &group) == MPI_SUCCESS) {
    def.remote_world_ranks = world_ranks_of_group(group);
    PMPI_Group_free(&group);
  }
  if (!inter && members == MPI_COMM_NULL) topology_of(comm, def);
  handlers::define_comm(def);
  CommFacts& facts = info.facts;
  PMPI_Comm_rank(comm, &facts.rank);
  facts.inter = inter != 0;
  if (inter) PMPI_Comm_remote_size(comm, &facts.size);
  else PMPI_Comm_size(comm, &facts.size);
  if (def.topology != format::Topology::none) {
    auto* n = new Neighbors{def.sources, def.destinations};
    facts.sources = &n->sources;
    facts.destinations = &n->destinations;
  }
  g_tables->comm_facts.insert(info.id, facts);
  g_tables->comms.insert(key(handle), info);
  return info;
}

uint32_t comm_id(MPI_Comm comm, uint32_t parent = 0, MPI_Comm members = MPI_COMM_NULL) {
  // comm_info's answers for the predefined communicators, without its call
  // and its copy of their facts (every point-to-point call on
  // MPI_COMM_WORLD asks).
  if (comm == MPI_COMM_WORLD) return format::k_comm_world;
  if (comm == MPI_COMM_SELF) return format::k_comm_self;
  if (comm == MPI_COMM_NULL) return format::k_null_id;
  return comm_info(comm, parent, members).id;
}

// Return true when communicator id `comm` names a communicator MPI may be
// asked about (not MPI_COMM_NULL, not a freed one).
bool known(uint32_t comm) { return comm != format::k_null_id && comm != format::k_invalid_id; }

uint32_t group_id(MPI_Group group) {
  if (group == MPI_GROUP_NULL) return UINT32_MAX;
  uint32_t id = 0;
  if (g_tables->groups.find(key(group), id)) return id;
  id = g_tables->next_comm.fetch_add(1);
  format::CommDef def;
  def.id = id;
  def.is_group = true;
  def.world_ranks = world_ranks_of_group(group);
  handlers::define_comm(def);
  g_tables->groups.insert(key(group), id);
  return id;
}

// Return the id `map` keeps for handle value `k`, a new one from `next` the
// first time.
uint32_t table_id(HandleMap<uint32_t>& map, std::atomic<uint32_t>& next, uintptr_t k) {
  uint32_t id = 0;
  if (map.find(k, id)) return id;
  id = next.fetch_add(1);
  map.insert(k, id);
  return id;
}

uint32_t op_id(MPI_Op op) { return op == MPI_OP_NULL ? 0 : table_id(g_tables->ops, g_tables->next_op, key(op)); }

uint32_t info_id(MPI_Info info) {
  return info == MPI_INFO_NULL ? 0 : table_id(g_tables->infos, g_tables->next_info, key(info));
}

uint32_t window_id(MPI_Win win) {
  if (win == MPI_WIN_NULL) return 0;
  uint32_t id = 0;
  if (t_window_cache.find(g_tables->windows, key(win), id)) return id;
  id = g_tables->next_window.fetch_add(1);
  g_tables->windows.insert(key(win), id);
  return id;
}

// A freed handle stays in its table as k_invalid_id until MPI hands it out
// again (every call that makes a communicator, window, op, group or
// datatype forgets its new handle first: new_comm_post, new_window_post,
// op_create, new_group_post, new_type_post; so do the queries that return
// datatypes, forget_returned; an untraced call too, forget): a later call on
// it is erroneous, doubtful() writes it on entry, and the tracer never asks
// MPI about it (Open MPI crashes in MPI_Comm_test_inter on a freed
// communicator, aborts on a freed group's ranks and crashes in
// MPI_Type_get_envelope on a freed datatype). Only while the entry
// still holds the id freed (`freed`), under the map's lock: another thread
// may have been handed the same handle by a new one since.
inline uint32_t held_id(uint32_t id) { return id; }
inline uint32_t held_id(const CommInfo& info) { return info.id; }
template <class V, class Lock>
void mark_freed(HandleMap<V, Lock>& map, uintptr_t handle, uint32_t freed) {
  V invalid{};
  if constexpr (std::is_same_v<V, CommInfo>) invalid.id = format::k_invalid_id;
  else invalid = format::k_invalid_id;
  map.replace_if(handle, [freed](const V& now) { return held_id(now) == freed; }, invalid);
}

uint32_t type_id(MPI_Datatype type);

// The id of `child`, a datatype that MPI_Type_get_contents returned for a
// type being defined: a type the program freed is still alive in the types
// made from it (MPI-3.1 section 4.1.9), and Open MPI returns the same
// handle, so it is described here and stays marked freed for the program.
uint32_t define_type(MPI_Datatype type, Call combiner_call);
uint32_t child_type_id(MPI_Datatype child) {
  const uint32_t id = type_id(child);
  if (id != format::k_invalid_id) return id;
  g_tables->types.erase(key(child));
  const uint32_t fresh = define_type(child, Call::unspecified);
  mark_freed(g_tables->types, key(child), fresh);
  return fresh;
}

// Describe a derived type with PMPI_Type_get_envelope / get_contents, flatten
// it, write its DatatypeDef and return its id.
uint32_t define_type(MPI_Datatype type, Call combiner_call) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
    handlers::count_error();
    return 63;  // BASIC_OTHER
  }
  if (combiner == MPI_COMBINER_NAMED) {  // predefined but unknown to smtrace: BASIC_OTHER
    g_tables->types.insert(key(type), 63);
    return 63;
  }
  std::vector<int> ints(static_cast<size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<size_t>(nd));
  if (PMPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) {
    handlers::count_error();
    return 63;
  }
  TypeDescription d;
  d.ints.assign(ints.begin(), ints.end());
  d.addrs.assign(addrs.begin(), addrs.end());
  Call call = combiner_call;
  switch (combiner) {
    case MPI_COMBINER_DUP: d.combiner = Combiner::dup; call = Call::Type_dup; break;
    case MPI_COMBINER_CONTIGUOUS: d.combiner = Combiner::contiguous; call = Call::Type_contiguous; break;
    case MPI_COMBINER_VECTOR: d.combiner = Combiner::vector; call = Call::Type_vector; break;
    case MPI_COMBINER_HVECTOR: d.combiner = Combiner::hvector; call = Call::Type_create_hvector; break;
    case MPI_COMBINER_INDEXED: d.combiner = Combiner::indexed; call = Call::Type_indexed; break;
    case MPI_COMBINER_HINDEXED: d.combiner = Combiner::hindexed; call = Call::Type_create_hindexed; break;
    case MPI_COMBINER_INDEXED_BLOCK: d.combiner = Combiner::indexed_block; call = Call::Type_create_indexed_block; break;
    case MPI_COMBINER_HINDEXED_BLOCK: d.combiner = Combiner::hindexed_block; call = Call::Type_create_hindexed_block; break;
    case MPI_COMBINER_STRUCT: d.combiner = Combiner::structure; call = Call::Type_create_struct; break;
    case MPI_COMBINER_SUBARRAY:
      d.combiner = Combiner::subarray;
      call = Call::Type_create_subarray;
      if (!d.ints.empty()) {  // order: the library's constant -> 0 C, 1 Fortran
        int64_t& order = d.ints.back();
        order = order == MPI_ORDER_FORTRAN ? 1 : 0;
      }
      break;
    case MPI_COMBINER_RESIZED: d.combiner = Combiner::resized; call = Call::Type_create_resized; break;
    default: d.combiner = Combiner::other; break;
  }
  std::vector<format::DatatypeDef> basics;  // storage for basic children
  basics.reserve(types.size());
  for (MPI_Datatype child : types) {
    uint32_t cid = child_type_id(child);
    format::DatatypeDef* def = nullptr;
    if (cid >= format::k_first_derived_id && g_tables->defs.find(cid, def) && def) {
      d.children.push_back(def);
    } else {
      int size = 0;
      PMPI_Type_size(child, &size);
      basics.push_back(basic_type_def(cid, static_cast<uint64_t>(size)));
      d.children.push_back(&basics.back());
    }
  }
  auto* def = new format::DatatypeDef(flatten(d));
  // Types made from the library's own building blocks: free the handles
  // get_contents returned (not predefined ones).
  for (MPI_Datatype child : types) {
    int a = 0, b = 0, c = 0, comb = 0;
    if (PMPI_Type_get_envelope(child, &a, &b, &c, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
      PMPI_Type_free(&child);
  }
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_size(type, &size) == MPI_SUCCESS) def->size = static_cast<uint64_t>(size);
  if (PMPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS) {
    def->lb = lb;
    def->extent = extent;
  }
  if (def->truncated) def->runs = {format::Run{def->lb, static_cast<uint64_t>(def->extent), 1, 0}};
  def->id = g_tables->next_type.fetch_add(1);
  def->combiner = call;
  handlers::define_datatype(*def);
  g_tables->defs.insert(def->id, def);
  g_tables->types.insert(key(type), def->id);
  return def->id;
}

uint32_t type_id(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return 0;
  uint32_t id = 0;
  if (t_type_cache.find(g_tables->types, key(type), id)) return id;
  return define_type(type, Call::unspecified);
}

uint64_t type_size(MPI_Datatype type) {
  int size = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return static_cast<uint64_t>(size);
}

void register_predefined() {
  struct Pair {
    MPI_Datatype type;
    uint32_t id;
  };
  const Pair types[] = {
      {MPI_CHAR, 1}, {MPI_SIGNED_CHAR, 2}, {MPI_UNSIGNED_CHAR, 3}, {MPI_BYTE, 4}, {MPI_SHORT, 5},
      {MPI_UNSIGNED_SHORT, 6}, {MPI_INT, 7}, {MPI_UNSIGNED, 8}, {MPI_LONG, 9}, {MPI_UNSIGNED_LONG, 10},
      {MPI_LONG_LONG, 11}, {MPI_UNSIGNED_LONG_LONG, 12}, {MPI_FLOAT, 13}, {MPI_DOUBLE, 14},
      {MPI_LONG_DOUBLE, 15}, {MPI_WCHAR, 16}, {MPI_C_BOOL, 17}, {MPI_INT8_T, 18}, {MPI_INT16_T, 19},
      {MPI_INT32_T, 20}, {MPI_INT64_T, 21}, {MPI_UINT8_T, 22}, {MPI_UINT16_T, 23}, {MPI_UINT32_T, 24},
      {MPI_UINT64_T, 25}, {MPI_C_FLOAT_COMPLEX, 26}, {MPI_C_DOUBLE_COMPLEX, 27},
      {MPI_C_LONG_DOUBLE_COMPLEX, 28}, {MPI_FLOAT_INT, 29}, {MPI_DOUBLE_INT, 30}, {MPI_LONG_INT, 31},
      {MPI_2INT, 32}, {MPI_SHORT_INT, 33}, {MPI_LONG_DOUBLE_INT, 34}, {MPI_PACKED, 35}, {MPI_AINT, 36},
      {MPI_OFFSET, 37}, {MPI_COUNT, 38},
      // Fortran (BasicType 41-60): types a library without Fortran support
      // leaves MPI_DATATYPE_NULL are skipped below
      {MPI_INTEGER, 41}, {MPI_REAL, 42}, {MPI_DOUBLE_PRECISION, 43}, {MPI_COMPLEX, 44},
      {MPI_DOUBLE_COMPLEX, 45}, {MPI_LOGICAL, 46}, {MPI_CHARACTER, 47}, {MPI_2INTEGER, 48}, {MPI_2REAL, 49},
      {MPI_2DOUBLE_PRECISION, 50}, {MPI_INTEGER1, 51}, {MPI_INTEGER2, 52}, {MPI_INTEGER4, 53},
      {MPI_INTEGER8, 54}, {MPI_REAL4, 55}, {MPI_REAL8, 56}, {MPI_REAL16, 57}, {MPI_COMPLEX8, 58},
      {MPI_COMPLEX16, 59}, {MPI_COMPLEX32, 60},
  };
  for (const auto& p : types) {
    if (p.type == MPI_DATATYPE_NULL) continue;
    g_tables->types.insert(key(p.type), p.id);
    g_tables->basic_size[p.id] = static_cast<int64_t>(type_size(p.type));
  }
  struct OpPair {
    MPI_Op op;
    uint32_t id;
  };
  const OpPair ops[] = {{MPI_MAX, 1},   {MPI_MIN, 2},   {MPI_SUM, 3},    {MPI_PROD, 4},    {MPI_LAND, 5},
                        {MPI_BAND, 6},  {MPI_LOR, 7},   {MPI_BOR, 8},    {MPI_LXOR, 9},    {MPI_BXOR, 10},
                        {MPI_MINLOC, 11}, {MPI_MAXLOC, 12}, {MPI_REPLACE, 13}, {MPI_NO_OP, 14}};
  for (const auto& p : ops) g_tables->ops.insert(key(p.op), p.id);
  g_tables->infos.insert(key(MPI_INFO_ENV), 1);
}

// ---------------------------------------------------------------------------
// Requests

uint64_t new_request(MPI_Request request, bool receive, bool persistent, uint64_t elem_size) {
  if (request == MPI_REQUEST_NULL) return 0;
  RequestInfo info;
  info.id = g_tables->next_request.fetch_add(1, std::memory_order_relaxed);
  info.receive = receive;
  info.persistent = persistent;
  info.elem_size = elem_size;
  g_tables->requests.add(key(request), info);
  return info.id;
}

// Return the outstanding request of handle value `request` that `skip`
// older ones of the same value precede (request_table.hpp).
RequestInfo request_info(MPI_Request request, std::size_t skip = 0) {
  RequestInfo info;
  if (request == MPI_REQUEST_NULL) return info;
  if (!g_tables->requests.find(key(request), info, skip)) {
    // A copy of a handle MPI_Request_free freed: the freed request.
    if (skip == 0 && g_tables->requests.freed(key(request), info.id)) return info;
    // A request the tracer did not see created (an untraced family): give it an id now.
    info.id = new_request(request, false, false, 0);
  }
  return info;
}

// Fill `s` (at its defaults) from `st`, in place: a Status built elsewhere
// and copied in is read back through a store-forwarding stall (its
// optionals stored as 4 + 1 bytes, loaded as 8).
void fill_status(format::Status& s, const MPI_Status& st, uint64_t elem_size) {
  s.source = rank_value(st.MPI_SOURCE);
  s.tag = tag_value(st.MPI_TAG);
  int bytes = 0;
  if (PMPI_Get_count(&st, MPI_BYTE, &bytes) == MPI_SUCCESS && bytes != MPI_UNDEFINED)
    s.count = elem_size ? static_cast<int64_t>(static_cast<uint64_t>(bytes) / elem_size) : bytes;
  int cancelled = 0;
  PMPI_Test_cancelled(&st, &cancelled);
  s.cancelled = cancelled != 0;
}

// Scratch arrays for the request-array calls, per thread: no allocation once warm.
struct RequestScratch {
  std::vector<MPI_Request> handles;
  std::vector<RequestInfo> infos;
  std::vector<MPI_Status> statuses;
};
// Per thread (fast_thread_local: constructed on the first request-array call).
RequestScratch& scratch() noexcept { return fast_thread_local<RequestScratch>(); }

// Remember `requests[0..n)` before a completion call, fill e.requests. A
// handle value listed again names the next outstanding request of that value.
// E: Event, or format::HotEvent for at most HotEvent::k_max_requests (traced_completion).
template <class E>
void before_completion(E& e, int n, const MPI_Request* requests) {
  auto& s = scratch();
  size_t count = n > 0 ? static_cast<size_t>(n) : 0;
  s.handles.assign(requests, requests + count);
  s.infos.resize(count);
  e.requests.resize(count);
  const bool shared = count > 1 && g_tables->requests.shared();
  for (size_t i = 0; i < count; ++i) {
    std::size_t skip = 0;
    if (shared && requests[i] != MPI_REQUEST_NULL)
      for (size_t j = 0; j < i; ++j) skip += requests[j] == requests[i];
    s.infos[i] = request_info(requests[i], skip);
    e.requests[i] = s.infos[i].id;
  }
}

// Record request `i` (remembered by before_completion) as completed with `status`.
template <class E>
void completed(E& out, size_t i, const MPI_Status* status) {
  auto& s = scratch();
  if (i >= s.infos.size() || s.infos[i].id == 0) return;
  // Filled in place (a CompletedRequest built on the stack and pushed was
  // read back through a store-forwarding stall: 46% of this function).
  const std::size_t k = out.completed.size();
  out.completed.resize(k + 1);
  format::CompletedRequest& c = out.completed[k];
  c.index = static_cast<uint32_t>(i);
  c.request = s.infos[i].id;
  if (status && s.infos[i].receive) fill_status(c.status, *status, s.infos[i].elem_size);
  if (!s.infos[i].persistent) g_tables->requests.remove(key(s.handles[i]), s.infos[i].id);
}

MPI_Status* statuses_for(int n, MPI_Status* given) {
  if (given != MPI_STATUSES_IGNORE) return given;
  auto& s = scratch();
  s.statuses.resize(n > 0 ? static_cast<size_t>(n) : 1);
  return s.statuses.data();
}

// ---------------------------------------------------------------------------
// Argument gathering shared by the shapes

// (E: Event, or format::HotEvent on the hot path: the same gathering for both.)
template <class E>
void p2p(E& e, const void* buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm) {
  e.comm = comm_id(comm);
  e.peer = rank_value(peer);
  e.tag = tag_value(tag);
  e.buf = addr(buf);
  e.count = count;
  e.datatype = type_id(type);
}

void send_side(Event& e, const void* sbuf, int64_t scount, MPI_Datatype stype) {
  if (sbuf == MPI_IN_PLACE) {
    e.in_place = true;
  } else {
    e.buf = addr(sbuf);
    e.count = scount;
    e.datatype = type_id(stype);
  }
}

void recv_side(Event& e, void* rbuf, int64_t rcount, MPI_Datatype rtype) {
  e.recv_buf = addr(rbuf);
  e.recv_count = rcount;
  e.recv_datatype = type_id(rtype);
}

int comm_size_for(MPI_Comm comm, bool remote = false) {
  int n = 0, inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter || remote) PMPI_Comm_remote_size(comm, &n);
  else PMPI_Comm_size(comm, &n);
  return n;
}

std::vector<int64_t> ints(const int* v, int n) {
  if (!v || n <= 0) return {};
  return std::vector<int64_t>(v, v + n);
}

std::vector<uint32_t> type_ids(const MPI_Datatype* v, int n) {
  std::vector<uint32_t> out;
  if (!v) return out;
  for (int i = 0; i < n; ++i) out.push_back(type_id(v[i]));
  return out;
}

// Load/store capture: the facts access::after_call needs about a datatype
// and about the rank's place in a communicator.
TypeExtent type_extent(uint32_t id) {
  if (id < format::k_first_derived_id) {
    const int64_t size = g_tables->basic_size[id];
    return {0, size, size, size > 0};
  }
  format::DatatypeDef* def = nullptr;
  if (!g_tables->defs.find(id, def) || !def) return {};
  return extent_of(*def);
}

CommFacts comm_facts(uint32_t comm) {
  if (comm == format::k_comm_world) return g_tables->world_facts;
  if (comm == format::k_comm_self) return {0, 1};
  CommFacts facts;
  g_tables->comm_facts.find(comm, facts);
  return facts;
}

// The access epochs open on each window of this process, for doubtful():
// an RMA communication call outside one that can reach its target fails
// (Open MPI: MPI_ERR_RMA_SYNC) and the default error handler ends the
// process inside it. What each call opens and closes is its row's epoch
// step (call_semantics.hpp); the state is per window id (ids from 1 up,
// never reused; those past k_windows are not judged), one atomic word of
// bits, and for an open MPI_Win_start the ranks of its group in the
// window's group, under a lock (a start is rare; an RMA call looks there
// only while one is open).
struct Epochs {
  static constexpr uint32_t k_windows = 4096;
  static constexpr uint32_t k_fence = 1, k_lock_all = 2, k_start = 4, k_lock = 1u << 8;  // k_lock: locks held, times
  std::array<std::atomic<uint32_t>, k_windows> open{};
  std::array<std::atomic<int32_t>, k_windows> size{};  // the window's group size (0: not known)
  SpinLock lock;
  std::vector<std::pair<uint32_t, std::vector<int>>> start_ranks;  // (window, its start group's ranks, ascending)

  // Keep the group size of new window `win` (id `window`).
  void created(uint32_t window, MPI_Win win) {
    MPI_Group group = MPI_GROUP_NULL;
    int n = 0;
    if (window == 0 || window >= k_windows || PMPI_Win_get_group(win, &group) != MPI_SUCCESS) return;
    if (PMPI_Group_size(group, &n) == MPI_SUCCESS) size[window].store(n, std::memory_order_relaxed);
    PMPI_Group_free(&group);
  }
  // Return false when `target` is a rank beyond window `window`'s group.
  bool in_range(uint32_t window, int32_t target) const {
    if (window == 0 || window >= k_windows || target < 0) return true;
    const int32_t n = size[window].load(std::memory_order_relaxed);
    return n <= 0 || target < n;
  }
  // Return true when window `window` has an epoch open that lets this
  // process reach `target` (a rank of the window's group), or when that is
  // not known.
  bool allow(uint32_t window, int32_t target) {
    if (window == 0 || window >= k_windows) return true;
    if (!in_range(window, target)) return false;
    const uint32_t bits = open[window].load(std::memory_order_relaxed);
    if ((bits & (k_fence | k_lock_all)) != 0 || bits >= k_lock) return true;
    if ((bits & k_start) == 0) return false;
    SpinGuard guard(lock);
    for (const auto& [w, ranks] : start_ranks)
      if (w == window) return target < 0 || std::binary_search(ranks.begin(), ranks.end(), target);
    return true;
  }
  // Take the successful return of synchronization call `call` on window
  // `window` (`nosucceed`: a fence asserted MPI_MODE_NOSUCCEED; `group`:
  // a start's group, `win` its window).
  void took(Call call, uint32_t window, bool nosucceed, MPI_Group group, MPI_Win win) {
    if (window == 0 || window >= k_windows) return;
    const format::EpochStep step = format::epoch_step(format::call_traits(call).epoch);
    std::atomic<uint32_t>& bits = open[window];
    switch (step.kind) {
      case format::EpochKind::fence:
        if (nosucceed) bits.fetch_and(~k_fence, std::memory_order_relaxed);
        else bits.fetch_or(k_fence, std::memory_order_relaxed);
        return;
      case format::EpochKind::passive:
        if (step.all_targets && step.opens) bits.fetch_or(k_lock_all, std::memory_order_relaxed);
        if (step.all_targets && step.closes) bits.fetch_and(~k_lock_all, std::memory_order_relaxed);
        if (!step.all_targets && step.opens) bits.fetch_add(k_lock, std::memory_order_relaxed);
        if (!step.all_targets && step.closes && bits.load(std::memory_order_relaxed) >= k_lock)
          bits.fetch_sub(k_lock, std::memory_order_relaxed);
        return;
      case format::EpochKind::access: {
        std::vector<int> ranks;
        if (step.opens) ranks = window_ranks(group, win);
        SpinGuard guard(lock);
        std::erase_if(start_ranks, [&](const auto& e) { return e.first == window; });
        if (step.opens && !ranks.empty()) start_ranks.emplace_back(window, std::move(ranks));
        if (step.opens) bits.fetch_or(k_start, std::memory_order_relaxed);
        if (step.closes) bits.fetch_and(~k_start, std::memory_order_relaxed);
        return;
      }
      case format::EpochKind::none: case format::EpochKind::exposure:
        return;
    }
  }
  // Return the ranks of `group` in the group of window `win`, ascending
  // (empty when they cannot be told: then every target is allowed).
  static std::vector<int> window_ranks(MPI_Group group, MPI_Win win) {
    MPI_Group window_group = MPI_GROUP_NULL;
    int n = 0;
    std::vector<int> ranks;
    if (PMPI_Group_size(group, &n) != MPI_SUCCESS || n <= 0 || PMPI_Win_get_group(win, &window_group) != MPI_SUCCESS)
      return ranks;
    std::vector<int> in(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
    ranks.assign(in.size(), MPI_UNDEFINED);
    if (PMPI_Group_translate_ranks(group, n, in.data(), window_group, ranks.data()) != MPI_SUCCESS) ranks.clear();
    PMPI_Group_free(&window_group);
    std::erase(ranks, MPI_UNDEFINED);
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  }
};
Epochs* g_epochs = new Epochs;  // never destroyed

// Each window's members' sizes and disp_units, for doubtful(): an RMA
// communication call whose target range (target_disp x the target's
// disp_unit, then target_count elements of target_datatype) lies outside
// the target's window is erroneous (MPI-3.1 section 11.3), Open MPI tests
// it at the origin (MPI_ERR_RMA_RANGE), and the default error handler
// ends the process inside the call. The origin knows only its own size:
// each creation of a window with memory (Win_create, Win_allocate,
// Win_allocate_shared) gathers every member's over the window's
// communicator, once, after MPI returned it (a collective the members
// make anyway, in the same order; a creation that fails on some members
// only would leave the others waiting in the gather, but MPI makes it
// fail everywhere or, by default, ends the job). Every member with the
// tracer loaded takes part whether it records the call or not (tracing
// stopped on this rank after a tracer error, the family off, inside
// another traced call, a shape that threw: window_gather_untraced and its
// Fortran twin), and only when every member has a rank file in the trace
// directory (all_recorded: a process without the tracer, an MPMD context
// that did not get it or a spawned one, gathers nothing, and no member
// waits for it), so that one rank's tracer state never leaves another
// waiting. Dynamic windows are not judged. Per window id (ids past
// Epochs::k_windows are not judged), a table published once with a
// release store and freed at MPI_Win_free (a call on a window being freed
// is erroneous in the program already).
struct WindowShapes {
  __extension__ typedef __int128 Int128;
  struct Member {
    int64_t size = 0;
    int64_t disp_unit = 0;
  };
  std::array<std::atomic<std::vector<Member>*>, Epochs::k_windows> members{};
  // The trace directory (empty: this rank writes no rank file), set once
  // in MPI_Init; the world ranks whose rank file was seen there (files
  // are never removed while the job runs), under `lock`.
  std::string dir;
  SpinLock lock;
  std::vector<bool> seen;

  // Return true when every member of `comm` has its rank file in the
  // trace directory: a rank that records creates it in MPI_Init, before
  // its window creation can let any other member's return, so that every
  // member with the tracer loaded answers alike (its own file included),
  // and the gather is made by all of them or by none. A member outside
  // MPI_COMM_WORLD (spawned, connected): false. (A reused directory that
  // holds a stale rank file of a process now untraced defeats this;
  // `smtrace record` empties the directory first.)
  bool all_recorded(MPI_Comm comm) noexcept {
    if (dir.empty()) return false;
    MPI_Group group = MPI_GROUP_NULL;
    int n = 0;
    if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS) return false;
    PMPI_Group_size(group, &n);
    std::vector<int> ranks(static_cast<std::size_t>(n > 0 ? n : 0)), world(ranks.size(), MPI_UNDEFINED);
    for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
    const bool translated = n > 0 && PMPI_Group_translate_ranks(group, n, ranks.data(), g_tables->world_group,
                                                                 world.data()) == MPI_SUCCESS;
    PMPI_Group_free(&group);
    if (!translated) return false;
    SpinGuard guard(lock);
    for (const int w : world) {
      if (w < 0 || static_cast<uint32_t>(w) >= g_tables->world_size) return false;  // (MPI_UNDEFINED)
      const auto at = static_cast<std::size_t>(w);
      if (seen.size() <= at) seen.resize(g_tables->world_size);
      if (seen[at]) continue;
      const std::string path = dir + "/" + format::rank_file_name(static_cast<uint32_t>(w));
      if (::access(path.c_str(), F_OK) != 0) return false;
      seen[at] = true;
    }
    return true;
  }

  // Gather the members' `size` and `disp_unit` of new window `window` over
  // `comm`, every member at once (collective: called exactly once on every
  // member for each window created with memory, whatever its id; 0: this
  // rank does not record, it only takes part). Throws nothing: a caller's
  // fallback must not run it twice.
  void gather(uint32_t window, MPI_Comm comm, MPI_Aint size, int disp_unit) noexcept {
    int n = 0;
    if (!all_recorded(comm) || PMPI_Comm_size(comm, &n) != MPI_SUCCESS || n <= 0) return;
    const int64_t mine[2] = {static_cast<int64_t>(size), disp_unit};
    auto* all = new std::vector<Member>(static_cast<std::size_t>(n));  // (bad_alloc here ends the process)
    static_assert(sizeof(Member) == 2 * sizeof(int64_t));
    if (PMPI_Allgather(mine, 2, MPI_INT64_T, all->data(), 2, MPI_INT64_T, comm) != MPI_SUCCESS || window == 0 ||
        window >= Epochs::k_windows) {
      delete all;
      return;
    }
    delete members[window].exchange(all, std::memory_order_acq_rel);
  }
  void freed(uint32_t window) {
    if (window != 0 && window < Epochs::k_windows) delete members[window].exchange(nullptr, std::memory_order_acq_rel);
  }

  // Return true when RMA communication call `e` (with traits `t`) reaches
  // bytes outside its target's window for certain. The hot path (Put,
  // Get of a predefined type: most calls) is a load of the window's table,
  // a multiply and two compares, nothing allocated; a derived target
  // datatype takes the flattened definition the tracer keeps of it
  // (outside_derived).
  template <class E>
  bool outside(const E& e, const format::CallTraits& t) const {
    if (e.window == 0 || e.window >= Epochs::k_windows || !e.peer.has_value() || *e.peer < 0) return false;
    const std::vector<Member>* table = members[e.window].load(std::memory_order_acquire);
    if (table == nullptr || static_cast<std::size_t>(*e.peer) >= table->size()) return false;
    // Fetch_and_op and Compare_and_swap move one element of the origin's datatype.
    const bool single =
        t.buffers == format::BufferLayout::fetch_and_op || t.buffers == format::BufferLayout::compare_and_swap;
    const int64_t count = single ? 1 : e.target_count;
    const uint32_t type = single ? e.datatype : e.target_datatype;
    if (count <= 0) return false;
    const Member m = (*table)[static_cast<std::size_t>(*e.peer)];
    const Int128 at = static_cast<Int128>(static_cast<int64_t>(e.target_disp)) * m.disp_unit;
    if (type >= format::k_first_derived_id) return outside_derived(at, count, type, m.size);
    // A predefined type: count x its size (for a pair type, MPI_DOUBLE_INT,
    // its size is below its extent: a lower bound of the span).
    const int64_t size = g_tables->basic_size[type];
    return size > 0 && (at < 0 || at + static_cast<Int128>(count) * size > m.size);
  }

  // outside() of `count` elements of derived type `type` from byte `at` of
  // a window of `window_size` bytes: their true bounds from the type's
  // runs, the elements its extent apart (a truncated definition's run is
  // its hull [lb, lb + extent): the call is then written on entry where it
  // may fit, which costs only that write).
  [[gnu::noinline]] static bool outside_derived(Int128 at, int64_t count, uint32_t type, int64_t window_size) {
    const TypeExtent x = type_extent(type);
    if (!x.known || x.true_ub <= x.true_lb) return false;
    const Int128 last = static_cast<Int128>(count - 1) * x.extent;
    const Int128 lo = at + x.true_lb + std::min<Int128>(0, last);
    const Int128 hi = at + x.true_ub + std::max<Int128>(0, last);
    return lo < 0 || hi > window_size;
  }
};
WindowShapes* g_shapes = new WindowShapes;  // never destroyed

// The gather of a window creation with memory (WindowShapes::gather) that
// was not recorded: its wrapper's arguments `args` after MPI returned `rc`
// (any other call: nothing, at compile time).
template <Call C, class... A>
int window_gather_untraced(int rc, A&... args) noexcept {
  if constexpr (C == Call::Win_create || C == Call::Win_allocate || C == Call::Win_allocate_shared) {
    if (rc != MPI_SUCCESS) return rc;
    const auto at = std::forward_as_tuple(args...);
    if constexpr (C == Call::Win_create)  // (base, size, disp_unit, info, comm, win)
      g_shapes->gather(0, std::get<4>(at), std::get<1>(at), std::get<2>(at));
    else  // (size, disp_unit, info, comm, baseptr, win)
      g_shapes->gather(0, std::get<3>(at), std::get<0>(at), std::get<1>(at));
  }
  return rc;
}

// The derived datatypes committed (MPI_Type_commit, or MPI_Type_dup of a
// committed one), by id, for doubtful(): MPI rejects an uncommitted or freed
// datatype in communication, and the default error handler ends the process
// inside the call. Ids past k_types are not judged.
struct Committed {
  static constexpr uint32_t k_types = uint32_t{1} << 16;
  std::array<std::atomic<uint64_t>, k_types / 64> bits{};
  void set(uint32_t id) {
    if (id >= format::k_first_derived_id && id < k_types)
      bits[id / 64].fetch_or(uint64_t{1} << (id % 64), std::memory_order_relaxed);
  }
  // Return true when datatype `id` is freed, or derived and not committed.
  bool rejected(uint32_t id) const {
    if (id < format::k_first_derived_id) return false;
    if (id == format::k_invalid_id) return true;
    return id < k_types && (bits[id / 64].load(std::memory_order_relaxed) & (uint64_t{1} << (id % 64))) == 0;
  }
};
Committed* g_committed = new Committed;  // never destroyed

// The post of an RMA synchronization call on `win` (`assert_`: its assert
// argument, `group`: a start's group): the epochs it opened or closed.
auto epoch_post(Call c, const MPI_Win& win, int assert_ = 0, MPI_Group group = MPI_GROUP_NULL) {
  return [c, &win, assert_, group](auto& s, int rc) {
    if (rc == MPI_SUCCESS) g_epochs->took(c, s.e.window, (assert_ & MPI_MODE_NOSUCCEED) != 0, group, win);
  };
}

// The communicators of MPI_Comm_idup calls whose request has not completed
// (MPI-3.1 section 6.4.2: the new communicator may not be used before):
// doubtful() writes a call on one on entry (Open MPI may crash in it, as it
// does in MPI_Irecv). A request completed or freed readies its
// communicator; `any` keeps the programs that never call MPI_Comm_idup off
// the lock.
struct UnreadyComms {
  std::atomic<bool> any{false};
  SpinLock lock;
  std::vector<std::pair<uint32_t, uint64_t>> comms;  // (communicator id, request id)
  void add(uint32_t comm, uint64_t request) {
    SpinGuard<SpinLock> g(lock);
    comms.emplace_back(comm, request);
    any.store(true, std::memory_order_relaxed);
  }
  bool has(uint32_t comm) {
    if (!any.load(std::memory_order_relaxed)) return false;
    SpinGuard<SpinLock> g(lock);
    return std::any_of(comms.begin(), comms.end(), [comm](const auto& c) { return c.first == comm; });
  }
  // After call `e` returned: the requests it completed or freed.
  template <class E>
  void settle(const E& e) {
    if (!any.load(std::memory_order_relaxed)) return;
    const format::RequestEffect effect = format::call_traits(e.call).request;
    if (effect != format::RequestEffect::free && !format::completes_requests(effect) &&
        effect != format::RequestEffect::query)
      return;
    SpinGuard<SpinLock> g(lock);
    std::erase_if(comms, [&](const auto& c) {
      if (effect == format::RequestEffect::free) return c.second == e.request;
      for (std::size_t i = 0; i < e.completed.size(); ++i)  // (Event's vector or HotEvent's HotList)
        if (e.completed[i].request == c.second) return true;
      return false;
    });
    any.store(!comms.empty(), std::memory_order_relaxed);
  }
};
UnreadyComms* g_unready = new UnreadyComms;  // never destroyed

// Return true when the arguments of `e` fail one of the tests MPI makes
// first (a null or freed communicator or window, a negative count, a rank
// or tag out of range, no datatype for a non-empty buffer, an uncommitted
// or freed datatype, an RMA call with no epoch that reaches its target,
// MPI_REQUEST_NULL where a request is needed, a predefined handle freed;
// docs/tracer.md lists them): under the
// default error handler MPI aborts the job inside the call and the process
// ends with _exit, so the call is written when it is entered, as a call
// that has not returned (CallScope::expect_no_return). A false "true" only
// costs that early write; the analyzer's invalid-argument check decides.
// E: Event or format::HotEvent, which has no receive side and no in_place.
template <class E>
bool doubtful(const E& e) {
  constexpr bool full = std::is_same_v<E, Event>;
  using format::Role;
  const format::CallTraits& t = format::call_traits(e.call);
  // The tests of a call with no peer, tag or buffer to test.
  const auto bad_handle_or_count = [&] {
    return e.comm == format::k_null_id || e.comm == format::k_invalid_id || e.count < 0;
  };
  switch (t.role) {
    case Role::send: case Role::recv: case Role::sendrecv: case Role::probe: case Role::collective:
    case Role::rma_comm: case Role::rma_sync:
      break;
    case Role::request:
      // MPI_Start, MPI_Startall, MPI_Request_free and MPI_Cancel of
      // MPI_REQUEST_NULL (MPI_ERR_REQUEST).
      if constexpr (full) {
        const format::RequestEffect effect = t.request;
        if (effect == format::RequestEffect::start || effect == format::RequestEffect::free ||
            effect == format::RequestEffect::cancel) {
          if (e.requests.empty() ? e.request == 0
                                 : std::find(e.requests.begin(), e.requests.end(), uint64_t{0}) != e.requests.end())
            return true;
        }
      }
      return bad_handle_or_count();
    case Role::handle:
      // Freeing a predefined communicator, datatype or op (Op_free's op is
      // in new_datatype), or a datatype constructor on MPI_DATATYPE_NULL or
      // a freed type.
      switch (t.resource) {
        case format::Resource::comm_free:
          if (e.comm == format::k_comm_world || e.comm == format::k_comm_self) return true;
          break;
        case format::Resource::type_free:
          if (e.datatype < format::k_first_derived_id) return true;
          break;
        case format::Resource::type_commit:
          if (e.datatype == 0) return true;
          break;
        case format::Resource::op_free:
          if constexpr (full) {
            if (e.new_datatype < format::k_first_derived_id) return true;
          }
          break;
        case format::Resource::type_new:
          if (e.call != Call::Type_create_struct && (e.datatype == 0 || e.datatype == format::k_invalid_id))
            return true;
          if constexpr (full) {
            if (!e.counts.empty()) return true;  // a negative block length (type_blocks)
          }
          break;
        // MPI_Group_incl and its kin with a list of ranks (which MPI tests
        // against the group's size, not known here): written on entry,
        // they are rare.
        case format::Resource::group_new:
          if constexpr (full) {
            if (!e.counts.empty()) return true;
          }
          break;
        default: break;
      }
      return bad_handle_or_count();
    case Role::none: case Role::env: case Role::local_access:
    case Role::cuda: case Role::local: case Role::query: case Role::outside: case Role::thread:
      return bad_handle_or_count();
  }
  bool in_place = false;
  std::optional<int32_t> recv_peer;
  if constexpr (full) {
    if (e.recv_count < 0) return true;
    // An accumulate takes predefined ops only (MPI-3.1 section 11.3.4).
    if (t.role == Role::rma_comm && e.op >= format::k_first_derived_id) return true;
    if (e.op == format::k_invalid_id) return true;  // a freed op (op_free)
    in_place = e.in_place;
    recv_peer = e.recv_peer;
  }
  if (e.count < 0) return true;
  if (e.count > 0 && e.datatype == 0 && !in_place) return true;
  if (e.count > 0 && !in_place && g_committed->rejected(e.datatype)) return true;
  if (e.target_count < 0 || (e.target_count > 0 && g_committed->rejected(e.target_datatype))) return true;
  const bool rma = t.role == Role::rma_comm || t.role == Role::rma_sync;
  if (rma) {
    if (e.window == 0 || e.window == format::k_invalid_id) return true;
    if (t.role == Role::rma_comm && !g_epochs->allow(e.window, e.peer.value_or(-1))) return true;
    if (t.role == Role::rma_comm && g_shapes->outside(e, t)) return true;
    if (t.role == Role::rma_sync && !g_epochs->in_range(e.window, e.peer.value_or(-1))) return true;
  } else if (e.comm == format::k_null_id || e.comm == format::k_invalid_id || g_unready->has(e.comm)) {
    return true;
  }
  const bool sends = t.role == Role::send || t.role == Role::sendrecv;
  if (e.tag && (*e.tag < format::k_any_tag || (sends && *e.tag == format::k_any_tag))) return true;
  // Each peer read in place (copying the optionals into a list, as a loop
  // over {e.peer, recv_peer} did, read them back through a store-forwarding
  // stall: a few ns of every hot call).
  const auto bad_peer = [&](const std::optional<int32_t>& peer) {
    if (!peer.has_value()) return false;
    const int32_t p = *peer;
    if (p < format::k_root) return true;
    if (p < 0 || rma) return false;  // a window's group is not looked up here
    const CommFacts facts = comm_facts(e.comm);
    return facts.size > 0 && p >= facts.size;
  };
  return bad_peer(e.peer) || bad_peer(recv_peer);
}

// The content check of pending send buffers (tracer/content_hash.hpp):
// the hashes of pending operations' input bytes, under their own lock.
struct ContentCheck {
  SpinLock lock;
  content::Table table;
  std::atomic<std::size_t> pending{0};  // table.pending(), read without the lock
  bool on = false;                      // SMTRACE_HASH, and the annotate family recorded
  // cuPointerGetAttribute once the CUDA driver is in the process (device
  // memory must not be read from the host), and the loader's count of
  // objects loaded when it was last looked for (cuda_attribute).
  int (*cu_attribute)(void*, int, unsigned long long) = nullptr;
  unsigned long long loads_seen = 0;
  // False where the machine has no NVIDIA driver (no /dev/nvidiactl at
  // MPI_Init): then no device memory can exist and nothing is asked.
  bool cuda_possible = true;
  // After a change of the table, under the lock: say how many are pending.
  void publish() { pending.store(table.pending(), std::memory_order_relaxed); }
};
ContentCheck* g_content = new ContentCheck;  // never destroyed

// The contiguous pieces of datatype `id` (content::PiecesOf).
bool type_pieces(uint32_t id, std::vector<content::Piece>& pieces, int64_t& extent) {
  if (id < format::k_first_derived_id) {
    const int64_t size = g_tables->basic_size[id];
    if (size <= 0) return false;
    pieces.push_back({0, static_cast<uint64_t>(size)});
    extent = size;
    return true;
  }
  format::DatatypeDef* def = nullptr;
  if (!g_tables->defs.find(id, def) || !def) return false;
  extent = def->extent;
  for (const format::Run& r : def->runs)
    for (uint64_t k = 0; k < std::max<uint64_t>(r.count, 1); ++k) {
      if (pieces.size() >= 4096) return false;
      pieces.push_back({r.offset + static_cast<int64_t>(k) * r.stride, r.length});
    }
  return true;
}

// Return the CUDA driver's cuPointerGetAttribute, or nullptr while the
// driver is not in the process. The CUDA runtime opens libcuda itself, often
// after MPI_Init and into a local scope (not RTLD_DEFAULT's), so it is
// looked for by name, again whenever the loader has loaded more objects
// (dl_iterate_phdr's count, a few ns). Caller holds g_content->lock.
int (*cuda_attribute())(void*, int, unsigned long long) {
  ContentCheck& c = *g_content;
  if (c.cu_attribute || !c.cuda_possible) return c.cu_attribute;
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // the first object tells: stop
      },
      &adds);
  if (adds == c.loads_seen) return nullptr;
  c.loads_seen = adds;
  for (const char* name : {"libcuda.so.1", "libcuda.so"}) {
    void* lib = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) continue;
    c.cu_attribute = reinterpret_cast<int (*)(void*, int, unsigned long long)>(dlsym(lib, "cuPointerGetAttribute"));
    // (The reference NOLOAD took is kept: the function must outlive a
    // dlclose of the runtime's.)
    if (c.cu_attribute) break;
  }
  return c.cu_attribute;
}

// Return true when every range is host memory: without the CUDA driver in
// the process, always; with it, when the driver does not call it device
// (or managed) memory. Caller holds g_content->lock.
bool host_memory(const Range* ranges, std::size_t n) {
  if (!cuda_attribute()) return true;
  constexpr int k_memory_type = 2;  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
  constexpr int k_is_managed = 8;   // CU_POINTER_ATTRIBUTE_IS_MANAGED
  for (const Range& r : std::span(ranges, n)) {
    unsigned int type = 0, managed = 0;
    // An error: memory CUDA does not know (plain host memory), or no context.
    if (g_content->cu_attribute(&type, k_memory_type, r.lo) == 0 && type != 1) return false;
    if (g_content->cu_attribute(&managed, k_is_managed, r.lo) == 0 && managed) return false;
  }
  return true;
}

// A call that may complete requests is about to be written (`e`'s listed
// requests, or for a non-blocking poll those it completed): write a
// BUFFER_MODIFIED record for each whose hashed bytes changed.
template <class E>
void content_check(const E& e, uintptr_t site, bool completed_only) {
  if (g_content->pending.load(std::memory_order_relaxed) == 0) [[likely]]
    return;
  std::vector<std::pair<uint64_t, Range>> changed;
  {
    SpinGuard<SpinLock> lock(g_content->lock);
    Range where;
    auto ask = [&](uint64_t r) {
      if (r != 0 && g_content->table.changed(r, where)) changed.emplace_back(r, where);
    };
    if (completed_only) {
      for (const format::CompletedRequest& c : e.completed) ask(c.request);
      if (format::call_traits(e.call).request == format::RequestEffect::free) ask(e.request);
    } else {
      ask(e.request);
      for (uint64_t r : e.requests) ask(r);
    }
    // An RMA synchronization call that completes operations at the origin
    // (blocking: asked before its entry).
    if (const format::EpochStep step = format::epoch_step(format::call_traits(e.call).epoch);
        step.completes != format::Completion::none) {
      std::vector<Range> hulls;
      g_content->table.rma_completed(e.window, e.peer.value_or(-1), step.all_targets, hulls);
      for (const Range& h : hulls) changed.emplace_back(0, h);
    }
    g_content->publish();
  }
  for (const auto& [request, where] : changed)
    handlers::record_buffer_modified(request, where.lo, where.hi - where.lo, site);
}

// Set `ranges` to the bytes `e` hands MPI to read beyond the call
// (content::input_ranges). A hot call whose origin buffer is its (buf,
// count, datatype) (format::origin_read: a send, a Put, an accumulate) of a
// basic type is one range, made here (no full Event, no call_buffers: the
// hot paths' cost).
template <class E>
void read_ranges(const E& e, const format::CallTraits& t, std::vector<Range>& ranges, Range& one) {
  if constexpr (!std::is_same_v<E, Event>) {
    if (e.datatype < format::k_first_derived_id) switch (format::origin_read(t, e.peer)) {
        case format::OriginRead::none: return;
        case format::OriginRead::block:
          content::dense_range(e.buf, e.count, g_tables->basic_size[e.datatype], one);
          return;
        case format::OriginRead::other: break;
      }
  }
  Event full;
  const Event* ev = &full;
  if constexpr (std::is_same_v<E, Event>) ev = &e;
  else full = e.to_event();
  content::input_ranges(*ev, comm_facts(ev->comm), type_pieces, ranges);
}

// Return read_ranges' answer as (first, count): `one` where it was set.
std::pair<const Range*, std::size_t> ranges_of(const std::vector<Range>& ranges, const Range& one) {
  if (one.hi > one.lo) return {&one, 1};
  return {ranges.data(), ranges.size()};
}

// Hand the bytes `e` reads (read_ranges) to `keep(first, n)` under the
// table's lock when there are some and they are host memory.
template <class E, class F>
void keep_host_ranges(const E& e, const format::CallTraits& t, F&& keep) {
  std::vector<Range> ranges;
  Range one;
  read_ranges(e, t, ranges, one);
  const auto [first, n] = ranges_of(ranges, one);
  if (n == 0) return;
  SpinGuard<SpinLock> lock(g_content->lock);
  if (!host_memory(first, n)) return;
  keep(first, n);
  g_content->publish();
}

// After the traced call `e` returned MPI_SUCCESS: hash what a posted
// operation (or a started persistent one) reads, forget what completed.
template <class E>
void content_after(const E& e) {
  using format::RequestEffect;
  const format::CallTraits& t = format::call_traits(e.call);
  if (t.role == format::Role::rma_comm && t.request == RequestEffect::none) {
    // Put, the accumulates: the origin bytes, until a synchronization call
    // completes the operation.
    keep_host_ranges(e, t, [&](const Range* first, std::size_t n) {
      g_content->table.rma_issued(e.window, e.peer.value_or(-1), first, n);
    });
    return;
  }
  if (t.role == format::Role::rma_comm && t.request == RequestEffect::create) {
    // Rput, Raccumulate, Rget_accumulate: until the request completes or a
    // synchronization call completes the operation (Rget reads nothing here).
    if (e.count <= 0 || e.request == 0) return;
    keep_host_ranges(e, t, [&](const Range* first, std::size_t n) {
      g_content->table.rma_posted(e.request, e.window, e.peer.value_or(-1), first, n);
    });
    return;
  }
  switch (t.request) {
    case RequestEffect::create: case RequestEffect::persistent: {
      // Zero bytes: nothing hashed, nothing asked (the ping-pong's cost).
      bool empty = e.count <= 0;
      if constexpr (std::is_same_v<E, Event>) empty = empty && e.counts.empty();  // v collectives
      if (empty || e.request == 0 || t.role == format::Role::recv) return;
      keep_host_ranges(e, t, [&](const Range* first, std::size_t n) {
        if (t.request == RequestEffect::create) g_content->table.posted(e.request, first, n);
        else g_content->table.define(e.request, std::vector<Range>(first, first + n));
      });
      return;
    }
    case RequestEffect::start: {
      SpinGuard<SpinLock> lock(g_content->lock);
      if (e.requests.empty()) g_content->table.started(e.request);
      for (uint64_t r : e.requests) g_content->table.started(r);
      g_content->publish();
      return;
    }
    case RequestEffect::free: {
      SpinGuard<SpinLock> lock(g_content->lock);
      g_content->table.freed(e.request);
      g_content->publish();
      return;
    }
    case RequestEffect::complete_all: case RequestEffect::complete_any: case RequestEffect::complete_some:
    case RequestEffect::query:
      if (e.completed.empty() || g_content->pending.load(std::memory_order_relaxed) == 0) return;
      {
        SpinGuard<SpinLock> lock(g_content->lock);
        for (const format::CompletedRequest& c : e.completed) g_content->table.completed(c.request);
        g_content->publish();
      }
      return;
    case RequestEffect::none: case RequestEffect::cancel:
      return;
  }
}

// Run one traced call in scope `s` (CallScope or HotScope): gather inputs,
// enter, call PMPI once, gather outputs, leave. The content check asks a
// blocking completion's requests before its entry is written, a poll's
// completed requests before its event is.
template <class Scope, class F, class Pre, class Post>
int run_scope(Scope& s, uintptr_t site, F&& pmpi, Pre&& pre, Post&& post) {
  pre(s.e);
  // A blocking call's entry is written anyway: its arguments need no test.
  if (!s.writes_entry() && doubtful(s.e)) s.expect_no_return();
  const bool check = g_content->on;
  if (check && s.writes_entry()) content_check(s.e, site, false);
  s.enter();
  int rc = pmpi();
  post(s, rc);
  g_unready->settle(s.out());
  if (check && !s.writes_entry()) content_check(s.out(), site, true);
  s.leave(rc);
  if (check && rc == MPI_SUCCESS) content_after(s.e);
  return rc;
}

// Run one traced call, and tell load/store capture what the call started or
// completed.
template <class F, class Pre, class Post>
int traced(Call c, uintptr_t site, F&& pmpi, Pre&& pre, Post&& post) {
  CallScope s(c, site);
  const int rc = run_scope(s, site, pmpi, pre, post);
  if (rc == MPI_SUCCESS && access::attached()) access::after_call(s.e, comm_facts(s.e.comm), type_extent);
  return rc;
}
constexpr auto no_post = [](auto&, int) {};

// traced() for the shapes whose fields all fit format::HotEvent (`pre` and
// `post` take either scope): through HotScope while handlers::hot_path(),
// which writes the same records without an Event. G: the groups of fields
// the shape's calls have (format::HotGroups): a group said `no` must be
// left at its defaults by `pre` and `post`.
template <format::HotGroups G, class F, class Pre, class Post>
int traced_hot(Call c, uintptr_t site, F&& pmpi, Pre&& pre, Post&& post) {
  if (!handlers::hot_path()) return traced(c, site, pmpi, pre, post);
  handlers::HotScopeOf<G> s(c, site);
  return run_scope(s, site, pmpi, pre, post);
}

// traced_hot for a call that completes `n` requests: a HotEvent holds at
// most HotEvent::k_max_requests of them, more go through traced().
template <class F, class Pre, class Post>
int traced_completion(Call c, uintptr_t site, int n, F&& pmpi, Pre&& pre, Post&& post) {
  if (n > static_cast<int>(format::HotEvent::k_max_requests)) return traced(c, site, pmpi, pre, post);
  return traced_hot<format::k_hot_requests>(c, site, pmpi, pre, post);
}

bool is_persistent(Call c) { return format::call_traits(c).request == format::RequestEffect::persistent; }

// ---------------------------------------------------------------------------
// Shapes: one per signature family of wrappers.def

// force::apply for the receive shapes; on the hot path nothing is forced
// (handlers::hot_path).
void forced(const Event& e, int& source) { force::apply(e, source); }
void forced(const format::HotEvent&, int&) {}

namespace shape {

template <class F>
int send(Call c, uintptr_t site, F&& pmpi, const void*& buf, int& count, MPI_Datatype& type, int& dest, int& tag,
         MPI_Comm& comm) {
  return traced_hot<format::k_hot_p2p>(c, site, pmpi, [&](auto& e) { p2p(e, buf, count, type, dest, tag, comm); },
                                       no_post);
}

template <class F>
int isend(Call c, uintptr_t site, F&& pmpi, const void*& buf, int& count, MPI_Datatype& type, int& dest, int& tag,
          MPI_Comm& comm, MPI_Request*& request) {
  return traced_hot<format::k_hot_requests>(c, site, pmpi, [&](auto& e) { p2p(e, buf, count, type, dest, tag, comm); },
                [&](auto& s, int rc) {
                  if (rc == MPI_SUCCESS) s.out().request = new_request(*request, false, is_persistent(c), 0);
                });
}

template <class F>
int recv(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, int& source, int& tag,
         MPI_Comm& comm, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced_hot<format::k_hot_p2p>(
      c, site, pmpi, [&](auto& e) { p2p(e, buf, count, type, source, tag, comm); forced(e, source); },
                [&](auto& s, int rc) {
                  if (rc == MPI_SUCCESS) fill_status(s.status(), *status, type_size(type));
                });
}

template <class F>
int irecv(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, int& source, int& tag,
          MPI_Comm& comm, MPI_Request*& request) {
  return traced_hot<format::k_hot_requests>(
      c, site, pmpi, [&](auto& e) { p2p(e, buf, count, type, source, tag, comm); forced(e, source); },
                [&](auto& s, int rc) {
                  if (rc == MPI_SUCCESS)
                    s.out().request = new_request(*request, true, is_persistent(c), type_size(type));
                });
}

template <class F>
int sendrecv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, int& dest,
             int& stag, void*& rbuf, int& rcount, MPI_Datatype& rtype, int& source, int& rtag, MPI_Comm& comm,
             MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced(
      c, site, pmpi,
      [&](Event& e) {
        p2p(e, sbuf, scount, stype, dest, stag, comm);
        recv_side(e, rbuf, rcount, rtype);
        e.recv_peer = rank_value(source);
        e.recv_tag = tag_value(rtag);
        force::apply(e, source);
      },
      [&](CallScope& s, int rc) {
        if (rc == MPI_SUCCESS) fill_status(s.status(), *status, type_size(rtype));
      });
}

template <class F>
int sendrecv_replace(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, int& dest,
                     int& stag, int& source, int& rtag, MPI_Comm& comm, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced(
      c, site, pmpi,
      [&](Event& e) {
        p2p(e, buf, count, type, dest, stag, comm);
        recv_side(e, buf, count, type);
        e.recv_peer = rank_value(source);
        e.recv_tag = tag_value(rtag);
        force::apply(e, source);
      },
      [&](CallScope& s, int rc) {
        if (rc == MPI_SUCCESS) fill_status(s.status(), *status, type_size(type));
      });
}

template <class F>
int probe(Call c, uintptr_t site, F&& pmpi, int& source, int& tag, MPI_Comm& comm, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced(
      c, site, pmpi,
      [&](Event& e) {
        e.comm = comm_id(comm);
        e.peer = rank_value(source);
        e.tag = tag_value(tag);
        force::apply(e, source);
      },
      [&](CallScope& s, int rc) {
        if (rc == MPI_SUCCESS) fill_status(s.status(), *status, 0);
      });
}

template <class F>
int iprobe(Call c, uintptr_t site, F&& pmpi, int& source, int& tag, MPI_Comm& comm, int*& flag, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced(
      c, site, pmpi,
      [&](Event& e) {
        e.comm = comm_id(comm);
        e.peer = rank_value(source);
        e.tag = tag_value(tag);
        force::apply(e, source);
      },
      [&](CallScope& s, int rc) {
        if (rc != MPI_SUCCESS) return;
        force::polled(s.e, *flag != 0);
        s.out().flag = *flag != 0;
        if (*flag) fill_status(s.status(), *status, 0);
        else s.unsuccessful_poll();
      });
}

template <class F>
int start(Call c, uintptr_t site, F&& pmpi, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { e.request = request_info(*request).id; }, no_post);
}

template <class F>
int startall(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Request*& requests) {
  return traced(
      c, site, pmpi,
      [&](Event& e) {
        for (int i = 0; i < count; ++i) e.requests.push_back(request_info(requests[i]).id);
      },
      no_post);
}

template <class F>
int wait(Call c, uintptr_t site, F&& pmpi, MPI_Request*& request, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced_completion(c, site, 1, pmpi, [&](auto& e) { before_completion(e, 1, request); },
                           [&](auto& s, int rc) {
                             if (rc == MPI_SUCCESS) completed(s.out(), 0, status);
                           });
}

template <class F>
int test(Call c, uintptr_t site, F&& pmpi, MPI_Request*& request, int*& flag, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced_completion(c, site, 1, pmpi, [&](auto& e) { before_completion(e, 1, request); },
                           [&](auto& s, int rc) {
                             if (rc != MPI_SUCCESS) return;
                             s.out().flag = *flag != 0;
                             if (*flag) completed(s.out(), 0, status);
                             else s.unsuccessful_poll();
                           });
}

template <class F>
int waitall(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Request*& requests, MPI_Status*& statuses) {
  statuses = statuses_for(count, statuses);
  return traced_completion(c, site, count, pmpi, [&](auto& e) { before_completion(e, count, requests); },
                           [&](auto& s, int rc) {
                             if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
                             for (int i = 0; i < count; ++i)
                               completed(s.out(), static_cast<size_t>(i), &statuses[i]);
                           });
}

template <class F>
int testall(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Request*& requests, int*& flag,
            MPI_Status*& statuses) {
  statuses = statuses_for(count, statuses);
  return traced_completion(c, site, count, pmpi, [&](auto& e) { before_completion(e, count, requests); },
                [&](auto& s, int rc) {
                  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
                  s.out().flag = *flag != 0;
                  if (!*flag) {
                    s.unsuccessful_poll();
                    return;
                  }
                  for (int i = 0; i < count; ++i) completed(s.out(), static_cast<size_t>(i), &statuses[i]);
                });
}

template <class F>
int waitany(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Request*& requests, int*& index, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced_completion(c, site, count, pmpi, [&](auto& e) { before_completion(e, count, requests); },
                [&](auto& s, int rc) {
                  if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
                    completed(s.out(), static_cast<size_t>(*index), status);
                });
}

template <class F>
int testany(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Request*& requests, int*& index, int*& flag,
            MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  return traced_completion(c, site, count, pmpi, [&](auto& e) { before_completion(e, count, requests); },
                [&](auto& s, int rc) {
                  if (rc != MPI_SUCCESS) return;
                  s.out().flag = *flag != 0;
                  if (*flag && *index != MPI_UNDEFINED) completed(s.out(), static_cast<size_t>(*index), status);
                  else if (!*flag) s.unsuccessful_poll();
                });
}

template <class F>
int waitsome(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Request*& requests, int*& outcount, int*& indices,
             MPI_Status*& statuses) {
  statuses = statuses_for(count, statuses);
  return traced_completion(c, site, count, pmpi, [&](auto& e) { before_completion(e, count, requests); },
                [&](auto& s, int rc) {
                  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
                  if (*outcount == MPI_UNDEFINED) return;
                  for (int i = 0; i < *outcount; ++i)
                    completed(s.out(), static_cast<size_t>(indices[i]), &statuses[i]);
                  if (format::call_traits(c).poll) {  // Testsome
                    s.out().flag = *outcount > 0;
                    if (*outcount == 0) s.unsuccessful_poll();
                  }
                });
}

template <class F>
int request_free(Call c, uintptr_t site, F&& pmpi, MPI_Request*& request) {
  MPI_Request handle = *request;
  uint64_t e_request = 0;
  return traced(c, site, pmpi, [&](Event& e) { e.request = e_request = request_info(handle).id; },
                [&](CallScope&, int rc) {
                  if (rc == MPI_SUCCESS && format::call_traits(c).request == format::RequestEffect::free)
                    g_tables->requests.free(key(handle), e_request);
                });
}

// --- collectives

template <class F>
int barrier(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, no_post);
}

auto with_request(Call c, MPI_Request* request) {
  return [c, request](CallScope& s, int rc) {
    (void)c;
    if (rc == MPI_SUCCESS) s.out().request = new_request(*request, false, false, 0);
  };
}

template <class F>
int ibarrier(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, with_request(c, request));
}

void bcast_args(Event& e, void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  e.comm = comm_id(comm);
  e.peer = rank_value(root);
  e.buf = addr(buf);
  e.count = count;
  e.datatype = type_id(type);
}

template <class F>
int bcast(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, int& root, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) { bcast_args(e, buf, count, type, root, comm); }, no_post);
}
template <class F>
int ibcast(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, int& root, MPI_Comm& comm,
           MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { bcast_args(e, buf, count, type, root, comm); },
                with_request(c, request));
}

void reduce_args(Event& e, const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  e.comm = comm_id(comm);
  send_side(e, sbuf, count, type);
  recv_side(e, rbuf, count, type);
  e.op = op_id(op);
}

template <class F>
int reduce(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, void*& rbuf, int& count, MPI_Datatype& type, MPI_Op& op,
           int& root, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    reduce_args(e, sbuf, rbuf, count, type, op, comm);
    e.peer = rank_value(root);
  }, no_post);
}
template <class F>
int ireduce(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, void*& rbuf, int& count, MPI_Datatype& type,
            MPI_Op& op, int& root, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    reduce_args(e, sbuf, rbuf, count, type, op, comm);
    e.peer = rank_value(root);
  }, with_request(c, request));
}
template <class F>
int allreduce(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, void*& rbuf, int& count, MPI_Datatype& type,
              MPI_Op& op, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) { reduce_args(e, sbuf, rbuf, count, type, op, comm); }, no_post);
}
template <class F>
int iallreduce(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, void*& rbuf, int& count, MPI_Datatype& type,
               MPI_Op& op, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { reduce_args(e, sbuf, rbuf, count, type, op, comm); },
                with_request(c, request));
}

void gather_args(Event& e, const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  e.comm = comm_id(comm);
  send_side(e, sbuf, scount, stype);
  if (rbuf == MPI_IN_PLACE) e.in_place = true;
  else recv_side(e, rbuf, rcount, rtype);
}

template <class F>
int gather(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
           int& rcount, MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    gather_args(e, sbuf, scount, stype, rbuf, rcount, rtype, comm);
    e.peer = rank_value(root);
  }, no_post);
}
template <class F>
int igather(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
            int& rcount, MPI_Datatype& rtype, int& root, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    gather_args(e, sbuf, scount, stype, rbuf, rcount, rtype, comm);
    e.peer = rank_value(root);
  }, with_request(c, request));
}
template <class F>
int allgather(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
              int& rcount, MPI_Datatype& rtype, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) { gather_args(e, sbuf, scount, stype, rbuf, rcount, rtype, comm); },
                no_post);
}
template <class F>
int iallgather(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
               int& rcount, MPI_Datatype& rtype, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { gather_args(e, sbuf, scount, stype, rbuf, rcount, rtype, comm); },
                with_request(c, request));
}

void gatherv_args(Event& e, const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
                  const int* displs, MPI_Datatype rtype, int root, MPI_Comm comm) {
  e.comm = comm_id(comm);
  e.peer = rank_value(root);
  send_side(e, sbuf, scount, stype);
  e.recv_buf = addr(rbuf);
  e.recv_datatype = type_id(rtype);
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  bool receiver = root == MPI_ROOT || root == rank || root < -10;  // allgatherv passes root < -10
  if (receiver && rcounts) {
    int n = comm_size_for(comm);
    e.recv_counts = ints(rcounts, n);
    e.recv_displs = ints(displs, n);
  }
}

template <class F>
int gatherv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
            const int*& rcounts, const int*& displs, MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  return traced(c, site, pmpi,
                [&](Event& e) { gatherv_args(e, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm); },
                no_post);
}
template <class F>
int igatherv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
             const int*& rcounts, const int*& displs, MPI_Datatype& rtype, int& root, MPI_Comm& comm,
             MPI_Request*& request) {
  return traced(c, site, pmpi,
                [&](Event& e) { gatherv_args(e, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm); },
                with_request(c, request));
}
template <class F>
int allgatherv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
               const int*& rcounts, const int*& displs, MPI_Datatype& rtype, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    gatherv_args(e, sbuf, scount, stype, rbuf, rcounts, displs, rtype, -100, comm);
    e.peer.reset();
  }, no_post);
}
template <class F>
int iallgatherv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype, void*& rbuf,
                const int*& rcounts, const int*& displs, MPI_Datatype& rtype, MPI_Comm& comm,
                MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    gatherv_args(e, sbuf, scount, stype, rbuf, rcounts, displs, rtype, -100, comm);
    e.peer.reset();
  }, with_request(c, request));
}

void scatterv_args(Event& e, const void* sbuf, const int* scounts, const int* displs, MPI_Datatype stype, void* rbuf,
                   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  e.comm = comm_id(comm);
  e.peer = rank_value(root);
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  if ((root == MPI_ROOT || root == rank) && scounts) {
    int n = comm_size_for(comm);
    e.buf = addr(sbuf);
    e.datatype = type_id(stype);
    e.counts = ints(scounts, n);
    e.displs = ints(displs, n);
  }
  if (rbuf == MPI_IN_PLACE) e.in_place = true;
  else recv_side(e, rbuf, rcount, rtype);
}

template <class F>
int scatterv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& displs,
             MPI_Datatype& stype, void*& rbuf, int& rcount, MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  return traced(c, site, pmpi,
                [&](Event& e) { scatterv_args(e, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm); },
                no_post);
}
template <class F>
int iscatterv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& displs,
              MPI_Datatype& stype, void*& rbuf, int& rcount, MPI_Datatype& rtype, int& root, MPI_Comm& comm,
              MPI_Request*& request) {
  return traced(c, site, pmpi,
                [&](Event& e) { scatterv_args(e, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm); },
                with_request(c, request));
}

void alltoallv_args(Event& e, const void* sbuf, const int* scounts, const int* sdispls, void* rbuf,
                    const int* rcounts, const int* rdispls, MPI_Comm comm) {
  e.comm = comm_id(comm);
  int n = comm_size_for(comm);
  if (sbuf == MPI_IN_PLACE) {
    e.in_place = true;
  } else {
    e.buf = addr(sbuf);
    e.counts = ints(scounts, n);
    e.displs = ints(sdispls, n);
  }
  e.recv_buf = addr(rbuf);
  e.recv_counts = ints(rcounts, n);
  e.recv_displs = ints(rdispls, n);
}

template <class F>
int alltoallv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& sdispls,
              MPI_Datatype& stype, void*& rbuf, const int*& rcounts, const int*& rdispls, MPI_Datatype& rtype,
              MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    alltoallv_args(e, sbuf, scounts, sdispls, rbuf, rcounts, rdispls, comm);
    if (!e.in_place) e.datatype = type_id(stype);
    e.recv_datatype = type_id(rtype);
  }, no_post);
}
template <class F>
int ialltoallv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& sdispls,
               MPI_Datatype& stype, void*& rbuf, const int*& rcounts, const int*& rdispls, MPI_Datatype& rtype,
               MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    alltoallv_args(e, sbuf, scounts, sdispls, rbuf, rcounts, rdispls, comm);
    if (!e.in_place) e.datatype = type_id(stype);
    e.recv_datatype = type_id(rtype);
  }, with_request(c, request));
}
template <class F>
int alltoallw(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& sdispls,
              const MPI_Datatype*& stypes, void*& rbuf, const int*& rcounts, const int*& rdispls,
              const MPI_Datatype*& rtypes, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    alltoallv_args(e, sbuf, scounts, sdispls, rbuf, rcounts, rdispls, comm);
    int n = comm_size_for(comm);
    if (!e.in_place) e.datatypes = type_ids(stypes, n);
    e.recv_datatypes = type_ids(rtypes, n);
  }, no_post);
}
template <class F>
int ialltoallw(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& sdispls,
               const MPI_Datatype*& stypes, void*& rbuf, const int*& rcounts, const int*& rdispls,
               const MPI_Datatype*& rtypes, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    alltoallv_args(e, sbuf, scounts, sdispls, rbuf, rcounts, rdispls, comm);
    int n = comm_size_for(comm);
    if (!e.in_place) e.datatypes = type_ids(stypes, n);
    e.recv_datatypes = type_ids(rtypes, n);
  }, with_request(c, request));
}

void reduce_scatter_args(Event& e, const void* sbuf, void* rbuf, const int* rcounts, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm) {
  e.comm = comm_id(comm);
  if (sbuf == MPI_IN_PLACE) e.in_place = true;
  else e.buf = addr(sbuf);
  e.datatype = type_id(type);
  e.recv_buf = addr(rbuf);
  e.recv_datatype = e.datatype;
  e.recv_counts = ints(rcounts, comm_size_for(comm));
  e.op = op_id(op);
}
template <class F>
int reduce_scatter(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, void*& rbuf, const int*& rcounts,
                   MPI_Datatype& type, MPI_Op& op, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) { reduce_scatter_args(e, sbuf, rbuf, rcounts, type, op, comm); },
                no_post);
}
template <class F>
int ireduce_scatter(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, void*& rbuf, const int*& rcounts,
                    MPI_Datatype& type, MPI_Op& op, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { reduce_scatter_args(e, sbuf, rbuf, rcounts, type, op, comm); },
                with_request(c, request));
}

// --- communicators and groups

auto new_comm_post(MPI_Comm* newcomm, MPI_Comm parent) {
  return [newcomm, parent](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS || *newcomm == MPI_COMM_NULL) return;
    g_tables->comms.erase(key(*newcomm));  // a handle reused after Comm_free
    s.out().new_comm = comm_id(*newcomm, comm_id(parent));
  };
}

template <class F>
int comm_dup(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_dup_with_info(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Info&, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_split(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& color, int& key_, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.color = color == MPI_UNDEFINED ? -1 : color;
    e.key = key_;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_split_type(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& type, int& key_, MPI_Info&,
                    MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.color = type == MPI_UNDEFINED ? -1 : type;
    e.key = key_;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_create(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Group& group, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.group = group_id(group);
  }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_create_group(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Group& group, int& tag,
                      MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.group = group_id(group);
    e.tag = tag_value(tag);
  }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_idup(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Comm*& newcomm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, [&](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS || *newcomm == MPI_COMM_NULL) return;
    g_tables->comms.erase(key(*newcomm));
    s.out().new_comm = comm_id(*newcomm, comm_id(comm), comm);
    s.out().request = new_request(*request, false, false, 0);
    g_unready->add(s.out().new_comm, s.out().request);
  });
}
template <class F>
int comm_free(Call c, uintptr_t site, F&& pmpi, MPI_Comm*& comm) {
  MPI_Comm handle = *comm;
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(handle); },
                [&](CallScope& s, int rc) {
                  if (rc == MPI_SUCCESS) mark_freed(g_tables->comms, key(handle), s.e.comm);
                });
}

auto new_group_post(MPI_Group* newgroup) {
  return [newgroup](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS || *newgroup == MPI_GROUP_NULL || *newgroup == MPI_GROUP_EMPTY) return;
    g_tables->groups.erase(key(*newgroup));
    s.out().new_comm = group_id(*newgroup);
  };
}

template <class F>
int comm_group(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Group*& group) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, new_group_post(group));
}
template <class F>
int group_incl(Call c, uintptr_t site, F&& pmpi, MPI_Group& group, int& n, const int*& ranks, MPI_Group*& newgroup) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.group = group_id(group);
    e.count = n;
    e.counts = ints(ranks, n);
  }, new_group_post(newgroup));
}
template <class F>
int group_range(Call c, uintptr_t site, F&& pmpi, MPI_Group& group, int& n, int (*&ranges)[3], MPI_Group*& newgroup) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.group = group_id(group);
    e.count = n;
    if (ranges) e.counts = ints(&ranges[0][0], 3 * n);
  }, new_group_post(newgroup));
}
template <class F>
int group_set(Call c, uintptr_t site, F&& pmpi, MPI_Group& g1, MPI_Group& g2, MPI_Group*& newgroup) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.group = group_id(g1);
    e.comm = group_id(g2);  // the second input group (a CommDef id like the first)
  }, new_group_post(newgroup));
}
template <class F>
int group_free(Call c, uintptr_t site, F&& pmpi, MPI_Group*& group) {
  MPI_Group handle = *group;
  return traced(c, site, pmpi, [&](Event& e) { e.group = group_id(handle); },
                [&](CallScope& s, int rc) {
                  if (rc == MPI_SUCCESS) mark_freed(g_tables->groups, key(handle), s.e.group);
                });
}
template <class F>
int win_get_group(Call c, uintptr_t site, F&& pmpi, MPI_Win& win, MPI_Group*& group) {
  return traced(c, site, pmpi, [&](Event& e) { e.window = window_id(win); }, new_group_post(group));
}

// --- windows

auto new_window_post(MPI_Win* win) {
  return [win](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS || *win == MPI_WIN_NULL) return;
    g_tables->windows.erase(key(*win));
    s.out().window = window_id(*win);
    g_epochs->created(s.out().window, *win);
  };
}

// The post of a window creation with memory: new_window_post, then
// `more` (its outputs) on success, and the members' gather, exactly once
// on success, also when the bookkeeping before it throws.
template <class More>
auto window_post(MPI_Win* win, MPI_Comm comm, MPI_Aint size, int disp_unit, More more) {
  return [=](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS) return;
    try {
      new_window_post(win)(s, rc);
      more(s);
    } catch (...) {
      g_shapes->gather(0, comm, size, disp_unit);
      throw;
    }
    g_shapes->gather(*win != MPI_WIN_NULL ? s.out().window : 0, comm, size, disp_unit);
  };
}

template <class F>
int win_create(Call c, uintptr_t site, F&& pmpi, void*& base, MPI_Aint& size, int& disp_unit, MPI_Info&,
               MPI_Comm& comm, MPI_Win*& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.win_base = addr(base);
    e.win_size = static_cast<uint64_t>(size);
    e.disp_unit = disp_unit;
  }, window_post(win, comm, size, disp_unit, [](CallScope&) {}));
}
template <class F>
int win_allocate(Call c, uintptr_t site, F&& pmpi, MPI_Aint& size, int& disp_unit, MPI_Info&, MPI_Comm& comm,
                 void*& baseptr, MPI_Win*& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.win_size = static_cast<uint64_t>(size);
    e.disp_unit = disp_unit;
  }, window_post(win, comm, size, disp_unit, [&](CallScope& s) {
    void* base = nullptr;
    std::memcpy(&base, baseptr, sizeof base);
    s.out().win_base = addr(base);
    s.out().win_size = static_cast<uint64_t>(size);
    s.out().disp_unit = disp_unit;
  }));
}
template <class F>
int win_create_dynamic(Call c, uintptr_t site, F&& pmpi, MPI_Info&, MPI_Comm& comm, MPI_Win*& win) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, new_window_post(win));
}
template <class F>
int win_attach(Call c, uintptr_t site, F&& pmpi, MPI_Win& win, void*& base, MPI_Aint& size) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.win_base = addr(base);
    e.win_size = static_cast<uint64_t>(size);
  }, no_post);
}
template <class F>
int win_detach(Call c, uintptr_t site, F&& pmpi, MPI_Win& win, const void*& base) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.win_base = addr(base);
  }, no_post);
}
template <class F>
int win_free(Call c, uintptr_t site, F&& pmpi, MPI_Win*& win) {
  MPI_Win handle = *win;
  return traced(c, site, pmpi, [&](Event& e) { e.window = window_id(handle); },
                [&](CallScope& s, int rc) {
                  if (rc != MPI_SUCCESS) return;
                  mark_freed(g_tables->windows, key(handle), s.e.window);
                  g_shapes->freed(s.e.window);
                });
}

uint32_t assert_bits(int a) {
  uint32_t out = 0;
  if (a & MPI_MODE_NOCHECK) out |= format::assert_flag::nocheck;
  if (a & MPI_MODE_NOSTORE) out |= format::assert_flag::nostore;
  if (a & MPI_MODE_NOPUT) out |= format::assert_flag::noput;
  if (a & MPI_MODE_NOPRECEDE) out |= format::assert_flag::noprecede;
  if (a & MPI_MODE_NOSUCCEED) out |= format::assert_flag::nosucceed;
  if (a & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
    out |= format::assert_flag::other;
  return out;
}

template <class F>
int win_fence(Call c, uintptr_t site, F&& pmpi, int& assert_, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.assert_flags = assert_bits(assert_);
  }, epoch_post(c, win, assert_));
}
template <class F>
int win_assert(Call c, uintptr_t site, F&& pmpi, int& assert_, MPI_Win& win) {
  return win_fence(c, site, pmpi, assert_, win);
}
template <class F>
int win_lock(Call c, uintptr_t site, F&& pmpi, int& lock_type, int& rank, int& assert_, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.peer = rank_value(rank);
    e.lock_type = lock_type == MPI_LOCK_EXCLUSIVE ? format::LockType::exclusive
                  : lock_type == MPI_LOCK_SHARED  ? format::LockType::shared
                                                  : format::LockType::unspecified;  // erroneous
    e.assert_flags = assert_bits(assert_);
  }, epoch_post(c, win));
}
template <class F>
int win_rank(Call c, uintptr_t site, F&& pmpi, int& rank, MPI_Win& win) {
  return traced_hot<format::k_hot_rma_sync>(c, site, pmpi, [&](auto& e) {
    e.window = window_id(win);
    e.peer = rank_value(rank);
  }, epoch_post(c, win));
}
template <class F>
int win_only(Call c, uintptr_t site, F&& pmpi, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) { e.window = window_id(win); }, epoch_post(c, win));
}
template <class F>
int win_group(Call c, uintptr_t site, F&& pmpi, MPI_Group& group, int& assert_, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.group = group_id(group);
    e.assert_flags = assert_bits(assert_);
  }, epoch_post(c, win, 0, group));
}
template <class F>
int win_test(Call c, uintptr_t site, F&& pmpi, MPI_Win& win, int*& flag) {
  return traced(c, site, pmpi, [&](Event& e) { e.window = window_id(win); },
                [&](CallScope& s, int rc) {
                  if (rc == MPI_SUCCESS) s.out().flag = *flag != 0;
                });
}

// --- one-sided communication

template <class E>
void rma_args(E& e, const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
              MPI_Datatype ttype, MPI_Win win) {
  e.window = window_id(win);
  e.peer = rank_value(target);
  e.buf = addr(obuf);
  e.count = ocount;
  e.datatype = type_id(otype);
  e.target_disp = static_cast<uint64_t>(tdisp);
  e.target_count = tcount;
  e.target_datatype = type_id(ttype);
}

template <class O, class F>
int put(Call c, uintptr_t site, F&& pmpi, O*& obuf, int& ocount, MPI_Datatype& otype, int& target, MPI_Aint& tdisp,
        int& tcount, MPI_Datatype& ttype, MPI_Win& win) {
  return traced_hot<format::k_hot_rma>(c, site, pmpi,
                    [&](auto& e) { rma_args(e, obuf, ocount, otype, target, tdisp, tcount, ttype, win); }, no_post);
}
template <class O, class F>
int rput(Call c, uintptr_t site, F&& pmpi, O*& obuf, int& ocount, MPI_Datatype& otype, int& target, MPI_Aint& tdisp,
         int& tcount, MPI_Datatype& ttype, MPI_Win& win, MPI_Request*& request) {
  return traced(c, site, pmpi,
                [&](Event& e) { rma_args(e, obuf, ocount, otype, target, tdisp, tcount, ttype, win); },
                with_request(c, request));
}
template <class F>
int accumulate(Call c, uintptr_t site, F&& pmpi, const void*& obuf, int& ocount, MPI_Datatype& otype, int& target,
               MPI_Aint& tdisp, int& tcount, MPI_Datatype& ttype, MPI_Op& op, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    rma_args(e, obuf, ocount, otype, target, tdisp, tcount, ttype, win);
    e.op = op_id(op);
  }, no_post);
}
template <class F>
int raccumulate(Call c, uintptr_t site, F&& pmpi, const void*& obuf, int& ocount, MPI_Datatype& otype, int& target,
                MPI_Aint& tdisp, int& tcount, MPI_Datatype& ttype, MPI_Op& op, MPI_Win& win,
                MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    rma_args(e, obuf, ocount, otype, target, tdisp, tcount, ttype, win);
    e.op = op_id(op);
  }, with_request(c, request));
}
template <class F>
int get_accumulate(Call c, uintptr_t site, F&& pmpi, const void*& obuf, int& ocount, MPI_Datatype& otype,
                   void*& rbuf, int& rcount, MPI_Datatype& rtype, int& target, MPI_Aint& tdisp, int& tcount,
                   MPI_Datatype& ttype, MPI_Op& op, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    rma_args(e, obuf, ocount, otype, target, tdisp, tcount, ttype, win);
    e.op = op_id(op);
    e.result_buf = addr(rbuf);
    e.result_count = rcount;
    e.result_datatype = type_id(rtype);
  }, no_post);
}
template <class F>
int rget_accumulate(Call c, uintptr_t site, F&& pmpi, const void*& obuf, int& ocount, MPI_Datatype& otype,
                    void*& rbuf, int& rcount, MPI_Datatype& rtype, int& target, MPI_Aint& tdisp, int& tcount,
                    MPI_Datatype& ttype, MPI_Op& op, MPI_Win& win, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    rma_args(e, obuf, ocount, otype, target, tdisp, tcount, ttype, win);
    e.op = op_id(op);
    e.result_buf = addr(rbuf);
    e.result_count = rcount;
    e.result_datatype = type_id(rtype);
  }, with_request(c, request));
}
template <class F>
int fetch_and_op(Call c, uintptr_t site, F&& pmpi, const void*& obuf, void*& rbuf, MPI_Datatype& type, int& target,
                 MPI_Aint& tdisp, MPI_Op& op, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.peer = rank_value(target);
    e.buf = addr(obuf);
    e.result_buf = addr(rbuf);
    e.datatype = type_id(type);
    e.target_disp = static_cast<uint64_t>(tdisp);
    e.op = op_id(op);
  }, no_post);
}
template <class F>
int compare_and_swap(Call c, uintptr_t site, F&& pmpi, const void*& obuf, const void*& cbuf, void*& rbuf,
                     MPI_Datatype& type, int& target, MPI_Aint& tdisp, MPI_Win& win) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.peer = rank_value(target);
    e.buf = addr(obuf);
    e.compare_buf = addr(cbuf);
    e.result_buf = addr(rbuf);
    e.datatype = type_id(type);
    e.target_disp = static_cast<uint64_t>(tdisp);
  }, no_post);
}

// --- datatypes

auto new_type_post(Call c, MPI_Datatype* newtype) {
  return [c, newtype](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS) return;
    g_tables->types.erase(key(*newtype));  // a handle reused after Type_free
    s.out().new_datatype = define_type(*newtype, c);
  };
}
template <class F>
int type_contiguous(Call c, uintptr_t site, F&& pmpi, int& count, MPI_Datatype& old, MPI_Datatype*& newtype) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.count = count;
    e.datatype = type_id(old);
  }, new_type_post(c, newtype));
}
// A constructor with block lengths: `lengths` (n of them) go in counts
// only when one is negative, which MPI rejects (doubtful then writes the
// call on entry); the new type's DatatypeDef holds the layout otherwise.
template <class F>
int type_blocks(Call c, uintptr_t site, F&& pmpi, int count, const int* lengths, int n, MPI_Datatype old,
                MPI_Datatype*& newtype) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.count = count;
    e.datatype = type_id(old);  // (0 for a struct, whose types are a list: MPI_DATATYPE_NULL)
    if (lengths && n > 0 && std::any_of(lengths, lengths + n, [](int v) { return v < 0; }))
      e.counts = ints(lengths, n);
  }, new_type_post(c, newtype));
}
template <class F>
int type_vector(Call c, uintptr_t site, F&& pmpi, int& count, int& length, int&, MPI_Datatype& old,
                MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, &length, 1, old, newtype);
}
template <class F>
int type_hvector(Call c, uintptr_t site, F&& pmpi, int& count, int& length, MPI_Aint&, MPI_Datatype& old,
                 MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, &length, 1, old, newtype);
}
template <class F>
int type_indexed(Call c, uintptr_t site, F&& pmpi, int& count, const int*& lengths, const int*&, MPI_Datatype& old,
                 MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, lengths, count, old, newtype);
}
template <class F>
int type_hindexed(Call c, uintptr_t site, F&& pmpi, int& count, const int*& lengths, const MPI_Aint*&,
                  MPI_Datatype& old, MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, lengths, count, old, newtype);
}
template <class F>
int type_indexed_block(Call c, uintptr_t site, F&& pmpi, int& count, int& length, const int*&, MPI_Datatype& old,
                       MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, &length, 1, old, newtype);
}
template <class F>
int type_hindexed_block(Call c, uintptr_t site, F&& pmpi, int& count, int& length, const MPI_Aint*&,
                        MPI_Datatype& old, MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, &length, 1, old, newtype);
}
template <class F>
int type_struct(Call c, uintptr_t site, F&& pmpi, int& count, const int*& lengths, const MPI_Aint*&,
                const MPI_Datatype*&, MPI_Datatype*& newtype) {
  return type_blocks(c, site, pmpi, count, lengths, count, MPI_DATATYPE_NULL, newtype);
}
template <class F>
int type_subarray(Call c, uintptr_t site, F&& pmpi, int& ndims, const int*&, const int*&, const int*&, int&,
                  MPI_Datatype& old, MPI_Datatype*& newtype) {
  return type_contiguous(c, site, pmpi, ndims, old, newtype);
}
template <class F>
int type_resized(Call c, uintptr_t site, F&& pmpi, MPI_Datatype& old, MPI_Aint&, MPI_Aint&, MPI_Datatype*& newtype) {
  int one = 1;
  return type_contiguous(c, site, pmpi, one, old, newtype);
}
template <class F>
int type_dup(Call c, uintptr_t site, F&& pmpi, MPI_Datatype& old, MPI_Datatype*& newtype) {
  int one = 1;
  const int rc = type_contiguous(c, site, pmpi, one, old, newtype);
  // The copy has the old type's committed state (MPI-3.1 section 4.1.10).
  if (rc == MPI_SUCCESS && !g_committed->rejected(type_id(old))) g_committed->set(type_id(*newtype));
  return rc;
}
template <class F>
int type_commit(Call c, uintptr_t site, F&& pmpi, MPI_Datatype*& type) {
  return traced(c, site, pmpi, [&](Event& e) { e.datatype = type_id(*type); },
                [&](CallScope& s, int rc) {
                  if (rc == MPI_SUCCESS) g_committed->set(s.e.datatype);
                });
}
template <class F>
int type_free(Call c, uintptr_t site, F&& pmpi, MPI_Datatype*& type) {
  MPI_Datatype handle = *type;
  return traced(c, site, pmpi, [&](Event& e) { e.datatype = type_id(handle); },
                [&](CallScope& s, int rc) {
                  if (rc == MPI_SUCCESS) mark_freed(g_tables->types, key(handle), s.e.datatype);
                });
}
// A datatype handle that a query returned (MPI_Type_get_contents: types
// the program may have freed, alive in the one queried; the f90 types:
// made on first use, in memory a freed type may have had): forget it when
// it is marked freed, so that its next use defines it again.
void forget_returned(MPI_Datatype handle) {
  if (handle == MPI_DATATYPE_NULL) return;
  uint32_t id = 0;
  if (g_tables->types.find(key(handle), id) && id == format::k_invalid_id) g_tables->types.erase(key(handle));
}
template <class F>
int type_get_contents(Call c, uintptr_t site, F&& pmpi, MPI_Datatype& mtype, int&, int&, int& max_datatypes, int*&,
                      MPI_Aint*&, MPI_Datatype*& types) {
  return traced(c, site, pmpi, [&](Event& e) { e.datatype = type_id(mtype); }, [&](CallScope&, int rc) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    if (rc != MPI_SUCCESS || !types || PMPI_Type_get_envelope(mtype, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return;
    for (int i = 0; i < std::min(nd, max_datatypes); ++i) forget_returned(types[i]);
  });
}
template <class F>
int type_f90(Call c, uintptr_t site, F&& pmpi, int&, MPI_Datatype*& newtype) {
  return traced(c, site, pmpi, [](Event&) {}, [&](CallScope&, int rc) {
    if (rc == MPI_SUCCESS && newtype) forget_returned(*newtype);
  });
}
template <class F>
int type_f90(Call c, uintptr_t site, F&& pmpi, int&, int& r, MPI_Datatype*& newtype) {
  return type_f90(c, site, pmpi, r, newtype);
}
template <class F>
int op_create(Call c, uintptr_t site, F&& pmpi, MPI_User_function*&, int&, MPI_Op*& op) {
  return traced(c, site, pmpi, [](Event&) {},
                [&](CallScope& s, int rc) {
                  if (rc != MPI_SUCCESS) return;
                  g_tables->ops.erase(key(*op));
                  s.out().new_datatype = op_id(*op);
                });
}
template <class F>
int op_free(Call c, uintptr_t site, F&& pmpi, MPI_Op*& op) {
  MPI_Op handle = *op;
  return traced(c, site, pmpi, [&](Event& e) { e.new_datatype = op_id(handle); },
                [&](CallScope& s, int rc) {
                  if (rc == MPI_SUCCESS) mark_freed(g_tables->ops, key(handle), s.e.new_datatype);
                });
}

// --- info objects (their id in Event.new_datatype, as an op's)

// The post of a call that made info object *info: a handle value MPI hands
// out again names the new object.
auto new_info_post(MPI_Info* info) {
  return [info](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS || *info == MPI_INFO_NULL) return;
    g_tables->infos.erase(key(*info));
    s.out().new_datatype = info_id(*info);
  };
}
template <class F>
int info_new(Call c, uintptr_t site, F&& pmpi, MPI_Info*& info) {
  return traced(c, site, pmpi, [](Event&) {}, new_info_post(info));
}
template <class F>
int info_dup(Call c, uintptr_t site, F&& pmpi, MPI_Info&, MPI_Info*& newinfo) {
  return traced(c, site, pmpi, [](Event&) {}, new_info_post(newinfo));
}
template <class F>
int comm_get_info(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, MPI_Info*& info) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = comm_id(comm); }, new_info_post(info));
}
template <class F>
int win_get_info(Call c, uintptr_t site, F&& pmpi, MPI_Win& win, MPI_Info*& info) {
  return traced(c, site, pmpi, [&](Event& e) { e.window = window_id(win); }, new_info_post(info));
}
template <class F>
int info_free(Call c, uintptr_t site, F&& pmpi, MPI_Info*& info) {
  const MPI_Info handle = info ? *info : MPI_INFO_NULL;
  return traced(c, site, pmpi, [&](Event& e) { e.new_datatype = info_id(handle); },
                [&](CallScope&, int rc) {
                  if (rc == MPI_SUCCESS) g_tables->infos.erase(key(handle));
                });
}

// --- intercommunicators, topologies, dynamic processes

template <class F>
int intercomm_create(Call c, uintptr_t site, F&& pmpi, MPI_Comm& local, int& local_leader, MPI_Comm& bridge,
                     int& remote_leader, int& tag, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    const CommInfo info = comm_info(local);
    e.comm = info.id;
    e.peer = rank_value(local_leader);
    e.recv_peer = rank_value(remote_leader);
    e.tag = tag_value(tag);
    // The bridge communicator is significant at the local leader only
    // (elsewhere it may be anything): looked at there only.
    e.peer_comm = info.facts.rank >= 0 && info.facts.rank == local_leader ? comm_id(bridge) : format::k_null_id;
  }, new_comm_post(newcomm, local));
}
template <class F>
int intercomm_merge(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& high, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.key = high != 0;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int cart_create(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& ndims, const int*& dims, const int*& periods,
                int& reorder, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.counts = ints(dims, ndims);
    e.displs = ints(periods, ndims);
    e.key = reorder != 0;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int cart_sub(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, const int*& remain, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    int ndims = 0;
    if (known(e.comm) && PMPI_Cartdim_get(comm, &ndims) == MPI_SUCCESS) e.counts = ints(remain, ndims);
  }, new_comm_post(newcomm, comm));
}
template <class F>
int graph_create(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& nnodes, const int*& index, const int*& edges,
                 int& reorder, MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.counts = ints(index, nnodes);
    if (index && nnodes > 0) e.displs = ints(edges, index[nnodes - 1]);
    e.key = reorder != 0;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int dist_graph_create(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& n, const int*& sources,
                      const int*& degrees, const int*& dests, const int*&, MPI_Info&, int& reorder,
                      MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.counts = ints(sources, n);
    e.recv_counts = ints(degrees, n);
    int64_t edges = 0;
    for (int64_t d : e.recv_counts) edges += std::max<int64_t>(d, 0);
    e.displs = ints(dests, static_cast<int>(std::min<int64_t>(edges, INT32_MAX)));
    e.key = reorder != 0;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int dist_graph_create_adjacent(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& indegree, const int*& sources,
                               const int*&, int& outdegree, const int*& dests, const int*&, MPI_Info&, int& reorder,
                               MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.counts = ints(sources, indegree);
    e.displs = ints(dests, outdegree);
    e.key = reorder != 0;
  }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_spawn(Call c, uintptr_t site, F&& pmpi, const char*&, char**&, int& maxprocs, MPI_Info&, int& root,
               MPI_Comm& comm, MPI_Comm*& intercomm, int*&) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.peer = rank_value(root);
    e.count = maxprocs;
  }, new_comm_post(intercomm, comm));
}
template <class F>
int comm_spawn_multiple(Call c, uintptr_t site, F&& pmpi, int& count, char**&, char***&, const int*& maxprocs,
                        const MPI_Info*&, int& root, MPI_Comm& comm, MPI_Comm*& intercomm, int*&) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.peer = rank_value(root);
    e.count = count;
    int rank = -1;
    if (known(e.comm)) PMPI_Comm_rank(comm, &rank);
    if (rank == root) e.counts = ints(maxprocs, count);  // significant at the root only
  }, new_comm_post(intercomm, comm));
}
template <class F>
int comm_accept(Call c, uintptr_t site, F&& pmpi, const char*&, MPI_Info&, int& root, MPI_Comm& comm,
                MPI_Comm*& newcomm) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = comm_id(comm);
    e.peer = rank_value(root);
  }, new_comm_post(newcomm, comm));
}
template <class F>
int comm_join(Call c, uintptr_t site, F&& pmpi, int&, MPI_Comm*& intercomm) {
  return traced(c, site, pmpi, [&](Event& e) { e.comm = format::k_comm_self; },
                new_comm_post(intercomm, MPI_COMM_SELF));
}

// --- matched probes, buffered sends

// Return the id of message handle `message` (a new one for a message a
// matched probe just returned: `fresh`), and its communicator.
Tables::Message message_of(MPI_Message message, bool fresh, uint32_t comm) {
  if (message == MPI_MESSAGE_NULL) return {format::k_message_null, format::k_null_id};
  if (message == MPI_MESSAGE_NO_PROC) return {format::k_message_no_proc, comm};
  Tables::Message m;
  if (!fresh && g_tables->messages.find(key(message), m)) return m;
  m.id = g_tables->next_message.fetch_add(1, std::memory_order_relaxed);
  m.comm = comm;
  g_tables->messages.insert(key(message), m);
  return m;
}

// MPI_Improbe, and MPI_Mprobe with no `flag`: the message handle a probe
// that found a message takes, defined with the probe's communicator.
template <class F>
int matched_probe(Call c, uintptr_t site, F&& pmpi, int& source, int tag, MPI_Comm comm, const int* flag,
                  MPI_Message* message, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  uint32_t id = 0;
  return traced(c, site, pmpi, [&](Event& e) {
    e.comm = id = comm_id(comm);
    e.peer = rank_value(source);
    e.tag = tag_value(tag);
    force::apply(e, source);  // a wildcard receive in format::wildcard_count's numbering
  }, [&](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS) return;
    if (flag) {
      force::polled(s.e, *flag != 0);
      s.out().flag = *flag != 0;
      if (!*flag) {
        s.unsuccessful_poll();
        return;
      }
    }
    fill_status(s.status(), *status, 0);
    s.out().message = message_of(*message, true, id).id;
  });
}
template <class F>
int mprobe(Call c, uintptr_t site, F&& pmpi, int& source, int& tag, MPI_Comm& comm, MPI_Message*& message,
           MPI_Status*& status) {
  return matched_probe(c, site, pmpi, source, tag, comm, nullptr, message, status);
}
template <class F>
int improbe(Call c, uintptr_t site, F&& pmpi, int& source, int& tag, MPI_Comm& comm, int*& flag,
            MPI_Message*& message, MPI_Status*& status) {
  return matched_probe(c, site, pmpi, source, tag, comm, flag, message, status);
}
// The receive of a matched message: its communicator is the probe's.
void message_recv(Event& e, void* buf, int count, MPI_Datatype type, MPI_Message message) {
  const Tables::Message m = message_of(message, false, format::k_null_id);
  e.message = m.id;
  e.comm = m.comm;
  e.buf = addr(buf);
  e.count = count;
  e.datatype = type_id(type);
}
template <class F>
int mrecv(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, MPI_Message*& message,
          MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  const MPI_Message handle = message ? *message : MPI_MESSAGE_NULL;
  return traced(c, site, pmpi, [&](Event& e) { message_recv(e, buf, count, type, handle); },
                [&](CallScope& s, int rc) {
                  if (rc != MPI_SUCCESS) return;
                  g_tables->messages.erase(key(handle));
                  fill_status(s.status(), *status, type_size(type));
                });
}
template <class F>
int imrecv(Call c, uintptr_t site, F&& pmpi, void*& buf, int& count, MPI_Datatype& type, MPI_Message*& message,
           MPI_Request*& request) {
  const MPI_Message handle = message ? *message : MPI_MESSAGE_NULL;
  return traced(c, site, pmpi, [&](Event& e) { message_recv(e, buf, count, type, handle); },
                [&](CallScope& s, int rc) {
                  if (rc != MPI_SUCCESS) return;
                  g_tables->messages.erase(key(handle));
                  s.out().request = new_request(*request, true, false, type_size(type));
                });
}
template <class F>
int buffer_attach(Call c, uintptr_t site, F&& pmpi, void*& buffer, int& size) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.buf = addr(buffer);
    e.size = size > 0 ? static_cast<uint64_t>(size) : 0;
    e.count = size;
  }, no_post);
}
template <class F>
int buffer_detach(Call c, uintptr_t site, F&& pmpi, void*& buffer, int*& size) {
  return traced(c, site, pmpi, [](Event&) {}, [&](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS) return;
    // C: `buffer` points to where MPI stores the buffer's address. The
    // Fortran binding returns no address.
    void* base = nullptr;
    if (buffer && !fortran::t_active) std::memcpy(&base, buffer, sizeof base);
    s.out().buf = addr(base);
    if (size) {
      s.out().size = *size > 0 ? static_cast<uint64_t>(*size) : 0;
      s.out().count = *size;
    }
  });
}

// --- requests (continued)

template <class F>
int request_get_status(Call c, uintptr_t site, F&& pmpi, MPI_Request& request, int*& flag, MPI_Status*& status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  RequestInfo info;
  return traced(c, site, pmpi, [&](Event& e) {
    info = request_info(request);
    e.request = info.id;
  }, [&](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS) return;
    s.out().flag = *flag != 0;
    if (!*flag) s.unsuccessful_poll();
    else if (info.receive) fill_status(s.status(), *status, info.elem_size);
  });
}
template <class F>
int test_cancelled(Call c, uintptr_t site, F&& pmpi, const MPI_Status*&, int*& flag) {
  return traced(c, site, pmpi, [](Event&) {}, [&](CallScope& s, int rc) {
    if (rc == MPI_SUCCESS) s.out().flag = *flag != 0;
  });
}
template <class F>
int grequest_start(Call c, uintptr_t site, F&& pmpi, MPI_Grequest_query_function*&, MPI_Grequest_free_function*&,
                   MPI_Grequest_cancel_function*&, void*&, MPI_Request*& request) {
  return traced(c, site, pmpi, [](Event&) {}, [&](CallScope& s, int rc) {
    if (rc == MPI_SUCCESS) s.out().request = new_request(*request, false, false, 0);
  });
}
template <class F>
int grequest_complete(Call c, uintptr_t site, F&& pmpi, MPI_Request& request) {
  return traced(c, site, pmpi, [&](Event& e) { e.request = request_info(request).id; }, no_post);
}

// --- local reductions and packing

template <class F>
int reduce_local(Call c, uintptr_t site, F&& pmpi, const void*& inbuf, void*& inoutbuf, int& count,
                 MPI_Datatype& type, MPI_Op& op) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.buf = addr(inbuf);
    e.recv_buf = addr(inoutbuf);
    e.count = e.recv_count = count;
    e.datatype = e.recv_datatype = type_id(type);
    e.op = op_id(op);
  }, no_post);
}
// The packed side: `n` bytes from `base` + `position` (MPI_PACKED).
template <class P>
void packed_side(uint64_t& buf, int64_t& count, uint32_t& type, const void* base, P position) {
  buf = addr(base) + static_cast<uint64_t>(std::max<P>(position, 0));
  count = 0;
  type = 35;  // BASIC_PACKED
}
template <class F>
int pack(Call c, uintptr_t site, F&& pmpi, const void*& inbuf, int& incount, MPI_Datatype& type, void*& outbuf,
         int& outsize, int*& position, MPI_Comm& comm) {
  const int start = position ? *position : 0;
  return traced(c, site, pmpi, [&](Event& e) {
    e.buf = addr(inbuf);
    e.count = incount;
    e.datatype = type_id(type);
    e.comm = comm_id(comm);
    e.size = outsize > 0 ? static_cast<uint64_t>(outsize) : 0;
    packed_side(e.recv_buf, e.recv_count, e.recv_datatype, outbuf, start);
  }, [&](CallScope& s, int rc) {
    if (rc == MPI_SUCCESS && position) s.out().recv_count = *position - start;
  });
}
template <class F>
int unpack(Call c, uintptr_t site, F&& pmpi, const void*& inbuf, int& insize, int*& position, void*& outbuf,
           int& outcount, MPI_Datatype& type, MPI_Comm& comm) {
  const int start = position ? *position : 0;
  return traced(c, site, pmpi, [&](Event& e) {
    packed_side(e.buf, e.count, e.datatype, inbuf, start);
    e.recv_buf = addr(outbuf);
    e.recv_count = outcount;
    e.recv_datatype = type_id(type);
    e.comm = comm_id(comm);
    e.size = insize > 0 ? static_cast<uint64_t>(insize) : 0;
  }, [&](CallScope& s, int rc) {
    if (rc == MPI_SUCCESS && position) s.out().count = *position - start;
  });
}
template <class F>
int pack_external(Call c, uintptr_t site, F&& pmpi, const char*&, const void*& inbuf, int& incount,
                  MPI_Datatype& type, void*& outbuf, MPI_Aint& outsize, MPI_Aint*& position) {
  const MPI_Aint start = position ? *position : 0;
  return traced(c, site, pmpi, [&](Event& e) {
    e.buf = addr(inbuf);
    e.count = incount;
    e.datatype = type_id(type);
    e.size = outsize > 0 ? static_cast<uint64_t>(outsize) : 0;
    packed_side(e.recv_buf, e.recv_count, e.recv_datatype, outbuf, start);
  }, [&](CallScope& s, int rc) {
    if (rc == MPI_SUCCESS && position) s.out().recv_count = *position - start;
  });
}
template <class F>
int unpack_external(Call c, uintptr_t site, F&& pmpi, const char*&, const void*& inbuf, MPI_Aint& insize,
                    MPI_Aint*& position, void*& outbuf, int& outcount, MPI_Datatype& type) {
  const MPI_Aint start = position ? *position : 0;
  return traced(c, site, pmpi, [&](Event& e) {
    packed_side(e.buf, e.count, e.datatype, inbuf, start);
    e.recv_buf = addr(outbuf);
    e.recv_count = outcount;
    e.recv_datatype = type_id(type);
    e.size = insize > 0 ? static_cast<uint64_t>(insize) : 0;
  }, [&](CallScope& s, int rc) {
    if (rc == MPI_SUCCESS && position) s.out().count = *position - start;
  });
}
template <class F>
int type_darray(Call c, uintptr_t site, F&& pmpi, int&, int&, int& ndims, const int*&, const int*&, const int*&,
                const int*&, int&, MPI_Datatype& old, MPI_Datatype*& newtype) {
  return type_contiguous(c, site, pmpi, ndims, old, newtype);
}

// --- neighbourhood collectives: the v and w arrays have one entry per
// neighbour (sources on the receive side, destinations on the send side)

int degree(const CommInfo& info, bool in) {
  const std::vector<int32_t>* list = in ? info.facts.sources : info.facts.destinations;
  return list ? static_cast<int>(list->size()) : 0;
}
std::vector<int64_t> aints(const MPI_Aint* v, int n) {
  if (!v || n <= 0) return {};
  return std::vector<int64_t>(v, v + n);
}
void neighbor_allgatherv_args(Event& e, const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                              const int* rcounts, const int* displs, MPI_Datatype rtype, MPI_Comm comm) {
  const CommInfo info = comm_info(comm);
  e.comm = info.id;
  send_side(e, sbuf, scount, stype);
  e.recv_buf = addr(rbuf);
  e.recv_datatype = type_id(rtype);
  e.recv_counts = ints(rcounts, degree(info, true));
  e.recv_displs = ints(displs, degree(info, true));
}
template <class F>
int neighbor_allgatherv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype,
                        void*& rbuf, const int*& rcounts, const int*& displs, MPI_Datatype& rtype, MPI_Comm& comm) {
  return traced(c, site, pmpi,
                [&](Event& e) { neighbor_allgatherv_args(e, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm); },
                no_post);
}
template <class F>
int ineighbor_allgatherv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, int& scount, MPI_Datatype& stype,
                         void*& rbuf, const int*& rcounts, const int*& displs, MPI_Datatype& rtype, MPI_Comm& comm,
                         MPI_Request*& request) {
  return traced(c, site, pmpi,
                [&](Event& e) { neighbor_allgatherv_args(e, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm); },
                with_request(c, request));
}
void neighbor_alltoallv_args(Event& e, const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype,
                             void* rbuf, const int* rcounts, const int* rdispls, MPI_Datatype rtype, MPI_Comm comm) {
  const CommInfo info = comm_info(comm);
  e.comm = info.id;
  if (sbuf == MPI_IN_PLACE) {
    e.in_place = true;
  } else {
    e.buf = addr(sbuf);
    e.counts = ints(scounts, degree(info, false));
    e.displs = ints(sdispls, degree(info, false));
    e.datatype = type_id(stype);
  }
  e.recv_buf = addr(rbuf);
  e.recv_counts = ints(rcounts, degree(info, true));
  e.recv_displs = ints(rdispls, degree(info, true));
  e.recv_datatype = type_id(rtype);
}
template <class F>
int neighbor_alltoallv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& sdispls,
                       MPI_Datatype& stype, void*& rbuf, const int*& rcounts, const int*& rdispls, MPI_Datatype& rtype,
                       MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    neighbor_alltoallv_args(e, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  }, no_post);
}
template <class F>
int ineighbor_alltoallv(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts, const int*& sdispls,
                        MPI_Datatype& stype, void*& rbuf, const int*& rcounts, const int*& rdispls, MPI_Datatype& rtype,
                        MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    neighbor_alltoallv_args(e, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  }, with_request(c, request));
}
void neighbor_alltoallw_args(Event& e, const void* sbuf, const int* scounts, const MPI_Aint* sdispls,
                             const MPI_Datatype* stypes, void* rbuf, const int* rcounts, const MPI_Aint* rdispls,
                             const MPI_Datatype* rtypes, MPI_Comm comm) {
  const CommInfo info = comm_info(comm);
  e.comm = info.id;
  const int out = degree(info, false), in = degree(info, true);
  if (sbuf == MPI_IN_PLACE) {
    e.in_place = true;
  } else {
    e.buf = addr(sbuf);
    e.counts = ints(scounts, out);
    e.displs = aints(sdispls, out);
    e.datatypes = type_ids(stypes, out);
  }
  e.recv_buf = addr(rbuf);
  e.recv_counts = ints(rcounts, in);
  e.recv_displs = aints(rdispls, in);
  e.recv_datatypes = type_ids(rtypes, in);
}
template <class F>
int neighbor_alltoallw(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts,
                       const MPI_Aint*& sdispls, const MPI_Datatype*& stypes, void*& rbuf, const int*& rcounts,
                       const MPI_Aint*& rdispls, const MPI_Datatype*& rtypes, MPI_Comm& comm) {
  return traced(c, site, pmpi, [&](Event& e) {
    neighbor_alltoallw_args(e, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  }, no_post);
}
template <class F>
int ineighbor_alltoallw(Call c, uintptr_t site, F&& pmpi, const void*& sbuf, const int*& scounts,
                        const MPI_Aint*& sdispls, const MPI_Datatype*& stypes, void*& rbuf, const int*& rcounts,
                        const MPI_Aint*& rdispls, const MPI_Datatype*& rtypes, MPI_Comm& comm, MPI_Request*& request) {
  return traced(c, site, pmpi, [&](Event& e) {
    neighbor_alltoallw_args(e, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  }, with_request(c, request));
}

// --- shared memory windows

template <class F>
int win_shared_query(Call c, uintptr_t site, F&& pmpi, MPI_Win& win, int& rank, MPI_Aint*& size, int*& disp_unit,
                     void*& baseptr) {
  return traced(c, site, pmpi, [&](Event& e) {
    e.window = window_id(win);
    e.peer = rank_value(rank);
  }, [&](CallScope& s, int rc) {
    if (rc != MPI_SUCCESS) return;
    void* base = nullptr;
    if (baseptr) std::memcpy(&base, baseptr, sizeof base);
    s.out().win_base = addr(base);
    if (size) s.out().win_size = static_cast<uint64_t>(*size);
    if (disp_unit) s.out().disp_unit = *disp_unit;
  });
}

template <class F>
int abort(Call c, uintptr_t site, F&& pmpi, MPI_Comm& comm, int& code) {
  CallScope s(c, site);
  s.e.comm = comm_id(comm);
  s.e.count = code;
  s.enter();
  handlers::finish(format::TerminationKind::aborted, 0, "MPI_Abort(" + std::to_string(code) + ")", false);
  return pmpi();
}

}  // namespace shape

// ---------------------------------------------------------------------------
// Calls of a family that is off: not recorded, but a handle they create or
// free must leave the tables, or a handle MPI reuses later would inherit a
// stale id (and a wrong CommDef or DatatypeDef): every handle a call takes
// by pointer (MPI_Comm_idup's new communicator and request, MPI_Type_free's
// type...) is forgotten, as it was before the call and as it is after.

template <class T>
void forget(T handle) {
  if constexpr (std::is_same_v<T, MPI_Comm>) g_tables->comms.erase(key(handle));
  else if constexpr (std::is_same_v<T, MPI_Group>) g_tables->groups.erase(key(handle));
  else if constexpr (std::is_same_v<T, MPI_Datatype>) g_tables->types.erase(key(handle));
  else if constexpr (std::is_same_v<T, MPI_Win>) g_tables->windows.erase(key(handle));
  else if constexpr (std::is_same_v<T, MPI_Op>) g_tables->ops.erase(key(handle));
  else if constexpr (std::is_same_v<T, MPI_Request>) g_tables->requests.forget(key(handle));
}

template <class L>
constexpr bool k_handle_out = std::is_same_v<L, MPI_Comm*> || std::is_same_v<L, MPI_Group*> ||
                              std::is_same_v<L, MPI_Datatype*> || std::is_same_v<L, MPI_Win*> ||
                              std::is_same_v<L, MPI_Op*> || std::is_same_v<L, MPI_Request*>;

template <class A>
void forget_out(A& arg) noexcept {  // the tables' erase does not throw
  using L = std::remove_cv_t<std::remove_reference_t<A>>;
  if constexpr (k_handle_out<L>) {
    if (arg) forget(*arg);
  }
}

// The rank in MPI_COMM_WORLD and its size as the launcher tells them
// before MPI_Init (Open MPI's, PMIx's or a PMI launcher's environment).
std::optional<std::pair<uint32_t, uint32_t>> launcher_rank() noexcept {
  auto number = [](std::initializer_list<const char*> names) -> std::optional<uint32_t> {
    for (const char* name : names) {
      const char* v = std::getenv(name);
      if (!v || !*v) continue;
      char* end = nullptr;
      const unsigned long n = std::strtoul(v, &end, 10);
      if (*end == '\0' && n <= UINT32_MAX) return static_cast<uint32_t>(n);
    }
    return std::nullopt;
  };
  const auto rank = number({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"});
  const auto size = number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  if (!rank || !size || *rank >= *size) return std::nullopt;
  return std::make_pair(*rank, *size);
}

// Set once a call before MPI_Init started (and ended) this process's trace:
// a later MPI_Init, where the library did not end the process, records nothing.
std::atomic<bool> g_started_before_init{false};

// A call before MPI_Init: start the rank's trace there, holding only that
// call (handlers::record_before_init), so that smtrace check can name it;
// return true when written. Needs the launcher's rank (launcher_rank).
bool start_before_init(Call c, uintptr_t site) noexcept {
  try {
    Options options = parse_options([](const char* name) { return std::getenv(name); });
    if (options.disable || g_started_before_init.exchange(true)) return false;
    const auto rank = launcher_rank();
    if (!rank) return false;
    StartInfo info;
    info.rank = rank->first;
    info.world_size = rank->second;
    info.options = options;
    info.before_init = true;
    info.install_handlers = false;  // the trace ends here
    if (!handlers::start(info)) return false;
    handlers::record_before_init(c, site);
    return true;
  } catch (...) {
    return false;
  }
}

// A call the tracer does not record because it is not recording: when MPI
// is not initialized yet (MPI forbids every call but a few before MPI_Init;
// Open MPI then aborts the process before any trace exists), say so once on
// stderr, with the caller's address, so the run is not silently untraced.
void outside_mpi(Call c, uintptr_t site) noexcept {
  // Once each: a call before MPI_Init, and one after MPI_Finalize (MPI-3.1
  // section 8.7 allows neither; the calls it allows then, MPI_Initialized,
  // MPI_Finalized and MPI_Get_version, are not wrapped; MPI_Abort is left
  // out: it ends the process either way).
  static std::atomic<bool> said_before{false}, said_after{false};
  if (handlers::in_wrapper() || c == Call::Abort) return;
  if (said_before.load(std::memory_order_relaxed) && said_after.load(std::memory_order_relaxed)) return;
  int initialized = 0, finalized = 0;
  if (PMPI_Initialized(&initialized) != MPI_SUCCESS) return;
  if (initialized && (PMPI_Finalized(&finalized) != MPI_SUCCESS || !finalized)) return;
  if ((initialized ? said_after : said_before).exchange(true)) return;
  // After MPI_Finalize the trace exists: the call goes after its end, where
  // smtrace check reports it. Before MPI_Init a trace of its own holds it.
  const bool recorded = initialized ? handlers::record_after_finalize(c, site) : start_before_init(c, site);
  Dl_info info{};
  const bool named = dladdr(reinterpret_cast<void*>(site), &info) != 0 && info.dli_fname;
  const uintptr_t offset = named ? site - reinterpret_cast<uintptr_t>(info.dli_fbase) : site;
  std::fprintf(stderr,
               "smtrace: %s called %s (at %s+0x%lx): MPI forbids it, the call is %s and "
               "the MPI library may abort the process\n",
               std::string(format::call_name(c)).c_str(), initialized ? "after MPI_Finalize" : "before MPI_Init",
               named ? info.dli_fname : "?", static_cast<unsigned long>(offset),
               !recorded ? "not recorded" : initialized ? "recorded after the trace's end" : "the trace's only one");
}

template <class F, class... A>
int untraced(Call c, F&& pmpi, A&... args) noexcept {
  // Start(all), Cancel, Type_commit and the Wait/Test family keep their
  // handles' ids (a completed persistent request keeps its id).
  const format::CallTraits& t = format::call_traits(c);
  if (t.request == format::RequestEffect::start || t.request == format::RequestEffect::cancel ||
      format::completes_requests(t.request) || t.resource == format::Resource::type_commit)
    return pmpi();
  (forget_out(args), ...);
  int rc = pmpi();
  (forget_out(args), ...);
  return rc;
}

#if defined(__SANITIZE_ADDRESS__)
// ASan builds only (scripts/bootstrap.sh sanitize): no leak check in the MPI
// processes the tracer is preloaded into. Open MPI unloads its components
// in MPI_Finalize, so LeakSanitizer finds their allocations with no module
// name left to suppress them by (scripts/sanitizers/lsan.supp); smtrace's
// own programs and unit tests keep the check (ASan's default). Memory
// errors in these processes are still reported.
extern "C" SMTRACE_EXPORT const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

// ---------------------------------------------------------------------------
// Start and end

void start_tracing(Call call, uintptr_t site, int64_t t_start, int provided) {
  if (g_started_before_init.load()) return;  // the trace ended at that call (start_before_init)
  Options options = parse_options([](const char* name) { return std::getenv(name); });
  if (options.disable) return;
  StartInfo info;
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  info.rank = static_cast<uint32_t>(rank);
  info.world_size = static_cast<uint32_t>(size);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  PMPI_Get_library_version(lib, &len);
  info.mpi_library.assign(lib, static_cast<size_t>(std::max(0, len)));
  while (!info.mpi_library.empty() && (info.mpi_library.back() == '\n' || info.mpi_library.back() == '\0'))
    info.mpi_library.pop_back();
  int major = 0, minor = 0;
  PMPI_Get_version(&major, &minor);
  info.mpi_version = static_cast<uint32_t>(10 * major + minor);
  int level = provided;
  if (PMPI_Query_thread(&level) != MPI_SUCCESS) level = provided;
  // The format's numbering (0 single .. 3 multiple), whatever the library's constants.
  info.thread_level = level == MPI_THREAD_MULTIPLE   ? 3
                      : level == MPI_THREAD_SERIALIZED ? 2
                      : level == MPI_THREAD_FUNNELED   ? 1
                                                       : 0;
  int* tag_ub = nullptr;
  int has_tag_ub = 0;
  if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &has_tag_ub) == MPI_SUCCESS && has_tag_ub && tag_ub)
    info.tag_ub = *tag_ub;
  info.bsend_overhead = MPI_BSEND_OVERHEAD;
  info.options = options;
  info.clock_origin = t_start;  // now() read before tracing started: absolute
  PMPI_Comm_group(MPI_COMM_WORLD, &g_tables->world_group);
  g_tables->world_size = info.world_size;
  g_tables->world_facts = {rank, size};
  register_predefined();
  g_shapes->dir = options.dir;  // (also where start fails: its answer is then "not all recorded")
  if (!handlers::start(info)) return;
  // The content check: off when the load/store runtime sees the stores
  // themselves (one finding, not two) or the annotate family is off.
  g_content->table = content::Table(options.hash_bytes);
  g_content->pending.store(0);
  g_content->cu_attribute = nullptr;  // (looked for at the first post: cuda_attribute)
  g_content->loads_seen = 0;
  g_content->cuda_possible = ::access("/dev/nvidiactl", F_OK) == 0;
  // Off too where an AMD GPU driver is (/dev/kfd): HIP device memory can
  // not be told from host memory here, and reading it from the host faults.
  g_content->on = options.hash && options.records(format::Family::annotate) && !access::attached() &&
                  ::access("/dev/kfd", F_OK) != 0;
  handlers::record_init(call, site, t_start);
}

}  // namespace
}  // namespace smtrace::tracer

// ---------------------------------------------------------------------------
// The Fortran bindings (fortran.hpp): convert, record through the C call's
// shape, call the library's Fortran PMPI entry `name` with the program's
// arguments.

namespace smtrace::tracer {
namespace {

// window_gather_untraced of a Fortran call that was not recorded, from
// the arguments `f` as the program passed them.
template <Call C, class... V>
void window_gather_fortran(MPI_Fint rc, V*... f) noexcept {
  if constexpr (C == Call::Win_create || C == Call::Win_allocate || C == Call::Win_allocate_shared) {
    if (rc != MPI_SUCCESS) return;
    const void* at[] = {f...};
    // (base, size, disp_unit, info, comm, win); (size, disp_unit, info, comm, baseptr, win)
    constexpr std::size_t first = C == Call::Win_create ? 1 : 0;
    const MPI_Aint size = *static_cast<const MPI_Aint*>(at[first]);
    const MPI_Fint unit = *static_cast<const MPI_Fint*>(at[first + 1]);
    g_shapes->gather(0, PMPI_Comm_f2c(*static_cast<const MPI_Fint*>(at[first + 3])), size, static_cast<int>(unit));
  }
}

template <Call C, class CFn, class ShapeFn, class... V>
void fortran_call(const char* name, std::atomic<void*>& cache, uintptr_t site, MPI_Fint* ierr, ShapeFn&& shape_fn,
                  V*... f) {
  using Pmpi = void (*)(V*..., MPI_Fint*);
  auto pmpi = reinterpret_cast<Pmpi>(fortran::resolve(name, cache));
  MPI_Fint rc = MPI_SUCCESS;
  if (!pmpi) {  // the library's Fortran layer has no such entry
    handlers::count_error();
    if (ierr) *ierr = MPI_ERR_INTERN;
    return;
  }
  const bool trace = handlers::should_trace(C);
  const bool off = !trace && handlers::family_off(C);
  if (!trace && !off) {
    if (!handlers::tracing()) outside_mpi(C, site);
    pmpi(f..., &rc);
    window_gather_fortran<C>(rc, f...);
    if (ierr) *ierr = rc;
    return;
  }
  bool called = false;
  try {
    using Sig = fortran::Signature<CFn>;
    typename Sig::Args args(f...);
    fortran::Shape shape;
    shape.traits = format::call_traits(C);
    shape.first_is_count = Sig::first_is_int;
    if constexpr (Sig::first_is_int) shape.count = std::get<0>(args).value;
    std::apply([&](auto&... a) {
      (fortran::scan(a, shape), ...);
      (a.prepare(shape), ...);
      fortran::link_outcount(a...);
      auto run = [&] {
        called = true;
        pmpi(static_cast<V*>(a.fort())..., &rc);
        (a.after(), ...);
        return static_cast<int>(rc);
      };
      fortran::t_active = true;
      if (off) {
        untraced(C, run, a.c()...);
        window_gather_fortran<C>(rc, f...);
      } else {
        shape_fn(C, site, run, a.c()...);
      }
      fortran::t_active = false;
    }, args);
  } catch (...) {
    fortran::t_active = false;
    handlers::count_error();
    if (!called) {
      pmpi(f..., &rc);
      window_gather_fortran<C>(rc, f...);
    }
  }
  if (ierr) *ierr = rc;
}

// MPI_Init or MPI_Init_thread called again (MPI-3.1 section 8.7 allows one
// per process; Open MPI aborts it there): while tracing, record it as any
// call (pending first: the process may end inside it); after MPI_Finalize,
// as a call after the trace's end (outside_mpi). Return nullopt for the
// first call, which starts tracing instead.
template <class P>
std::optional<int> init_again(Call c, uintptr_t site, P&& pmpi) {
  if (handlers::tracing()) {
    handlers::CallScope s(c, site);
    s.enter();
    const int rc = pmpi();
    s.leave(rc);
    return rc;
  }
  int finalized = 0;
  if (PMPI_Finalized(&finalized) == MPI_SUCCESS && finalized) {
    outside_mpi(c, site);
    return pmpi();
  }
  return std::nullopt;
}

// MPI_Init and MPI_Init_thread from Fortran (`required` null: MPI_Init).
void fortran_init(Call call, const char* name, std::atomic<void*>& cache, uintptr_t site, MPI_Fint* required,
                  MPI_Fint* provided, MPI_Fint* ierr) {
  MPI_Fint rc = MPI_ERR_INTERN;
  void* entry = fortran::resolve(name, cache);
  if (!entry) {
    if (ierr) *ierr = rc;
    return;
  }
  auto again = init_again(call, site, [&] {
    MPI_Fint r = MPI_ERR_INTERN;
    if (required) reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*)>(entry)(required, provided, &r);
    else reinterpret_cast<void (*)(MPI_Fint*)>(entry)(&r);
    return static_cast<int>(r);
  });
  if (again) {
    if (ierr) *ierr = static_cast<MPI_Fint>(*again);
    return;
  }
  const int64_t t0 = handlers::now();
  {
    handlers::Untraced untraced;  // MPI's own threads and locks (tracer/threads.cpp)
    if (required) reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*)>(entry)(required, provided, &rc);
    else reinterpret_cast<void (*)(MPI_Fint*)>(entry)(&rc);
  }
  if (ierr) *ierr = rc;
  if (rc != MPI_SUCCESS || handlers::tracing()) return;
  try {
    start_tracing(call, site, t0, required ? (provided ? *provided : *required) : MPI_THREAD_SINGLE);
  } catch (...) {
    handlers::count_error();
  }
}

// MPI_Finalize from Fortran.
void fortran_finalize(const char* name, std::atomic<void*>& cache, uintptr_t site, MPI_Fint* ierr) {
  auto entry = reinterpret_cast<void (*)(MPI_Fint*)>(fortran::resolve(name, cache));
  MPI_Fint rc = MPI_ERR_INTERN;
  if (!entry) {
    if (ierr) *ierr = rc;
    return;
  }
  if (!handlers::should_trace(Call::Finalize)) {
    if (!handlers::tracing()) outside_mpi(Call::Finalize, site);  // a second MPI_Finalize
    entry(&rc);
    if (ierr) *ierr = rc;
    return;
  }
  bool called = false;
  try {
    handlers::CallScope s(Call::Finalize, site);
    s.enter();
    called = true;
    entry(&rc);
    s.leave(rc);
    handlers::finish(format::TerminationKind::finalized, 0, "", true);
  } catch (...) {
    handlers::count_error();
    if (!called) entry(&rc);
  }
  if (ierr) *ierr = rc;
}

}  // namespace
}  // namespace smtrace::tracer

// ---------------------------------------------------------------------------
// The wrappers

using smtrace::format::Call;
namespace tr = smtrace::tracer;

// A shape takes the wrapper's parameters by reference and may swap some for
// its own (MPI_STATUS_IGNORE for a status local to the shape's frame). When
// the shape throws before PMPI ran, that frame is gone: the fallback calls
// PMPI with a copy of the application's arguments taken before the shape
// ran (`original`, captured by value), never with a swapped pointer.
#define SMTRACE_UNPAREN(...) __VA_ARGS__
#define SMTRACE_WRAP(Name, Shape, PARAMS, ARGS)                                                        \
  extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE int MPI_##Name PARAMS {                                  \
    if (!tr::handlers::should_trace(Call::Name)) {                                                    \
      if (!tr::handlers::family_off(Call::Name)) {                                                    \
        if (!tr::handlers::tracing()) tr::outside_mpi(Call::Name, reinterpret_cast<uintptr_t>(__builtin_return_address(0))); \
        return tr::window_gather_untraced<Call::Name>(PMPI_##Name ARGS, SMTRACE_UNPAREN ARGS);       \
      }                                                                                               \
      return tr::window_gather_untraced<Call::Name>(                                                  \
          tr::untraced(Call::Name, [&] { return PMPI_##Name ARGS; }, SMTRACE_UNPAREN ARGS), SMTRACE_UNPAREN ARGS); \
    }                                                                                                 \
    auto site = reinterpret_cast<uintptr_t>(__builtin_return_address(0));                             \
    bool called = false;                                                                              \
    int rc = MPI_ERR_INTERN;                                                                          \
    const auto original = [=] { return PMPI_##Name ARGS; };                                           \
    try {                                                                                             \
      return tr::shape::Shape(                                                                        \
          Call::Name, site, [&] { called = true; return rc = PMPI_##Name ARGS; }, SMTRACE_UNPAREN ARGS); \
    } catch (...) {                                                                                   \
      tr::handlers::count_error();                                                                    \
      return called ? rc : tr::window_gather_untraced<Call::Name>(original(), SMTRACE_UNPAREN ARGS);  \
    }                                                                                                 \
  }
#define SMTRACE_WRAP_C SMTRACE_WRAP
// A local query wrapped only for calls outside MPI's life: never recorded.
#define SMTRACE_WRAP_OUTSIDE(Name, PARAMS, ARGS)                                                        \
  extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE int MPI_##Name PARAMS {                                  \
    if (!tr::handlers::tracing()) [[unlikely]]                                                        \
      tr::outside_mpi(Call::Name, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));         \
    return PMPI_##Name ARGS;                                                                          \
  }
#include "tracer/wrappers.def"
#undef SMTRACE_WRAP
#undef SMTRACE_WRAP_C
#undef SMTRACE_WRAP_OUTSIDE

// The Fortran bindings of every SMTRACE_WRAP row: mpi_<name>_ (mpif.h,
// `use mpi`) and mpi_<name>_f08_ (`use mpi_f08`), as gfortran and Open MPI
// name them; their parameters are the C call's, each a pointer (Fortran
// passes by reference), then ierror (optional in mpi_f08: may be null).
// The symbol names come from fortran_names.h, which CMake generates from
// wrappers.def (lower case is beyond the preprocessor).
#include "fortran_names.h"
#define SMTRACE_FP_1(a) void *a
#define SMTRACE_FP_2(a, ...) void *a, SMTRACE_FP_1(__VA_ARGS__)
#define SMTRACE_FP_3(a, ...) void *a, SMTRACE_FP_2(__VA_ARGS__)
#define SMTRACE_FP_4(a, ...) void *a, SMTRACE_FP_3(__VA_ARGS__)
#define SMTRACE_FP_5(a, ...) void *a, SMTRACE_FP_4(__VA_ARGS__)
#define SMTRACE_FP_6(a, ...) void *a, SMTRACE_FP_5(__VA_ARGS__)
#define SMTRACE_FP_7(a, ...) void *a, SMTRACE_FP_6(__VA_ARGS__)
#define SMTRACE_FP_8(a, ...) void *a, SMTRACE_FP_7(__VA_ARGS__)
#define SMTRACE_FP_9(a, ...) void *a, SMTRACE_FP_8(__VA_ARGS__)
#define SMTRACE_FP_10(a, ...) void *a, SMTRACE_FP_9(__VA_ARGS__)
#define SMTRACE_FP_11(a, ...) void *a, SMTRACE_FP_10(__VA_ARGS__)
#define SMTRACE_FP_12(a, ...) void *a, SMTRACE_FP_11(__VA_ARGS__)
#define SMTRACE_FP_13(a, ...) void *a, SMTRACE_FP_12(__VA_ARGS__)
#define SMTRACE_FP_14(a, ...) void *a, SMTRACE_FP_13(__VA_ARGS__)
#define SMTRACE_FP_15(a, ...) void *a, SMTRACE_FP_14(__VA_ARGS__)
#define SMTRACE_FP_16(a, ...) void *a, SMTRACE_FP_15(__VA_ARGS__)
#define SMTRACE_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define SMTRACE_NARGS(...) SMTRACE_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SMTRACE_CAT_(a, b) a##b
#define SMTRACE_CAT(a, b) SMTRACE_CAT_(a, b)
#define SMTRACE_FPARAMS(...) SMTRACE_CAT(SMTRACE_FP_, SMTRACE_NARGS(__VA_ARGS__))(__VA_ARGS__)
#define SMTRACE_FORTRAN_WRAPPER(Name, Shape, ARGS, SYMBOL, PMPI_SYMBOL)                                    \
  extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE void SYMBOL(SMTRACE_FPARAMS ARGS, MPI_Fint* ierr) {           \
    static std::atomic<void*> entry{nullptr};                                                            \
    tr::fortran_call<Call::Name, decltype(&PMPI_##Name)>(                                                \
        PMPI_SYMBOL, entry, reinterpret_cast<uintptr_t>(__builtin_return_address(0)), ierr,              \
        [](Call c, uintptr_t site, auto&& pmpi, auto&... a) { return tr::shape::Shape(c, site, pmpi, a...); }, \
        SMTRACE_UNPAREN ARGS);                                                                           \
  }
#define SMTRACE_WRAP(Name, Shape, PARAMS, ARGS)                                       \
  SMTRACE_FORTRAN_WRAPPER(Name, Shape, ARGS, SMTRACE_F77_##Name, SMTRACE_F77P_##Name) \
  SMTRACE_FORTRAN_WRAPPER(Name, Shape, ARGS, SMTRACE_F08_##Name, SMTRACE_F08P_##Name)
#define SMTRACE_WRAP_C(...)
#define SMTRACE_WRAP_OUTSIDE(...)
#include "tracer/wrappers.def"
#undef SMTRACE_WRAP
#undef SMTRACE_WRAP_C
#undef SMTRACE_WRAP_OUTSIDE

#define SMTRACE_FORTRAN_INIT(SYMBOL, PMPI_SYMBOL)                                                       \
  extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE void SYMBOL(MPI_Fint* ierr) {                              \
    static std::atomic<void*> entry{nullptr};                                                          \
    tr::fortran_init(Call::Init, PMPI_SYMBOL, entry, reinterpret_cast<uintptr_t>(__builtin_return_address(0)), \
                     nullptr, nullptr, ierr);                                                          \
  }
#define SMTRACE_FORTRAN_INIT_THREAD(SYMBOL, PMPI_SYMBOL)                                                \
  extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE void SYMBOL(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) { \
    static std::atomic<void*> entry{nullptr};                                                          \
    tr::fortran_init(Call::Init_thread, PMPI_SYMBOL, entry,                                            \
                     reinterpret_cast<uintptr_t>(__builtin_return_address(0)), required, provided, ierr);  \
  }
#define SMTRACE_FORTRAN_FINALIZE(SYMBOL, PMPI_SYMBOL)                                                   \
  extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE void SYMBOL(MPI_Fint* ierr) {                              \
    static std::atomic<void*> entry{nullptr};                                                          \
    tr::fortran_finalize(PMPI_SYMBOL, entry, reinterpret_cast<uintptr_t>(__builtin_return_address(0)), ierr); \
  }
SMTRACE_FORTRAN_INIT(mpi_init_, "pmpi_init_")
SMTRACE_FORTRAN_INIT(mpi_init_f08_, "pmpi_init_f08_")
SMTRACE_FORTRAN_INIT_THREAD(mpi_init_thread_, "pmpi_init_thread_")
SMTRACE_FORTRAN_INIT_THREAD(mpi_init_thread_f08_, "pmpi_init_thread_f08_")
SMTRACE_FORTRAN_FINALIZE(mpi_finalize_, "pmpi_finalize_")
SMTRACE_FORTRAN_FINALIZE(mpi_finalize_f08_, "pmpi_finalize_f08_")

// Every MPI call of trace_format/calls.def has a wrapper, and every wrapper a
// row there (a row of wrappers.def without one names no Call: a compile
// error): adding a call is its row in calls.def, its value in smtrace.proto
// and its signature row in wrappers.def.
namespace smtrace::tracer {
namespace {
constexpr Call k_wrapped[] = {
#define SMTRACE_WRAP(Name, ...) Call::Name,
#define SMTRACE_WRAP_C(Name, ...) Call::Name,
#define SMTRACE_WRAP_OUTSIDE(Name, ...) Call::Name,
#include "tracer/wrappers.def"
#undef SMTRACE_WRAP
#undef SMTRACE_WRAP_C
#undef SMTRACE_WRAP_OUTSIDE
    Call::Init, Call::Init_thread, Call::Finalize,  // written by hand below
};
constexpr bool wrapped(Call c) {
  for (Call w : k_wrapped)
    if (w == c) return true;
  return false;
}
// Annotations, captured accesses, CUDA calls and thread synchronization are
// not MPI calls.
constexpr bool needs_wrapper(format::Family f) {
  return f != format::Family::annotate && f != format::Family::cuda && f != format::Family::thread;
}
#define SMTRACE_CALL(ID, MpiName, number, family, ...)                          \
  static_assert(!needs_wrapper(format::Family::family) || wrapped(Call::MpiName), \
                "trace_format/calls.def: MPI_" #MpiName " has no wrapper: add its signature row to tracer/wrappers.def");
#include "trace_format/calls.def"
#undef SMTRACE_CALL
}  // namespace
}  // namespace smtrace::tracer

extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE int MPI_Init(int* argc, char*** argv) {
  auto site = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (auto rc = tr::init_again(Call::Init, site, [&] { return PMPI_Init(argc, argv); })) return *rc;
  int64_t t0 = tr::handlers::now();
  int rc = MPI_ERR_INTERN;
  {
    tr::handlers::Untraced untraced;  // MPI's own threads and locks (tracer/threads.cpp)
    rc = PMPI_Init(argc, argv);
  }
  if (rc == MPI_SUCCESS) {
    try {
      tr::start_tracing(Call::Init, site, t0, MPI_THREAD_SINGLE);
    } catch (...) {
      tr::handlers::count_error();
    }
  }
  return rc;
}

extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  auto site = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (auto rc = tr::init_again(Call::Init_thread, site,
                               [&] { return PMPI_Init_thread(argc, argv, required, provided); }))
    return *rc;
  int64_t t0 = tr::handlers::now();
  int rc = MPI_ERR_INTERN;
  {
    tr::handlers::Untraced untraced;  // MPI's own threads and locks (tracer/threads.cpp)
    rc = PMPI_Init_thread(argc, argv, required, provided);
  }
  if (rc == MPI_SUCCESS) {
    try {
      tr::start_tracing(Call::Init_thread, site, t0, provided ? *provided : required);
    } catch (...) {
      tr::handlers::count_error();
    }
  }
  return rc;
}

extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE int MPI_Finalize(void) {
  auto site = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (!tr::handlers::should_trace(Call::Finalize)) {
    if (!tr::handlers::tracing()) tr::outside_mpi(Call::Finalize, site);  // a second MPI_Finalize
    return PMPI_Finalize();
  }
  int rc = MPI_ERR_INTERN;
  bool called = false;
  try {
    tr::handlers::CallScope s(Call::Finalize, site);
    s.enter();
    called = true;
    rc = PMPI_Finalize();
    s.leave(rc);
    tr::handlers::finish(smtrace::format::TerminationKind::finalized, 0, "", true);
  } catch (...) {
    tr::handlers::count_error();
    if (!called) rc = PMPI_Finalize();
  }
  return rc;
}
