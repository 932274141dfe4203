// libsmtrace_tsan.so: the load/store runtime. Programs compiled with
// -fsanitize=thread call __tsan_* for every load, store, atomic operation
// and function entry; linked against this library instead of
// ThreadSanitizer's, those calls become smtrace Load/Store events
// (docs/tracer.md, "Load/store capture").
//
// Ground rules, on top of tracer/tracer.hpp's:
// - An access outside the watched ranges costs a call, two loads and a
//   compare (RangeTable::near): programs spend almost all their accesses
//   there. Code instrumented by smtrace's compiler plugins (tracer/filter/)
//   makes that test inline on smtrace_access_watch_hull and calls in only
//   on a hit. Everything else sits behind [[gnu::noinline, gnu::cold]].
// - The runtime records nothing by itself: libsmtrace.so (the tracer)
//   attaches at MPI_Init, publishes the watched ranges and writes the runs
//   (tracer/access_abi.hpp). Without the tracer nothing is watched.
// - Atomic operations are performed here (sequentially consistent, which
//   satisfies any order the program asked for) and recorded as accesses: a
//   load as Load, anything that writes (store, exchange, read-modify-write,
//   compare-exchange) as Store.
// - memcpy, memmove and memset (and their _chk forms) are interposed: the
//   compilers call the plain functions for copies (GCC and Clang 14 both
//   do). A call is recorded only when it comes from instrumented code (its
//   return address lies in a module that called __tsan_init), so the MPI
//   library's and libc's own copies never are, whichever thread makes them.
// - Per thread: a shadow stack (__tsan_func_entry/exit) and up to 8 open
//   runs (tracer/access_runs.hpp), in memory mapped on the thread's first
//   use and reached through one initial-exec TLS pointer.
// - Links only libc (no libstdc++ at run time, no MPI).
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "tracer/access_abi.hpp"
#include "tracer/access_runs.hpp"
#include "tracer/range_table.hpp"

#define SMTRACE_RT_EXPORT extern "C" __attribute__((visibility("default")))
#define SMTRACE_RT_SLOW __attribute__((noinline, cold))

namespace smtrace::tracer {
namespace {

constexpr std::size_t k_shadow_frames = 1024;  // deeper frames are counted, not kept
constexpr std::size_t k_open_runs = 8;
constexpr std::size_t k_max_modules = 64;

struct ThreadState {
  uint32_t depth = 0;        // shadow-stack depth (may exceed k_shadow_frames)
  // A run is being added or written: no re-entry, and flush_all (from
  // another thread) keeps out. Taken by exchange, so that only one of the
  // owner and flush_all holds the runs at a time.
  std::atomic<bool> in_runtime{false};
  uint64_t tag = 0;          // set_tag's
  ThreadState* next = nullptr;  // the list of live states (g_states)
  ThreadState* prev = nullptr;
  RunSet<k_open_runs> runs;
  uintptr_t frames[k_shadow_frames];
};

// The live thread states, for flush_all. A spin lock, not a pthread mutex:
// the tracer interposes those.
std::atomic<bool> g_states_lock{false};
ThreadState* g_states = nullptr;
void lock_states() {
  while (g_states_lock.exchange(true, std::memory_order_acquire)) __builtin_ia32_pause();
}
void unlock_states() { g_states_lock.store(false, std::memory_order_release); }

}  // namespace
}  // namespace smtrace::tracer

// The hull that code instrumented by smtrace's compiler plugins tests inline
// (tracer/access_abi.hpp); g_table keeps it.
// (Declared extern "C" in the header; this is its definition.)
__attribute__((visibility("default"))) alignas(64) smtrace_access_hull smtrace_access_watch_hull = {0, 0};

