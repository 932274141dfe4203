// How the otf2 fuzz target lays its input out as an OTF2 archive (one
// place, read by fuzz_otf2.cpp and by the unit test of its regressions):
// the input is cut at each occurrence of k_otf2_separator, and the pieces
// become, in order,
//
//   piece 0       DIR/traces.otf2     the anchor file
//   piece 1       DIR/traces.def      the global definitions
//   piece 2 + 2k  DIR/traces/k.evt    location k's events
//   piece 3 + 2k  DIR/traces/k.def    location k's local definitions
//
// for k < k_otf2_max_locations (further pieces are ignored; a missing one
// is a missing file). tests/fuzz/otf2_seeds.sh packs archives this way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_util.hpp"

namespace smtrace::fuzz {

// Not a byte string an OTF2 file is likely to hold.
inline constexpr std::string_view k_otf2_separator = "\n==smtrace-fuzz-otf2-file==\n";
inline constexpr std::size_t k_otf2_max_locations = 16;

// Write the archive that `size` bytes of `data` lay out into the existing,
// empty directory `dir`; return its anchor file.
inline fs::path write_otf2_archive(const uint8_t* data, std::size_t size, const fs::path& dir) {
  fs::create_directories(dir / "traces");
  const auto piece_path = [&](std::size_t index) {
    if (index == 0) return dir / "traces.otf2";
    if (index == 1) return dir / "traces.def";
    const std::size_t location = (index - 2) / 2;
    return dir / "traces" / (std::to_string(location) + ((index - 2) % 2 == 0 ? ".evt" : ".def"));
  };
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t begin = 0;
  for (std::size_t index = 0; index < 2 + 2 * k_otf2_max_locations; ++index) {
    const std::size_t end = std::min(input.find(k_otf2_separator, begin), input.size());
    write_file(piece_path(index), data + begin, end - begin);
    if (end == input.size()) break;
    begin = end + k_otf2_separator.size();
  }
  return dir / "traces.otf2";
}

}  // namespace smtrace::fuzz
