// smtrace symbolize: call sites -> function, file, line, read from each
// module's DWARF in process with elfutils (libdwfl).
//
// Each module is opened once, whatever the number of its sites. Addresses
// are link-time addresses: for ET_EXEC modules the absolute address (base +
// offset), for ET_DYN ones the offset; libdwfl lays the module out at a bias
// that is added to them. Each is the return address minus 1, so that it falls
// inside the call instruction: the return address itself may already belong
// to the next source line (or the next function, after a noreturn call).
//
// Each address is looked up in its compilation unit (through .debug_aranges,
// else the units' own address ranges), file and line from the unit's line
// table row of that address, which is the innermost source position: a call inside a function defined in a header
// (inlined or not) gets the header's file and line. The function is the
// innermost scope that holds the address: the inlined subroutine when the
// call was inlined, else the subprogram. binutils' addr2line 2.40 misreads
// GCC 12's DWARF 5 line tables in programs of several compilation units (a
// header's line given the .c file's name); libdw reads them right.
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "trace_format/reader.hpp"
#include "trace_format/symbols.hpp"

namespace smtrace::cli {

namespace fs = std::filesystem;

namespace {

struct Symbol {
  std::string function;
  std::string file;
  uint32_t line = 0;
};

// Return `name` demangled when it is a mangled C++ name, else as it is.
std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                    &std::free);
  return status == 0 && plain ? std::string(plain.get()) : std::string(name);
}

// Return the name of subprogram or inlined-subroutine `die`: its linkage
// name demangled (qualified, with parameters, as addr2line -C prints it) or
// else its plain name, looked up through DW_AT_abstract_origin and
// DW_AT_specification; empty when it has none.
std::string scope_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name, &attr) != nullptr) {
      if (const char* text = dwarf_formstring(&attr)) return demangle(text);
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr) {
    if (const char* text = dwarf_formstring(&attr)) return text;
  }
  return {};
}

// One ELF module opened with libdwfl; its DWARF is read on first use.
class DwarfModule {
 public:
  // Open `path`; return nullptr when it is missing or not an ELF file.
  static std::unique_ptr<DwarfModule> open(const std::string& path) {
    auto module = std::unique_ptr<DwarfModule>(new DwarfModule());
    module->m_dwfl = dwfl_begin(&k_callbacks);
    if (module->m_dwfl == nullptr) return nullptr;
    // dwfl_report_offline takes the descriptor over (closes it in dwfl_end).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    module->m_module = dwfl_report_offline(module->m_dwfl, path.c_str(), path.c_str(), fd);
    dwfl_report_end(module->m_dwfl, nullptr, nullptr);
    if (module->m_module == nullptr) return nullptr;
    Elf* elf = dwfl_module_getelf(module->m_module, &module->m_bias);
    GElf_Ehdr header;
    if (elf == nullptr || gelf_getehdr(elf, &header) == nullptr) return nullptr;
    if (header.e_type != ET_EXEC && header.e_type != ET_DYN) return nullptr;
    module->m_exec = header.e_type == ET_EXEC;
    const void* id = nullptr;
    const int size = dwelf_elf_gnu_build_id(elf, &id);
    if (size > 0) module->m_build_id.assign(static_cast<const char*>(id), static_cast<std::size_t>(size));
    return module;
  }

  ~DwarfModule() {
    if (m_dwfl != nullptr) dwfl_end(m_dwfl);
  }
  DwarfModule(const DwarfModule&) = delete;
  DwarfModule& operator=(const DwarfModule&) = delete;

  // Return true for ET_EXEC (looked up by absolute address), false for ET_DYN.
  bool exec() const { return m_exec; }
  // Return the GNU build id (raw bytes), empty when it has none.
  const std::string& build_id() const { return m_build_id; }

