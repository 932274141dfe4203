// perfetto_validate FILE [--min-flows N] [--min-marks N]: parse the JSON
// `smtrace export --format perfetto` wrote and check its shape
// (tests/unit/perfetto_schema.hpp); exit 0 when it holds, 1 when not.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/perfetto_schema.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: perfetto_validate FILE [--min-flows N] [--min-marks N]\n");
    return 2;
  }
  long min_flows = 0, min_marks = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--min-flows") min_flows = std::strtol(argv[i + 1], nullptr, 10);
    if (option == "--min-marks") min_marks = std::strtol(argv[i + 1], nullptr, 10);
  }
  std::ifstream in(argv[1]);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "%s: not JSON: %s\n", argv[1], e.what());
    return 1;
  }
  auto errors = smtrace::test::perfetto_schema_errors(doc);
  long flows = 0, marks = 0;
  if (errors.empty()) {
    for (const auto& e : doc["traceEvents"]) {
      flows += e["ph"] == "s" && e.value("cat", "") == "message";
      marks += e["ph"] == "i" && e.value("cat", "") == "finding";
    }
    if (flows < min_flows) errors.push_back("only " + std::to_string(flows) + " message flows");
    if (marks < min_marks) errors.push_back("only " + std::to_string(marks) + " finding marks");
  }
  for (const std::string& error : errors) std::fprintf(stderr, "%s: %s\n", argv[1], error.c_str());
  if (errors.empty()) std::printf("%s: valid, %ld message flows, %ld finding marks\n", argv[1], flows, marks);
  return errors.empty() ? 0 : 1;
}
