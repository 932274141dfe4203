#include "analyzer/rank_source.hpp"

namespace smtrace::analyzer {

namespace {

class FileSource final : public RankSource {
 public:
  explicit FileSource(const std::filesystem::path& file) : m_reader(file) {}
  std::optional<format::RankHeader> header(const format::RankReader::Callbacks& callbacks) override {
    return m_reader.header(callbacks);
  }
  void read_all(const format::RankReader::Callbacks& callbacks) override { m_reader.read_all(callbacks); }

 private:
  format::RankReader m_reader;
};

}  // namespace

std::unique_ptr<RankSource> read_rank_file_source(const std::filesystem::path& file) {
  return std::make_unique<FileSource>(file);
}

}  // namespace smtrace::analyzer
