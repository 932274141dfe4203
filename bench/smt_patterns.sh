#!/usr/bin/env bash
# The SMT checks of `smtrace check` (message-race, potential-deadlock) and
# `smtrace prove` on common program patterns, against the solver alone
# (SMTRACE_SMT_GUIDED=0: every question to Z3, no replay decision) measured
# in the same run.
#
#   bench/smt_patterns.sh [-b BUILD_DIR] [-m "RANKSxTASKS ..."] [-h "RANKSxEVENTS ..."] [-H RANKSxEVENTS]
#                         [-B "BUFFERING ..."] [-t PROVE_SECONDS] [-w WORK_DIR] [-K]
#
# Master/worker (-m, default "4x60 16x1000"): `smtrace synth masterworker
# --ranks R --iterations T` (rank 0 hands out T tasks to whichever worker
# asks, MPI_ANY_SOURCE, then stops each; workers receive with MPI_ANY_TAG).
# For each: the non-SMT checks must be clean (`check --smt-timeout 0`); then
# the default `check` (both SMT checks, 5 s budget): wall seconds, findings,
# and whether anything was left undecided; then `prove --smt-timeout S`
# (default 60): wall seconds and unknown questions. Each also with the solver
# alone, and the ratio baseline / default. Each row once per buffering of
# -B (default "infinite zero"; `--buffering` of check and prove); prove's
# CPU seconds (user + system) are printed beside its wall seconds.
#
# Halo (-h, default "8x20k"): `smtrace synth halo --ranks R --events E`
# (no wildcard): the default `check`, undecided questions, and the solver
# alone.
#
# The budget as a wall (-H, default 64x1M; "-" skips it): a halo of R ranks
# x E events per rank; `check --smt-timeout 0` (t0) and the default check
# (t): the goal is t <= t0 + 5 s, whatever the SMT checks could not decide
# by then reported undecided. 64 x 1M is 64M events, about 2.7 GiB of trace;
# the analysis alone needs several GiB of memory.
#
# Every run is under /usr/bin/time (apt package `time`). BUILD_DIR holds
# cli/smtrace (default: build). -w keeps the traces in WORK_DIR (default: a
# temporary directory, removed unless -K).
set -euo pipefail

build=build
masterworker="4x60 16x1000"
halos="8x20k"
wall_case="64x1M"
prove_limit=60
bufferings="infinite zero"
work=
keep=0
while getopts "b:m:h:H:B:t:w:K" opt; do
  case $opt in
    b) build=$OPTARG ;;
    m) masterworker=$OPTARG ;;
    h) halos=$OPTARG ;;
    H) wall_case=$OPTARG ;;
    B) bufferings=$OPTARG ;;
    t) prove_limit=$OPTARG ;;
    w) work=$OPTARG ;;
    K) keep=1 ;;
    *) sed -n '2,34p' "$0"; exit 2 ;;
  esac
done
smtrace=$build/cli/smtrace
for f in "$smtrace" /usr/bin/time; do
  [ -x "$f" ] || { echo "smt_patterns.sh: missing $f (build smtrace_cli; apt install time)" >&2; exit 2; }