namespace smtrace::tracer {
namespace {

RangeTable g_table{&smtrace_access_watch_hull};
std::atomic<const smtrace_access_tracer*> g_tracer{nullptr};

// Code ranges of the modules that called __tsan_init (instrumented code).
struct CodeRange {
  uintptr_t lo, hi;
};
CodeRange g_modules[k_max_modules];
std::atomic<std::size_t> g_module_count{0};
pthread_mutex_t g_module_lock = PTHREAD_MUTEX_INITIALIZER;

pthread_key_t g_key;
std::atomic<bool> g_key_made{false};
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

thread_local ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local bool t_gone __attribute__((tls_model("initial-exec"))) = false;
thread_local uint64_t t_tag __attribute__((tls_model("initial-exec"))) = 0;

// --- the C library's functions behind the interposed ones

using MemcpyFn = void* (*)(void*, const void*, size_t);
using MemsetFn = void* (*)(void*, int, size_t);
using MemcpyChkFn = void* (*)(void*, const void*, size_t, size_t);
using MemsetChkFn = void* (*)(void*, int, size_t, size_t);
std::atomic<MemcpyFn> g_memcpy{nullptr};
std::atomic<MemcpyFn> g_memmove{nullptr};
std::atomic<MemsetFn> g_memset{nullptr};
std::atomic<MemcpyChkFn> g_memcpy_chk{nullptr};
std::atomic<MemcpyChkFn> g_memmove_chk{nullptr};
std::atomic<MemsetChkFn> g_memset_chk{nullptr};
std::atomic<bool> g_resolving{false};

// Byte loops for the calls that come before dlsym has answered (or from
// dlsym itself). volatile keeps the compiler from turning them back into
// memcpy and memset calls.
void* copy_bytes(void* dst, const void* src, size_t n) {
  auto* d = static_cast<volatile unsigned char*>(dst);
  auto* s = static_cast<const volatile unsigned char*>(src);
  if (d < s) {
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
  } else {
    for (size_t i = n; i > 0; --i) d[i - 1] = s[i - 1];
  }
  return dst;
}
void* set_bytes(void* dst, int c, size_t n) {
  auto* d = static_cast<volatile unsigned char*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<unsigned char>(c);
  return dst;
}

template <class Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

SMTRACE_RT_SLOW void resolve_libc() {
  if (g_resolving.exchange(true)) return;  // dlsym itself copies: byte loops meanwhile
  g_memmove.store(next_symbol<MemcpyFn>("memmove"));
  g_memset.store(next_symbol<MemsetFn>("memset"));
  g_memcpy_chk.store(next_symbol<MemcpyChkFn>("__memcpy_chk"));
  g_memmove_chk.store(next_symbol<MemcpyChkFn>("__memmove_chk"));
  g_memset_chk.store(next_symbol<MemsetChkFn>("__memset_chk"));
  g_memcpy.store(next_symbol<MemcpyFn>("memcpy"));  // last: the others are set when it is
}

MemcpyFn real_memcpy() {
  MemcpyFn f = g_memcpy.load(std::memory_order_acquire);
  if (!f) [[unlikely]] {
    resolve_libc();
    f = g_memcpy.load(std::memory_order_acquire);
  }
  return f;
}

// --- threads

void thread_gone(void* state);

void make_key() {
  if (pthread_key_create(&g_key, thread_gone) == 0) g_key_made.store(true);
}

SMTRACE_RT_SLOW ThreadState* new_state() {
  if (t_gone) return nullptr;  // after this thread's exit flush
  void* p = mmap(nullptr, sizeof(ThreadState), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* s = new (p) ThreadState;
  s->tag = t_tag;
  lock_states();
  s->next = g_states;
  if (g_states) g_states->prev = s;
  g_states = s;
  unlock_states();
  t_state = s;
  pthread_once(&g_key_once, make_key);
  if (g_key_made.load()) pthread_setspecific(g_key, s);
  return s;
}

inline ThreadState* state() {
  ThreadState* s = t_state;
  return s ? s : new_state();
}

AccessOrigin origin_of(const ThreadState& s) {
  AccessOrigin o;
  o.depth = s.depth;
  if (s.depth > 0 && s.depth <= k_shadow_frames) o.caller = s.frames[s.depth - 1];
  return o;
}

std::size_t copy_stack(const ThreadState& s, uintptr_t* out, std::size_t max) {
  std::size_t kept = s.depth < k_shadow_frames ? s.depth : k_shadow_frames;
  std::size_t n = kept < max ? kept : max;
  for (std::size_t i = 0; i < n; ++i) out[i] = s.frames[kept - 1 - i];
  return n;
}

void thread_gone(void* state) {
  auto* s = static_cast<ThreadState*>(state);
  const smtrace_access_tracer* tracer = g_tracer.load(std::memory_order_acquire);
  // Held to the end: flush_all keeps out of a state about to be unmapped.
  const bool held = !s->in_runtime.exchange(true, std::memory_order_acquire);
  if (tracer && held) s->runs.flush([&](const smtrace_access_run& run) { tracer->record(&run); });
  lock_states();
  if (s->prev) s->prev->next = s->next;
  else g_states = s->next;
  if (s->next) s->next->prev = s->prev;
  unlock_states();
  t_state = nullptr;
  t_gone = true;
  s->~ThreadState();
  munmap(s, sizeof(ThreadState));
}

// --- recording

// `[addr, addr + size)` is near a watched range: record it if it is in one.
SMTRACE_RT_SLOW void access(uint32_t kind, uintptr_t addr, uint64_t size, uintptr_t pc) {
  if (size == 0 || !g_table.intersects(addr, addr + size)) return;
  const smtrace_access_tracer* tracer = g_tracer.load(std::memory_order_acquire);
  if (!tracer) return;
  ThreadState* s = state();
  if (!s || tracer->busy() || s->in_runtime.exchange(true, std::memory_order_acquire)) return;
  s->runs.add(
      kind, pc, addr, size, origin_of(*s), [&](const smtrace_access_run& run) { tracer->record(&run); },
      [&](smtrace_access_run& run) {
        run.t_start = tracer->now();
        run.depth = static_cast<uint32_t>(copy_stack(*s, run.stack, tracer->frames));
      });
  s->in_runtime.store(false, std::memory_order_release);
}

bool instrumented_caller(uintptr_t pc) {
  const std::size_t n = g_module_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (pc >= g_modules[i].lo && pc < g_modules[i].hi) return true;
  return false;
}

// A memcpy & co. of the program near a watched range.
SMTRACE_RT_SLOW void copy_access(uintptr_t dst, uintptr_t src, uint64_t n, uintptr_t pc, bool check_caller) {
  if (check_caller && !instrumented_caller(pc)) return;
  if (src != 0) access(smtrace_access_load, src, n, pc);
  access(smtrace_access_store, dst, n, pc);
}

inline void copied(void* dst, const void* src, size_t n, uintptr_t pc, bool check_caller) {
  const auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  if (g_table.near(d, n) || (src && g_table.near(s, n))) [[unlikely]]
    copy_access(d, s, n, pc, check_caller);
}

// Return the C library's function in `slot` (resolving them all first).
template <class Fn>
Fn real(const std::atomic<Fn>& slot) {
  real_memcpy();
  return slot.load(std::memory_order_acquire);
}

// memcpy or memmove (`fn`) called from `pc`: record, then copy.
inline void* copy_call(void* d, const void* s, size_t n, uintptr_t pc, bool check_caller,
                       const std::atomic<MemcpyFn>& fn) {
  copied(d, s, n, pc, check_caller);
  const MemcpyFn f = real(fn);
  return f ? f(d, s, n) : copy_bytes(d, s, n);
}

// memset called from `pc`: record, then set.
inline void* set_call(void* d, int c, size_t n, uintptr_t pc, bool check_caller) {
  copied(d, nullptr, n, pc, check_caller);
  const MemsetFn f = real(g_memset);
  return f ? f(d, c, n) : set_bytes(d, c, n);
}

inline void load(uintptr_t addr, uint64_t size, uintptr_t pc) {
  if (g_table.near(addr)) [[unlikely]]
    access(smtrace_access_load, addr, size, pc);
}
inline void store(uintptr_t addr, uint64_t size, uintptr_t pc) {
  if (g_table.near(addr)) [[unlikely]]
    access(smtrace_access_store, addr, size, pc);
}

// --- modules

struct ModuleQuery {
  uintptr_t pc;
  CodeRange found;
  bool ok;
};

int find_code(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<ModuleQuery*>(data);
  for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (q->pc >= lo && q->pc < lo + ph.p_memsz) {
      q->found = {lo, lo + ph.p_memsz};
      q->ok = true;
      return 1;
    }
  }
  return 0;
}

SMTRACE_RT_SLOW void register_module(uintptr_t pc) {
  if (instrumented_caller(pc)) return;
  ModuleQuery q{pc, {0, 0}, false};
  dl_iterate_phdr(find_code, &q);
  if (!q.ok) return;
  pthread_mutex_lock(&g_module_lock);
  const std::size_t n = g_module_count.load(std::memory_order_relaxed);
  bool known = false;
  for (std::size_t i = 0; i < n; ++i) known = known || (g_modules[i].lo == q.found.lo);
  if (!known && n < k_max_modules) {
    g_modules[n] = q.found;
    g_module_count.store(n + 1, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_module_lock);
}

// --- the interface for the tracer

void api_attach(const smtrace_access_tracer* tracer) {
  if (tracer && tracer->abi != k_smtrace_access_abi) return;
  g_tracer.store(tracer, std::memory_order_release);
}

void api_publish(const smtrace_access_range* ranges, size_t n) { g_table.publish(ranges, n); }

void api_flush_thread(void (*write)(const smtrace_access_run*, void*), void* context) {
  ThreadState* s = t_state;
  if (!s || s->in_runtime.exchange(true, std::memory_order_acquire)) return;
  s->runs.flush([&](const smtrace_access_run& run) { write(&run, context); });
  s->in_runtime.store(false, std::memory_order_release);
}

void api_set_tag(uint64_t tag) {
  t_tag = tag;
  if (ThreadState* s = t_state) s->tag = tag;
}

// Another thread's runs: taken only while its owner is out of the runtime
// (in_runtime), so the two never touch them at once. An owner that stays
// inside (writing a run through the tracer, which waits for the lock the
// caller of flush_all holds) is given up on after a short wait.
uint32_t api_flush_all(void (*write)(const smtrace_access_run*, uint64_t, void*), void* context) {
  uint32_t left = 0;
  lock_states();
  for (ThreadState* s = g_states; s; s = s->next) {
    bool held = false;
    for (int spin = 0; spin < 4096 && !(held = !s->in_runtime.exchange(true, std::memory_order_acquire)); ++spin)
      __builtin_ia32_pause();
    if (!held) {
      ++left;
      continue;
    }
    const uint64_t tag = s->tag;
    s->runs.flush([&](const smtrace_access_run& run) { write(&run, tag, context); });
    s->in_runtime.store(false, std::memory_order_release);
  }
  unlock_states();
  return left;
}

size_t api_stack(uintptr_t* out, size_t max) {
  const ThreadState* s = t_state;
  return s ? copy_stack(*s, out, max) : 0;
}

constexpr smtrace_access_runtime_api k_api = {k_smtrace_access_abi, api_attach,  api_publish, api_flush_thread,
                                              api_stack,            api_set_tag, api_flush_all};

}  // namespace
}  // namespace smtrace::tracer

namespace rt = smtrace::tracer;

#define SMTRACE_PC reinterpret_cast<uintptr_t>(__builtin_return_address(0))
#define SMTRACE_ADDR(a) reinterpret_cast<uintptr_t>(a)

SMTRACE_RT_EXPORT const smtrace_access_runtime_api* smtrace_access_runtime(void) { return &rt::k_api; }

// --- initialization and the shadow stack

SMTRACE_RT_EXPORT void __tsan_init(void) { rt::register_module(SMTRACE_PC); }
SMTRACE_RT_EXPORT void __tsan_flush_memory(void) {}
SMTRACE_RT_EXPORT void __tsan_ignore_thread_begin(void) {}
SMTRACE_RT_EXPORT void __tsan_ignore_thread_end(void) {}
SMTRACE_RT_EXPORT void __tsan_acquire(void*) {}
SMTRACE_RT_EXPORT void __tsan_release(void*) {}

SMTRACE_RT_EXPORT void __tsan_func_entry(void* call_pc) {
  rt::ThreadState* s = rt::state();
  if (!s) [[unlikely]]
    return;
  const uint32_t d = s->depth++;
  if (d < rt::k_shadow_frames) [[likely]]
    s->frames[d] = SMTRACE_ADDR(call_pc);
}

SMTRACE_RT_EXPORT void __tsan_func_exit(void) {
  rt::ThreadState* s = rt::t_state;
  if (s && s->depth > 0) [[likely]]
    --s->depth;
}

// --- plain accesses: __tsan_{read,write}{1,2,4,8,16} and their unaligned,
// volatile and _pc forms, __tsan_{read,write}_range[_pc]

#define SMTRACE_ACCESS_SIZE(N)                                                                                   \
  SMTRACE_RT_EXPORT void __tsan_read##N(void* a) { rt::load(SMTRACE_ADDR(a), N, SMTRACE_PC); }                   \
  SMTRACE_RT_EXPORT void __tsan_write##N(void* a) { rt::store(SMTRACE_ADDR(a), N, SMTRACE_PC); }                 \
  SMTRACE_RT_EXPORT void __tsan_read##N##_pc(void* a, void* pc) { rt::load(SMTRACE_ADDR(a), N, SMTRACE_ADDR(pc)); } \
  SMTRACE_RT_EXPORT void __tsan_write##N##_pc(void* a, void* pc) {                                               \
    rt::store(SMTRACE_ADDR(a), N, SMTRACE_ADDR(pc));                                                             \
  }                                                                                                              \
  SMTRACE_RT_EXPORT void __tsan_volatile_read##N(void* a) { rt::load(SMTRACE_ADDR(a), N, SMTRACE_PC); }          \
  SMTRACE_RT_EXPORT void __tsan_volatile_write##N(void* a) { rt::store(SMTRACE_ADDR(a), N, SMTRACE_PC); }
