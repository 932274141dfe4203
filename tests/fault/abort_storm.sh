#!/usr/bin/env bash
# The abort storm: record many short MPI jobs that die of an MPI fatal error
# or MPI_Abort (or a crash) while the machine is loaded, and count the rank
# files that came out damaged. Not a CTest test (minutes); the reproduction
# of issue 17's "rank file found entirely zero" (docs/tracer.md, "Abort storms").
#   abort_storm.sh RUNS BUILD_DIR [--no-load]
# For each run: `smtrace record` of one of fatal_error (4 ranks, error at
# once), fatal_error late, e2e abort (3 ranks), e2e segv (2 ranks); then each
# rank file is classified, and the rank files must be as they were when
# `record` returned (and printed its summary) 2 s later. One busy loop per core but one runs meanwhile
# (--no-load: none). SMTRACE=PATH runs another build's smtrace (and the
# tracer beside it) on this build's programs: the before/after comparison.
# Prints counts; exit 1 when any file was damaged
# (zero-filled, bad magic, no header) or a summary changed.
set -u
runs=${1:?usage: abort_storm.sh RUNS BUILD_DIR [--no-load]}
build=${2:?usage: abort_storm.sh RUNS BUILD_DIR [--no-load]}
load=1
[ "${3:-}" = "--no-load" ] && load=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
smtrace=${SMTRACE:-$build/cli/smtrace}  # SMTRACE=other/build/cli/smtrace: another build's CLI and tracer
work=$(mktemp -d /tmp/smtrace-abort-storm.XXXXXX)
trap 'kill ${busy[@]+"${busy[@]}"} 2>/dev/null; rm -rf "$work"' EXIT

busy=()
if [ $load -eq 1 ]; then
  for _ in $(seq 2 "$(nproc)"); do
    ( while :; do :; done ) &
    busy+=($!)
  done
fi

programs=("4 $build/tests/fault/fault_fatal_error" "4 $build/tests/fault/fault_fatal_error late"
          "3 $build/tests/e2e/e2e_abort" "2 $build/tests/e2e/e2e_segv")
files=0 ok=0 zero=0 empty=0 bad_magic=0 other=0 changed=0 missing=0
declare -A kinds
for i in $(seq 1 "$runs"); do
  read -r np prog arg <<<"${programs[$((i % ${#programs[@]}))]}"
  dir=$work/run-$i
  timeout -k 5 60 "$smtrace" record -o "$dir" -- mpirun --oversubscribe -np "$np" $prog $arg \
    >"$work/out.txt" 2>"$work/record.txt"
  # What record read (its summary) was the files as they were when it returned.
  before=$(cat "$dir"/*.smt 2>/dev/null | md5sum)
  for r in $(seq 0 $((np - 1))); do
    f=$dir/rank-$r.smt
    if [ ! -e "$f" ]; then missing=$((missing + 1)); continue; fi
    files=$((files + 1))
    size=$(stat -c %s "$f")
    if [ "$size" -eq 0 ]; then
      empty=$((empty + 1)); kinds[empty]+=" $f"
    elif [ -z "$(tr -d '\0' <"$f" | head -c 1 | od -An -tx1)" ]; then
      zero=$((zero + 1)); kinds[zero]+=" $f($size)"
    elif [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' ')" != "89534d5452430d0a" ]; then
      bad_magic=$((bad_magic + 1)); kinds[bad_magic]+=" $f"
    else
      ok=$((ok + 1))
    fi
  done
  sleep 2
  after=$(cat "$dir"/*.smt 2>/dev/null | md5sum)
  if [ "$before" != "$after" ]; then
    changed=$((changed + 1))
    kinds[changed]+=" run-$i"
  fi
  [ $((i % 50)) -eq 0 ] && echo "abort_storm: $i runs: $files files, $zero zero, $empty empty, $bad_magic bad magic, $changed changed after record" >&2
  [ "$zero$empty$bad_magic$changed" = "0000" ] && rm -rf "$dir"
done
echo "abort_storm: $runs runs (load: $load), $files rank files: $ok readable, $zero all zero, $empty empty," \
  "$bad_magic bad magic, $missing missing; $changed traces changed after record returned"
for k in "${!kinds[@]}"; do echo "  $k:${kinds[$k]}" | cut -c1-600; done
[ "$zero$empty$bad_magic$changed" = "0000" ]
