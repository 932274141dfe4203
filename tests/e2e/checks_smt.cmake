# The SMT checks (smt_encoder/): message-race and potential-deadlock, the
# cases a user tries first, each with its fixed twin. `smtrace check` runs
# both within its SMT budget; `smtrace prove` (mode prove) also reports the
# harmless races as info.
foreach(program race_deadlock race_sum race_truncate send_first coll_sync send_order)
  smtrace_e2e_program(${program} ${program}.c)
endforeach()
if(NOT TARGET smtrace::smt OR NOT EXISTS ${PROJECT_SOURCE_DIR}/cli/prove.cpp)
  message(STATUS "smtrace e2e: no SMT backend (smtrace::smt, cli/prove.cpp); SMT check cases not registered")
  return()
endif()
# A wildcard receive whose other match deadlocks: rank 0 receives from
# MPI_ANY_SOURCE, then from rank 1.
smtrace_check_test(race_deadlock race_deadlock 3 40 --finds message-race)
smtrace_check_test(race_deadlock_fixed race_deadlock 3 40 --clean ARGS fixed)
# A wildcard receive whose other match does not fit its buffer: truncated,
# or of another type signature.
smtrace_check_test(race_truncate race_truncate 3 40 --finds message-race --report-has "does not fit its buffer")
smtrace_check_test(race_truncate_type race_truncate 3 40 --finds message-race
  --report-has "has another type signature than its buffer" ARGS type)
smtrace_check_test(race_truncate_fixed race_truncate 3 40 --clean ARGS fixed)
# A harmless race (the order of a sum): nothing for check, info for prove.
smtrace_check_test(race_sum race_sum 3 40 --clean)
smtrace_check_test(race_sum_prove race_sum 3 40 --mode prove --finds message-race --no-errors)
smtrace_check_test(race_sum_fixed race_sum 3 40 --mode prove --clean ARGS fixed)
# Both ranks send first: completes only thanks to MPI's buffering.
smtrace_check_test(send_first send_first 2 40 --finds potential-deadlock)
smtrace_check_test(send_first_fixed send_first 2 40 --clean ARGS fixed)
smtrace_check_test(send_first_sendrecv send_first 2 40 --clean ARGS sendrecv)
# A collective that may synchronize: rank 0's MPI_Bcast (root) then MPI_Send,
# rank 1's MPI_Recv then MPI_Bcast. Completes in Open MPI; with every
# collective synchronizing (zero buffering), both block.
smtrace_check_test(coll_sync coll_sync 2 40 --finds potential-deadlock)
smtrace_check_test(coll_sync_fixed coll_sync 2 40 --clean ARGS fixed)
# A blocking send before what its receiver first waits for (send_order):
# a probe for the tag sent after it, or a barrier the receiver enters first.
# The runs complete only because MPI buffered the send (MPI-4.0 3.5: unsafe):
# no false alarm, whatever the probe's or the wildcard's match. Fixed:
# MPI_Isend, completed after.
smtrace_check_test(send_order_probe send_order 2 40 --finds potential-deadlock ARGS probe)
smtrace_check_test(send_order_probe_isend send_order 2 40 --clean ARGS probe isend)
smtrace_check_test(send_order_barrier send_order 3 40 --finds potential-deadlock ARGS barrier)
smtrace_check_test(send_order_barrier_isend send_order 3 40 --clean ARGS barrier isend)
