// smtrace export: the trace in another tool's format, through exchange/:
// Chrome trace-event JSON for Perfetto and chrome://tracing, or an OTF2
// archive for Vampir and the Score-P tools.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "exchange/perfetto.hpp"
#include "exchange/view.hpp"
#include "smt_encoder/prove.hpp"
#ifdef SMTRACE_HAVE_OTF2
#include "exchange/otf2.hpp"
#endif

namespace smtrace::cli {

namespace fs = std::filesystem;

namespace {

// The OTF2 archive's files in `dir` (exchange writes traces.otf2, traces.def
// and traces/): refuse a non-empty directory unless `force`, then remove
// only those.
void prepare_archive_dir(const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw Error(fmt::format("{}: exists and is not a directory", dir.string()));
  }
  if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec)) {
    if (!force) {
      throw Error(fmt::format("{}: directory is not empty (use --force to replace the archive in it)", dir.string()));
    }
    for (const char* name : {"traces.otf2", "traces.def", "traces"}) fs::remove_all(dir / name, ec);
  }
}

}  // namespace

int run_export(const ExportOptions& options) {
  if (options.format != "perfetto" && options.format != "otf2") {
    throw Error(fmt::format("unknown --format '{}' (perfetto, otf2)", options.format));
  }
  if (options.output.empty()) throw Error("export needs -o OUT");
  if (options.findings && options.format != "perfetto") throw Error("--findings applies to --format perfetto only");
  if (options.smt_timeout < 0) throw Error("--smt-timeout must be 0 (off) or positive");
#ifndef SMTRACE_HAVE_OTF2
  if (options.format == "otf2") {
    throw Error("this smtrace was built without OTF2 (install libopen-trace-format2-dev and rebuild)");
  }
#endif
  Progress progress(options.quiet ? Quiet::yes : Quiet::no);
  analyzer::Options analysis;
  analysis.progress = progress.callback();
  if (options.findings && options.smt_timeout > 0) {
    smt::CheckSettings settings;
    settings.smt_timeout_s = options.smt_timeout;
    smt_tuning_from_environment(settings.tuning);
    analysis.extra_checks = smt::check_factories(settings);
  }
  const exchange::TraceView view = exchange::collect_view(
      options.dir, analysis, options.findings ? exchange::WithFindings::yes : exchange::WithFindings::no);

  if (options.format == "perfetto") {
    exchange::PerfettoStats stats;
    if (options.output == "-") {
      stats = exchange::write_perfetto(options.dir, view, std::cout, progress.callback());
      std::cout.flush();
    } else {
      std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
      if (!out) throw Error(fmt::format("cannot write {}", options.output.string()));
      stats = exchange::write_perfetto(options.dir, view, out, progress.callback());
      out.close();
      if (!out) throw Error(fmt::format("cannot write {}", options.output.string()));
    }
    progress.clear();
    if (!options.quiet) {
      fmt::print(stderr, "smtrace: {} slices, {} messages, {} finding marks; wrote {}\n", stats.slices, stats.flows,
                 stats.finding_marks, options.output == "-" ? std::string("stdout") : options.output.string());
    }
    return k_exit_ok;
  }
#ifdef SMTRACE_HAVE_OTF2
  prepare_archive_dir(options.output, options.force);
  const exchange::Otf2ExportStats stats = exchange::export_otf2(options.dir, view, options.output, progress.callback());
  progress.clear();
  if (!options.quiet) {
    fmt::print(stderr, "smtrace: {} ranks, {} locations, {} events as {} OTF2 records; wrote {}\n", stats.ranks,
               stats.locations, stats.events, stats.records, (options.output / "traces.otf2").string());
  }
#else
  (void)prepare_archive_dir;
#endif
  return k_exit_ok;
}

}  // namespace smtrace::cli
