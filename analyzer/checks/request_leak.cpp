// PLACEHOLDER until this check is written: finds nothing.
#include "analyzer/checks/checks.hpp"

namespace smtrace::analyzer::checks {
namespace {
class Placeholder final : public Check {
 public:
  std::string_view name() const override { return "request-leak"; }
  Severity severity() const override { return Severity::error; }
  std::string_view description() const override { return "(not written yet)"; }
  void finish(const Context&, std::vector<std::unique_ptr<RankPass>>&, std::vector<Finding>&) override {}
};
}  // namespace
std::unique_ptr<Check> make_request_leak() { return std::make_unique<Placeholder>(); }
}  // namespace smtrace::analyzer::checks
