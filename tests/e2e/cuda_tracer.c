/* The CUPTI tracer in a CUDA program (tests/e2e/cuda_tracer.sh): device
 * memory, a stream, a copy, then MPI on the host copy. Without a GPU every
 * CUDA call fails and the tracer must switch CUDA tracing off with one
 * notice while the MPI calls are recorded; with one, the CUDA calls must be
 * in the trace. Built with the C compiler and the shared CUDA runtime (no
 * nvcc needed). */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int host[256] = {0};
  void* dev = NULL;
  cudaStream_t stream = NULL;
  cudaError_t rc = cudaMalloc(&dev, sizeof host);
  if (rc == cudaSuccess) {
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaMemsetAsync(dev, 1, sizeof host, stream);
    cudaMemcpyAsync(host, dev, sizeof host, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    cudaFree(dev);
  }
  MPI_Allreduce(MPI_IN_PLACE, host, 256, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("cuda: %s\n", rc == cudaSuccess ? "device" : "none");
  MPI_Finalize();
  return 0;
}
