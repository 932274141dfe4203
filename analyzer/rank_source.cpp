#include "analyzer/rank_source.hpp"

namespace smtrace::analyzer {

namespace {

class FileSource final : public RankSource {
 public:
  FileSource(const std::filesystem::path& file, uint32_t recovered_version) : m_reader(file, recovered_version) {}
  std::optional<format::RankHeader> header(const format::RankReader::Callbacks& callbacks) override {
    return m_reader.header(callbacks);
  }
  void read_all(const format::RankReader::Callbacks& callbacks) override { m_reader.read_all(callbacks); }

 private:
  format::RankReader m_reader;
};

}  // namespace

std::unique_ptr<RankSource> read_rank_file_source(const std::filesystem::path& file, uint32_t recovered_version) {
  return std::make_unique<FileSource>(file, recovered_version);
}

}  // namespace smtrace::analyzer
