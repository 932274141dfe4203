#!/usr/bin/env bash
# The load/store runtime's cost on a stencil-like loop (bench/stencil.c: a 2D
# Jacobi sweep), the same source built and run several ways in one run:
#
#   plain     mpicc -O2: no instrumentation (the baseline)
#   stub      -fsanitize=thread linked against empty __tsan_* functions: the
#             floor of any runtime behind this instrumentation (a call per
#             access, no vectorization)
#   smtrace   smtrace-cc -O2 with SMTRACE_CC_FILTER=0 (-fsanitize=thread,
#             libsmtrace_tsan), run under `smtrace record`, with an RMA
#             window alive: the grids lie outside the watched ranges (the
#             common case: one range check per access)
#   filter    as smtrace, built with smtrace's GCC plugin (tracer/filter/,
#             smtrace-cc's default where it is built): an inline hull test
#             per access, a call only on a hit
#   tsan      mpicc -O2 -fsanitize=thread: GCC's ThreadSanitizer (libtsan)
#   inside    as smtrace, the grids being the window's memory: every access
#             is watched and recorded (as strided runs)
#
#   bench/loadstore.sh [-b BUILD_DIR] [-r REPETITIONS] [-n N] [-i ITERATIONS] [-p RANKS] [-t THREADS]
#
# Where clang builds the program (with -fopenmp under -t: LLVM's libomp)
# the clang configurations come too:
#   plain_clang    clang -O2
#   smtrace_clang  smtrace-cc with SMTRACE_CC_FILTER=0: -fsanitize=thread
#                  instrumentation, libsmtrace_tsan (a call per access)
#   filter_clang   smtrace-cc with smtrace's pass plugin (tracer/filter/):
#                  an inline hull test per access, a call only on a hit
#   tsan_clang     clang -fsanitize=thread (with Archer, libomp's
#                  ThreadSanitizer tool, where installed and under -t)
#
# -t THREADS: the OpenMP variant (issue 15): every build with -fopenmp, each
# sweep a parallel loop of THREADS threads (OMP_NUM_THREADS, passive
# waiting), CPU time of the whole process; smtrace records the threads'
# synchronization (fork, join, barriers) too (with clang: OMPT tool). The
# last lines give smtrace's added CPU time as a fraction of
# ThreadSanitizer's (goal, issue 15: at most 1/3).
#
# BUILD_DIR holds tracer/smtrace-cc, tracer/libsmtrace_tsan.so,
# tracer/libsmtrace.so and cli/smtrace (default: build). Each repetition runs
# every configuration once, in turn, so that drifts in machine load hit all
# alike. The table gives rank 0's thread CPU time per grid point (4 loads
# and a store) and wall time per point, minimum over the repetitions, and
# the ratio of each configuration's minimum CPU time to plain's. On a shared
# machine CPU time is the figure to quote. Goal (issue 4): smtrace's
# overhead well below ThreadSanitizer's.
set -euo pipefail

build=build
reps=5
n=1024
iterations=20
np=1
threads=0
while getopts "b:r:n:i:p:t:h" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    n) n=$OPTARG ;;
    i) iterations=$OPTARG ;;
    p) np=$OPTARG ;;
    t) threads=$OPTARG ;;
    *) sed -n '2,46p' "$0"; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
smtrace=$build/cli/smtrace
wrapper=$build/tracer/smtrace-cc
for f in "$smtrace" "$wrapper" "$build/tracer/libsmtrace_tsan.so" "$build/tracer/libsmtrace.so"; do
  [ -e "$f" ] || { echo "loadstore.sh: missing $f (build smtrace, smtrace_tsan, smtrace_cli)" >&2; exit 2; }
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ThreadSanitizer's reports about the MPI library's own threads are not
# what is measured here.
export TSAN_OPTIONS=${TSAN_OPTIONS:-report_bugs=0}
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-loadstore.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The builds.
cflags=(-O2 -g -I"$here")
clang_ok=""
if [ "$threads" -gt 0 ]; then
  cflags+=(-fopenmp)
  export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive
fi
echo 'int main(void) { return 0; }' >"$work/probe.c"
if command -v clang >/dev/null && OMPI_CC=clang mpicc "${cflags[@]}" "$work/probe.c" -o "$work/probe" 2>/dev/null; then
  clang_ok=clang
fi
mpicc "${cflags[@]}" "$here/stencil.c" -o "$work/plain"
SMTRACE_CC_FILTER=0 "$wrapper" "${cflags[@]}" "$here/stencil.c" -o "$work/smtrace"
# filter_build NAME [VAR=VALUE...]: smtrace-cc's default build into NAME;
# true when smtrace-cc loaded one of smtrace's compiler plugins for it.
filter_build() {
  local name=$1
  shift
  env "$@" SMTRACE_CC_VERBOSE=1 "$wrapper" "${cflags[@]}" "$here/stencil.c" -o "$work/$name" 2>"$work/$name.log" &&
    grep -q -- '-f\(pass-\)\?plugin=' "$work/$name.log"
}
mpicc "${cflags[@]}" -fsanitize=thread "$here/stencil.c" -o "$work/tsan"
cat >"$work/stub.c" <<'EOF'
void __tsan_init(void) {}
void __tsan_func_entry(void* pc) { (void)pc; }
void __tsan_func_exit(void) {}
#define STUB(N) void __tsan_read##N(void* a) { (void)a; } void __tsan_write##N(void* a) { (void)a; }
STUB(1) STUB(2) STUB(4) STUB(8) STUB(16)
EOF
gcc -O2 -shared -fPIC "$work/stub.c" -o "$work/libstub.so"
mpicc "${cflags[@]}" -fsanitize=thread -c "$here/stencil.c" -o "$work/stencil.o"
omp_link=()
[ "$threads" -gt 0 ] && omp_link=(-fopenmp)
mpicc "$work/stencil.o" "${omp_link[@]}" -o "$work/stub" -L"$work" -lstub -Wl,-rpath,"$work"

