# Hybrid MPI + threads (issue 15): thread-level, each bug program with its
# fixed twin.
smtrace_e2e_program(thread_level thread_level.c)
target_link_libraries(e2e_thread_level PRIVATE Threads::Threads)
smtrace_check_test(thread_level_funneled thread_level 2 30 --finds thread-level ARGS funneled)
smtrace_check_test(thread_level_funneled_fixed thread_level 2 30 --clean ARGS funneled_fixed)
smtrace_check_test(thread_level_serialized thread_level 2 30 --finds thread-level ARGS serialized)
smtrace_check_test(thread_level_serialized_fixed thread_level 2 30 --clean ARGS serialized_fixed)
# The same rules judged on happens-before of the rank's threads (calls apart
# in time that no thread synchronization orders are found; mbi38b).
smtrace_e2e_program(thread_order thread_order.c)
target_link_libraries(e2e_thread_order PRIVATE Threads::Threads)
smtrace_check_test(thread_order_serialized thread_order 2 30 --finds thread-level ARGS serialized)
smtrace_check_test(thread_order_serialized_fixed thread_order 2 30 --clean ARGS serialized_fixed)
smtrace_check_test(thread_order_collective thread_order 2 30 --finds thread-level ARGS collective)
smtrace_check_test(thread_order_collective_fixed thread_order 2 30 --clean ARGS collective_fixed)
# Receives (or sends) of one channel that two unordered threads post can
# match in either order (MPI-3.1 section 3.5): found where the other order
# truncates a message.
smtrace_e2e_program(thread_crossed thread_crossed.c)
target_link_libraries(e2e_thread_crossed PRIVATE Threads::Threads)
smtrace_check_test(thread_crossed_recv thread_crossed 2 30 --finds thread-level ARGS recv)
smtrace_check_test(thread_crossed_recv_fixed thread_crossed 2 30 --clean ARGS recv_fixed)
smtrace_check_test(thread_crossed_send thread_crossed 2 30 --finds thread-level ARGS send)
smtrace_check_test(thread_crossed_send_fixed thread_crossed 2 30 --clean ARGS send_fixed)
smtrace_check_test(thread_crossed_same thread_crossed 2 30 --clean ARGS same)

# MPI_THREAD_MULTIPLE from OpenMP threads (no load/store capture): a
# deadlock under zero buffering needs every thread of a blocked rank to
# block, where the model takes a rank's calls in the one order they were
# written (smt_encoder/prove.cpp, first_escape). The fixed twin's trace
# has a deadlock of that one order only.
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
  smtrace_e2e_program(omp_comms omp_comms.c)
  target_link_libraries(e2e_omp_comms PRIVATE OpenMP::OpenMP_C)
  smtrace_check_test(omp_comms omp_comms 2 40 --finds potential-deadlock)
  smtrace_check_test(omp_comms_fixed omp_comms 2 40 --clean ARGS fixed)
  smtrace_check_test(omp_comms_np4 omp_comms 4 60 --finds potential-deadlock)
  smtrace_check_test(omp_comms_np4_fixed omp_comms 4 60 --clean ARGS fixed)
  # Blocking calls of two threads on one buffer (local-concurrency: a
  # blocking call uses its buffers from its call to its return).
  smtrace_e2e_program(omp_recv_shared omp_recv_shared.c)
  target_link_libraries(e2e_omp_recv_shared PRIVATE OpenMP::OpenMP_C)
  smtrace_check_test(omp_recv_shared omp_recv_shared 3 40 --finds local-concurrency
    --report-has "thread 1 is inside MPI_Recv and thread 0 \\(main\\) of rank 0 touches the buffer|thread 0 \\(main\\) is inside MPI_Recv and thread 1 of rank 0 touches the buffer")
  smtrace_check_test(omp_recv_shared_fixed omp_recv_shared 3 40 --clean ARGS fixed)
  # A thread sends what unblocks another rank after the written order put
  # its other thread's receive that waits for it (fixed: clean); one thread
  # doing both hangs (deadlock).
  smtrace_e2e_program(omp_relay omp_relay.c)
  target_link_libraries(e2e_omp_relay PRIVATE OpenMP::OpenMP_C)
  smtrace_check_test(omp_relay omp_relay 3 40 --expect-fail --kill-after 6 --finds deadlock)
  smtrace_check_test(omp_relay_fixed omp_relay 3 40 --clean ARGS fixed)
  set_tests_properties(check.omp_comms check.omp_comms_fixed check.omp_comms_np4 check.omp_comms_np4_fixed
                       check.omp_recv_shared check.omp_recv_shared_fixed check.omp_relay check.omp_relay_fixed
                       PROPERTIES ENVIRONMENT OMP_WAIT_POLICY=passive)
