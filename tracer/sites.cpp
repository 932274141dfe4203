#include "tracer/sites.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>

namespace smtrace::tracer {

std::string build_id_of(uintptr_t base, const void* phdrs, unsigned count) {
  auto ph = static_cast<const ElfW(Phdr)*>(phdrs);
  for (unsigned i = 0; i < count; ++i) {
    if (ph[i].p_type != PT_NOTE) continue;
    auto p = reinterpret_cast<const unsigned char*>(base + ph[i].p_vaddr);
    auto end = p + ph[i].p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const unsigned char* name = p + sizeof n;
      const unsigned char* desc = name + ((n.n_namesz + 3) & ~3u);
      if (desc + n.n_descsz > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return std::string(reinterpret_cast<const char*>(desc), n.n_descsz);
      p = desc + ((n.n_descsz + 3) & ~3u);
    }
  }
  return {};
}

namespace {

struct Lookup {
  uintptr_t address = 0;
  bool found = false;
  uint64_t base = 0;
  std::string path;
  std::string build_id;
};

int find_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<Lookup*>(data);
  for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (q->address >= lo && q->address < lo + ph.p_memsz) {
      q->found = true;
      q->base = info->dlpi_addr;
      q->path = info->dlpi_name ? info->dlpi_name : "";
      q->build_id = build_id_of(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
      return 1;
    }
  }
  return 0;
}

}  // namespace

uint32_t SiteTable::module_id(uintptr_t address, uint64_t& base, Recorder& recorder) {
  Lookup q;
  q.address = address;
  dl_iterate_phdr(find_object, &q);
  if (!q.found) return 0;
  base = q.base;
  for (const auto& m : m_modules)
    if (m.base == q.base && m.path == q.path) return m.id;  // path as dl_iterate_phdr gives it
  std::string raw = q.path;
  if (q.path.empty()) {  // the main program
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) q.path.assign(buf, static_cast<size_t>(n));
  }
  auto id = static_cast<uint32_t>(m_modules.size() + 1);
  m_modules.push_back({id, q.base, raw});
  recorder.module(format::Module{id, q.path, q.base, q.build_id});
  return id;
}

uint32_t SiteTable::add(uintptr_t address, Recorder& recorder) {
  if (address < 2) return 0;
  format::CallSite site;
  site.id = m_next_site++;
  uint64_t base = 0;
  site.module = module_id(address, base, recorder);
  site.offset = site.module ? address - base : address;
  Dl_info info{};
  // The return address points after the call; address - 1 stays inside
  // the calling function even when the call is its last instruction.
  if (dladdr(reinterpret_cast<void*>(address - 1), &info) && info.dli_sname) site.function = info.dli_sname;
  recorder.site(site);
  m_sites.insert(address, site.id);
  return site.id;
}

}  // namespace smtrace::tracer
