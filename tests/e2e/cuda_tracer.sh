#!/usr/bin/env bash
# usage: cuda_tracer.sh SMTRACE PROGRAM
# Records PROGRAM (tests/e2e/cuda_tracer.c) on 2 ranks. Without a GPU: the
# job succeeds, stderr holds exactly one "CUDA tracing off" notice, the MPI
# calls are in the trace and no CUDA call is. With a GPU: the CUDA calls are
# in the trace.
set -euo pipefail
smtrace=$1 program=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-cuda-tracer.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$work/out"; echo "--- stderr"; cat "$work/err"; exit 1; }
"$smtrace" record -o "$work/trace" -- mpirun --oversubscribe -np 2 "$program" >"$work/out" 2>"$work/err" ||
  fail "the job failed"
"$smtrace" dump "$work/trace" >"$work/dump" || fail "smtrace dump failed"
grep -q MPI_Allreduce "$work/dump" || fail "MPI_Allreduce not recorded"
notices=$(grep -c "CUDA tracing off" "$work/err" || true)
if grep -q "cuda: none" "$work/out"; then
  [ "$notices" -eq 1 ] || fail "expected one 'CUDA tracing off' notice, got $notices"
  ! grep -q "cudaMalloc" "$work/dump" || fail "a CUDA call recorded without a GPU"
  echo "no GPU: CUDA tracing off with one notice, MPI recorded"
else
  [ "$notices" -eq 0 ] || fail "CUDA tracing off on a GPU machine"
  for call in cudaMalloc cudaStreamCreateWithFlags cudaMemsetAsync cudaMemcpyAsync cudaStreamSynchronize cudaFree; do
    grep -q "$call" "$work/dump" || fail "$call not recorded"
  done
  # CUDA traced at MPI_Init: the headers must not say otherwise (cuda-mpi-race would skip the ranks).
  ! grep -q "cuda.traced=off" "$work/dump" || fail "a header says cuda.traced=off though CUDA calls were recorded"
  echo "GPU: the CUDA calls recorded"
fi
