// OMPT: the OpenMP tool interface (OpenMP 5.x, chapter "OMPT"), for runtimes
// that start a tool (LLVM's libomp: clang -fopenmp). libsmtrace.so exports
// ompt_start_tool; the runtime finds it at its initialization and calls
// initialize, which registers the callbacks below. They record the OpenMP
// events of the thread family (docs/tracer.md "Threads"):
//   parallel_begin/end        omp_parallel_begin/end (buf: team)
//   implicit_task             omp_implicit_task_begin/end (buf: team)
//   sync_region (barriers)    omp_barrier (buf: team, count: round)
//   sync_region (taskwait)    omp_taskwait (buf: the waiting task)
//   sync_region (taskgroup)   omp_taskgroup_end (buf: the task)
//   task_create, dependences  omp_task_create (buf: task, recv_buf: parent,
//                             count: team, displs/counts: dependences)
//   task_schedule             omp_task_begin (first start), omp_task_end (completion)
//   mutex_acquired/released   omp_mutex_acquired/released (buf: the wait id:
//                             locks, critical, ordered, atomic)
//   dispatch (sections)       omp_section_begin/end, where the runtime offers it
// The OMPT declarations are written here from the specification: the
// interface is a C ABI, and omp-tools.h is not on GCC's include path.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tracer/handlers.hpp"
#include "tracer/options.hpp"
#include "tracer/threads.hpp"
#include "tracer/tracer.hpp"
#include "trace_format/call_semantics.hpp"

extern "C" {
// OpenMP 5.1, section 19.2 and 19.5: the types this tool uses.
typedef union ompt_data_t {
  uint64_t value;
  void* ptr;
} ompt_data_t;
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char*);
typedef void (*ompt_callback_t)(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t* tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t* tool_data);
typedef struct ompt_start_tool_result_t {
  ompt_initialize_t initialize;
  ompt_finalize_t finalize;
  ompt_data_t tool_data;
} ompt_start_tool_result_t;
typedef struct ompt_dependence_t {
  ompt_data_t variable;
  int dependence_type;
} ompt_dependence_t;
}

