#!/usr/bin/env bash
# `smtrace check` throughput and peak memory against trace size.
#
#   bench/check_throughput.sh [-b BUILD_DIR] [-s "RANKSxEVENTS ..."] [-i INFO_MAX] [-w WORK_DIR] [-k] [-- CHECK_OPTIONS...]
#
# For each size (default: 8x125k 16x500k 64x1M, i.e. 1M, 8M and 64M events;
# EVENTS per rank, k/M suffixes) it writes a halo trace with `smtrace synth`
# and runs, each under /usr/bin/time (apt package `time`):
#   read    bench_read_trace: the streaming RankReader over every rank, ranks
#           in parallel, events only counted (the baseline: pure reading)
#   info    `smtrace info` (reads the whole trace into memory; skipped above
#           INFO_MAX events, default 16M, where it needs more than this
#           machine's memory)
#   check   `smtrace check --quiet CHECK_OPTIONS`, all checks (default
#           CHECK_OPTIONS `--smt-timeout 0`: the SMT checks without their
#           time budget, as issue 19 measures; pass `--smt-timeout 10` or any
#           other options after `--`)
# and prints per run: events, wall seconds, events/s (wall), CPU seconds
# (user + sys, all threads), peak RSS, bytes of peak RSS per event, and wall
# and CPU time relative to `read` of the same size. On a machine that others use too,
# CPU seconds are the steadier figure: wall time also counts waiting for a core.
# Goal (issue 3) on a 2-core machine: check >= 5M events/s and <= 64 bytes per
# event (or memory bounded by streaming).
# BUILD_DIR holds cli/smtrace and bench/bench_read_trace (default: build).
# WORK_DIR (default: a temporary directory under TMPDIR) needs about 45 bytes
# per event of disk (2.8 GiB for 64M events); -k keeps the traces.
set -euo pipefail

build=build
sizes="8x125k 16x500k 64x1M"
info_max=16000000
work=
keep=0
while getopts "b:s:i:w:kh" opt; do
  case $opt in
    b) build=$OPTARG ;;
    s) sizes=$OPTARG ;;
    i) info_max=$OPTARG ;;
    w) work=$OPTARG ;;
    k) keep=1 ;;
    *) sed -n '2,29p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
check_options=("$@")
[ ${#check_options[@]} -gt 0 ] || check_options=(--smt-timeout 0)

smtrace=$build/cli/smtrace
reader=$build/bench/bench_read_trace
for f in "$smtrace" "$reader" /usr/bin/time; do
  [ -x "$f" ] || { echo "check_throughput.sh: missing $f (build smtrace_cli and bench_read_trace; apt install time)" >&2; exit 2; }
done
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-bench.XXXXXX")
  [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# measure NAME CMD...: run CMD under /usr/bin/time; set `secs`, `cpu` and `rss_kb`.
# Exit codes 0 and 1 (check's "findings") count as success.
measure() {
  local name=$1; shift
  local rc=0
  /usr/bin/time -f "%e %U %S %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "check_throughput.sh: $name failed (exit $rc): $*" >&2
    tail -n 5 "$work/$name.err" >&2
    return 1
  fi
  local user sys
  read -r secs user sys rss_kb < <(tail -n 1 "$work/$name.time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
}

printf "%-9s %-6s %11s %8s %10s %8s %10s %8s %8s %8s\n" \
  size tool events wall_s events/s cpu_s "peak RSS" B/event vs_read cpu_vs
for size in $sizes; do
  ranks=${size%%x*}
  per_rank=${size#*x}
  trace=$work/halo-$size
  "$smtrace" synth halo --ranks "$ranks" --events "$per_rank" -o "$trace" --force 2>"$work/synth.err" ||
    { cat "$work/synth.err" >&2; exit 1; }

  measure read "$reader" "$trace"
  events=$(awk '{print $2}' "$work/read.out")
  read_secs=$secs
  read_cpu=$cpu
  rows=("read $secs $cpu $rss_kb")
  if [ "$events" -le "$info_max" ]; then
    measure info "$smtrace" info "$trace" --format json
    rows+=("info $secs $cpu $rss_kb")
  else
    rows+=("info - - -")
  fi
  measure check "$smtrace" check "$trace" --quiet --format json "${check_options[@]}"
  rows+=("check $secs $cpu $rss_kb")

  for row in "${rows[@]}"; do
    read -r tool s c kb <<<"$row"
    if [ "$s" = - ]; then
      printf "%-9s %-6s %11s %8s %10s %8s %10s %8s %8s %8s\n" "$size" "$tool" "$events" skipped - - - - - -
      continue
    fi
    awk -v size="$size" -v tool="$tool" -v n="$events" -v s="$s" -v c="$c" -v kb="$kb" -v base="$read_secs" -v base_cpu="$read_cpu" 'BEGIN {
      t = (s > 0 ? s : 0.01)
      printf "%-9s %-6s %11d %8.2f %9.2fM %8.2f %6.0f MiB %8.1f %7.2fx %7.2fx\n",
             size, tool, n, s, n / t / 1e6, c, kb / 1024, kb * 1024 / n, t / (base > 0 ? base : 0.01),
             c / (base_cpu > 0 ? base_cpu : 0.01)
    }'
  done
  [ "$keep" = 1 ] || rm -rf "$trace"
done
