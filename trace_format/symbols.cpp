// symbols.smt is written once, after the run, by one process: frames are
// sealed, so unlike rank files there are no open chunks to recover.
#include "trace_format/symbols.hpp"

#include <cstring>
#include <fstream>
#include <iterator>

#include "trace_format/proto_convert.hpp"
#include "trace_format/wire.hpp"

namespace smtrace::format {

namespace fs = std::filesystem;

namespace {

uint32_t get_u32le(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Keep frames well under k_max_frame_bytes.
constexpr std::size_t k_sites_per_frame = 4096;

}  // namespace

void write_symbols(const fs::path& dir,
                   const std::map<uint32_t, std::vector<CallSite>>& sites_by_rank) {
  const fs::path path = dir / std::string(k_symbols_file);
  const fs::path tmp = dir / (std::string(k_symbols_file) + ".tmp");
  std::string out(k_magic, k_magic_size);
  for (const auto& [rank, sites] : sites_by_rank) {
    for (std::size_t first = 0; first < sites.size() || first == 0; first += k_sites_per_frame) {
      v1::SymbolChunk chunk;
      chunk.set_rank(rank);
      for (std::size_t i = first; i < sites.size() && i < first + k_sites_per_frame; ++i) {
        detail::to_proto(sites[i], chunk.add_site());
      }
      std::string payload = chunk.SerializeAsString();
      append_frame_header(out, payload);
      out += payload;
      if (sites.empty()) break;
    }
  }
  std::error_code ec;
  {
    // Close (and so flush) before looking at the state: on a full disk the
    // write only fills the stream's buffer and the flush is what fails; an
    // empty file must not replace symbols.smt.
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    file.write(out.data(), static_cast<std::streamsize>(out.size()));
    file.close();
    if (!file) {
      const int error = errno;
      fs::remove(tmp, ec);
      throw TraceError(tmp.string() + ": cannot write: " + std::strerror(error));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) throw TraceError(path.string() + ": cannot write: " + ec.message());
}

std::map<uint32_t, std::vector<CallSite>> read_symbols(const fs::path& file,
                                                       std::vector<Problem>& problems) {
  std::map<uint32_t, std::vector<CallSite>> result;
  auto problem = [&](uint64_t offset, std::string message) {
    problems.push_back({Problem::Severity::warning, file.string(), offset, std::nullopt,
                        std::nullopt, std::move(message)});
  };
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    problem(0, "cannot read: " + std::string(std::strerror(errno)));
    return result;
  }
  // Symbol files are small (one entry per distinct call site), so read whole.
  const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (data.size() < k_magic_size || std::memcmp(data.data(), k_magic, k_magic_size) != 0) {
    problem(0, "not an smtrace symbols file (bad magic)");
    return result;
  }
  uint64_t pos = k_magic_size;
  while (pos < data.size()) {
    if (data.size() - pos < k_frame_header_size) {
      problem(pos, "file ends inside a frame header");
      break;
    }
    const auto* head = reinterpret_cast<const unsigned char*>(data.data() + pos);
    const uint32_t len = get_u32le(head);
    const uint32_t crc = get_u32le(head + 4);
    if (len == 0) break;
    if (len > k_max_frame_bytes || len > data.size() - pos - k_frame_header_size) {
      problem(pos, "frame length " + std::to_string(len) + " exceeds the bytes left");
      break;
    }
    const char* payload = data.data() + pos + k_frame_header_size;
    v1::SymbolChunk chunk;
    if (crc32c(payload, len) != crc) {
      problem(pos, "frame CRC mismatch; frame skipped");
    } else if (!chunk.ParseFromArray(payload, static_cast<int>(len))) {
      problem(pos + k_frame_header_size, "cannot parse a SymbolChunk; frame skipped");
    } else {
      auto& sites = result[chunk.rank()];
      for (const v1::CallSite& s : chunk.site()) sites.push_back(detail::to_plain(s));
    }
    pos += k_frame_header_size + len;
  }
  return result;
}

void apply_symbols(RankTrace& rank, const std::vector<CallSite>& sites) {
  for (const CallSite& s : sites) {
    auto it = rank.sites.find(s.id);
    if (it == rank.sites.end()) continue;
    CallSite& site = it->second;
    if (!s.function.empty()) site.function = s.function;
    if (!s.file.empty()) site.file = s.file;
    if (s.line != 0) site.line = s.line;
    if (s.column != 0) site.column = s.column;
  }
}

}  // namespace smtrace::format
