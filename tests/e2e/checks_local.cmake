# local-concurrency, request-leak and resource-leak: each bug program and
# its fixed twin (the same program run with `fixed`).
smtrace_check_test(isend_reuse isend_reuse 2 30 --finds local-concurrency)
smtrace_check_test(isend_reuse_fixed isend_reuse 2 30 --clean ARGS fixed)
target_include_directories(e2e_isend_reuse PRIVATE ${PROJECT_SOURCE_DIR}/include)
smtrace_check_test(irecv_overlap irecv_overlap 2 30 --finds local-concurrency)
smtrace_check_test(irecv_overlap_fixed irecv_overlap 2 30 --clean ARGS fixed)
smtrace_check_test(request_leak request_leak 2 30 --finds request-leak)
smtrace_check_test(request_leak_fixed request_leak 2 30 --clean ARGS fixed)
# A cancelled receive never completed: one finding (the leak), not also an unmatched receive.
smtrace_check_test(cancel_leak cancel_leak 2 30 --finds request-leak --lacks unmatched-message)
smtrace_check_test(cancel_leak_fixed cancel_leak 2 30 --clean ARGS fixed)
smtrace_check_test(resource_leak resource_leak 2 30 --finds resource-leak
  --report-has "info objects created by MPI_Comm_get_info")
smtrace_check_test(resource_leak_fixed resource_leak 2 30 --clean ARGS fixed)
# The tracer's content check (no annotation, plain mpicc + LD_PRELOAD):
# stores into the input of a pending Isend / started persistent send /
# Ibcast at the root / Iallreduce, and their fixed twins.
smtrace_check_test(send_modified send_modified 2 30 --finds local-concurrency)
smtrace_check_test(send_modified_fixed send_modified 2 30 --clean ARGS fixed)
smtrace_check_test(icoll_modified icoll_modified 2 30 --finds local-concurrency)
smtrace_check_test(icoll_modified_fixed icoll_modified 2 30 --clean ARGS fixed)
