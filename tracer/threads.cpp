// pthreads: the interposers of thread creation, join and exit, mutexes,
// reader-writer locks, spin locks, condition variables, barriers and
// semaphores (libsmtrace.so is preloaded, so the program's calls reach these
// first; each calls the next definition, glibc's, through dlsym(RTLD_NEXT)),
// and what gomp.cpp and ompt.cpp share (threads.hpp).
//
// Cost: while nothing is recorded (one thread, tracing off, SMTRACE_THREADS
// off, inside MPI) an interposed call costs two loads and a branch more.
// pthread_create always goes through a trampoline (one malloc per thread):
// a thread has to know whether MPI started it and which tracer id its
// creator gave it.
#include "tracer/threads.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tracer/handlers.hpp"
#include "tracer/tables.hpp"
#include "tracer/tracer.hpp"

namespace smtrace::tracer::threads {

using format::Call;

namespace {

std::atomic<bool> g_multi{false};
std::atomic<bool> g_ompt{false};
std::atomic<uint64_t> g_next_object{1};
// A thread MPI started (in MPI_Init or inside an MPI call): none of its
// synchronization is the program's.
thread_local bool t_internal SMTRACE_FAST_TLS = false;
// Writing a thread event now: calls made meanwhile are the tracer's.
thread_local bool t_inside SMTRACE_FAST_TLS = false;

struct Inside {
  Inside() noexcept { t_inside = true; }
  ~Inside() { t_inside = false; }
};

// --- the libraries whose own synchronization is not the program's ---------

struct Module {
  uintptr_t lo, hi;
  bool runtime;
};
struct ModuleTable {
  std::size_t n = 0;
  Module modules[512];
};
std::atomic<const ModuleTable*> g_modules{nullptr};
std::atomic<uint64_t> g_module_misses{0};
SpinLock g_module_lock;

// MPI implementations and their dependencies, and the OpenMP runtimes.
bool runtime_name(const char* path) {
  static constexpr const char* k_names[] = {"libmpi", "libopen-pal", "libopen-rte", "libpmix", "libevent", "libhwloc",
                                            "libucp", "libucs", "libuct", "libfabric", "libpsm", "mca_", "libompitrace",
                                            "libgomp", "libomp", "libiomp", "libmlx", "libibverbs", "librdmacm",
                                            "libsmtrace"};
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* name : k_names)
    if (std::strncmp(base, name, std::strlen(name)) == 0) return true;
  return false;
}

int add_module(dl_phdr_info* info, size_t, void* data) {
  auto* table = static_cast<ModuleTable*>(data);
  for (int i = 0; i < info->dlpi_phnum && table->n < std::size(table->modules); ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    table->modules[table->n++] = {lo, lo + ph.p_memsz, info->dlpi_name && runtime_name(info->dlpi_name)};
  }
  return 0;
}

// Read the loaded modules again (a library dlopen'ed since); the old table
// is kept (a reader may still scan it): a few KiB per rebuild, rebuilds are
// rare (misses, power-of-two spaced).
void rebuild_modules() {
  SpinGuard<SpinLock> guard(g_module_lock);
  auto* table = new (std::nothrow) ModuleTable;
  if (!table) return;
  dl_iterate_phdr(add_module, table);
  g_modules.store(table, std::memory_order_release);
}

const Module* find_module(const ModuleTable* table, uintptr_t address) {
  if (!table) return nullptr;
  for (std::size_t i = 0; i < table->n; ++i)
    if (address >= table->modules[i].lo && address < table->modules[i].hi) return &table->modules[i];
  return nullptr;
}

// --- pthread_t -> tracer thread id ---------------------------------------

constexpr std::size_t k_id_slots = 4096;
struct IdSlot {
  pthread_t thread;
  uint32_t id;
  bool used;
};
IdSlot g_ids[k_id_slots];
SpinLock g_ids_lock;

std::size_t id_hash(pthread_t t) { return (static_cast<std::size_t>(t) >> 6) * 0x9e3779b97f4a7c15ull >> 52; }

void remember_id(pthread_t t, uint32_t id) {
  SpinGuard<SpinLock> guard(g_ids_lock);
  for (std::size_t i = 0, h = id_hash(t); i < k_id_slots; ++i) {
    IdSlot& s = g_ids[(h + i) % k_id_slots];
    if (!s.used || pthread_equal(s.thread, t)) {
      s = {t, id, true};
      return;
    }
  }
}

std::optional<int32_t> id_of(pthread_t t) {
  SpinGuard<SpinLock> guard(g_ids_lock);
  for (std::size_t i = 0, h = id_hash(t); i < k_id_slots; ++i) {
    const IdSlot& s = g_ids[(h + i) % k_id_slots];
    if (!s.used) break;
    if (pthread_equal(s.thread, t)) return static_cast<int32_t>(s.id);
  }
  return std::nullopt;
}

// --- pthread_barrier_t -> participants and arrivals -----------------------

constexpr std::size_t k_barrier_slots = 1024;
struct BarrierSlot {
  uintptr_t address;
  uint32_t members;
  uint64_t arrivals;
};
BarrierSlot g_barriers[k_barrier_slots];
SpinLock g_barriers_lock;

BarrierSlot* barrier_slot(uintptr_t address, bool create) {
  for (std::size_t i = 0, h = (address >> 4) % k_barrier_slots; i < k_barrier_slots; ++i) {
    BarrierSlot& s = g_barriers[(h + i) % k_barrier_slots];
    if (s.address == address) return &s;
    if (s.address == 0) {
      if (!create) return nullptr;
      s = {address, 0, 0};
      return &s;
    }
  }
  return nullptr;
}

// --- the next definitions ---------------------------------------------------

#define SMTRACE_PTHREAD_REAL(X)                                                                          \
  X(pthread_create, int, pthread_t*, const pthread_attr_t*, void* (*)(void*), void*)                    \
  X(pthread_join, int, pthread_t, void**)                                                               \
  X(pthread_timedjoin_np, int, pthread_t, void**, const struct timespec*)                              \
  X(pthread_tryjoin_np, int, pthread_t, void**)                                                         \
  X(pthread_exit, void, void*)                                                                          \
  X(pthread_mutex_lock, int, pthread_mutex_t*)                                                          \
  X(pthread_mutex_trylock, int, pthread_mutex_t*)                                                       \
  X(pthread_mutex_timedlock, int, pthread_mutex_t*, const struct timespec*)                             \
  X(pthread_mutex_unlock, int, pthread_mutex_t*)                                                        \
  X(pthread_rwlock_rdlock, int, pthread_rwlock_t*)                                                      \
  X(pthread_rwlock_tryrdlock, int, pthread_rwlock_t*)                                                   \
  X(pthread_rwlock_timedrdlock, int, pthread_rwlock_t*, const struct timespec*)                         \
  X(pthread_rwlock_wrlock, int, pthread_rwlock_t*)                                                      \
  X(pthread_rwlock_trywrlock, int, pthread_rwlock_t*)                                                   \
  X(pthread_rwlock_timedwrlock, int, pthread_rwlock_t*, const struct timespec*)                         \
  X(pthread_rwlock_unlock, int, pthread_rwlock_t*)                                                      \
  X(pthread_spin_lock, int, pthread_spinlock_t*)                                                        \
  X(pthread_spin_trylock, int, pthread_spinlock_t*)                                                     \
  X(pthread_spin_unlock, int, pthread_spinlock_t*)                                                      \
  X(pthread_barrier_init, int, pthread_barrier_t*, const pthread_barrierattr_t*, unsigned)              \
  X(pthread_barrier_wait, int, pthread_barrier_t*)                                                      \
  X(sem_post, int, sem_t*)                                                                              \
  X(sem_wait, int, sem_t*)                                                                              \
  X(sem_trywait, int, sem_t*)                                                                           \
  X(sem_timedwait, int, sem_t*, const struct timespec*)
// The condition variables have two versions in glibc; dlsym without one
// may answer the old (2.2.5) one, whose objects are laid out differently.
#define SMTRACE_PTHREAD_COND_REAL(X)                                                                     \
  X(pthread_cond_signal, int, pthread_cond_t*)                                                          \
  X(pthread_cond_broadcast, int, pthread_cond_t*)                                                       \
  X(pthread_cond_wait, int, pthread_cond_t*, pthread_mutex_t*)                                          \
  X(pthread_cond_timedwait, int, pthread_cond_t*, pthread_mutex_t*, const struct timespec*)

struct Real {
#define SMTRACE_MEMBER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  SMTRACE_PTHREAD_REAL(SMTRACE_MEMBER)
  SMTRACE_PTHREAD_COND_REAL(SMTRACE_MEMBER)
#undef SMTRACE_MEMBER
};
Real g_real;
std::atomic<bool> g_resolved{false};

void* next_cond(const char* name) {
#if defined(__x86_64__)
  if (void* p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2")) return p;
#endif
  return dlsym(RTLD_NEXT, name);
}

void resolve() {
  if (g_resolved.load(std::memory_order_acquire)) return;
#define SMTRACE_RESOLVE(name, ret, ...) g_real.name = reinterpret_cast<ret (*)(__VA_ARGS__)>(dlsym(RTLD_NEXT, #name));
  SMTRACE_PTHREAD_REAL(SMTRACE_RESOLVE)
#undef SMTRACE_RESOLVE
#define SMTRACE_RESOLVE(name, ret, ...) g_real.name = reinterpret_cast<ret (*)(__VA_ARGS__)>(next_cond(#name));
  SMTRACE_PTHREAD_COND_REAL(SMTRACE_RESOLVE)
#undef SMTRACE_RESOLVE
  g_resolved.store(true, std::memory_order_release);
}

__attribute__((constructor(101))) void resolve_at_load() {
  resolve();
  rebuild_modules();
}

// Return the next definition of `name` (resolving on first use when a
// constructor of another library calls before ours ran).
#define SMTRACE_REAL(name) \
  (::smtrace::tracer::threads::g_real.name ? ::smtrace::tracer::threads::g_real.name \
                                            : (::smtrace::tracer::threads::resolve(), ::smtrace::tracer::threads::g_real.name))

// Return whether a call from `site` on this thread is recorded.
bool wanted(uintptr_t site) noexcept { return recording() && !from_runtime(site); }

// --- thread start and end ---------------------------------------------------

struct Start {
  void* (*routine)(void*);
  void* arg;
  uint32_t id;       // tracer id, UINT32_MAX: none given (not tracing)
  uint32_t creator;  // the creator's tracer id
  bool internal;
};

void thread_end(uintptr_t site) noexcept {
  if (!recording()) return;
  record({Call::thread_end}, site, handlers::now());
}

void* trampoline(void* p) {
  Start start = *static_cast<Start*>(p);
  std::free(p);
  t_internal = start.internal;
  handlers::adopt_thread_id(start.id);
  if (start.id != UINT32_MAX) remember_id(pthread_self(), start.id);
  // Sites are return addresses, resolved at the byte before: one past the
  // routine's entry names the routine.
  const auto site = reinterpret_cast<uintptr_t>(start.routine) + 1;
  if (!start.internal && start.id != UINT32_MAX && recording()) {
    Sync begin{Call::thread_begin};
    begin.peer = static_cast<int32_t>(start.creator);
    record(begin, site, handlers::now());
  }
  void* result = start.routine(start.arg);
  thread_end(site);
  return result;
}

}  // namespace

// --- threads.hpp --------------------------------------------------------------

bool recording() noexcept {
  return g_multi.load(std::memory_order_relaxed) && !t_internal && !t_inside && !handlers::in_wrapper() &&
         handlers::threads_tracked();
}

bool from_runtime(uintptr_t caller) noexcept {
  if (const Module* m = find_module(g_modules.load(std::memory_order_acquire), caller)) return m->runtime;
  const uint64_t miss = g_module_misses.fetch_add(1, std::memory_order_relaxed) + 1;
  if ((miss & (miss - 1)) == 0 && miss < (1u << 20)) {
    rebuild_modules();
    if (const Module* m = find_module(g_modules.load(std::memory_order_acquire), caller)) return m->runtime;
  }
  return false;
}

void second_thread() noexcept { g_multi.store(true, std::memory_order_relaxed); }

bool ompt_on() noexcept { return g_ompt.load(std::memory_order_relaxed); }
void set_ompt_on(bool on) noexcept { g_ompt.store(on, std::memory_order_relaxed); }

uint64_t next_object_id() noexcept { return g_next_object.fetch_add(1, std::memory_order_relaxed); }

namespace {
void fill(format::Event& e, const Sync& sync) {
  e.call = sync.call;
  e.buf = sync.buf;
  e.recv_buf = sync.recv_buf;
  e.peer = sync.peer;
  e.count = sync.count;
  e.displs = sync.displs;
  e.counts = sync.counts;
}
}  // namespace

void record(const Sync& sync, uintptr_t site, int64_t t0, uint32_t source) noexcept {
  Inside inside;
  format::Event e;
  fill(e, sync);
  e.t_start = t0;
  const int64_t t1 = handlers::now();
  e.duration = t1 > t0 ? static_cast<uint64_t>(t1 - t0) : 0;
  handlers::record_event(e, site, source);
}

Blocking::Blocking(const Sync& sync, uintptr_t site, uint32_t source) noexcept {
  Inside inside;
  fill(m_event, sync);
  m_event.t_start = handlers::now();
  m_seq = handlers::record_entry(m_event, site, source);
}

void Blocking::done(int rc) noexcept {
  Inside inside;
  m_event.rc = rc;
  handlers::record_exit(m_seq, m_event, handlers::now());
}

}  // namespace smtrace::tracer::threads

