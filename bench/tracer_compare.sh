#!/usr/bin/env bash
# Two tracer libraries side by side: the cost each adds per intercepted call,
# measured alternating in the same session (a shared machine's load drifts).
#
#   bench/tracer_compare.sh [-a] [-r ROUNDS] [-n PINGPONG_ITERS] [-p PUT_ITERS] [-w WAITSOME_ITERS]
#                           [-s SELF_SENDRECV_ITERS] BASE_DIR NEW_DIR
#
# BASE_DIR and NEW_DIR are build directories holding tracer/libsmtrace.so;
# the benchmarks (bench/bench_pingpong, bench_put_flush, bench_waitsome,
# bench_self_sendrecv) are NEW_DIR's, the same binaries for every run. Each
# round runs each benchmark untraced, traced with BASE and traced with NEW
# (which of the two goes first alternates by round). Printed per benchmark, ns per intercepted call, wall
# and rank 0's thread CPU time: the medians over rounds of the untraced run,
# of each library's added time (traced - that round's untraced) and of
# NEW - BASE (each round's own difference; negative: NEW costs less), each
# followed by its lower quartile (q1: this machine's runs are bimodal, the
# quartile reads the fast mode). -a: each round also runs BASE a second
# time (the three traced runs in an order rotating by round), printed as an
# A/A row (BASE against itself: the noise floor of the same run).
set -euo pipefail

rounds=7
pp_iters=200000
put_iters=20000
waitsome_iters=50000
self_iters=100000
aa=0
while getopts "ar:n:p:w:s:h" opt; do
  case $opt in
    a) aa=1 ;;
    r) rounds=$OPTARG ;;
    n) pp_iters=$OPTARG ;;
    p) put_iters=$OPTARG ;;
    w) waitsome_iters=$OPTARG ;;
    s) self_iters=$OPTARG ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,19p' "$0"; exit 2; }
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

median() { quantile 0.5; }
# quantile Q: the Q quantile of the numbers on stdin (linear between the two nearest ranks).
quantile() {
  sort -g | awk -v q="$1" '{v[NR]=$1} END {h = 1 + (NR - 1) * q; l = int(h); print v[l] + (h - l) * (v[l+1] - v[l])}'
}

declare -A iters=([pingpong]=$pp_iters [put_flush]=$put_iters [waitsome]=$waitsome_iters
                  [self_sendrecv]=$self_iters)
benches="pingpong put_flush waitsome self_sendrecv"
declare -A rows  # [name,clock] -> lines "untraced base new [base again]"
for round in $(seq 1 "$rounds"); do
  for name in $benches; do
    read -r uw uc <<<"$(run_one "$name" "${iters[$name]}")"
    if [ "$aa" -eq 1 ]; then
      order=("b" "n" "a")
      k=$((round % 3))
      order=("${order[@]:$k}" "${order[@]:0:$k}")
    elif [ $((round % 2)) -eq 1 ]; then
      order=("b" "n")
    else
      order=("n" "b")
    fi
    aw="" ac=""
    for which in "${order[@]}"; do
      case $which in
        b) read -r bw bc <<<"$(run_one "$name" "${iters[$name]}" "$base_lib")" ;;
        n) read -r nw nc <<<"$(run_one "$name" "${iters[$name]}" "$new_lib")" ;;
        a) read -r aw ac <<<"$(run_one "$name" "${iters[$name]}" "$base_lib")" ;;
      esac
    done
    rows[$name,wall]+="$uw $bw $nw $aw"$'\n'
    rows[$name,cpu]+="$uc $bc $nc $ac"$'\n'
  done
  echo "round $round/$rounds done" >&2
done

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
echo "# base $base_lib"
echo "# new  $new_lib"
echo "# medians over rounds, each followed by its lower quartile (q1); A/A: BASE against BASE (-a)"
printf '%-17s %-5s %9s %9s %8s %9s %8s %9s %8s\n' bench clock untraced base_added q1 new_added q1 new-base q1
# row NAME CLOCK DATA COLUMN: DATA's untraced (1), base (2) and COLUMN (3: new, 4: base again) as one row.
row() {
  local label=$1 clock=$2 data=$3 c=$4
  local u b bq n nq d dq
  u=$(awk '{print $1}' <<<"$data" | median)
  b=$(awk '{print $2 - $1}' <<<"$data" | median)
  bq=$(awk '{print $2 - $1}' <<<"$data" | quantile 0.25)
  n=$(awk -v c="$c" '{print $c - $1}' <<<"$data" | median)
  nq=$(awk -v c="$c" '{print $c - $1}' <<<"$data" | quantile 0.25)
  d=$(awk -v c="$c" '{print $c - $2}' <<<"$data" | median)
  dq=$(awk -v c="$c" '{print $c - $2}' <<<"$data" | quantile 0.25)
  printf '%-17s %-5s %9.1f %9.1f %8.1f %9.1f %8.1f %9.1f %8.1f\n' "$label" "$clock" "$u" "$b" "$bq" "$n" "$nq" "$d" "$dq"
}
for name in $benches; do
  for clock in wall cpu; do
    data=$(grep . <<<"${rows[$name,$clock]}")
    row "$name" "$clock" "$data" 3
    if [ "$aa" -eq 1 ]; then row "$name A/A" "$clock" "$data" 4; fi
  done
done
echo "# per round, ns per call (untraced base new$([ "$aa" -eq 1 ] && echo ' base-again')):"
for name in $benches; do
  echo "#   $name wall: $(grep . <<<"${rows[$name,wall]}" | tr '\n' ',' | sed 's/,$//')"
done
