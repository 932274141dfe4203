#include "cli/cli.hpp"

#include <execinfo.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "trace_format/event.hpp"
#include "trace_format/reader.hpp"

namespace smtrace::cli {

namespace {

constexpr const char* k_exit_codes_text =
    "Exit codes: 0 ok; 1 findings (check commands); 2 bad usage or unreadable input.";

std::string version_text() {
  return fmt::format("smtrace {} (trace format v{})", SMTRACE_VERSION, format::k_format_version);
}

void add_format_option(CLI::App& app, std::string& format) {
  app.add_option("--format", format, "Output format: text (for people) or json (for programs)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_str("text");
}

OutputFormat to_format(const std::string& name) {
  return name == "json" ? OutputFormat::json : OutputFormat::text;
}

// CLI11's formatter, changed in two places: the list of commands shows the
// first line of each description only, and a command may have a usage line
// of its own (record's `-- COMMAND...`, which CLI11 cannot express).
class Formatter : public CLI::Formatter {
 public:
  void set_usage(const CLI::App* app, std::string usage) { m_usage[app] = std::move(usage); }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::string first = sub->get_description();
    if (auto cut = first.find('\n'); cut != std::string::npos) first.resize(cut);
    return fmt::format("  {:<{}}{}\n", sub->get_name(), column_width_ - 2, first);
  }

  std::string make_description(const CLI::App* app) const override {
    const std::string text = CLI::Formatter::make_description(app);
    return text.empty() ? text : text + "\n";
  }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (auto it = m_usage.find(app); it != m_usage.end()) return "Usage: " + it->second + "\n";
    return CLI::Formatter::make_usage(app, std::move(name));
  }

 private:
  std::map<const CLI::App*, std::string> m_usage;
};

// An exception that leaves through a frame of glibc's (libprotobuf builds
// its descriptors inside pthread_once, on the first JSON or reflection use)
// makes glibc load libgcc_s's unwinder at that moment; when memory has run
// out, that load fails and glibc aborts the process ("libgcc_s.so.1 must be
// installed for unwinding to work") instead of letting our handler report
// std::bad_alloc. backtrace() makes glibc load it now, while memory is there;
// it returns no frame when the load failed.
bool load_unwinder() {
  void* frames[1];
  return backtrace(frames, 1) > 0;
}

}  // namespace

int main(int argc, char** argv) { return main(argc, argv, Engine{}); }