configs=(plain stub smtrace)
filter_build filter && configs+=(filter)
configs+=(tsan inside)
archer=""
if [ -n "$clang_ok" ]; then
  OMPI_CC=clang mpicc "${cflags[@]}" "$here/stencil.c" -o "$work/plain_clang"
  OMPI_CC=clang SMTRACE_CC_FILTER=0 "$wrapper" "${cflags[@]}" "$here/stencil.c" -o "$work/smtrace_clang"
  OMPI_CC=clang mpicc "${cflags[@]}" -fsanitize=thread "$here/stencil.c" -o "$work/tsan_clang"
  if [ "$threads" -gt 0 ]; then
    for lib in /usr/lib/llvm-*/lib/libarcher.so; do [ -e "$lib" ] && archer=$lib; done
  fi
  configs+=(plain_clang smtrace_clang)
  filter_build filter_clang OMPI_CC=clang && configs+=(filter_clang)
  configs+=(tsan_clang)
fi
declare -A cpu wall

# run_one CONFIG REP: print rank 0's "WALL CPU" ns per point; smtrace and
# inside leave their trace in $work/trace-CONFIG.
run_one() {
  local config=$1 rep=$2 out
  local launcher=(mpirun --oversubscribe -np "$np")
  case "$config" in
    plain | stub | plain_clang) out=$("${launcher[@]}" "$work/$config" "$n" "$iterations") ;;
    tsan) out=$("${launcher[@]}" -x TSAN_OPTIONS "$work/tsan" "$n" "$iterations" 2>/dev/null) ;;
    tsan_clang)
      out=$(OMP_TOOL_LIBRARIES=$archer "${launcher[@]}" -x TSAN_OPTIONS -x OMP_TOOL_LIBRARIES "$work/tsan_clang" \
        "$n" "$iterations" 2>/dev/null) ;;
    smtrace | inside | filter | smtrace_clang | filter_clang)
      local where=outside binary=$config
      [ "$config" = inside ] && where=inside binary=smtrace
      rm -rf "$work/trace-$config"
      out=$("$smtrace" record -o "$work/trace-$config" -- "${launcher[@]}" "$work/$binary" "$n" "$iterations" "$where" 2>/dev/null)
      ;;
  esac
  sed -n 's/.* ns_per_point \([0-9.]*\) cpu_ns_per_point \([0-9.]*\).*/\1 \2/p' <<<"$out"
}

for ((rep = 1; rep <= reps; rep++)); do
  for config in "${configs[@]}"; do
    read -r w c < <(run_one "$config" "$rep")
    wall[$config]+="$w "
    cpu[$config]+="$c "
  done
done

minimum() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }

echo "stencil: ${n}x${n} doubles x 2 grids, $iterations sweeps, $np rank(s), $reps repetitions (minimum)"
[ "$threads" -gt 0 ] && echo "OpenMP: $threads threads per rank (OMP_WAIT_POLICY=passive), process CPU time${archer:+; tsan_clang with Archer ($archer)}"
printf '%-13s %14s %15s %9s\n' config cpu_ns/point wall_ns/point cpu_ratio
base=$(minimum <<<"${cpu[plain]}")
for config in "${configs[@]}"; do
  c=$(minimum <<<"${cpu[$config]}")
  w=$(minimum <<<"${wall[$config]}")
  printf '%-13s %14.3f %15.3f %9.2f\n' "$config" "$c" "$w" "$(awk -v a="$c" -v b="$base" 'BEGIN { print a / b }')"
done
# smtrace's added CPU time against ThreadSanitizer's, both over plain.
added() { awk -v s="$1" -v t="$2" -v p="$3" 'BEGIN { printf "%.3f", (s - p) / (t - p) }'; }
for config in smtrace filter; do
  [ -n "${cpu[$config]:-}" ] || continue
  echo "added cost, $config / tsan (gcc): $(added "$(minimum <<<"${cpu[$config]}")" "$(minimum <<<"${cpu[tsan]}")" "$base")"
done
if [ -n "$clang_ok" ]; then
  for config in smtrace_clang filter_clang; do
    [ -n "${cpu[$config]:-}" ] || continue
    echo "added cost, $config / tsan (clang${archer:+ + archer}): $(added "$(minimum <<<"${cpu[$config]}")" \
      "$(minimum <<<"${cpu[tsan_clang]}")" "$(minimum <<<"${cpu[plain_clang]}")")"
  done
fi
if [ "$threads" -gt 0 ]; then
  echo "smtrace: $("$smtrace" dump "$work/trace-smtrace" | grep -c 'omp_' || true) OpenMP events in rank 0's trace"
fi
events_inside=$("$smtrace" dump "$work/trace-inside" | grep -c 'smtrace_\(load\|store\)' || true)
echo "inside: $events_inside Load/Store events in the trace for $((5 * (n - 2) * (n - 2) * iterations * np)) accesses"
