# Correct programs that once drew false alarms (issue 14 item 5), each with
# its buggy twin, which must still be found. docs/checks.md gives the rule
# behind each.
# A persistent buffered send is buffered (the SMT model once took MPI_Start
# for a standard send).
if(TARGET smtrace::smt)
  smtrace_check_test(bsend_init bsend_init 2 40 --clean)
  smtrace_check_test(bsend_init_standard bsend_init 2 40 --finds potential-deadlock ARGS standard)
endif()
# A server that answers status.MPI_SOURCE with MPI_Ssend (ssend_ack): the
# trace records the destinations the recorded matches gave, so the deadlock
# they cause under the other match is no claim (message-race: a call that
# reuses what a changed status gave): clean for check, info for prove. Its
# buggy twin answers fixed ranks in the same trace: explore confirms its
# deadlock by re-execution (checks_explore.cmake).
if(TARGET smtrace::smt)
  smtrace_check_test(ssend_ack ssend_ack 3 40 --clean)
  smtrace_check_test(ssend_ack_prove ssend_ack 3 40 --mode prove --finds message-race --no-errors)
endif()
# Accumulates of one origin to one location are ordered (accumulate_ordering).
smtrace_check_test(rma_acc_order rma_acc_order 3 30 --clean)
smtrace_check_test(rma_acc_order_two rma_acc_order 3 30 --finds rma-race ARGS two)
# A lock built from MPI_Compare_and_swap orders the accesses it guards.
smtrace_check_test(rma_cas_lock rma_cas_lock 3 30 --clean)
smtrace_check_test(rma_cas_lock_nolock rma_cas_lock 3 30 --finds rma-race ARGS nolock)
# MPI_Rget's read of the target ends with its MPI_Wait.
smtrace_check_test(rma_rget rma_rget 2 30 --clean)
smtrace_check_test(rma_rget_early rma_rget 2 30 --finds rma-race ARGS early)
# A successful MPI_Win_test ends the exposure epoch.
smtrace_check_test(rma_win_test rma_win_test 2 30 --clean)
smtrace_check_test(rma_win_test_early rma_win_test 2 30 --finds rma-race ARGS early)
# MPI_Request_free on an active send: neither a leak nor, once the reply
# arrived, a buffer still in use.
smtrace_check_test(request_free request_free 2 30 --clean)
smtrace_check_test(request_free_early request_free 2 30 --finds local-concurrency ARGS early)
# Stores before MPI_Win_create and after MPI_Win_free are ordered with the
# window's remote accesses.
smtrace_check_test(rma_win_create rma_win_create 2 30 --clean)
smtrace_check_test(rma_win_create_late rma_win_create 2 30 --finds rma-race ARGS late)
foreach(program rma_rget rma_win_test request_free rma_win_create)
  target_include_directories(e2e_${program} PRIVATE ${PROJECT_SOURCE_DIR}/include)
endforeach()
