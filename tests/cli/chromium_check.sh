#!/usr/bin/env bash
# chromium_check.sh HTML FINDINGS PNG: open the report HTML in headless
# Chromium; it must render (a screenshot PNG of some size), run its script
# (the page sets data-smtrace-ready to its number of findings, which must be
# FINDINGS) and log nothing to the console (no script error, no blocked
# fetch). Chromium missing is a failure, not a skip: scripts/bootstrap.sh
# installs it (Debian package chromium).
set -u
html=$1 findings=$2 png=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || fail "chromium not found: the HTML report test needs it (apt-get install chromium; scripts/bootstrap.sh installs it)"
[ -f "$html" ] || fail "$html: no such file"
url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile" --enable-logging=stderr --v=0)
timeout -k 5 90 "$browser" "${flags[@]}" --window-size=1200,1600 --screenshot="$png" "$url" > shot.log 2>&1 ||
  { cat shot.log; fail "chromium could not take the screenshot"; }
[ -s "$png" ] || { cat shot.log; fail "no screenshot written"; }
[ "$(stat -c %s "$png")" -gt 20000 ] || fail "$png is too small to show a page"
timeout -k 5 90 "$browser" "${flags[@]}" --dump-dom "$url" > dom.html 2> dom.log ||
  { cat dom.log; fail "chromium could not load the page"; }
grep -q "data-smtrace-ready=\"$findings\"" dom.html ||
  { grep -o 'data-smtrace-ready="[^"]*"' dom.html; fail "the page's script did not run to the end (want data-smtrace-ready=\"$findings\")"; }
if grep -h "CONSOLE" shot.log dom.log; then fail "the page logged to the console (script error or blocked load)"; fi
exit 0
