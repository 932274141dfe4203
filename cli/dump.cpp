// smtrace dump: every event, one line each, named RANK:SEQ.
//
// The text is for people and may change; scripts use --format json (the
// protobuf JSON mapping, a stable interface). Every field the tracer set is
// shown: fields a call does not use keep their defaults and are left out,
// so the rules per call (docs/trace-format.md, section 7) only decide names and order.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "trace_format/call_semantics.hpp"
#include "trace_format/json.hpp"

namespace smtrace::cli {

namespace {

using format::Call;
using format::Event;
using format::Family;
using format::RankTrace;
using format::Role;

constexpr std::size_t k_max_array = 16;  // longer arrays are cut, with a count

// Where a request was completed, to show an Irecv's actual source and tag
// on the Irecv's own line.
struct Completion {
  uint64_t seq = 0;
  const format::Status* status = nullptr;
};
using Completions = std::map<uint64_t, std::vector<Completion>>;  // by request id

Completions completions_of(const RankTrace& rank) {
  Completions by_request;
  for (const Event& event : rank.events) {
    for (const format::CompletedRequest& done : event.completed) {
      by_request[done.request].push_back({event.seq, &done.status});
    }
  }
  return by_request;  // events are in seq order, so each list is too
}

const Completion* completion_after(const Completions& completions, uint64_t request, uint64_t seq) {
  auto it = completions.find(request);
  if (it == completions.end()) return nullptr;
  for (const Completion& done : it->second) {
    if (done.seq > seq) return &done;
  }
  return nullptr;
}

std::string hex(uint64_t address) { return fmt::format("{:#x}", address); }

template <typename T>
std::string join_array(const std::vector<T>& values, auto&& show) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size() && i < k_max_array; ++i) {
    if (i != 0) text += ", ";
    text += show(values[i]);
  }
  if (values.size() > k_max_array) text += fmt::format(", ...(+{})", values.size() - k_max_array);
  return text + "]";
}

std::string request_name(uint64_t request) {
  return request == 0 ? std::string("NULL") : fmt::format("req#{}", request);
}

std::string members(const std::vector<uint32_t>& ranks) {
  return join_array(ranks, [](uint32_t r) { return std::to_string(r); });
}

std::string comm_with_members(const RankTrace& rank, uint32_t id, bool group) {
  std::string name = group ? fmt::format("group#{}", id) : comm_name(id);
  if (auto it = rank.comms.find(id); it != rank.comms.end() && id > format::k_comm_self) {
    name += members(it->second.world_ranks);
  }
  return name;
}

std::string assert_names(uint32_t flags) {
  static constexpr std::pair<uint32_t, const char*> k_flags[] = {
      {format::assert_flag::nocheck, "NOCHECK"},     {format::assert_flag::nostore, "NOSTORE"},
      {format::assert_flag::noput, "NOPUT"},         {format::assert_flag::noprecede, "NOPRECEDE"},
      {format::assert_flag::nosucceed, "NOSUCCEED"},
  };
  std::string text;
  for (const auto& [bit, name] : k_flags) {
    if ((flags & bit) == 0) continue;
    if (!text.empty()) text += '|';
    text += name;
    flags &= ~bit;
  }
  if (flags != 0) text += fmt::format("{}{:#x}", text.empty() ? "" : "|", flags);
  return text;
}