// --- the interposers ------------------------------------------------------------

namespace tt = smtrace::tracer::threads;
namespace th = smtrace::tracer::handlers;
using smtrace::format::Call;

#define SMTRACE_CALLER reinterpret_cast<uintptr_t>(__builtin_return_address(0))

namespace {
// An acquire: record after the real call succeeded.
template <class Fn>
int acquire(Call call, const volatile void* object, uintptr_t site, Fn&& real) {
  if (!tt::wanted(site)) return real();
  const int64_t t0 = th::now();
  const int rc = real();
  if (rc == 0) tt::record({call, reinterpret_cast<uintptr_t>(const_cast<const void*>(object))}, site, t0);
  return rc;
}
// A release: record before the real call.
template <class Fn>
int release(Call call, const volatile void* object, uintptr_t site, Fn&& real) {
  if (tt::wanted(site)) tt::record({call, reinterpret_cast<uintptr_t>(const_cast<const void*>(object))}, site, th::now());
  return real();
}
}  // namespace

extern "C" {

SMTRACE_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*), void* arg) {
  const uintptr_t site = SMTRACE_CALLER;
  auto* start = static_cast<tt::Start*>(std::malloc(sizeof(tt::Start)));
  if (!start) return SMTRACE_REAL(pthread_create)(thread, attr, routine, arg);
  // Threads started inside MPI (MPI_Init's progress threads) or by the
  // tracer are not the program's; a thread of the program's makes it
  // multi-threaded from here on.
  const bool internal = th::in_wrapper() || tt::t_internal || tt::t_inside;
  if (!internal) tt::second_thread();
  const bool recorded = !internal && tt::recording();
  *start = {routine, arg, recorded ? th::reserve_thread_id() : UINT32_MAX, recorded ? th::thread_id() : 0, internal};
  if (start->id != UINT32_MAX) {
    tt::Sync create{Call::pthread_create};
    create.peer = static_cast<int32_t>(start->id);
    tt::record(create, site, th::now());
  }
  const int rc = SMTRACE_REAL(pthread_create)(thread, attr, tt::trampoline, start);
  if (rc != 0) {
    std::free(start);
  } else if (recorded) {
    tt::remember_id(*thread, start->id);
  }
  return rc;
}