done
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-smt-patterns.XXXXXX")
  [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# timed NAME CMD...: run CMD under /usr/bin/time, stdout to NAME.out; set
# `secs`, `cpu` (user + system), `mib` and `rc` (never fails).
timed() {
  local name=$1; shift
  rc=0
  /usr/bin/time -f "%e %M %U %S" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  local kb user sys
  read -r secs kb user sys < <(tail -n 1 "$work/$name.time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  mib=$(awk -v kb="$kb" 'BEGIN { printf "%d", kb / 1024 }')
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f x", a / b; else print "-" }'; }

# check_row NAME DIR BUFFERING [ENV...]: the default check; set c_secs c_mib c_findings c_undecided.
check_row() {
  local name=$1 dir=$2 buffering=$3; shift 3
  timed "$name" env "$@" "$smtrace" check "$dir" --format json --buffering "$buffering"
  c_secs=$secs c_mib=$mib
  read -r c_findings c_undecided < <(python3 - "$work/$name.out" <<'EOF'
import json, sys
try:
    f = json.load(open(sys.argv[1])).get("findings", [])
    smt = [x for x in f if x["kind"] in ("message-race", "potential-deadlock")]
    undecided = [x for x in smt if x["severity"] == "info" and ("undecided" in x["message"] or "not built" in x["message"] or "nothing was decided" in x["message"])]
    print(len(smt) - len(undecided), "yes" if undecided else "no")
except Exception:
    print("?", "?")
EOF
  )
}

# prove_row NAME DIR BUFFERING [ENV...]: the whole prove; set p_secs p_cpu p_mib p_unknown.
prove_row() {
  local name=$1 dir=$2 buffering=$3; shift 3
  timed "$name" env "$@" timeout -k 5 $((prove_limit + 60)) "$smtrace" prove "$dir" --format json \
    --smt-timeout "$prove_limit" --buffering "$buffering" -o "$work/$name.json"
  p_secs=$secs p_cpu=$cpu p_mib=$mib
  p_unknown=$(python3 -c '
import json, sys
try:
    print(json.load(open(sys.argv[1]))["summary"]["unknown"])
except Exception:
    print("failed")' "$work/$name.json")
  rm -f "$work/$name.json"
}

echo "== master/worker: smtrace synth masterworker --ranks R --iterations TASKS"
echo "   check: the default (--smt-timeout 5); prove: --smt-timeout $prove_limit; solver alone: SMTRACE_SMT_GUIDED=0"
printf "%-10s %-8s %7s %6s | %8s %6s %9s %10s | %8s %9s %7s | %8s %8s %8s | %8s %8s %8s %7s\n" \
  pattern buffering events clean check_s MiB findings undecided alone_s undecided ratio prove_s cpu_s unknown \
  alone_s cpu_s unknown ratio
for c in $masterworker; do
  ranks=${c%x*} tasks=${c#*x}
  dir=$work/mw-$c
  "$smtrace" synth masterworker --ranks "$ranks" --iterations "$tasks" -o "$dir" --force 2>"$work/synth.err"
  events=$(sed -n 's/.*rank(s), \([0-9]*\) events.*/\1/p' "$work/synth.err")
  timed "mw-$c-plain" "$smtrace" check "$dir" --smt-timeout 0
  clean=$([ "$rc" = 0 ] && grep -q "^SUMMARY: 0 errors, 0 warnings" "$work/mw-$c-plain.out" && echo yes || echo NO)
  for b in $bufferings; do
    check_row "mw-$c-$b-check" "$dir" "$b"
    d_secs=$c_secs d_mib=$c_mib d_findings=$c_findings d_undecided=$c_undecided
    check_row "mw-$c-$b-check-alone" "$dir" "$b" SMTRACE_SMT_GUIDED=0
    prove_row "mw-$c-$b-prove" "$dir" "$b"
    pd_secs=$p_secs pd_cpu=$p_cpu pd_unknown=$p_unknown
    prove_row "mw-$c-$b-prove-alone" "$dir" "$b" SMTRACE_SMT_GUIDED=0
    printf "%-10s %-8s %7s %6s | %8s %6s %9s %10s | %8s %9s %7s | %8s %8s %8s | %8s %8s %8s %7s\n" "$c" "$b" \
      "$events" "$clean" "$d_secs" "$d_mib" "$d_findings" "$d_undecided" "$c_secs" "$c_undecided" \
      "$(ratio "$c_secs" "$d_secs")" "$pd_secs" "$pd_cpu" "$pd_unknown" "$p_secs" "$p_cpu" "$p_unknown" \
      "$(ratio "$p_secs" "$pd_secs")"
  done
  [ "$keep" = 1 ] || rm -rf "$dir"
done

echo
echo "== halo without wildcards: smtrace synth halo --ranks R --events E; the default check"
printf "%-10s %-8s %9s | %8s %6s %10s | %8s %10s %7s\n" pattern buffering events check_s MiB undecided alone_s \
  undecided ratio
for c in $halos; do
  ranks=${c%x*} per_rank=${c#*x}
  dir=$work/halo-$c
  "$smtrace" synth halo --ranks "$ranks" --events "$per_rank" -o "$dir" --force 2>"$work/synth.err"
  events=$(sed -n 's/.*rank(s), \([0-9]*\) events.*/\1/p' "$work/synth.err")
  for b in $bufferings; do
    check_row "halo-$c-$b" "$dir" "$b"
    d_secs=$c_secs d_mib=$c_mib d_undecided=$c_undecided
    check_row "halo-$c-$b-alone" "$dir" "$b" SMTRACE_SMT_GUIDED=0
    printf "%-10s %-8s %9s | %8s %6s %10s | %8s %10s %7s\n" "$c" "$b" "$events" "$d_secs" "$d_mib" "$d_undecided" \
      "$c_secs" "$c_undecided" "$(ratio "$c_secs" "$d_secs")"
  done
  [ "$keep" = 1 ] || rm -rf "$dir"
done

[ "$wall_case" != "-" ] || exit 0
echo
echo "== the budget as a wall: smtrace synth halo ${wall_case/x/ x }; goal: check <= check --smt-timeout 0 + 5 s"
ranks=${wall_case%x*} per_rank=${wall_case#*x}
dir=$work/halo-wall
"$smtrace" synth halo --ranks "$ranks" --events "$per_rank" -o "$dir" --force 2>"$work/synth.err"
events=$(sed -n 's/.*rank(s), \([0-9]*\) events.*/\1/p' "$work/synth.err")
timed wall-off "$smtrace" check "$dir" --smt-timeout 0 --quiet
t0=$secs t0_mib=$mib
check_row wall-default "$dir" infinite
met=$(awk -v t="$c_secs" -v t0="$t0" 'BEGIN { print (t <= t0 + 5) ? "met" : "NOT met" }')
printf "%-10s %10s | %-18s %8s %6s | %-18s %8s %6s %10s | %s (%s)\n" pattern events "" t0_s MiB "" check_s MiB \
  undecided goal "check_s - t0_s"
printf "%-10s %10s | %-18s %8s %6s | %-18s %8s %6s %10s | %s (%s s)\n" "$wall_case" "$events" "--smt-timeout 0" \
  "$t0" "$t0_mib" "default (5 s)" "$c_secs" "$c_mib" "$c_undecided" "$met" \
  "$(awk -v t="$c_secs" -v t0="$t0" 'BEGIN { printf "%.1f", t - t0 }')"
[ "$keep" = 1 ] || rm -rf "$dir"
