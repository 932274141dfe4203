#!/usr/bin/env bash
# `smtrace prove` on the match-pair paper's benchmarks (seed
# smt-match-pairs-mcapi, section 5), against the paper's figures and a naive
# order-based encoding measured in the same run.
#
#   bench/smt_senders.sh [-b BUILD_DIR] [-k "K ..."] [-g MAX_K] [-t SECONDS] [-n MAX_ASSERTIONS]
#                        [-W "K ..."] [-T] [-B "BUFFERING ..."] [-G] [-w WORK_DIR] [-K]
#
# Table 1 (senders): for each K (default: 2 4 6 8 10 16 17 18 20 28 32 40 50
# 100 200 500 1000; the paper's rows are among them) it writes
# `smtrace synth senders --k K` (ranks 1..K each send one message to rank 0,
# which posts K receives from MPI_ANY_SOURCE; K! matchings) and asks the
# paper's property, "the last receive can take sender K's message":
#   smtrace prove DIR --can-match 0:K K:1 --format json --smt-timeout SECONDS --no-findings
# under /usr/bin/time (apt package `time`): verdict, wall seconds, peak RSS,
# and the encoding's size from prove's stats (assertions, match pairs,
# decision variables). The baseline, in the same run: bench/naive_encoding.py
# writes the same question as a naive order-based encoding (a clock per
# event, a Boolean per envelope-compatible pair, pairwise at-most-one and
# non-overtaking constraints) and the z3 binary solves it, under the same
# time limit; skipped above MAX_ASSERTIONS (default 5M) assertions.
# With -g MAX_K it goes on doubling K after the list while prove answers
# within SECONDS, up to MAX_K. It ends with the largest K answered within
# SECONDS (default 60).
#
# Whole prove (-W "K ...", default "50 200 1000"; "-" skips it): `smtrace
# prove DIR --format json --smt-timeout SECONDS` on the senders trace, every
# wildcard receive against every other sender (K (K - 1) alternatives, each
# with a replayed witness or an unsat answer) and the deadlock question,
# with the directed replays and fixed-order decisions, then with the solver
# alone (SMTRACE_SMT_GUIDED=0) in the same run, per buffering of -B
# (`--buffering`): wall and CPU seconds, peak RSS, unknown questions, and
# the ratio. Goals: K = 50 under 1 s, K = 1000 under 60 s, either buffering.
#
# Table 2 (-T, or always when -k is not given): leader election on a ring of
# 40 ranks (about 200 messages; the paper's LE has 220), router on 10 ranks x 6
# rounds (120 messages, as Router), fig6 x 25 iterations (100 messages, as
# MultiM). Each is timed twice: `smtrace prove DIR` (every wildcard
# receive's alternatives and the deadlock questions), and one --can-match
# question, with its naive baseline (fig6: the paper's "bogus" pair, rank
# 0's last receive and rank 2's first send, unsat; leader and router: a
# recorded match of the last round, sat). Then the whole prove of each of
# the three per buffering of -B (default "infinite zero"; `--buffering`;
# the whole prove of the senders too),
# with and without the solver alone, in the same run: wall and CPU seconds
# (user + system), unknown questions and the ratio of wall seconds.
#
# -G measures the solver alone: SMTRACE_SMT_GUIDED=0 turns off the directed
# replay that otherwise answers a sat --can-match before any encoding is
# built (smt_encoder/guided.hpp), so the figures compare the encoding with
# the paper's. Z3's memory cap is raised to 16 GiB for the benchmark
# (SMTRACE_SMT_MEMORY_MB, unless set).
#
# BUILD_DIR holds cli/smtrace (default: build). -w keeps the traces in
# WORK_DIR (default: a temporary directory, removed unless -K).
set -euo pipefail

build=build
ks="2 4 6 8 10 16 17 18 20 28 32 40 50 100 200 500 1000"
grow=0
limit=60
max_assertions=5000000
table2=0
work=
keep=0
ks_given=0
whole_ks="50 200 1000"
bufferings="infinite zero"
export SMTRACE_SMT_MEMORY_MB=${SMTRACE_SMT_MEMORY_MB:-16384}
while getopts "b:k:g:t:n:W:TB:w:KGh" opt; do
  case $opt in
    B) bufferings=$OPTARG ;;
    W) whole_ks=$OPTARG ;;
    b) build=$OPTARG ;;
    k) ks=$OPTARG; ks_given=1 ;;
    g) grow=$OPTARG ;;
    t) limit=$OPTARG ;;
    n) max_assertions=$OPTARG ;;
    T) table2=1 ;;
    w) work=$OPTARG ;;
    K) keep=1 ;;
    G) export SMTRACE_SMT_GUIDED=0 ;;
    *) sed -n '2,58p' "$0"; exit 2 ;;
  esac
