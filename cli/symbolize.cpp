// smtrace symbolize: call sites -> function, file, line, with addr2line.
//
// addr2line starts once per module (not per address): a module's DWARF is
// parsed once, whatever the number of sites. Addresses given to it are
// link-time addresses: for ET_EXEC modules the absolute address (base +
// offset), for ET_DYN ones the offset. Each is the return address minus 1,
// so that it falls inside the call instruction: the return address itself
// may already belong to the next source line (or the next function, after
// a noreturn call).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "trace_format/symbols.hpp"

extern char** environ;

namespace smtrace::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_batch = 1024;  // addresses per addr2line run (keeps argv short)

enum class ElfKind { exec, dyn };

// Return the ELF type of `path`, or nullopt when it is not a readable ELF file.
std::optional<ElfKind> elf_kind(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char header[18] = {};
  if (!file.read(reinterpret_cast<char*>(header), sizeof header)) return std::nullopt;
  if (header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') return std::nullopt;
  const bool little = header[5] == 1;
  const unsigned type = little ? header[16] | (header[17] << 8) : (header[16] << 8) | header[17];
  if (type == 2) return ElfKind::exec;  // ET_EXEC
  if (type == 3) return ElfKind::dyn;   // ET_DYN
  return std::nullopt;
}

// Return the GNU build id of the ELF64 little-endian file `path` (raw
// bytes), or an empty string when it has none or cannot be read.
std::string elf_build_id(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char header[64] = {};
  if (!file.read(reinterpret_cast<char*>(header), sizeof header)) return {};
  if (header[4] != 2 || header[5] != 1) return {};  // ELFCLASS64, ELFDATA2LSB only
  auto u16 = [](const unsigned char* p) { return static_cast<uint64_t>(p[0] | (p[1] << 8)); };
  auto u32 = [](const unsigned char* p) {
    return static_cast<uint64_t>(p[0]) | (static_cast<uint64_t>(p[1]) << 8) |
           (static_cast<uint64_t>(p[2]) << 16) | (static_cast<uint64_t>(p[3]) << 24);
  };
  auto u64 = [&](const unsigned char* p) { return u32(p) | (u32(p + 4) << 32); };
  const uint64_t phoff = u64(header + 32), phentsize = u16(header + 54), phnum = u16(header + 56);
  if (phentsize < 56 || phnum > 256) return {};
  for (uint64_t i = 0; i < phnum; ++i) {
    unsigned char phdr[56] = {};
    file.seekg(static_cast<std::streamoff>(phoff + i * phentsize));
    if (!file.read(reinterpret_cast<char*>(phdr), sizeof phdr)) return {};
    if (u32(phdr) != 4) continue;  // PT_NOTE
    const uint64_t offset = u64(phdr + 8), size = u64(phdr + 32);
    if (size > (1u << 16)) continue;
    std::string notes(size, '\0');
    file.seekg(static_cast<std::streamoff>(offset));
    if (!file.read(notes.data(), static_cast<std::streamsize>(size))) return {};
    const auto* data = reinterpret_cast<const unsigned char*>(notes.data());
    uint64_t at = 0;
    while (at + 12 <= size) {
      const uint64_t name_size = u32(data + at), desc_size = u32(data + at + 4), type = u32(data + at + 8);
      const uint64_t name_at = at + 12, desc_at = name_at + ((name_size + 3) & ~uint64_t{3});
      const uint64_t next = desc_at + ((desc_size + 3) & ~uint64_t{3});
      if (next > size) break;
      if (type == 3 && name_size == 4 && std::memcmp(data + name_at, "GNU", 4) == 0) {  // NT_GNU_BUILD_ID
        return notes.substr(desc_at, desc_size);
      }
      at = next;
    }
  }
  return {};
}

struct Symbol {
  std::string function;
  std::string file;
  uint32_t line = 0;
};

// Run addr2line on `module` for `addresses`; return one Symbol per address.
std::vector<Symbol> run_addr2line(const std::string& program, const std::string& module,
                                  const std::vector<uint64_t>& addresses) {
  std::vector<std::string> args = {program, "-f", "-C", "-e", module};
  for (uint64_t address : addresses) args.push_back(fmt::format("{:#x}", address));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw Error(fmt::format("cannot run {}: {} (it comes with binutils)", program, std::strerror(rc)));
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(out[0], buffer, sizeof buffer);
    if (got > 0) {
      text.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<Symbol> symbols(addresses.size());
  if (lines.size() != 2 * addresses.size()) return symbols;  // not the shape we asked for: know nothing
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    Symbol& symbol = symbols[i];
    if (lines[2 * i] != "??") symbol.function = lines[2 * i];
    std::string where = lines[2 * i + 1];
    if (auto cut = where.find(" (discriminator"); cut != std::string::npos) where.resize(cut);
    const auto colon = where.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string file = where.substr(0, colon);
    const std::string line = where.substr(colon + 1);
    if (file == "??" || line.empty() || line == "?" || line == "0") continue;
    try {
      symbol.line = static_cast<uint32_t>(std::stoul(line));
      symbol.file = file;
    } catch (const std::exception&) {
      symbol.line = 0;
    }
  }
  return symbols;
}

struct Wanted {
  uint32_t rank = 0;
  const format::CallSite* site = nullptr;
  uint64_t address = 0;  // what addr2line is asked
};

}  // namespace

