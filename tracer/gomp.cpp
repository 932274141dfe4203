// GCC's libgomp: interposers of the GOMP_* entry points GCC's code calls
// (libgomp has no OMPT), recording the OpenMP events of the thread family
// (docs/tracer.md "Threads" says what is and is not modelled).
//
// - Parallel regions (GOMP_parallel, the combined parallel loops and
//   sections, GOMP_parallel_reductions): the outlined function is wrapped,
//   so each member records omp_implicit_task_begin/end around it and the
//   encountering thread omp_parallel_begin/end around the region. The team
//   id is fresh per region.
// - Barriers: GOMP_barrier and the barriers libgomp takes inside the ends
//   of worksharing constructs (GOMP_loop_end, GOMP_sections_end, their
//   _cancel forms, GOMP_single_copy_start/end): omp_barrier, round `count`
//   counted per member since its implicit task began (every member passes
//   the same barriers in the same order).
// - Critical sections (unnamed: one lock; named: the name's lock),
//   GOMP_atomic_start/end (the lock of atomics libgomp cannot do without),
//   omp_set/unset/test(_nest)_lock, ordered (one lock per team):
//   omp_mutex_acquired/released.
// - Sections: each section that GOMP_sections_start/next hands out is
//   omp_section_begin .. omp_section_end, a logical thread of its own.
// - Explicit tasks are not observable in libgomp (the task body is called
//   by the runtime through a copy of its data): while recording, GOMP_task
//   and GOMP_taskloop run their tasks undeferred (if(0)), so each task runs
//   on its creating thread, in its program order, and never looks
//   concurrent with what followed it. Races between tasks are missed.
//
// Under libomp (which implements the GOMP_* entry points for GCC's code)
// OMPT reports all of this: the interposers pass through while the OMPT
// tool is on.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "tracer/handlers.hpp"
#include "tracer/threads.hpp"
#include "tracer/tracer.hpp"