  // Return what the DWARF says of link-time address `address` (empty
  // fields where it says nothing).
  Symbol resolve(uint64_t address) {
    Symbol symbol;
    const Dwarf_Addr at = address + m_bias;
    Dwarf_Addr cu_bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(m_module, at, &cu_bias);
    if (cu == nullptr) cu = compile_unit(at, cu_bias);
    if (cu != nullptr) {
      const Dwarf_Addr in_dwarf = at - cu_bias;
      if (Dwarf_Line* row = dwarf_getsrc_die(cu, in_dwarf)) {
        int line = 0;
        const char* file = dwarf_linesrc(row, nullptr, nullptr);
        if (file != nullptr && dwarf_lineno(row, &line) == 0 && line > 0) {
          // A name relative to the compilation directory becomes absolute,
          // as addr2line printed it, so that reports can find the source.
          fs::path path(file);
          Dwarf_Attribute attr;
          if (path.is_relative()) {
            if (const char* dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)); dir != nullptr && *dir != '\0') {
              path = fs::path(dir) / path;
            }
          }
          symbol.file = path.lexically_normal().string();
          symbol.line = static_cast<uint32_t>(line);
        }
      }
      Dwarf_Die* scopes = nullptr;
      const int count = dwarf_getscopes(cu, in_dwarf, &scopes);
      for (int i = 0; i < count && symbol.function.empty(); ++i) {
        const int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) symbol.function = scope_name(&scopes[i]);
      }
      std::free(scopes);
    }
    if (symbol.function.empty()) {
      // No DWARF for this address: the ELF symbol table may still name it.
      if (const char* name = dwfl_module_addrname(m_module, at)) symbol.function = demangle(name);
    }
    return symbol;
  }

 private:
  DwarfModule() = default;

  // Return the compilation unit whose address ranges hold `module_address`
  // and set `bias` to what to subtract for the DWARF's addresses; nullptr
  // when none does. The fallback where libdwfl finds
  // none, since libdwfl 0.188 finds units only through .debug_aranges,
  // which clang does not emit. The units' ranges (DW_AT_low_pc/high_pc or
  // DW_AT_ranges) are indexed on first use.
  Dwarf_Die* compile_unit(Dwarf_Addr module_address, Dwarf_Addr& bias) {
    if (!m_indexed) index_units();
    bias = m_dwarf_bias;
    const Dwarf_Addr address = module_address - m_dwarf_bias;
    auto it = std::upper_bound(m_ranges.begin(), m_ranges.end(), address,
                               [](Dwarf_Addr a, const UnitRange& r) { return a < r.low; });
    while (it != m_ranges.begin()) {
      --it;
      if (address < it->high) return &m_units[it->unit];
      if (it->low + m_longest <= address) break;  // no earlier range reaches this far
    }
    return nullptr;
  }

  void index_units() {
    m_indexed = true;
    Dwarf* dwarf = dwfl_module_getdwarf(m_module, &m_dwarf_bias);
    if (dwarf == nullptr) return;
    Dwarf_Off offset = 0, next = 0;
    size_t header = 0;
    while (dwarf_nextcu(dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die unit;
      if (dwarf_offdie(dwarf, offset + header, &unit) != nullptr) {
        const std::size_t index = m_units.size();
        m_units.push_back(unit);
        Dwarf_Addr base = 0, low = 0, high = 0;
        for (ptrdiff_t at = 0; (at = dwarf_ranges(&m_units[index], at, &base, &low, &high)) > 0;) {
          if (high > low) {
            m_ranges.push_back({low, high, index});
            m_longest = std::max(m_longest, high - low);
          }
        }
      }
      offset = next;
    }
    std::sort(m_ranges.begin(), m_ranges.end(), [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  }

  struct UnitRange {
    Dwarf_Addr low;
    Dwarf_Addr high;
    std::size_t unit;  // index into m_units
  };

  static char* s_debuginfo_path;
  static const Dwfl_Callbacks k_callbacks;

  Dwfl* m_dwfl = nullptr;
  Dwfl_Module* m_module = nullptr;
  Dwarf_Addr m_bias = 0;
  bool m_exec = false;
  std::string m_build_id;
  bool m_indexed = false;
  Dwarf_Addr m_dwarf_bias = 0;
  std::vector<Dwarf_Die> m_units;
  std::vector<UnitRange> m_ranges;
  Dwarf_Addr m_longest = 0;
};

// Separate debug info is looked for where the distribution puts it
// (/usr/lib/debug, .build-id links), as dwfl_standard_find_debuginfo does
// with the default path.
char* DwarfModule::s_debuginfo_path = nullptr;
const Dwfl_Callbacks DwarfModule::k_callbacks = {
    dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address,
    &DwarfModule::s_debuginfo_path};

// What symbolization needs of a rank file.
struct RankSites {
  bool present = false;
  std::map<uint32_t, format::CallSite> sites;
  std::map<uint32_t, format::Module> modules;
};

struct Wanted {
  uint32_t rank = 0;
  const format::CallSite* site = nullptr;
  uint64_t address = 0;  // the link-time address looked up
};

}  // namespace

SymbolizeResult symbolize_trace(const fs::path& dir, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  // Only the call sites and modules are kept: the events of a large trace
  // are read past, a rank at a time.
  const format::TraceFiles files = format::find_trace_files(dir);
  std::vector<RankSites> ranks(files.rank_files.size());
  for (std::size_t i = 0; i < files.present.size(); ++i) {
    const uint32_t r = files.present[i];
    say(fmt::format("symbolize: reading rank {}/{}", i + 1, files.present.size()));
    RankSites& rank = ranks[r];
    format::RankReader reader(files.rank_files[r], format::recovered_version(files));
    format::RankReader::Callbacks callbacks;
    callbacks.site = [&](const format::CallSite& site) { rank.sites[site.id] = site; };
    callbacks.module = [&](const format::Module& module) { rank.modules[module.id] = module; };
    if (reader.header(callbacks)) {
      rank.present = true;
      reader.read_all(callbacks);
    }
  }
  SymbolizeResult result;

  // Modules by path, opened once; nullptr when missing or not ELF.
  std::map<std::string, std::unique_ptr<DwarfModule>> modules;
  std::map<std::string, std::vector<Wanted>> by_module;
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    const RankSites& rank = ranks[r];
    if (!rank.present) continue;
    for (const auto& [id, site] : rank.sites) {
      const auto module = rank.modules.find(site.module);
      if (module == rank.modules.end() || module->second.path.empty()) continue;
      ++result.sites;
      const std::string& path = module->second.path;
      auto opened = modules.find(path);
      if (opened == modules.end()) opened = modules.emplace(path, DwarfModule::open(path)).first;
      DwarfModule* dwarf = opened->second.get();
      if (dwarf == nullptr) continue;
      // A module rebuilt since the run would give wrong lines: skip it.
      if (!module->second.build_id.empty() && !dwarf->build_id().empty() &&
          dwarf->build_id() != module->second.build_id) {
        if (std::find(result.changed_modules.begin(), result.changed_modules.end(), path) ==
            result.changed_modules.end()) {
          result.changed_modules.push_back(path);
        }
        continue;
      }
      uint64_t address = dwarf->exec() ? module->second.base + site.offset : site.offset;
      if (address > 0) address -= 1;
      by_module[path].push_back({r, &site, address});
    }
  }
  for (const auto& [path, dwarf] : modules) {
    if (!dwarf) result.missing_modules.push_back(path);
  }

  uint64_t total = 0, done = 0;
  for (const auto& [path, wanted] : by_module) total += wanted.size();
  std::map<uint32_t, std::vector<format::CallSite>> out;
  for (const auto& [path, wanted] : by_module) {
    ++result.modules;
    DwarfModule& dwarf = *modules.at(path);
    std::map<uint64_t, Symbol> symbols;  // the same address on many ranks is looked up once
    for (const Wanted& want : wanted) {
      auto found = symbols.find(want.address);
      if (found == symbols.end()) found = symbols.emplace(want.address, dwarf.resolve(want.address)).first;
      const Symbol& symbol = found->second;
      format::CallSite site = *want.site;
      // Keep what the tracer knew where the DWARF knows nothing.
      if (!symbol.function.empty()) site.function = symbol.function;
      if (!symbol.file.empty()) {
        site.file = symbol.file;
        site.line = symbol.line;
        ++result.resolved;
      }
      if (site != *want.site) out[want.rank].push_back(site);
      if (++done % 256 == 0) say(fmt::format("symbolizing {}/{} call sites", done, total));
    }
  }
  format::write_symbols(dir, out);
  return result;
}

int run_symbolize(const SymbolizeOptions& options) {
  Progress progress(options.quiet ? Quiet::yes : Quiet::no);
  const SymbolizeResult result = symbolize_trace(options.dir, progress.callback());
  progress.clear();
  for (const std::string& module : result.changed_modules) {
    warn(fmt::format("{}: build id differs from the traced module (rebuilt since the run?); its call sites "
                     "keep what the tracer recorded", module));
  }
  for (const std::string& module : result.missing_modules) {
    warn(fmt::format("{}: module not found or not an ELF file; its call sites keep what the tracer recorded", module));
  }
  if (!options.quiet) {
    fmt::print(stderr, "smtrace: {} of {} call sites resolved to file:line in {} module(s); wrote {}\n",
               result.resolved, result.sites, result.modules, (options.dir / format::k_symbols_file).string());
  }
  return k_exit_ok;
}

}  // namespace smtrace::cli
