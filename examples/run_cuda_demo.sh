#!/usr/bin/env bash
# The CUPTI tracer on a GPU machine (issue 6, items 4 and 5): record
# examples/cuda_mpi_streams.cu under smtrace, show that the CUDA events
# arrive, check the findings, and time the tracer's cost per CUDA call.
# usage: examples/run_cuda_demo.sh BUILD_DIR [ROUNDS]
# Exit 0 with "skipped: ..." where there is no GPU or the example was not
# built (no nvcc); 1 when a finding is not the expected one.
#
#   race     staged send before the device-to-host copy finished: cuda-mpi-race
#   ok       the same with cudaStreamSynchronize: clean
#   streams  events, a polling loop, memcpy/memset, managed memory, a read-only
#            kernel argument: clean; its dump shows each recorded call
#   device   CUDA-aware MPI only: MPI_Send(d_buf) racing the kernel
#   calls    ROUNDS x 5 CUDA calls, untraced, traced with SMTRACE_CUDA=off,
#            traced: ns per call
set -euo pipefail
build=${1:?usage: run_cuda_demo.sh BUILD_DIR [ROUNDS]}
rounds=${2:-100000}
exe="$build/examples/cuda_mpi_streams"
smtrace="$build/cli/smtrace"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ ! -x "$exe" ]; then
  echo "skipped: $exe was not built (no nvcc)"
  exit 0
fi
if ! probe=$(mpirun --oversubscribe -np 1 "$exe" ok 2>&1) || [[ $probe == *"skipped: no CUDA device"* ]]; then
  echo "skipped: no CUDA device ($probe)"
  exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-cuda-demo.XXXXXX")
failed=0

# expect MODE STATUS: record MODE on 2 ranks, dump its CUDA calls, check it;
# STATUS is the exit status smtrace check must give (1: errors, 0: clean).
expect() {
  local mode=$1 want=$2 status=0
  echo "== $mode"
  "$smtrace" record -o "$work/$mode" -- mpirun --oversubscribe -np 2 "$exe" "$mode"
  echo "-- CUDA calls recorded (rank 0), by name:"
  "$smtrace" dump "$work/$mode" --rank 0 | grep -o ' cuda[A-Za-z]*' | sort | uniq -c || true
  "$smtrace" dump "$work/$mode" --rank 0 | grep -E 'cuda' | head -30 || true
  "$smtrace" check "$work/$mode" || status=$?
  if [ "$status" -ne "$want" ]; then
    echo "FAILED: smtrace check on $mode exited $status, expected $want"
    failed=1
  fi
  echo
}

expect race 1
expect ok 0
expect streams 0
if mpirun --oversubscribe -np 2 "$exe" device | grep -q "skipped"; then
  echo "== device: skipped (MPI is not CUDA-aware)"
else
  expect device 1
fi

echo "== per-call cost, $rounds rounds of 5 CUDA calls on rank 0"
echo -n "untraced:           "; mpirun --oversubscribe -np 1 "$exe" calls "$rounds"
echo -n "SMTRACE_CUDA=off:   "; SMTRACE_CUDA=off "$smtrace" record -f -o "$work/calls-off" -- \
  mpirun --oversubscribe -np 1 -x SMTRACE_CUDA "$exe" calls "$rounds"
echo -n "traced:             "; "$smtrace" record -f -o "$work/calls" -- mpirun --oversubscribe -np 1 "$exe" calls "$rounds"
"$smtrace" info "$work/calls" | head -20
echo "Traces kept in $work"
exit $failed
