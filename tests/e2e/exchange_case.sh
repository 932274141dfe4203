#!/usr/bin/env bash
# One exchange case: a real mpirun job recorded with `smtrace record`, then
#   - exported as OTF2, read by otf2-print, imported back with import-otf2:
#     the point-to-point and collective checks must give the same report
#     (byte for byte) on the import as on the original, and prove must run;
#   - exported for Perfetto with its findings: the JSON must validate;
#   - with --html: the HTML report (with the program's source around each
#     location) must render in headless Chromium without a script error.
#
#   exchange_case.sh --case NAME --np N --smtrace PATH --validator PATH
#                    [--kill-after S] [--expect-fail] [--finds "K1 K2"] [--html CHROMIUM_CHECK]
#                    [--no-smt] -- PROGRAM [ARGS...]
# --no-smt leaves the SMT checks out of the comparison, for traces whose SMT
# questions take longer than their budget (what is left undecided then
# depends on the machine's load, not on the trace).
set -u
case_name="" np=2 smtrace="" validator="" kill_after="" expect_fail=0 finds="" html="" smt=1
while [ $# -gt 0 ]; do
  case "$1" in
    --case) case_name=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --smtrace) smtrace=$2; shift 2 ;;
    --validator) validator=$2; shift 2 ;;
    --kill-after) kill_after=$2; shift 2 ;;
    --expect-fail) expect_fail=1; shift ;;
    --finds) finds=$2; shift 2 ;;
    --html) html=$2; shift 2 ;;
    --no-smt) smt=0; shift ;;
    --) shift; break ;;
    *) echo "exchange_case.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d "${TMPDIR:-/tmp}/smtrace-exchange-${case_name}.XXXXXX") || exit 2
cd "$work" || exit 2
fail() {
  echo "exchange_case.sh: $case_name: FAIL: $*" >&2
  echo "exchange_case.sh: $case_name: kept $work" >&2
  exit 1
}
command -v otf2-print >/dev/null || fail "otf2-print not found (Debian otf2-tools; scripts/bootstrap.sh installs it)"
p2p_coll=deadlock,unmatched-message,collective-mismatch,collective-misaligned,message-race,potential-deadlock,request-leak
smt_timeout=5
if [ "$smt" = 0 ]; then
  p2p_coll=deadlock,unmatched-message,collective-mismatch,collective-misaligned,request-leak
  smt_timeout=0
fi

killer=()
[ -n "$kill_after" ] && killer=(timeout -s TERM -k 5 "$kill_after")
"${killer[@]}" "$smtrace" record -o trace -- mpirun --oversubscribe -np "$np" "$@" > record.out 2> record.err
rc=$?
if [ "$expect_fail" = 1 ]; then [ "$rc" -ne 0 ] || fail "the job was expected to fail"; else [ "$rc" -eq 0 ] || fail "the job exited $rc"; fi
[ -d trace ] || fail "no trace written"

"$smtrace" check trace --checks "$p2p_coll" --smt-timeout "$smt_timeout" > original.txt 2> check.err
original_rc=$?
[ "$original_rc" -le 1 ] || { cat check.err; fail "check failed on the recording"; }
for kind in $finds; do grep -q "\[$kind\]$" original.txt || { cat original.txt; fail "no $kind finding in the recording"; }; done

"$smtrace" export trace --format otf2 -o otf2 --quiet || fail "export --format otf2 failed"
otf2-print otf2/traces.otf2 > print.txt 2> print.err || { cat print.err; fail "otf2-print cannot read the archive"; }
grep -q "^ENTER " print.txt || fail "otf2-print shows no ENTER record"
"$smtrace" import-otf2 otf2 -o back > import.out 2> import.err || { cat import.err; fail "import-otf2 failed"; }
"$smtrace" check back --checks "$p2p_coll" --smt-timeout "$smt_timeout" > imported.txt 2> check.err
imported_rc=$?
[ "$imported_rc" = "$original_rc" ] || fail "check exits $original_rc on the recording, $imported_rc on the import"
diff original.txt imported.txt > diff.txt || { cat diff.txt; fail "the import's findings differ from the recording's"; }
"$smtrace" prove back --smt-timeout 2 > prove.txt 2>&1
[ $? -le 1 ] || { cat prove.txt; fail "prove cannot analyze the import"; }

"$smtrace" export trace --format perfetto -o trace.json --findings --smt-timeout "$smt_timeout" --quiet || fail "export --format perfetto failed"
"$validator" trace.json || fail "the Perfetto JSON does not validate"

if [ -n "$html" ]; then
  "$smtrace" check trace --format html -o report.html --smt-timeout "$smt_timeout" --quiet
  [ $? -le 1 ] || fail "check --format html failed"
  grep -q '<span class="l hit">' report.html || fail "the report shows no source line of the program"
  findings=$(grep -c '<details class="finding ' report.html)
  bash "$html" report.html "$findings" report.png || fail "the HTML report does not render in Chromium"
fi
echo "exchange_case.sh: $case_name: ok ($(grep -c '' original.txt) report lines, $(grep -c '^ENTER' print.txt) regions in OTF2)"
rm -rf "$work"
exit 0
