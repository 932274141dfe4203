#!/usr/bin/env bash
# `smtrace record` tells a launcher that fails after the application
# completed from an application that ended abnormally (issue 14 item 4).
#
#   record_exit.sh SMTRACE GOOD_PROGRAM CRASHING_PROGRAM PREINIT_PROGRAM
#
# PREINIT_PROGRAM run with `preinit` calls MPI_Send before MPI_Init: the
# tracer must say so and record it (a trace begun at that call); run with
# `postfini` it calls MPI_Barrier after MPI_Finalize: the same (the call
# written after the trace's end), and `smtrace check` names both.
# The launcher failure is played by a shell that runs mpirun and then exits
# 7, as mpirun does when it crashes in its teardown.
set -u
smtrace=$1 good=$2 crash=$3 preinit=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-e2e-record-exit.XXXXXX") || exit 2
fail() {
  echo "record_exit.sh: FAIL: $*" >&2
  echo "----- stderr" >&2
  cat "$work/err.txt" >&2
  echo "record_exit.sh: kept $work" >&2
  exit 1
}
"$smtrace" record -o "$work/launcher" -- sh -c "mpirun -np 2 $good fixed && exit 7" >/dev/null 2>"$work/err.txt"
rc=$?
[ "$rc" -eq 7 ] || fail "expected the launcher's status 7, got $rc"
grep -q "every rank reached MPI_Finalize: the application completed" "$work/err.txt" ||
  fail "a launcher failure after MPI_Finalize was not told apart"
timeout -k 5 30 "$smtrace" record -o "$work/crash" -- mpirun -np 2 "$crash" >/dev/null 2>"$work/err.txt"
rc=$?
[ "$rc" -ne 0 ] || fail "the crashing program exited 0"
grep -q "the application ended abnormally" "$work/err.txt" || fail "an application crash was not named as such"
grep -q "the launcher failed afterwards" "$work/err.txt" && fail "an application crash was blamed on the launcher"
timeout -k 5 30 "$smtrace" record -o "$work/preinit" -- mpirun -np 2 "$preinit" preinit >/dev/null 2>"$work/err.txt"
grep -q "smtrace: MPI_Send called before MPI_Init" "$work/err.txt" || fail "MPI_Send before MPI_Init was not reported"
"$smtrace" check "$work/preinit" --quiet >"$work/check.txt" 2>&1
grep -q "called MPI_Send before MPI_Init" "$work/check.txt" || fail "smtrace check did not name MPI_Send before MPI_Init"
timeout -k 5 30 "$smtrace" record -o "$work/postfini" -- mpirun -np 2 "$preinit" postfini >/dev/null 2>"$work/err.txt"
grep -q "smtrace: MPI_Barrier called after MPI_Finalize" "$work/err.txt" ||
  fail "MPI_Barrier after MPI_Finalize was not reported"
grep -q "MPI_Finalized called" "$work/err.txt" && fail "MPI_Finalized, allowed after MPI_Finalize, was reported"
"$smtrace" check "$work/postfini" --quiet >"$work/check.txt" 2>&1
grep -q "called MPI_Barrier after MPI_Finalize" "$work/check.txt" || fail "smtrace check did not name MPI_Barrier after MPI_Finalize"
echo "record_exit.sh: ok"
rm -rf "$work"
