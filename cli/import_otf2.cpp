// smtrace import-otf2: an OTF2 archive (Score-P's, or one smtrace exported)
// becomes a trace directory that check and prove analyze as far as OTF2
// holds what they need.
#include <string>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#ifdef SMTRACE_HAVE_OTF2
#include "exchange/otf2.hpp"
#endif

namespace smtrace::cli {

int run_import_otf2(const ImportOtf2Options& options) {
#ifndef SMTRACE_HAVE_OTF2
  (void)options;
  throw Error("this smtrace was built without OTF2 (install libopen-trace-format2-dev and rebuild)");
#else
  prepare_output_dir(options.output, options.force);
  const exchange::Otf2Import imported = exchange::import_otf2(options.archive, options.output);
  for (const format::Problem& problem : imported.problems) {
    warn(problem.rank ? fmt::format("{}: rank {}: {}", problem.file, *problem.rank, problem.message)
                      : fmt::format("{}: {}", problem.file, problem.message));
  }
  if (imported.written && !options.quiet) {
    std::string unable;
    for (const std::string& name : checks_unable(imported.lacks)) unable += (unable.empty() ? "" : ", ") + name;
    fmt::print(stderr, "smtrace: imported {} rank(s), {} events{} into {}\n", imported.ranks, imported.events,
               imported.creator.empty() ? std::string() : fmt::format(" (written by {})", imported.creator),
               options.output.string());
    if (imported.lacks != 0) {
      fmt::print(stderr, "smtrace: the trace has {}{}\n", format::describe_lacks(imported.lacks),
                 unable.empty() ? std::string() : "; checks that cannot run on it: " + unable);
    }
  }
  if (!imported.error.empty()) {
    throw Error(imported.written ? fmt::format("{} (what could be read is in {})", imported.error, options.output.string())
                                 : imported.error);
  }
  return k_exit_ok;
#endif
}

}  // namespace smtrace::cli
