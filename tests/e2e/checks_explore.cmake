# `smtrace explore` (cli/explore.cpp): record, prove the other matches of
# each wildcard receive, re-run with each forced, and compare (docs/cli.md).
# Each case checks explore's JSON report (explore_case.sh); each bug has a
# twin whose races explore reports as info at most.
foreach(program explore_order explore_diverge)
  smtrace_e2e_program(${program} ${program}.c)
endforeach()
# race_deadlock is checks_smt.cmake's program, ssend_ack checks_false_alarms.cmake's
# (a generator expression below names it whichever file is read first).
set(EXPLORE_RUN ${CMAKE_CURRENT_SOURCE_DIR}/explore_case.sh --smtrace $<TARGET_FILE:smtrace_cli>)
# smtrace_explore_test(NAME PROGRAM NP SECONDS [explore_case.sh options...] [ARGS program arguments...])
function(smtrace_explore_test name program np seconds)
  cmake_parse_arguments(PARSE_ARGV 4 E2E "" "" "ARGS")
  add_test(NAME explore.${name}
    COMMAND ${EXPLORE_RUN} --np ${np} ${E2E_UNPARSED_ARGUMENTS} -- $<TARGET_FILE:e2e_${program}> ${E2E_ARGS})
  set_tests_properties(explore.${name} PROPERTIES LABELS explore TIMEOUT ${seconds} PROCESSORS ${np})
endfunction()

# The output depends on the match (12 or 21): both races are errors,
# confirmed by re-execution with another output.
smtrace_explore_test(order explore_order 3 60 --exit 1
  --has "\"result\": \"output-differs\"" --has "confirmed by re-execution" --has "\"severity\": \"error\""
  --lacks "\"result\": \"(deadlock|crash|abort|not-reached)\"")
# The same with a polling loop (MPI_Iprobe from any source, then a receive
# from the source it saw): every poll of the loop is forced.
smtrace_explore_test(iprobe explore_order 3 60 --exit 1
  --has "\"result\": \"output-differs\"" --has "wildcard probe can take the message of"
  --lacks "\"result\": \"(deadlock|crash|abort|not-reached)\"" ARGS iprobe)
# The same with matched probes (MPI_Mprobe from any source, then MPI_Mrecv):
# the tracer forces the probe, and numbers it among the wildcard receives as
# explore does (trace_format/force.hpp).
smtrace_explore_test(mprobe explore_order 3 60 --exit 1
  --has "\"result\": \"output-differs\"" --has "confirmed by re-execution"
  --lacks "\"result\": \"(deadlock|crash|abort|not-reached|diverged)\"" ARGS mprobe)
# Its twin prints the sum: the races stay, every run behaves the same: info.
smtrace_explore_test(order_fixed explore_order 3 60 --exit 0
  --has "\"result\": \"same\"" --has "\"severity\": \"info\"" --has "behaved the same"
  --lacks "\"severity\": \"(error|warning)\"" --lacks "\"confirmed\": true" ARGS fixed)
# The other match makes rank 0 crash (SIGSEGV) or call MPI_Abort; the
# second receive's alternative needs the first's other match too, so its run
# stops before reaching it (not-reached).
smtrace_explore_test(crash explore_order 3 60 --exit 1
  --has "\"result\": \"crash\"" --has "then the program crashes \\(confirmed by re-execution\\)"
  --has "rank 0 was killed by SIGSEGV" --has "\"result\": \"not-reached\""
  --lacks "\"result\": \"(deadlock|abort)\"" ARGS crash)
smtrace_explore_test(abort explore_order 3 60 --exit 1
  --has "\"result\": \"abort\"" --has "then the program calls MPI_Abort \\(confirmed by re-execution\\)"
  --lacks "\"result\": \"(deadlock|crash)\"" ARGS abort)
# A wildcard whose other match deadlocks (then the named receive from rank 1
# never matches): the forced run hangs and is stopped, a confirmed error.
smtrace_explore_test(deadlock race_deadlock 3 60 --exit 1 --explore-args "--timeout 4"
  --has "\"result\": \"deadlock\"" --has "then the program deadlocks \\(confirmed by re-execution\\)"
  --has "\"timed_out\": true")
# Its twin names the sender: no wildcard, nothing to run, clean.
smtrace_explore_test(deadlock_fixed race_deadlock 3 60 --exit 0
  --has "\"runs\": 0" --lacks "\"kind\"" ARGS fixed)
# A master that answers whoever asked first: the forced run takes another
# path (its sends go to the other rank first) with the same result: diverged,
# not a crash nor a deadlock; the race (an error for prove, whose witness
# repeats the recorded calls) is info.
smtrace_explore_test(diverge explore_diverge 3 60 --exit 0
  --has "\"result\": \"diverged\"" --has "took another path after the forced match"
  --has "\"severity\": \"info\"" --lacks "\"severity\": \"error\""
  --lacks "\"result\": \"(deadlock|crash|abort|not-reached)\"")
# A server that answers status.MPI_SOURCE: check and prove cannot tell it
# from its twin that answers fixed ranks (the same trace; message-race: a
# call that reuses what a changed status gave). Re-executed with the other
# match forced, the twin deadlocks (a confirmed error) and the server takes
# another path with the same result (diverged, info).
smtrace_explore_test(ssend_ack_bug ssend_ack 3 60 --exit 1 --explore-args "--timeout 4"
  --has "\"result\": \"deadlock\"" --has "then the program deadlocks \\(confirmed by re-execution\\)" ARGS bug)
smtrace_explore_test(ssend_ack ssend_ack 3 60 --exit 0 --explore-args "--timeout 4"
  --has "\"result\": \"diverged\"" --has "\"severity\": \"info\""
  --lacks "\"severity\": \"(error|warning)\"")
