#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz (clang, -fsanitize=fuzzer,address,
# undefined) in their own build directory and run each for SECONDS.
#   tests/fuzz/run.sh SECONDS [TARGET...]
# Exit 0 when no target found a crash, a leak, a timeout or an allocation
# over the limits; else 1, with the reproducer under $FUZZ_DIR/artifacts/.
# Environment:
#   BUILD_DIR   build directory (default build-fuzz in the source tree)
#   JOBS        build jobs (default 2)
#   FUZZ_DIR    corpora and artifacts (default $BUILD_DIR/fuzz)
#   CC, CXX     the compilers (default clang-14, clang++-14)
#   NO_BUILD=1  run what is built (for several run.sh at once on one build)
# The seeds are copied from the source tree (the SEEDS globs of
# tests/fuzz/CMakeLists.txt) into each corpus at every run; what the fuzzer
# adds stays in $FUZZ_DIR/corpus/TARGET for the next run.
set -euo pipefail

seconds=${1:-}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "usage: tests/fuzz/run.sh SECONDS [TARGET...]" >&2
  exit 2
fi
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$top/build-fuzz}
fuzz_dir=${FUZZ_DIR:-$build/fuzz}
jobs=${JOBS:-2}

# Limits. Inputs are at most 64 KiB; no single allocation may pass 64 MiB
# (a length field trusted too far shows as "malloc(N) exceeds limit") and the
# process stays under 1 GiB. One input may run 10 s.
max_len=65536
malloc_limit_mb=64
rss_limit_mb=1024
timeout_s=10

if [ "${NO_BUILD:-0}" != 1 ]; then
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
echo "== configuring $build"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_C_COMPILER="${CC:-clang-14}" -DCMAKE_CXX_COMPILER="${CXX:-clang++-14}" \
  -DSMTRACE_FUZZ=ON -DSMTRACE_BUILD_TESTS=OFF -DSMTRACE_BUILD_BENCH=OFF -DSMTRACE_WITH_CUPTI=OFF >/dev/null
echo "== building the fuzz targets with $jobs jobs"
cmake --build "$build" --target smtrace_fuzz_all -j "$jobs" >/dev/null
fi

# Leaks are reported (libFuzzer's -detect_leaks=1); ODR violations between
# the static libraries and libprotobuf are not ours to fix.
# max_allocation_size_mb with allocator_may_return_null=1: a malloc/calloc
# of the allocation limit or more (libFuzzer's limit counts from its value
# on) returns NULL, as glibc's does when it cannot
# serve, while C++ `new` above it still aborts (a finding, as before). It
# matters for C libraries that check for NULL: OTF2 callocs what a damaged
# anchor file declares inside OTF2_Reader_Open, before smtrace can see the
# number (tests/fuzz/regressions/otf2/anchor-property-count-*: 2.6 GB and
# 29 GB), and reports the failure, which the importer passes on.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_odr_violation=0:allocator_may_return_null=1:max_allocation_size_mb=$((malloc_limit_mb - 1))}
# Leaks of libraries that are not ours, each with its reason: lsan.supp.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/scripts/sanitizers/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

targets=()
declare -A seeds
while read -r name globs; do
  [ -n "$name" ] || continue
  targets+=("$name")
  seeds[$name]=$globs
done <"$build/tests/fuzz/targets.txt"
if [ $# -gt 0 ]; then targets=("$@"); fi

status=0
summary=()
for name in "${targets[@]}"; do
  exe="$build/tests/fuzz/fuzz_$name"
  [ -x "$exe" ] || { echo "run.sh: no fuzz target '$name'" >&2; exit 2; }
  corpus="$fuzz_dir/corpus/$name"
  artifacts="$fuzz_dir/artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  n=0
  (
    cd "$top"
    shopt -s nullglob
    # The target's regressions (tests/fuzz/regressions/TARGET/) seed it too.
    for glob in ${seeds[$name]:-} "tests/fuzz/regressions/$name/*"; do
      for f in $glob; do
        # Same name, other directory: keep both (the directory goes into the name).
        cp "$f" "$corpus/seed-$(echo "$f" | tr '/' '_')"
      done
    done
  )
  n=$(ls "$corpus" | wc -l)
  echo "== fuzz_$name: $seconds s, $n inputs in the corpus"
  log="$fuzz_dir/fuzz_$name.log"
  set +e
  "$exe" "$corpus" -max_total_time="$seconds" -max_len=$max_len -malloc_limit_mb=$malloc_limit_mb \
    -rss_limit_mb=$rss_limit_mb -timeout=$timeout_s -print_final_stats=1 -close_fd_mask=3 \
    -artifact_prefix="$artifacts/" >"$log" 2>&1
  rc=$?
  set -e
  # The last status line: "#N DONE cov: C ft: F corp: ..." and the final stats.
  line=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(echo "$line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$line" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
  if [ $rc -ne 0 ]; then
    status=1
    echo "== fuzz_$name FAILED (exit $rc); the log: $log; reproducers:" >&2
    ls "$artifacts" >&2
    grep -E "^==[0-9]+==ERROR|runtime error|SUMMARY|ERROR: libFuzzer|Test unit written" "$log" | head -20 >&2 || true
  fi
  summary+=("$(printf '%-12s %-6s execs %-10s cov %-6s ft %-6s corpus %-6s %s s' "$name" \
    "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$seconds")")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
