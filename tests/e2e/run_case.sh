#!/usr/bin/env bash
# Runs one end-to-end case: a real mpirun job, recorded into a fresh
# temporary directory, then the checker on the trace.
#
#   run_case.sh [options] -- PROGRAM [ARGS...]
#
#   --case NAME        check function of e2e_check (and the test's name)
#   --np N             ranks (default 2)
#   --smtrace PATH     the smtrace CLI
#   --tracer PATH      libsmtrace.so (modes preload and unwritable)
#   --checker PATH     e2e_check
#   --source FILE      the program's source, for call-site markers
#   --expect-fail      the job must exit non-zero (killed, crashed, aborted)
#   --kill-after S     stop the job with `timeout -s TERM S` (a hung job)
#   --mode MODE        record (default): smtrace record, then the checker
#                      check: smtrace record, then `smtrace check` (see
#                        --finds / --clean) instead of the checker
#                      prove: as check, with `smtrace prove` (the SMT
#                        backend's report, harmless races included)
#                      untraced: plain mpirun, must exit 0, no trace written
#                      unwritable:DIR: preload the tracer with SMTRACE_DIR=DIR;
#                        the job must exit 0 with exactly one smtrace warning
#                        per rank on stderr
#   --finds "K1 K2"    (modes check, prove) each kind must be among the findings
#   --lacks "K1 K2"    (modes check, prove) no finding of these kinds
#   --clean            (modes check, prove) no finding of any kind, exit status 0
#   --report-has REGEX (modes check, prove) a line of the text report must
#                      match REGEX (repeatable)
#   --no-errors        (modes check, prove) no error-level finding, exit status 0
#   --check-args "..." (mode check) more options for `smtrace check`
#   --smtrace-mpi PATH (mode check) also run `mpirun -np 2 smtrace-mpi check`
#                      on the trace: its JSON report and exit status must be
#                      smtrace check's
#   --mpi-np N         processes for that smtrace-mpi job (default 2: one
#                      reads every rank); 3 or more split the ranks among
#                      readers
#   --build CC         PROGRAM is a C source: compile it first with the
#                      compiler wrapper CC (smtrace-cc: load/store capture)
#   --cflags "..."     more compiler options for --build (-fopenmp)
#   --dump-has REGEX   (modes record, check) `smtrace dump` of the trace must
#                      have a line matching REGEX (repeatable)
#
# The temporary directory is removed when the case passes and kept (its path
# printed) when it fails.
set -u

case_name=""
np=2
smtrace=""
tracer=""
checker=""
smtrace_mpi=""
mpi_np=2
source_file=""
expect_fail=0
kill_after=""
mode=record
finds=""
lacks=""
clean=0
no_errors=0
check_extra=""
build_cc=""
build_flags=""
dump_has=()
report_has=()
while [ $# -gt 0 ]; do
  case "$1" in
    --case) case_name=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --smtrace) smtrace=$2; shift 2 ;;
    --tracer) tracer=$2; shift 2 ;;
    --checker) checker=$2; shift 2 ;;
    --smtrace-mpi) smtrace_mpi=$2; shift 2 ;;
    --mpi-np) mpi_np=$2; shift 2 ;;
    --source) source_file=$2; shift 2 ;;
    --expect-fail) expect_fail=1; shift ;;
    --kill-after) kill_after=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --finds) finds=$2; shift 2 ;;
    --lacks) lacks=$2; shift 2 ;;
    --clean) clean=1; shift ;;
    --no-errors) no_errors=1; shift ;;
    --check-args) check_extra=$2; shift 2 ;;
    --build) build_cc=$2; shift 2 ;;
    --cflags) build_flags=$2; shift 2 ;;
    --dump-has) dump_has+=("$2"); shift 2 ;;
    --report-has) report_has+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_case.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ] || [ -z "$case_name" ]; then
  echo "run_case.sh: usage: run_case.sh --case NAME [options] -- PROGRAM [ARGS...]" >&2
  exit 2
fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep Open MPI from complaining about slots and from waiting on a dead peer.
export OMPI_MCA_rmaps_base_oversubscribe=1

work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-e2e-${case_name}.XXXXXX") || exit 2
trace="$work/trace"
out="$work/stdout.txt"
err="$work/stderr.txt"

fail() {
  echo "run_case.sh: $case_name: FAIL: $*" >&2
  echo "run_case.sh: $case_name: kept $work" >&2
  for f in "$out" "$err"; do
    if [ -s "$f" ]; then
      echo "----- $(basename "$f") (last 40 lines)" >&2
      tail -n 40 "$f" >&2
    fi
  done
  exit 1
}

if [ -n "$build_cc" ]; then
  src=$1
  shift
  # shellcheck disable=SC2086 # build_flags: several options
  "$build_cc" -g -O0 -Wall -Wextra -Werror $build_flags -I"$(dirname "$0")" "$src" -o "$work/program" >"$out" 2>"$err" ||
    fail "$build_cc could not build $src"
  set -- "$work/program" "$@"
fi

