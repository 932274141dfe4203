#!/usr/bin/env bash
# `smtrace check` against `mpirun -np P smtrace-mpi check` on one synthetic
# halo trace: wall time, CPU time and peak memory of each process, and the
# ratio of each run's wall time to `smtrace check`'s of the same run.
#
#   bench/check_mpi.sh [-b BUILD_DIR] [-B BASE_BUILD_DIR] [-s RANKSxEVENTS] [-p "1 2 4"] [-w WORK_DIR] [-k]
#                      [-- CHECK_OPTIONS...]
#
# -B: also run BASE_BUILD_DIR's smtrace-mpi for each P, right before this
# build's (rows `base -np P`), for a before/after in the same run.
# Defaults: 64x1M (64M events, about 2.8 GiB of disk), processes 1 2 4,
# CHECK_OPTIONS `--smt-timeout 0`. Every run's JSON report must equal
# `smtrace check`'s (the script stops otherwise). Each process runs under
# /usr/bin/time (apt package `time`); for smtrace-mpi the rows are per
# process (process 0 analyzes, the others read and send), and the `wall`
# column of the job is mpirun's, start-up included. A process's exit status 1
# (findings) counts as success, so that mpirun does not end the job early.
# On a machine that others use too, CPU seconds are the steadier figure.
set -euo pipefail

build=build
base_build=
size=64x1M
procs="1 2 4"
work=
keep=0
while getopts "b:B:s:p:w:kh" opt; do
  case $opt in
    b) build=$OPTARG ;;
    B) base_build=$OPTARG ;;
    s) size=$OPTARG ;;
    p) procs=$OPTARG ;;
    w) work=$OPTARG ;;
    k) keep=1 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
check_options=("$@")
[ ${#check_options[@]} -gt 0 ] || check_options=(--smt-timeout 0)

smtrace=$build/cli/smtrace
smtrace_mpi=$build/cli/smtrace-mpi
base_mpi=${base_build:+$base_build/cli/smtrace-mpi}
for f in "$smtrace" "$smtrace_mpi" ${base_mpi:+"$base_mpi"} /usr/bin/time; do
  [ -x "$f" ] || { echo "check_mpi.sh: missing $f (build smtrace_cli and smtrace_mpi; apt install time)" >&2; exit 2; }
done
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-bench-mpi.XXXXXX")
  [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

trace=$work/halo-$size
if [ ! -d "$trace" ]; then
  "$smtrace" synth halo --ranks "${size%%x*}" --events "${size#*x}" -o "$trace" --force >/dev/null
fi
fmt="%-16s %8s %8s %8s %10s %8s\n"

# row NAME PROCESS TIMEFILE BASE_WALL: one process's figures.
row() {
  read -r secs user sys kb < <(tail -n 1 "$3")
  awk -v name="$1" -v p="$2" -v s="$secs" -v u="$user" -v y="$sys" -v kb="$kb" -v base="$4" -v fmt="$fmt" 'BEGIN {
    printf fmt, name, p, sprintf("%.2f", s), sprintf("%.2f", u + y), sprintf("%.0f MiB", kb / 1024),
           (base > 0 ? sprintf("%.2fx", s / base) : "-")
  }'
}

/usr/bin/time -f "%e %U %S %M" -o "$work/check.time" \
  "$smtrace" check "$trace" --quiet --format json "${check_options[@]}" >"$work/check.json" 2>"$work/check.err" || [ $? -le 1 ]
base=$(awk '{print $1}' <(tail -n 1 "$work/check.time"))
events=$(grep -o '"events": *[0-9]*' "$work/check.json" | head -n1 | grep -o '[0-9]*$')
printf "trace %s (%s events), check options: %s\n" "$size" "$events" "${check_options[*]}"
printf "$fmt" run process wall_s cpu_s "peak RSS" vs_check
row "smtrace check" - "$work/check.time" "$base"

# job LABEL SMTRACE_MPI NP: run SMTRACE_MPI under mpirun, compare its report, print its rows.
job() {
  local label=$1 program=$2 np=$3
  rm -f "$work"/mpi.time.*
  local start end
  start=$(date +%s.%N)
  mpirun --oversubscribe -np "$np" bash -c \
    '/usr/bin/time -f "%e %U %S %M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"; rc=$?; [ $rc -le 1 ] || exit $rc' "$work/mpi.time" \
    "$program" check "$trace" --quiet --format json "${check_options[@]}" >"$work/mpi.json" 2>"$work/mpi.err" ||
    [ $? -le 1 ] || { cat "$work/mpi.err" >&2; exit 1; }
  end=$(date +%s.%N)
  cmp -s "$work/check.json" "$work/mpi.json" || { echo "check_mpi.sh: $label -np $np: the report differs" >&2; exit 1; }
  for ((p = 0; p < np; ++p)); do
    row "$label -np $np" "$p" "$work/mpi.time.$p" "$base"
  done
  awk -v name="$label -np $np" -v s="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" -v base="$base" \
    -v fmt="$fmt" 'BEGIN { printf fmt, name, "job", sprintf("%.2f", s), "", "", sprintf("%.2fx", s / base) }'
}

for np in $procs; do
  [ -z "$base_mpi" ] || job base "$base_mpi" "$np"
  job smtrace-mpi "$smtrace_mpi" "$np"
done