#define SMTRACE_UNALIGNED_SIZE(N)                                                                                \
  SMTRACE_RT_EXPORT void __tsan_unaligned_read##N(const void* a) { rt::load(SMTRACE_ADDR(a), N, SMTRACE_PC); }   \
  SMTRACE_RT_EXPORT void __tsan_unaligned_write##N(void* a) { rt::store(SMTRACE_ADDR(a), N, SMTRACE_PC); }       \
  SMTRACE_RT_EXPORT void __tsan_unaligned_volatile_read##N(void* a) { rt::load(SMTRACE_ADDR(a), N, SMTRACE_PC); } \
  SMTRACE_RT_EXPORT void __tsan_unaligned_volatile_write##N(void* a) { rt::store(SMTRACE_ADDR(a), N, SMTRACE_PC); }

SMTRACE_ACCESS_SIZE(1)
SMTRACE_ACCESS_SIZE(2)
SMTRACE_ACCESS_SIZE(4)
SMTRACE_ACCESS_SIZE(8)
SMTRACE_ACCESS_SIZE(16)
SMTRACE_UNALIGNED_SIZE(2)
SMTRACE_UNALIGNED_SIZE(4)
SMTRACE_UNALIGNED_SIZE(8)
SMTRACE_UNALIGNED_SIZE(16)

