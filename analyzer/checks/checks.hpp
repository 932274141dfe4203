// One factory per check; checks/registry.cpp lists them in report order.
#pragma once

#include <memory>

#include "analyzer/check.hpp"

namespace smtrace::analyzer::checks {

std::unique_ptr<Check> make_deadlock();
std::unique_ptr<Check> make_abnormal_termination();
class OpenRequestBooks;

// invalid-argument and request-leak read the same table of open requests
// per rank (open_requests.hpp) when given the same `books`; null: their own.
std::unique_ptr<Check> make_invalid_argument(std::shared_ptr<OpenRequestBooks> books = nullptr);
std::unique_ptr<Check> make_type_mismatch();
std::unique_ptr<Check> make_epoch_lifecycle();
std::unique_ptr<Check> make_collective_mismatch();
std::unique_ptr<Check> make_collective_misaligned();
std::unique_ptr<Check> make_local_concurrency();
std::unique_ptr<Check> make_request_leak(std::shared_ptr<OpenRequestBooks> books = nullptr);
std::unique_ptr<Check> make_unmatched_message();
std::unique_ptr<Check> make_resource_leak();
std::unique_ptr<Check> make_rma_race();
std::unique_ptr<Check> make_cuda_mpi_race();
std::unique_ptr<Check> make_thread_level();

}  // namespace smtrace::analyzer::checks
