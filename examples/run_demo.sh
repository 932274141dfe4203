#!/usr/bin/env bash
# Record the buggy example under smtrace and show what the trace holds.
# usage: examples/run_demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: run_demo.sh BUILD_DIR}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-demo.XXXXXX")/trace
smtrace="$build/cli/smtrace"

echo "== smtrace record: a wildcard receive that may match either sender"
"$smtrace" record -o "$out" -- mpirun --oversubscribe -np 3 "$build/examples/wildcard_race"
echo
echo "== smtrace info"
"$smtrace" info "$out"
echo
echo "== smtrace dump --rank 0: posted MPI_ANY_SOURCE, and the sender that matched"
"$smtrace" dump "$out" --rank 0
