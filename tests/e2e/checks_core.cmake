# deadlock and unmatched-message: bug programs and their fixed twins.
smtrace_check_test(deadlock_recv_first hang 2 40 --expect-fail --kill-after 6 --finds deadlock)
smtrace_check_test(deadlock_recv_first_fixed hang 2 30 --clean ARGS fixed)
smtrace_check_test(deadlock_wildcard deadlock_wildcard 3 40 --expect-fail --kill-after 6 --finds deadlock)
smtrace_check_test(deadlock_wildcard_fixed deadlock_wildcard 3 30 --clean ARGS fixed)
smtrace_check_test(unmatched unmatched 2 30 --finds unmatched-message)
smtrace_check_test(unmatched_fixed unmatched 2 30 --clean ARGS fixed)
# A ready-mode send whose receive is not posted before it (MPI-3.1 3.4).
smtrace_check_test(ready_send ready_send 2 30 --finds unmatched-message
  --report-has "may start before its receive is posted")
smtrace_check_test(ready_send_fixed ready_send 2 30 --clean ARGS fixed)

# MPI calls before MPI_Init and after MPI_Finalize: the tracer writes the
# call before MPI_Init as a trace of its own and the one after MPI_Finalize
# after the trace's end (Open MPI aborts the process at either); the fixed
# twin makes only the calls MPI-3.1 section 8.7 allows then.
smtrace_e2e_program(misplaced misplaced.c)
smtrace_check_test(misplaced_before_init misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "rank 1 called MPI_Barrier before MPI_Init" ARGS before_init)
smtrace_check_test(misplaced_rank_before_init misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "rank 0 called MPI_Comm_rank before MPI_Init" ARGS rank_before_init)
smtrace_check_test(after_finalize_barrier misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "ranks 0 and 1 called MPI_Barrier after MPI_Finalize" ARGS barrier)
smtrace_check_test(after_finalize_send misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "rank 0 called MPI_Send after MPI_Finalize" --lacks unmatched-message ARGS send)
smtrace_check_test(after_finalize_twice misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "called MPI_Finalize after MPI_Finalize" ARGS twice)
smtrace_check_test(misplaced_init_twice misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "called MPI_Init a second time" ARGS init_twice)
smtrace_check_test(misplaced_init_after misplaced 2 40 --expect-fail --kill-after 20 --finds abnormal-termination
                   --report-has "ranks 0 and 1 called MPI_Init after MPI_Finalize" ARGS init_after)
smtrace_check_test(misplaced_fixed misplaced 2 40 --clean ARGS fixed)