namespace smtrace::tracer::gomp {

using format::Call;

namespace {

struct Region {
  void (*fn)(void*);
  void* data;
  uint64_t team;
  char ordered;  // its address: the team's ordered lock
};

// The innermost wrapped region this thread runs an implicit task of.
struct Member {
  Region* region = nullptr;
  int64_t barriers = 0;     // barriers passed in this implicit task
  bool in_section = false;  // a section handed out and not yet ended
};
thread_local Member t_member SMTRACE_FAST_TLS;

constexpr uint32_t k_source = format::thread_sync::libgomp;

char g_unnamed_critical;
char g_atomic_lock;

// The next definition of `name` (libgomp's, or libomp's compatibility one).
template <class Fn>
Fn next(const char* name, const char* version = nullptr) {
  void* p = version ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  return reinterpret_cast<Fn>(p ? p : dlsym(RTLD_NEXT, name));
}
#define SMTRACE_NEXT(name, ...) \
  static const auto real = ::smtrace::tracer::gomp::next<decltype(&::name)>(#name __VA_OPT__(, ) __VA_ARGS__)

bool on(uintptr_t site) noexcept { return !threads::ompt_on() && threads::recording() && !threads::from_runtime(site); }

void section_end(uintptr_t site) noexcept {
  if (!t_member.in_section) return;
  t_member.in_section = false;
  threads::record({Call::omp_section_end, t_member.region->team}, site, handlers::now(), k_source);
}

void section_begin(unsigned section, uintptr_t site) noexcept {
  if (!t_member.region || section == 0) return;
  t_member.in_section = true;
  threads::record({Call::omp_section_begin, t_member.region->team, 0, std::nullopt, section}, site, handlers::now(), k_source);
}

// The implicit task of each member of a wrapped region.
void implicit_task(void* p) {
  auto* region = static_cast<Region*>(p);
  const Member outer = t_member;
  t_member = {region, 0, false};
  const bool rec = threads::recording();
  const auto site = reinterpret_cast<uintptr_t>(region->fn);
  if (rec) threads::record({Call::omp_implicit_task_begin, region->team}, site, handlers::now(), k_source);
  region->fn(region->data);
  section_end(site);
  // Also writes this member's open load/store runs: a pool thread makes no
  // MPI call and does not exit before MPI_Finalize.
  if (rec) threads::record({Call::omp_implicit_task_end, region->team}, site, handlers::now(), k_source);
  t_member = outer;
}

// Run the region `start(implicit_task, &region)` starts, between
// omp_parallel_begin and omp_parallel_end, when recording.
template <class Start>
auto fork(void (*fn)(void*), void* data, uintptr_t site, Start&& start) {
  threads::second_thread();  // the team's threads are the program's
  if (!on(site)) return start(fn, data);
  Region region{fn, data, threads::next_object_id(), 0};
  threads::record({Call::omp_parallel_begin, region.team}, site, handlers::now(), k_source);
  struct End {
    Region& region;
    uintptr_t site;
    ~End() { threads::record({Call::omp_parallel_end, region.team}, site, handlers::now(), k_source); }
  } end{region, site};
  return start(implicit_task, &region);
}

// A barrier of the innermost wrapped region's team around `wait()`.
template <class Wait>
auto barrier(uintptr_t site, Wait&& wait) {
  if (!t_member.region || !on(site)) return wait();
  section_end(site);
  threads::Blocking b({Call::omp_barrier, t_member.region->team, 0, std::nullopt, t_member.barriers++}, site,
                      k_source);
  struct Done {
    threads::Blocking& b;
    ~Done() { b.done(0); }
  } done{b};
  return wait();
}

// A lock `object` taken (acquired: after `take()`, when it returned > 0,
// as the test functions do when they took it) or given back (released:
// before).
template <class Take>
int lock(Call call, uintptr_t object, uintptr_t site, Take&& take) {
  if (!on(site)) return take();
  if (call == Call::omp_mutex_released) threads::record({call, object}, site, handlers::now(), k_source);
  const int64_t t0 = handlers::now();
  const int rc = take();
  if (call == Call::omp_mutex_acquired && rc > 0) threads::record({call, object}, site, t0, k_source);
  return rc;
}

}  // namespace
}  // namespace smtrace::tracer::gomp

namespace gomp = smtrace::tracer::gomp;
using smtrace::format::Call;

#define SMTRACE_CALLER reinterpret_cast<uintptr_t>(__builtin_return_address(0))
#define SMTRACE_OBJECT(p) reinterpret_cast<uintptr_t>(p)

extern "C" {
// libgomp's entry points (libgomp_g.h; GCC 12).
void GOMP_parallel(void (*)(void*), void*, unsigned, unsigned);
unsigned GOMP_parallel_reductions(void (*)(void*), void*, unsigned, unsigned);
void GOMP_parallel_sections(void (*)(void*), void*, unsigned, unsigned, unsigned);
void GOMP_parallel_loop_static(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_dynamic(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_guided(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_nonmonotonic_guided(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_runtime(void (*)(void*), void*, unsigned, long, long, long, unsigned);
void GOMP_parallel_loop_nonmonotonic_runtime(void (*)(void*), void*, unsigned, long, long, long, unsigned);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*)(void*), void*, unsigned, long, long, long, unsigned);
void GOMP_barrier(void);
bool GOMP_barrier_cancel(void);
void GOMP_loop_end(void);
bool GOMP_loop_end_cancel(void);
unsigned GOMP_sections_start(unsigned);
unsigned GOMP_sections2_start(unsigned, uintptr_t*, void**);
unsigned GOMP_sections_next(void);
void GOMP_sections_end(void);
bool GOMP_sections_end_cancel(void);
void GOMP_sections_end_nowait(void);
void* GOMP_single_copy_start(void);
void GOMP_single_copy_end(void*);
void GOMP_critical_start(void);
void GOMP_critical_end(void);
void GOMP_critical_name_start(void**);
void GOMP_critical_name_end(void**);
void GOMP_atomic_start(void);
void GOMP_atomic_end(void);
void GOMP_ordered_start(void);
void GOMP_ordered_end(void);
void GOMP_task(void (*)(void*), void*, void (*)(void*, void*), long, long, bool, unsigned, void**, int, void*);
void GOMP_taskloop(void (*)(void*), void*, void (*)(void*, void*), long, long, unsigned, unsigned long, int, long,
                   long, long);
void GOMP_taskloop_ull(void (*)(void*), void*, void (*)(void*, void*), long, long, unsigned, unsigned long, int,
                       unsigned long long, unsigned long long, unsigned long long);
// omp.h's locks, as opaque pointers (libgomp's OMP_3.0 layout is behind them).
void omp_set_lock(void*);
void omp_unset_lock(void*);
int omp_test_lock(void*);
void omp_set_nest_lock(void*);
void omp_unset_nest_lock(void*);
int omp_test_nest_lock(void*);

SMTRACE_EXPORT void GOMP_parallel(void (*fn)(void*), void* data, unsigned n, unsigned flags) {
  SMTRACE_NEXT(GOMP_parallel);
  gomp::fork(fn, data, SMTRACE_CALLER, [&](void (*f)(void*), void* d) { real(f, d, n, flags); });
}
SMTRACE_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned n, unsigned flags) {
  SMTRACE_NEXT(GOMP_parallel_reductions);
  return gomp::fork(fn, data, SMTRACE_CALLER, [&](void (*f)(void*), void* d) { return real(f, d, n, flags); });
}
SMTRACE_EXPORT void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned n, unsigned count, unsigned flags) {
  SMTRACE_NEXT(GOMP_parallel_sections);
  gomp::fork(fn, data, SMTRACE_CALLER, [&](void (*f)(void*), void* d) { real(f, d, n, count, flags); });
}
#define SMTRACE_PARALLEL_LOOP(name)                                                                          \
  SMTRACE_EXPORT void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, long chunk, \
                           unsigned flags) {                                                                 \
    SMTRACE_NEXT(name);                                                                                      \
    gomp::fork(fn, data, SMTRACE_CALLER,                                                                     \
               [&](void (*f)(void*), void* d) { real(f, d, n, start, end, incr, chunk, flags); });           \
  }
SMTRACE_PARALLEL_LOOP(GOMP_parallel_loop_static)
SMTRACE_PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
SMTRACE_PARALLEL_LOOP(GOMP_parallel_loop_guided)
SMTRACE_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
SMTRACE_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
#undef SMTRACE_PARALLEL_LOOP
#define SMTRACE_PARALLEL_LOOP_RUNTIME(name)                                                                  \
  SMTRACE_EXPORT void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr,       \
                           unsigned flags) {                                                                 \
    SMTRACE_NEXT(name);                                                                                      \
    gomp::fork(fn, data, SMTRACE_CALLER, [&](void (*f)(void*), void* d) { real(f, d, n, start, end, incr, flags); }); \
  }
