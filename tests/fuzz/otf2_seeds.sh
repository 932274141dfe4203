#!/usr/bin/env bash
# Write the seeds of the otf2 fuzz target (tests/fuzz/seeds/otf2/NAME.bin):
# each trace of traces/ exported with `smtrace export --format otf2`, its
# archive packed into one input as fuzz_otf2.cpp lays it out (the anchor
# file, the global definitions, then each location's events and local
# definitions, separated by the line "==smtrace-fuzz-otf2-file==").
#   tests/fuzz/otf2_seeds.sh SMTRACE      (SMTRACE: a built smtrace binary)
# Rerun it when the exporter changes what it writes; the seeds are
# committed because the fuzz build does not build the CLI.
set -euo pipefail
smtrace=${1:?usage: tests/fuzz/otf2_seeds.sh SMTRACE}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/tests/fuzz/seeds/otf2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
rm -f "$out"/*.bin
separator=$'\n==smtrace-fuzz-otf2-file==\n'
cd "$top"  # relative trace paths: the anchor file names the trace it came from
for trace in traces/*/; do
  [ -f "$trace/rank-0.smt" ] || continue
  name=$(basename "$trace")
  "$smtrace" export --format otf2 --output "$tmp/$name" "$trace" >/dev/null 2>&1
  a=$tmp/$name
  {
    cat "$a/traces.otf2"; printf '%s' "$separator"; cat "$a/traces.def"
    k=0
    while [ -f "$a/traces/$k.evt" ]; do
      printf '%s' "$separator"; cat "$a/traces/$k.evt"
      printf '%s' "$separator"; [ -f "$a/traces/$k.def" ] && cat "$a/traces/$k.def"
      k=$((k + 1))
    done
  } >"$out/$name.bin"
  echo "$name: $k locations, $(stat -c %s "$out/$name.bin") bytes"
done
