// Field-by-field copies between generated messages and plain structs. Enum
// values outside the known range are kept as numbers (archived traces may
// hold values this build does not know).
#include "trace_format/proto_convert.hpp"

namespace smtrace::format::detail {
namespace {

template <class T, class R>
std::vector<T> vec(const R& repeated) {
  return std::vector<T>(repeated.begin(), repeated.end());
}

// Assign `repeated` to `out`, keeping its capacity (events are decoded
// into one reused struct while streaming).
template <class T, class R>
void assign(std::vector<T>& out, const R& repeated) {
  out.assign(repeated.begin(), repeated.end());
}

template <class V, class R>
void fill(const V& values, R* repeated) {
  repeated->Reserve(static_cast<int>(values.size()));
  for (auto v : values) repeated->Add(v);
}

Status to_plain(const v1::Status& p) {
  Status s;
  if (p.has_source()) s.source = p.source();
  if (p.has_tag()) s.tag = p.tag();
  if (p.has_count()) s.count = p.count();
  s.cancelled = p.cancelled();
  s.error = p.error();
  return s;
}

bool is_default(const Status& s) { return s == Status{}; }

void to_proto(const Status& s, v1::Status* p) {
  if (s.source) p->set_source(*s.source);
  if (s.tag) p->set_tag(*s.tag);
  if (s.count) p->set_count(*s.count);
  p->set_cancelled(s.cancelled);
  p->set_error(s.error);
}

}  // namespace

void to_plain(const v1::Event& p, Event& e) {
  e.seq = p.seq();
  e.call = static_cast<Call>(p.call());
  e.thread = p.thread();
  e.t_start = p.t_start();
  e.duration = p.duration();
  e.pending = p.pending();
  e.site = p.site();
  assign(e.stack, p.stack());
  e.repeat = p.repeat();
  e.rc = p.rc();
  e.comm = p.comm();
  e.peer = p.has_peer() ? std::optional<int32_t>(p.peer()) : std::nullopt;
  e.tag = p.has_tag() ? std::optional<int32_t>(p.tag()) : std::nullopt;
  e.buf = static_cast<uint64_t>(p.buf());
  e.count = p.count();
  e.datatype = p.datatype();
  e.recv_buf = static_cast<uint64_t>(p.recv_buf());
  e.recv_count = p.recv_count();
  e.recv_datatype = p.recv_datatype();
  assign(e.counts, p.counts());
  assign(e.displs, p.displs());
  assign(e.datatypes, p.datatypes());
  assign(e.recv_counts, p.recv_counts());
  assign(e.recv_displs, p.recv_displs());
  assign(e.recv_datatypes, p.recv_datatypes());
  e.recv_peer = p.has_recv_peer() ? std::optional<int32_t>(p.recv_peer()) : std::nullopt;
  e.recv_tag = p.has_recv_tag() ? std::optional<int32_t>(p.recv_tag()) : std::nullopt;
  e.op = p.op();
  e.in_place = p.in_place();
  e.request = p.request();
  assign(e.requests, p.requests());
  e.completed.clear();
  e.completed.reserve(static_cast<std::size_t>(p.completed_size()));
  for (const v1::CompletedRequest& c : p.completed()) {
    e.completed.push_back({c.index(), c.request(), to_plain(c.status())});
  }
  e.status = to_plain(p.status());
  e.flag = p.has_flag() ? std::optional<bool>(p.flag()) : std::nullopt;
  e.new_comm = p.new_comm();
  e.color = p.color();
  e.key = p.key();
  e.group = p.group();
  e.new_datatype = p.new_datatype();
  e.window = p.window();
  e.win_base = p.win_base();
  e.win_size = p.win_size();
  e.disp_unit = p.disp_unit();
  e.target_disp = p.target_disp();
  e.target_count = p.target_count();
  e.target_datatype = p.target_datatype();
  e.result_buf = static_cast<uint64_t>(p.result_buf());
  e.result_count = p.result_count();
  e.result_datatype = p.result_datatype();
  e.compare_buf = static_cast<uint64_t>(p.compare_buf());
  e.lock_type = static_cast<LockType>(p.lock_type());
  e.assert_flags = p.assert_flags();
  e.size = p.size();
  e.stride = p.stride();
  e.stream = p.stream();
  e.cuda_event = p.cuda_event();
  e.kernel = p.kernel();
  e.args.clear();
  e.args.reserve(static_cast<std::size_t>(p.args_size()));
  for (const v1::KernelArg& a : p.args()) {
    e.args.push_back({a.index(), a.addr(), a.size(), static_cast<ArgAccess>(a.access())});
  }
  e.memory = static_cast<MemoryKind>(p.memory());
  e.recv_memory = static_cast<MemoryKind>(p.recv_memory());
  e.copy_kind = static_cast<CopyKind>(p.copy_kind());
  e.flags = p.flags();
  e.message = p.message();
  e.peer_comm = p.peer_comm();
}

Event to_plain(const v1::Event& p) {
  Event e;
  to_plain(p, e);
  return e;
}

void to_proto(const Event& e, v1::Event* p) {
  p->set_seq(e.seq);
  p->set_call(static_cast<v1::Call>(e.call));
  p->set_thread(e.thread);
  p->set_t_start(e.t_start);
  p->set_duration(e.duration);
  p->set_pending(e.pending);
  p->set_site(e.site);
  fill(e.stack, p->mutable_stack());
  p->set_repeat(e.repeat);
  p->set_rc(e.rc);
  p->set_comm(e.comm);
  if (e.peer) p->set_peer(*e.peer);
  if (e.tag) p->set_tag(*e.tag);
  p->set_buf(static_cast<int64_t>(e.buf));
  p->set_count(e.count);
  p->set_datatype(e.datatype);
  p->set_recv_buf(static_cast<int64_t>(e.recv_buf));
  p->set_recv_count(e.recv_count);
  p->set_recv_datatype(e.recv_datatype);
  fill(e.counts, p->mutable_counts());
  fill(e.displs, p->mutable_displs());
  fill(e.datatypes, p->mutable_datatypes());
  fill(e.recv_counts, p->mutable_recv_counts());
  fill(e.recv_displs, p->mutable_recv_displs());
  fill(e.recv_datatypes, p->mutable_recv_datatypes());
  if (e.recv_peer) p->set_recv_peer(*e.recv_peer);
  if (e.recv_tag) p->set_recv_tag(*e.recv_tag);
  p->set_op(e.op);
  p->set_in_place(e.in_place);
  p->set_request(e.request);
  fill(e.requests, p->mutable_requests());
  for (const CompletedRequest& c : e.completed) {
    v1::CompletedRequest* pc = p->add_completed();
    pc->set_index(c.index);
    pc->set_request(c.request);
    if (!is_default(c.status)) to_proto(c.status, pc->mutable_status());
  }
  if (!is_default(e.status)) to_proto(e.status, p->mutable_status());
  if (e.flag) p->set_flag(*e.flag);
  p->set_new_comm(e.new_comm);
  p->set_color(e.color);
  p->set_key(e.key);
  p->set_group(e.group);
  p->set_new_datatype(e.new_datatype);
  p->set_window(e.window);
  p->set_win_base(e.win_base);
  p->set_win_size(e.win_size);
  p->set_disp_unit(e.disp_unit);
  p->set_target_disp(e.target_disp);
  p->set_target_count(e.target_count);
  p->set_target_datatype(e.target_datatype);
  p->set_result_buf(static_cast<int64_t>(e.result_buf));
  p->set_result_count(e.result_count);
  p->set_result_datatype(e.result_datatype);
  p->set_compare_buf(static_cast<int64_t>(e.compare_buf));
  p->set_lock_type(static_cast<v1::LockType>(e.lock_type));
  p->set_assert_flags(e.assert_flags);
  p->set_size(e.size);
  p->set_stride(e.stride);
  p->set_stream(e.stream);
  p->set_cuda_event(e.cuda_event);
  p->set_kernel(e.kernel);
  for (const KernelArg& a : e.args) {
    v1::KernelArg* pa = p->add_args();
    pa->set_index(a.index);
    pa->set_addr(a.addr);
    pa->set_size(a.size);
    pa->set_access(static_cast<v1::ArgAccess>(a.access));
  }
  p->set_memory(static_cast<v1::MemoryKind>(e.memory));
  p->set_recv_memory(static_cast<v1::MemoryKind>(e.recv_memory));
  p->set_copy_kind(static_cast<v1::CopyKind>(e.copy_kind));
  p->set_flags(e.flags);
  p->set_message(e.message);
  p->set_peer_comm(e.peer_comm);
}

CallSite to_plain(const v1::CallSite& p) {
  return {p.id(), p.module(), p.offset(), p.function(), p.file(), p.line(), p.column()};
}

void to_proto(const CallSite& s, v1::CallSite* p) {
  p->set_id(s.id);
  p->set_module(s.module);
  p->set_offset(s.offset);
  p->set_function(s.function);
  p->set_file(s.file);
  p->set_line(s.line);
  p->set_column(s.column);
}

Module to_plain(const v1::Module& p) { return {p.id(), p.path(), p.base(), p.build_id()}; }

void to_proto(const Module& m, v1::Module* p) {
  p->set_id(m.id);
  p->set_path(m.path);
  p->set_base(m.base);
  p->set_build_id(m.build_id);
}

CommDef to_plain(const v1::CommDef& p) {
  CommDef c;
  c.id = p.id();
  c.world_ranks = vec<uint32_t>(p.world_ranks());
  c.parent = p.parent();
  c.is_group = p.is_group();
  c.inter = p.inter();
  c.remote_world_ranks = vec<uint32_t>(p.remote_world_ranks());
  c.topology = static_cast<Topology>(p.topology());
  c.sources = vec<int32_t>(p.sources());
  c.destinations = vec<int32_t>(p.destinations());
  return c;
}

void to_proto(const CommDef& c, v1::CommDef* p) {
  p->set_id(c.id);
  fill(c.world_ranks, p->mutable_world_ranks());
  p->set_parent(c.parent);
  p->set_is_group(c.is_group);
  p->set_inter(c.inter);
  fill(c.remote_world_ranks, p->mutable_remote_world_ranks());
  p->set_topology(static_cast<v1::Topology>(c.topology));
  fill(c.sources, p->mutable_sources());
  fill(c.destinations, p->mutable_destinations());
}

DatatypeDef to_plain(const v1::DatatypeDef& p) {
  DatatypeDef t;
  t.id = p.id();
  t.combiner = static_cast<Call>(p.combiner());
  t.size = p.size();
  t.lb = p.lb();
  t.extent = p.extent();
  for (const v1::Run& r : p.runs()) {
    t.runs.push_back({r.offset(), r.length(), r.count() == 0 ? 1 : r.count(), r.stride()});
  }
  for (const v1::TypeCount& tc : p.signature()) {
    t.signature.push_back({static_cast<uint32_t>(tc.type()), tc.count()});
  }
  t.committed = p.committed();
  t.truncated = p.truncated();
  return t;
}

void to_proto(const DatatypeDef& t, v1::DatatypeDef* p) {
  p->set_id(t.id);
  p->set_combiner(static_cast<v1::Call>(t.combiner));
  p->set_size(t.size);
  p->set_lb(t.lb);
  p->set_extent(t.extent);
  for (const Run& r : t.runs) {
    v1::Run* pr = p->add_runs();
    pr->set_offset(r.offset);
    pr->set_length(r.length);
    pr->set_count(r.count == 1 ? 0 : r.count);
    pr->set_stride(r.stride);
  }
  for (const TypeCount& tc : t.signature) {
    v1::TypeCount* ptc = p->add_signature();
    ptc->set_type(static_cast<v1::BasicType>(tc.type));
    ptc->set_count(tc.count);
  }
  p->set_committed(t.committed);
  p->set_truncated(t.truncated);
}

Termination to_plain(const v1::Termination& p) {
  return {static_cast<TerminationKind>(p.kind()), p.signal(), p.t(), p.message(), p.last_seq(), p.events(),
          p.dropped(), p.accesses_lost()};
}

void to_proto(const Termination& t, v1::Termination* p) {
  p->set_kind(static_cast<v1::Termination_Kind>(t.kind));
  p->set_signal(t.signal);
  p->set_t(t.t);
  p->set_message(t.message);
  p->set_last_seq(t.last_seq);
  p->set_events(t.events);
  p->set_dropped(t.dropped);
  p->set_accesses_lost(t.accesses_lost);
}

TracerNote to_plain(const v1::TracerNote& p) { return {p.t(), p.message()}; }

void to_proto(const TracerNote& n, v1::TracerNote* p) {
  p->set_t(n.t);
  p->set_message(n.message);
}

RankHeader to_plain(const v1::RankHeader& p) {
  RankHeader h;
  h.format_version = p.format_version();
  h.rank = p.rank();
  h.world_size = p.world_size();
  h.host = p.host();
  h.pid = p.pid();
  h.mpi_library = p.mpi_library();
  h.mpi_version = p.mpi_version();
  h.clock = static_cast<ClockKind>(p.clock());
  h.clock_origin_ns = p.clock_origin_ns();
  h.realtime_origin_ns = p.realtime_origin_ns();
  h.tracer_version = p.tracer_version();
  h.options = std::map<std::string, std::string>(p.options().begin(), p.options().end());
  h.executable = p.executable();
  h.argv = vec<std::string>(p.argv());
  h.thread_level = p.thread_level();
  h.chunk_bytes = p.chunk_bytes();
  h.thread_sync = p.thread_sync();
  return h;
}

void to_proto(const RankHeader& h, v1::RankHeader* p) {
  p->set_format_version(h.format_version);
  p->set_rank(h.rank);
  p->set_world_size(h.world_size);
  p->set_host(h.host);
  p->set_pid(h.pid);
  p->set_mpi_library(h.mpi_library);
  p->set_mpi_version(h.mpi_version);
  p->set_clock(static_cast<v1::ClockKind>(h.clock));
  p->set_clock_origin_ns(h.clock_origin_ns);
  p->set_realtime_origin_ns(h.realtime_origin_ns);
  p->set_tracer_version(h.tracer_version);
  for (const auto& [key, value] : h.options) (*p->mutable_options())[key] = value;
  p->set_executable(h.executable);
  for (const std::string& arg : h.argv) p->add_argv(arg);
  p->set_thread_level(h.thread_level);
  p->set_chunk_bytes(h.chunk_bytes);
  p->set_thread_sync(h.thread_sync);
}

Manifest to_plain(const v1::Manifest& p) {
  Manifest m;
  m.format_version = p.format_version();
  m.world_size = p.world_size();
  m.rank_file_pattern = p.rank_file_pattern();
  m.created_utc = p.created_utc();
  m.command = p.command();
  m.tracer_version = p.tracer_version();
  m.mpi_library = p.mpi_library();
  m.job = p.job();
  return m;
}

void to_proto(const Manifest& m, v1::Manifest* p) {
  p->set_format_version(m.format_version);
  p->set_world_size(m.world_size);
  p->set_rank_file_pattern(m.rank_file_pattern);
  p->set_created_utc(m.created_utc);
  p->set_command(m.command);
  p->set_tracer_version(m.tracer_version);
  p->set_mpi_library(m.mpi_library);
  p->set_job(m.job);
}

}  // namespace smtrace::format::detail