namespace smtrace::tracer {
namespace {
inline void range(uint32_t kind, uintptr_t a, size_t n, uintptr_t pc) {
  if (n != 0 && g_table.near(a, n)) [[unlikely]]
    access(kind, a, n, pc);
}
}  // namespace
}  // namespace smtrace::tracer

SMTRACE_RT_EXPORT void __tsan_read_range(void* a, unsigned long n) {
  rt::range(smtrace_access_load, SMTRACE_ADDR(a), n, SMTRACE_PC);
}
SMTRACE_RT_EXPORT void __tsan_write_range(void* a, unsigned long n) {
  rt::range(smtrace_access_store, SMTRACE_ADDR(a), n, SMTRACE_PC);
}
SMTRACE_RT_EXPORT void __tsan_read_range_pc(void* a, unsigned long n, void* pc) {
  rt::range(smtrace_access_load, SMTRACE_ADDR(a), n, SMTRACE_ADDR(pc));
}
SMTRACE_RT_EXPORT void __tsan_write_range_pc(void* a, unsigned long n, void* pc) {
  rt::range(smtrace_access_store, SMTRACE_ADDR(a), n, SMTRACE_ADDR(pc));
}

// C++ virtual table pointers: a read, and an update that (as in
// ThreadSanitizer) counts as a store only when it changes the pointer, so
// that destructors rewriting the same vptr are not stores.
SMTRACE_RT_EXPORT void __tsan_vptr_read(void** vptr_p) { rt::load(SMTRACE_ADDR(vptr_p), sizeof(void*), SMTRACE_PC); }
SMTRACE_RT_EXPORT void __tsan_vptr_update(void** vptr_p, void* new_val) {
  if (rt::g_table.near(SMTRACE_ADDR(vptr_p)) && *vptr_p != new_val) [[unlikely]]
    rt::access(smtrace_access_store, SMTRACE_ADDR(vptr_p), sizeof(void*), SMTRACE_PC);
}

