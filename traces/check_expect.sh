#!/usr/bin/env bash
# Runs `smtrace check --expect` on every archived trace listed in
# traces/corpus.tsv against traces/expect/NAME.txt, so that what the checks
# find on real recorded traces cannot change unnoticed (CTest: corpus.expect,
# label corpus). After an intended change, regenerate an expectation with
#   smtrace check traces/NAME --quiet --write-expect traces/expect/NAME.txt
# and review the diff.
#
#   check_expect.sh SMTRACE TRACES_DIR
set -u
smtrace=$1
corpus=$2
failures=0
checked=0

while read -r name _; do
  case "$name" in '' | '#'*) continue ;; esac
  checked=$((checked + 1))
  expectation=$corpus/expect/$name.txt
  if [ ! -f "$expectation" ]; then
    echo "check_expect.sh: FAIL: $name: no expectation file $expectation" >&2
    failures=$((failures + 1))
    continue
  fi
  "$smtrace" check "$corpus/$name" --quiet --expect "$expectation"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "check_expect.sh: FAIL: $name: smtrace check --expect exited $rc" >&2
    failures=$((failures + 1))
  fi
done <"$corpus/corpus.tsv"

[ "$checked" -gt 0 ] || { echo "check_expect.sh: FAIL: no traces listed in $corpus/corpus.tsv" >&2; failures=1; }
echo "SUMMARY: check_expect.sh: $checked traces, $failures failures"
[ "$failures" -eq 0 ]
