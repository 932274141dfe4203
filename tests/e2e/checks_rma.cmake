# rma-race: each bug program and its fixed twin (the same program run with
# `fixed`). RMA calls only, or loads and stores through the annotations.
smtrace_check_test(rma_put_put rma_put_put 3 30 --finds rma-race)
smtrace_check_test(rma_put_put_fixed rma_put_put 3 30 --clean ARGS fixed)
smtrace_check_test(rma_lock_store rma_lock_store 2 30 --finds rma-race)
smtrace_check_test(rma_lock_store_fixed rma_lock_store 2 30 --clean ARGS fixed)
target_include_directories(e2e_rma_lock_store PRIVATE ${PROJECT_SOURCE_DIR}/include)
smtrace_check_test(rma_accumulate rma_accumulate 3 30 --finds rma-race)
smtrace_check_test(rma_accumulate_fixed rma_accumulate 3 30 --clean ARGS fixed)
target_include_directories(e2e_rma_accumulate PRIVATE ${PROJECT_SOURCE_DIR}/include)
# A race ordered only through the message a wildcard receive took (predicted
# with the SMT backend, issue 5 item 3d); fixed: the receive names its source.
if(TARGET smtrace::smt)
  smtrace_check_test(rma_wildcard rma_wildcard 3 40 --finds rma-race)
  smtrace_check_test(rma_wildcard_fixed rma_wildcard 3 40 --clean ARGS fixed)
  target_include_directories(e2e_rma_wildcard PRIVATE ${PROJECT_SOURCE_DIR}/include)
endif()
# The tracer's content check of RMA origin buffers (no annotation, no
# smtrace-cc): a Put's and an Accumulate's origin stored into before the
# fence / unlock that completes them; fixed: after the fence and after
# MPI_Win_flush_local, and a Put to MPI_PROC_NULL.
smtrace_check_test(rma_origin_modified rma_origin_modified 2 30 --finds rma-race)
smtrace_check_test(rma_origin_modified_fixed rma_origin_modified 2 30 --clean ARGS fixed)
smtrace_check_test(rma_origin_modified_rput rma_origin_modified 2 30 --finds rma-race ARGS rput)
