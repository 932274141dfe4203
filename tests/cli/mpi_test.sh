#!/usr/bin/env bash
# smtrace-mpi against smtrace on the same traces: the report (JSON and text),
# the exit status and smtrace's lines on stderr must be the same, with 1, 2
# or 3 processes (3: two reading processes, ranks in blocks). Damaged traces
# too: a truncated rank file, a missing one, a rank file whose header is
# garbage, a directory that is no trace. (Each mpirun costs about a second
# here: each case runs with the process counts that matter to it.)
#   mpi_test.sh SMTRACE SMTRACE_MPI TRACES_DIR WORK_DIR
set -uo pipefail
smtrace=$1
smtrace_mpi=$2
traces=$3
work=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work"
mkdir -p "$work"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# same NAME "NP..." ARGS...: `smtrace ARGS` and `mpirun -np NP smtrace-mpi ARGS` agree.
same() {
  local name=$1 nps=$2; shift 2
  "$smtrace" "$@" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  for np in $nps; do
    timeout -k 5 60 mpirun --oversubscribe -np "$np" "$smtrace_mpi" "$@" >"$work/$name.mpi$np.out" 2>"$work/$name.mpi$np.err"
    local mrc=$?
    [ "$mrc" -eq "$rc" ] || { fail "$name: -np $np exited $mrc, smtrace $rc"; cat "$work/$name.mpi$np.err"; }
    diff "$work/$name.out" "$work/$name.mpi$np.out" >/dev/null ||
      { fail "$name: -np $np: stdout differs"; diff "$work/$name.out" "$work/$name.mpi$np.out" | head -20; }
    # mpirun adds its own lines about a non-zero exit status; smtrace's are the same.
    diff <(grep '^smtrace' "$work/$name.err") <(grep '^smtrace' "$work/$name.mpi$np.err") >/dev/null ||
      { fail "$name: -np $np: smtrace's lines on stderr differ"; diff "$work/$name.err" "$work/$name.mpi$np.err" | head; }
  done
  echo "ok: $name (exit $rc)"
}

# Whole traces of the corpus.
same p2p-wildcard.json "1 2 3" check "$traces/p2p-wildcard" --format json --quiet
for dir in hang-killed segv-crashed rma-wildcard-race cuda-fig4-race; do
  same "$dir.json" 3 check "$traces/$dir" --format json --quiet
done
same p2p-wildcard.text 2 check "$traces/p2p-wildcard" --quiet
same p2p-wildcard.checks 2 check "$traces/p2p-wildcard" --format json --quiet --checks deadlock,unmatched-message --smt-timeout 0
# The checks whose passes run on the reading processes, alone and left out.
same p2p-wildcard.local 3 check "$traces/p2p-wildcard" --format json --quiet \
  --checks request-leak,resource-leak,invalid-argument,thread-level,cuda-mpi-race
same p2p-wildcard.nonlocal 3 check "$traces/p2p-wildcard" --format json --quiet --smt-timeout 0 \
  --checks all,-request-leak,-resource-leak,-invalid-argument,-thread-level,-cuda-mpi-race

# A truncated rank file: the reader reports where it stopped, the analysis
# keeps what it read.
cp -r "$traces/p2p-wildcard" "$work/truncated"
size=$(stat -c %s "$work/truncated/rank-1.smt")
head -c $((size / 2)) "$traces/p2p-wildcard/rank-1.smt" >"$work/truncated/rank-1.smt"
same truncated.json "2 3" check "$work/truncated" --format json --quiet
same truncated.text 3 check "$work/truncated" --quiet

# A missing rank file.
cp -r "$traces/p2p-wildcard" "$work/missing"
rm "$work/missing/rank-2.smt"
same missing.json 3 check "$work/missing" --format json --quiet

# A rank file whose header frame is garbage (the reader resynchronizes).
cp -r "$traces/p2p-wildcard" "$work/garbage"
printf 'XXXXXXXXXXXXXXXXXXXXXXXX' | dd of="$work/garbage/rank-0.smt" conv=notrunc status=none
same garbage.json 2 check "$work/garbage" --format json --quiet

# Not a trace; a usage error; --list.
mkdir -p "$work/empty"
same empty 2 check "$work/empty" --quiet
same bad_option 2 check "$traces/p2p-wildcard" --no-such-option
same list 2 check --list --format json

# info
same info.text 3 info "$traces/p2p-wildcard"
same info.truncated 2 info "$work/truncated" --format json

# What smtrace-mpi does not run.
timeout -k 5 60 mpirun --oversubscribe -np 2 "$smtrace_mpi" dump "$traces/p2p-wildcard" >"$work/dump.out" 2>"$work/dump.err"
rc=$?
[ "$rc" -eq 2 ] || fail "smtrace-mpi dump exited $rc, expected 2"
grep -q "smtrace-mpi: error: 'dump' does not run under MPI" "$work/dump.err" || fail "smtrace-mpi dump: no error message"

if [ "$failures" -gt 0 ]; then
  echo "mpi_test.sh: $failures failures"
  exit 1
fi
echo "mpi_test.sh: ok"
rm -rf "$work"
