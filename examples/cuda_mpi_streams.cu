// A CUDA + MPI program for the CUPTI tracer on a GPU machine
// (examples/run_cuda_demo.sh): two ranks exchange a buffer a kernel wrote,
// staged through pinned host memory (the MPI library need not be
// CUDA-aware), and exercise every CUDA call the tracer records.
//   cuda_mpi_streams race     the device-to-host copy is asynchronous and the
//                             send does not wait for it: cuda-mpi-race
//   cuda_mpi_streams ok       the same with cudaStreamSynchronize: clean
//   cuda_mpi_streams streams  non-blocking streams ordered by events
//                             (cudaEventRecord, cudaStreamWaitEvent, a
//                             cudaEventQuery polling loop), cudaMemcpy,
//                             cudaMemset(Async), managed memory, a read-only
//                             argument declared with smtrace_cuda_readonly:
//                             clean
//   cuda_mpi_streams device   CUDA-aware MPI: MPI_Send(d_buf) right after the
//                             kernel, no synchronization: cuda-mpi-race
//                             (skipped, exit 0, where MPI is not CUDA-aware)
//   cuda_mpi_streams calls N  N rounds of launch + async copy + event record +
//                             query + stream synchronize, for the per-call
//                             cost under the tracer (SMTRACE_CUDA=off vs on)
// Built by examples/CMakeLists.txt when nvcc is found, with the shared CUDA
// runtime (the tracer looks for libcudart.so).
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "smtrace/annotate.h"

#define CHECK_CUDA(call)                                                                     \
  do {                                                                                       \
    cudaError_t rc_ = (call);                                                                \
    if (rc_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(rc_)); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
    }                                                                                        \
  } while (0)

constexpr int k_n = 1 << 16;

__global__ void fill(float* out, int n, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

__global__ void scale(float* out, const float* in, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

namespace {

int blocks() { return (k_n + 255) / 256; }

// Rank 0 fills d_buf and sends it staged through pinned memory; rank 1
// receives into pinned memory and copies to its device.
void staged(int rank, bool sync_before_send) {
  float *d_buf = nullptr, *h_buf = nullptr;
  cudaStream_t stream;
  CHECK_CUDA(cudaMalloc(&d_buf, k_n * sizeof(float)));
  CHECK_CUDA(cudaMallocHost(&h_buf, k_n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (rank == 0) {
    fill<<<blocks(), 256, 0, stream>>>(d_buf, k_n, 1.0f);
    CHECK_CUDA(cudaMemcpyAsync(h_buf, d_buf, k_n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    if (sync_before_send) CHECK_CUDA(cudaStreamSynchronize(stream));
    MPI_Send(h_buf, k_n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
    CHECK_CUDA(cudaStreamSynchronize(stream));
  } else if (rank == 1) {
    MPI_Recv(h_buf, k_n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_CUDA(cudaMemcpyAsync(d_buf, h_buf, k_n * sizeof(float), cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFreeHost(h_buf));
  CHECK_CUDA(cudaFree(d_buf));
}

void streams(int rank) {
  smtrace_cuda_readonly(scale, 1);  // `in` is only read
  float *d_a = nullptr, *d_b = nullptr, *m_buf = nullptr;
  float* h_buf = static_cast<float*>(std::malloc(k_n * sizeof(float)));  // pageable
  cudaStream_t s1, s2;
  cudaEvent_t done;
  CHECK_CUDA(cudaMalloc(&d_a, k_n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_b, k_n * sizeof(float)));
  CHECK_CUDA(cudaMallocManaged(&m_buf, k_n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&done));
  CHECK_CUDA(cudaMemsetAsync(d_a, 0, k_n * sizeof(float), s1));
  fill<<<blocks(), 256, 0, s1>>>(d_a, k_n, static_cast<float>(rank));
  CHECK_CUDA(cudaEventRecord(done, s1));
  CHECK_CUDA(cudaStreamWaitEvent(s2, done, 0));
  scale<<<blocks(), 256, 0, s2>>>(d_b, d_a, k_n, 2.0f);
  CHECK_CUDA(cudaEventRecord(done, s2));
  while (cudaEventQuery(done) == cudaErrorNotReady) {
  }
  CHECK_CUDA(cudaMemcpy(h_buf, d_b, k_n * sizeof(float), cudaMemcpyDeviceToHost));  // pageable: synchronous
  CHECK_CUDA(cudaMemset(m_buf, 0, k_n * sizeof(float)));
  scale<<<blocks(), 256>>>(m_buf, d_b, k_n, 0.5f);  // legacy default stream
  CHECK_CUDA(cudaDeviceSynchronize());
  // Managed memory, synchronized, through MPI.
  float sum = 0;
  MPI_Allreduce(m_buf, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, h_buf, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaStreamDestroy(s2));
  CHECK_CUDA(cudaStreamDestroy(s1));
  CHECK_CUDA(cudaFree(m_buf));
  CHECK_CUDA(cudaFree(d_b));
  CHECK_CUDA(cudaFree(d_a));
  std::free(h_buf);
}

bool cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

void device(int rank) {
  float* d_buf = nullptr;
  CHECK_CUDA(cudaMalloc(&d_buf, k_n * sizeof(float)));
  if (rank == 0) {
    fill<<<blocks(), 256>>>(d_buf, k_n, 3.0f);
    MPI_Send(d_buf, k_n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);  // no synchronization: races with fill
  } else if (rank == 1) {
    MPI_Recv(d_buf, k_n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(d_buf));
}

void calls(long rounds) {
  float *d_buf = nullptr, *h_buf = nullptr;
  cudaStream_t stream;
  cudaEvent_t event;
  CHECK_CUDA(cudaMalloc(&d_buf, 1024 * sizeof(float)));
  CHECK_CUDA(cudaMallocHost(&h_buf, 1024 * sizeof(float)));
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&event));
  double t0 = MPI_Wtime();
  for (long i = 0; i < rounds; ++i) {
    fill<<<4, 256, 0, stream>>>(d_buf, 1024, 1.0f);
    CHECK_CUDA(cudaMemcpyAsync(h_buf, d_buf, 1024 * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaEventRecord(event, stream));
    (void)cudaEventQuery(event);
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  double t = MPI_Wtime() - t0;
  std::printf("calls: %ld rounds of 5 CUDA calls: %.3f s, %.1f ns per call\n", rounds, t, t * 1e9 / (5.0 * rounds));
  CHECK_CUDA(cudaEventDestroy(event));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFreeHost(h_buf));
  CHECK_CUDA(cudaFree(d_buf));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "ok";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) std::printf("skipped: no CUDA device\n");
    MPI_Finalize();
    return 0;
  }
  CHECK_CUDA(cudaSetDevice(rank % devices));
  if (std::strcmp(mode, "race") == 0) staged(rank, false);
  else if (std::strcmp(mode, "ok") == 0) staged(rank, true);
  else if (std::strcmp(mode, "streams") == 0) streams(rank);
  else if (std::strcmp(mode, "device") == 0) {
    if (cuda_aware()) device(rank);
    else if (rank == 0) std::printf("skipped: MPI is not CUDA-aware\n");
  } else if (std::strcmp(mode, "calls") == 0) {
    if (rank == 0) calls(argc > 2 ? std::atol(argv[2]) : 100000);
  } else {
    if (rank == 0) std::fprintf(stderr, "usage: %s race|ok|streams|device|calls [N]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