done
[ "$ks_given" = 1 ] || table2=1

here=$(cd "$(dirname "$0")" && pwd)
smtrace=$build/cli/smtrace
naive=$here/naive_encoding.py
for f in "$smtrace" /usr/bin/time; do
  [ -x "$f" ] || { echo "smt_senders.sh: missing $f (build smtrace_cli; apt install time)" >&2; exit 2; }
done
have_z3=1
command -v z3 >/dev/null && command -v python3 >/dev/null || have_z3=0
[ "$have_z3" = 1 ] || echo "smt_senders.sh: no z3 binary or python3: the naive baseline is skipped" >&2
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-smt-bench.XXXXXX")
  [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# The paper's Table 1 (seconds, MB), by K.
paper() {
  case $1 in
    2) echo "0.04 4.87" ;; 10) echo "0.09 7.82" ;; 16) echo "0.16 9.96" ;;
    17) echo "24.65 30.44" ;; 18) echo "27.11 28.40" ;; 20) echo "41.80 34.20" ;;
    28) echo "138.13 54.74" ;; 32) echo "211.27 65.57" ;; 40) echo "504.96 83.19" ;;
    50) echo "947.16 105.29" ;; *) echo "- -" ;;
  esac
}

# timed NAME CMD...: run CMD under /usr/bin/time, stdout to NAME.out; set
# `secs`, `cpu` (user + system), `rss_mib` and `rc` (never fails).
timed() {
  local name=$1; shift
  rc=0
  /usr/bin/time -f "%e %M %U %S" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  local kb user sys
  read -r secs kb user sys < <(tail -n 1 "$work/$name.time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  rss_mib=$(awk -v kb="$kb" 'BEGIN { printf "%.1f", kb / 1024 }')
}

# whole NAME DIR BUFFERING [ENV...]: the whole prove; set w_secs w_cpu w_mib w_unknown.
whole() {
  local name=$1 dir=$2 buffering=$3; shift 3
  timed "$name" env "$@" timeout -k 5 $((limit + 60)) "$smtrace" prove "$dir" --format json --smt-timeout "$limit" \
    --buffering "$buffering" -o "$work/$name.json"
  w_secs=$secs w_cpu=$cpu w_mib=$rss_mib
  w_unknown=$(python3 -c '
import json, sys
try:
    print(json.load(open(sys.argv[1]))["summary"]["unknown"])
except Exception:
    print("failed")' "$work/$name.json")
  rm -f "$work/$name.json"
}

# prove_question NAME DIR A B: `smtrace prove DIR --can-match A B`; set
# p_verdict p_secs p_mib p_assertions p_pairs p_vars.
prove_question() {
  local name=$1 dir=$2
  timed "$name" timeout -k 5 $((limit + 30)) "$smtrace" prove "$dir" --can-match "$3" "$4" --format json \
    --smt-timeout "$limit" --no-findings
  p_secs=$secs p_mib=$rss_mib
  read -r p_verdict p_assertions p_pairs p_vars < <(python3 - "$work/$name.out" "$rc" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    s = r.get("stats", {})
    q = r.get("questions", [{}])
    print(q[0].get("verdict", "?") if q else "?", s.get("assertions", "-"), s.get("match_pairs", "-"),
          s.get("decision_variables", "-"))
except Exception:
    print("failed:exit%s" % sys.argv[2], "-", "-", "-")
EOF
  )
}

# naive_question NAME DIR A B: the naive encoding of the same question,
# solved by z3; set n_verdict n_secs n_mib n_assertions.
naive_question() {
  local name=$1 dir=$2
  n_verdict=- n_secs=- n_mib=- n_assertions=-
  [ "$have_z3" = 1 ] || return 0
  "$smtrace" dump "$dir" --format json >"$work/$name.json"
  local nrc=0
  python3 "$naive" "$work/$name.json" --can-match "$3" "$4" -o "$work/$name.smt2" \
    --max-assertions "$max_assertions" >"$work/$name.count" || nrc=$?
  n_assertions=$(awk '{print $2}' "$work/$name.count")
  if [ "$nrc" = 3 ]; then
    n_verdict=skipped
  elif [ "$nrc" != 0 ]; then
    n_verdict=failed
  else
    timed "$name-z3" z3 -T:"$limit" "$work/$name.smt2"
    n_secs=$secs n_mib=$rss_mib
    n_verdict=$(head -n 1 "$work/$name-z3.out")
    [ -n "$n_verdict" ] || n_verdict="failed:exit$rc"
  fi
  rm -f "$work/$name.json" "$work/$name.smt2"
}

echo "== Table 1: K senders, rank 0 receives K times from MPI_ANY_SOURCE; --can-match 0:K K:1"
echo "   (time limit ${limit} s; naive: bench/naive_encoding.py + z3 $(z3 --version 2>/dev/null | awk '{print $3}'))"
printf "%6s | %-8s %9s %9s %11s %9s %7s | %-8s %9s %9s %11s | %9s %9s\n" \
  K verdict wall_s peak_MiB assertions pairs vars naive wall_s peak_MiB assertions paper_s paper_MB
largest=0
run_k() {
  local k=$1 dir=$work/senders-$1
  "$smtrace" synth senders --k "$k" -o "$dir" --force 2>"$work/synth.err" || { cat "$work/synth.err" >&2; exit 1; }
  prove_question "senders-$k" "$dir" "0:$k" "$k:1"
  naive_question "naive-$k" "$dir" "0:$k" "$k:1"
  read -r paper_s paper_mb < <(paper "$k")
  printf "%6s | %-8s %9s %9s %11s %9s %7s | %-8s %9s %9s %11s | %9s %9s\n" "$k" "$p_verdict" "$p_secs" \
    "$p_mib" "$p_assertions" "$p_pairs" "$p_vars" "$n_verdict" "$n_secs" "$n_mib" "$n_assertions" \
    "$paper_s" "$paper_mb"
  [ "$keep" = 1 ] || rm -rf "$dir"
  answered=0
  if [ "$p_verdict" = sat ] && awk -v s="$p_secs" -v l="$limit" 'BEGIN { exit !(s <= l) }'; then
    answered=1
    if [ "$k" -gt "$largest" ]; then largest=$k; fi
  fi
}
for k in $ks; do run_k "$k"; done
if [ "$grow" -gt 0 ]; then
  k=$(echo "$ks" | awk '{print $NF}')
  while [ "$answered" = 1 ] && [ $((k * 2)) -le "$grow" ]; do
    k=$((k * 2))
    run_k "$k"
  done
fi
echo "largest K answered within ${limit} s: $largest"

if [ "$whole_ks" != "-" ]; then
  echo
  echo "== Whole prove: smtrace prove DIR --format json --smt-timeout ${limit} (every alternative), against the solver"
  echo "   alone (SMTRACE_SMT_GUIDED=0) in the same run; goals: K = 50 under 1 s, K = 1000 under 60 s"
  printf "%6s %-8s %10s | %8s %8s %9s %8s %6s | %8s %8s %9s %8s | %8s\n" K buffering alternatives wall_s cpu_s \
    peak_MiB unknown goal alone_s cpu_s peak_MiB unknown ratio
  for k in $whole_ks; do
    dir=$work/senders-whole-$k
    "$smtrace" synth senders --k "$k" -o "$dir" --force 2>"$work/synth.err" || { cat "$work/synth.err" >&2; exit 1; }
    for b in $bufferings; do
      whole "whole-$k-$b" "$dir" "$b" SMTRACE_SMT_GUIDED=1
      d_secs=$w_secs d_cpu=$w_cpu d_mib=$w_mib d_unknown=$w_unknown
      whole "whole-alone-$k-$b" "$dir" "$b" SMTRACE_SMT_GUIDED=0
      goal=-
      case $k in
        50) goal=$(awk -v s="$d_secs" -v u="$d_unknown" 'BEGIN { print (s < 1 && u == 0) ? "met" : "NOT met" }') ;;
        1000) goal=$(awk -v s="$d_secs" -v u="$d_unknown" 'BEGIN { print (s < 60 && u == 0) ? "met" : "NOT met" }') ;;
      esac
      printf "%6s %-8s %10s | %8s %8s %9s %8s %6s | %8s %8s %9s %8s | %8s\n" "$k" "$b" $((k * (k - 1))) "$d_secs" \
        "$d_cpu" "$d_mib" "$d_unknown" "$goal" "$w_secs" "$w_cpu" "$w_mib" "$w_unknown" \
        "$(awk -v a="$w_secs" -v b="$d_secs" 'BEGIN { printf "%.1f x", a / b }')"
    done
    [ "$keep" = 1 ] || rm -rf "$dir"
  done