namespace smtrace::tracer::ompt {

using format::Call;

namespace {

// ompt_callbacks_t values.
enum : int {
  k_parallel_begin = 3,
  k_parallel_end = 4,
  k_task_create = 5,
  k_task_schedule = 6,
  k_implicit_task = 7,
  k_mutex_released = 17,
  k_dependences = 18,
  k_work = 20,
  k_sync_region = 23,
  k_mutex_acquired = 27,
  k_dispatch = 32,
};
// ompt_set_result_t: at or above this the callback is delivered.
constexpr int k_set_sometimes = 3;
// ompt_scope_endpoint_t
enum : int { k_scope_begin = 1, k_scope_end = 2, k_scope_beginend = 3 };
// ompt_task_flag_t
constexpr int k_task_initial = 0x1;
constexpr int k_task_explicit = 0x4;
// ompt_task_status_t
enum : int { k_task_complete = 1, k_task_cancel = 3, k_task_detach = 4, k_task_late_fulfill = 6 };
// ompt_sync_region_t
enum : int {
  k_sync_barrier = 1,
  k_sync_barrier_implicit = 2,
  k_sync_barrier_explicit = 3,
  k_sync_barrier_implementation = 4,
  k_sync_taskwait = 5,
  k_sync_taskgroup = 6,
  k_sync_reduction = 7,
  k_sync_barrier_implicit_workshare = 8,
  k_sync_barrier_implicit_parallel = 9,
  k_sync_barrier_teams = 10,
};
// ompt_work_t, ompt_dispatch_t
constexpr int k_work_sections = 3;
constexpr int k_dispatch_section = 3;

// Task ids: explicit tasks have the top bit, so task_schedule tells them
// from implicit ones; each id is fresh (threads::next_object_id()).
constexpr uint64_t k_explicit = 1ull << 63;
constexpr uint64_t k_started = 1ull << 62;  // task_schedule saw it start

// What one thread is in: its implicit tasks (a stack: nested regions) and
// the sync regions entered and not yet left.
struct Implicit {
  uint64_t team;
  uint64_t task;
  unsigned index;     // the thread's number in the team
  int64_t barriers;
  bool in_section;
  bool ended;         // its end was written at the join barrier
};
struct Waiting {
  int kind;
  int64_t t0;
  int64_t round;
};
struct ThreadState {
  std::vector<Implicit> implicit;
  std::vector<Waiting> waiting;
  // A task_create with dependences: written at the dependences callback.
  bool create_pending = false;
  threads::Sync create{format::Call::omp_task_create};
  uintptr_t create_site = 0;
};
thread_local ThreadState t_state;

constexpr uint32_t k_source = format::thread_sync::ompt;

bool on() noexcept { return threads::recording(); }

Implicit* current() noexcept { return t_state.implicit.empty() ? nullptr : &t_state.implicit.back(); }

uint64_t task_id(const ompt_data_t* task) noexcept { return task ? task->value & ~(k_explicit | k_started) : 0; }

void on_parallel_begin(ompt_data_t*, const void*, ompt_data_t* parallel, unsigned, int, const void* site) {
  threads::second_thread();
  parallel->value = threads::next_object_id();
  if (on()) threads::record({Call::omp_parallel_begin, parallel->value}, reinterpret_cast<uintptr_t>(site), handlers::now(), k_source);
}

void on_parallel_end(ompt_data_t* parallel, ompt_data_t*, int, const void* site) {
  if (on() && parallel->value)
    threads::record({Call::omp_parallel_end, parallel->value}, reinterpret_cast<uintptr_t>(site), handlers::now(), k_source);
}

void implicit_end(Implicit& member) {
  if (member.ended) return;
  member.ended = true;
  // Also writes this member's open load/store runs (a pool thread makes
  // no MPI call and does not exit before MPI_Finalize).
  if (on() && member.team) threads::record({Call::omp_implicit_task_end, member.team}, 0, handlers::now(), k_source);
}

void on_implicit_task(int endpoint, ompt_data_t* parallel, ompt_data_t* task, unsigned, unsigned index, int flags) {
  if (flags & k_task_initial) return;  // the initial thread's task: no region
  if (endpoint == k_scope_begin) {
    task->value = threads::next_object_id();
    const uint64_t team = parallel ? parallel->value : 0;
    t_state.implicit.push_back({team, task->value, index, 0, false, false});
    if (on() && team) threads::record({Call::omp_implicit_task_begin, team}, 0, handlers::now(), k_source);
  } else if (endpoint == k_scope_end) {
    if (t_state.implicit.empty()) return;
    implicit_end(t_state.implicit.back());
    t_state.implicit.pop_back();
  }
}

void section_end(uintptr_t site) {
  Implicit* member = current();
  if (!member || !member->in_section) return;
  member->in_section = false;
  if (on()) threads::record({Call::omp_section_end, member->team}, site, handlers::now(), k_source);
}

bool is_barrier(int kind) {
  switch (kind) {
    case k_sync_barrier: case k_sync_barrier_implicit: case k_sync_barrier_explicit:
    case k_sync_barrier_implementation: case k_sync_barrier_implicit_workshare:
    case k_sync_barrier_implicit_parallel:
      return true;
    default:
      return false;
  }
}

void on_sync_region(int kind, int endpoint, ompt_data_t*, ompt_data_t* task, const void* site) {
  const auto at = reinterpret_cast<uintptr_t>(site);
  const bool barrier = is_barrier(kind);
  if (!barrier && kind != k_sync_taskwait && kind != k_sync_taskgroup) return;
  Implicit* member = current();
  if (endpoint == k_scope_begin) {
    if (barrier) section_end(at);
    // A worker's join barrier (the implicit barrier that ends the region;
    // the runtime passes no code address for it): the runtime reports its
    // end, and the implicit task's, only when the worker is woken for the
    // next region, if ever. The worker's part in the region ends on
    // arrival: its implicit task's end is written now.
    if (barrier && !site && member && member->index != 0 &&
        (kind == k_sync_barrier || kind == k_sync_barrier_implicit || kind == k_sync_barrier_implicit_parallel)) {
      implicit_end(*member);
      t_state.waiting.push_back({-1, 0, 0});
      return;
    }
    // Counted whether recorded or not: every member counts the same barriers.
    const int64_t round = barrier && member ? member->barriers++ : 0;
    t_state.waiting.push_back({kind, handlers::now(), round});
    return;
  }
  if (endpoint != k_scope_end || t_state.waiting.empty()) return;
  const Waiting w = t_state.waiting.back();
  t_state.waiting.pop_back();
  if (!on() || w.kind < 0) return;
  if (barrier) {
    if (member && member->team)
      threads::record({Call::omp_barrier, member->team, 0, std::nullopt, w.round}, at, w.t0, k_source);
  } else {
    const Call call = kind == k_sync_taskwait ? Call::omp_taskwait : Call::omp_taskgroup_end;
    threads::record({call, task_id(task)}, at, w.t0, k_source);
  }
}

void on_task_create(ompt_data_t* parent, const void*, ompt_data_t* task, int flags, int has_dependences,
                    const void* site) {
  if (!(flags & k_task_explicit)) return;
  task->value = threads::next_object_id() | k_explicit;
  Implicit* member = current();
  threads::Sync create{Call::omp_task_create, task_id(task), task_id(parent), std::nullopt,
                       member ? static_cast<int64_t>(member->team) : 0};
  if (has_dependences) {
    t_state.create_pending = true;
    t_state.create = create;
    t_state.create_site = reinterpret_cast<uintptr_t>(site);
    return;
  }
  if (on()) threads::record(create, reinterpret_cast<uintptr_t>(site), handlers::now(), k_source);
}

format::ThreadDependence dependence_kind(int type) {
  switch (type) {
    case 1: return format::ThreadDependence::in;
    case 2: return format::ThreadDependence::out;
    case 3: return format::ThreadDependence::inout;
    case 4: return format::ThreadDependence::mutexinoutset;
    case 7: return format::ThreadDependence::inoutset;
    default: return format::ThreadDependence::none;  // source, sink (doacross): not task dependences
  }
}

void on_dependences(ompt_data_t*, const ompt_dependence_t* deps, int n) {
  if (!t_state.create_pending) return;
  t_state.create_pending = false;
  if (!on()) return;
  threads::Sync& create = t_state.create;
  create.displs.clear();
  create.counts.clear();
  for (int i = 0; i < n; ++i) {
    const format::ThreadDependence kind = dependence_kind(deps[i].dependence_type);
    if (kind == format::ThreadDependence::none) continue;
    create.displs.push_back(static_cast<int64_t>(deps[i].variable.value));
    create.counts.push_back(static_cast<int64_t>(kind));
  }
  threads::record(create, t_state.create_site, handlers::now(), k_source);
}

void on_task_schedule(ompt_data_t* prior, int status, ompt_data_t* next) {
  if (!on()) return;
  if (prior && (prior->value & k_explicit) &&
      (status == k_task_complete || status == k_task_cancel || status == k_task_late_fulfill))
    threads::record({Call::omp_task_end, task_id(prior)}, 0, handlers::now(), k_source);
  if (next && (next->value & k_explicit) && !(next->value & k_started)) {
    next->value |= k_started;
    threads::record({Call::omp_task_begin, task_id(next)}, 0, handlers::now(), k_source);
  }
}

void on_mutex_acquired(int, uint64_t wait_id, const void* site) {
  if (on()) threads::record({Call::omp_mutex_acquired, wait_id}, reinterpret_cast<uintptr_t>(site), handlers::now(), k_source);
}

void on_mutex_released(int, uint64_t wait_id, const void* site) {
  if (on()) threads::record({Call::omp_mutex_released, wait_id}, reinterpret_cast<uintptr_t>(site), handlers::now(), k_source);
}

void on_work(int type, int endpoint, ompt_data_t*, ompt_data_t*, uint64_t, const void* site) {
  if (type == k_work_sections && endpoint == k_scope_end) section_end(reinterpret_cast<uintptr_t>(site));
}

void on_dispatch(ompt_data_t*, ompt_data_t*, int kind, ompt_data_t instance) {
  if (kind != k_dispatch_section) return;
  Implicit* member = current();
  if (!member) return;
  const auto site = reinterpret_cast<uintptr_t>(instance.ptr);
  section_end(site);
  member->in_section = true;
  if (on()) threads::record({Call::omp_section_begin, member->team}, site, handlers::now(), k_source);
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set) return 0;
  auto reg = [&](int event, auto fn) { return set(event, reinterpret_cast<ompt_callback_t>(fn)); };
  // The model needs regions, implicit tasks and barriers: without them the
  // tool stays off and the GOMP_* interposers (gomp.cpp) are all there is.
  if (reg(k_parallel_begin, on_parallel_begin) < k_set_sometimes ||
      reg(k_parallel_end, on_parallel_end) < k_set_sometimes ||
      reg(k_implicit_task, on_implicit_task) < k_set_sometimes ||
      reg(k_sync_region, on_sync_region) < k_set_sometimes)
    return 0;
  reg(k_task_create, on_task_create);
  reg(k_task_schedule, on_task_schedule);
  reg(k_dependences, on_dependences);
  reg(k_mutex_acquired, on_mutex_acquired);
  reg(k_mutex_released, on_mutex_released);
  reg(k_work, on_work);
  reg(k_dispatch, on_dispatch);
  threads::set_ompt_on(true);
  return 1;  // nonzero: keep the tool
}

void finalize(ompt_data_t*) { threads::set_ompt_on(false); }

ompt_start_tool_result_t g_tool = {initialize, finalize, {0}};

}  // namespace
}  // namespace smtrace::tracer::ompt

// The OpenMP runtime calls this at its initialization (OMP_TOOL=disabled
// stops it); SMTRACE_THREADS=off or a disabled tracer declines.
// (The tracer's options are read at MPI_Init, usually later: the variables
// are read here.)
extern "C" SMTRACE_EXPORT ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
  const smtrace::tracer::Options options =
      smtrace::tracer::parse_options([](const char* name) { return std::getenv(name); });
  if (options.disable || options.threads == smtrace::tracer::ThreadTracking::off ||
      !options.records(smtrace::format::Family::thread))
    return nullptr;
  return &smtrace::tracer::ompt::g_tool;
}
