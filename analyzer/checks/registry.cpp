#include "analyzer/checks/checks.hpp"
#include "analyzer/checks/open_requests.hpp"

namespace smtrace::analyzer {

std::vector<std::unique_ptr<Check>> all_checks() {
  std::vector<std::unique_ptr<Check>> out;
  // One table of open requests per rank for both checks that keep one.
  const auto books = std::make_shared<checks::OpenRequestBooks>();
  out.push_back(checks::make_deadlock());
  out.push_back(checks::make_abnormal_termination());
  out.push_back(checks::make_invalid_argument(books));
  out.push_back(checks::make_thread_level());
  out.push_back(checks::make_type_mismatch());
  out.push_back(checks::make_epoch_lifecycle());
  out.push_back(checks::make_collective_mismatch());
  out.push_back(checks::make_collective_misaligned());
  out.push_back(checks::make_local_concurrency());
  out.push_back(checks::make_rma_race());
  out.push_back(checks::make_cuda_mpi_race());
  out.push_back(checks::make_request_leak(books));
  out.push_back(checks::make_unmatched_message());
  out.push_back(checks::make_resource_leak());
  return out;
}

}  // namespace smtrace::analyzer
