#!/usr/bin/env bash
# CLI tests of `smtrace prove` on the traces of the end-to-end SMT programs
# (tests/e2e/race_deadlock.c, race_sum.c, send_first.c and their fixed
# twins, as JSON in tests/cli/data) and on synthetic ones (smtrace synth
# senders, fig6): findings, --can-match and --can-precede verdicts with
# their witnesses and explanations, --dot, --emit-smt2 (parsed back by the
# z3 binary when it is installed).
#   prove_test.sh CASE SMTRACE DATA_DIR WORK_DIR
# Each CASE is one CTest test, cli.CASE (tests/cli/CMakeLists.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
case_name=$1 smtrace=$2 data=$3 work=$4/$1
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

# json FILE EXPR: evaluate the Python expression EXPR on the JSON object `r`
# read from FILE; fail unless it is true (skipped without python3).
json() {
  command -v python3 >/dev/null || return 0
  python3 - "$1" "$2" <<'EOF' || { echo "--- $1:"; cat "$1"; fail "$1: not true: $2"; }
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
}
# import NAME...: the JSON traces of tests/cli/data as trace directories.
import() {
  for name in "$@"; do
    "$smtrace" import-json "$data/$name.json" -o "$name" >/dev/null 2>&1 || fail "import $name.json"
  done
}
# The question's answer in prove's JSON: r["questions"][0].
Q='r["questions"][0]'