SMTRACE_EXPORT void pthread_exit(void* value) {
  tt::thread_end(SMTRACE_CALLER);
  SMTRACE_REAL(pthread_exit)(value);
  __builtin_unreachable();
}

// A join: blocking; its end is after the joined thread's end.
#define SMTRACE_JOIN(...)                                                          \
  const uintptr_t site = SMTRACE_CALLER;                                           \
  if (!tt::wanted(site)) return __VA_ARGS__;                                       \
  tt::Sync join{Call::pthread_join};                                               \
  join.peer = tt::id_of(thread);                                                   \
  if (!join.peer) return __VA_ARGS__;                                              \
  tt::Blocking wait(join, site);                                                   \
  const int rc = __VA_ARGS__;                                                      \
  wait.done(rc);                                                                   \
  return rc;

SMTRACE_EXPORT int pthread_join(pthread_t thread, void** value) { SMTRACE_JOIN(SMTRACE_REAL(pthread_join)(thread, value)) }
SMTRACE_EXPORT int pthread_timedjoin_np(pthread_t thread, void** value, const struct timespec* t) {
  SMTRACE_JOIN(SMTRACE_REAL(pthread_timedjoin_np)(thread, value, t))
}
SMTRACE_EXPORT int pthread_tryjoin_np(pthread_t thread, void** value) {
  SMTRACE_JOIN(SMTRACE_REAL(pthread_tryjoin_np)(thread, value))
}
#undef SMTRACE_JOIN