SMTRACE_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
SMTRACE_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
SMTRACE_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)
#undef SMTRACE_PARALLEL_LOOP_RUNTIME

SMTRACE_EXPORT void GOMP_barrier(void) {
  SMTRACE_NEXT(GOMP_barrier);
  gomp::barrier(SMTRACE_CALLER, [&] { real(); });
}
SMTRACE_EXPORT bool GOMP_barrier_cancel(void) {
  SMTRACE_NEXT(GOMP_barrier_cancel);
  return gomp::barrier(SMTRACE_CALLER, [&] { return real(); });
}
SMTRACE_EXPORT void GOMP_loop_end(void) {
  SMTRACE_NEXT(GOMP_loop_end);
  gomp::barrier(SMTRACE_CALLER, [&] { real(); });
}
SMTRACE_EXPORT bool GOMP_loop_end_cancel(void) {
  SMTRACE_NEXT(GOMP_loop_end_cancel);
  return gomp::barrier(SMTRACE_CALLER, [&] { return real(); });
}

SMTRACE_EXPORT unsigned GOMP_sections_start(unsigned count) {
  SMTRACE_NEXT(GOMP_sections_start);
  const unsigned section = real(count);
  if (gomp::on(SMTRACE_CALLER)) gomp::section_begin(section, SMTRACE_CALLER);
  return section;
}
SMTRACE_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t* reductions, void** mem) {
  SMTRACE_NEXT(GOMP_sections2_start);
  const unsigned section = real(count, reductions, mem);
  if (gomp::on(SMTRACE_CALLER)) gomp::section_begin(section, SMTRACE_CALLER);
  return section;
}
SMTRACE_EXPORT unsigned GOMP_sections_next(void) {
  SMTRACE_NEXT(GOMP_sections_next);
  const bool rec = gomp::on(SMTRACE_CALLER);
  if (rec) gomp::section_end(SMTRACE_CALLER);
  const unsigned section = real();
  if (rec) gomp::section_begin(section, SMTRACE_CALLER);
  return section;
}
SMTRACE_EXPORT void GOMP_sections_end(void) {
  SMTRACE_NEXT(GOMP_sections_end);
  gomp::barrier(SMTRACE_CALLER, [&] { real(); });
}
SMTRACE_EXPORT bool GOMP_sections_end_cancel(void) {
  SMTRACE_NEXT(GOMP_sections_end_cancel);
  return gomp::barrier(SMTRACE_CALLER, [&] { return real(); });
}
SMTRACE_EXPORT void GOMP_sections_end_nowait(void) {
  SMTRACE_NEXT(GOMP_sections_end_nowait);
  if (gomp::on(SMTRACE_CALLER)) gomp::section_end(SMTRACE_CALLER);
  real();
}