case $case_name in
  prove_findings)
    import race_deadlock race_deadlock_fixed race_sum race_sum_fixed send_first send_first_fixed
    # A wildcard receive whose other match deadlocks: an error, with the witness.
    expect 1 "$smtrace" prove race_deadlock --format json
    json out.txt 'any(f["kind"] == "message-race" and f["severity"] == "error" and f["witness"] for f in r["findings"])'
    json out.txt 'any(a["send"] == "1:2" and a["verdict"] == "sat" and a["outcome"] in ("deadlock", "unmatched") for x in r["races"] for a in x["alternatives"])'
    expect 1 "$smtrace" prove race_deadlock
    contains out.txt "race_deadlock.c:24: error: .*\[message-race\]"
    contains out.txt "^SUMMARY: "
    # A harmless race: info only.
    expect 0 "$smtrace" prove race_sum --format json
    json out.txt 'any(f["kind"] == "message-race" for f in r["findings"])'
    json out.txt 'all(f["severity"] == "info" for f in r["findings"])'
    expect 0 "$smtrace" prove race_sum
    contains out.txt "race_sum.c:21: info: .*the run still completes, whatever other wildcards take.*\[message-race\]"
    # What was shown, and what a trace cannot show.
    contains out.txt "re-execution, not a trace, can show whether the output changes"
    lacks out.txt "harmless race"
    # Both ranks send first: relies on buffering.
    expect 1 "$smtrace" prove send_first --format json
    json out.txt 'any(f["kind"] == "potential-deadlock" and f["severity"] == "error" for f in r["findings"])'
    json out.txt '[f for f in r["findings"] if f["kind"] == "potential-deadlock"][0]["witness"]["outcome"] == "deadlock"'
    json out.txt 'len([f for f in r["findings"] if f["kind"] == "potential-deadlock"][0]["witness"]["cycle"]) == 2'
    # The fixed twins: nothing.
    for t in race_deadlock_fixed race_sum_fixed send_first_fixed; do
      expect 0 "$smtrace" prove $t --format json
      json out.txt 'r["findings"] == []'
    done
    ;;
  prove_can_match)
    import race_deadlock race_deadlock_fixed
    # Rank 0's wildcard receive can take rank 1's message (not what the run
    # did): sat, with a witness schedule that the replay accepted.
    expect 1 "$smtrace" prove race_deadlock --can-match 0:2 1:2 --format json
    json out.txt "$Q"'["question"] == "can-match" and '"$Q"'["events"] == ["0:2", "1:2"]'
    json out.txt "$Q"'["verdict"] == "sat" and '"$Q"'["witness"]["replayed"]'
    json out.txt '{"receive": "0:2", "send": "1:2"} in '"$Q"'["witness"]["matches"]'
    json out.txt 'any(s["action"] == "match" and s["receive"] == "0:2" and s["send"] == "1:2" for s in '"$Q"'["witness"]["schedule"])'
    expect 1 "$smtrace" prove race_deadlock --can-match 1:2 0:2
    contains out.txt "can-match 0:2 1:2: sat"
    # With the source named, it cannot: unsat, with a reason.
    expect 0 "$smtrace" prove race_deadlock_fixed --can-match 0:2 1:2 --format json
    json out.txt "$Q"'["verdict"] == "unsat" and len('"$Q"'["explanation"]) > 0'
    # The seed's Table 1 property on 5 senders.
    "$smtrace" synth senders --k 5 -o s5 >/dev/null 2>&1 || fail "synth senders"
    expect 0 "$smtrace" prove s5 --can-match 0:5 5:1 --format json
    json out.txt "$Q"'["verdict"] == "sat" and '"$Q"'["witness"]["replayed"]'
    # Bad questions.
    expect 2 "$smtrace" prove s5 --can-match 0:5 9:1; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" prove s5 --can-match 0:five 5:1; contains err.txt "smtrace: error:"
    ;;
  prove_can_precede)
    import race_deadlock
    # Rank 0's second receive (from rank 1) cannot return before rank 2
    # sends: had the wildcard taken rank 1's message, it would never return.
    expect 1 "$smtrace" prove race_deadlock --can-precede 0:3 2:2 --format json
    json out.txt "$Q"'["question"] == "can-precede" and '"$Q"'["verdict"] == "unsat"'
    json out.txt 'len('"$Q"'["explanation"]) > 0 and '"$Q"'["witness"] is None'
    expect 1 "$smtrace" prove race_deadlock --can-precede 0:3 2:2
    contains out.txt "can-precede 0:3 2:2: unsat"
    # Rank 2's send can come after rank 1's (it did not in the run, nothing orders them).
    expect 1 "$smtrace" prove race_deadlock --can-precede 1:2 2:2 --format json
    json out.txt "$Q"'["verdict"] == "sat" and '"$Q"'["witness"]["replayed"]'
    # The seed's "bogus" match pair of Figure 6 (R0,4 with S2,1): unsat
    # (Theorem 2: it is in the over-approximated set, never in a solution).
    "$smtrace" synth fig6 -o f6 >/dev/null 2>&1 || fail "synth fig6"
    expect 0 "$smtrace" prove f6 --can-match 0:7 2:1 --format json
    json out.txt "$Q"'["verdict"] == "unsat"'
    expect 0 "$smtrace" prove f6 --can-match 0:1 2:1 --format json
    json out.txt "$Q"'["verdict"] == "sat"'
    ;;
  prove_dot)
    import race_deadlock send_first
    expect 1 "$smtrace" prove race_deadlock --can-match 0:2 1:2 --dot w.dot
    [ -s w.dot ] || fail "no w.dot"
    contains w.dot "digraph"
    expect 1 "$smtrace" prove send_first --dot d.dot
    contains d.dot "digraph"
    if command -v dot >/dev/null; then
      dot -Tsvg w.dot >/dev/null || fail "dot cannot read w.dot"
      dot -Tsvg d.dot >/dev/null || fail "dot cannot read d.dot"
    fi
    expect 2 "$smtrace" prove send_first --dot "$work/no/such/dir/d.dot"; contains err.txt "smtrace: error:"
    ;;
  prove_smt2)
    import race_deadlock
    expect 1 "$smtrace" prove race_deadlock --can-match 0:2 1:2 --emit-smt2 p.smt2
    [ -s p.smt2 ] || fail "no p.smt2"
    contains p.smt2 "(assert"
    contains p.smt2 "(check-sat)"
    if command -v z3 >/dev/null; then
      z3 -smt2 p.smt2 >z3.txt 2>&1 || { cat z3.txt; fail "z3 cannot read p.smt2"; }
      lacks z3.txt "error"
      grep -q -x "sat\|unsat\|unknown" z3.txt || { cat z3.txt; fail "z3 gave no verdict on p.smt2"; }
    fi
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: $case_name"
