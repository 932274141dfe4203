#include "cli/common.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <system_error>

#include <fmt/core.h>

#include "analyzer/report.hpp"
#include "smt_encoder/prove.hpp"

namespace smtrace::cli {

namespace fs = std::filesystem;

std::vector<analyzer::RuleInfo> all_check_rules() {
  std::vector<analyzer::RuleInfo> rules = analyzer::check_rules();
  for (analyzer::RuleInfo& rule : smt::check_rules()) rules.push_back(std::move(rule));
  return rules;
}

std::vector<std::string> checks_unable(format::ContentSet lacks) {
  std::vector<std::string> names;
  for (const analyzer::RuleInfo& rule : all_check_rules()) {
    if ((rule.needs & lacks) != 0) names.push_back(rule.name);
  }
  return names;
}

TraceOrigin trace_origin(const format::Trace& trace) {
  TraceOrigin origin;
  for (const format::RankTrace& rank : trace.ranks) {
    if (!rank.present) continue;
    origin.lacks |= format::lacks(rank.header);
    if (auto it = rank.header.options.find(std::string(format::k_imported_option));
        it != rank.header.options.end() && origin.imported_from.empty()) {
      origin.imported_from = it->second;
    }
  }
  return origin;
}

void write_report_to(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty()) {
    write(std::cout);  // synchronized with stdio: the bytes go through stdout's buffer
    std::cout.flush();
    std::fflush(stdout);
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  // A report cut short (the renderer threw, or the disk filled) is removed
  // rather than left looking like a whole one; a device or a pipe is left.
  const auto drop_partial = [&] {
    out.close();
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(path, ec))) fs::remove(path, ec);
  };
  try {
    if (out) write(out);
  } catch (...) {
    drop_partial();
    throw;
  }
  out.close();
  if (!out) {
    drop_partial();
    throw Error(fmt::format("cannot write {}", path));
  }
}

void write_text_to(const std::string& path, std::string_view text) {
  write_report_to(path, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

void warn(std::string_view message) {
  fmt::print(stderr, "smtrace: warning: {}\n", message);
}

std::string human_ns(double ns) {
  const double magnitude = std::fabs(ns);
  if (magnitude < 1e3) return fmt::format("{:.0f}ns", ns);
  if (magnitude < 1e6) return fmt::format("{:.3f}us", ns / 1e3);
  if (magnitude < 1e9) return fmt::format("{:.3f}ms", ns / 1e6);
  return fmt::format("{:.3f}s", ns / 1e9);
}

std::string human_bytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr std::array<const char*, 4> k_units = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  value /= 1024.0;
  while (value >= 1024.0 && unit + 1 < k_units.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, k_units[unit]);
}

std::string datatype_name(uint32_t id) {
  // BasicType of smtrace.proto, by value.
  if (std::string_view name = format::basic_type_name(id); !name.empty()) return std::string(name);
  if (id == 63) return "MPI_(other predefined)";
  return fmt::format("type#{}", id);
}

std::string op_name(uint32_t id) {
  static constexpr std::array<const char*, 15> k_names = {
      "MPI_OP_NULL", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND",
      "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC",
      "MPI_REPLACE", "MPI_NO_OP"};
  if (id < k_names.size()) return k_names[id];
  if (id == 63) return "MPI_(other op)";
  return fmt::format("op#{}", id);
}

std::string comm_name(uint32_t id) {
  if (id == format::k_comm_world) return "WORLD";
  if (id == format::k_comm_self) return "SELF";
  return fmt::format("comm#{}", id);
}

std::string rank_name(int32_t rank) {
  switch (rank) {
    case format::k_any_source: return "ANY_SOURCE";
    case format::k_proc_null: return "PROC_NULL";
    case format::k_root: return "ROOT";
    default: return std::to_string(rank);
  }
}

std::string tag_name(int32_t tag) {
  return tag == format::k_any_tag ? std::string("ANY_TAG") : std::to_string(tag);
}

std::string site_to_string(const format::RankTrace& rank, const format::CallSite* site) {
  if (site == nullptr) return {};
  if (!site->file.empty() && site->line != 0) {
    std::string text = site->column != 0
                           ? fmt::format("{}:{}:{}", site->file, site->line, site->column)
                           : fmt::format("{}:{}", site->file, site->line);
    if (!site->function.empty()) text += fmt::format(" ({})", site->function);
    return text;
  }
  std::string where;
  if (auto it = rank.modules.find(site->module); it != rank.modules.end()) {
    where = fmt::format("{}+{:#x}", fs::path(it->second.path).filename().string(), site->offset);
  } else {
    where = fmt::format("{:#x}", site->offset);
  }
  if (!site->function.empty()) return fmt::format("{} ({})", site->function, where);
  return where;
}

std::string shell_join(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& arg : args) {
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) {
      if (c == '\'') {
        line += "'\\''";
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

format::Trace read_trace_or_throw(
    const fs::path& dir, bool symbols,
    const std::function<format::Trace(const std::filesystem::path&, const format::ReadOptions&)>& read) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(fmt::format("{}: no such file or directory", dir.string()));
  if (!fs::is_directory(dir, ec)) {
    throw Error(fmt::format("{}: not a directory (a trace is a directory)", dir.string()));
  }
  format::ReadOptions options;
  options.symbols = symbols;
  try {
    return read ? read(dir, options) : format::read_trace(dir, options);
  } catch (const format::TraceError& e) {
    throw Error(e.what());
  }
}

void prepare_output_dir(const fs::path& dir, bool force, const std::function<bool(const std::string&)>& owned,
                        std::string_view what) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      throw Error(fmt::format("{}: exists and is not a directory", dir.string()));
    }
    if (!fs::is_empty(dir, ec)) {
      if (!force) {
        throw Error(fmt::format("{}: directory exists and is not empty (use --force to replace {} in it)",
                                dir.string(), what));
      }
      // Remove only what we write, so that --force never deletes unrelated
      // files a user keeps there.
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (!owned(entry.path().filename().string())) continue;
        fs::remove_all(entry.path(), ec);
        if (ec) throw Error(fmt::format("{}: cannot remove: {}", entry.path().string(), ec.message()));
      }
    }
    return;
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create directory: {}", dir.string(), ec.message()));
}

