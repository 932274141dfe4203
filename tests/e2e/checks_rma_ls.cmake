# rma-race found through load/store capture: C programs compiled by
# smtrace-cc (-fsanitize=thread, linked against libsmtrace_tsan) with no
# annotations; run_case.sh --build compiles each one with the build tree's
# wrapper. Each bug program has a fixed twin (the same program run with
# `fixed`), which must be clean.
#   smtrace_ls_check_test(NAME PROGRAM NP SECONDS [run_case.sh options...] [ARGS ...])
if(NOT TARGET smtrace_tsan)
  return()
endif()
function(smtrace_ls_check_test name program np seconds)
  cmake_parse_arguments(PARSE_ARGV 4 E2E "" "" "ARGS")
  add_test(NAME check.${name}
    COMMAND ${E2E_RUN} --case ${name} --np ${np} --mode check ${E2E_TOOLS} ${E2E_UNPARSED_ARGUMENTS}
            --build $<TARGET_FILE_DIR:smtrace_tsan>/smtrace-cc
            -- ${CMAKE_CURRENT_SOURCE_DIR}/${program}.c ${E2E_ARGS})
  set_tests_properties(check.${name} PROPERTIES LABELS "check;loadstore" TIMEOUT ${seconds} PROCESSORS ${np})
endfunction()

# The wrapper and the runtime without MPI jobs (links, exports, -c and
# multi-source commands, a run without the tracer).
add_test(NAME loadstore.smtrace_cc
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/smtrace_cc_test.sh $<TARGET_FILE_DIR:smtrace_tsan>/smtrace-cc
          $<TARGET_FILE:smtrace_tsan>)
set_tests_properties(loadstore.smtrace_cc PROPERTIES LABELS loadstore TIMEOUT 60)

# Origin side: the buffer of a pending Put (stores, memcpy) or Get (loads)
# touched before MPI_Win_flush. The trace must hold the loop as one strided
# run, not one event per element.
smtrace_ls_check_test(rma_ls_origin rma_ls_origin 2 40 --finds rma-race
  --dump-has "smtrace_store\\(buf=0x[0-9a-f]+, count=64, size=4, stride=4\\)")
smtrace_ls_check_test(rma_ls_origin_memcpy rma_ls_origin 2 40 --finds rma-race ARGS memcpy)
smtrace_ls_check_test(rma_ls_origin_get rma_ls_origin 2 40 --finds rma-race ARGS get)
smtrace_ls_check_test(rma_ls_origin_fixed rma_ls_origin 2 40 --clean ARGS fixed)
smtrace_ls_check_test(rma_ls_origin_memcpy_fixed rma_ls_origin 2 40 --clean ARGS memcpy fixed)
smtrace_ls_check_test(rma_ls_origin_get_fixed rma_ls_origin 2 40 --clean ARGS get fixed)
# Target side: stores into window memory in the fence epoch of a remote Put.
smtrace_ls_check_test(rma_ls_fence rma_ls_fence 2 40 --finds rma-race)
smtrace_ls_check_test(rma_ls_fence_fixed rma_ls_fence 2 40 --clean ARGS fixed)
# Target side: a load of window memory racing a remote Put under a lock.
smtrace_ls_check_test(rma_ls_load rma_ls_load 2 40 --finds rma-race)
smtrace_ls_check_test(rma_ls_load_fixed rma_ls_load 2 40 --clean ARGS fixed)