# Every --dump-has pattern must match a line of `smtrace dump`.
check_dump() {
  [ ${#dump_has[@]} -gt 0 ] || return 0
  "$smtrace" dump "$trace" >"$work/dump.txt" 2>&1 || fail "smtrace dump failed"
  for pattern in "${dump_has[@]}"; do
    grep -qE -- "$pattern" "$work/dump.txt" || fail "no line of smtrace dump matches: $pattern"
  done
}

launcher=(mpirun --oversubscribe -np "$np")
killer=()
if [ -n "$kill_after" ]; then
  # SIGTERM first (the tracer may record it); SIGKILL 5 s later if needed.
  killer=(timeout -s TERM -k 5 "$kill_after")
fi

case "$mode" in
  record)
    [ -n "$smtrace" ] && [ -n "$checker" ] || { echo "run_case.sh: --smtrace and --checker needed" >&2; exit 2; }
    "${killer[@]}" "$smtrace" record -o "$trace" -- "${launcher[@]}" "$@" >"$out" 2>"$err"
    rc=$?
    echo "run_case.sh: $case_name: job exit status $rc"
    if [ "$expect_fail" = 1 ]; then
      [ "$rc" -ne 0 ] || fail "the job was expected to fail, but exited 0"
    else
      [ "$rc" -eq 0 ] || fail "the job exited $rc"
    fi
    [ -d "$trace" ] || fail "no trace directory $trace"
    check_args=("$case_name" "$trace" --np "$np" --output "$out")
    [ -n "$source_file" ] && check_args+=(--source "$source_file")
    "$checker" "${check_args[@]}" || fail "the checker found problems in $trace"
    check_dump
    ;;
  check|prove)
    [ -n "$smtrace" ] || { echo "run_case.sh: --smtrace needed" >&2; exit 2; }
    "${killer[@]}" "$smtrace" record -o "$trace" -- "${launcher[@]}" "$@" >"$out" 2>"$err"
    rc=$?
    echo "run_case.sh: $case_name: job exit status $rc"
    if [ "$expect_fail" = 1 ]; then
      [ "$rc" -ne 0 ] || fail "the job was expected to fail, but exited 0"
    else
      [ "$rc" -eq 0 ] || fail "the job exited $rc"
    fi
    [ -d "$trace" ] || fail "no trace directory $trace"
    check_dump
    report="$work/$mode.json"
    # shellcheck disable=SC2086
    "$smtrace" "$mode" "$trace" --format json --quiet $check_extra >"$report" 2>"$err"
    crc=$?
    "$smtrace" "$mode" "$trace" --format text --quiet $check_extra >"$out" 2>/dev/null
    echo "run_case.sh: $case_name: smtrace $mode exit status $crc"
    cat "$out"
    [ "$crc" -le 1 ] || fail "smtrace $mode failed (exit $crc)"
    if [ "$mode" = check ] && [ -n "$smtrace_mpi" ]; then
      # The same analysis as an MPI job (process 0 analyzes, the others
      # read and run the rank-local passes): the same report, the same exit
      # status.
      # shellcheck disable=SC2086
      timeout -k 5 120 mpirun --oversubscribe -np "$mpi_np" "$smtrace_mpi" check "$trace" --format json --quiet \
        $check_extra >"$work/check-mpi.json" 2>"$work/check-mpi.err"
      mrc=$?
      echo "run_case.sh: $case_name: smtrace-mpi check ($mpi_np processes) exit status $mrc"
      [ "$mrc" -eq "$crc" ] || { cat "$work/check-mpi.err"; fail "smtrace-mpi check exited $mrc, smtrace check $crc"; }
      diff "$report" "$work/check-mpi.json" || fail "smtrace-mpi check's JSON report differs from smtrace check's"
    fi
    for kind in $finds; do
      grep -q "\"kind\": *\"$kind\"" "$report" || fail "expected a $kind finding"
    done
    for kind in $lacks; do
      if grep -q "\"kind\": *\"$kind\"" "$report"; then fail "expected no $kind finding"; fi
    done
    for pattern in "${report_has[@]}"; do
      grep -qE -- "$pattern" "$out" || fail "no line of the report matches: $pattern"
    done
    if [ "$clean" = 1 ]; then
      [ "$crc" -eq 0 ] || fail "expected a clean report, smtrace $mode exited $crc"
      if grep -q '"kind":' "$report"; then fail "expected no findings"; fi
    fi
    if [ "$no_errors" = 1 ]; then
      [ "$crc" -eq 0 ] || fail "expected no error, smtrace $mode exited $crc"
      if grep -q '"severity": *"error"' "$report"; then fail "expected no error-level finding"; fi
    fi
    ;;
  untraced)
    # Without the tracer its __asan_default_options is not there to turn
    # LSan off in the MPI processes (see scripts/bootstrap.sh sanitize), so
    # it is turned off here, for the same reason: Open MPI's leaks are in
    # components it has unloaded by exit, which no suppression can name.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      "${killer[@]}" "${launcher[@]}" "$@" >"$out" 2>"$err"
    rc=$?
    [ "$rc" -eq 0 ] || fail "the untraced job exited $rc"
    if grep -qi smtrace "$err"; then fail "the untraced job printed smtrace messages"; fi
    ;;
  unwritable:*)
    [ -n "$tracer" ] || { echo "run_case.sh: --tracer needed" >&2; exit 2; }
    dir=${mode#unwritable:}
    "${killer[@]}" "${launcher[@]}" -x LD_PRELOAD="$tracer" -x SMTRACE_DIR="$dir" "$@" >"$out" 2>"$err"
    rc=$?
    [ "$rc" -eq 0 ] || fail "the job exited $rc with SMTRACE_DIR=$dir"
    warnings=$(grep -ci smtrace "$err")
    echo "run_case.sh: $case_name: $warnings smtrace lines on stderr:"
    grep -i smtrace "$err"
    [ "$warnings" -eq "$np" ] || fail "expected exactly $np smtrace warnings (one per rank), found $warnings"
    ;;
  *)
    echo "run_case.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac

echo "run_case.sh: $case_name: ok"
rm -rf "$work"
exit 0
