#!/usr/bin/env bash
# smtrace's one entry point for a fresh Debian 12 machine:
#   bash scripts/bootstrap.sh demo   install, build, record and show a buggy MPI example
#   bash scripts/bootstrap.sh test   install, build, run the whole test suite
#   bash scripts/bootstrap.sh sanitize
#                                    ASan+UBSan build (build-asan): unit, CLI,
#                                    corpus, MPI e2e and fault tests; then a
#                                    TSan build (build-tsan) of the unit tests
#                                    of the parallel parts
#   bash scripts/bootstrap.sh fuzz [SECONDS]
#                                    tests/fuzz/run.sh SECONDS (default 30)
# Installs the missing Debian packages itself (apt-get; sudo when not root).
# Environment: BUILD_DIR (default build; sanitize: build-asan and build-tsan),
# JOBS (default nproc).
set -euo pipefail

mode=${1:-}
case "$mode" in
  demo|test|build|sanitize|fuzz) ;;
  *) echo "usage: bash scripts/bootstrap.sh demo|test|build|sanitize|fuzz [SECONDS]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-$(nproc)}

packages=(cmake g++ make pkg-config binutils libz3-dev libboost-graph-dev libprotobuf-dev
  protobuf-compiler libopenmpi-dev openmpi-bin libfmt-dev doctest-dev libcli11-dev
  time z3 libtsan2 libasan8 libubsan1 libdw-dev nlohmann-json3-dev libopen-trace-format2-dev otf2-tools chromium gfortran
  clang libomp-dev llvm-14-dev gcc-12-plugin-dev)
  # time: /usr/bin/time for bench/*.sh; z3: the solver binary, to parse --emit-smt2 files;
  # libtsan2: GCC's ThreadSanitizer runtime, the baseline of bench/loadstore.sh and the TSan build of
  # `sanitize`; libasan8, libubsan1: GCC's ASan and UBSan runtimes (`sanitize`);
  # libdw-dev: elfutils' DWARF reader, for `smtrace symbolize`; nlohmann-json3-dev: Perfetto JSON;
  # libopen-trace-format2-dev: OTF2 export/import (optional at build time), otf2-tools: otf2-print for
  # its tests; chromium: the HTML report's test in a headless browser; gfortran: the Fortran e2e cases;
  # clang, libomp-dev: the e2e cases' clang variants, OpenMP with LLVM's libomp (the tracer's OMPT tool);
  # llvm-14-dev: LLVM's CMake package and headers, for smtrace's clang pass plugin (tracer/filter/);
  # gcc-12-plugin-dev: GCC's plugin headers, for smtrace's GCC plugin (tracer/filter/)
# fuzz: clang and its libFuzzer runtime (tests/fuzz/run.sh).
[ "$mode" = fuzz ] && packages+=(clang-14 libclang-rt-14-dev)

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  local werror=OFF
  [ "$mode" = test ] && werror=ON
  echo "== configuring $build"
  cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMTRACE_WERROR=$werror >/dev/null
  echo "== building with $jobs jobs"
  cmake --build "$build" -j "$jobs"
}

# Open MPI refuses to start as root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# sanitize: one build with ASan+UBSan and one with TSan, each in its own
# directory, each running the tests it instruments. Suppressions (with the
# reason for each): scripts/sanitizers/.
sanitize() {
  local asan=${BUILD_DIR:-$top/build-asan} tsan=$top/build-tsan supp=$top/scripts/sanitizers
  echo "== configuring $asan (ASan+UBSan)"
  cmake -S "$top" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMTRACE_WERROR=ON \
    -DSMTRACE_SANITIZE=address,undefined -DSMTRACE_BUILD_BENCH=OFF >/dev/null
  echo "== building with $jobs jobs"
  cmake --build "$asan" -j "$jobs"
  # verify_asan_link_order=0: the tracer is preloaded into the (instrumented)
  # MPI test programs, so it, not libasan, comes first in their library
  # list; libasan still comes before libc (the program's first DT_NEEDED),
  # so its malloc is the one used. Leaks are checked in smtrace's programs
  # and unit tests (ASan's default, so detect_leaks is not set here), not in
  # the MPI processes the tracer is preloaded into (its __asan_default_options:
  # Open MPI unloads its components in MPI_Finalize, which leaves LSan no
  # module name to suppress their allocations by); Open MPI's leaks
  # elsewhere are suppressed (lsan.supp).
  # allocator_may_return_null=1: malloc/calloc return NULL when they cannot
  # serve, as glibc's do (OTF2 callocs what a damaged anchor file declares
  # and reports the failure: tests/fuzz/regressions/otf2/); C++ new still
  # aborts under ASan.
  export ASAN_OPTIONS=verify_asan_link_order=0:abort_on_error=0:halt_on_error=1:detect_odr_violation=0:allocator_may_return_null=1
  export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  export SMTRACE_SANITIZED=address
  (cd "$asan" && ctest --output-on-failure -j "$jobs" --timeout 600)
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

  echo "== configuring $tsan (TSan: the unit tests of the parallel parts)"
  cmake -S "$top" -B "$tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMTRACE_WERROR=ON \
    -DSMTRACE_SANITIZE=thread -DSMTRACE_BUILD_BENCH=OFF >/dev/null
  cmake --build "$tsan" -j "$jobs" --target smtrace_unit
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
  export SMTRACE_SANITIZED=thread
  # The worker pool, the reader (ranks in parallel), the analyzer's loading
  # and the SMT backend's parts, and the tracer's lock under threads.
  "$tsan/tests/smtrace_unit" --test-case='*run_on_threads*,trace_format::read_trace*,trace_format::RankReader*,trace_format::write_synthetic_trace*,analyzer::*,smt*,predictive*,tracer::handlers::threads*'
  unset TSAN_OPTIONS SMTRACE_SANITIZED
}

install_packages
if [ "$mode" = sanitize ]; then
  sanitize
  exit 0
fi
if [ "$mode" = fuzz ]; then
  exec bash "$top/tests/fuzz/run.sh" "${2:-30}"
fi
configure_and_build

case "$mode" in
  build) ;;
  demo)
    "$top/examples/run_demo.sh" "$build"
    ;;
  test)
    cd "$build"
    # One ctest run, one summary line. Tests that start MPI jobs declare
    # PROCESSORS (their rank count), so ctest never runs more ranks at once
    # than it has jobs; mpirun oversubscribes within one job.
    ctest --output-on-failure -j "$jobs" --timeout 300
    ;;
esac