SymbolizeResult symbolize_trace(const fs::path& dir, const std::string& addr2line) {
  const format::Trace trace = read_trace_or_throw(dir, /*symbols=*/false);
  SymbolizeResult result;

  std::map<std::string, std::vector<Wanted>> by_module;
  std::map<std::string, std::optional<ElfKind>> kinds;
  std::map<std::string, std::string> build_ids;
  for (uint32_t r = 0; r < trace.ranks.size(); ++r) {
    const format::RankTrace& rank = trace.ranks[r];
    if (!rank.present) continue;
    for (const auto& [id, site] : rank.sites) {
      const auto module = rank.modules.find(site.module);
      if (module == rank.modules.end() || module->second.path.empty()) continue;
      ++result.sites;
      const std::string& path = module->second.path;
      auto kind = kinds.find(path);
      if (kind == kinds.end()) kind = kinds.emplace(path, elf_kind(path)).first;
      if (!kind->second) continue;
      // A module rebuilt since the run would give wrong lines: skip it.
      if (!module->second.build_id.empty()) {
        auto known = build_ids.find(path);
        if (known == build_ids.end()) known = build_ids.emplace(path, elf_build_id(path)).first;
        if (!known->second.empty() && known->second != module->second.build_id) {
          if (std::find(result.changed_modules.begin(), result.changed_modules.end(), path) ==
              result.changed_modules.end()) {
            result.changed_modules.push_back(path);
          }
          continue;
        }
      }
      uint64_t address = *kind->second == ElfKind::exec ? module->second.base + site.offset : site.offset;
      if (address > 0) address -= 1;
      by_module[path].push_back({r, &site, address});
    }
  }
  for (const auto& [path, kind] : kinds) {
    if (!kind) result.missing_modules.push_back(path);
  }

  std::map<uint32_t, std::vector<format::CallSite>> out;
  for (const auto& [path, wanted] : by_module) {
    ++result.modules;
    std::set<uint64_t> unique;
    for (const Wanted& want : wanted) unique.insert(want.address);
    const std::vector<uint64_t> addresses(unique.begin(), unique.end());
    std::map<uint64_t, Symbol> symbols;
    for (std::size_t first = 0; first < addresses.size(); first += k_batch) {
      const std::vector<uint64_t> batch(addresses.begin() + static_cast<std::ptrdiff_t>(first),
                                        addresses.begin() + static_cast<std::ptrdiff_t>(std::min(first + k_batch, addresses.size())));
      const std::vector<Symbol> found = run_addr2line(addr2line, path, batch);
      for (std::size_t i = 0; i < batch.size(); ++i) symbols[batch[i]] = found[i];
    }
    for (const Wanted& want : wanted) {
      const Symbol& symbol = symbols[want.address];
      format::CallSite site = *want.site;
      // Keep what the tracer knew where addr2line knows nothing.
      if (!symbol.function.empty()) site.function = symbol.function;
      if (!symbol.file.empty()) {
        site.file = symbol.file;
        site.line = symbol.line;
        ++result.resolved;
      }
      if (site != *want.site) out[want.rank].push_back(site);
    }
  }
  format::write_symbols(dir, out);
  return result;
}

int run_symbolize(const SymbolizeOptions& options) {
  const SymbolizeResult result = symbolize_trace(options.dir, options.addr2line);
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