SMTRACE_EXPORT int pthread_mutex_lock(pthread_mutex_t* m) {
  return acquire(Call::pthread_mutex_lock, m, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_mutex_lock)(m); });
}
SMTRACE_EXPORT int pthread_mutex_trylock(pthread_mutex_t* m) {
  return acquire(Call::pthread_mutex_lock, m, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_mutex_trylock)(m); });
}
SMTRACE_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* t) {
  return acquire(Call::pthread_mutex_lock, m, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_mutex_timedlock)(m, t); });
}
SMTRACE_EXPORT int pthread_mutex_unlock(pthread_mutex_t* m) {
  return release(Call::pthread_mutex_unlock, m, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_mutex_unlock)(m); });
}

SMTRACE_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  return acquire(Call::pthread_rwlock_rdlock, l, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_rwlock_rdlock)(l); });
}
SMTRACE_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) {
  return acquire(Call::pthread_rwlock_rdlock, l, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_rwlock_tryrdlock)(l); });
}
SMTRACE_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* l, const struct timespec* t) {
  return acquire(Call::pthread_rwlock_rdlock, l, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_rwlock_timedrdlock)(l, t); });
}
SMTRACE_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  return acquire(Call::pthread_rwlock_wrlock, l, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_rwlock_wrlock)(l); });
}
SMTRACE_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t* l) {
  return acquire(Call::pthread_rwlock_wrlock, l, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_rwlock_trywrlock)(l); });
}
SMTRACE_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* l, const struct timespec* t) {
  return acquire(Call::pthread_rwlock_wrlock, l, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_rwlock_timedwrlock)(l, t); });
}
SMTRACE_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* l) {
  return release(Call::pthread_rwlock_unlock, l, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_rwlock_unlock)(l); });
}

