# exchange/ on real runs (tests/e2e/exchange_case.sh): recorded, exported to
# OTF2 (otf2-print reads it) and imported back with the same findings of the
# point-to-point and collective checks; exported for Perfetto (the JSON
# validates); one HTML report rendered in headless Chromium.
if(NOT SMTRACE_HAVE_OTF2 OR NOT TARGET smtrace_cli)
  return()
endif()
# The tests are registered once the directory is processed (the other
# checks_*.cmake files, included in name order, define most programs).
function(smtrace_exchange_test name program np seconds)
  cmake_parse_arguments(PARSE_ARGV 4 X "" "" "ARGS")
  if(NOT TARGET e2e_${program})
    smtrace_e2e_program(${program} ${program}.c)
  endif()
  add_test(NAME exchange.${name}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/exchange_case.sh --case ${name} --np ${np}
            --smtrace $<TARGET_FILE:smtrace_cli> --validator $<TARGET_FILE:smtrace_perfetto_validate>
            ${X_UNPARSED_ARGUMENTS} -- $<TARGET_FILE:e2e_${program}> ${X_ARGS})
  set_tests_properties(exchange.${name} PROPERTIES LABELS e2e TIMEOUT ${seconds} PROCESSORS ${np})
endfunction()
function(smtrace_exchange_tests)
  smtrace_exchange_test(coll_order coll_order 3 90 --finds collective-mismatch
                        --html ${PROJECT_SOURCE_DIR}/tests/cli/chromium_check.sh)
  smtrace_exchange_test(deadlock hang 2 60 --expect-fail --kill-after 6 --finds deadlock)
  smtrace_exchange_test(unmatched unmatched 2 60 --finds unmatched-message)
  smtrace_exchange_test(race_deadlock race_deadlock 3 60 --finds message-race)
  smtrace_exchange_test(coll_misaligned_path coll_misaligned 2 60 --finds collective-misaligned ARGS path)
  set_tests_properties(exchange.coll_misaligned_path PROPERTIES ENVIRONMENT SMTRACE_STACK_DEPTH=4)
  smtrace_exchange_test(persistent persistent 2 60)
  smtrace_exchange_test(p2p_wildcard p2p_wildcard 3 60)
  smtrace_exchange_test(rma_fence rma_fence 3 60)
  smtrace_exchange_test(threads threads 2 60 --no-smt)
  # The OTF2 import reads MPI regions only: the thread family's events
  # (pthread_create, join: recorded under MPI_THREAD_MULTIPLE) would not
  # come back and the event counts would differ. The case is about the MPI
  # events of several threads.
  set_tests_properties(exchange.threads PROPERTIES ENVIRONMENT SMTRACE_THREADS=off)
endfunction()
cmake_language(DEFER CALL smtrace_exchange_tests)
