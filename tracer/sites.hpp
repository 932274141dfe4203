// Call sites: each distinct return address gets a CallSite id once; on first
// sight the loaded object holding it becomes a Module record (path, load
// base, GNU build id from its PT_NOTE) and the address a CallSite record
// {module, offset = address - base, function = dladdr's symbol if any}, both
// written before the first event that uses them.
//
// Thread safety: none inside; the tracer uses it under its global lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracer/recorder.hpp"
#include "tracer/tables.hpp"

namespace smtrace::tracer {

class SiteTable {
 public:
  // Return the CallSite id of `address` (0 for a null address), writing
  // the Module and CallSite records to `recorder` on first sight.
  // Inline: every recorded call asks, and nearly always finds its site.
  uint32_t id(uintptr_t address, Recorder& recorder) {
    uint32_t found = 0;
    if (address >= 2 && m_sites.find(address, found)) [[likely]]
      return found;
    return add(address, recorder);
  }
  // Return the number of distinct sites seen.
  std::size_t size() const { return m_sites.size(); }

 private:
  struct ModuleEntry {
    uint32_t id;
    uint64_t base;
    std::string path;
  };
  // id() of an address not seen yet (0 for a null address).
  uint32_t add(uintptr_t address, Recorder& recorder);
  uint32_t module_id(uintptr_t address, uint64_t& base, Recorder& recorder);

  HandleMap<uint32_t, NoLock> m_sites;  // under the tracer's lock
  std::vector<ModuleEntry> m_modules;
  uint32_t m_next_site = 1;
};

// Return the GNU build id (raw bytes) of the object loaded at `base` with
// program headers `phdr` (an ElfW(Phdr) array of `count`), or "".
std::string build_id_of(uintptr_t base, const void* phdr, unsigned count);

}  // namespace smtrace::tracer
