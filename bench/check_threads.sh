#!/usr/bin/env bash
# `smtrace check` on a rank whose threads are lanes of happens-before
# (issue 15) against the same trace as one program order, in the same run.
#
#   bench/check_threads.sh [-b BUILD_DIR] [-i "ITERATIONS ..."] [-w WORK_DIR]
#
# For each ITERATIONS (default: 10000 40000; about 24.5 events each) it
# writes bench/threads_trace.py's trace three ways (thread_sync 0: one
# program order, the baseline; 1: pthreads recorded, synchronized; 1 with
# --race: the Put outside the mutex) and prints per run: events, wall
# seconds, CPU seconds, peak RSS, findings, and CPU time relative to the
# baseline. The race run must report ITERATIONS / 10 races, the others none.
set -euo pipefail

build=build
iterations="10000 40000"
work=
while getopts "b:i:w:h" opt; do
  case $opt in
    b) build=$OPTARG ;;
    i) iterations=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
  esac
done
smtrace=$build/cli/smtrace
gen=$(dirname "$0")/threads_trace.py
for f in "$smtrace" /usr/bin/time; do
  [ -x "$f" ] || { echo "check_threads.sh: missing $f" >&2; exit 2; }
done
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-threads.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

printf "%-10s %-12s %9s %8s %8s %10s %6s %8s\n" iterations run events wall_s cpu_s "peak RSS" races vs_one
for n in $iterations; do
  base_cpu=
  for run in one_order lanes lanes_race; do
    case $run in
      one_order) python3 "$gen" "$n" --sync 0 >"$work/t.json" ;;
      lanes) python3 "$gen" "$n" >"$work/t.json" ;;
      lanes_race) python3 "$gen" "$n" --race >"$work/t.json" ;;
    esac
    rm -rf "$work/t"
    "$smtrace" import-json "$work/t.json" -o "$work/t" >/dev/null 2>&1
    rc=0
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$smtrace" check "$work/t" --quiet --format json \
      >"$work/out.json" 2>/dev/null || rc=$?
    [ "$rc" -le 1 ] || { echo "check_threads.sh: check failed (exit $rc)" >&2; exit 1; }
    read -r secs user sys kb < <(tail -n 1 "$work/time")
    read -r events races < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
races = 0
for f in d["findings"]:
    if f["kind"] != "rma-race": continue
    races += 1
    for n in f.get("notes", []):
        if n.endswith("races between these two call sites"): races += int(n.split()[0]) - 1
print(d["stats"]["events"], races)' "$work/out.json")
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    [ -n "$base_cpu" ] || base_cpu=$cpu
    awk -v n="$n" -v run="$run" -v ev="$events" -v s="$secs" -v c="$cpu" -v kb="$kb" -v r="$races" -v b="$base_cpu" 'BEGIN {
      printf "%-10s %-12s %9d %8.2f %8.2f %6.0f MiB %6d %7.2fx\n", n, run, ev, s, c, kb / 1024, r, c / (b > 0 ? b : 0.01)
    }'
  done
done