// --- memcpy & co.: __tsan_mem* (newer Clang) come from instrumented code;
// the interposed C functions check their caller.

SMTRACE_RT_EXPORT void* __tsan_memcpy(void* d, const void* s, size_t n) {
  return rt::copy_call(d, s, n, SMTRACE_PC, false, rt::g_memcpy);
}
SMTRACE_RT_EXPORT void* __tsan_memmove(void* d, const void* s, size_t n) {
  return rt::copy_call(d, s, n, SMTRACE_PC, false, rt::g_memmove);
}
SMTRACE_RT_EXPORT void* __tsan_memset(void* d, int c, size_t n) { return rt::set_call(d, c, n, SMTRACE_PC, false); }

SMTRACE_RT_EXPORT void* memcpy(void* d, const void* s, size_t n) {
  return rt::copy_call(d, s, n, SMTRACE_PC, true, rt::g_memcpy);
}
SMTRACE_RT_EXPORT void* memmove(void* d, const void* s, size_t n) {
  return rt::copy_call(d, s, n, SMTRACE_PC, true, rt::g_memmove);
}
SMTRACE_RT_EXPORT void* memset(void* d, int c, size_t n) { return rt::set_call(d, c, n, SMTRACE_PC, true); }
// The fortified forms (-D_FORTIFY_SOURCE): the C library checks the size.
SMTRACE_RT_EXPORT void* __memcpy_chk(void* d, const void* s, size_t n, size_t room) {
  rt::copied(d, s, n, SMTRACE_PC, true);
  const rt::MemcpyChkFn f = rt::real(rt::g_memcpy_chk);
  return f ? f(d, s, n, room) : rt::copy_bytes(d, s, n);
}
SMTRACE_RT_EXPORT void* __memmove_chk(void* d, const void* s, size_t n, size_t room) {
  rt::copied(d, s, n, SMTRACE_PC, true);
  const rt::MemcpyChkFn f = rt::real(rt::g_memmove_chk);
  return f ? f(d, s, n, room) : rt::copy_bytes(d, s, n);
}
SMTRACE_RT_EXPORT void* __memset_chk(void* d, int c, size_t n, size_t room) {
  rt::copied(d, nullptr, n, SMTRACE_PC, true);
  const rt::MemsetChkFn f = rt::real(rt::g_memset_chk);
  return f ? f(d, c, n, room) : rt::set_bytes(d, c, n);
}

