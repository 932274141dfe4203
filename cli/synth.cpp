// smtrace synth: write a synthetic trace (trace_format/synth.hpp) for
// benchmarks and analyzer tests.
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "trace_format/synth.hpp"

namespace smtrace::cli {

namespace {

// Parse "1000", "125k", "1M", "2G" (powers of 1000).
uint64_t parse_count(const std::string& text) {
  std::string digits = text;
  uint64_t scale = 1;
  switch (digits.empty() ? '\0' : digits.back()) {
    case 'k': case 'K': scale = 1'000; break;
    case 'm': case 'M': scale = 1'000'000; break;
    case 'g': case 'G': scale = 1'000'000'000; break;
    default: break;
  }
  if (scale != 1) digits.pop_back();
  const auto bad = [&] {
    return Error(fmt::format("--events: '{}' is not a count (examples: 5000, 125k, 1M)", text));
  };
  if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw bad();
  }
  return std::stoull(digits) * scale;
}

format::SynthBug parse_bug(const std::string& name) {
  for (auto bug : {format::SynthBug::none, format::SynthBug::deadlock,
                   format::SynthBug::collective_mismatch}) {
    if (name == format::synth_bug_name(bug)) return bug;
  }
  throw Error(fmt::format("--bug: no bug named '{}' (none, deadlock, collective-mismatch)", name));
}

}  // namespace

int run_synth(const SynthOptions& options) {
  format::SynthOptions o;
  o.ranks = options.ranks;
  o.events = parse_count(options.events);
  o.seed = options.seed;
  o.bug = parse_bug(options.bug);
  o.threads = options.threads;
  bool known = false;
  std::string names;
  for (const std::string& name : format::synth_generators()) {
    known = known || name == options.generator;
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!known) throw Error(fmt::format("no generator named '{}' ({})", options.generator, names));

  prepare_output_dir(options.output, options.force);
  const auto start = std::chrono::steady_clock::now();
  const format::SynthResult result = format::write_synthetic_trace(options.generator, options.output, o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr, "smtrace: wrote {} rank(s), {} events ({} iterations, {}) to {} in {:.2f} s\n",
             result.ranks, result.events, result.iterations, human_bytes(result.bytes),
             options.output.string(), seconds);
  return k_exit_ok;
}

}  // namespace smtrace::cli
