#!/usr/bin/env bash
# Tracer cost per intercepted call, traced against untraced in the same run.
#
#   bench/tracer_overhead.sh [-b BUILD_DIR] [-r REPETITIONS] [-n PINGPONG_ITERS] [-p PUT_ITERS]
#
# BUILD_DIR holds bench/bench_pingpong, bench/bench_put_flush, cli/smtrace and
# tracer/libsmtrace.so (default: build). Each repetition runs every benchmark
# untraced, then traced (mpirun -x LD_PRELOAD=libsmtrace.so -x SMTRACE_DIR=...),
# so that drifts in machine load hit both alike; the table shows medians.
#   untraced, traced  ns per intercepted call (loop time / calls, rank 0)
#   added             traced - untraced
#   ratio             traced / untraced
#   B/event           bytes of the rank files / events (`smtrace info --format json`)
# Goal (issue 2): ping-pong added <= 100 ns per call, <= 24 bytes per event.
set -euo pipefail

build=build
reps=5
pp_iters=200000
put_iters=100000
while getopts "b:r:n:p:h" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    n) pp_iters=$OPTARG ;;
    p) put_iters=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done

smtrace=$build/cli/smtrace
tracer=$(readlink -f "$build/tracer/libsmtrace.so")
for f in "$build/bench/bench_pingpong" "$build/bench/bench_put_flush" "$smtrace" "$tracer"; do
  [ -e "$f" ] || { echo "tracer_overhead.sh: missing $f (build smtrace, smtrace_cli, bench_*)" >&2; exit 2; }
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_one NAME ITERS traced|untraced REP: print ns per call; traced runs also
# leave $work/NAME-REP with the trace.
run_one() {
  local name=$1 iters=$2 how=$3 rep=$4 out
  local cmd=(mpirun --oversubscribe -np 2)
  if [ "$how" = traced ]; then
    cmd+=(-x LD_PRELOAD="$tracer" -x SMTRACE_DIR="$work/$name-$rep")
  fi
  out=$("${cmd[@]}" "$build/bench/bench_$name" "$iters")
  sed -n 's/.*ns_per_call \([0-9.]*\).*/\1/p' <<<"$out"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

declare -A untraced traced
names=(pingpong put_flush)
declare -A iters=([pingpong]=$pp_iters [put_flush]=$put_iters)
for rep in $(seq 1 "$reps"); do
  for name in "${names[@]}"; do
    untraced[$name]+="$(run_one "$name" "${iters[$name]}" untraced "$rep") "
    traced[$name]+="$(run_one "$name" "${iters[$name]}" traced "$rep") "
  done
  echo "repetition $rep/$reps done" >&2
done

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(mpirun --version | head -1), $reps repetitions, medians"
printf '%-10s %10s %10s %10s %10s %8s %10s %9s\n' bench calls/rank untraced traced added ratio events B/event
for name in "${names[@]}"; do
  u=$(tr ' ' '\n' <<<"${untraced[$name]}" | grep . | median)
  t=$(tr ' ' '\n' <<<"${traced[$name]}" | grep . | median)
  # Bytes per event from the last traced repetition.
  dir=$work/$name-$reps
  bytes=$(cat "$dir"/rank-*.smt | wc -c)
  events=$("$smtrace" info "$dir" --format json | jq '.events')
  calls=$(( 2 * (${iters[$name]} + ${iters[$name]} / 10 + 1) ))
  awk -v n="$name" -v c="$calls" -v u="$u" -v t="$t" -v b="$bytes" -v e="$events" 'BEGIN {
    printf "%-10s %10d %10.1f %10.1f %10.1f %8.2f %10d %9.2f\n", n, c, u, t, t - u, t / u, e, (e > 0 ? b / e : 0) }'
done
echo "# per-repetition ns/call (untraced | traced):"
for name in "${names[@]}"; do
  echo "#   $name: ${untraced[$name]}| ${traced[$name]}"
done
