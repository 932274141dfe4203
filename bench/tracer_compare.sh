#!/usr/bin/env bash
# Two tracer libraries side by side: the cost each adds per intercepted call,
# measured alternating in the same session (a shared machine's load drifts).
#
#   bench/tracer_compare.sh [-r ROUNDS] [-n PINGPONG_ITERS] [-p PUT_ITERS] [-w WAITSOME_ITERS]
#                           [-s SELF_SENDRECV_ITERS] BASE_DIR NEW_DIR
#
# BASE_DIR and NEW_DIR are build directories holding tracer/libsmtrace.so;
# the benchmarks (bench/bench_pingpong, bench_put_flush, bench_waitsome,
# bench_self_sendrecv) are NEW_DIR's, the same binaries for every run. Each
# round runs each benchmark untraced, traced with BASE and traced with NEW
# (which of the two goes first alternates by round). Printed per benchmark, ns per intercepted call, wall
# and rank 0's thread CPU time: the medians over rounds of the untraced run,
# of each library's added time (traced - that round's untraced) and of
# NEW - BASE (each round's own difference; negative: NEW costs less).
set -euo pipefail

rounds=7
pp_iters=200000
put_iters=20000
waitsome_iters=50000
self_iters=100000
while getopts "r:n:p:w:s:h" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    n) pp_iters=$OPTARG ;;
    p) put_iters=$OPTARG ;;
    w) waitsome_iters=$OPTARG ;;
    s) self_iters=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,15p' "$0"; exit 2; }
base_lib=$(readlink -f "$1/tracer/libsmtrace.so")
new_lib=$(readlink -f "$2/tracer/libsmtrace.so")
bench=$2/bench
for f in "$base_lib" "$new_lib" "$bench/bench_pingpong" "$bench/bench_put_flush" "$bench/bench_waitsome" \
         "$bench/bench_self_sendrecv"; do
  [ -e "$f" ] || { echo "tracer_compare.sh: missing $f" >&2; exit 2; }
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_one NAME ITERS [LIB]: print "WALL CPU" ns per call, traced with LIB if given.
run_one() {
  local name=$1 iters=$2 lib=${3:-} out
  local cmd=(mpirun --oversubscribe -np 2)
  if [ -n "$lib" ]; then
    rm -rf "$work/trace"
    cmd+=(-x LD_PRELOAD="$lib" -x SMTRACE_DIR="$work/trace")
  fi
  out=$("${cmd[@]}" "$bench/bench_$name" "$iters")
  sed -n 's/.* ns_per_call \([0-9.]*\) cpu_ns_per_call \([0-9.]*\).*/\1 \2/p' <<<"$out"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

declare -A iters=([pingpong]=$pp_iters [put_flush]=$put_iters [waitsome]=$waitsome_iters
                  [self_sendrecv]=$self_iters)
benches="pingpong put_flush waitsome self_sendrecv"
declare -A rows  # [name,clock] -> lines "untraced base new"
for round in $(seq 1 "$rounds"); do
  for name in $benches; do
    read -r uw uc <<<"$(run_one "$name" "${iters[$name]}")"
    if [ $((round % 2)) -eq 1 ]; then
      read -r bw bc <<<"$(run_one "$name" "${iters[$name]}" "$base_lib")"
      read -r nw nc <<<"$(run_one "$name" "${iters[$name]}" "$new_lib")"
    else
      read -r nw nc <<<"$(run_one "$name" "${iters[$name]}" "$new_lib")"
      read -r bw bc <<<"$(run_one "$name" "${iters[$name]}" "$base_lib")"
    fi
    rows[$name,wall]+="$uw $bw $nw"$'\n'
    rows[$name,cpu]+="$uc $bc $nc"$'\n'
  done
  echo "round $round/$rounds done" >&2
done

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
echo "# base $base_lib"
echo "# new  $new_lib"
printf '%-10s %-5s %10s %10s %10s %10s\n' bench clock untraced base_added new_added new-base
for name in $benches; do
  for clock in wall cpu; do
    data=$(grep . <<<"${rows[$name,$clock]}")
    u=$(awk '{print $1}' <<<"$data" | median)
    b=$(awk '{print $2 - $1}' <<<"$data" | median)
    n=$(awk '{print $3 - $1}' <<<"$data" | median)
    d=$(awk '{print $3 - $2}' <<<"$data" | median)
    printf '%-10s %-5s %10.1f %10.1f %10.1f %10.1f\n' "$name" "$clock" "$u" "$b" "$n" "$d"
  done
done
echo "# per round, ns per call (untraced base new):"
for name in $benches; do
  echo "#   $name wall: $(grep . <<<"${rows[$name,wall]}" | tr '\n' ',' | sed 's/,$//')"
done
