#!/usr/bin/env bash
# The README's demo: record a small buggy MPI program under smtrace, then
# analyze the trace and show the report.
# usage: examples/run_demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: run_demo.sh BUILD_DIR}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-demo.XXXXXX")
smtrace="$build/cli/smtrace"

echo "== smtrace record: a ring shift that receives into its own pending send buffer"
"$smtrace" record -o "$work/ring" -- mpirun --oversubscribe -np 3 "$build/examples/ring_bugs"
echo
echo "== smtrace info"
"$smtrace" info "$work/ring"
echo
echo "== smtrace check (exit status 1: errors found)"
status=0
"$smtrace" check "$work/ring" || status=$?
echo "(smtrace check exited $status)"
echo
echo "== smtrace record + dump: a wildcard receive keeps what was posted and who matched"
"$smtrace" record -o "$work/wildcard" -- mpirun --oversubscribe -np 3 "$build/examples/wildcard_race"
"$smtrace" dump "$work/wildcard" --rank 0 | grep -E "MPI_Recv|^rank|^#" || true
echo
echo "== smtrace prove: which other sender each wildcard receive could have taken (Z3, with a replayed witness)"
"$smtrace" prove "$work/wildcard" || true
echo
echo "== smtrace explore: re-run the program with each other match forced (exit status 1: races confirmed)"
explore_status=0
"$smtrace" explore -o "$work/explore" -- mpirun --oversubscribe -np 3 "$build/examples/wildcard_race" ||
  explore_status=$?
echo "(smtrace explore exited $explore_status)"
echo
echo "Traces kept in $work"
[ "$status" -eq 1 ] && [ "$explore_status" -eq 1 ]
