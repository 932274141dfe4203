// The OTF2 writer. Ranks are written one at a time (each thread of a rank
// is one location with its own event writer); the global definitions go last,
// once every string, region, calling context and event count is known.
//
// Timestamps are ns on the ranks' common timeline (TraceView::time_offset);
// the clock properties' global offset is 0. OTF2 wants them non-decreasing per
// location: events of a thread are written in start order and a record is
// never given a time before the one written last on its location.
#include "exchange/otf2.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>

#include "analyzer/footprint.hpp"
#include "exchange/otf2_calls.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::exchange {

namespace fs = std::filesystem;
using format::Call;
using format::Event;
using namespace detail;

namespace {

void check(OTF2_ErrorCode code, std::string_view what) {
  if (code != OTF2_SUCCESS) {
    throw format::TraceError(fmt::format("OTF2: {}: {} ({})", what, OTF2_Error_GetName(code),
                                         OTF2_Error_GetDescription(code)));
  }
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
const OTF2_FlushCallbacks k_flush = {pre_flush, post_flush};

// Location id of thread `thread` of rank `rank`: Score-P's layout, the rank
// in the low 32 bits (so the master threads are 0..N-1).
OTF2_LocationRef location_ref(uint32_t rank, uint32_t thread) {
  return (static_cast<uint64_t>(thread) << 32) | rank;
}

// The global definitions, collected while the events are written.
class Definitions {
 public:
  OTF2_StringRef string(const std::string& text) {
    auto [it, fresh] = m_strings.emplace(text, static_cast<OTF2_StringRef>(m_strings.size()));
    if (fresh) m_string_order.push_back(text);
    return it->second;
  }

  OTF2_RegionRef call_region(Call call) {
    auto [it, fresh] = m_call_regions.emplace(call, next_region());
    if (fresh) m_regions.push_back({it->second, std::string(format::call_name(call)), region_role(call), paradigm(call)});
    return it->second;
  }
  OTF2_RegionRef function_region(const std::string& name) {
    auto [it, fresh] = m_function_regions.emplace(name, OTF2_RegionRef{});
    if (fresh) {
      it->second = next_region();
      m_regions.push_back({it->second, name, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_UNKNOWN});
    }
    return it->second;
  }

  // Return the calling context of `frame` (a call site) under `parent`.
  OTF2_CallingContextRef calling_context(const format::RankTrace& rank, uint32_t site_id,
                                         OTF2_CallingContextRef parent) {
    const format::CallSite* site = rank.site(site_id);
    if (site == nullptr) return OTF2_UNDEFINED_CALLING_CONTEXT;
    std::string function = site->function;
    std::string file;
    uint32_t line = 0;
    if (!site->file.empty() && site->line != 0) {
      file = site->file;
      line = site->line;
    }
    if (function.empty()) {
      // Not symbolized: name the frame by module and offset.
      std::string module = "?";
      if (auto m = rank.modules.find(site->module); m != rank.modules.end()) {
        module = fs::path(m->second.path).filename().string();
      }
      function = fmt::format("{}+{:#x}", module, site->offset);
    }
    const Key key{function, file, line, parent};
    auto [it, fresh] = m_contexts.emplace(key, static_cast<OTF2_CallingContextRef>(m_contexts.size()));
    if (fresh) {
      OTF2_SourceCodeLocationRef scl = OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
      if (!file.empty()) {
        auto [s, added] = m_scls.emplace(std::make_pair(file, line), static_cast<OTF2_SourceCodeLocationRef>(m_scls.size()));
        if (added) m_scl_order.push_back(s->first);
        scl = s->second;
      }
      m_context_order.push_back({it->second, function_region(function), scl, parent});
    }
    return it->second;
  }

  OTF2_GroupRef group(const std::string& name, OTF2_GroupType type, std::vector<uint64_t> members) {
    const OTF2_GroupRef ref = static_cast<OTF2_GroupRef>(m_groups.size());
    m_groups.push_back({ref, name, type, std::move(members)});
    return ref;
  }

  // Write the strings (all of them: intern every name first), regions,
  // source code locations and calling contexts.
  void write(OTF2_GlobalDefWriter* writer) {
    // Strings are written last of all here but first in the file: every
    // definition below names its strings first, so intern them now.
    std::vector<std::tuple<OTF2_RegionRef, OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm>> regions;
    const OTF2_StringRef empty = string("");
    for (const Region& region : m_regions) {
      regions.emplace_back(region.ref, string(region.name), region.role, region.paradigm);
    }
    std::vector<std::pair<OTF2_StringRef, uint32_t>> scls;
    for (const auto& [file, line] : m_scl_order) scls.emplace_back(string(file), line);
    std::vector<OTF2_StringRef> group_names;
    for (const Group& g : m_groups) group_names.push_back(string(g.name));

    for (std::size_t i = 0; i < m_string_order.size(); ++i) {
      check(OTF2_GlobalDefWriter_WriteString(writer, static_cast<OTF2_StringRef>(i), m_string_order[i].c_str()),
            "string definition");
    }
    for (const auto& [ref, name, role, paradigm] : regions) {
      check(OTF2_GlobalDefWriter_WriteRegion(writer, ref, name, name, empty, role, paradigm, OTF2_REGION_FLAG_NONE,
                                             empty, 0, 0),
            "region definition");
    }
    for (std::size_t i = 0; i < scls.size(); ++i) {
      check(OTF2_GlobalDefWriter_WriteSourceCodeLocation(writer, static_cast<OTF2_SourceCodeLocationRef>(i),
                                                         scls[i].first, scls[i].second),
            "source code location definition");
    }
    // Parents are made before their children, so the order of creation is
    // an order in which every parent is defined first.
    for (const Context& c : m_context_order) {
      check(OTF2_GlobalDefWriter_WriteCallingContext(writer, c.ref, c.region, c.scl, c.parent),
            "calling context definition");
    }
    m_group_names = std::move(group_names);
  }

  // Write the groups; after the locations, which their members name.
  void write_groups(OTF2_GlobalDefWriter* writer) {
    for (std::size_t i = 0; i < m_groups.size(); ++i) {
      const Group& g = m_groups[i];
      check(OTF2_GlobalDefWriter_WriteGroup(writer, g.ref, m_group_names[i], g.type, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(g.members.size()),
                                            g.members.data()),
            "group definition");
    }
  }

 private:
  struct Region {
    OTF2_RegionRef ref;
    std::string name;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
  };
  struct Context {
    OTF2_CallingContextRef ref;
    OTF2_RegionRef region;
    OTF2_SourceCodeLocationRef scl;
    OTF2_CallingContextRef parent;
  };
  struct Group {
    OTF2_GroupRef ref;
    std::string name;
    OTF2_GroupType type;
    std::vector<uint64_t> members;
  };
  using Key = std::tuple<std::string, std::string, uint32_t, OTF2_CallingContextRef>;

  OTF2_RegionRef next_region() { return static_cast<OTF2_RegionRef>(m_regions.size()); }

  std::map<std::string, OTF2_StringRef> m_strings;
  std::vector<std::string> m_string_order;
  std::map<Call, OTF2_RegionRef> m_call_regions;
  std::map<std::string, OTF2_RegionRef> m_function_regions;
  std::vector<Region> m_regions;
  std::map<Key, OTF2_CallingContextRef> m_contexts;
  std::vector<Context> m_context_order;
  std::map<std::pair<std::string, uint32_t>, OTF2_SourceCodeLocationRef> m_scls;
  std::vector<std::pair<std::string, uint32_t>> m_scl_order;
  std::vector<Group> m_groups;
  std::vector<OTF2_StringRef> m_group_names;
};

// Writes the events of one location, keeping its timestamps in order.
class LocationWriter {
 public:
  LocationWriter(OTF2_EvtWriter* writer, OTF2_AttributeList* attributes)
      : m_writer(writer), m_attributes(attributes) {}

  OTF2_TimeStamp at(uint64_t t) {
    m_last = std::max(m_last, t);
    return m_last;
  }
  OTF2_EvtWriter* writer() const { return m_writer; }
  OTF2_AttributeList* attributes() const { return m_attributes; }

 private:
  OTF2_EvtWriter* m_writer;
  OTF2_AttributeList* m_attributes;
  uint64_t m_last = 0;
};

class Exporter {
 public:
  Exporter(const TraceView& view, OTF2_Archive* archive) : m_view(view), m_archive(archive) {
    for (std::size_t i = 0; i < k_attribute_count; ++i) m_attr[i] = static_cast<OTF2_AttributeRef>(i);
    define_comms();
  }

  // Write rank `rank`; return its number of events.
  uint64_t write_rank(uint32_t rank, const format::RankTrace& trace, int64_t shift) {
    m_rank = rank;
    m_trace = &trace;
    m_shift = shift;
    index_requests(trace);
    std::map<uint32_t, std::vector<const Event*>> by_thread;
    by_thread[0];  // every rank has its master location: the COMM_LOCATIONS group names it
    for (const Event& e : trace.events) by_thread[e.thread].push_back(&e);
    int64_t rank_end = trace.end ? trace.end->t : 0;
    for (const Event& e : trace.events) rank_end = std::max(rank_end, e.pending ? e.t_start : e.t_end());
    for (auto& [thread, events] : by_thread) {
      std::stable_sort(events.begin(), events.end(), [](const Event* a, const Event* b) {
        return a->t_start != b->t_start ? a->t_start < b->t_start : a->seq < b->seq;
      });
      const OTF2_LocationRef location = location_ref(rank, thread);
      OTF2_EvtWriter* writer = OTF2_Archive_GetEvtWriter(m_archive, location);
      if (writer == nullptr) throw format::TraceError(fmt::format("OTF2: cannot open the event writer of rank {}", rank));
      OTF2_AttributeList* attributes = OTF2_AttributeList_New();
      LocationWriter out(writer, attributes);
      for (const Event* e : events) write_event(out, *e);
      if (thread == by_thread.begin()->first && trace.end) write_end(out, *trace.end, rank_end);
      uint64_t count = 0;
      OTF2_EvtWriter_GetNumberOfEvents(writer, &count);
      m_records += count;
      OTF2_AttributeList_Delete(attributes);
      check(OTF2_Archive_CloseEvtWriter(m_archive, writer), "closing an event writer");
      m_locations.push_back({location, rank, thread, count});
    }
    m_hosts[rank] = trace.header.host;
    return trace.events.size();
  }

  void write_definitions(uint64_t global_offset, uint64_t trace_length) {
    OTF2_GlobalDefWriter* writer = OTF2_Archive_GetGlobalDefWriter(m_archive);
    if (writer == nullptr) throw format::TraceError("OTF2: cannot open the global definition writer");
    check(OTF2_GlobalDefWriter_WriteClockProperties(writer, 1000000000, global_offset, trace_length,
                                                    OTF2_UNDEFINED_TIMESTAMP),
          "clock properties");
    // System tree: the machine, then one node per host; a location group per rank.
    const OTF2_StringRef machine = m_defs.string("smtrace trace");
    const OTF2_StringRef machine_class = m_defs.string("machine");
    const OTF2_StringRef node_class = m_defs.string("node");
    std::map<std::string, OTF2_SystemTreeNodeRef> nodes;
    for (const auto& [rank, host] : m_hosts) nodes.emplace(host.empty() ? std::string("unknown host") : host, 0);
    OTF2_SystemTreeNodeRef next_node = 1;
    for (auto& [host, ref] : nodes) ref = next_node++;
    std::map<uint32_t, OTF2_StringRef> rank_names;
    for (const auto& [rank, host] : m_hosts) rank_names[rank] = m_defs.string(fmt::format("MPI Rank {}", rank));
    std::vector<std::pair<OTF2_LocationRef, OTF2_StringRef>> location_names;
    for (const LocationInfo& l : m_locations) {
      location_names.emplace_back(l.ref, m_defs.string(l.thread == 0 ? std::string("Master thread")
                                                                       : fmt::format("thread {}", l.thread)));
    }
    std::vector<std::pair<std::string, OTF2_StringRef>> attribute_strings;
    for (const AttributeSpec& spec : k_attributes) {
      attribute_strings.emplace_back(std::string(spec.name), m_defs.string(std::string(spec.description)));
    }
    std::vector<OTF2_StringRef> attribute_names;
    for (const AttributeSpec& spec : k_attributes) attribute_names.push_back(m_defs.string(std::string(spec.name)));
    std::vector<OTF2_StringRef> host_names;
    for (const auto& [host, ref] : nodes) host_names.push_back(m_defs.string(host));
    std::vector<OTF2_StringRef> comm_names, window_names;
    for (const CommInfo& c : m_comms) comm_names.push_back(m_defs.string(c.name));
    for (const WindowInfo& w : m_windows) window_names.push_back(m_defs.string(w.name));
    const OTF2_StringRef mpi = m_defs.string("MPI");

    m_defs.write(writer);  // strings, regions, source locations, calling contexts
    check(OTF2_GlobalDefWriter_WriteParadigm(writer, OTF2_PARADIGM_MPI, mpi, OTF2_PARADIGM_CLASS_PROCESS), "paradigm");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(writer, 0, machine, machine_class, OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree");
    std::size_t h = 0;
    for (const auto& [host, ref] : nodes) {
      check(OTF2_GlobalDefWriter_WriteSystemTreeNode(writer, ref, host_names[h++], node_class, 0), "system tree");
    }
    for (const auto& [rank, host] : m_hosts) {
      check(OTF2_GlobalDefWriter_WriteLocationGroup(writer, rank, rank_names[rank], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                    nodes.at(host.empty() ? std::string("unknown host") : host),
                                                    OTF2_UNDEFINED_LOCATION_GROUP),
            "location group");
    }
    for (std::size_t i = 0; i < m_locations.size(); ++i) {
      const LocationInfo& l = m_locations[i];
      check(OTF2_GlobalDefWriter_WriteLocation(writer, l.ref, location_names[i].second, OTF2_LOCATION_TYPE_CPU_THREAD,
                                               l.events, l.rank),
            "location");
    }
    m_defs.write_groups(writer);
    for (std::size_t i = 0; i < k_attribute_count; ++i) {
      check(OTF2_GlobalDefWriter_WriteAttribute(writer, m_attr[i], attribute_names[i], attribute_strings[i].second,
                                                k_attributes[i].type),
            "attribute definition");
    }
    for (std::size_t i = 0; i < m_comms.size(); ++i) {
      const CommInfo& c = m_comms[i];
      check(OTF2_GlobalDefWriter_WriteComm(writer, c.ref, comm_names[i], c.group, OTF2_UNDEFINED_COMM,
                                           OTF2_COMM_FLAG_NONE),
            "communicator definition");
    }
    for (std::size_t i = 0; i < m_windows.size(); ++i) {
      const WindowInfo& w = m_windows[i];
      check(OTF2_GlobalDefWriter_WriteRmaWin(writer, w.ref, window_names[i], w.comm,
                                             OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS),
            "window definition");
    }
    check(OTF2_Archive_CloseGlobalDefWriter(m_archive, writer), "closing the definitions");
  }

  // Open and close a (empty) local definition writer per location: readers
  // expect one file per location.
  void write_local_definitions() {
    for (const LocationInfo& l : m_locations) {
      OTF2_DefWriter* writer = OTF2_Archive_GetDefWriter(m_archive, l.ref);
      if (writer != nullptr) OTF2_Archive_CloseDefWriter(m_archive, writer);
    }
  }

  uint32_t locations() const { return static_cast<uint32_t>(m_locations.size()); }
  uint64_t records() const { return m_records; }

 private:
  struct LocationInfo {
    OTF2_LocationRef ref;
    uint32_t rank;
    uint32_t thread;
    uint64_t events;
  };
  struct CommInfo {
    OTF2_CommRef ref;
    std::string name;
    OTF2_GroupRef group;
  };
  struct WindowInfo {
    OTF2_RmaWinRef ref;
    std::string name;
    OTF2_CommRef comm;
  };

  // Communicators of the comm table: MPI_COMM_SELF of every rank is one
  // OTF2 communicator (a COMM_SELF group), the others a COMM_GROUP of world
  // ranks over the COMM_LOCATIONS group of the master threads.
  void define_comms() {
    const uint32_t n = m_view.world_size;
    std::vector<uint64_t> masters;
    for (uint32_t r = 0; r < n; ++r) masters.push_back(location_ref(r, 0));
    m_defs.group("MPI locations", OTF2_GROUP_TYPE_COMM_LOCATIONS, masters);
    const OTF2_GroupRef self_group = m_defs.group("MPI_COMM_SELF", OTF2_GROUP_TYPE_COMM_SELF, {});
    const analyzer::CommTable& comms = m_view.comms;
    m_comm_refs.assign(comms.size(), OTF2_UNDEFINED_COMM);
    for (uint32_t g = 0; g < comms.size(); ++g) {
      const analyzer::GlobalComm& comm = comms.comm(g);
      const bool self = comm.world_ranks.size() == 1 && comm.name.starts_with("MPI_COMM_SELF");
      if (self) {
        if (m_self_comm == OTF2_UNDEFINED_COMM) {
          m_self_comm = static_cast<OTF2_CommRef>(m_comms.size());
          m_comms.push_back({m_self_comm, "MPI_COMM_SELF", self_group});
        }
        m_comm_refs[g] = m_self_comm;
        continue;
      }
      std::vector<uint64_t> members(comm.world_ranks.begin(), comm.world_ranks.end());
      const OTF2_GroupRef group = m_defs.group(comm.name, OTF2_GROUP_TYPE_COMM_GROUP, std::move(members));
      m_comm_refs[g] = static_cast<OTF2_CommRef>(m_comms.size());
      m_comms.push_back({m_comm_refs[g], comm.name, group});
    }
    for (uint32_t w = 0; w < comms.window_count(); ++w) {
      const analyzer::GlobalWindow& window = comms.window_info(w);
      const OTF2_CommRef comm = window.comm < m_comm_refs.size() ? m_comm_refs[window.comm] : OTF2_UNDEFINED_COMM;
      m_windows.push_back({w, window.name, comm});
    }
  }

  OTF2_CommRef comm_ref(uint32_t local) const {
    const uint32_t g = m_view.comms.global(m_rank, local);
    return g < m_comm_refs.size() ? m_comm_refs[g] : OTF2_UNDEFINED_COMM;
  }
  OTF2_RmaWinRef window_ref(uint32_t local) const {
    const uint32_t w = m_view.comms.window(m_rank, local);
    return w == analyzer::k_no_comm ? OTF2_UNDEFINED_RMA_WIN : w;
  }

  uint64_t bytes(uint32_t datatype, int64_t count) const {
    if (count <= 0) return 0;
    uint64_t size = 0;
    if (datatype < format::k_first_derived_id) {
      size = analyzer::basic_type_size(datatype);
    } else if (auto it = m_trace->datatypes.find(datatype); it != m_trace->datatypes.end()) {
      size = it->second.size;
    }
    return size * static_cast<uint64_t>(count);
  }
  uint64_t time(int64_t t) const { return static_cast<uint64_t>(std::max<int64_t>(0, t + m_shift)); }

  // Requests by the events that create them, for the completions.
  void index_requests(const format::RankTrace& trace) {
    m_posted.clear();
    for (const Event& e : trace.events) {
      if (e.request == 0) continue;
      const Shape s = shape(e.call);
      const bool creates = s == Shape::isend || s == Shape::irecv || s == Shape::persistent || s == Shape::icollective ||
                           e.call == Call::Rput || e.call == Call::Rget || e.call == Call::Raccumulate ||
                           e.call == Call::Rget_accumulate;
      if (creates) m_posted[e.request].emplace_back(e.seq, &e);
    }
  }
  // Return the event that created request `request` last before `seq`.
  const Event* posted(uint64_t request, uint64_t seq) const {
    auto it = m_posted.find(request);
    if (it == m_posted.end()) return nullptr;
    const Event* best = nullptr;
    for (const auto& [s, e] : it->second) {
      if (s < seq) best = e;
    }
    return best;
  }

  void add_attributes(OTF2_AttributeList* list, const Event& e) {
    OTF2_AttributeList_RemoveAllAttributes(list);
    OTF2_AttributeList_AddUint64(list, attr(Attr::seq), e.seq);
    OTF2_CallingContextRef context = OTF2_UNDEFINED_CALLING_CONTEXT;
    for (auto frame = e.stack.rbegin(); frame != e.stack.rend(); ++frame) {
      context = m_defs.calling_context(*m_trace, *frame, context);
    }
    if (const OTF2_CallingContextRef site = m_defs.calling_context(*m_trace, e.site, context);
        site != OTF2_UNDEFINED_CALLING_CONTEXT) {
      OTF2_AttributeList_AddCallingContextRef(list, attr(Attr::call_site), site);
    }
    const format::Family family = format::call_family(e.call);
    const bool envelope = family == format::Family::p2p || family == format::Family::coll ||
                          family == format::Family::comm || e.call == Call::Abort;
    if (envelope) {
      if (const OTF2_CommRef comm = comm_ref(e.comm); comm != OTF2_UNDEFINED_COMM) {
        OTF2_AttributeList_AddCommRef(list, attr(Attr::comm), comm);
      }
    }
    if (e.peer) OTF2_AttributeList_AddInt32(list, attr(Attr::peer), *e.peer);
    if (e.tag) OTF2_AttributeList_AddInt32(list, attr(Attr::tag), *e.tag);
    const bool rma_comm = format::call_traits(e.call).role == format::Role::rma_comm;
    if (family == format::Family::p2p || family == format::Family::coll || rma_comm) {
      OTF2_AttributeList_AddInt64(list, attr(Attr::count), e.count);
      if (e.datatype < format::k_first_derived_id) OTF2_AttributeList_AddUint32(list, attr(Attr::datatype), e.datatype);
      if (e.op != 0) OTF2_AttributeList_AddUint32(list, attr(Attr::op), e.op);
    }
    if (family == format::Family::rma) {
      if (const OTF2_RmaWinRef win = window_ref(e.window); e.window != 0 && win != OTF2_UNDEFINED_RMA_WIN) {
        OTF2_AttributeList_AddRmaWinRef(list, attr(Attr::window), win);
      }
    }
    if (rma_comm) {
      OTF2_AttributeList_AddInt64(list, attr(Attr::target_count), e.target_count);
      if (e.target_datatype < format::k_first_derived_id) {
        OTF2_AttributeList_AddUint32(list, attr(Attr::target_datatype), e.target_datatype);
      }
    }
    if (e.request != 0) OTF2_AttributeList_AddUint64(list, attr(Attr::request), e.request);
    if (e.call == Call::Init || e.call == Call::Init_thread) {
      OTF2_AttributeList_AddUint8(list, attr(Attr::thread_level), static_cast<uint8_t>(m_trace->header.thread_level));
    }
  }

  OTF2_AttributeRef attr(Attr a) const { return m_attr[static_cast<std::size_t>(a)]; }

  void write_event(LocationWriter& out, const Event& e) {
    OTF2_EvtWriter* w = out.writer();
    const OTF2_RegionRef region = m_defs.call_region(e.call);
    const uint64_t start = time(e.t_start);
    const uint64_t end = time(e.t_end());
    add_attributes(out.attributes(), e);
    check(OTF2_EvtWriter_Enter(w, out.attributes(), out.at(start), region), "Enter");
    const int32_t peer = e.peer.value_or(0);
    const uint32_t tag = static_cast<uint32_t>(e.tag.value_or(0));
    switch (shape(e.call)) {
      case Shape::plain: case Shape::probe: case Shape::persistent: case Shape::cancel:
        break;
      case Shape::send:
      case Shape::sendrecv:
        if (peer >= 0) {
          check(OTF2_EvtWriter_MpiSend(w, nullptr, out.at(start), static_cast<uint32_t>(peer), comm_ref(e.comm), tag,
                                       bytes(e.datatype, e.count)),
                "MpiSend");
        }
        if (shape(e.call) == Shape::sendrecv && !e.pending) {
          write_recv(out, e.status, e.comm, e.call == Call::Sendrecv ? e.recv_datatype : e.datatype, end);
        }
        break;
      case Shape::isend:
        if (peer >= 0) {
          check(OTF2_EvtWriter_MpiIsend(w, nullptr, out.at(start), static_cast<uint32_t>(peer), comm_ref(e.comm), tag,
                                        bytes(e.datatype, e.count), e.request),
                "MpiIsend");
        }
        break;
      case Shape::irecv:
        check(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, out.at(start), e.request), "MpiIrecvRequest");
        break;
      case Shape::recv:
        if (!e.pending) write_recv(out, e.status, e.comm, e.datatype, end);
        break;
      case Shape::start:
        for (uint64_t request : e.call == Call::Start ? std::vector<uint64_t>{e.request} : e.requests) {
          write_start(out, request, e.seq, start);
        }
        break;
      case Shape::completion:
        write_completion(out, e, e.pending ? start : end);
        break;
      case Shape::collective:
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, out.at(start)), "MpiCollectiveBegin");
        if (!e.pending) {
          check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, out.at(end), *collective_op(e.call), comm_ref(e.comm),
                                                root(e), bytes(e.datatype, e.count),
                                                bytes(e.recv_datatype, e.recv_count)),
                "MpiCollectiveEnd");
        }
        break;
      case Shape::icollective:
        check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, out.at(start), e.request),
              "NonBlockingCollectiveRequest");
        break;
      case Shape::win_create:
      case Shape::win_free:
        // A collective handle operation around the window's creation or destruction record.
        if (const OTF2_RmaWinRef win = window_ref(e.window); win != OTF2_UNDEFINED_RMA_WIN) {
          const bool create = shape(e.call) == Shape::win_create;
          check(OTF2_EvtWriter_RmaCollectiveBegin(w, nullptr, out.at(start)), "RmaCollectiveBegin");
          check(create ? OTF2_EvtWriter_RmaWinCreate(w, nullptr, out.at(start), win)
                       : OTF2_EvtWriter_RmaWinDestroy(w, nullptr, out.at(start), win),
                "RmaWinCreate/Destroy");
          if (!e.pending) {
            check(OTF2_EvtWriter_RmaCollectiveEnd(
                      w, nullptr, out.at(end), create ? OTF2_COLLECTIVE_OP_CREATE_HANDLE : OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                      OTF2_RMA_SYNC_LEVEL_NONE, win, OTF2_UNDEFINED_UINT32, 0, 0),
                  "RmaCollectiveEnd");
          }
        }
        break;
      case Shape::win_fence:
        if (const OTF2_RmaWinRef win = window_ref(e.window); win != OTF2_UNDEFINED_RMA_WIN) {
          check(OTF2_EvtWriter_RmaCollectiveBegin(w, nullptr, out.at(start)), "RmaCollectiveBegin");
          if (!e.pending) {
            check(OTF2_EvtWriter_RmaCollectiveEnd(w, nullptr, out.at(end), OTF2_COLLECTIVE_OP_BARRIER,
                                                  OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, win,
                                                  OTF2_UNDEFINED_UINT32, 0, 0),
                  "RmaCollectiveEnd");
          }
        }
        break;
      case Shape::win_lock:
        if (const OTF2_RmaWinRef win = window_ref(e.window); win != OTF2_UNDEFINED_RMA_WIN) {
          const uint32_t remote = e.call == Call::Win_lock && peer >= 0 ? static_cast<uint32_t>(peer)
                                                                        : OTF2_UNDEFINED_UINT32;
          const OTF2_LockType type = e.lock_type == format::LockType::shared || e.call == Call::Win_lock_all
                                         ? OTF2_LOCK_SHARED
                                         : OTF2_LOCK_EXCLUSIVE;
          const uint64_t id = ++m_lock_id;
          m_locks[{e.window, remote}] = id;
          check(OTF2_EvtWriter_RmaRequestLock(w, nullptr, out.at(start), win, remote, id, type), "RmaRequestLock");
          if (!e.pending) {
            check(OTF2_EvtWriter_RmaAcquireLock(w, nullptr, out.at(end), win, remote, id, type), "RmaAcquireLock");
          }
        }
        break;
      case Shape::win_unlock:
        if (const OTF2_RmaWinRef win = window_ref(e.window); win != OTF2_UNDEFINED_RMA_WIN) {
          const uint32_t remote = e.call == Call::Win_unlock && peer >= 0 ? static_cast<uint32_t>(peer)
                                                                          : OTF2_UNDEFINED_UINT32;
          const auto lock = m_locks.find({e.window, remote});
          const uint64_t id = lock == m_locks.end() ? 0 : lock->second;
          check(OTF2_EvtWriter_RmaReleaseLock(w, nullptr, out.at(e.pending ? start : end), win, remote, id),
                "RmaReleaseLock");
        }
        break;
      case Shape::win_group_sync:
        if (const OTF2_RmaWinRef win = window_ref(e.window); win != OTF2_UNDEFINED_RMA_WIN) {
          check(OTF2_EvtWriter_RmaGroupSync(w, nullptr, out.at(start), OTF2_RMA_SYNC_LEVEL_PROCESS, win,
                                            pscw_group(e.group)),
                "RmaGroupSync");
        }
        break;
      case Shape::rma_put: case Shape::rma_get: case Shape::rma_atomic:
        if (const OTF2_RmaWinRef win = window_ref(e.window); win != OTF2_UNDEFINED_RMA_WIN && peer >= 0) {
          const uint64_t size = bytes(e.datatype, e.count);
          const uint32_t remote = static_cast<uint32_t>(peer);
          const uint64_t id = ++m_rma_id;
          const Shape s = shape(e.call);
          if (s == Shape::rma_put) {
            check(OTF2_EvtWriter_RmaPut(w, nullptr, out.at(start), win, remote, size, id), "RmaPut");
          } else if (s == Shape::rma_get) {
            check(OTF2_EvtWriter_RmaGet(w, nullptr, out.at(start), win, remote, size, id), "RmaGet");
          } else {
            const uint64_t received = e.result_buf != 0 || e.call == Call::Fetch_and_op ? size : 0;
            check(OTF2_EvtWriter_RmaAtomic(w, nullptr, out.at(start), win, remote, atomic_type(e.call), size, received,
                                           id),
                  "RmaAtomic");
          }
        }
        break;
    }
    if (!e.pending) check(OTF2_EvtWriter_Leave(w, nullptr, out.at(end), region), "Leave");
  }

  uint32_t root(const Event& e) const {
    if (!e.peer) return OTF2_COLLECTIVE_ROOT_NONE;
    if (*e.peer >= 0) return static_cast<uint32_t>(*e.peer);
    if (*e.peer == format::k_root) return OTF2_COLLECTIVE_ROOT_SELF;
    return OTF2_COLLECTIVE_ROOT_NONE;
  }

  void write_recv(LocationWriter& out, const format::Status& status, uint32_t comm, uint32_t datatype, uint64_t end) {
    if (!status.source || *status.source < 0) return;  // MPI_PROC_NULL: nothing received
    check(OTF2_EvtWriter_MpiRecv(out.writer(), nullptr, out.at(end), static_cast<uint32_t>(*status.source),
                                 comm_ref(comm), static_cast<uint32_t>(status.tag.value_or(0)),
                                 bytes(datatype, status.count.value_or(0))),
          "MpiRecv");
  }

  void write_start(LocationWriter& out, uint64_t request, uint64_t seq, uint64_t start) {
    const Event* init = posted(request, seq);
    if (init == nullptr) return;
    if (init->call == Call::Recv_init) {
      check(OTF2_EvtWriter_MpiIrecvRequest(out.writer(), nullptr, out.at(start), request), "MpiIrecvRequest");
    } else if (init->peer && *init->peer >= 0) {
      check(OTF2_EvtWriter_MpiIsend(out.writer(), nullptr, out.at(start), static_cast<uint32_t>(*init->peer),
                                    comm_ref(init->comm), static_cast<uint32_t>(init->tag.value_or(0)),
                                    bytes(init->datatype, init->count), request),
            "MpiIsend");
    }
  }

  // Each request of a Wait/Test: what completed, or a failed test.
  void write_completion(LocationWriter& out, const Event& e, uint64_t at) {
    std::vector<uint64_t> requests = e.requests;
    if (requests.empty() && e.request != 0) requests.push_back(e.request);
    for (const format::CompletedRequest& c : e.completed) {
      if (std::find(requests.begin(), requests.end(), c.request) == requests.end()) requests.push_back(c.request);
    }
    for (uint64_t request : requests) {
      if (request == 0) continue;
      const auto done = std::find_if(e.completed.begin(), e.completed.end(),
                                     [&](const format::CompletedRequest& c) { return c.request == request; });
      OTF2_EvtWriter* w = out.writer();
      if (done == e.completed.end()) {
        check(OTF2_EvtWriter_MpiRequestTest(w, nullptr, out.at(at), request), "MpiRequestTest");
        continue;
      }
      if (done->status.cancelled) {
        check(OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, out.at(at), request), "MpiRequestCancelled");
        continue;
      }
      const Event* origin = posted(request, e.seq);
      if (origin == nullptr) {
        check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, out.at(at), request), "MpiIsendComplete");
        continue;
      }
      const Shape s = shape(origin->call);
      if (s == Shape::icollective) {
        check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, out.at(at), *collective_op(origin->call),
                                                           comm_ref(origin->comm), root(*origin),
                                                           bytes(origin->datatype, origin->count),
                                                           bytes(origin->recv_datatype, origin->recv_count), request),
              "NonBlockingCollectiveComplete");
      } else if (origin->call == Call::Irecv || origin->call == Call::Recv_init) {
        const format::Status& status = done->status;
        if (!status.source || *status.source < 0) {
          check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, out.at(at), request), "MpiIsendComplete");
          continue;
        }
        check(OTF2_EvtWriter_MpiIrecv(w, nullptr, out.at(at), static_cast<uint32_t>(*status.source),
                                      comm_ref(origin->comm), static_cast<uint32_t>(status.tag.value_or(0)),
                                      bytes(origin->datatype, status.count.value_or(0)), request),
              "MpiIrecv");
      } else {
        // Sends, and RMA requests, whose completion OTF2 has no other record for.
        check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, out.at(at), request), "MpiIsendComplete");
      }
    }
  }

  OTF2_GroupRef pscw_group(uint32_t local) {
    const auto it = m_trace->comms.find(local);
    std::vector<uint64_t> members;
    if (it != m_trace->comms.end()) members.assign(it->second.world_ranks.begin(), it->second.world_ranks.end());
    auto [g, fresh] = m_pscw_groups.emplace(members, 0);
    if (fresh) g->second = m_defs.group(fmt::format("group of {} ranks", members.size()), OTF2_GROUP_TYPE_COMM_GROUP, members);
    return g->second;
  }

  void write_end(LocationWriter& out, const format::Termination& end, int64_t rank_end) {
    int64_t status = 0;
    switch (end.kind) {
      case format::TerminationKind::signal: status = 128 + end.signal; break;
      case format::TerminationKind::aborted: status = 1; break;
      case format::TerminationKind::unspecified: case format::TerminationKind::finalized:
      case format::TerminationKind::tracer_stopped: case format::TerminationKind::exit_without_finalize:
        break;
    }
    OTF2_AttributeList* list = out.attributes();
    OTF2_AttributeList_RemoveAllAttributes(list);
    OTF2_AttributeList_AddUint8(list, attr(Attr::termination), static_cast<uint8_t>(end.kind));
    check(OTF2_EvtWriter_ProgramEnd(out.writer(), list, out.at(time(std::max(end.t, rank_end))), status), "ProgramEnd");
  }

  const TraceView& m_view;
  OTF2_Archive* m_archive;
  Definitions m_defs;
  OTF2_AttributeRef m_attr[k_attribute_count] = {};
  std::vector<OTF2_CommRef> m_comm_refs;  // by global comm index
  OTF2_CommRef m_self_comm = OTF2_UNDEFINED_COMM;
  std::vector<CommInfo> m_comms;
  std::vector<WindowInfo> m_windows;
  std::map<std::vector<uint64_t>, OTF2_GroupRef> m_pscw_groups;
  std::vector<LocationInfo> m_locations;
  std::map<uint32_t, std::string> m_hosts;  // per rank written
  uint64_t m_records = 0;
  uint64_t m_lock_id = 0;
  uint64_t m_rma_id = 0;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_locks;  // (window, remote) -> lock id
  // Per rank being written:
  uint32_t m_rank = 0;
  const format::RankTrace* m_trace = nullptr;
  int64_t m_shift = 0;
  std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, const Event*>>> m_posted;
};