// --- atomics: __tsan_atomic{8,16,32,64,128}_<op> and the fences.
// The memory-order arguments are ignored: every operation is sequentially
// consistent, which is at least as strong as what was asked.

namespace smtrace::tracer {
namespace {
template <class T>
inline void atomic_load_access(volatile T* a, uintptr_t pc) {
  load(SMTRACE_ADDR(a), sizeof(T), pc);
}
template <class T>
inline void atomic_store_access(volatile T* a, uintptr_t pc) {
  store(SMTRACE_ADDR(a), sizeof(T), pc);
}
}  // namespace
}  // namespace smtrace::tracer

#define SMTRACE_ATOMIC_RMW(T, N, OP, BUILTIN)                                    \
  SMTRACE_RT_EXPORT T __tsan_atomic##N##_##OP(volatile T* a, T v, int) {         \
    rt::atomic_store_access(a, SMTRACE_PC);                                     \
    return BUILTIN(a, v, __ATOMIC_SEQ_CST);                                     \
  }
#define SMTRACE_ATOMIC_WIDTH(T, N)                                                                           \
  SMTRACE_RT_EXPORT T __tsan_atomic##N##_load(const volatile T* a, int) {                                    \
    rt::atomic_load_access(a, SMTRACE_PC);                                                                   \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                             \
  }                                                                                                          \
  SMTRACE_RT_EXPORT void __tsan_atomic##N##_store(volatile T* a, T v, int) {                                 \
    rt::atomic_store_access(a, SMTRACE_PC);                                                                  \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                \
  }                                                                                                          \
  SMTRACE_ATOMIC_RMW(T, N, exchange, __atomic_exchange_n)                                                    \
  SMTRACE_ATOMIC_RMW(T, N, fetch_add, __atomic_fetch_add)                                                    \
  SMTRACE_ATOMIC_RMW(T, N, fetch_sub, __atomic_fetch_sub)                                                    \
  SMTRACE_ATOMIC_RMW(T, N, fetch_and, __atomic_fetch_and)                                                    \
  SMTRACE_ATOMIC_RMW(T, N, fetch_or, __atomic_fetch_or)                                                      \
  SMTRACE_ATOMIC_RMW(T, N, fetch_xor, __atomic_fetch_xor)                                                    \
  SMTRACE_ATOMIC_RMW(T, N, fetch_nand, __atomic_fetch_nand)                                                  \
  SMTRACE_RT_EXPORT int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {     \
    rt::atomic_store_access(a, SMTRACE_PC);                                                                  \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                  \
  }                                                                                                          \
  SMTRACE_RT_EXPORT int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {       \
    rt::atomic_store_access(a, SMTRACE_PC);                                                                  \
    return __atomic_compare_exchange_n(a, c, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
  }                                                                                                          \
  SMTRACE_RT_EXPORT T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, int, int) {           \
    rt::atomic_store_access(a, SMTRACE_PC);                                                                  \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                        \
    return c;                                                                                                \
  }