// single copyprivate: the member that ran the single block passes the
// barrier in GOMP_single_copy_end, the others in GOMP_single_copy_start
// (which then returns the copied data, never null).
SMTRACE_EXPORT void* GOMP_single_copy_start(void) {
  SMTRACE_NEXT(GOMP_single_copy_start);
  const uintptr_t site = SMTRACE_CALLER;
  if (!gomp::t_member.region || !gomp::on(site)) return real();
  const int64_t t0 = smtrace::tracer::handlers::now();
  void* data = real();
  if (data) {
    // A barrier whose entry could not be written before it: the entry
    // takes the time it was entered at.
    smtrace::tracer::threads::record(
        {Call::omp_barrier, gomp::t_member.region->team, 0, std::nullopt, gomp::t_member.barriers++}, site, t0, gomp::k_source);
  }
  return data;
}
SMTRACE_EXPORT void GOMP_single_copy_end(void* data) {
  SMTRACE_NEXT(GOMP_single_copy_end);
  gomp::barrier(SMTRACE_CALLER, [&] { real(data); });
}

SMTRACE_EXPORT void GOMP_critical_start(void) {
  SMTRACE_NEXT(GOMP_critical_start);
  gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(&gomp::g_unnamed_critical), SMTRACE_CALLER, [&] { real(); return 1; });
}
SMTRACE_EXPORT void GOMP_critical_end(void) {
  SMTRACE_NEXT(GOMP_critical_end);
  gomp::lock(Call::omp_mutex_released, SMTRACE_OBJECT(&gomp::g_unnamed_critical), SMTRACE_CALLER, [&] { real(); return 1; });
}
SMTRACE_EXPORT void GOMP_critical_name_start(void** name) {
  SMTRACE_NEXT(GOMP_critical_name_start);
  gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(name), SMTRACE_CALLER, [&] { real(name); return 1; });
}
SMTRACE_EXPORT void GOMP_critical_name_end(void** name) {
  SMTRACE_NEXT(GOMP_critical_name_end);
  gomp::lock(Call::omp_mutex_released, SMTRACE_OBJECT(name), SMTRACE_CALLER, [&] { real(name); return 1; });
}
SMTRACE_EXPORT void GOMP_atomic_start(void) {
  SMTRACE_NEXT(GOMP_atomic_start);
  gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(&gomp::g_atomic_lock), SMTRACE_CALLER, [&] { real(); return 1; });
}
SMTRACE_EXPORT void GOMP_atomic_end(void) {
  SMTRACE_NEXT(GOMP_atomic_end);
  gomp::lock(Call::omp_mutex_released, SMTRACE_OBJECT(&gomp::g_atomic_lock), SMTRACE_CALLER, [&] { real(); return 1; });
}
SMTRACE_EXPORT void GOMP_ordered_start(void) {
  SMTRACE_NEXT(GOMP_ordered_start);
  if (!gomp::t_member.region) return real();
  gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(&gomp::t_member.region->ordered), SMTRACE_CALLER,
             [&] { real(); return 1; });
}
SMTRACE_EXPORT void GOMP_ordered_end(void) {
  SMTRACE_NEXT(GOMP_ordered_end);
  if (!gomp::t_member.region) return real();
  gomp::lock(Call::omp_mutex_released, SMTRACE_OBJECT(&gomp::t_member.region->ordered), SMTRACE_CALLER,
             [&] { real(); return 1; });
}