int main(int argc, char** argv, const Engine& engine) {
  if (!load_unwinder()) {
    std::fputs("smtrace: error: out of memory (cannot load libgcc_s.so.1, the unwinder)\n", stderr);
    return k_exit_usage;
  }
  CLI::App app{
      "smtrace: post-mortem correctness analysis of MPI programs.\n"
      "Record a run with `smtrace record`, then read the trace with `smtrace info` and\n"
      "`smtrace dump`, analyze it with `smtrace check`. A trace is a directory: manifest.json, one rank-<R>.smt per rank,\n"
      "and symbols.smt after symbolization. Run `smtrace <command> --help` for details.",
      "smtrace"};
  auto formatter = std::make_shared<Formatter>();
  formatter->column_width(28);
  app.formatter(formatter);  // subcommands created below share it
  app.set_version_flag("--version", version_text(), "Print the version and exit");
  app.require_subcommand(0, 1);
  app.footer(std::string(k_exit_codes_text) +
             "\nExample:\n"
             "  smtrace record -o trace -- mpirun -np 4 ./app\n"
             "  smtrace info trace\n"
             "  smtrace dump trace --rank 1\n"
             "  smtrace check trace\n"
             "  smtrace check trace --format html -o report.html\n"
             "  smtrace explore -- mpirun -np 3 ./app\n"
             "  smtrace export trace --format perfetto -o trace.json --findings\n"
             "Documentation: docs/cli.md.");

  // record
  RecordOptions record;
  CLI::App* record_cmd = app.add_subcommand(
      "record",
      "Run a command with the tracer injected and write a trace directory.\n"
      "Runs COMMAND with libsmtrace.so injected into its MPI ranks. COMMAND is an Open MPI\n"
      "launcher line (mpirun, mpiexec, orterun, oshrun: smtrace adds `-x` options right after\n"
      "the launcher's name), a Slurm `srun` line (the environment carries the settings), or a\n"
      "single program (singleton). Put `--` before COMMAND. Afterwards smtrace symbolizes the\n"
      "call sites and prints where the trace is and a one-line summary on stderr.");
  record_cmd->add_option("-o,--output", record.output,
                         "Trace directory (default: smtrace-YYYYmmdd-HHMMSS in the current directory, local time)");
  record_cmd->add_option("--stack-depth", record.stack_depth,
                         "Outer call-stack frames to record per event (SMTRACE_STACK_DEPTH)")
      ->check(CLI::Range(1, 64));
  record_cmd->add_option("--families", record.families,
                         "Call families, comma-separated: env comm group p2p request coll rma type annotate cuda, all; -NAME drops one (SMTRACE_FAMILIES)");
  record_cmd->add_option("--buffer", record.buffer,
                         "Tracer chunk buffer per rank: 4096..16M bytes, K/M suffix allowed (SMTRACE_BUFFER)");
  record_cmd->add_flag("-f,--force", record.force,
                       "Replace the trace in an existing non-empty output directory");
  bool no_symbolize = false;
  record_cmd->add_flag("--no-symbolize", no_symbolize, "Do not run `smtrace symbolize` after the run");
  record_cmd->add_flag("-q,--quiet", record.quiet,
                       "No progress on stderr while symbolizing (shown on a terminal only)");
  record_cmd->add_option("COMMAND", record.command, "The command to run, after `--`")->required();
  record_cmd->footer(
      "Environment: SMTRACE_LIB=path overrides where libsmtrace.so is found (default: next to\n"
      "the smtrace executable: <prefix>/lib, or <build>/tracer in a build tree). LD_PRELOAD\n"
      "already set is kept: the tracer is prepended. With srun, keep the environment exported\n"
      "(the default, or --export=ALL); with --export=NONE or a list, add LD_PRELOAD and\n"
      "SMTRACE_* yourself.\n"
      "Exit status: COMMAND's exit status, 128+N when it was killed by signal N; 2 when\n"
      "smtrace itself could not start (bad usage, output directory in use, tracer not found);\n"
      "126/127 when COMMAND cannot be executed / is not found.\n"
      "SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to COMMAND's process group.\n"
      "Examples:\n"
      "  smtrace record -- mpirun -np 4 ./app input.dat\n"
      "  smtrace record -o /scratch/run1 --stack-depth 4 -- srun -n 64 ./app\n"
      "  smtrace record -o t --families p2p,coll -- ./app");

  // info
  InfoOptions info;
  std::string info_format = "text";
  CLI::App* info_cmd = app.add_subcommand(
      "info",
      "Summarize a trace: ranks, events, duration, completeness, problems.\n"
      "Shows ranks present and expected, events by call, duration per rank and overall, per-\n"
      "rank completeness (finalized, killed by a signal, aborted, or stopped inside a call),\n"
      "trace size, and every problem met while reading.");
  info_cmd->add_option("DIR", info.dir, "Trace directory")->required();
  add_format_option(*info_cmd, info_format);
  info_cmd->footer(
      "Damaged rank files (truncated, garbage) are read up to the damage; the problems are\n"
      "listed and the exit code stays 0 as long as the directory holds a trace.\n" +
      std::string(k_exit_codes_text) +
      "\nJSON shape: docs/cli.md (keys ranks, events, complete, per_rank, events_by_call,\n"
      "problems, ...).\n"
      "Examples:\n"
      "  smtrace info smtrace-20260101-120000\n"
      "  smtrace info trace --format json | jq .complete");

  // dump
  DumpOptions dump;
  std::string dump_format = "text";
  std::optional<uint32_t> dump_rank;
  CLI::App* dump_cmd = app.add_subcommand(
      "dump",
      "Print every event of a trace, readable (or as JSON).\n"
      "One event per line, named RANK:SEQ, with its time, duration, arguments (posted and\n"
      "actual values: source=ANY_SOURCE→1) and call site. Each rank starts with its header and\n"
      "definitions (communicators with their world ranks, derived datatypes with their\n"
      "footprint). --format json writes the trace as protobuf's JSON mapping of\n"
      "smtrace.v1.TraceDocument, which `smtrace import-json` reads back.");
  dump_cmd->add_option("DIR", dump.dir, "Trace directory")->required();
  dump_cmd->add_option("-r,--rank", dump_rank, "Only this rank (MPI_COMM_WORLD rank)");
  add_format_option(*dump_cmd, dump_format);
  dump_cmd->footer(
      "Problems met while reading are printed on stderr as warnings.\n" +
      std::string(k_exit_codes_text) +
      "\nExamples:\n"
      "  smtrace dump trace --rank 0 | less\n"
      "  smtrace dump trace --format json > trace.json");

  // check
  CheckOptions check;
  CLI::App* check_cmd = app.add_subcommand(
      "check",
      "Analyze a trace: deadlocks, collective mismatches, buffer misuse, leaks.\n"
      "Runs the checks (`--list` shows them) on the trace in DIR and prints the findings as\n"
      "compiler-style diagnostics (FILE:LINE:COL: error: ... [kind], a note per rank involved),\n"
      "ending with a SUMMARY line; or as JSON, SARIF 2.1.0 or one HTML page. With --expect FILE it compares the\n"
      "findings with an expectation file instead and prints what is missing or unexpected.");
  check_cmd->add_option("DIR", check.dir, "Trace directory")->type_name("DIR");
  check_cmd->add_option("--format", check.format,
                        "Report format: text, json (for programs), sarif (code scanning), html (one self-contained\n"
                        "page: findings by kind, source around each location, a timeline picture per finding)")
      ->check(CLI::IsMember({"text", "json", "sarif", "html"}))
      ->default_str("text");
  check_cmd->add_option("--checks", check.checks,
                        "Checks to run, comma-separated (default: all); -NAME drops one: all,-resource-leak")
      ->type_name("LIST");
  check_cmd->add_option("--alignment", check.alignment,
                        "Collective alignment rule of collective-misaligned: strict, weak, off (a style rule, off\n"
                        "unless asked for; strict when --checks names collective-misaligned)")
      ->check(CLI::IsMember({"strict", "weak", "off"}))
      ->default_str("off");
  check_cmd->add_option("--expect", check.expect,
                        "Compare the findings with expectation file FILE: exit 0 when they agree, 1 when not")
      ->type_name("FILE");
  check_cmd->add_option("--write-expect", check.write_expect,
                        "Also write the findings as an expectation file FILE")
      ->type_name("FILE");
  check_cmd->add_option("--smt-timeout", check.smt_timeout,
                        "Seconds the SMT checks (message-race, potential-deadlock, rma-race's races of "
                        "other executions) may take, together, counted after the trace is read; 0 turns them off")
      ->default_str("5");
  check_cmd->add_option("--buffering", check.buffering,
                        "message-race: standard-mode sends return at once (infinite) or once matched (zero);\n"
                        "potential-deadlock always asks zero")
      ->check(CLI::IsMember({"infinite", "zero"}))
      ->default_str("infinite");
  check_cmd->add_flag("--list", check.list, "List the checks (name, severity, description) and exit");
  check_cmd->add_flag("-q,--quiet", check.quiet, "No progress on stderr (shown on a terminal only)");
  check_cmd->add_option("-o,--output", check.output, "Write the report to FILE instead of stdout")
      ->type_name("FILE");
  check_cmd->footer(
      "Problems met while reading (damaged or missing rank files) are warnings in the report;\n"
      "an incomplete trace (killed, crashed) is analyzed as far as it goes.\n"
      "Exit codes: 0 no error-level finding (--expect: findings agree); 1 error findings\n"
      "(--expect: they differ); 2 bad usage or unreadable input.\n"
      "Output formats and the expectation file: docs/check-output.md.\n"
      "Examples:\n"
      "  smtrace check trace\n"
      "  smtrace check trace --format sarif -o smtrace.sarif\n"
      "  smtrace check trace --format html -o report.html\n"
      "  smtrace check trace --checks deadlock,collective-mismatch --format json\n"
      "  smtrace check trace --write-expect trace.expect && smtrace check trace --expect trace.expect");

  // prove
  ProveOptions prove;
  CLI::App* prove_cmd = app.add_subcommand(
      "prove",
      "Prove what else the recorded run could have done (SMT, Z3).\n"
      "Message races: for every wildcard receive, the other sends it can match, and whether that\n"
      "run deadlocks or leaves a message unreceived (error) or completes (info). Deadlocks that\n"
      "rely on MPI buffering (feasible with zero buffering). And the questions --can-match and\n"
      "--can-precede. Every sat answer has a witness schedule that an independent replay accepted;\n"
      "every unsat one an explanation; undecided ones are reported as unknown.");
  prove_cmd->add_option("DIR", prove.dir, "Trace directory")->required();
  prove_cmd->add_option("--format", prove.format, "Report format: text, json")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_str("text");
  prove_cmd->add_option("--can-match", prove.can_match,
                        "Can receive (or probe) A match send B (either order)? RANK:SEQ RANK:SEQ")
      ->expected(2)
      ->type_name("A B");
  prove_cmd->add_option("--can-precede", prove.can_precede,
                        "Can event A return before event B is called? RANK:SEQ RANK:SEQ")
      ->expected(2)
      ->type_name("A B");
  prove_cmd->add_option("--buffering", prove.buffering,
                        "Standard-mode sends: infinite (return at once) or zero (return once matched);\n"
                        "MPI_Ssend is always zero")
      ->check(CLI::IsMember({"infinite", "zero"}))
      ->default_str("infinite");
  prove_cmd->add_option("--smt-timeout", prove.smt_timeout, "Seconds for all solving; what is left is unknown")
      ->default_str("30");
  prove_cmd->add_option("--emit-smt2", prove.emit_smt2,
                        "Write the first question's problem (else the first part's) in SMT-LIB 2")
      ->type_name("FILE");
  prove_cmd->add_option("--dot", prove.dot, "Write the first witness as a Graphviz graph")->type_name("FILE");
  prove_cmd->add_flag("--no-findings", prove.no_findings, "Answer the questions only (no races, no deadlocks)");
  prove_cmd->add_flag("-q,--quiet", prove.quiet, "Accepted for symmetry with check (prove prints no progress)");
  prove_cmd->add_option("--threads", prove.threads, "Parts solved in parallel (default: one per core)");
  prove_cmd->add_option("-o,--output", prove.output, "Write the report to FILE instead of stdout")
      ->type_name("FILE");
  prove_cmd->footer(
      "Exit codes: 0 no error-level finding; 1 error findings; 2 bad usage or unreadable input.\n"
      "Documentation: docs/cli.md (prove), docs/checks.md (message-race, potential-deadlock).\n"
      "Examples:\n"
      "  smtrace prove trace\n"
      "  smtrace prove trace --can-match 0:5 3:2 --format json\n"
      "  smtrace prove trace --buffering zero --dot witness.dot");

  // explore
  ExploreOptions explore;
  CLI::App* explore_cmd = app.add_subcommand(
      "explore",
      "Confirm message races by re-running the program with the other match forced.\n"
      "Records COMMAND once (as `record`), proves which other sends each wildcard receive can\n"
      "match (as `prove`), then runs COMMAND again once per alternative with the tracer forcing\n"
      "that receive to take that sender (SMTRACE_FORCE), each run recorded into DIR/run-K. Each\n"
      "run is compared with the original: exit status, standard output and error, crash, MPI_Abort,\n"
      "deadlock (still running after the timeout), new error findings of the checks, and where the\n"
      "calls first differ. A race whose run changes any of these is a message-race error confirmed\n"
      "by re-execution; one whose runs all behave the same is info. Prints check's report.");
  explore_cmd->add_option("-o,--output", explore.output,
                          "Directory for the runs: original/ and run-K/ traces, their .stdout and .stderr "
                          "(default: smtrace-explore-YYYYmmdd-HHMMSS)")
      ->type_name("DIR");
  explore_cmd->add_option("--format", explore.format, "Report format: text, json (check's, plus \"explore\"), sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->default_str("text");
  explore_cmd->add_option("--max-runs", explore.max_runs, "Forced runs at most; the report counts the rest")
      ->default_str("16");
  explore_cmd->add_option("--smt-timeout", explore.smt_timeout, "Seconds for proving the alternatives")
      ->default_str("10");
  explore_cmd->add_option("--timeout", explore.timeout,
                          "Seconds a forced run may take before it counts as a deadlock (default: twice the "
                          "original run's, plus 5)");
  explore_cmd->add_flag("-f,--force", explore.force, "Replace explore's runs in a non-empty DIR");
  explore_cmd->add_flag("-q,--quiet", explore.quiet, "No progress lines on stderr");
  explore_cmd->add_option("COMMAND", explore.command, "The command to run, after `--`")->required();
  explore_cmd->footer(
      "COMMAND is given as to `smtrace record` (mpirun, mpiexec, srun or a singleton). Only sat\n"
      "alternatives (a witness shows the match is possible) are run; one forced receive per run,\n"
      "every other wildcard is left to MPI. Output is compared as sets of lines (ranks' lines\n"
      "interleave differently from run to run).\n"
      "Exit codes: 0 no error-level finding; 1 error findings (a confirmed race, or another\n"
      "check's error on the original run); 2 bad usage, or no trace written; 126/127 COMMAND\n"
      "cannot be executed / is not found.\n"
      "Documentation: docs/cli.md (explore), docs/check-output.md (the report).\n"
      "Examples:\n"
      "  smtrace explore -- mpirun -np 3 ./wildcard_race\n"
      "  smtrace explore -o runs --format json --max-runs 4 -- mpirun -np 4 ./app");

  // import-json
  ImportJsonOptions import;
  CLI::App* import_cmd = app.add_subcommand(
      "import-json",
      "Build a trace directory from JSON (as `smtrace dump --format json` writes it).\n"
      "The JSON is protobuf's JSON mapping of smtrace.v1.TraceDocument, so tests and bug\n"
      "reports can carry small hand-written traces.");
  import_cmd->add_option("FILE", import.file, "JSON file, or - for standard input")->required();
  import_cmd->add_option("-o,--output", import.output, "Trace directory to write")->required();
  import_cmd->add_flag("-f,--force", import.force,
                       "Replace the trace in an existing non-empty output directory");
  import_cmd->footer(std::string(k_exit_codes_text) +
                     "\nExample:\n"
                     "  smtrace dump old --format json > t.json && smtrace import-json t.json -o copy");

  // symbolize
  SymbolizeOptions symbolize;
  CLI::App* symbolize_cmd = app.add_subcommand(
      "symbolize",
      "Resolve call sites to function, file and line (writes symbols.smt).\n"
      "Reads each module's DWARF (DWARF 4 and 5) in process with elfutils' libdw, once per\n"
      "module: the innermost source position of each call, so a call inside a function defined\n"
      "in a header (inlined or not) gets the header's file and line, and the function is the\n"
      "inlined one. Modules that are missing or lack debug info keep what the tracer knew (no\n"
      "error). `smtrace record` runs this by itself; run it again after moving a trace to the\n"
      "machine that has the binaries.");
  symbolize_cmd->add_option("DIR", symbolize.dir, "Trace directory")->required();
  symbolize_cmd->add_flag("-q,--quiet", symbolize.quiet,
                          "Print nothing when all went well (no progress, no summary line)");
  symbolize_cmd->footer(std::string(k_exit_codes_text) +
                        "\nExample:\n"
                        "  smtrace symbolize trace && smtrace dump trace");

  // export
  ExportOptions exporting;
  CLI::App* export_cmd = app.add_subcommand(
      "export",
      "Write the trace in another tool's format: Perfetto timeline JSON or an OTF2 archive.\n"
      "perfetto: Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing): a\n"
      "process per rank, a track per thread and per CUDA stream, a slice per call, an arrow per\n"
      "matched message (send -> where the receive completed); --findings also runs the checks\n"
      "and marks each finding's events, linked in order. otf2: an OTF2 archive (Vampir,\n"
      "Score-P's tools, otf2-print) with OTF2's MPI records, communicators, windows and call\n"
      "sites; `smtrace import-otf2` reads it back.");
  export_cmd->add_option("DIR", exporting.dir, "Trace directory")->required();
  export_cmd->add_option("--format", exporting.format, "perfetto or otf2")
      ->check(CLI::IsMember({"perfetto", "otf2"}))
      ->required();
  export_cmd->add_option("-o,--output", exporting.output,
                         "perfetto: the JSON file (- for stdout); otf2: the archive's directory (OUT/traces.otf2)")
      ->required();
  export_cmd->add_flag("--findings", exporting.findings, "perfetto: run the checks and mark their findings");
  export_cmd->add_option("--smt-timeout", exporting.smt_timeout,
                         "With --findings: seconds for the SMT checks, as in check (0: off)")
      ->default_str("5");
  export_cmd->add_flag("-f,--force", exporting.force, "otf2: replace the archive in a non-empty directory");
  export_cmd->add_flag("-q,--quiet", exporting.quiet, "No progress and no summary line on stderr");
  export_cmd->footer(std::string(k_exit_codes_text) +
                     "\nDocumentation: docs/cli.md (export).\n"
                     "Examples:\n"
                     "  smtrace export trace --format perfetto -o trace.json --findings\n"
                     "  smtrace export trace --format otf2 -o trace-otf2 && otf2-print trace-otf2/traces.otf2");

  // import-otf2
  ImportOtf2Options import_otf2;
  CLI::App* import_otf2_cmd = app.add_subcommand(
      "import-otf2",
      "Build a trace directory from an OTF2 archive (Score-P's, or smtrace export's).\n"
      "MPI regions become events, their MPI records fill them (peers, tags, communicators,\n"
      "requests, roots), Comm definitions become communicators. OTF2 holds no buffer addresses\n"
      "(nor, in Score-P's archives, the posted source and tag of receives): the trace says so,\n"
      "and check skips the checks that need them. A damaged archive gives an error (exit 2) and\n"
      "a trace of what could be read.");
  import_otf2_cmd->add_option("ARCHIVE", import_otf2.archive,
                              "The anchor file (traces.otf2) or the directory holding it")
      ->required();
  import_otf2_cmd->add_option("-o,--output", import_otf2.output, "Trace directory to write")->required();
  import_otf2_cmd->add_flag("-f,--force", import_otf2.force,
                            "Replace the trace in an existing non-empty output directory");
  import_otf2_cmd->add_flag("-q,--quiet", import_otf2.quiet, "No summary line on stderr (warnings stay)");
  import_otf2_cmd->footer(std::string(k_exit_codes_text) +
                          "\nDocumentation: docs/cli.md (import-otf2).\n"
                          "Examples:\n"
                          "  smtrace import-otf2 scorep-20240101_1200_123/traces.otf2 -o trace && smtrace check trace\n"
                          "  smtrace import-otf2 trace-otf2 -o copy");

  // synth (developer command)
  SynthOptions synth;
  CLI::App* synth_cmd = app.add_subcommand(
      "synth",
      "Write a synthetic trace, for benchmarks and tests (developer command).\n"
      "Generators: halo (2-D halo exchange: Irecv/Isend/Waitall per iteration, an Allreduce\n"
      "every 10 iterations, a Barrier every 100), pingpong (pairs of ranks), wildcard (rank 0\n"
      "receives from MPI_ANY_SOURCE), and the SMT benchmarks of the match-pair paper:\n"
      "senders (K ranks send to rank 0, which receives K times from MPI_ANY_SOURCE),\n"
      "leader (leader election on a ring), router (distance-vector routing on a ring),\n"
      "fig6 (the paper's Figure 6 program on 3 ranks, repeated --iterations times).\n"
      "The trace is what the tracer would have written for such a program; ranks are\n"
      "written in parallel, streaming.");
  synth_cmd->add_option("NAME", synth.generator,
                        "Generator: halo, pingpong, wildcard, senders, leader, router, fig6")
      ->required();
  synth_cmd->add_option("-o,--output", synth.output, "Trace directory to write (default: ./NAME)");
  synth_cmd->add_option("--ranks", synth.ranks, "Number of ranks (default 64; fig6 3)");
  synth_cmd->add_option("--k", synth.k, "senders: number of senders K (ranks K+1; default 50)");
  synth_cmd->add_option("--n", synth.n, "leader, router: number of ranks (default 8)");
  synth_cmd->add_option("--iterations", synth.iterations,
                        "Iterations of the main loop (router: default N/2; fig6: default 1;\n"
                        "halo, pingpong, wildcard: instead of --events)");
  synth_cmd->add_option("--events", synth.events,
                        "halo, pingpong, wildcard: events per rank, approximate (whole\n"
                        "iterations); k, M, G suffixes (default 1M)");
  synth_cmd->add_option("--seed", synth.seed, "Seed of the times and orders")->default_str("1");
  synth_cmd->add_option("--bug", synth.bug,
                        "Plant a bug (halo only): none, deadlock, collective-mismatch")
      ->default_str("none");
  synth_cmd->add_option("--threads", synth.threads, "Writer threads (default: one per core)");
  synth_cmd->add_flag("-f,--force", synth.force,
                      "Replace the trace in an existing non-empty output directory");
  synth_cmd->footer(std::string(k_exit_codes_text) +
                    "\nDocumentation: docs/cli.md (synth).\n"
                    "Examples:\n"
                    "  smtrace synth halo --ranks 64 --events 1M -o /tmp/halo64\n"
                    "  smtrace synth halo --ranks 4 --events 10k --bug deadlock -o /tmp/dl\n"
                    "  smtrace synth senders --k 50 -o /tmp/senders50");

  // help
  std::string help_topic;
  CLI::App* help_cmd = app.add_subcommand(
      "help", "Print the help of smtrace or of one command.");
  help_cmd->add_option("COMMAND", help_topic, "The command to explain");

  const std::vector<CLI::App*> commands = {record_cmd, info_cmd, dump_cmd, check_cmd, prove_cmd, explore_cmd,
                                           import_cmd,
                                           export_cmd, import_otf2_cmd, symbolize_cmd, synth_cmd, help_cmd};
  formatter->set_usage(record_cmd, "smtrace record [OPTIONS] -- COMMAND [ARGS...]");
  formatter->set_usage(info_cmd, "smtrace info DIR [--format text|json]");
  formatter->set_usage(dump_cmd, "smtrace dump DIR [--rank R] [--format text|json]");
  formatter->set_usage(check_cmd,
                       "smtrace check DIR [--format text|json|sarif|html] [--checks LIST] [--alignment strict|weak|off]\n"
                       "                     [--expect FILE] [--write-expect FILE] [-o FILE] [--quiet]\n"
                       "       smtrace check --list [--format text|json]");
  formatter->set_usage(prove_cmd, "smtrace prove DIR [--format text|json] [--can-match A B] [--can-precede A B]\n"
                                  "                     [--buffering infinite|zero] [--smt-timeout S] [--emit-smt2 FILE]\n"
                                  "                     [--dot FILE] [--no-findings] [-o FILE] [--quiet]");
  formatter->set_usage(explore_cmd,
                       "smtrace explore [-o DIR] [--format text|json|sarif] [--max-runs N] [--smt-timeout S]\n"
                       "                       [--timeout S] [--force] [--quiet] -- COMMAND [ARGS...]");
  formatter->set_usage(import_cmd, "smtrace import-json FILE -o DIR [--force]");
  formatter->set_usage(symbolize_cmd, "smtrace symbolize DIR [--quiet]");
  formatter->set_usage(export_cmd, "smtrace export DIR --format perfetto|otf2 -o OUT [--findings] [--force] [--quiet]");
  formatter->set_usage(import_otf2_cmd, "smtrace import-otf2 ARCHIVE -o DIR [--force] [--quiet]");
  formatter->set_usage(synth_cmd, "smtrace synth NAME [-o DIR] [--ranks N | --k K | --n N] [--events N | --iterations I]\n"
                                  "                     [--seed N] [--bug BUG]");
  formatter->set_usage(help_cmd, "smtrace help [COMMAND]");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string hint = "smtrace --help";
    for (CLI::App* sub : commands) {
      if (sub->parsed()) hint = fmt::format("smtrace {} --help", sub->get_name());
    }
    fmt::print(stderr, "smtrace: error: {}\nRun `{}` for usage.\n", e.what(), hint);
    if ((record_cmd->parsed() || explore_cmd->parsed()) && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      fmt::print(stderr, "Put `--` between smtrace's options and COMMAND: smtrace {} -- mpirun -np 2 ./app\n",
                 record_cmd->parsed() ? "record" : "explore");
    }
    return k_exit_usage;
  }

  try {
    if (record_cmd->parsed()) {
      record.symbolize = !no_symbolize;
      return run_record(record);
    }
    if (info_cmd->parsed()) {
      info.format = to_format(info_format);
      info.engine = engine;
      return run_info(info);
    }
    if (dump_cmd->parsed()) {
      dump.format = to_format(dump_format);
      dump.rank = dump_rank;
      return run_dump(dump);
    }
    if (check_cmd->parsed()) {
      check.engine = engine;
      return run_check(check);
    }
    if (prove_cmd->parsed()) return run_prove(prove);
    if (explore_cmd->parsed()) return run_explore(explore);
    if (import_cmd->parsed()) return run_import_json(import);
    if (export_cmd->parsed()) return run_export(exporting);
    if (import_otf2_cmd->parsed()) return run_import_otf2(import_otf2);
    if (symbolize_cmd->parsed()) return run_symbolize(symbolize);
    if (synth_cmd->parsed()) return run_synth(synth);
    if (help_cmd->parsed()) {
      if (help_topic.empty()) {
        fmt::print("{}", app.help());
        return k_exit_ok;
      }
      for (CLI::App* sub : commands) {
        if (sub->get_name() == help_topic) {
          fmt::print("{}", sub->help());
          return k_exit_ok;
        }
      }
      throw Error(fmt::format("no command named '{}' (see smtrace --help)", help_topic));
    }
    throw Error(
        "no command given; commands: record, info, dump, check, prove, explore, import-json, export, import-otf2, "
        "symbolize, help (see smtrace --help)");
  } catch (const Error& e) {
    fmt::print(stderr, "smtrace: error: {}\n", e.what());
  } catch (const format::TraceError& e) {
    fmt::print(stderr, "smtrace: error: {}\n", e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "smtrace: error: out of memory\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "smtrace: error: {}\n", e.what());
  }
  return k_exit_usage;
}

}  // namespace smtrace::cli
