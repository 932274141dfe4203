// Helpers shared by the subcommands: the CLI's error type, exit codes, and
// the small formatters that turn trace values into text and JSON.
//
// Thread safety: everything here is reentrant; nothing keeps state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/report.hpp"
#include "trace_format/content.hpp"
#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::smt {
struct Tuning;
}

namespace smtrace::cli {

// Exit codes of every subcommand (docs/cli.md).
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_findings = 1;
inline constexpr int k_exit_usage = 2;

// The CLI's own error: bad usage or input it cannot use. cli::main prints
// "smtrace: error: <what>" and exits 2.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Print "smtrace: warning: `message`" on stderr.
void warn(std::string_view message);

// Return `ns` with a unit that keeps it short: "850ns", "12.345us", "1.200ms", "3.5s".
std::string human_ns(double ns);
// Return `bytes` as "512 B", "1.5 KiB", "3.2 MiB".
std::string human_bytes(uint64_t bytes);

// Return the MPI name of predefined datatype `id` ("MPI_INT"), or
// "type#<id>" for a derived one.
std::string datatype_name(uint32_t id);
// Return the MPI name of predefined op `id` ("MPI_SUM"), or "op#<id>".
std::string op_name(uint32_t id);
// Return "WORLD", "SELF" or "comm#<id>".
std::string comm_name(uint32_t id);
// Return "ANY_SOURCE", "PROC_NULL", "ROOT" or the number.
std::string rank_name(int32_t rank);
// Return "ANY_TAG" or the number.
std::string tag_name(int32_t tag);

// Return the call site as "file:line[:col] (function)", "function (module+0xoff)"
// or "module+0xoff"; empty when `site` is null.
std::string site_to_string(const format::RankTrace& rank, const format::CallSite* site);

// Return `args` as a shell command line, quoting words that need it.
std::string shell_join(const std::vector<std::string>& args);

// Set the SMT backend's `tuning` from the environment (docs/cli.md):
// SMTRACE_SMT_GUIDED=0 (no replay before Z3), SMTRACE_SMT_MEMORY_MB=N (Z3's
// memory cap), SMTRACE_SMT_NO_HB_PRUNING=1 (match pairs without the
// happens-before rules), SMTRACE_SMT_WITNESS_STEPS=N (race witness steps kept
// whole; 0: all). Throw Error for a value that is not a number.
void smt_tuning_from_environment(smt::Tuning& tuning);

// Read `dir` as a trace; throw Error (exit 2) when it is unusable. `read`
// reads it when given (smtrace-mpi), else format::read_trace.
format::Trace read_trace_or_throw(
    const std::filesystem::path& dir, bool symbols = true,
    const std::function<format::Trace(const std::filesystem::path&, const format::ReadOptions&)>& read = {});

// Refuse an existing non-empty directory `dir` unless `force`; with `force`,
// remove the trace files in it (manifest, rank files, symbols) so that no
// stale rank remains. Create `dir`. Throw Error when it cannot be used.
void prepare_output_dir(const std::filesystem::path& dir, bool force);
// The same for a directory that holds other things than a trace: with
// `force`, remove the entries whose file name `owned` accepts; `what` names
// them in the message of a refusal ("explore's runs").
void prepare_output_dir(const std::filesystem::path& dir, bool force,
                        const std::function<bool(const std::string&)>& owned, std::string_view what);

// Return `prefix` followed by the local time: "smtrace-20260101-120000".
std::string timestamped_name(std::string_view prefix);

// Write a report to `path`, or to stdout when `path` is empty: `write`
// renders it into the stream as it goes, so that it is never whole in
// memory. Throw Error when the file cannot be written; a regular file the
// report was cut short in (that error, or one `write` throws) is removed.
void write_report_to(const std::string& path, const std::function<void(std::ostream&)>& write);
// Write `text` as write_report_to writes a report.
void write_text_to(const std::string& path, std::string_view text);

// Return the rules of every check: the analyzer's, then the SMT backend's.
std::vector<analyzer::RuleInfo> all_check_rules();
// Return the names of the checks that cannot run on a trace lacking `lacks`
// (Check::needs), in report order.
std::vector<std::string> checks_unable(format::ContentSet lacks);

// What a trace lacks and where it came from, when it was imported (empty
// `lacks` and `imported_from` for a recorded trace).
struct TraceOrigin {
  format::ContentSet lacks = 0;
  std::string imported_from;  // "otf2:/path/traces.otf2"
};
TraceOrigin trace_origin(const format::Trace& trace);

// Writes JSON text with commas and escapes handled; the caller nests
// begin/end calls correctly. Compact, or pretty as check's JSON reports are
// (two spaces per level, `"key": value`, one member per line), starting
// `indent` levels deep.
enum class Pretty : uint8_t { no, yes };
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, Pretty pretty = Pretty::no, unsigned indent = 0)
      : m_out(out), m_pretty(pretty == Pretty::yes), m_indent(indent) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // Write the key of the next member (inside an object).
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(unsigned number) { return value(static_cast<uint64_t>(number)); }
  JsonWriter& value(double number);
  JsonWriter& null();

 private:
  void separate();
  void newline();
  std::string& m_out;
  bool m_pretty = false;
  unsigned m_indent = 0;
  std::vector<bool> m_first;  // per open container: no member written yet
  bool m_after_key = false;
};

// Return `text` as a JSON string literal.
std::string json_quote(std::string_view text);

}  // namespace smtrace::cli
