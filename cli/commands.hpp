// The subcommands of `smtrace`, one .cpp each. cli.cpp parses the command
// line into these option structs and calls the matching run_* function.
//
// A run_* function returns the exit code (docs/cli.md) and throws
// cli::Error (or format::TraceError) for bad usage or unusable input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analyze.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::cli {

// How `check` and `info` reach the trace: in this process (smtrace), or
// spread over MPI processes (smtrace-mpi, distributed/). Empty members mean
// this process.
struct Engine {
  // Run the analysis of the trace `dir` (as analyzer::analyze).
  std::function<analyzer::Result(const std::filesystem::path& dir, const analyzer::Options& options)> analyze;
  // Read the trace `dir` (as format::read_trace).
  std::function<format::Trace(const std::filesystem::path& dir, const format::ReadOptions& options)> read_trace;
};

enum class OutputFormat { text, json };

struct RecordOptions {
  std::string output;                 // -o; empty: smtrace-YYYYmmdd-HHMMSS
  std::optional<int> stack_depth;
  std::string families;
  std::string buffer;
  bool force = false;
  bool symbolize = true;
  bool quiet = false;                 // no progress on stderr
  std::vector<std::string> command;
};
// Run `options.command` with the tracer injected; return its exit status.
int run_record(const RecordOptions& options);

struct InfoOptions {
  std::filesystem::path dir;
  OutputFormat format = OutputFormat::text;
  Engine engine;
};
int run_info(const InfoOptions& options);

struct DumpOptions {
  std::filesystem::path dir;
  std::optional<uint32_t> rank;
  OutputFormat format = OutputFormat::text;
};
int run_dump(const DumpOptions& options);

struct CheckOptions {
  std::filesystem::path dir;         // empty only with --list
  std::string format = "text";       // text, json, sarif, html
  std::string checks;                // --checks LIST; empty: all
  std::string alignment;             // strict, weak, off; empty: strict when --checks names
                                     // collective-misaligned, else off
  std::string expect;                // --expect FILE: regression mode
  std::string write_expect;          // --write-expect FILE
  std::string output;                // -o FILE; empty: stdout
  bool list = false;
  bool quiet = false;
  double smt_timeout = 5;            // --smt-timeout: seconds for the SMT checks together (0: off)
  std::string buffering = "infinite"; // --buffering: message-race's reading of standard sends
  Engine engine;
};
// Analyze a trace and print its report (docs/check-output.md); return 1
// when there is an error-level finding (--expect: when findings differ).
int run_check(const CheckOptions& options);

struct ProveOptions {
  std::filesystem::path dir;
  std::string format = "text";        // text, json
  std::string buffering = "infinite"; // infinite, zero
  double smt_timeout = 30;
  std::vector<std::string> can_match;    // pairs of RANK:SEQ, flattened
  std::vector<std::string> can_precede;
  std::string emit_smt2;              // FILE
  std::string dot;                    // FILE
  std::string output;                 // -o FILE; empty: stdout
  unsigned threads = 0;
  bool no_findings = false;           // answer the questions only
  bool quiet = false;                 // accepted as check accepts it; prove prints no progress
};
// Prove what else a run could have done (docs/cli.md, prove); return 1
// when there is an error-level finding.
int run_prove(const ProveOptions& options);

struct ExploreOptions {
  std::string output;                 // -o DIR; empty: smtrace-explore-YYYYmmdd-HHMMSS
  std::string format = "text";        // text, json, sarif
  unsigned max_runs = 16;             // --max-runs: forced runs at most
  double smt_timeout = 10;            // --smt-timeout: seconds for prove's solving
  double timeout = 0;                 // --timeout: seconds a forced run may take (0: 2 x original + 5)
  bool force = false;                 // -f: replace explore's runs in a non-empty DIR
  bool quiet = false;                 // no progress lines on stderr
  std::vector<std::string> command;
};
// Record COMMAND, prove which other matches its wildcard receives can take,
// re-run it with each forced (docs/cli.md, explore); return 1 when there is
// an error-level finding.
int run_explore(const ExploreOptions& options);

struct ImportJsonOptions {
  std::string file;  // "-" reads stdin
  std::filesystem::path output;
  bool force = false;
};
int run_import_json(const ImportJsonOptions& options);

struct SymbolizeOptions {
  std::filesystem::path dir;
  bool quiet = false;                 // nothing on stderr when all went well, no progress
};
int run_symbolize(const SymbolizeOptions& options);

struct ExportOptions {
  std::filesystem::path dir;
  std::string format;                 // otf2, perfetto
  std::filesystem::path output;       // -o: a directory (otf2) or a file, - for stdout (perfetto)
  bool findings = false;              // perfetto: run the checks and mark their findings
  double smt_timeout = 5;             // with --findings: as check's
  bool force = false;                 // otf2: replace an archive in a non-empty directory
  bool quiet = false;
};
// Write the trace in another tool's format (docs/cli.md, export).
int run_export(const ExportOptions& options);

struct ImportOtf2Options {
  std::filesystem::path archive;      // anchor file (.otf2) or its directory
  std::filesystem::path output;
  bool force = false;
  bool quiet = false;
};
// Build a trace directory from an OTF2 archive; exit 2 (with what could be
// read written) when the archive is damaged.
int run_import_otf2(const ImportOtf2Options& options);

struct SynthOptions {
  std::string generator;             // halo, pingpong, wildcard, senders, leader, router, fig6
  std::filesystem::path output;      // empty: ./NAME
  uint32_t ranks = 0;                // 0: the generator's default (64; fig6 3)
  uint32_t k = 0;                    // senders: K senders (ranks K + 1); 0: 50 or from ranks
  uint32_t n = 0;                    // leader, router: N ranks (same as ranks)
  uint64_t iterations = 0;           // 0: from events or the generator's default
  std::string events;                // per rank; k, M, G suffixes (powers of 1000); empty: 1M
  uint64_t seed = 1;
  std::string bug = "none";          // none, deadlock, collective-mismatch
  unsigned threads = 0;              // 0: hardware concurrency
  bool force = false;
};
// Write a synthetic trace (developer command, for benchmarks and tests).
int run_synth(const SynthOptions& options);

// What symbolization did, for record's summary.
struct SymbolizeResult {
  uint64_t sites = 0;        // call sites with a module
  uint64_t resolved = 0;     // sites that got a file and line
  uint64_t modules = 0;      // modules whose DWARF was read
  std::vector<std::string> missing_modules;
  std::vector<std::string> changed_modules;  // build id differs from the trace's
};
// Symbolize the call sites of the trace in `dir` and write its symbols file;
// call `progress` (when not empty) now and then with a line of progress.
SymbolizeResult symbolize_trace(const std::filesystem::path& dir,
                                const std::function<void(const std::string&)>& progress = {});

}  // namespace smtrace::cli