SMTRACE_EXPORT int pthread_spin_lock(pthread_spinlock_t* l) {
  return acquire(Call::pthread_spin_lock, l, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_spin_lock)(l); });
}
SMTRACE_EXPORT int pthread_spin_trylock(pthread_spinlock_t* l) {
  return acquire(Call::pthread_spin_lock, l, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_spin_trylock)(l); });
}
SMTRACE_EXPORT int pthread_spin_unlock(pthread_spinlock_t* l) {
  return release(Call::pthread_spin_unlock, l, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_spin_unlock)(l); });
}

SMTRACE_EXPORT int pthread_cond_signal(pthread_cond_t* c) {
  return release(Call::pthread_cond_signal, c, SMTRACE_CALLER, [&] { return SMTRACE_REAL(pthread_cond_signal)(c); });
}
SMTRACE_EXPORT int pthread_cond_broadcast(pthread_cond_t* c) {
  return release(Call::pthread_cond_broadcast, c, SMTRACE_CALLER,
                 [&] { return SMTRACE_REAL(pthread_cond_broadcast)(c); });
}

// A condition wait: blocking; it releases the mutex at its start and takes
// it again (and the signals before) at its end, also when it timed out.
#define SMTRACE_COND_WAIT(...)                                                     \
  const uintptr_t site = SMTRACE_CALLER;                                           \
  if (!tt::wanted(site)) return __VA_ARGS__;                                       \
  tt::Sync sync{Call::pthread_cond_wait, reinterpret_cast<uintptr_t>(c), reinterpret_cast<uintptr_t>(m)}; \
  tt::Blocking wait(sync, site);                                                   \
  const int rc = __VA_ARGS__;                                                      \
  wait.done(rc);                                                                   \
  return rc;

