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

// Return the rank count the options ask of generator `name`, after checking
// that --k, --n, --events and --iterations are options it takes.
uint32_t ranks_for(const std::string& name, const SynthOptions& options) {
  const bool senders = name == "senders", ring = name == "leader" || name == "router";
  const bool fixed_length = senders || ring || name == "fig6" || name == "masterworker";
  if (options.k != 0 && !senders) throw Error(fmt::format("--k is for senders, not {}", name));
  if (options.n != 0 && !ring) throw Error(fmt::format("--n is for leader and router, not {}", name));
  if (!options.events.empty() && fixed_length) {
    throw Error(fmt::format("--events is for halo, pingpong and wildcard; {} is as long as its program{}",
                            name, senders || name == "leader" ? "" : " (see --iterations)"));
  }
  if (options.iterations != 0 && (senders || name == "leader")) {
    throw Error(fmt::format("--iterations: {} has no loop", name));
  }
  uint32_t ranks = options.ranks;
  const auto agree = [&](uint32_t wanted, const char* option) {
    if (ranks != 0 && ranks != wanted) {
      throw Error(fmt::format("--ranks {} and {} disagree (ranks would be {})", ranks, option, wanted));
    }
    ranks = wanted;
  };
  if (options.k != 0) agree(options.k + 1, "--k");
  if (options.n != 0) agree(options.n, "--n");
  if (ranks != 0) return ranks;
  if (senders) return 51;    // the seed's largest case, K = 50
  if (ring) return 8;
  if (name == "fig6") return 3;
  if (name == "masterworker") return 4;
  return 64;
}

}  // namespace

int run_synth(const SynthOptions& options) {
  bool known = false;
  std::string names;
  for (const std::string& name : format::synth_generators()) {
    known = known || name == options.generator;
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!known) throw Error(fmt::format("no generator named '{}' ({})", options.generator, names));
  format::SynthOptions o;
  o.ranks = ranks_for(options.generator, options);
  o.events = parse_count(options.events.empty() ? "1M" : options.events);
  o.iterations = options.iterations;
  o.seed = options.seed;
  o.bug = parse_bug(options.bug);
  o.threads = options.threads;
  const std::filesystem::path output =
      options.output.empty() ? std::filesystem::path(options.generator) : options.output;

  prepare_output_dir(output, options.force);
  const auto start = std::chrono::steady_clock::now();
  const format::SynthResult result = format::write_synthetic_trace(options.generator, output, o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr, "smtrace: wrote {} rank(s), {} events ({} iterations, {}) to {} in {:.2f} s\n",
             result.ranks, result.events, result.iterations, human_bytes(result.bytes),
             output.string(), seconds);
  return k_exit_ok;
}

}  // namespace smtrace::cli
