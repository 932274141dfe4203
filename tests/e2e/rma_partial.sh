#!/usr/bin/env bash
# A window created where not every member records: the tracer gathers the
# members' window sizes (wrappers.cpp WindowShapes) only when each member
# has its rank file, so that a process without the tracer, or one that
# records nothing, never leaves the others waiting in the gather.
#
#   rma_partial.sh SMTRACE TRACER RMA_RANGE_PROGRAM
#
# 1. `smtrace record` of an MPMD job whose second context gets no tracer
#    (mpirun passes the tracer's variables to the first only);
# 2. the tracer preloaded in both ranks, SMTRACE_DISABLE=1 in the second.
# Each must end (status 0) within the timeout, with rank 0's trace.
set -u
smtrace=$1 tracer=$2 program=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-e2e-rma-partial.XXXXXX") || exit 2
fail() {
  echo "rma_partial.sh: FAIL: $*" >&2
  echo "----- stderr" >&2
  cat "$work/err.txt" >&2
  echo "rma_partial.sh: kept $work" >&2
  exit 1
}
timeout -k 5 30 "$smtrace" record -o "$work/mpmd" -- mpirun -np 1 "$program" sizes_fixed : -np 1 "$program" sizes_fixed \
  >/dev/null 2>"$work/err.txt"
rc=$?
[ "$rc" -eq 0 ] || fail "the MPMD job with one context untraced exited $rc (124: it hung)"
[ -f "$work/mpmd/rank-0.smt" ] || fail "rank 0 wrote no rank file"
mkdir -p "$work/disabled"
timeout -k 5 30 mpirun -np 1 -x LD_PRELOAD="$tracer" -x SMTRACE_DIR="$work/disabled" "$program" allocate_fixed : \
  -np 1 -x LD_PRELOAD="$tracer" -x SMTRACE_DIR="$work/disabled" -x SMTRACE_DISABLE=1 "$program" allocate_fixed \
  >/dev/null 2>"$work/err.txt"
rc=$?
[ "$rc" -eq 0 ] || fail "the job with SMTRACE_DISABLE=1 on rank 1 exited $rc (124: it hung)"
[ -f "$work/disabled/rank-0.smt" ] || fail "rank 0 wrote no rank file"
[ -f "$work/disabled/rank-1.smt" ] && fail "rank 1 wrote a rank file under SMTRACE_DISABLE=1"
echo "rma_partial.sh: ok"
rm -rf "$work"