SMTRACE_EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  SMTRACE_COND_WAIT(SMTRACE_REAL(pthread_cond_wait)(c, m))
}
SMTRACE_EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  SMTRACE_COND_WAIT(SMTRACE_REAL(pthread_cond_timedwait)(c, m, t))
}
#undef SMTRACE_COND_WAIT

// Barriers: the members of each barrier are counted from its init (always,
// recording or not), so that a wait knows its round: arrival k of a barrier
// of n members is in round k / n (a member cannot arrive again before its
// round completed).
SMTRACE_EXPORT int pthread_barrier_init(pthread_barrier_t* b, const pthread_barrierattr_t* attr, unsigned count) {
  const int rc = SMTRACE_REAL(pthread_barrier_init)(b, attr, count);
  if (rc == 0) {
    smtrace::tracer::SpinGuard<smtrace::tracer::SpinLock> guard(tt::g_barriers_lock);
    if (tt::BarrierSlot* s = tt::barrier_slot(reinterpret_cast<uintptr_t>(b), true)) *s = {s->address, count, 0};
  }
  return rc;
}

SMTRACE_EXPORT int pthread_barrier_wait(pthread_barrier_t* b) {
  const uintptr_t site = SMTRACE_CALLER;
  if (!tt::wanted(site)) return SMTRACE_REAL(pthread_barrier_wait)(b);
  int64_t round = -1;
  {
    smtrace::tracer::SpinGuard<smtrace::tracer::SpinLock> guard(tt::g_barriers_lock);
    if (tt::BarrierSlot* s = tt::barrier_slot(reinterpret_cast<uintptr_t>(b), false); s && s->members > 0)
      round = static_cast<int64_t>(s->arrivals++ / s->members);
  }
  if (round < 0) return SMTRACE_REAL(pthread_barrier_wait)(b);  // initialized before the tracer was loaded
  tt::Blocking wait({Call::pthread_barrier_wait, reinterpret_cast<uintptr_t>(b), 0, std::nullopt, round}, site);
  const int rc = SMTRACE_REAL(pthread_barrier_wait)(b);
  wait.done(rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc);
  return rc;
}

// sem_post is async-signal-safe: a handler may call it. The recording takes
// the tracer's lock, which the interrupted thread may hold only inside the
// tracer (in_wrapper() or t_inside): recording() is false there.
SMTRACE_EXPORT int sem_post(sem_t* s) {
  return release(Call::sem_post, s, SMTRACE_CALLER, [&] { return SMTRACE_REAL(sem_post)(s); });
}
SMTRACE_EXPORT int sem_wait(sem_t* s) {
  return acquire(Call::sem_wait, s, SMTRACE_CALLER, [&] { return SMTRACE_REAL(sem_wait)(s); });
}
SMTRACE_EXPORT int sem_trywait(sem_t* s) {
  return acquire(Call::sem_wait, s, SMTRACE_CALLER, [&] { return SMTRACE_REAL(sem_trywait)(s); });
}
SMTRACE_EXPORT int sem_timedwait(sem_t* s, const struct timespec* t) {
  return acquire(Call::sem_wait, s, SMTRACE_CALLER, [&] { return SMTRACE_REAL(sem_timedwait)(s, t); });
}

}  // extern "C"
