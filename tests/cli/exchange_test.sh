#!/usr/bin/env bash
# CLI tests of exchange/: export (perfetto, otf2), check --format html.
#   exchange_test.sh CASE SMTRACE DATA_DIR WORK_DIR VALIDATOR HAVE_OTF2
# Each CASE is one CTest test (tests/cli/CMakeLists.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case_name=$1 smtrace=$2 data=$3 work=$4/$1 validator=$5 have_otf2=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

case $case_name in
  export_usage)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    expect 2 "$smtrace" export t --format perfetto; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" export t --format xml -o x.json; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" export "$work/nonexistent" --format perfetto -o x.json; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" export t --format otf2 -o o --findings; contains err.txt "perfetto only"
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
