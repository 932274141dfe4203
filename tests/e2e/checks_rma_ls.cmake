# rma-race found through load/store capture: C programs compiled by
# smtrace-cc (-fsanitize=thread, linked against libsmtrace_tsan) with no
# annotations; run_case.sh --build compiles each one with the build tree's
# wrapper. Each bug program has a fixed twin (the same program run with
# `fixed`), which must be clean. Each case runs with the MPI wrapper's
# default compiler (-fsanitize=thread: SMTRACE_CC_FILTER=0) and, where
# smtrace's GCC plugin is built, with it (check.NAME_filter: inline hull
# tests, tracer/filter/gcc_plugin.cpp); where clang is installed, again with
# Clang (check.NAME_clang: OMPI_CC / MPICH_CC=clang, -fsanitize=thread) and,
# where smtrace's clang pass plugin is built, with it
# (check.NAME_clang_filter, tracer/filter/llvm_pass.cpp): the same
# expectations for all.
#   smtrace_ls_check_test(NAME PROGRAM NP SECONDS [run_case.sh options...]
#                         [CFLAGS "..."] [CLANG PATH|NONE] [ENV "V=X;..."] [ARGS ...])
# CFLAGS: more compiler options; CLANG: the clang of the _clang variant
# (NONE: no such variant); ENV: more environment for both variants.
if(NOT TARGET smtrace_tsan)
  return()
endif()
find_program(SMTRACE_E2E_CLANG clang)
function(smtrace_ls_check_test name program np seconds)
  cmake_parse_arguments(PARSE_ARGV 4 E2E "" "CFLAGS;CLANG" "ARGS;ENV")
  set(clang ${SMTRACE_E2E_CLANG})
  if(DEFINED E2E_CLANG)
    set(clang ${E2E_CLANG})
  endif()
  set(variants ${name})
  if(TARGET smtrace_filter_gcc)
    list(APPEND variants ${name}_filter)
  endif()
  if(clang AND NOT clang STREQUAL "NONE")
    list(APPEND variants ${name}_clang)
    if(TARGET smtrace_filter_llvm)
      list(APPEND variants ${name}_clang_filter)
    endif()
  endif()
  set(cflags)
  if(E2E_CFLAGS)
    set(cflags --cflags "${E2E_CFLAGS}")
  endif()
  foreach(variant IN LISTS variants)
    add_test(NAME check.${variant}
      COMMAND ${E2E_RUN} --case ${variant} --np ${np} --mode check ${E2E_TOOLS} ${E2E_UNPARSED_ARGUMENTS}
              --build $<TARGET_FILE_DIR:smtrace_tsan>/smtrace-cc ${cflags}
              -- ${CMAKE_CURRENT_SOURCE_DIR}/${program}.c ${E2E_ARGS})
    set(env ${E2E_ENV})
    if(variant MATCHES "_clang$")
      list(APPEND env "OMPI_CC=${clang}" "MPICH_CC=${clang}" "SMTRACE_CC_FILTER=0")
    elseif(variant MATCHES "_clang_filter$")
      list(APPEND env "OMPI_CC=${clang}" "MPICH_CC=${clang}")
    elseif(NOT variant MATCHES "_filter$")
      list(APPEND env "SMTRACE_CC_FILTER=0")
    endif()
    set_tests_properties(check.${variant} PROPERTIES LABELS "check;loadstore" TIMEOUT ${seconds} PROCESSORS ${np}
                         ENVIRONMENT "${env}")
  endforeach()
endfunction()

# The wrapper and the runtime without MPI jobs (links, exports, -c and
# multi-source commands, a run without the tracer).
add_test(NAME loadstore.smtrace_cc
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/smtrace_cc_test.sh $<TARGET_FILE_DIR:smtrace_tsan>/smtrace-cc
          $<TARGET_FILE:smtrace_tsan>)
set_tests_properties(loadstore.smtrace_cc PROPERTIES LABELS loadstore TIMEOUT 60)

# smtrace's compiler plugins without MPI jobs: the IR (clang) or assembly
# (GCC) they leave, and a program built with each recording through the
# real runtime (a fake tracer).
find_program(SMTRACE_E2E_CLANGXX NAMES clang++-14 clang++)
if(TARGET smtrace_filter_llvm AND SMTRACE_E2E_CLANGXX)
  add_test(NAME loadstore.filter_pass
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/filter_pass_test.sh ${SMTRACE_E2E_CLANGXX} $<TARGET_FILE:smtrace_filter_llvm>
            $<TARGET_FILE_DIR:smtrace_tsan> ${PROJECT_SOURCE_DIR})
  set_tests_properties(loadstore.filter_pass PROPERTIES LABELS loadstore TIMEOUT 120)
endif()
if(TARGET smtrace_filter_gcc)
  add_test(NAME loadstore.filter_gcc
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/filter_pass_test.sh --gcc ${CMAKE_CXX_COMPILER} $<TARGET_FILE:smtrace_filter_gcc>
            $<TARGET_FILE_DIR:smtrace_tsan> ${PROJECT_SOURCE_DIR})
  set_tests_properties(loadstore.filter_gcc PROPERTIES LABELS loadstore TIMEOUT 120)
endif()

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
# Call stacks from the shadow stack (__tsan_func_entry/exit): the load in
# sum_of, called from main.
smtrace_ls_check_test(rma_ls_load_stack rma_ls_load 2 40 --finds rma-race
  --dump-has "smtrace_load\\(.*\\(sum_of\\) < [^ ]*rma_ls_load.c:[0-9]+ \\(main\\)")
foreach(variant rma_ls_load_stack rma_ls_load_stack_filter rma_ls_load_stack_clang rma_ls_load_stack_clang_filter)
  if(TEST check.${variant})
    set_property(TEST check.${variant} APPEND PROPERTY ENVIRONMENT SMTRACE_STACK_DEPTH=4)
  endif()
endforeach()
# Non-blocking point-to-point buffers (local-concurrency): a store into a
# pending Isend's buffer, a load from a pending Irecv's.
smtrace_ls_check_test(ls_nonblocking ls_nonblocking 2 40 --finds local-concurrency)
smtrace_ls_check_test(ls_nonblocking_fixed ls_nonblocking 2 40 --clean ARGS fixed)
# An active MPI_Isend freed by MPI_Request_free: its buffer stays watched.
smtrace_ls_check_test(ls_nonblocking_freed ls_nonblocking 2 40 --finds local-concurrency
  --report-has "freed by MPI_Request_free" ARGS freed)
smtrace_ls_check_test(ls_nonblocking_freed_fixed ls_nonblocking 2 40 --clean ARGS freed_fixed)
