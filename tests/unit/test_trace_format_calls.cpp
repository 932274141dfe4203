// calls.def against the generated Call enum of smtrace.proto: the two lists
// must hold the same names and numbers.
#include <doctest/doctest.h>

#include <google/protobuf/descriptor.h>

#include <string>

#include "trace_format/event.hpp"
#include "trace_format/smtrace.pb.h"

namespace fmt_ns = smtrace::format;

namespace {

struct Row {
  const char* id;
  int number;
  fmt_ns::Call call;
};

constexpr Row k_rows[] = {
#define SMTRACE_CALL(ID, MpiName, number, ...) {#ID, number, fmt_ns::Call::MpiName},
#include "trace_format/calls.def"
#undef SMTRACE_CALL
};

}  // namespace

TEST_SUITE_BEGIN("trace_format");

TEST_CASE("trace_format::calls.def::matches the Call enum of the schema") {
  const google::protobuf::EnumDescriptor* call = smtrace::v1::Call_descriptor();
  SUBCASE("every table row is an enum value with the same number") {
    for (const Row& row : k_rows) {
      CAPTURE(row.id);
      const auto* value = call->FindValueByName(row.id);
      REQUIRE(value != nullptr);
      CHECK(value->number() == row.number);
      CHECK(static_cast<int>(row.call) == row.number);
    }
  }
  SUBCASE("every enum value but CALL_UNSPECIFIED is a table row") {
    for (int i = 0; i < call->value_count(); ++i) {
      const auto* value = call->value(i);
      CAPTURE(value->name());
      if (value->number() == 0) continue;
      bool found = false;
      for (const Row& row : k_rows) found = found || (row.id == value->name() && row.number == value->number());
      CHECK(found);
      CHECK(fmt_ns::call_known(static_cast<fmt_ns::Call>(value->number())));
    }
  }
  SUBCASE("numbers increase") {
    for (std::size_t i = 1; i < std::size(k_rows); ++i) CHECK(k_rows[i - 1].number < k_rows[i].number);
  }
}

TEST_CASE("trace_format::call_name::names and lookups") {
  CHECK(fmt_ns::call_name(fmt_ns::Call::Send) == "MPI_Send");
  CHECK(fmt_ns::call_name(fmt_ns::Call::Reduce_scatter_block) == "MPI_Reduce_scatter_block");
  CHECK(fmt_ns::call_name(fmt_ns::Call::Annotate_read) == "smtrace_annotate_read");
  CHECK(fmt_ns::call_name(fmt_ns::Call::Annotate_write) == "smtrace_annotate_write");
  CHECK(fmt_ns::call_name(fmt_ns::Call::Load) == "smtrace_load");
  CHECK(fmt_ns::call_name(fmt_ns::Call::Store) == "smtrace_store");
  CHECK(fmt_ns::call_family(fmt_ns::Call::Load) == fmt_ns::Family::annotate);
  CHECK(fmt_ns::call_name(static_cast<fmt_ns::Call>(9999)) == "?");
  CHECK(fmt_ns::call_name(fmt_ns::Call::unspecified) == "?");

  CHECK(fmt_ns::call_from_name("MPI_Send") == fmt_ns::Call::Send);
  CHECK(fmt_ns::call_from_name("Send") == fmt_ns::Call::Send);
  CHECK(fmt_ns::call_from_name("SEND") == fmt_ns::Call::Send);
  CHECK(fmt_ns::call_from_name("mpi_comm_split") == fmt_ns::Call::Comm_split);
  CHECK(fmt_ns::call_from_name("COMM_SPLIT_TYPE") == fmt_ns::Call::Comm_split_type);
  CHECK(fmt_ns::call_from_name("smtrace_annotate_write") == fmt_ns::Call::Annotate_write);
  CHECK(fmt_ns::call_from_name("ANNOTATE_READ") == fmt_ns::Call::Annotate_read);
  CHECK(fmt_ns::call_from_name("smtrace_store") == fmt_ns::Call::Store);
  CHECK(fmt_ns::call_from_name("LOAD") == fmt_ns::Call::Load);
  // CUDA calls go by the runtime's names, without the MPI_ prefix.
  CHECK(fmt_ns::call_name(fmt_ns::Call::cudaMemcpyAsync) == "cudaMemcpyAsync");
  CHECK(fmt_ns::call_from_name("cudaLaunchKernel") == fmt_ns::Call::cudaLaunchKernel);
  CHECK(fmt_ns::call_from_name("CUDA_STREAM_WAIT_EVENT") == fmt_ns::Call::cudaStreamWaitEvent);
  CHECK_FALSE(fmt_ns::call_from_name("MPI_Frobnicate").has_value());
  CHECK_FALSE(fmt_ns::call_from_name("").has_value());
  // Every name round-trips.
  for (const Row& row : k_rows) {
    CAPTURE(row.id);
    CHECK(fmt_ns::call_from_name(fmt_ns::call_name(row.call)) == row.call);
    CHECK(fmt_ns::call_from_name(row.id) == row.call);
  }
}

TEST_CASE("trace_format::call_family::families and blocking") {
  CHECK(fmt_ns::call_family(fmt_ns::Call::Send) == fmt_ns::Family::p2p);
  CHECK(fmt_ns::call_family(fmt_ns::Call::Waitall) == fmt_ns::Family::request);
  CHECK(fmt_ns::call_family(fmt_ns::Call::Allreduce) == fmt_ns::Family::coll);
  CHECK(fmt_ns::call_family(fmt_ns::Call::Put) == fmt_ns::Family::rma);
  CHECK(fmt_ns::call_family(fmt_ns::Call::Annotate_read) == fmt_ns::Family::annotate);
  CHECK(fmt_ns::call_family(static_cast<fmt_ns::Call>(9999)) == fmt_ns::Family::none);
  CHECK(fmt_ns::family_name(fmt_ns::Family::rma) == "rma");
  CHECK(fmt_ns::call_family(fmt_ns::Call::cudaStreamSynchronize) == fmt_ns::Family::cuda);
  CHECK(fmt_ns::family_name(fmt_ns::Family::cuda) == "cuda");
  CHECK(fmt_ns::call_blocks(fmt_ns::Call::cudaDeviceSynchronize));
  CHECK_FALSE(fmt_ns::call_blocks(fmt_ns::Call::cudaLaunchKernel));
  CHECK(fmt_ns::call_blocks(fmt_ns::Call::Recv));
  CHECK_FALSE(fmt_ns::call_blocks(fmt_ns::Call::Isend));
  CHECK_FALSE(fmt_ns::call_known(static_cast<fmt_ns::Call>(9999)));
  CHECK(fmt_ns::rank_file_name(3) == "rank-3.smt");
}

TEST_SUITE_END();
