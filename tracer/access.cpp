#include "tracer/access.hpp"

#include <dlfcn.h>

#include <atomic>
#include <vector>

#include "tracer/handlers.hpp"
#include "tracer/tables.hpp"

namespace smtrace::tracer::access {

using format::Call;
using format::Event;

namespace {

struct State {
  std::atomic<const smtrace_access_runtime_api*> api{nullptr};
  smtrace_access_tracer tracer{};
  SpinLock lock;  // the watch set and publishing
  WatchSet watch;
  std::vector<smtrace_access_range> published;
};
State* g = new State;  // never destroyed: threads may still exit after static destructors

void record(const smtrace_access_run* run) { handlers::on_access_run(*run); }
int busy() { return handlers::in_wrapper() ? 1 : 0; }
int64_t now() { return handlers::now(); }

// Publish the watch set's union; the lock is held.
void publish(const smtrace_access_runtime_api* api) {
  const std::vector<Range>& ranges = g->watch.ranges();
  g->published.resize(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i)
    g->published[i] = {static_cast<uintptr_t>(ranges[i].lo), static_cast<uintptr_t>(ranges[i].hi)};
  api->publish(g->published.data(), g->published.size());
}

bool is_rma_operation(Call c) {
  switch (c) {
    case Call::Put: case Call::Get: case Call::Accumulate: case Call::Get_accumulate: case Call::Fetch_and_op:
    case Call::Compare_and_swap: case Call::Rput: case Call::Rget: case Call::Raccumulate:
    case Call::Rget_accumulate:
      return true;
    default:
      return false;
  }
}

bool is_persistent_init(Call c) {
  return c == Call::Send_init || c == Call::Bsend_init || c == Call::Ssend_init || c == Call::Rsend_init ||
         c == Call::Recv_init;
}

}  // namespace

bool attach_to(const smtrace_access_runtime_api* api, uint32_t frames) {
  if (const smtrace_access_runtime_api* old = g->api.exchange(nullptr); old) old->attach(nullptr);
  if (!api || api->abi != k_smtrace_access_abi) return false;
  {
    SpinGuard<SpinLock> lock(g->lock);
    g->watch = WatchSet();
    publish(api);
  }
  g->tracer.abi = k_smtrace_access_abi;
  g->tracer.frames = frames < k_smtrace_access_frames ? frames : k_smtrace_access_frames;
  g->tracer.record = record;
  g->tracer.busy = busy;
  g->tracer.now = now;
  api->attach(&g->tracer);
  g->api.store(api, std::memory_order_release);
  return true;
}

bool attach(uint32_t frames) {
  using Get = const smtrace_access_runtime_api* (*)();
  auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "smtrace_access_runtime"));
  return get && attach_to(get(), frames);
}

void detach() {
  const smtrace_access_runtime_api* api = g->api.exchange(nullptr);
  if (!api) return;
  SpinGuard<SpinLock> lock(g->lock);
  g->watch = WatchSet();
  publish(api);
  api->attach(nullptr);
}

bool attached() noexcept { return g->api.load(std::memory_order_relaxed) != nullptr; }

void after_call(const Event& e, const CommFacts& comm, const ExtentOf& extent_of) {
  const smtrace_access_runtime_api* api = g->api.load(std::memory_order_acquire);
  if (!api) return;
  const Call c = e.call;
  std::vector<Range> ranges;
  buffer_ranges(e, comm, extent_of, ranges);
  std::vector<uint64_t> done;
  for (const format::CompletedRequest& r : e.completed) done.push_back(r.request);

  SpinGuard<SpinLock> lock(g->lock);
  WatchSet& w = g->watch;
  switch (c) {
    case Call::Win_create: case Call::Win_allocate: case Call::Win_allocate_shared: case Call::Win_attach:
      w.window_memory(e.window, e.win_base, e.win_size);
      break;
    case Call::Win_detach:
      w.window_detach(e.window, e.win_base);
      break;
    case Call::Win_free:
      w.window_free(e.window);
      break;
    case Call::Win_flush: case Call::Win_flush_local: case Call::Win_unlock:
      w.rma_completed(e.window, e.peer);
      break;
    case Call::Win_flush_all: case Call::Win_flush_local_all: case Call::Win_unlock_all: case Call::Win_fence:
    case Call::Win_complete:
      w.rma_completed(e.window, std::nullopt);
      break;
    case Call::Start:
      w.request_started(e.request, {});
      break;
    case Call::Startall:
      for (uint64_t r : e.requests) w.request_started(r, {});
      break;
    case Call::Request_free:
      w.request_freed(e.request);
      break;
    default:
      if (is_rma_operation(c)) {
        if (e.peer != format::k_proc_null) w.rma_started(e.window, e.peer.value_or(-1), e.request, ranges);
      } else if (is_persistent_init(c)) {
        w.persistent_defined(e.request, ranges);
      } else if (e.request != 0 && !ranges.empty()) {
        w.request_started(e.request, ranges);  // non-blocking point-to-point and collectives
      } else if (done.empty()) {
        return;  // nothing changed: no publish
      }
      break;
  }
  w.requests_completed(done);
  publish(api);
}

void flush_thread(void (*write)(const smtrace_access_run* run, void* context), void* context) noexcept {
  if (const smtrace_access_runtime_api* api = g->api.load(std::memory_order_acquire); api)
    api->flush_thread(write, context);
}

std::size_t shadow_stack(uintptr_t* out, std::size_t max) noexcept {
  const smtrace_access_runtime_api* api = g->api.load(std::memory_order_acquire);
  return api ? api->stack(out, max) : 0;
}

std::vector<Range> watched() {
  SpinGuard<SpinLock> lock(g->lock);
  return g->watch.ranges();
}

}  // namespace smtrace::tracer::access