fi

[ "$table2" = 1 ] || exit 0
echo
echo "== Table 2: the paper's other programs (paper: LE 220 messages 0.016 s; Router 120 messages"
echo "   0.52 s 9.48 MB; MultiM 100 messages 1006.49 s 135.19 MB)"
printf "%-22s %8s | %-8s %9s %9s %9s %7s | %-20s %-8s %9s %9s %11s | %-8s %9s %11s\n" \
  trace messages prove wall_s peak_MiB pairs vars question verdict wall_s peak_MiB assertions naive wall_s assertions
# last_call DIR RANK CALL [NTH_FROM_END]: the seq of RANK's last (or NTH
# from the end) event of CALL.
last_call() {
  "$smtrace" dump "$1" --rank "$2" | grep " $3(" | tail -n "${4:-1}" | head -n 1 | sed 's/^[0-9]*:\([0-9]*\) .*/\1/'
}
table2_row() {
  local name=$1 dir=$2 a=$3 b=$4
  local messages
  messages=$("$smtrace" info "$dir" --format json | python3 -c '
import json, sys
calls = json.load(sys.stdin).get("events_by_call", {})
print(sum(v for k, v in calls.items() if k in ("MPI_Send", "MPI_Isend")))' 2>/dev/null || echo "?")
  timed "$name-all" timeout -k 5 $((limit + 30)) "$smtrace" prove "$dir" --format json --smt-timeout "$limit"
  local all_secs=$secs all_mib=$rss_mib all_rc=$rc
  read -r all_pairs all_vars < <(python3 - "$work/$name-all.out" <<'EOF'
import json, sys
try:
    s = json.load(open(sys.argv[1])).get("stats", {})
    print(s.get("match_pairs", "-"), s.get("decision_variables", "-"))
except Exception:
    print("-", "-")
EOF
  )
  local all_verdict=done
  [ "$all_rc" -le 1 ] || all_verdict="exit$all_rc"
  prove_question "$name-q" "$dir" "$a" "$b"
  naive_question "$name-naive" "$dir" "$a" "$b"
  printf "%-22s %8s | %-8s %9s %9s %9s %7s | %-20s %-8s %9s %9s %11s | %-8s %9s %11s\n" "$name" "$messages" \
    "$all_verdict" "$all_secs" "$all_mib" "$all_pairs" "$all_vars" "$a $b" "$p_verdict" "$p_secs" "$p_mib" \
    "$p_assertions" "$n_verdict" "$n_secs" "$n_assertions"
}
le=$work/leader-40 ro=$work/router-10x6 f6=$work/fig6x25
"$smtrace" synth leader --n 40 -o "$le" --force 2>/dev/null
"$smtrace" synth router --n 10 --iterations 6 -o "$ro" --force 2>/dev/null
"$smtrace" synth fig6 --iterations 25 -o "$f6" --force 2>/dev/null
# leader: rank 0's last receive (the "elected" message) and rank 39's last send.
table2_row "leader --n 40" "$le" "0:$(last_call "$le" 0 MPI_Irecv)" "39:$(last_call "$le" 39 MPI_Isend)"
# router: rank 0's first receive of the last round and rank 1's send to rank 0 in it.
table2_row "router --n 10 --it 6" "$ro" "0:$(last_call "$ro" 0 MPI_Irecv 2)" "1:$(last_call "$ro" 1 MPI_Isend 2)"
# fig6: the paper's bogus pair (R0,4 S2,1) of the first iteration.
table2_row "fig6 --iterations 25" "$f6" "0:7" "2:1"

echo
echo "== Table 2, whole prove by buffering: smtrace prove DIR --buffering B --smt-timeout ${limit}, against the"
echo "   solver alone (SMTRACE_SMT_GUIDED=0) in the same run"
printf "%-22s %-8s | %8s %8s %8s | %8s %8s %8s | %8s\n" trace buffering wall_s cpu_s unknown alone_s cpu_s unknown ratio
for row in "leader --n 40|$le" "router --n 10 --it 6|$ro" "fig6 --iterations 25|$f6"; do
  for b in $bufferings; do
    whole "t2-$b" "${row#*|}" "$b" SMTRACE_SMT_GUIDED=1
    d_secs=$w_secs d_cpu=$w_cpu d_unknown=$w_unknown
    whole "t2-$b-alone" "${row#*|}" "$b" SMTRACE_SMT_GUIDED=0
    printf "%-22s %-8s | %8s %8s %8s | %8s %8s %8s | %8s\n" "${row%|*}" "$b" "$d_secs" "$d_cpu" "$d_unknown" "$w_secs" \
      "$w_cpu" "$w_unknown" "$(awk -v a="$w_secs" -v b="$d_secs" 'BEGIN { if (b > 0) printf "%.1f x", a / b; else print "-" }')"
  done
done
