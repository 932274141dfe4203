#!/usr/bin/env bash
# CLI tests of `smtrace check`: run the built `smtrace` on small traces made
# from JSON (tests/cli/data) and check exit codes and output.
#   check_test.sh CASE SMTRACE DATA_DIR WORK_DIR
# Each CASE is one CTest test, cli.CASE (tests/cli/CMakeLists.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
case_name=$1 smtrace=$2 data=$3 work=$4/$1
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

# The two traces: dl (both ranks blocked in MPI_Recv from each other, rank 1
# killed) and pp (a complete ping-pong whose split communicator is never freed).
traces() {
  "$smtrace" import-json "$data/deadlock.json" -o dl >/dev/null 2>&1 || fail "import deadlock.json"
  "$smtrace" import-json "$data/pingpong.json" -o pp >/dev/null 2>&1 || fail "import pingpong.json"
}

# The names of the checks, one a line, in report order.
all_checks() { "$smtrace" check --list | awk 'NF { print $1 }'; }

case $case_name in
  check_help)
    for form in "check --help" "help check"; do
      # shellcheck disable=SC2086
      expect 0 "$smtrace" $form
      contains out.txt "Usage: smtrace check DIR \[--format text|json|sarif|html\]"
      contains out.txt "--expect"
      contains out.txt "--write-expect"
      contains out.txt "--list"
      contains out.txt "--quiet"
      contains out.txt "--buffering"
      contains out.txt "Exit codes"
      contains out.txt "Examples:"
    done
    expect 0 "$smtrace" --help; contains out.txt "^ *check "
    ;;
  check_bad_usage)
    traces
    expect 2 "$smtrace" check; contains err.txt "smtrace: error: check needs a trace directory"
    expect 2 "$smtrace" check dl --format xml; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" check dl --alignment sideways; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" check dl --buffering some; contains err.txt "smtrace: error:"
    expect 2 env SMTRACE_SMT_MEMORY_MB=lots "$smtrace" check pp
    contains err.txt "smtrace: error: SMTRACE_SMT_MEMORY_MB=lots: not a number of MiB"
    expect 0 "$smtrace" check pp --checks message-race --buffering zero
    expect 2 "$smtrace" check dl --bogus; contains err.txt "smtrace check --help"
    expect 2 "$smtrace" check dl --checks deadlock,nope
    contains err.txt "smtrace: error: unknown check 'nope'"; contains err.txt "collective-mismatch"
    # Every check dropped, as `check --list` names them (in report order).
    drop=all; for name in $(all_checks); do drop="$drop,-$name"; done
    expect 2 "$smtrace" check dl --checks "$drop"
    contains err.txt "no check to run"
    expect 2 "$smtrace" check "$work/nonexistent"; contains err.txt "smtrace: error:"
    mkdir empty
    expect 2 "$smtrace" check empty; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" check dl --expect "$work/nonexistent.txt"; contains err.txt "cannot read"
    printf 'deadlock 0:2\ndeadlock 0:two\n' >bad.txt
    expect 2 "$smtrace" check dl --expect bad.txt; contains err.txt "bad.txt:2: location '0:two'"
    expect 2 "$smtrace" check dl -o "$work/no/such/dir/report.txt"; contains err.txt "cannot write"
    # A report cut short (a file-size limit standing in for a full disk) is
    # removed, not left looking like a whole one.
    expect 2 bash -c "trap '' XFSZ; ulimit -f 1; exec \"\$0\" check dl --format html -o cut.html" "$smtrace"
    contains err.txt "cannot write"; [ ! -e cut.html ] || fail "the cut-short report cut.html was left"
    ;;
  check_list)
    expect 0 "$smtrace" check --list
    for name in deadlock abnormal-termination invalid-argument type-mismatch epoch-lifecycle \
                collective-mismatch collective-misaligned local-concurrency request-leak \
                unmatched-message resource-leak thread-level; do
      contains out.txt "^$name  *\(error\|warning\|info\) "
    done
    expect 0 "$smtrace" check --list --format json
    valid_json out.txt
    contains out.txt '"name": "deadlock", "severity": "error"'
    ;;
  check_formats)
    traces
    expect 1 "$smtrace" check dl
    contains out.txt "^hang.c:12: error: .* \[deadlock\]$"
    contains out.txt "^hang.c:12: note: rank 0 (event 0:2) in MPI_Recv"
    contains out.txt "^hang.c:12: note: rank 1 (event 1:2) in MPI_Recv"
    contains out.txt "^SUMMARY: 1 error, 0 warnings in 2 ranks, 6 events (trace incomplete)$"
    [ "$(tail -n 1 out.txt | cut -c1-8)" = "SUMMARY:" ] || fail "the text does not end with the SUMMARY line"
    cp out.txt first.txt
    expect 1 "$smtrace" check dl
    cmp -s out.txt first.txt || fail "two runs gave different text"

    expect 1 "$smtrace" check dl --format json
    valid_json out.txt
    contains out.txt '"format_version": 1'
    contains out.txt '"kind": "deadlock"'
    contains out.txt '"severity": "error"'
    contains out.txt '"event": "1:2"'
    contains out.txt '"call": "MPI_Recv"'
    contains out.txt '"file": "hang.c"'
    contains out.txt '"line": 12'
    contains out.txt '"complete": false'
    contains out.txt '"stats": {'

    expect 1 "$smtrace" check dl --format sarif
    valid_json out.txt
    contains out.txt '"version": "2.1.0"'
    contains out.txt '"\$schema": "https://json.schemastore.org/sarif-2.1.0.json"'
    contains out.txt '"ruleId": "deadlock"'
    contains out.txt '"relatedLocations"'
    contains out.txt '"uri": "hang.c"'
    contains out.txt '"startLine": 12'
    if command -v jq >/dev/null; then
      [ "$(jq '.runs | length' out.txt)" = 1 ] || fail "SARIF: not one run"
      [ "$(jq -r '.runs[0].tool.driver.rules | map(.id) | join(" ")' out.txt)" = "$(all_checks | tr '\n' ' ' | sed 's/ $//')" ] ||
        fail "SARIF: rules are not the checks in report order"
      [ "$(jq -r '.runs[0].results[0].level' out.txt)" = error ] || fail "SARIF: level"
    fi

    # -o: the report goes to the file, nothing to stdout.
    expect 1 "$smtrace" check dl --format json -o report.json
    [ -s out.txt ] && fail "-o still printed the report on stdout"
    contains report.json '"kind": "deadlock"'

    # A clean JSON report has no "kind" key at all (tests/e2e/run_case.sh --clean).
    expect 0 "$smtrace" check pp --checks deadlock --format json
    valid_json out.txt
    contains out.txt '"findings": \[\]'
    lacks out.txt '"kind":'
    # Without a terminal there is no progress, with or without --quiet.
    [ -s err.txt ] && fail "check printed on stderr: $(cat err.txt)"
    ;;
  check_exit_codes)
    traces
    expect 1 "$smtrace" check dl --quiet
    expect 1 "$smtrace" check dl --checks deadlock
    # Without the deadlock, what is left of the hang is a run stopped from outside.
    expect 1 "$smtrace" check dl --checks all,-deadlock
    contains out.txt "error: the run was stopped before it finished: ranks 0 and 1 did not reach MPI_Finalize"
    expect 0 "$smtrace" check dl --checks all,-deadlock,-abnormal-termination
    expect 0 "$smtrace" check pp --checks deadlock
    contains out.txt "^SUMMARY: 0 errors, 0 warnings in 2 ranks, 12 events (trace complete)$"
    # Warnings alone (the split communicator never freed) leave the exit code 0.
    expect 0 "$smtrace" check pp --checks resource-leak
    contains out.txt "warning: .*\[resource-leak\]"
    contains out.txt "^SUMMARY: 0 errors, 1 warning"
    expect 0 "$smtrace" check pp --alignment off
    expect 0 "$smtrace" check pp --alignment weak
    ;;
  check_expect)
    traces
    # --write-expect records the findings; --expect with them agrees.
    expect 1 "$smtrace" check dl --write-expect dl.expect
    contains out.txt "SUMMARY: 1 error"
    contains dl.expect "^deadlock 0:2@hang.c:12 1:2@hang.c:12$"
    expect 0 "$smtrace" check dl --expect dl.expect
    contains out.txt "^SUMMARY: expect: 0 missing, 0 unexpected, 1 matched (agrees with dl.expect)$"
    lacks out.txt "error:"
    # Hand-written patterns.
    printf '# both ranks, any event\ndeadlock 0:* 1:*\n' >loose.expect
    expect 0 "$smtrace" check dl --expect loose.expect
    # A wrong event: one missing, one unexpected, exit 1.
    printf 'deadlock 0:2@hang.c:12 1:3@hang.c:12\n' >wrong.expect
    expect 1 "$smtrace" check dl --expect wrong.expect
    contains out.txt "^missing: deadlock 0:2@hang.c:12 1:3@hang.c:12  (wrong.expect:1)$"
    contains out.txt "^unexpected: deadlock 0:2@hang.c:12 1:2@hang.c:12  # "
    contains out.txt "^SUMMARY: expect: 1 missing, 1 unexpected, 0 matched (differs from wrong.expect)$"
    # Nothing expected.
    : >none.expect
    expect 1 "$smtrace" check dl --expect none.expect; contains out.txt "1 unexpected"
    expect 0 "$smtrace" check pp --checks deadlock --expect none.expect
    # A trace without errors but with an expected deadlock: exit 1.
    expect 1 "$smtrace" check pp --checks deadlock --expect dl.expect; contains out.txt "^missing: deadlock"
    # With -o the report is still written.
    expect 0 "$smtrace" check dl --expect dl.expect --format json -o report.json
    contains report.json '"kind": "deadlock"'
    ;;
  check_out_of_memory)
    # Memory runs out at some point of the analysis, on the calling thread or
    # on a loading thread, or the loading threads cannot be started: every
    # run ends with a report (exit 0 or 1) or "smtrace: error:" and exit 2,
    # never with std::terminate (a signal). Address-space limits of 30 to
    # 90 MB in 1 MB steps over a synthetic halo trace (8 ranks x 20000
    # events): the low ones fail, the high ones finish; near 62 MB the
    # second loading thread starts and its allocations fail (before the
    # worker pool kept workers' exceptions, that run ended in SIGABRT).
    # MALLOC_ARENA_MAX=1: without it glibc cannot reserve a second thread's
    # arena under the limit and falls back to one mmap per allocation (4 s a run).
    if [ -n "${SMTRACE_SANITIZED:-}" ]; then echo "check_test.sh: $case_name: skipped (ulimit -v under a sanitizer)"; exit 0; fi
    expect 0 "$smtrace" synth halo --ranks 8 --events 20000 -o halo
    failed=0 finished=0
    # Below the limit at which the program starts at all, the loader or a
    # library's static initializer fails (libprotobuf registers its
    # descriptors before main: std::terminate there is not ours to catch).
    # Where that is depends on the size of the binary and its libraries: find
    # it with `smtrace --version` (which then exits 0, or 2 out of memory).
    start=30
    while [ "$start" -lt 90 ]; do
      ( ulimit -v $((start * 1024)); MALLOC_ARENA_MAX=1 exec "$smtrace" --version ) >out.txt 2>err.txt
      case $? in 0|2) break ;; esac
      start=$((start + 1))
    done
    for mb in $(seq "$start" 90); do
      ( ulimit -v $((mb * 1024)); MALLOC_ARENA_MAX=1 exec "$smtrace" check halo --smt-timeout 0 ) >out.txt 2>err.txt
      rc=$?
      case $rc in
        0|1) finished=$((finished + 1)) ;;
        2) contains err.txt "^smtrace: error: " ; failed=$((failed + 1)) ;;
        127) contains err.txt "error while loading shared libraries" ;;  # too little to start
        *) cat err.txt; fail "check under ulimit -v ${mb}M: exit $rc" ;;
      esac
    done
    echo "out of memory: $failed runs ended with an error, $finished finished"
    [ "$failed" -gt 0 ] || fail "no run ran out of memory: lower the limits"
    [ "$finished" -gt 0 ] || fail "no run finished: raise the limits"
    ;;
  check_threads)
    # Threads of one rank told apart (thread_sync, issue 15): thread 1 gets
    # from rank 1 into a buffer that thread 0 reads with no synchronization
    # between them (found, both threads named); the fixed twin joins thread
    # 1 before the read (clean); the buggy trace with thread_sync 0 keeps
    # one program order per rank, as traces written before thread events.
    "$smtrace" import-json "$data/thread_get.json" -o tg >/dev/null 2>&1 || fail "import thread_get.json"
    "$smtrace" import-json "$data/thread_get_fixed.json" -o tgf >/dev/null 2>&1 || fail "import thread_get_fixed.json"
    expect 1 "$smtrace" check tg --quiet
    contains out.txt "thread_get.c:31: error: data race on rank 0's memory at 0x9000 (4 bytes): a load on thread 0 (main) of rank 0 and MPI_Get on thread 1 of rank 0 (writing its result buffer) are not ordered \[rma-race\]"
    contains out.txt "thread 0 (main) and thread 1 of rank 0: no thread synchronization or MPI call orders them"
    contains out.txt "^SUMMARY: 1 error, 0 warnings"
    expect 0 "$smtrace" check tgf --quiet
    contains out.txt "^SUMMARY: 0 errors, 0 warnings"
    sed 's/"threadSync": 1/"threadSync": 0/' "$data/thread_get.json" >one_order.json
    "$smtrace" import-json one_order.json -o tg0 >/dev/null 2>&1 || fail "import one_order.json"
    expect 0 "$smtrace" check tg0 --quiet
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "check_test.sh: $case_name: ok"
