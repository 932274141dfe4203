#!/usr/bin/env bash
# The cost of the tracer's content check of pending send buffers
# (docs/tracer.md "Content check of pending send buffers"), in the same run:
#
#   bench/content_hash.sh [-b BUILD_DIR] [-r REPETITIONS] [-s "BYTES ..."]
#
# For each message size, each repetition runs bench_isend_wait untraced,
# traced with SMTRACE_HASH=0 and traced with SMTRACE_HASH=1 (alternating, so
# that drifts in load hit all three). Per size: the median over repetitions
# of wall and rank 0 CPU ns per iteration (one Isend + one Wait), `hash`
# the median of each repetition's own HASH=1 - HASH=0, and the hashing rate
# that implies (2 * BYTES hashed per iteration). The size `put` runs
# bench_put_flush instead (MPI_Put of one long + MPI_Win_flush: ns per
# intercepted call; its origin buffer hashed at the Put, again at the flush).
set -euo pipefail
build=build reps=5 sizes="put 1024 65536 1048576"
while getopts "b:r:s:h" opt; do
  case $opt in
    b) build=$OPTARG ;; r) reps=$OPTARG ;; s) sizes=$OPTARG ;;
    *) sed -n 2,12p "$0"; exit 0 ;;
  esac
done
bench=$build/bench/bench_isend_wait lib=$build/tracer/libsmtrace.so
[ -x "$bench" ] && [ -e "$lib" ] || { echo "content_hash.sh: build $build lacks bench_isend_wait or libsmtrace.so" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # run SIDE BYTES ITERS: prints "wall cpu"
  local side=$1 bytes=$2 iters=$3 env=()
  case $side in
    off) ;;
    h0) env=(-x LD_PRELOAD="$lib" -x SMTRACE_DIR="$tmp/t" -x SMTRACE_HASH=0 -x SMTRACE_QUIET=1) ;;
    h1) env=(-x LD_PRELOAD="$lib" -x SMTRACE_DIR="$tmp/t" -x SMTRACE_HASH=1 -x SMTRACE_QUIET=1) ;;
  esac
  rm -rf "$tmp/t"
  local cmd=("$bench" "$bytes" "$iters")
  [ "$bytes" = put ] && cmd=("$build/bench/bench_put_flush" "$iters")
  mpirun --oversubscribe -np 2 "${env[@]}" "${cmd[@]}" 2>/dev/null |
    awk '/^bench/ { for (i = 1; i < NF; ++i) { if ($i == "ns_per_call") w = $(i+1); if ($i == "cpu_ns_per_call") c = $(i+1) } print w, c }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "%-9s %-5s %12s %12s %12s %12s %14s\n" bytes clock untraced hash=0 hash=1 "hash(1-0)" "MB/s hashed"
for bytes in $sizes; do
  if [ "$bytes" = put ]; then iters=200000; else iters=$(( bytes >= 1048576 ? 2000 : bytes >= 65536 ? 10000 : 40000 )); fi
  : > "$tmp/rows"
  for _ in $(seq "$reps"); do
    o=$(run off "$bytes" "$iters") a=$(run h0 "$bytes" "$iters") b=$(run h1 "$bytes" "$iters")
    echo "$o $a $b" >> "$tmp/rows"
  done
  for clock in wall cpu; do
    k=$([ $clock = wall ] && echo 0 || echo 1)
    off=$(awk -v k=$k '{ print $(1+k) }' "$tmp/rows" | median)
    h0=$(awk -v k=$k '{ print $(3+k) }' "$tmp/rows" | median)
    h1=$(awk -v k=$k '{ print $(5+k) }' "$tmp/rows" | median)
    d=$(awk -v k=$k '{ print $(5+k) - $(3+k) }' "$tmp/rows" | median)
    rate=$(awk -v d="$d" -v b="$bytes" 'BEGIN { if (d > 0 && b + 0 > 0) printf "%.0f", 2 * b / d * 1000; else print "-" }')
    printf "%-9s %-5s %12.1f %12.1f %12.1f %12.1f %14s\n" "$bytes" $clock "$off" "$h0" "$h1" "$d" "$rate"
  done
done