SMTRACE_ATOMIC_WIDTH(uint8_t, 8)
SMTRACE_ATOMIC_WIDTH(uint16_t, 16)
SMTRACE_ATOMIC_WIDTH(uint32_t, 32)
SMTRACE_ATOMIC_WIDTH(uint64_t, 64)

#if defined(__x86_64__)
// 16-byte atomics: compare-and-swap loops on cmpxchg16b (no libatomic).
namespace smtrace::tracer {
namespace {
__extension__ using a128 = unsigned __int128;
__attribute__((target("cx16"))) inline a128 cas128(volatile a128* a, a128 expected, a128 desired) {
  return __sync_val_compare_and_swap(a, expected, desired);
}
template <class Op>
__attribute__((target("cx16"))) inline a128 rmw128(volatile a128* a, Op op) {
  a128 old = cas128(a, 0, 0);
  for (;;) {
    const a128 seen = cas128(a, old, op(old));
    if (seen == old) return old;
    old = seen;
  }
}
}  // namespace
}  // namespace smtrace::tracer

#define SMTRACE_ATOMIC128_RMW(OP, EXPR)                                                     \
  SMTRACE_RT_EXPORT rt::a128 __tsan_atomic128_##OP(volatile rt::a128* a, rt::a128 v, int) { \
    rt::atomic_store_access(a, SMTRACE_PC);                                                \
    return rt::rmw128(a, [v](rt::a128 x) { return static_cast<void>(x), EXPR; });                                \
  }
SMTRACE_RT_EXPORT rt::a128 __tsan_atomic128_load(const volatile rt::a128* a, int) {
  rt::atomic_load_access(a, SMTRACE_PC);
  return rt::cas128(const_cast<volatile rt::a128*>(a), 0, 0);
}
SMTRACE_RT_EXPORT void __tsan_atomic128_store(volatile rt::a128* a, rt::a128 v, int) {
  rt::atomic_store_access(a, SMTRACE_PC);
  rt::rmw128(a, [v](rt::a128) { return v; });
}
SMTRACE_ATOMIC128_RMW(exchange, v)
SMTRACE_ATOMIC128_RMW(fetch_add, x + v)
SMTRACE_ATOMIC128_RMW(fetch_sub, x - v)
SMTRACE_ATOMIC128_RMW(fetch_and, x & v)
SMTRACE_ATOMIC128_RMW(fetch_or, x | v)
SMTRACE_ATOMIC128_RMW(fetch_xor, x ^ v)
SMTRACE_ATOMIC128_RMW(fetch_nand, ~(x & v))
SMTRACE_RT_EXPORT rt::a128 __tsan_atomic128_compare_exchange_val(volatile rt::a128* a, rt::a128 c, rt::a128 v, int,
                                                                 int) {
  rt::atomic_store_access(a, SMTRACE_PC);
  return rt::cas128(a, c, v);
}
namespace smtrace::tracer {
namespace {
__attribute__((target("cx16"))) inline int cas128_strong(volatile a128* a, a128* c, a128 v) {
  const a128 seen = cas128(a, *c, v);
  if (seen == *c) return 1;
  *c = seen;
  return 0;
}
}  // namespace
}  // namespace smtrace::tracer
SMTRACE_RT_EXPORT int __tsan_atomic128_compare_exchange_strong(volatile rt::a128* a, rt::a128* c, rt::a128 v, int,
                                                               int) {
  rt::atomic_store_access(a, SMTRACE_PC);
  return rt::cas128_strong(a, c, v);
}
SMTRACE_RT_EXPORT int __tsan_atomic128_compare_exchange_weak(volatile rt::a128* a, rt::a128* c, rt::a128 v, int,
                                                             int) {
  rt::atomic_store_access(a, SMTRACE_PC);
  return rt::cas128_strong(a, c, v);
}
#endif

SMTRACE_RT_EXPORT void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
SMTRACE_RT_EXPORT void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
