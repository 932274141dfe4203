#!/usr/bin/env bash
# Compares the MPI functions of the installed mpi.h with what libsmtrace.so
# wraps: every function a C program can call (the PMPI_ prototypes of the
# preprocessed mpi.h) must be traced (libsmtrace.so defines MPI_<name>) or
# named in the list of deliberate exceptions of docs/tracer.md ("What is not
# traced, and why": the backticked names, `*` a wildcard, of the first
# column of its table). With --fortran-lib, every traced call that the
# library's Fortran bindings offer (pmpi_<name>_, pmpi_<name>_f08_) must be
# wrapped for Fortran too (mpi_<name>_, mpi_<name>_f08_) unless listed in
# the section's "Fortran" table.
#
#   mpi_coverage.sh --cc CC --tracer libsmtrace.so --doc docs/tracer.md
#                   [--fortran-lib LIB]... [-- compiler flags (-I...)]
set -u
cc=""
tracer=""
doc=""
fortran_libs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cc) cc=$2; shift 2 ;;
    --tracer) tracer=$2; shift 2 ;;
    --doc) doc=$2; shift 2 ;;
    --fortran-lib) fortran_libs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "mpi_coverage.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$cc" ] || [ -z "$tracer" ] || [ -z "$doc" ]; then
  echo "mpi_coverage.sh: usage: mpi_coverage.sh --cc CC --tracer LIB --doc FILE [-- FLAGS]" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The functions of mpi.h: its PMPI_ prototypes after preprocessing (what a
# program can call; Open MPI hides the functions MPI-3.0 removed).
printf '#include <mpi.h>\n' > "$tmp/t.c"
if ! "$cc" -E "$@" "$tmp/t.c" > "$tmp/pre.c" 2> "$tmp/err"; then
  echo "mpi_coverage.sh: cannot preprocess mpi.h:" >&2
  cat "$tmp/err" >&2
  exit 2
fi
grep -oE '\bPMPI_[A-Za-z0-9_]+[[:space:]]*\(' "$tmp/pre.c" | sed -E 's/^P//; s/[[:space:](]+$//' | sort -u > "$tmp/mpi_h"
# What the tracer wraps.
nm -D --defined-only "$tracer" | awk '$2 == "T" && $3 ~ /^MPI_/ { print $3 }' | sort -u > "$tmp/traced"

# The exceptions: backticked names in the first column of the table of the
# section "What is not traced, and why" (up to the next "## " heading), and
# in its Fortran table (rows whose first column starts with "Fortran").
awk '
  /^## / { inside = ($0 ~ /^## What is not traced, and why/) ; next }
  inside && /^\|/ {
    n = split($0, col, "|")
    first = col[2]
    fortran = (first ~ /^[[:space:]]*Fortran/)
    while (match(first, /`[A-Za-z0-9_*]+`/)) {
      name = substr(first, RSTART + 1, RLENGTH - 2)
      print (fortran ? "F " : "C ") name
      first = substr(first, RSTART + RLENGTH)
    }
  }' "$doc" > "$tmp/exceptions"
grep '^C ' "$tmp/exceptions" | cut -c3- > "$tmp/c_exceptions"
grep '^F ' "$tmp/exceptions" | cut -c3- > "$tmp/f_exceptions"
if [ ! -s "$tmp/c_exceptions" ]; then
  echo "mpi_coverage.sh: $doc has no exception table under \"## What is not traced, and why\"" >&2
  exit 2
fi

# Return 0 when $1 matches a pattern of file $2.
matches() {
  local name=$1 pattern
  while IFS= read -r pattern; do
    # shellcheck disable=SC2053
    [[ $name == $pattern ]] && return 0
  done < "$2"
  return 1
}

status=0
traced=0
excepted=0
while IFS= read -r f; do
  if grep -qx "$f" "$tmp/traced"; then
    traced=$((traced + 1))
    if matches "$f" "$tmp/c_exceptions"; then
      echo "mpi_coverage: $f is traced but listed as not traced in $doc" >&2
      status=1
    fi
  elif matches "$f" "$tmp/c_exceptions"; then
    excepted=$((excepted + 1))
  else
    echo "mpi_coverage: $f (mpi.h) is not traced and not listed in $doc (\"What is not traced, and why\")" >&2
    status=1
  fi
done < "$tmp/mpi_h"
# A pattern that names nothing in mpi.h is stale.
while IFS= read -r pattern; do
  found=0
  while IFS= read -r f; do
    # shellcheck disable=SC2053
    if [[ $f == $pattern ]]; then found=1; break; fi
  done < "$tmp/mpi_h"
  if [ $found -eq 0 ]; then
    echo "mpi_coverage: $doc lists $pattern, which is not in mpi.h" >&2
    status=1
  fi
done < "$tmp/c_exceptions"
total=$(wc -l < "$tmp/mpi_h")
echo "mpi.h: $total functions, $traced traced, $excepted not traced (listed in $(basename "$doc"))"

# Fortran: each traced call whose binding the Fortran library offers.
if [ ${#fortran_libs[@]} -gt 0 ]; then
  nm -D --defined-only "$tracer" | awk '$2 == "T" { print $3 }' | sort -u > "$tmp/tracer_all"
  for lib in "${fortran_libs[@]}"; do
    nm -D --defined-only "$lib" | awk '{ print $3 }' | sort -u > "$tmp/lib"
    fortran=0
    missing=0
    while IFS= read -r f; do
      lower=$(printf '%s' "$f" | tr 'A-Z' 'a-z')
      for sym in "${lower}_" "${lower}_f08_"; do
        grep -qx "p$sym" "$tmp/lib" || continue
        if grep -qx "$sym" "$tmp/tracer_all"; then
          fortran=$((fortran + 1))
        elif ! matches "$f" "$tmp/f_exceptions"; then
          echo "mpi_coverage: $f is traced in C but its Fortran binding $sym ($(basename "$lib")) is not wrapped" >&2
          missing=$((missing + 1))
          status=1
        fi
      done
    done < "$tmp/traced"
    echo "$(basename "$lib"): $fortran Fortran bindings of traced calls wrapped, $missing missing"
  done
fi
exit $status
