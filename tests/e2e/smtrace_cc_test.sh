#!/usr/bin/env bash
# smtrace-cc and libsmtrace_tsan.so without MPI jobs: what the runtime links
# and exports, the wrapper's compile-only and multi-source link commands
# (instrumented objects, linked against libsmtrace_tsan and never libtsan),
# and an instrumented program running without the tracer (memcpy and loops
# compute what they should; nothing is recorded).
#
#   smtrace_cc_test.sh WRAPPER RUNTIME
set -u
wrapper=$1
runtime=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-cc-test.XXXXXX") || exit 2
fail() {
  echo "smtrace_cc_test.sh: FAIL: $*" >&2
  echo "smtrace_cc_test.sh: kept $work" >&2
  exit 1
}

# The runtime links only libc and exports only its entry points.
deps=$(ldd "$runtime") || fail "ldd $runtime"
if grep -qE 'libstdc\+\+|libmpi|libtsan' <<<"$deps"; then fail "$runtime links more than libc: $deps"; fi
extra=$(nm -D --defined-only "$runtime" | awk '{ print $3 }' |
  grep -vE '^(__tsan_|smtrace_access_runtime$|smtrace_access_watch_hull$|memcpy$|memmove$|memset$|__mem(cpy|move|set)_chk$)')
[ -z "$extra" ] || fail "$runtime exports more than its entry points: $extra"

cat >"$work/main.c" <<'C'
#include <string.h>
int fill(int* v, int n);
int main(void) {
  int a[32], b[32];
  fill(a, 32);
  memcpy(b, a, sizeof a);
  memset(a, 0, sizeof a);
  int sum = 0;
  for (int i = 0; i < 32; ++i) sum += b[i] + a[i];
  return sum == 496 ? 0 : 1;
}
C
cat >"$work/fill.c" <<'C'
int fill(int* v, int n) {
  for (int i = 0; i < n; ++i) v[i] = i;
  return n;
}
C

# The -fsanitize=thread recipe (the plugins' path is below).
export SMTRACE_CC_FILTER=0
# Compile only: -fsanitize=thread added, the object instrumented.
"$wrapper" -O1 -c "$work/fill.c" -o "$work/fill.o" || fail "smtrace-cc -c"
nm "$work/fill.o" | grep -q '__tsan_func_entry' || fail "fill.o is not instrumented"
# Link with a source and an object on one command.
"$wrapper" -O1 "$work/main.c" "$work/fill.o" -o "$work/prog" || fail "smtrace-cc link"
nm "$work/prog" | grep -q 'U __tsan_write4' || fail "main.c was not instrumented"
linked=$(ldd "$work/prog")
grep -q libsmtrace_tsan <<<"$linked" || fail "prog does not link libsmtrace_tsan: $linked"
if grep -q 'libtsan' <<<"$linked"; then fail "prog links ThreadSanitizer's runtime: $linked"; fi
# No tracer: it runs as usual.
"$work/prog" || fail "the instrumented program computed the wrong sum"

# The default: the driver's plugin where smtrace built one for it
# (tracer/filter/), which tests the hull inline and calls no __tsan_init.
unset SMTRACE_CC_FILTER
SMTRACE_CC_VERBOSE=1 "$wrapper" -O1 "$work/main.c" "$work/fill.c" -o "$work/prog_filter" 2>"$work/filter.log" ||
  fail "smtrace-cc link (plugin path)"
if grep -q -- '-f\(pass-\)\?plugin=' "$work/filter.log"; then
  nm "$work/prog_filter" | grep -q 'smtrace_access_watch_hull' || fail "the plugin did not test the hull"
  if nm "$work/prog_filter" | grep -q '__tsan_init'; then fail "a plugin-built program calls __tsan_init"; fi
else
  grep -q -- '-fsanitize=thread' "$work/filter.log" || fail "neither a plugin nor -fsanitize=thread: $(cat "$work/filter.log")"
fi
"$work/prog_filter" || fail "the plugin-built program computed the wrong sum"

echo "smtrace_cc_test.sh: ok"
rm -rf "$work"
