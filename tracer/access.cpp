#include "tracer/access.hpp"

#include <dlfcn.h>

#include <atomic>
#include <vector>

#include "tracer/handlers.hpp"
#include "tracer/tables.hpp"

namespace smtrace::tracer::access {

using format::Event;
using format::RequestEffect;
using format::Resource;

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
  const format::CallTraits& t = format::call_traits(e.call);
  std::vector<Range> ranges;
  buffer_ranges(e, comm, extent_of, ranges);
  std::vector<uint64_t> done;
  for (const format::CompletedRequest& r : e.completed) done.push_back(r.request);
  const format::EpochStep step = format::epoch_step(format::epoch_of(e));

  SpinGuard<SpinLock> lock(g->lock);
  WatchSet& w = g->watch;
  bool changed = !done.empty();
  switch (t.resource) {
    case Resource::win_new: case Resource::win_dynamic: case Resource::win_attach:
      w.window_memory(e.window, e.win_base, e.win_size);
      changed = true;
      break;
    case Resource::win_detach:
      w.window_detach(e.window, e.win_base);
      changed = true;
      break;
    case Resource::win_free:
      w.window_free(e.window);
      changed = true;
      break;
    case Resource::none: case Resource::comm_new: case Resource::comm_free: case Resource::group_new:
    case Resource::group_free: case Resource::type_new: case Resource::type_commit: case Resource::type_free:
    case Resource::op_new: case Resource::op_free: case Resource::message_new: case Resource::message_free:
    case Resource::buffer_attach: case Resource::buffer_detach: case Resource::info_new: case Resource::info_free:
      break;
  }
  if (step.completes != format::Completion::none) {
    w.rma_completed(e.window, step.all_targets ? std::nullopt : e.peer);
    changed = true;
  }
  if (t.role == format::Role::rma_comm) {
    // Origin buffers until the epoch (or the request) completes them; none
    // for MPI_PROC_NULL (format::call_buffers).
    if (!ranges.empty()) w.rma_started(e.window, e.peer.value_or(-1), e.request, ranges);
    changed = true;
  } else {
    switch (t.request) {
      case RequestEffect::create:  // non-blocking point-to-point and collectives
        if (e.request != 0 && !ranges.empty()) {
          w.request_started(e.request, ranges, t.role == format::Role::send);
          changed = true;
        }
        break;
      case RequestEffect::persistent:
        w.persistent_defined(e.request, ranges, t.role == format::Role::send);
        changed = true;
        break;
      case RequestEffect::start:
        if (e.requests.empty()) w.request_started(e.request, {});
        for (uint64_t r : e.requests) w.request_started(r, {});
        changed = true;
        break;
      case RequestEffect::free:
        w.request_freed(e.request);
        changed = true;
        break;
      case RequestEffect::query:  // MPI_Request_get_status: flag true, the operation is complete
        if (e.flag.value_or(false) && e.request != 0) done.push_back(e.request);
        changed = changed || !done.empty();
        break;
      case RequestEffect::none: case RequestEffect::complete_all: case RequestEffect::complete_any:
      case RequestEffect::complete_some: case RequestEffect::cancel:
        break;
    }
  }
  if (!changed) return;  // no publish
  w.requests_completed(done);
  publish(api);
}

void flush_thread(void (*write)(const smtrace_access_run* run, void* context), void* context) noexcept {
  if (const smtrace_access_runtime_api* api = g->api.load(std::memory_order_acquire); api)
    api->flush_thread(write, context);
}

uint32_t flush_all(void (*write)(const smtrace_access_run* run, uint64_t tag, void* context), void* context) noexcept {
  const smtrace_access_runtime_api* api = g->api.load(std::memory_order_acquire);
  return api ? api->flush_all(write, context) : 0;
}

void set_tag(uint64_t tag) noexcept {
  if (const smtrace_access_runtime_api* api = g->api.load(std::memory_order_acquire)) api->set_tag(tag);
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
