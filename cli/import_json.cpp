// smtrace import-json: a TraceDocument (JSON) -> a trace directory.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "trace_format/json.hpp"

namespace smtrace::cli {

int run_import_json(const ImportJsonOptions& options) {
  std::string text;
  if (options.file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream file(options.file, std::ios::binary);
    if (!file) throw Error(fmt::format("{}: cannot open", options.file));
    std::ostringstream buffer;
    buffer << file.rdbuf();
    text = buffer.str();
  }
  format::Trace trace;
  try {
    trace = format::from_json(text);
  } catch (const format::TraceError& e) {
    throw Error(fmt::format("{}: {}", options.file == "-" ? "<stdin>" : options.file, e.what()));
  }
  prepare_output_dir(options.output, options.force);
  format::write_trace(trace, options.output);

  uint64_t events = 0;
  uint32_t ranks = 0;
  for (const format::RankTrace& rank : trace.ranks) {
    if (!rank.present) continue;
    ++ranks;
    events += rank.events.size();
  }
  fmt::print(stderr, "smtrace: wrote {} rank(s), {} events to {}\n", ranks, events, options.output.string());
  return k_exit_ok;
}

}  // namespace smtrace::cli
