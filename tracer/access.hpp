// The tracer's side of load/store capture: finding the load/store runtime
// (libsmtrace_tsan.so, in programs compiled by smtrace-cc), telling it which
// ranges to watch after each traced MPI call, and handing its runs to the
// handlers, which write them as Load/Store events.
//
// Nothing here needs MPI: the MPI layer passes the traced call's Event and
// two lookups (the rank's place in the communicator, datatype extents).
// Without the runtime every function returns at its first test.
//
// Thread safety: all functions are thread safe; changes to the watch set
// are serialized by one lock and published to the runtime under it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/access_abi.hpp"
#include "tracer/watch.hpp"
#include "trace_format/event.hpp"

namespace smtrace::tracer::access {

// Look up the runtime in the process (dlsym) and attach to it, asking for
// `frames` outer frames per run; return true when attached. Not thread
// safe: called once, from the tracer's start.
bool attach(uint32_t frames);
// Attach to `api` instead (unit tests: a fake runtime); nullptr detaches.
bool attach_to(const smtrace_access_runtime_api* api, uint32_t frames);
// Detach: publish an empty watch set and stop recording (tracing ended).
void detach();
// Return true while attached.
bool attached() noexcept;

// Update the watch set after the traced call `e` returned MPI_SUCCESS:
// window memory (Win_create, Win_allocate*, Win_attach, Win_detach,
// Win_free), pending one-sided operations and their completion (flush,
// unlock, fence, complete), non-blocking and persistent requests and their
// completion (Start*, Wait*, Test*, Request_free). `comm` is the rank's
// place in e.comm (used by rooted non-blocking collectives).
void after_call(const format::Event& e, const CommFacts& comm, const ExtentOf& extent_of);

// Write this thread's open runs through `write` (the caller holds the
// tracer's lock and writes them as events).
void flush_thread(void (*write)(const smtrace_access_run* run, void* context), void* context) noexcept;
// Write every thread's open runs through `write(run, tag)` (tag: set_tag's,
// 0 for a thread never tagged; the caller holds the tracer's lock); return
// how many threads' runs could not be taken (0 without a runtime).
uint32_t flush_all(void (*write)(const smtrace_access_run* run, uint64_t tag, void* context), void* context) noexcept;
// Tag this thread's runs with `tag` for flush_all.
void set_tag(uint64_t tag) noexcept;
// Copy up to `max` frames of this thread's shadow stack to `out`; return
// how many (0: no runtime, or no instrumented frame on this thread).
std::size_t shadow_stack(uintptr_t* out, std::size_t max) noexcept;

// Return a copy of the watched ranges (unit tests).
std::vector<Range> watched();

}  // namespace smtrace::tracer::access
