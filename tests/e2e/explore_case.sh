#!/usr/bin/env bash
# Runs `smtrace explore` on a real mpirun job and checks its JSON report.
#
#   explore_case.sh --smtrace PATH [options] -- PROGRAM [ARGS...]
#
#   --np N          ranks (default 3)
#   --exit N        explore's exit status must be N (default 0)
#   --has REGEX     the JSON report must have a line matching REGEX (repeatable)
#   --lacks REGEX   ... and none matching REGEX (repeatable)
#   --explore-args "..."  more options for `smtrace explore`
#
# The temporary directory is removed when the case passes and kept (its path
# printed) when it fails.
set -u
smtrace=""
np=3
want_exit=0
has=()
lacks=()
extra=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smtrace) smtrace=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --exit) want_exit=$2; shift 2 ;;
    --has) has+=("$2"); shift 2 ;;
    --lacks) lacks+=("$2"); shift 2 ;;
    --explore-args) extra=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "explore_case.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ] || [ -z "$smtrace" ]; then
  echo "explore_case.sh: usage: explore_case.sh --smtrace PATH [options] -- PROGRAM [ARGS...]" >&2
  exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-explore.XXXXXX")
status=0
# shellcheck disable=SC2086
"$smtrace" explore -o "$work/runs" --format json $extra -- mpirun --oversubscribe -np "$np" "$@" \
  >"$work/report.json" 2>"$work/stderr" || status=$?
fail=0
if [ "$status" -ne "$want_exit" ]; then
  echo "explore exited $status, expected $want_exit"
  fail=1
fi
for regex in "${has[@]}"; do
  grep -Eq -- "$regex" "$work/report.json" || { echo "report lacks a line matching: $regex"; fail=1; }
done
for regex in "${lacks[@]}"; do
  if grep -Eq -- "$regex" "$work/report.json"; then
    echo "report has a line matching: $regex"
    fail=1
  fi
done
if [ "$fail" -ne 0 ]; then
  echo "--- stderr"; cat "$work/stderr"
  echo "--- report"; cat "$work/report.json"
  echo "kept in $work"
  exit 1
fi
rm -rf "$work"
exit 0
