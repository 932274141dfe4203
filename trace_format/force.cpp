#include "trace_format/force.hpp"

#include <charconv>

#include "trace_format/call_semantics.hpp"

namespace smtrace::format {

namespace {

constexpr std::string_view k_note_prefix = "forced: wildcard receive ";

template <class T>
bool number(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<std::vector<ForceTarget>> parse_force(std::string_view text, std::string& error) {
  std::vector<ForceTarget> targets;
  std::size_t index = 0;
  bool more = !text.empty();
  while (more) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    more = comma != std::string_view::npos;
    text = more ? text.substr(comma + 1) : std::string_view();
    ++index;
    const auto colon = item.find(':');
    const auto equals = item.find('=');
    ForceTarget target;
    if (colon == std::string_view::npos || equals == std::string_view::npos || equals < colon ||
        !number(item.substr(0, colon), target.rank) ||
        !number(item.substr(colon + 1, equals - colon - 1), target.ordinal) ||
        !number(item.substr(equals + 1), target.source) || target.ordinal == 0 || target.source < 0) {
      error = "item " + std::to_string(index) + " '" + std::string(item) +
              "' is not RANK:N=SOURCE (N from 1, SOURCE a rank)";
      return std::nullopt;
    }
    for (const ForceTarget& other : targets) {
      if (other.rank == target.rank && other.ordinal == target.ordinal) {
        error = "item " + std::to_string(index) + " '" + std::string(item) + "' forces the same receive twice";
        return std::nullopt;
      }
    }
    targets.push_back(target);
  }
  if (targets.empty()) {
    error = "no RANK:N=SOURCE item";
    return std::nullopt;
  }
  return targets;
}

std::string force_text(const std::vector<ForceTarget>& targets) {
  std::string out;
  for (const ForceTarget& t : targets) {
    if (!out.empty()) out += ',';
    out += std::to_string(t.rank) + ':' + std::to_string(t.ordinal) + '=' + std::to_string(t.source);
  }
  return out;
}

WildcardCount wildcard_count(Call call, std::optional<int32_t> posted) {
  if (!posted || *posted != k_any_source) return WildcardCount::no;
  const CallTraits& traits = call_traits(call);
  if (traits.role != Role::recv && traits.role != Role::sendrecv && traits.role != Role::probe) {
    return WildcardCount::no;
  }
  if (traits.request == RequestEffect::persistent) return WildcardCount::no;
  return traits.poll ? WildcardCount::if_matched : WildcardCount::at_call;
}

std::optional<int32_t> posted_source(const Event& event) {
  return call_traits(event.call).role == Role::sendrecv ? event.recv_peer : event.peer;
}

bool is_counted_wildcard(const Event& event) {
  switch (wildcard_count(event.call, posted_source(event))) {
    case WildcardCount::no: return false;
    case WildcardCount::at_call: return true;
    case WildcardCount::if_matched: return event.flag.value_or(false);
  }
  return false;
}

std::string forced_note(uint64_t ordinal, Call call, int32_t source) {
  return std::string(k_note_prefix) + std::to_string(ordinal) + " (" + std::string(call_name(call)) +
         ") takes source " + std::to_string(source) + " instead of MPI_ANY_SOURCE";
}

std::optional<uint64_t> parse_forced_note(std::string_view message) {
  if (!message.starts_with(k_note_prefix)) return std::nullopt;
  message.remove_prefix(k_note_prefix.size());
  uint64_t ordinal = 0;
  if (!number(message.substr(0, message.find(' ')), ordinal)) return std::nullopt;
  return ordinal;
}

}  // namespace smtrace::format
