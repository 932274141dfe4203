// The SMT model of a written trace, for the unit tests: a check that builds
// it at the end of the analysis (as prove() does), and model_of().
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer_trace_builder.hpp"
#include "smt_encoder/model.hpp"

namespace smtrace::test {

// The check that builds the model at the end of the analysis.
class ModelCheck final : public an::Check {
 public:
  explicit ModelCheck(std::shared_ptr<smt::Model> out) : m_out(std::move(out)) {}
  std::string_view name() const override { return "smt-model"; }
  an::Severity severity() const override { return an::Severity::info; }
  std::string_view description() const override { return "builds the SMT model (unit test)"; }
  std::unique_ptr<an::RankPass> rank_pass(const an::RankData& data) override { return m_collector.rank_pass(data); }
  void finish(const an::Context& context, std::vector<std::unique_ptr<an::RankPass>>&,
              std::vector<an::Finding>&) override {
    *m_out = smt::build_model(context, m_collector);
  }

 private:
  std::shared_ptr<smt::Model> m_out;
  smt::Collector m_collector;
};

// Return the model of `trace` (its analysis runs the model's check alone).
inline smt::Model model_of(const tf::Trace& trace) {
  auto out = std::make_shared<smt::Model>();
  an::Options options;
  options.extra_checks.push_back([out] { return std::make_unique<ModelCheck>(out); });
  options.checks = {"smt-model"};
  analyze_trace(trace, options);
  return std::move(*out);
}

}  // namespace smtrace::test
