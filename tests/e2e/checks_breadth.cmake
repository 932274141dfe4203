# Calls of MPI at full breadth (issue 14): each newly traced family with a
# bug program and its fixed twin.

# Requests: Open MPI hands one handle value to every operation on
# MPI_PROC_NULL; distinct operations keep distinct ids.
smtrace_check_test(halo_proc_null halo_proc_null 3 30 --clean)
smtrace_check_test(halo_proc_null_leak halo_proc_null 3 30 --finds request-leak ARGS leak)