// Tasks run undeferred while recording (the header comment says why); a
// task with a detach clause completes only when its event is fulfilled,
// which may need the code after it: it is left as it is.
SMTRACE_EXPORT void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                              long arg_align, bool if_clause, unsigned flags, void** depend, int priority,
                              void* detach) {
  SMTRACE_NEXT(GOMP_task);
  if (!detach && gomp::on(SMTRACE_CALLER)) if_clause = false;
  real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
}
constexpr unsigned k_task_flag_if = 1u << 10;  // GOMP_TASK_FLAG_IF: the tasks may be deferred
SMTRACE_EXPORT void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                  long arg_align, unsigned flags, unsigned long num_tasks, int priority, long start,
                                  long end, long step) {
  SMTRACE_NEXT(GOMP_taskloop);
  if (gomp::on(SMTRACE_CALLER)) flags &= ~k_task_flag_if;
  real(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}
SMTRACE_EXPORT void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                      long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                                      unsigned long long start, unsigned long long end, unsigned long long step) {
  SMTRACE_NEXT(GOMP_taskloop_ull);
  if (gomp::on(SMTRACE_CALLER)) flags &= ~k_task_flag_if;
  real(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}

// omp.h's locks. libgomp has two versions of each (OMP_1.0, OMP_3.0: the
// lock layout changed); GCC's code binds to OMP_3.0. libomp has one.
SMTRACE_EXPORT void omp_set_lock(void* l) {
  SMTRACE_NEXT(omp_set_lock, "OMP_3.0");
  gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(l), SMTRACE_CALLER, [&] { real(l); return 1; });
}
SMTRACE_EXPORT void omp_unset_lock(void* l) {
  SMTRACE_NEXT(omp_unset_lock, "OMP_3.0");
  gomp::lock(Call::omp_mutex_released, SMTRACE_OBJECT(l), SMTRACE_CALLER, [&] { real(l); return 1; });
}
SMTRACE_EXPORT int omp_test_lock(void* l) {
  SMTRACE_NEXT(omp_test_lock, "OMP_3.0");
  return gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(l), SMTRACE_CALLER, [&] { return real(l); });
}
SMTRACE_EXPORT void omp_set_nest_lock(void* l) {
  SMTRACE_NEXT(omp_set_nest_lock, "OMP_3.0");
  gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(l), SMTRACE_CALLER, [&] { real(l); return 1; });
}
SMTRACE_EXPORT void omp_unset_nest_lock(void* l) {
  SMTRACE_NEXT(omp_unset_nest_lock, "OMP_3.0");
  gomp::lock(Call::omp_mutex_released, SMTRACE_OBJECT(l), SMTRACE_CALLER, [&] { real(l); return 1; });
}
SMTRACE_EXPORT int omp_test_nest_lock(void* l) {
  SMTRACE_NEXT(omp_test_nest_lock, "OMP_3.0");
  return gomp::lock(Call::omp_mutex_acquired, SMTRACE_OBJECT(l), SMTRACE_CALLER, [&] { return real(l); });
}

}  // extern "C"
