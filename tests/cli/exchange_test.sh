#!/usr/bin/env bash
# CLI tests of exchange/: export (perfetto, otf2), import-otf2, check --format html.
#   exchange_test.sh CASE SMTRACE DATA_DIR WORK_DIR VALIDATOR HAVE_OTF2
# Each CASE is one CTest test (tests/cli/CMakeLists.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case_name=$1 smtrace=$2 data=$3 work=$4/$1 validator=$5 have_otf2=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
need_otf2_print() { command -v otf2-print >/dev/null || fail "otf2-print not found (Debian otf2-tools; scripts/bootstrap.sh installs it)"; }
# The checks that OTF2 carries what they need for (the round trip keeps their findings).
p2p_coll=deadlock,unmatched-message,collective-mismatch,collective-misaligned,message-race,potential-deadlock,request-leak

case $case_name in
  export_usage)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    expect 2 "$smtrace" export t --format perfetto; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" export t --format xml -o x.json; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" export "$work/nonexistent" --format perfetto -o x.json; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" export t --format otf2 -o o --findings; contains err.txt "perfetto only"
    expect 2 "$smtrace" import-otf2 "$work/nonexistent.otf2" -o back; contains err.txt "smtrace: error: .*no such file"
    mkdir junk && echo "not OTF2" > junk/traces.otf2
    expect 2 "$smtrace" import-otf2 junk -o back; contains err.txt "smtrace: error: .*not an OTF2 archive"
    if [ "$have_otf2" != ON ]; then
      expect 2 "$smtrace" export t --format otf2 -o o; contains err.txt "built without OTF2"
    fi
    ;;
  export_perfetto)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    expect 0 "$smtrace" export t --format perfetto -o t.json
    contains err.txt "slices, [1-9][0-9]* messages"
    "$validator" t.json --min-flows 1 || fail "perfetto JSON of pingpong invalid"
    expect 0 "$smtrace" export t --format perfetto -o - --quiet
    [ ! -s err.txt ] || fail "--quiet printed something"
    cmp -s out.txt t.json || fail "stdout and -o FILE differ"
    # A deadlock: each finding's locations marked.
    expect 0 "$smtrace" import-json "$data/deadlock.json" -o dl
    expect 0 "$smtrace" export dl --format perfetto -o dl.json --findings
    "$validator" dl.json --min-marks 2 || fail "perfetto JSON of the deadlock invalid"
    contains dl.json '"name":"error: deadlock"'
    contains dl.json '"findings":\["deadlock: 2 ranks wait for each other in a cycle (rank 0 -> rank 1 -> rank 0) \[deadlock\]"\]'
    ;;
  export_otf2)
    [ "$have_otf2" = ON ] || fail "built without OTF2"
    need_otf2_print
    for name in pingpong deadlock race_deadlock send_first; do
      expect 0 "$smtrace" import-json "$data/$name.json" -o "$name"
      expect 0 "$smtrace" export "$name" --format otf2 -o "$name-otf2"
      contains err.txt "OTF2 records; wrote $name-otf2/traces.otf2"
      otf2-print "$name-otf2/traces.otf2" > print.txt 2> print.err || { cat print.err; fail "otf2-print cannot read $name"; }
      contains print.txt "^ENTER "
      expect 0 "$smtrace" import-otf2 "$name-otf2" -o "$name-back"
      contains err.txt "imported [0-9]* rank(s)"
      contains err.txt "checks that cannot run on it: local-concurrency, rma-race, cuda-mpi-race"
      "$smtrace" check "$name" --checks "$p2p_coll" > a.txt; a=$?
      "$smtrace" check "$name-back" --checks "$p2p_coll" > b.txt; b=$?
      [ "$a" = "$b" ] || fail "$name: check exits $a, after export and import $b"
      diff a.txt b.txt || fail "$name: findings differ after export and import"
    done
    contains pingpong-otf2/traces.otf2 ""  # exists
    otf2-print pingpong-otf2/traces.otf2 | grep -q "MPI_SEND" || fail "no MPI_SEND record"
    otf2-print pingpong-otf2/traces.otf2 | grep -q "MPI_IRECV " || fail "no MPI_IRECV record"
    # An existing non-empty directory is refused without --force.
    expect 2 "$smtrace" export pingpong --format otf2 -o pingpong-otf2; contains err.txt "not empty"
    expect 0 "$smtrace" export pingpong --format otf2 -o pingpong-otf2 --force
    # info and check say what an import lacks.
    expect 0 "$smtrace" info pingpong-back
    contains out.txt "^lacks  *no buffer addresses"
    contains out.txt "^checks  *cannot run here: local-concurrency, rma-race, cuda-mpi-race"
    expect 0 "$smtrace" info pingpong-back --format json
    contains out.txt '"lacks":\["buffers","topologies"\]'
    expect 0 "$smtrace" check pingpong-back
    contains out.txt "^smtrace: note: check local-concurrency did not run: the trace has no buffer addresses"
    "$smtrace" prove race_deadlock-back > prove.txt; [ $? -le 1 ] || fail "prove cannot analyze an imported trace"
    ;;
  import_otf2_damaged)
    [ "$have_otf2" = ON ] || fail "built without OTF2"
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    expect 0 "$smtrace" export t --format otf2 -o a
    evt=$(ls a/traces/*.evt | tail -n 1)
    truncate -s $(( $(stat -c %s "$evt") / 2 )) "$evt"
    expect 2 "$smtrace" import-otf2 a -o back
    contains err.txt "smtrace: error: .*location .*events damaged.*what could be read is in back"
    [ -f back/manifest.json ] || fail "no partial trace written"
    "$smtrace" check back > out.txt 2>&1; [ $? -le 1 ] || { cat out.txt; fail "check cannot analyze the partial import"; }
    contains out.txt "^SUMMARY:"
    ;;
  html_report)
    expect 0 "$smtrace" import-json "$data/deadlock.json" -o dl
    expect 1 "$smtrace" check dl --format html -o report.html
    contains report.html "<!DOCTYPE html>"
    contains report.html "id=\"kind-deadlock\""
    contains report.html "<svg class=\"timeline\""
    lacks report.html "https\?://[^w]"
    expect 1 "$smtrace" check dl --format html
    cmp -s out.txt report.html || fail "stdout and -o FILE differ"
    bash "$here/chromium_check.sh" report.html 1 report.png
    # No findings: still a page.
    expect 0 "$smtrace" import-json "$data/send_first_fixed.json" -o clean
    expect 0 "$smtrace" check clean --format html -o clean.html --smt-timeout 0
    contains clean.html "No findings."
    bash "$here/chromium_check.sh" clean.html 0 clean.png
    ;;
  *) fail "unknown case $case_name" ;;
esac
exit 0
