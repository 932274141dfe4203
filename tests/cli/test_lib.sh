# Helpers of the CLI test scripts (cli_test.sh, check_test.sh,
# prove_test.sh), sourced before they cd into their work directory.

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect RC CMD... : run CMD, stdout to out.txt, stderr to err.txt, check its exit code.
expect() {
  local want=$1; shift
  "$@" >out.txt 2>err.txt
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stdout"; cat out.txt; echo "--- stderr"; cat err.txt
    fail "exit code $got, expected $want: $*"
  fi
}
contains() { grep -q -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "$1 lacks '$2'"; }; }
lacks() { if grep -q -- "$2" "$1"; then echo "--- $1:"; cat "$1"; fail "$1 has '$2'"; fi; }
# valid_json FILE: the file parses as JSON (skipped without python3).
valid_json() {
  command -v python3 >/dev/null || return 0
  python3 -m json.tool "$1" >/dev/null || fail "$1 is not valid JSON"
}