void prepare_output_dir(const fs::path& dir, bool force) {
  const auto trace_file = [](const std::string& name) {
    const bool rank_file = name.starts_with("rank-") && name.ends_with(".smt");
    return rank_file || name == format::k_manifest_file || name == format::k_symbols_file;
  };
  prepare_output_dir(dir, force, trace_file, "the trace");
}

std::string timestamped_name(std::string_view prefix) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "-%Y%m%d-%H%M%S", &local);
  return std::string(prefix) + stamp.data();
}

std::string json_quote(std::string_view text) {
  // One escaping for every JSON smtrace writes (invalid UTF-8 included).
  return analyzer::json_quote(text);
}

void JsonWriter::newline() {
  m_out += '\n';
  m_out.append(2 * (m_indent + m_first.size()), ' ');
}

void JsonWriter::separate() {
  if (m_after_key) {
    m_after_key = false;
    return;
  }
  if (!m_first.empty()) {
    if (!m_first.back()) m_out += ',';
    m_first.back() = false;
    if (m_pretty) newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  m_out += '{';
  m_first.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  const bool empty = m_first.back();
  m_first.pop_back();
  if (m_pretty && !empty) newline();
  m_out += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  separate();
  m_out += '[';
  m_first.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  const bool empty = m_first.back();
  m_first.pop_back();
  if (m_pretty && !empty) newline();
  m_out += ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  m_out += json_quote(name);
  m_out += m_pretty ? ": " : ":";
  m_after_key = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  separate();
  m_out += json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  separate();
  m_out += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  separate();
  m_out += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  separate();
  m_out += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  separate();
  if (!std::isfinite(number)) {
    m_out += "null";
  } else {
    m_out += fmt::format("{}", number);
  }
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  m_out += "null";
  return *this;
}

void smt_tuning_from_environment(smt::Tuning& tuning) {
  auto value = [](const char* name) -> std::string_view {
    const char* text = std::getenv(name);
    return text ? std::string_view(text) : std::string_view();
  };
  if (const std::string_view guided = value("SMTRACE_SMT_GUIDED"); !guided.empty()) tuning.replay = guided != "0";
  if (const std::string_view off = value("SMTRACE_SMT_NO_HB_PRUNING"); !off.empty()) tuning.hb_pruning = off == "0";
  if (const std::string_view mb = value("SMTRACE_SMT_MEMORY_MB"); !mb.empty()) {
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(mb.data(), mb.data() + mb.size(), n);
    if (ec != std::errc() || end != mb.data() + mb.size()) {
      throw Error(fmt::format("SMTRACE_SMT_MEMORY_MB={}: not a number of MiB", mb));
    }
    tuning.z3_memory_mb = n;
  }
  if (const std::string_view steps = value("SMTRACE_SMT_WITNESS_STEPS"); !steps.empty()) {
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(steps.data(), steps.data() + steps.size(), n);
    if (ec != std::errc() || end != steps.data() + steps.size()) {
      throw Error(fmt::format("SMTRACE_SMT_WITNESS_STEPS={}: not a number of steps", steps));
    }
    tuning.witness_steps = n == 0 ? UINT64_MAX : n;
  }
}

}  // namespace smtrace::cli
