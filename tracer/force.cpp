#include "tracer/force.hpp"

#include <string>

#include "tracer/handlers.hpp"

namespace smtrace::tracer {

void Forcer::configure(const std::vector<format::ForceTarget>& targets, uint32_t rank) {
  m_targets.clear();
  for (const format::ForceTarget& target : targets) {
    if (target.rank == rank) m_targets.push_back(target);
  }
  m_count.store(0);
}

Forcer::Decision Forcer::on_call(format::Call call, std::optional<int32_t> posted) {
  Decision decision;
  switch (format::wildcard_count(call, posted)) {
    case format::WildcardCount::no:
      return decision;
    case format::WildcardCount::at_call:
      decision.ordinal = m_count.fetch_add(1) + 1;
      break;
    case format::WildcardCount::if_matched:
      // Every poll of a polling loop is forced while its receive's number
      // is the forced one; the count moves on once one finds a message.
      decision.ordinal = m_count.load() + 1;
      break;
  }
  for (const format::ForceTarget& target : m_targets) {
    if (target.ordinal == decision.ordinal) decision.source = target.source;
  }
  return decision;
}

void Forcer::polled(format::Call call, std::optional<int32_t> posted, bool matched) {
  if (matched && format::wildcard_count(call, posted) == format::WildcardCount::if_matched) m_count.fetch_add(1);
}

namespace force {
namespace {

Forcer g_forcer;
// Polls are forced on every call of their loop; the note is written once.
std::atomic<uint64_t> g_noted{0};

}  // namespace

void start(const std::string& text, uint32_t rank) {
  std::string error;
  const auto targets = text.empty() ? std::nullopt : format::parse_force(text, error);
  g_forcer.configure(targets ? *targets : std::vector<format::ForceTarget>{}, rank);
  g_noted.store(0);
}

bool armed() noexcept { return g_forcer.armed(); }

void apply(const format::Event& event, int& source) noexcept {
  if (!g_forcer.armed()) return;
  const std::optional<int32_t> posted = format::posted_source(event);
  const Forcer::Decision decision = g_forcer.on_call(event.call, posted);
  if (!decision.source) return;
  source = *decision.source;
  if (g_noted.exchange(decision.ordinal) != decision.ordinal) {
    try {
      handlers::note(format::forced_note(decision.ordinal, event.call, *decision.source));
    } catch (...) {
      handlers::count_error();
    }
  }
}

void polled(const format::Event& event, bool matched) noexcept {
  if (g_forcer.armed()) g_forcer.polled(event.call, format::posted_source(event), matched);
}

}  // namespace force
}  // namespace smtrace::tracer
