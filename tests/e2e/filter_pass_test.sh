#!/usr/bin/env bash
# smtrace's compiler plugins without MPI.
#
#   filter_pass_test.sh --gcc GXX PLUGIN RUNTIME_DIR SOURCE_ROOT
#
# The GCC plugin (tracer/filter/gcc_plugin.cpp): the assembly tests the
# hull and calls no __tsan_init; filter_program.cpp built with it at -O2,
# -O0 and -O2 -fno-builtin runs its checks against the real runtime.
#
# The clang pass plugin (tracer/filter/llvm_pass.cpp):
# the IR it leaves (inline hull tests with unordered loads of
# smtrace_access_watch_hull, runtime calls with the access's debug location,
# the vectorized loop kept and the hull's loads hoisted out of it, no call
# for a stack array that never escapes, no __tsan_init, -O0 instrumented
# too), then filter_program.cpp built with it and run against the real
# runtime with a fake tracer (what is recorded inside and outside the
# watched ranges).
#
#   filter_pass_test.sh CLANGXX PLUGIN RUNTIME_DIR SOURCE_ROOT
set -u
compiler=gcc
if [ "${1:-}" = --gcc ]; then shift; else compiler=clang; fi
cxx=$1
plugin=$2
runtime_dir=$3
root=$4
here=$(cd "$(dirname "$0")" && pwd)
src=$here/filter_program.cpp
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-filter-test.XXXXXX") || exit 2
fail() {
  echo "filter_pass_test.sh: FAIL: $*" >&2
  echo "filter_pass_test.sh: kept $work" >&2
  exit 1
}
# run_program LEVEL FLAGS...: build filter_program.cpp and run its checks.
run_program() {
  local level=$1
  shift
  "$cxx" "$@" "$level" "$src" -o "$work/program" -L"$runtime_dir" -lsmtrace_tsan -Wl,-rpath,"$runtime_dir" ||
    fail "building filter_program ($level)"
  "$work/program" || fail "filter_program ($level)"
}

if [ "$compiler" = gcc ]; then
  flags=(-std=c++20 -g -I"$root" -fplugin="$plugin")
  "$cxx" "${flags[@]}" -O2 -S "$src" -o "$work/program.s" || fail "g++ -O2 -S with the plugin"
  grep -q 'smtrace_access_watch_hull' "$work/program.s" || fail "the hull is not tested"
  grep -q 'call.*__tsan_write16\|call.*__tsan_write8' "$work/program.s" || fail "no runtime calls emitted"
  if grep -q '__tsan_init' "$work/program.s"; then fail "__tsan_init emitted"; fi
  run_program -O2 "${flags[@]}"
  run_program -O0 "${flags[@]}"
  run_program -O2 "${flags[@]}" -fno-builtin  # memcpy called by name
  echo "filter_pass_test.sh: ok"
  rm -rf "$work"
  exit 0
fi

flags=(-std=c++20 -g -I"$root" -fpass-plugin="$plugin")
ir=$work/program.ll

"$cxx" "${flags[@]}" -O2 -fno-discard-value-names -S -emit-llvm "$src" -o "$ir" || fail "clang -O2 -emit-llvm with the plugin"
# fn NAME: the body of the function whose mangled name contains NAME.
fn() { awk -v n="$1" '/^define/ && index($0, n) { on = 1 } on { print } on && /^}/ { on = 0 }' "$ir"; }
grep -q 'load atomic i64, i64\* getelementptr inbounds (%struct.smtrace_access_hull, %struct.smtrace_access_hull\* @smtrace_access_watch_hull, i32 0, i32 [01]) unordered' "$ir" ||
  fail "no unordered load of smtrace_access_watch_hull"
if grep -q '__tsan_init\|__tsan_atomic\|@memcpy' "$ir"; then fail "__tsan_init, __tsan_atomic* or a memcpy call emitted"; fi
calls=$(grep -c 'call void @__tsan_\(read\|write\)' "$ir")
[ "$calls" -gt 0 ] || fail "no runtime calls emitted"
[ "$(grep 'call void @__tsan_\(read\|write\)' "$ir" | grep -c '!dbg')" = "$calls" ] ||
  fail "a runtime call without the access's debug location"
fn 3add >"$work/add.ll"
grep -q 'load <2 x double>' "$work/add.ll" || fail "add() is no longer vectorized"
grep -q 'call void @__tsan_write16' "$work/add.ll" || fail "add()'s vector stores are not instrumented"
awk '/^vector.body:/ { on = 1 } on { print } on && /^$/ { on = 0 }' "$work/add.ll" >"$work/body.ll"
[ -s "$work/body.ll" ] || fail "add() has no vector.body"
if grep -q smtrace_access_watch_hull "$work/body.ll"; then fail "the hull is loaded inside add()'s vector loop"; fi
grep -q 'icmp ult' "$work/body.ll" || fail "no hull test inside add()'s vector loop"
fn 10local_only >"$work/local.ll"
[ -s "$work/local.ll" ] || fail "local_only() not found"
if grep -q '__tsan_\(read\|write\)' "$work/local.ll"; then fail "a stack array that never escapes is instrumented"; fi
fn 4copy | grep -q '__tsan_read_range' || fail "memcpy's source is not instrumented"
grep -q '__tsan_func_entry' "$ir" && grep -q '__tsan_func_exit' "$ir" || fail "no shadow stack calls"

"$cxx" "${flags[@]}" -O0 -S -emit-llvm "$src" -o "$work/o0.ll" || fail "clang -O0 with the plugin"
grep -q 'call void @__tsan_write8' "$work/o0.ll" || fail "-O0 is not instrumented"

run_program -O2 "${flags[@]}"
run_program -O2 "${flags[@]}" -fno-builtin  # memcpy called by name
echo "filter_pass_test.sh: ok"
rm -rf "$work"
