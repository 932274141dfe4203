// Tracer options, read from SMTRACE_* environment variables
// (docs/tracer.md lists them with their defaults).
//
// Thread safety: parse_options is reentrant; an Options value is read-only
// after tracing starts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "trace_format/event.hpp"

namespace smtrace::tracer {

// SMTRACE_THREADS: whether thread synchronization (pthreads, OpenMP) is
// recorded. automatic: when the load/store runtime is attached or MPI
// provides MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE.
enum class ThreadTracking : uint8_t { automatic, on, off };

// SMTRACE_HASH_BYTES's default (docs/tracer.md "Content check of pending
// send buffers": what hashing more costs per operation).
inline constexpr uint64_t content_hash_default = 4096;

struct Options {
  std::string dir = "smtrace-trace";  // SMTRACE_DIR
  uint32_t chunk_bytes = 64 * 1024;   // SMTRACE_BUFFER
  uint32_t families = ~0u;            // SMTRACE_FAMILIES: bit (1 << Family)
  uint32_t stack_depth = 1;           // SMTRACE_STACK_DEPTH
  bool disable = false;               // SMTRACE_DISABLE
  bool fold_polls = true;             // SMTRACE_FOLD_POLLS
  bool quiet = false;                 // SMTRACE_QUIET
  bool grow_ahead = true;             // SMTRACE_GROW_AHEAD (Recorder::start_grow_ahead)
  bool counter_clock = true;          // SMTRACE_CLOCK: counter (true) or monotonic
  bool hash = true;                   // SMTRACE_HASH: the content check of pending send buffers
  uint64_t hash_bytes = content_hash_default;  // SMTRACE_HASH_BYTES: bytes hashed per operation (beyond: a sample)
  ThreadTracking threads = ThreadTracking::automatic;  // SMTRACE_THREADS
  std::string force;                  // SMTRACE_FORCE: RANK:N=SOURCE,... (trace_format/force.hpp)
  std::string families_text = "all";
  std::string problems;               // "; "-separated complaints about values

  // Return true when calls of `family` are recorded.
  bool records(format::Family family) const {
    return (families >> static_cast<unsigned>(family)) & 1u;
  }
  // Return the options in force as the RankHeader's options map.
  std::map<std::string, std::string> to_map() const;
};

// Return the options described by `getenv` (a getenv-like lookup returning
// nullptr for unset variables); bad values keep their defaults and are
// described in Options::problems.
Options parse_options(const std::function<const char*(const char*)>& getenv);

// Return the family mask for a SMTRACE_FAMILIES value such as "all",
// "p2p,coll,rma" or "all,-type"; append unknown words to `problems`.
uint32_t parse_families(const std::string& text, std::string& problems);

}  // namespace smtrace::tracer
