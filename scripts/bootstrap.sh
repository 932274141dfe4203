#!/usr/bin/env bash
# smtrace's one entry point for a fresh Debian 12 machine:
#   bash scripts/bootstrap.sh demo   install, build, record and show a buggy MPI example
#   bash scripts/bootstrap.sh test   install, build, run the whole test suite
# Installs the missing Debian packages itself (apt-get; sudo when not root).
# Environment: BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail

mode=${1:-}
case "$mode" in
  demo|test|build) ;;
  *) echo "usage: bash scripts/bootstrap.sh demo|test|build" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-$(nproc)}

packages=(cmake g++ make pkg-config binutils libz3-dev libboost-graph-dev libprotobuf-dev
  protobuf-compiler libopenmpi-dev openmpi-bin libfmt-dev doctest-dev libcli11-dev
  time z3 libtsan2 gfortran)  # time: /usr/bin/time for bench/*.sh; z3: the solver binary, to parse --emit-smt2 files;
  # libtsan2: GCC's ThreadSanitizer runtime, the baseline of bench/loadstore.sh; gfortran: the Fortran e2e cases

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

install_packages
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