endif()

# Thread synchronization recorded by the tracer (tracer/threads.cpp,
# gomp.cpp, ompt.cpp) and the races between threads of a rank: programs
# built with smtrace-cc (load/store capture), each race with its fixed
# twins. The rma-race findings need the analyzer's thread edges.
if(NOT COMMAND smtrace_ls_check_test)
  return()
endif()
# pthreads (also with clang where installed): a store by one thread racing
# a put another thread's receive is ordered after.
smtrace_ls_check_test(threads_rma threads_rma 2 40 --finds rma-race
  --dump-has "thread=2 smtrace_store\\(buf=0x[0-9a-f]+, count=16"
  --dump-has "pthread_join\\(peer=2\\)")
smtrace_ls_check_test(threads_rma_fixed threads_rma 2 40 --clean
  --dump-has "thread=2 pthread_mutex_lock\\(buf=0x[0-9a-f]+\\)" ARGS fixed)
smtrace_ls_check_test(threads_rma_fixed_join threads_rma 2 40 --clean ARGS fixed_join)

# OpenMP: a worker's store into window memory during an epoch. GCC's
# libgomp (the MPI wrapper's compiler) and LLVM's libomp (clang, where it
# and libomp are installed: check.NAME_clang).
set(smtrace_omp_clang NONE)
if(SMTRACE_E2E_CLANG)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/omp_probe.c "#include <omp.h>\nint main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
  execute_process(COMMAND ${SMTRACE_E2E_CLANG} -fopenmp ${CMAKE_CURRENT_BINARY_DIR}/omp_probe.c
                          -o ${CMAKE_CURRENT_BINARY_DIR}/omp_probe
                  RESULT_VARIABLE smtrace_omp_probe OUTPUT_QUIET ERROR_QUIET)
  if(smtrace_omp_probe EQUAL 0)
    set(smtrace_omp_clang ${SMTRACE_E2E_CLANG})
  else()
    message(STATUS "smtrace: e2e OpenMP cases with clang/libomp skipped: clang -fopenmp cannot build (install libomp-dev)")
  endif()
endif()
# OMP_WAIT_POLICY=passive: idle workers sleep (2 ranks x 4 threads on 2 cores).
function(smtrace_omp_check_test name program np seconds)
  smtrace_ls_check_test(${name} ${program} ${np} ${seconds} ${ARGN}
    CFLAGS -fopenmp CLANG ${smtrace_omp_clang} ENV OMP_WAIT_POLICY=passive)
endfunction()
smtrace_omp_check_test(omp_rma omp_rma 2 40 --finds rma-race
  --dump-has "thread=1 smtrace_store\\(buf=0x[0-9a-f]+, count=16"
  --dump-has "thread=1 omp_implicit_task_end\\(buf=0x1\\)")
smtrace_omp_check_test(omp_rma_fixed omp_rma 2 40 --clean ARGS fixed)
smtrace_omp_check_test(omp_rma_fixed_before omp_rma 2 40 --clean ARGS fixed_before)