std::string status_text(const format::Status& status) {
  std::vector<std::string> parts;
  if (status.source) parts.push_back("source=" + rank_name(*status.source));
  if (status.tag) parts.push_back("tag=" + tag_name(*status.tag));
  if (status.count) parts.push_back(fmt::format("count={}", *status.count));
  if (status.cancelled) parts.push_back("cancelled");
  if (status.error != 0) parts.push_back(fmt::format("error={}", status.error));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

// "posted" or "posted→actual" when the actual value differs.
std::string posted_actual(const std::string& posted, const std::optional<std::string>& actual) {
  if (!actual || *actual == posted) return posted;
  return posted + "→" + *actual;
}

Role role_of(Call call) { return format::call_traits(call).role; }
bool is_send(Call call) { return role_of(call) == Role::send || role_of(call) == Role::sendrecv; }
// Calls whose status belongs to their posted source and tag.
bool is_receive(Call call) { return role_of(call) == Role::recv || role_of(call) == Role::probe; }
bool is_sendrecv(Call call) { return role_of(call) == Role::sendrecv; }

const char* peer_label(Call call, Family family) {
  if (is_send(call)) return "dest";
  if (is_receive(call)) return "source";
  if (family == Family::coll) return "root";
  if (role_of(call) == Role::rma_sync) return "rank";  // Win_lock, Win_unlock, Win_flush...
  if (family == Family::rma) return "target";
  return "peer";
}

// The calls with a communicator argument: communication, communicator
// constructors, window constructors, MPI_Comm_group and MPI_Abort.
bool shows_comm(Call call, Family family) {
  if (call == Call::Info_create || call == Call::Info_dup || call == Call::Info_free) return false;
  if (family == Family::p2p || family == Family::coll || family == Family::comm) return true;
  const format::Resource resource = format::call_traits(call).resource;
  return resource == format::Resource::win_new || resource == format::Resource::win_dynamic ||
         call == Call::Abort || call == Call::Comm_group;
}

class EventPrinter {
 public:
  EventPrinter(const RankTrace& rank, uint32_t world_rank)
      : m_rank(rank), m_world_rank(world_rank), m_completions(completions_of(rank)) {}

  std::string line(const Event& event) const {
    std::string text = fmt::format("{}:{} t=+{}", m_world_rank, event.seq, human_ns(static_cast<double>(event.t_start)));
    if (event.pending) {
      text += " PENDING (never returned)";
    } else {
      text += " dur=" + human_ns(static_cast<double>(event.duration));
    }
    if (event.thread != 0) text += fmt::format(" thread={}", event.thread);
    text += fmt::format(" {}({})", format::call_name(event.call), arguments(event));
    if (!format::call_known(event.call)) text += fmt::format(" [unknown call {}]", static_cast<unsigned>(event.call));
    if (event.repeat > 1) text += fmt::format(" ×{}", event.repeat);
    if (event.rc != 0) text += fmt::format(" rc={}", event.rc);
    if (event.site != 0) {
      const std::string where = site_to_string(m_rank, m_rank.site(event.site));
      text += " @ " + (where.empty() ? fmt::format("site#{}", event.site) : where);
    }
    for (uint32_t frame : event.stack) {
      const std::string where = site_to_string(m_rank, m_rank.site(frame));
      text += " < " + (where.empty() ? fmt::format("site#{}", frame) : where);
    }
    return text;
  }

 private:
  std::string peer_text(uint32_t comm, int32_t peer) const {
    std::string text = rank_name(peer);
    if (comm != format::k_comm_world && peer >= 0) {
      if (auto world = m_rank.world_rank(comm, peer)) {
        if (static_cast<int64_t>(*world) != peer || comm != format::k_comm_self) {
          text += fmt::format("(world {})", *world);
        }
      }
    }
    return text;
  }

  std::string arguments(const Event& e) const {
    std::vector<std::string> args;
    auto add = [&](std::string_view name, const std::string& value) {
      args.push_back(fmt::format("{}={}", name, value));
    };
    const Family family = format::call_family(e.call);
    if (family == Family::cuda) return cuda_arguments(e);
    const bool collective = family == Family::coll;
    const bool sendrecv = is_sendrecv(e.call);

    // The actual status: the call's own, or the one its request completed with.
    std::optional<format::Status> actual;
    std::string completed_by;
    if (e.status.source || e.status.tag || e.status.count || e.status.cancelled || e.status.error) {
      actual = e.status;
    } else if (e.request != 0 && role_of(e.call) == Role::recv) {
      if (const Completion* done = completion_after(m_completions, e.request, e.seq)) {
        actual = *done->status;
        completed_by = fmt::format("{}:{}", m_world_rank, done->seq);
      }
    }
    const bool receive_status = is_receive(e.call);  // status belongs to peer/tag

    if (e.peer) {
      std::string value = peer_text(e.comm, *e.peer);
      if (receive_status && actual && actual->source) value = posted_actual(value, peer_text(e.comm, *actual->source));
      add(peer_label(e.call, family), value);
    }
    if (e.tag) {
      std::string value = tag_name(*e.tag);
      if (receive_status && actual && actual->tag) value = posted_actual(value, tag_name(*actual->tag));
      add(sendrecv ? "sendtag" : "tag", value);
    }
    const bool two_sided = sendrecv || collective;
    if (e.buf != 0) add(two_sided ? "sendbuf" : (family == Family::rma ? "origin" : "buf"), hex(e.buf));
    if (e.count != 0 || (family == Family::p2p && role_of(e.call) != Role::probe)) {
      std::string value = std::to_string(e.count);
      if (receive_status && actual && actual->count) value = posted_actual(value, std::to_string(*actual->count));
      add(e.call == Call::Abort ? "errorcode" : (two_sided ? "sendcount" : "count"), value);
    }
    const bool type_constructor = format::call_traits(e.call).resource == format::Resource::type_new;
    if (e.datatype != 0) add(two_sided ? "sendtype" : (type_constructor ? "oldtype" : "datatype"), datatype_name(e.datatype));
    if (e.recv_peer) {
      std::string value = peer_text(e.comm, *e.recv_peer);
      if (sendrecv && actual && actual->source) value = posted_actual(value, peer_text(e.comm, *actual->source));
      add("source", value);
    }
    if (e.recv_tag) {
      std::string value = tag_name(*e.recv_tag);
      if (sendrecv && actual && actual->tag) value = posted_actual(value, tag_name(*actual->tag));
      add("recvtag", value);
    }
    if (e.recv_buf != 0) add("recvbuf", hex(e.recv_buf));
    if (e.recv_count != 0 || (sendrecv && e.recv_datatype != 0)) {
      std::string value = std::to_string(e.recv_count);
      if (sendrecv && actual && actual->count) value = posted_actual(value, std::to_string(*actual->count));
      add("recvcount", value);
    }
    if (e.recv_datatype != 0) add("recvtype", datatype_name(e.recv_datatype));
    auto numbers = [](int64_t v) { return std::to_string(v); };
    auto types = [](uint32_t v) { return datatype_name(v); };
    if (!e.counts.empty()) add("sendcounts", join_array(e.counts, numbers));
    if (!e.displs.empty()) add("sdispls", join_array(e.displs, numbers));
    if (!e.datatypes.empty()) add("sendtypes", join_array(e.datatypes, types));
    if (!e.recv_counts.empty()) add("recvcounts", join_array(e.recv_counts, numbers));
    if (!e.recv_displs.empty()) add("rdispls", join_array(e.recv_displs, numbers));
    if (!e.recv_datatypes.empty()) add("recvtypes", join_array(e.recv_datatypes, types));
    if (e.op != 0) add("op", op_name(e.op));
    if (e.in_place) args.emplace_back("MPI_IN_PLACE");

    if (e.request != 0) add("request", request_name(e.request));
    if (!e.requests.empty()) add("requests", join_array(e.requests, request_name));
    if (!e.completed.empty()) {
      add("completed", join_array(e.completed, [](const format::CompletedRequest& done) {
            std::string text = fmt::format("{}:{}", done.index, request_name(done.request));
            const std::string status = status_text(done.status);
            if (!status.empty()) text += "(" + status + ")";
            return text;
          }));
    }
    if (e.flag) add("flag", *e.flag ? "true" : "false");
    if (actual && !receive_status && !sendrecv && completed_by.empty()) add("status", "{" + status_text(*actual) + "}");
    if (actual && (actual->cancelled || actual->error != 0) && (receive_status || sendrecv)) {
      add("status", "{" + status_text(*actual) + "}");
    }
    if (!completed_by.empty()) add("completed_by", completed_by);

    const bool group_call = family == Family::group;
    if (e.color != 0 || e.call == Call::Comm_split) add("color", std::to_string(e.color));
    if (e.key != 0 || e.call == Call::Comm_split) add("key", std::to_string(e.key));
    if (e.group != 0) add("group", comm_with_members(m_rank, e.group, true));
    if (e.new_comm != 0) add(group_call ? "newgroup" : "newcomm", comm_with_members(m_rank, e.new_comm, group_call));
    if (e.new_datatype != 0) {
      const format::HandleKind kind = format::handle_use(e).kind;
      if (kind == format::HandleKind::op) {
        add("op", op_name(e.new_datatype));
      } else if (kind == format::HandleKind::info) {
        add("info", e.new_datatype == 1 ? std::string("MPI_INFO_ENV") : fmt::format("info#{}", e.new_datatype));
      } else {
        add("newtype", datatype_name(e.new_datatype));
      }
    }

    if (const format::HandleUse h = format::handle_use(e); h.kind == format::HandleKind::message) {
      add("message", fmt::format("msg#{}", h.id));
    } else if (e.message == format::k_message_no_proc && format::call_traits(e.call).resource != format::Resource::none) {
      add("message", "MPI_MESSAGE_NO_PROC");
    }
    if (e.call == Call::Intercomm_create && e.peer_comm != format::k_null_id) add("peer_comm", comm_name(e.peer_comm));
    if (e.window != 0) add("win", fmt::format("win#{}", e.window));
    if (e.win_base != 0) add("base", hex(e.win_base));
    if (e.win_size != 0) add("size", std::to_string(e.win_size));
    if (e.disp_unit != 0) add("disp_unit", std::to_string(e.disp_unit));
    if (e.target_disp != 0 || e.target_count != 0) add("target_disp", std::to_string(e.target_disp));
    if (e.target_count != 0) add("target_count", std::to_string(e.target_count));
    if (e.target_datatype != 0) add("target_datatype", datatype_name(e.target_datatype));
    if (e.result_buf != 0) add("result", hex(e.result_buf));
    if (e.result_count != 0) add("result_count", std::to_string(e.result_count));
    if (e.result_datatype != 0) add("result_datatype", datatype_name(e.result_datatype));
    if (e.compare_buf != 0) add("compare", hex(e.compare_buf));
    if (e.lock_type != format::LockType::unspecified) {
      add("lock_type", e.lock_type == format::LockType::exclusive ? "EXCLUSIVE"
                       : e.lock_type == format::LockType::shared  ? "SHARED"
                                                                  : std::to_string(static_cast<int>(e.lock_type)));
    }
    if (e.assert_flags != 0) add("assert", assert_names(e.assert_flags));
    if (e.size != 0) add(e.window != 0 ? "bytes" : "size", std::to_string(e.size));
    if (e.stride != 0) add("stride", std::to_string(e.stride));

    if (shows_comm(e.call, family) || e.comm != format::k_comm_world) add("comm", comm_name(e.comm));

    std::string text;
    for (const std::string& arg : args) text += (text.empty() ? "" : ", ") + arg;
    return text;
  }

  // CUDA calls name their pointers after the runtime's parameters.
  std::string cuda_arguments(const Event& e) const {
    std::vector<std::string> args;
    auto add = [&](std::string_view name, const std::string& value) {
      args.push_back(fmt::format("{}={}", name, value));
    };
    auto pointer = [](uint64_t addr, format::MemoryKind kind) {
      return kind == format::MemoryKind::unspecified ? hex(addr)
                                                     : fmt::format("{}({})", hex(addr), format::memory_kind_name(kind));
    };
    const bool copy = e.call == Call::cudaMemcpy || e.call == Call::cudaMemcpyAsync;
    const bool stream_call = e.call == Call::cudaStreamCreate || e.call == Call::cudaStreamCreateWithFlags ||
                             e.call == Call::cudaStreamDestroy || e.call == Call::cudaStreamSynchronize ||
                             e.call == Call::cudaStreamQuery || e.call == Call::cudaStreamWaitEvent;
    if (e.kernel != 0) {
      const format::CallSite* kernel = m_rank.site(e.kernel);
      add("kernel", kernel && !kernel->function.empty() ? kernel->function : fmt::format("site#{}", e.kernel));
    }
    if (copy) {
      add("dst", pointer(e.recv_buf, e.recv_memory));
      add("src", pointer(e.buf, e.memory));
    } else if (e.buf != 0 || e.memory != format::MemoryKind::unspecified) {
      add("ptr", pointer(e.buf, e.memory));
    }
    if (e.size != 0 || copy) add("size", std::to_string(e.size));
    if (e.copy_kind != format::CopyKind::unspecified) add("kind", std::string(format::copy_kind_name(e.copy_kind)));
    if (!e.args.empty()) {
      add("args", join_array(e.args, [](const format::KernelArg& a) {
            std::string text = fmt::format("{}:{}", a.index, hex(a.addr));
            if (a.size != 0) text += fmt::format("+{}", a.size);
            return text + " " + std::string(format::arg_access_name(a.access));
          }));
    }
    if (e.cuda_event != 0) add("event", fmt::format("ev#{}", e.cuda_event));
    // The stream of work and of stream calls; 0 (the legacy default stream) too.
    if (e.stream != 0 || stream_call || e.call == Call::cudaLaunchKernel || e.call == Call::cudaMemcpyAsync ||
        e.call == Call::cudaMemsetAsync || e.call == Call::cudaEventRecord) {
      add("stream", e.stream == format::k_legacy_stream       ? std::string("legacy")
                    : e.stream == format::k_per_thread_stream ? std::string("per-thread")
                                                              : fmt::format("s#{}", e.stream));
    }
    if (e.flags != 0) add("flags", fmt::format("{:#x}", e.flags));
    std::string text;
    for (const std::string& arg : args) text += (text.empty() ? "" : ", ") + arg;
    return text;
  }

  const RankTrace& m_rank;
  uint32_t m_world_rank;
  Completions m_completions;
};

std::string footprint(const format::DatatypeDef& type) {
  std::string text;
  constexpr std::size_t k_max_runs = 8;
  for (std::size_t i = 0; i < type.runs.size() && i < k_max_runs; ++i) {
    const format::Run& run = type.runs[i];
    if (!text.empty()) text += ", ";
    text += fmt::format("{}B@{}", run.length, run.offset);
    if (run.count > 1) text += fmt::format(" x{} stride {}", run.count, run.stride);
  }
  if (type.runs.size() > k_max_runs) text += fmt::format(", ...(+{} runs)", type.runs.size() - k_max_runs);
  return text;
}

std::string signature(const format::DatatypeDef& type) {
  std::string text;
  for (const format::TypeCount& part : type.signature) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{}×{}", part.count, datatype_name(part.type));
  }
  return text;
}

