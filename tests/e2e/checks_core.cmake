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
