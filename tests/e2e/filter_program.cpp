// Compiled by filter_pass_test.sh with clang++ and smtrace's pass plugin
// (tracer/filter/llvm_pass.cpp), linked against libsmtrace_tsan.so: a fake
// tracer attaches to the real runtime (tracer/access_abi.hpp), publishes
// watched ranges and collects the runs the instrumented code records.
// Exit status 0 when every expectation holds; each failure is printed.
#include <cstdio>
#include <cstring>

#include "tracer/access_abi.hpp"

namespace {

int g_failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "filter_program: FAIL: %s\n", what);
    ++g_failures;
  }
}

// The runs written by flush_thread: total bytes and kinds.
struct Seen {
  unsigned long loads = 0, stores = 0;  // bytes
  int runs = 0;
};
Seen g_seen;
void record(const smtrace_access_run* run) {
  (run->kind == smtrace_access_store ? g_seen.stores : g_seen.loads) += run->size * run->count;
  ++g_seen.runs;
}
void write(const smtrace_access_run* run, void*) { record(run); }
int busy() { return 0; }
int64_t now() { return 0; }

double g_window[1024];
double g_other[1024];

// Vectorizable at -O2; the plugin instruments after the vectorizer.
__attribute__((noinline)) void add(double* out, const double* a, const double* b, int n) {
  for (int i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
__attribute__((noinline)) void copy(void* d, const void* s, unsigned long n) { std::memcpy(d, s, n); }
__attribute__((noinline)) int local_only(int n) {
  int tmp[64];  // never escapes: never watched, not instrumented
  for (int i = 0; i < 64; ++i) tmp[i] = i * n;
  int s = 0;
  for (int i = 0; i < 64; ++i) s += tmp[i];
  return s;
}

Seen take(const smtrace_access_runtime_api* api) {
  g_seen = Seen();
  api->flush_thread(write, nullptr);
  return g_seen;
}

}  // namespace

int main() {
  const smtrace_access_runtime_api* api = smtrace_access_runtime();
  static const smtrace_access_tracer tracer = {k_smtrace_access_abi, 8, record, busy, now};
  api->attach(&tracer);
  expect(smtrace_access_watch_hull.lo == 0 && smtrace_access_watch_hull.hi == 0, "hull empty before any publish");

  // Nothing watched: nothing recorded.
  add(g_window, g_other, g_other, 1024);
  Seen s = take(api);
  expect(s.runs == 0, "no runs while nothing is watched");

  // The window watched: its 1024 stores, and not the loads of g_other.
  const smtrace_access_range window = {reinterpret_cast<uintptr_t>(g_window),
                                       reinterpret_cast<uintptr_t>(g_window + 1024)};
  api->publish(&window, 1);
  expect(smtrace_access_watch_hull.lo == window.lo - 15 && smtrace_access_watch_hull.hi == window.hi,
         "hull = [first byte - 15, end)");
  add(g_window, g_other, g_other, 1024);
  s = take(api);
  expect(s.stores == sizeof g_window, "every store into the watched window recorded");
  expect(s.loads == 0 || reinterpret_cast<uintptr_t>(g_other) + sizeof g_other > window.lo - 16,
         "loads outside the hull not recorded");
  // Loads of the window (a and b): 2 x 8 KiB, and stores into g_other: none.
  add(g_other, g_window, g_window, 1024);
  s = take(api);
  expect(s.loads == 2 * sizeof g_window, "every load of the watched window recorded");
  expect(s.stores == 0 || reinterpret_cast<uintptr_t>(g_other) < window.hi, "stores outside not recorded");

  // memcpy into the window: a store run of the copied bytes.
  copy(g_window + 10, g_other, 100);
  s = take(api);
  expect(s.stores == 100, "memcpy into the window recorded as 100 stored bytes");

  expect(local_only(3) == 3 * 2016, "local_only computes");
  s = take(api);
  expect(s.runs == 0, "a local array is not recorded");

  // Unwatched again: nothing.
  api->publish(nullptr, 0);
  expect(smtrace_access_watch_hull.lo == 0 && smtrace_access_watch_hull.hi == 0, "hull empty after the last range");
  add(g_window, g_other, g_other, 1024);
  s = take(api);
  expect(s.runs == 0, "no runs after the watch set emptied");
  api->attach(nullptr);
  if (g_failures == 0) std::puts("filter_program: ok");
  return g_failures == 0 ? 0 : 1;
}
