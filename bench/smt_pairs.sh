#!/usr/bin/env bash
# Match pairs of `smtrace prove` on request/answer traces, with and without
# the happens-before rules (smt_encoder/match_pairs.hpp), in the same run.
#
#   bench/smt_pairs.sh [-b BUILD_DIR] [-c "RANKS:EVENTS ..."] [-t SECONDS] [-B MAX_BASELINE_PAIRS]
#                      [-w WORK_DIR] [-K]
#
# For each RANKS:EVENTS (default: 4:1k 4:2k 4:4k 4:16k 4:64k 16:1k 16:4k) it
# writes `smtrace synth wildcard --ranks RANKS --events EVENTS` (rank 0
# receives from MPI_ANY_SOURCE and answers whoever it heard from; each
# worker sends, then waits for its answer) and runs, under /usr/bin/time
# (apt package `time`):
# - `smtrace prove DIR --format json --smt-timeout SECONDS` (default 5): wall
#   seconds, peak RSS, unknown count, and from its stats the match pairs,
#   pairs per receive, match_pairs_dropped_by_happens_before and the
#   vector clock passes;
# - the same with --smt-timeout 0.01: reading, the model and the match pairs,
#   and the start of the encoding (the budget stops it at once): an upper
#   bound of what the pairs cost;
# - the baseline: both again with SMTRACE_SMT_NO_HB_PRUNING=1 (the pairs of
#   the counting rules and cuts only), while it has at most MAX_BASELINE_PAIRS
#   (default 3M) pairs; above that only its pair count is shown, as
#   match_pairs + match_pairs_dropped_by_happens_before (what the rules
#   removed from the counting rules' windows; exact on these traces).
# BUILD_DIR holds cli/smtrace (default: build). -w keeps the traces in
# WORK_DIR (default: a temporary directory, removed unless -K).
set -euo pipefail

build=build
cases="4:1k 4:2k 4:4k 4:16k 4:64k 16:1k 16:4k"
limit=5
max_baseline=3000000
work=
keep=0
while getopts "b:c:t:B:w:Kh" opt; do
  case $opt in
    b) build=$OPTARG ;;
    c) cases=$OPTARG ;;
    t) limit=$OPTARG ;;
    B) max_baseline=$OPTARG ;;
    w) work=$OPTARG ;;
    K) keep=1 ;;
    *) sed -n '2,26p' "$0"; exit 2 ;;
  esac
done
smtrace=$build/cli/smtrace
[[ -x $smtrace ]] || { echo "smt_pairs.sh: no $smtrace (build first, or -b BUILD_DIR)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "smt_pairs.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
if [[ -z $work ]]; then
  work=$(mktemp -d)
  [[ $keep == 1 ]] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# run NAME ARGS...: prove under /usr/bin/time; leaves $work/NAME.json and NAME.time ("wall KiB").
run() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$smtrace" prove "$@" --format json >"$work/$name.json" 2>/dev/null || true
}

# field NAME KEY: a stat of $work/NAME.json (or "-").
field() {
  python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(d.get("stats", {}).get(sys.argv[2], "-"))
except Exception:
    print("-")' "$work/$1.json" "$2"
}
wall() { cut -d' ' -f1 "$work/$1.time"; }
mib() { awk '{printf "%d", $2 / 1024}' "$work/$1.time"; }

echo "| ranks | events/rank | receives | pairs | pairs/receive | passes | pairs without HB | ratio | prove s | MiB | unknown | up to pairs s | MiB | baseline prove s | MiB | unknown | baseline up to pairs s | MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in $cases; do
  ranks=${c%%:*}
  events=${c##*:}
  dir=$work/wildcard-$ranks-$events
  [[ -d $dir ]] || "$smtrace" synth wildcard --ranks "$ranks" --events "$events" -o "$dir" >/dev/null
  run hb "$dir" --smt-timeout "$limit"
  run hb_pairs "$dir" --smt-timeout 0.01
  receives=$(field hb receives)
  pairs=$(field hb match_pairs)
  dropped=$(field hb match_pairs_dropped_by_happens_before)
  without=$((pairs + dropped))
  row="| $ranks | $events | $receives | $pairs | $(python3 -c "print(f'{$pairs / max($receives, 1):.1f}')")"
  row+=" | $(field hb match_pairs_hb_passes)"
  if ((without <= max_baseline)); then
    SMTRACE_SMT_NO_HB_PRUNING=1 run base "$dir" --smt-timeout "$limit"
    SMTRACE_SMT_NO_HB_PRUNING=1 run base_pairs "$dir" --smt-timeout 0.01
    measured=$(field base match_pairs)
    row+=" | $measured | $(python3 -c "print(f'{$measured / max($pairs, 1):.0f} x')")"
  else
    row+=" | $without (counted) | $(python3 -c "print(f'{$without / max($pairs, 1):.0f} x')")"
  fi
  row+=" | $(wall hb) | $(mib hb) | $(field hb unknown) | $(wall hb_pairs) | $(mib hb_pairs)"
  if ((without <= max_baseline)); then
    row+=" | $(wall base) | $(mib base) | $(field base unknown) | $(wall base_pairs) | $(mib base_pairs) |"
  else
    row+=" | skipped | - | - | skipped | - |"
  fi
  echo "$row"
done
