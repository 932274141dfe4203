#!/usr/bin/env bash
# Reads every archived trace of traces/ and checks the facts traces/corpus.tsv
# states for it: `smtrace info --format json` succeeds and reports the rank
# count and completeness, and e2e_check's case for the program that made the
# trace still holds. This is how old traces are kept readable.
#
#   check_corpus.sh SMTRACE E2E_CHECK TRACES_DIR
set -u
smtrace=$1
checker=$2
corpus=$3
failures=0
checked=0

fail() {
  echo "check_corpus.sh: FAIL: $*" >&2
  failures=$((failures + 1))
}

# first_value KEY JSON: the first "KEY": VALUE of the JSON text (top-level
# keys come before per_rank in smtrace info's output).
first_value() {
  grep -o "\"$1\": *[a-z0-9]*" <<<"$2" | head -n 1 | sed 's/.*: *//'
}

while read -r name ranks complete case_name; do
  case "$name" in '' | '#'*) continue ;; esac
  dir=$corpus/$name
  checked=$((checked + 1))
  if [ ! -d "$dir" ]; then
    fail "$name: no directory $dir"
    continue
  fi
  json=$("$smtrace" info "$dir" --format json 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$name: smtrace info exited $rc: $json"
    continue
  fi
  got_ranks=$(first_value ranks "$json")
  got_complete=$(first_value complete "$json")
  got_events=$(first_value events "$json")
  [ "$got_ranks" = "$ranks" ] || fail "$name: info says ranks $got_ranks, expected $ranks"
  [ "$got_complete" = "$complete" ] || fail "$name: info says complete $got_complete, expected $complete"
  [ "${got_events:-0}" -gt 0 ] || fail "$name: info reports no events"
  if ! "$checker" "$case_name" "$dir" --np "$ranks"; then
    fail "$name: e2e_check $case_name failed"
  fi
  echo "check_corpus.sh: $name: $got_ranks ranks, $got_events events, complete $got_complete"
done <"$corpus/corpus.tsv"

[ "$checked" -gt 0 ] || fail "no traces listed in $corpus/corpus.tsv"
echo "SUMMARY: check_corpus.sh: $checked traces, $failures failures"
[ "$failures" -eq 0 ]
