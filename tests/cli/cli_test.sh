#!/usr/bin/env bash
# CLI tests: run the built `smtrace` and check exit codes and output.
#   cli_test.sh CASE SMTRACE DATA_DIR WORK_DIR [PRELOAD_LIB]
# Each CASE is one CTest test (tests/cli/CMakeLists.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
case_name=$1 smtrace=$2 data=$3 work=$4/$1 preload=${5:-} target=${6:-} dwarf_targets=${7:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1


case $case_name in
  help)
    expect 0 "$smtrace" --help; contains out.txt "Usage: smtrace"; contains out.txt "Exit codes"
    expect 0 "$smtrace" --version; contains out.txt "smtrace "
    for cmd in record explore info dump import-json export import-otf2 symbolize help; do
      expect 0 "$smtrace" "$cmd" --help; contains out.txt "Usage: smtrace $cmd"
      expect 0 "$smtrace" help "$cmd"; contains out.txt "Usage: smtrace $cmd"
    done
    for cmd in record explore info dump import-json export import-otf2 symbolize; do
      "$smtrace" "$cmd" --help | grep -q -i "example" || fail "$cmd --help has no example"
    done
    ;;
  bad_usage)
    expect 2 "$smtrace" --bogus; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" no-such-command; contains err.txt "smtrace: error:"
    expect 2 "$smtrace"; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" info; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" info --format xml "$work"; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" dump --rank x "$work"; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" record; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" help no-such-command; contains err.txt "smtrace: error:"
    ;;
  missing_input)
    expect 2 "$smtrace" info "$work/nonexistent"; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" dump "$work/nonexistent"; contains err.txt "smtrace: error:"
    mkdir empty
    expect 2 "$smtrace" info empty; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" import-json "$work/nonexistent.json" -o t; contains err.txt "smtrace: error:"
    echo '{"ranks": [ {"header": ' > bad.json
    expect 2 "$smtrace" import-json bad.json -o t; contains err.txt "smtrace: error:"
    ;;
  import_info)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    expect 0 "$smtrace" info t --format json
    contains out.txt '"ranks":2,'
    contains out.txt '"events":12,'
    contains out.txt '"complete":true'
    contains out.txt '"MPI_Wait":1'
    contains out.txt '"problems":\[\]'
    expect 0 "$smtrace" info t
    contains out.txt "2 present of 2 expected"
    contains out.txt "complete *yes"
    # An existing non-empty directory is refused without --force.
    expect 2 "$smtrace" import-json "$data/pingpong.json" -o t; contains err.txt "smtrace: error:"
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t --force
    ;;
  dump_text)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    expect 0 "$smtrace" dump t
    contains out.txt "^0:2 .*MPI_Send(dest=1, tag=7, .*count=4, datatype=MPI_INT, comm=WORLD) @ pingpong.c:15 (main)"
    contains out.txt "^1:2 .*MPI_Irecv(source=ANY_SOURCE→0, tag=ANY_TAG→7, .*completed_by=1:4"
    contains out.txt "^1:3 .*MPI_Test(.*×25"
    contains out.txt "^1:4 .*MPI_Wait(requests=\[req#1\], completed=\[0:req#1(source=0, tag=7, count=4)\]"
    contains out.txt "comm#2 = world ranks \[0, 1\]"
    expect 0 "$smtrace" dump t --rank 1
    grep -q "^0:" out.txt && fail "dump --rank 1 shows rank 0"
    expect 2 "$smtrace" dump t --rank 7; contains err.txt "smtrace: error:"
    ;;
  roundtrip)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t1
    expect 0 "$smtrace" dump t1 --format json; mv out.txt a.json
    expect 0 "$smtrace" import-json a.json -o t2
    expect 0 "$smtrace" dump t2 --format json; mv out.txt b.json
    cmp a.json b.json || fail "dump -> import-json -> dump differs (JSON)"
    expect 0 "$smtrace" dump t1; mv out.txt a.txt
    expect 0 "$smtrace" dump t2; mv out.txt b.txt
    diff <(grep -v '^== rank .*(.*rank-' a.txt) <(grep -v '^== rank .*(.*rank-' b.txt) ||
      fail "dump -> import-json -> dump differs (text)"
    # stdin works too
    "$smtrace" import-json - -o t3 < a.json 2>/dev/null || fail "import-json - failed"
    ;;
  truncated)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    size=$(stat -c %s t/rank-1.smt)
    head -c $((size - 9)) t/rank-1.smt > cut && mv cut t/rank-1.smt
    expect 0 "$smtrace" info t --format json
    contains out.txt '"ranks":2,'
    contains out.txt '"problems":\[{'
    contains out.txt 'rank-1.smt'
    expect 0 "$smtrace" info t; contains out.txt "problems while reading"
    expect 0 "$smtrace" dump t; contains err.txt "smtrace: warning:"
    ;;
  garbage)
    expect 0 "$smtrace" import-json "$data/pingpong.json" -o t
    head -c 4096 /dev/urandom > t/rank-1.smt
    expect 0 "$smtrace" info t --format json
    contains out.txt '"problems":\[{'
    contains out.txt '"complete":false'
    ;;
  record)
    [ -n "$preload" ] || fail "no preload library given"
    export SMTRACE_LIB=$preload
    expect 3 "$smtrace" record -o t -- sh -c 'exit 3'; contains err.txt "no trace was written"
    [ -e t ] && fail "record left an empty trace directory"
    expect 137 "$smtrace" record -o t -- sh -c 'kill -KILL $$'; contains err.txt "SIGKILL"
    expect 0 "$smtrace" record -o t -- sh -c 'test "$SMTRACE_DIR" = "$PWD/t" && case "$LD_PRELOAD" in "$SMTRACE_LIB"*) ;; *) exit 1;; esac'
    # Libraries already preloaded come after the tracer, sanitizer runtimes before it.
    # (They need not exist: the shell only prints the list.)
    LD_PRELOAD="/x/libfoo.so /y/libasan.so.8:/z/libclang_rt.tsan-x86_64.so" \
      "$smtrace" record -o t2 -- sh -c 'echo "LD=$LD_PRELOAD"' >out.txt 2>err.txt
    contains out.txt "^LD=/y/libasan.so.8:/z/libclang_rt.tsan-x86_64.so:$SMTRACE_LIB:/x/libfoo.so$"
    expect 0 env LD_PRELOAD=/lib/nonexistent-keep.so "$smtrace" record -o t -- sh -c 'case "$LD_PRELOAD" in *nonexistent-keep.so) ;; *) exit 1;; esac'
    expect 127 "$smtrace" record -o t -- "$work/no-such-program"; contains err.txt "smtrace: error:"
    mkdir busy && touch busy/rank-0.smt
    expect 2 "$smtrace" record -o busy -- true; contains err.txt "smtrace: error:"
    SMTRACE_LIB=$work/none.so expect 2 "$smtrace" record -o t -- true
    ;;
  explore)
    # Usage errors and runs that leave nothing to explore; the MPI cases are
    # tests/e2e/checks_explore.cmake's.
    [ -n "$preload" ] || fail "no preload library given"
    export SMTRACE_LIB=$preload
    expect 2 "$smtrace" explore; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" explore --format xml -- true; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" explore --max-runs x -- true; contains err.txt "smtrace: error:"
    expect 2 "$smtrace" explore --smt-timeout 0 -- true; contains err.txt "smt-timeout"
    expect 2 "$smtrace" explore --bogus -- true; contains err.txt "smtrace explore --help"
    expect 2 "$smtrace" explore -o e -- sh -c 'echo oops >&2; exit 3'
    contains err.txt "wrote no trace"; contains err.txt "oops"; contains err.txt "exit status 3"
    [ -f e/original.stderr ] || fail "explore kept no original.stderr"
    expect 2 "$smtrace" explore -o e -- true; contains err.txt "not empty"
    expect 127 "$smtrace" explore -f -o e -- "$work/no-such-program"
    # The command must not see a SMTRACE_FORCE of the user's: the original run is not forced.
    SMTRACE_FORCE=0:1=1 expect 2 "$smtrace" explore -f -o e -- sh -c 'env >&2; exit 0'
    lacks e/original.stderr "SMTRACE_FORCE"
    contains e/original.stderr "SMTRACE_DIR=$work/e/original"
    ;;
  symbolize)
    [ -n "$target" ] || fail "no symbolize target given"
    address=$(nm "$target" | awk '$3 == "smtrace_cli_test_target" { print $1 }')
    [ -n "$address" ] || fail "no symbol smtrace_cli_test_target in $target"
    # A return address 4 bytes into the function; ET_EXEC modules are
    # looked up by absolute address (base + offset), ET_DYN ones by offset.
    base=93824992231424
    if readelf -h "$target" | grep -q "EXEC"; then offset=$((0x$address + 4 - base)); else offset=$((0x$address + 4)); fi
    sed -e "s|@MODULE@|$target|" -e "s|@OFFSET@|$offset|" -e "s|@BASE@|$base|" "$data/symbolize.json.in" > s.json
    expect 0 "$smtrace" import-json s.json -o t
    expect 0 "$smtrace" symbolize t
    [ -f t/symbols.smt ] || fail "no symbols.smt written"
    contains err.txt "libgone.so"
    expect 0 "$smtrace" dump t
    contains out.txt "^0:0 .*MPI_Init() @ .*symbolize_target.c:[0-9]* (smtrace_cli_test_target)"
    contains out.txt "^0:1 .*PENDING (never returned) MPI_Barrier(comm=WORLD) @ kept_from_tracer (libgone.so+0x1000)"
    expect 0 "$smtrace" info t
    contains out.txt "stopped inside MPI_Barrier (0:1) at kept_from_tracer"
    ;;
  symbolize_dwarf)
    # Exact file:line of a call inside a function defined in a header, with
    # DWARF 4 and 5 (binutils' addr2line 2.40 names the .c file for DWARF 5),
    # inlined and not; and of a call in main.
    [ -n "$dwarf_targets" ] || fail "no symbolize_dwarf targets given"
    header_line=$(grep -n 'site:header' "$here/symbolize_header.h" | cut -d: -f1)
    main_line=$(grep -n 'site:main' "$here/symbolize_dwarf.c" | cut -d: -f1)
    IFS=: read -r -a programs <<< "$dwarf_targets"
    [ ${#programs[@]} -eq 4 ] || fail "expected 4 symbolize_dwarf programs, got ${#programs[@]}"
    # clang writes no .debug_aranges (libdwfl alone then finds no unit): its DWARF 5 too, where clang is.
    clang=$(command -v clang || command -v clang-14 || true)
    if [ -n "$clang" ]; then
      "$clang" -gdwarf-5 -O0 -o clang_dwarf5 "$here/symbolize_dwarf.c" "$here/symbolize_callee.c" ||
        fail "clang could not build the symbolize_dwarf program"
      programs+=("$work/clang_dwarf5")
    fi
    for program in "${programs[@]}"; do
      name=$(basename "$program")
      "$program" > sites.txt || fail "$name did not run"
      [ "$(wc -l < sites.txt)" -eq 2 ] || { cat sites.txt; fail "$name printed no two sites"; }
      read -r _ module base header_offset _ < <(sed -n 1p sites.txt)
      read -r _ _ _ main_offset _ < <(sed -n 2p sites.txt)
      cat > s.json <<JSON
{"manifest": {"formatVersion": 1, "worldSize": 1, "rankFilePattern": "rank-{rank}.smt"},
 "ranks": [{"header": {"formatVersion": 1, "rank": 0, "worldSize": 1},
   "events": [{"seq": "0", "call": "SEND", "tStart": "10", "duration": "5", "site": 1, "peer": 0, "tag": 0},
              {"seq": "1", "call": "SEND", "tStart": "20", "duration": "5", "site": 2, "peer": 0, "tag": 0}],
   "sites": [{"id": 1, "module": 1, "offset": "$header_offset"}, {"id": 2, "module": 1, "offset": "$main_offset"}],
   "modules": [{"id": 1, "path": "$module", "base": "$base"}],
   "end": {"kind": "FINALIZED"}}]}
JSON
      rm -rf t
      expect 0 "$smtrace" import-json s.json -o t
      expect 0 "$smtrace" symbolize t --quiet
      [ ! -s err.txt ] || { cat err.txt; fail "$name: symbolize --quiet printed something"; }
      expect 0 "$smtrace" dump t
      contains out.txt "^0:0 .*@ /.*/symbolize_header.h:$header_line (smtrace_cli_test_in_header)\$"
      contains out.txt "^0:1 .*@ /.*/symbolize_dwarf.c:$main_line (main)\$"
    done
    ;;
  synth)
    expect 0 "$smtrace" synth --help; contains out.txt "Usage: smtrace synth"
    expect 0 "$smtrace" synth halo --ranks 4 --events 5k -o t
    contains err.txt "wrote 4 rank(s)"
    expect 0 "$smtrace" info t --format json
    contains out.txt '"ranks":4,'
    contains out.txt '"complete":true'
    contains out.txt '"problems":\[\]'
    contains out.txt '"MPI_Waitall":'
    contains out.txt '"MPI_Allreduce":'
    expect 0 "$smtrace" dump t --rank 1
    contains out.txt "^1:1 .*MPI_Irecv(source=0, .*@ halo.c:42 (exchange_halo)"
    contains out.txt "MPI_Waitall(requests=.*completed=.*(source=.*@ halo.c:51"
    expect 2 "$smtrace" synth halo -o t; contains err.txt "smtrace: error:"
    expect 0 "$smtrace" synth pingpong --ranks 3 --events 2k -o t --force
    expect 0 "$smtrace" info t; contains out.txt "3 present of 3 expected"
    expect 0 "$smtrace" synth wildcard --ranks 3 --events 2k -o w
    expect 0 "$smtrace" info w; contains out.txt "complete *yes"
    expect 2 "$smtrace" synth nope -o x; contains err.txt "no generator named 'nope'"
    expect 2 "$smtrace" synth halo --events 12q -o x; contains err.txt "smtrace: error: --events"
    expect 2 "$smtrace" synth halo --bug nope -o x; contains err.txt "smtrace: error: --bug"
    expect 2 "$smtrace" synth pingpong --bug deadlock -o x; contains err.txt "only halo"
    # The planted bugs are found by `smtrace check`.
    expect 0 "$smtrace" synth halo --ranks 4 --events 2k --bug deadlock -o dl
    expect 0 "$smtrace" info dl; contains out.txt "complete *no"
    expect 1 "$smtrace" check dl --format json --quiet; contains out.txt '"kind": "deadlock"'
    expect 0 "$smtrace" synth halo --ranks 4 --events 2k --bug collective-mismatch -o cm
    expect 1 "$smtrace" check cm --format json --quiet; contains out.txt '"kind": "collective-mismatch"'
    expect 0 "$smtrace" check w --quiet; contains out.txt "SUMMARY: 0 errors"
    # The match-pair paper's benchmark programs.
    expect 0 "$smtrace" synth senders --k 5 -o s5
    contains err.txt "wrote 6 rank(s), 22 events"
    expect 0 "$smtrace" dump s5 --rank 0
    contains out.txt "^0:5 .*MPI_Recv(source=ANY_SOURCE→[1-4], tag=0, .*@ senders.c:21 (receiver)"
    expect 0 "$smtrace" info s5 --format json; contains out.txt '"command":"smtrace synth senders --k 5 --seed 1"'
    (mkdir d && cd d && expect 0 "$smtrace" synth senders) || exit 1
    expect 0 "$smtrace" info d/senders; contains out.txt "51 present of 51 expected"
    expect 0 "$smtrace" synth leader --n 6 -o le; contains err.txt "wrote 6 rank(s)"
    expect 0 "$smtrace" synth router --n 5 --iterations 3 -o ro; contains err.txt "wrote 5 rank(s), 85 events (3 iterations"
    expect 0 "$smtrace" synth fig6 --iterations 2 -o f6; contains err.txt "wrote 3 rank(s), 38 events (2 iterations"
    expect 0 "$smtrace" dump f6 --rank 1
    contains out.txt "^1:3 .*MPI_Irecv(source=ANY_SOURCE→0, .*@ fig6.c:2 (task1)"
    expect 0 "$smtrace" synth fig6 -o f1
    # Valid, complete, and correct programs (fig6 with 2 iterations or more
    # relies on buffering; see docs/cli.md).
    for t in s5 le ro f1; do
      expect 0 "$smtrace" info $t; contains out.txt "complete *yes"
      expect 0 "$smtrace" check $t --quiet; contains out.txt "SUMMARY: 0 errors, 0 warnings"
    done
    expect 2 "$smtrace" synth senders --n 4 -o x; contains err.txt "smtrace: error: --n is for leader and router"
    expect 2 "$smtrace" synth leader --k 4 -o x; contains err.txt "smtrace: error: --k is for senders"
    expect 2 "$smtrace" synth senders --k 4 --ranks 3 -o x; contains err.txt "disagree"
    expect 2 "$smtrace" synth leader --iterations 2 -o x; contains err.txt "leader has no loop"
    expect 2 "$smtrace" synth fig6 --events 1k -o x; contains err.txt "as long as its program"
    expect 2 "$smtrace" synth fig6 --ranks 4 -o x; contains err.txt "ranks must be 3"
    expect 2 "$smtrace" synth router --n 2 -o x; contains err.txt "ranks must be 3.."
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: $case_name"
