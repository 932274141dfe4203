#include "trace_format/content.hpp"

#include <array>
#include <utility>

namespace smtrace::format {

namespace {

struct ContentName {
  Content content;
  std::string_view name;
  std::string_view phrase;
};

constexpr std::array<ContentName, 5> k_names = {{
    {Content::buffers, "buffers", "no buffer addresses"},
    {Content::receive_envelope, "receive_envelope", "no posted source and tag of receives"},
    {Content::type_signatures, "type_signatures", "no type signatures (byte sizes only)"},
    {Content::thread_level, "thread_level", "no thread level provided by MPI"},
    {Content::topologies, "topologies", "no virtual topologies of communicators"},
}};

std::string join(ContentSet set, bool phrases) {
  std::string out;
  for (const ContentName& entry : k_names) {
    if ((set & content_bit(entry.content)) == 0) continue;
    if (!out.empty()) out += phrases ? "; " : ",";
    out += phrases ? entry.phrase : entry.name;
  }
  return out;
}

}  // namespace

std::string content_names(ContentSet set) { return join(set, false); }

std::string describe_lacks(ContentSet set) { return join(set, true); }

bool started_before_init(const RankHeader& header) {
  const auto it = header.options.find(std::string(k_started_option));
  return it != header.options.end() && it->second == k_started_before_init;
}

bool cuda_untraced(const RankHeader& header) {
  const auto it = header.options.find(std::string(k_cuda_option));
  return it != header.options.end() && it->second == k_cuda_untraced;
}

ContentSet lacks(const RankHeader& header) {
  const auto it = header.options.find(std::string(k_lacks_option));
  if (it == header.options.end()) return 0;
  ContentSet set = 0;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    for (const ContentName& entry : k_names) {
      if (entry.name == word) set |= content_bit(entry.content);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return set;
}

void set_lacks(RankHeader& header, ContentSet set) {
  if (set == 0) {
    header.options.erase(std::string(k_lacks_option));
  } else {
    header.options[std::string(k_lacks_option)] = content_names(set);
  }
}

}  // namespace smtrace::format
