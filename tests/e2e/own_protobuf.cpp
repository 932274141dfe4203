// An MPI application that links libprotobuf itself (2 ranks): rank 0
// serializes a message of its own schema, sends the bytes, rank 1 parses and
// checks them. Run under the tracer it must behave exactly as without.
#include <google/protobuf/util/time_util.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "e2e_message.pb.h"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "own_protobuf: check failed: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 99);
  }
}

}  // namespace

int main(int argc, char** argv) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  require(size == 2, "2 ranks");

  const auto stamp = google::protobuf::util::TimeUtil::NanosecondsToTimestamp(1234567890123456789LL);
  if (rank == 0) {
    smtrace_e2e::Greeting greeting;
    greeting.set_from_rank(rank);
    greeting.set_text("hello from rank 0");
    for (int i = 0; i < 10; ++i) greeting.add_values(i * 1000000007LL);
    *greeting.mutable_sent() = stamp;
    std::string bytes;
    require(greeting.SerializeToString(&bytes), "serialize");
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 1, 1, MPI_COMM_WORLD);
  } else {
    MPI_Status status;
    MPI_Probe(0, 1, MPI_COMM_WORLD, &status);
    int n = 0;
    MPI_Get_count(&status, MPI_BYTE, &n);
    std::string bytes(static_cast<std::size_t>(n), '\0');
    MPI_Recv(bytes.data(), n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smtrace_e2e::Greeting greeting;
    require(greeting.ParseFromString(bytes), "parse");
    require(greeting.from_rank() == 0 && greeting.text() == "hello from rank 0", "fields");
    require(greeting.values_size() == 10 && greeting.values(9) == 9 * 1000000007LL, "values");
    require(greeting.sent() == stamp, "timestamp");
    require(google::protobuf::util::TimeUtil::ToString(greeting.sent()) == "2009-02-13T23:31:30.123456789Z",
            "timestamp text");
  }
  MPI_Finalize();
  google::protobuf::ShutdownProtobufLibrary();
  return 0;
}