struct ArchiveCloser {
  void operator()(OTF2_Archive* archive) const { OTF2_Archive_Close(archive); }
};

}  // namespace

Otf2ExportStats export_otf2(const fs::path& dir, const TraceView& view, const fs::path& out,
                            const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  const RankSource source(dir);
  const uint32_t n = view.world_size;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw format::TraceError(fmt::format("{}: cannot create the directory: {}", out.string(), ec.message()));
  Otf2ExportStats stats;

  const std::string path = out.string();
  std::unique_ptr<OTF2_Archive, ArchiveCloser> archive(
      OTF2_Archive_Open(path.c_str(), std::string(k_archive_name).c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024,
                        4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!archive) throw format::TraceError(fmt::format("{}: cannot create an OTF2 archive there", path));
  check(OTF2_Archive_SetFlushCallbacks(archive.get(), &k_flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "collective callbacks");
  check(OTF2_Archive_SetCreator(archive.get(), fmt::format("smtrace {}", SMTRACE_VERSION).c_str()), "creator");
  check(OTF2_Archive_SetDescription(archive.get(), fmt::format("smtrace export of {}", dir.string()).c_str()),
        "description");
  check(OTF2_Archive_OpenEvtFiles(archive.get()), "opening the event files");
  Exporter exporter(view, archive.get());
  // Timestamps stay ns since the common origin (so that an import gives the
  // same times back): the global offset is 0, below every one of them, and
  // the trace length the latest.
  int64_t latest = 0;
  for (uint32_t r = 0; r < n; ++r) {
    say(fmt::format("export: rank {}/{}", r + 1, n));
    const format::RankTrace trace = source.read(r);
    if (!trace.present) continue;
    const int64_t offset = r < view.time_offset.size() ? view.time_offset[r] : 0;
    for (const Event& e : trace.events) {
      latest = std::max(latest, offset + (e.pending ? e.t_start : e.t_end()));
    }
    if (trace.end) latest = std::max(latest, offset + trace.end->t);
    stats.events += exporter.write_rank(r, trace, offset);
    ++stats.ranks;
  }
  check(OTF2_Archive_CloseEvtFiles(archive.get()), "closing the event files");
  check(OTF2_Archive_OpenDefFiles(archive.get()), "opening the definition files");
  exporter.write_local_definitions();
  check(OTF2_Archive_CloseDefFiles(archive.get()), "closing the definition files");
  exporter.write_definitions(0, static_cast<uint64_t>(std::max<int64_t>(0, latest)));
  const OTF2_ErrorCode closed = OTF2_Archive_Close(archive.release());
  check(closed, "closing the archive");
  stats.locations = exporter.locations();
  stats.records = exporter.records();
  return stats;
}

}  // namespace smtrace::exchange
