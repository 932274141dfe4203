#include "analyzer/checks/checks.hpp"

namespace smtrace::analyzer {

std::vector<std::unique_ptr<Check>> all_checks() {
  std::vector<std::unique_ptr<Check>> out;
  out.push_back(checks::make_deadlock());
  out.push_back(checks::make_abnormal_termination());
  out.push_back(checks::make_invalid_argument());
  out.push_back(checks::make_thread_level());
  out.push_back(checks::make_type_mismatch());
  out.push_back(checks::make_epoch_lifecycle());
  out.push_back(checks::make_collective_mismatch());
  out.push_back(checks::make_collective_misaligned());
  out.push_back(checks::make_local_concurrency());
  out.push_back(checks::make_rma_race());
  out.push_back(checks::make_cuda_mpi_race());
  out.push_back(checks::make_request_leak());
  out.push_back(checks::make_unmatched_message());
  out.push_back(checks::make_resource_leak());
  return out;
}

}  // namespace smtrace::analyzer