template <typename Map>
std::vector<uint32_t> sorted_ids(const Map& map) {
  std::vector<uint32_t> ids;
  ids.reserve(map.size());
  for (const auto& entry : map) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  return ids;
}

void print_rank(std::string& out, const RankTrace& rank, uint32_t world_rank, uint32_t world_size) {
  const format::RankHeader& h = rank.header;
  out += fmt::format("== rank {} of {} ({}): host {}, pid {}, thread level {}\n", world_rank, world_size,
                     rank.file, h.host.empty() ? "?" : h.host, h.pid, h.thread_level);
  if (!h.executable.empty() || !h.argv.empty()) {
    out += fmt::format("   program: {}\n", h.argv.empty() ? h.executable : shell_join(h.argv));
  }
  if (!h.mpi_library.empty()) {
    std::string library = h.mpi_library;
    if (auto cut = library.find('\n'); cut != std::string::npos) library.resize(cut);
    out += fmt::format("   MPI: {}\n", library);
  }
  if (!h.tracer_version.empty() || !h.options.empty()) {
    std::string options;
    for (const auto& [name, value] : h.options) options += fmt::format(" {}={}", name, value);
    out += fmt::format("   tracer {}{}{}\n", h.tracer_version, options.empty() ? "" : ", options:", options);
  }
  for (uint32_t id : sorted_ids(rank.comms)) {
    if (id <= format::k_comm_self) continue;
    const format::CommDef& comm = rank.comms.at(id);
    out += fmt::format("   {} = world ranks {}", comm.is_group ? fmt::format("group#{}", id) : comm_name(id),
                       members(comm.world_ranks));
    if (comm.inter) out += fmt::format(", remote {}", members(comm.remote_world_ranks));
    if (!comm.is_group || comm.parent != 0) out += fmt::format(" (from {})", comm_name(comm.parent));
    out += '\n';
  }
  for (uint32_t id : sorted_ids(rank.datatypes)) {
    const format::DatatypeDef& type = rank.datatypes.at(id);
    out += fmt::format("   {} = {}: size {}, lb {}, extent {}{}; footprint {}{}; signature {}\n",
                       datatype_name(id), format::call_name(type.combiner), type.size, type.lb, type.extent,
                       type.committed ? ", committed" : "", footprint(type),
                       type.truncated ? " (truncated)" : "", signature(type));
  }

  const EventPrinter printer(rank, world_rank);
  std::size_t note = 0;
  for (const Event& event : rank.events) {
    // Tracer notes go where they happened in time.
    while (note < rank.notes.size() && rank.notes[note].t <= event.t_start) {
      out += fmt::format("   note t=+{}: {}\n", human_ns(static_cast<double>(rank.notes[note].t)), rank.notes[note].message);
      ++note;
    }
    out += printer.line(event);
    out += '\n';
    if (out.size() >= (1u << 16)) {  // large traces: keep the text buffer small
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  for (; note < rank.notes.size(); ++note) {
    out += fmt::format("   note t=+{}: {}\n", human_ns(static_cast<double>(rank.notes[note].t)), rank.notes[note].message);
  }
  if (rank.end) {
    const format::Termination& end = *rank.end;
    std::string kind;
    switch (end.kind) {
      case format::TerminationKind::finalized: kind = "finalized"; break;
      case format::TerminationKind::signal: kind = "killed by " + format::signal_name(end.signal); break;
      case format::TerminationKind::aborted: kind = "aborted"; break;
      case format::TerminationKind::tracer_stopped: kind = "tracer stopped"; break;
      case format::TerminationKind::exit_without_finalize: kind = "exited without MPI_Finalize"; break;
      case format::TerminationKind::unspecified: kind = "ended"; break;
    }
    out += fmt::format("== rank {} end t=+{}: {}{}, {} events written, last {}:{}{}\n", world_rank,
                       human_ns(static_cast<double>(end.t)), kind, end.message.empty() ? "" : " (" + end.message + ")",
                       end.events, world_rank, end.last_seq,
                       end.dropped ? fmt::format(", {} dropped", end.dropped) : std::string());
  } else {
    out += fmt::format("== rank {} end: no end record (the rank stopped without a word)\n", world_rank);
  }
}

}  // namespace

int run_dump(const DumpOptions& options) {
  const format::Trace trace = read_trace_or_throw(options.dir);
  if (options.rank) {
    const uint32_t r = *options.rank;
    if (r >= trace.ranks.size() || !trace.ranks[r].present) {
      throw Error(fmt::format("{}: rank {} is not in the trace ({} rank slots)", options.dir.string(), r,
                              trace.ranks.size()));
    }
  }
  for (const format::Problem& problem : trace.all_problems()) warn(problem.to_string());

  if (options.format == OutputFormat::json) {
    std::string json = format::to_json(trace, options.rank);
    if (json.empty() || json.back() != '\n') json += '\n';
    std::fwrite(json.data(), 1, json.size(), stdout);
    return k_exit_ok;
  }
  uint32_t world_size = trace.has_manifest ? trace.manifest.world_size : 0;
  if (world_size == 0) world_size = static_cast<uint32_t>(trace.ranks.size());
  for (uint32_t r = 0; r < trace.ranks.size(); ++r) {
    if (options.rank && *options.rank != r) continue;
    if (!trace.ranks[r].present) {
      std::fputs(fmt::format("== rank {} missing\n", r).c_str(), stdout);
      continue;
    }
    std::string out;
    print_rank(out, trace.ranks[r], r, world_size);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return k_exit_ok;
}

}  // namespace smtrace::cli
