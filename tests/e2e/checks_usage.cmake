# invalid-argument, type-mismatch, epoch-lifecycle and abnormal-termination
# (issue 14 item 4): each bug program and its fixed twin (the same program
# run with `fixed`). The bug programs set MPI_ERRORS_RETURN to survive the
# calls MPI rejects: the checks read the recorded arguments either way.
smtrace_check_test(invalid_arg invalid_arg 2 30 --finds invalid-argument)
smtrace_check_test(invalid_arg_fixed invalid_arg 2 30 --clean ARGS fixed)
smtrace_check_test(type_mismatch type_mismatch 2 30 --finds type-mismatch)
smtrace_check_test(type_mismatch_fixed type_mismatch 2 30 --clean ARGS fixed)
smtrace_check_test(rma_epoch rma_epoch 2 30 --finds epoch-lifecycle)
smtrace_check_test(rma_epoch_fixed rma_epoch 2 30 --clean ARGS fixed)
# An access epoch opened while a fence epoch's RMA call is pending (mbi38b).
smtrace_check_test(rma_fence_mix rma_fence_mix 2 30 --finds epoch-lifecycle)
smtrace_check_test(rma_fence_mix_fixed rma_fence_mix 2 30 --clean ARGS fixed)
# A run that ended abnormally is never clean.
smtrace_check_test(abort abort 3 40 --expect-fail --kill-after 20 --finds abnormal-termination)
smtrace_check_test(abort_fixed abort 3 30 --clean ARGS fixed)
smtrace_check_test(segv segv 2 40 --expect-fail --kill-after 20 --finds abnormal-termination)
smtrace_check_test(segv_fixed segv 2 30 --clean ARGS fixed)
smtrace_check_test(exit_early exit_early 2 40 --expect-fail --kill-after 20 --finds abnormal-termination)
smtrace_check_test(exit_early_fixed exit_early 2 30 --clean ARGS fixed)
# `smtrace record` tells a launcher failing after MPI_Finalize from an
# application that ended abnormally; a call before MPI_Init is reported.
add_test(NAME e2e.record_exit
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/record_exit.sh $<TARGET_FILE:smtrace_cli> $<TARGET_FILE:e2e_exit_early>
          $<TARGET_FILE:e2e_segv> $<TARGET_FILE:e2e_fatal_arg>)
set_tests_properties(e2e.record_exit PROPERTIES LABELS e2e TIMEOUT 60 PROCESSORS 2)
# More invalid arguments, each named in the report: a negative count, tag -1
# on a send, a root out of range, MPI_COMM_NULL, a persistent request started
# while active.
smtrace_check_test(invalid_more invalid_more 2 30 --finds invalid-argument
  --report-has "count -1 is negative" --report-has "tag -1 is invalid"
  --report-has "communicator is MPI_COMM_NULL" --report-has "root rank 5 is out of range"
  --report-has "started again while active")
smtrace_check_test(invalid_more_fixed invalid_more 2 30 --clean ARGS fixed)
# Under the default error handler MPI aborts inside the call: the call is
# still in the trace (written on entry), named with its arguments.
smtrace_check_test(fatal_arg fatal_arg 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Isend: destination rank 2 is out of range")
smtrace_check_test(fatal_arg_fixed fatal_arg 2 30 --clean ARGS fixed)
smtrace_check_test(fatal_arg_uncommitted fatal_arg 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Isend: datatype [0-9]+ .* is used without MPI_Type_commit" ARGS uncommitted)
smtrace_check_test(fatal_arg_uncommitted_fixed fatal_arg 2 30 --clean ARGS uncommitted_fixed)
smtrace_check_test(fatal_arg_start_null fatal_arg 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Start: the request is MPI_REQUEST_NULL" ARGS start_null)
smtrace_check_test(fatal_arg_start_null_fixed fatal_arg 2 30 --clean ARGS start_null_fixed)
smtrace_check_test(fatal_arg_free_int fatal_arg 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Type_free: MPI_INT is predefined and cannot be freed" ARGS free_int)
smtrace_check_test(fatal_arg_free_int_fixed fatal_arg 2 30 --clean ARGS free_int_fixed)
# Nested locks on one target: Open MPI blocks in the second MPI_Win_lock, so
# the job is stopped from outside; the report names the double lock.
smtrace_check_test(rma_epoch_double rma_epoch 2 40 --expect-fail --kill-after 8 --finds epoch-lifecycle
  --report-has "MPI_Win_lock on rank 1, which this rank already holds locked" ARGS double)
# A completion call on a copy of a handle MPI_Request_free freed names the
# freed request (the tracer keeps a freed handle's id until MPI makes a
# request of that value again): invalid-argument. The correct twin (no
# argument) sends again with a new request, which may get the same value.
smtrace_check_test(request_wait_freed request_wait_freed 2 30 --finds invalid-argument ARGS copy)
smtrace_check_test(request_wait_freed_fixed request_wait_freed 2 30 --clean)
# A communicator of MPI_Comm_idup used before its request completes (MPI-3.1
# section 6.4.2): Open MPI crashes inside the call; the report names the use.
smtrace_check_test(comm_idup_early comm_idup_early 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "is used before the MPI_Comm_idup that makes it completes")
smtrace_check_test(comm_idup_early_fixed comm_idup_early 2 30 --clean ARGS fixed)
smtrace_check_test(comm_idup_early_p2p comm_idup_early 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Irecv: communicator 2 is used before the MPI_Comm_idup that makes it completes" ARGS p2p)
smtrace_check_test(comm_idup_early_p2p_fixed comm_idup_early 2 30 --clean ARGS p2p_fixed)
# MPI_Mrecv on the MPI_MESSAGE_NULL a first MPI_Mrecv left (MPI-3.1 2.5.1):
# Open MPI aborts inside it; the report names the null message.
smtrace_check_test(mrecv_null mrecv_null 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "the message is MPI_MESSAGE_NULL")
smtrace_check_test(mrecv_null_fixed mrecv_null 2 30 --clean ARGS fixed)
# The same under the default error handler: MPI aborts inside the RMA call,
# which the tracer wrote when it was entered (its epoch state, wrappers.cpp
# Epochs: no epoch open that reaches the target).
smtrace_check_test(rma_epoch_fatal rma_epoch_fatal 3 40 --expect-fail --kill-after 8 --finds epoch-lifecycle
  --report-has "error: MPI_Put to rank 1 outside any access epoch")
smtrace_check_test(rma_epoch_fatal_fixed rma_epoch_fatal 3 40 --clean ARGS fixed)
smtrace_check_test(rma_rank_fatal rma_epoch_fatal 3 40 --expect-fail --kill-after 8 --finds invalid-argument
  --report-has "MPI_Put: target rank 3 is out of range for the window's communicator" ARGS rank)
smtrace_check_test(rma_epoch_fatal_group rma_epoch_fatal 3 40 --expect-fail --kill-after 8 --finds epoch-lifecycle
  --report-has "the open access epoch, whose group does not hold rank 2" ARGS group)
smtrace_check_test(rma_epoch_fatal_group_fixed rma_epoch_fatal 3 40 --clean ARGS group_fixed)
# A user-defined op in MPI_Accumulate (MPI aborts inside it): invalid-argument.
smtrace_check_test(rma_user_op_fatal rma_epoch_fatal 3 40 --expect-fail --kill-after 8 --finds invalid-argument
  --report-has "user-defined ops are not allowed there" ARGS user_op)
smtrace_check_test(rma_user_op_fatal_fixed rma_epoch_fatal 3 40 --clean ARGS user_op_fixed)
# An erroneous blocking call that MPI's default error handler ends the job
# inside, while the other rank waits in a barrier: the error, and no
# deadlock (fatal_blocking.c). Each mode has a fixed twin.
foreach(mode recv_tag send_count unlock flush)
  set(kind invalid-argument)
  if(mode MATCHES "unlock|flush")
    set(kind epoch-lifecycle)
  endif()
  smtrace_check_test(fatal_blocking_${mode} fatal_blocking 2 40 --expect-fail --kill-after 20 --lacks deadlock
    --finds ${kind} ARGS ${mode})
  smtrace_check_test(fatal_blocking_${mode}_fixed fatal_blocking 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# A lock held across a barrier that another rank reaches only after its own
# lock on the same target: a deadlock, which names the lock's holder.
smtrace_check_test(rma_lock_wait rma_lock_wait 3 40 --expect-fail --kill-after 8 --finds deadlock
  --report-has "MPI_Win_(lock|unlock) waits for rank 0 to release its exclusive lock on rank 1")
smtrace_check_test(rma_lock_wait_fixed rma_lock_wait 3 30 --clean ARGS fixed)
# An access epoch whose target posts only after a barrier the origin waits
# in after its MPI_Win_complete: a deadlock.
smtrace_check_test(rma_pscw_wait rma_pscw_wait 2 40 --expect-fail --kill-after 8 --finds deadlock
  --report-has "MPI_Win_(start|complete) waits for rank 1 to post its exposure epoch to this rank")
smtrace_check_test(rma_pscw_wait_fixed rma_pscw_wait 2 30 --clean ARGS fixed)
# Ranks of MPI_Group_incl / MPI_Group_range_incl outside the group or named
# twice (group_ranks.c); each mode has a fixed twin.
smtrace_check_test(group_ranks_incl group_ranks 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Group_incl: ranks\\[1\\] is rank 5, out of range for the group \\(2 ranks\\)" ARGS incl)
smtrace_check_test(group_ranks_dup group_ranks 2 30 --finds invalid-argument
  --report-has "MPI_Group_incl: rank 1 is named twice" ARGS dup)
smtrace_check_test(group_ranks_range group_ranks 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_Group_range_incl: ranges\\[0\\] = \\(0, 7, 1\\) is rank 2" ARGS range)
foreach(mode incl dup range)
  smtrace_check_test(group_ranks_${mode}_fixed group_ranks 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# Erroneous arguments MPI ends the job inside, of handle-creating, RMA and
# datatype calls (fatal_create.c), each mode with a fixed twin.
set(fatal_create_says
  "win_size=MPI_Win_create: size -4 is negative"
  "cart=MPI_Cart_create: the grid of 4 ranks is larger than MPI_COMM_WORLD \\(2 ranks\\)"
  "split=MPI_Comm_split: color -5 is negative and not MPI_UNDEFINED"
  "vector=MPI_Type_vector: blocklength -1 is negative"
  "alltoall=MPI_Alltoall: count -1 is negative"
  "lock_type=MPI_Win_lock: lock_type is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"
  "assert=MPI_Win_fence: the assert argument has bits that are none of the MPI_MODE_"
  "commit=MPI_Type_commit: the datatype is MPI_DATATYPE_NULL"
  "put_count=MPI_Put: count -1 is negative"
  "neighbor=MPI_Neighbor_allgather: MPI_COMM_WORLD has no virtual topology")
foreach(entry IN LISTS fatal_create_says)
  string(REGEX MATCH "^[a-z_]+" mode "${entry}")
  string(REGEX REPLACE "^[a-z_]+=" "" says "${entry}")
  smtrace_check_test(fatal_create_${mode} fatal_create 2 40 --expect-fail --kill-after 20 --finds invalid-argument
    --lacks deadlock --report-has "${says}" ARGS ${mode})
  smtrace_check_test(fatal_create_${mode}_fixed fatal_create 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# A handle used after MPI_*_free: the tracer marks it, writes the call on
# entry, and never asks MPI about it.
foreach(mode comm win op)
  smtrace_check_test(freed_${mode} freed_handles 2 40 --expect-fail --kill-after 20 --finds invalid-argument
    --report-has "is invalid \\(freed or never created\\)" ARGS ${mode})
  smtrace_check_test(freed_${mode}_fixed freed_handles 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# Open MPI goes on with a freed contiguous type.
smtrace_check_test(freed_type freed_handles 2 30 --finds invalid-argument
  --report-has "MPI_Bcast: the datatype is invalid \\(freed or never created\\)" ARGS type)
smtrace_check_test(freed_type_fixed freed_handles 2 30 --clean ARGS type_fixed)
smtrace_check_test(freed_group freed_handles 2 30 --finds invalid-argument
  --report-has "MPI_Comm_create: the group is invalid \\(freed or never created\\)" ARGS group)
smtrace_check_test(freed_group_fixed freed_handles 2 30 --clean ARGS group_fixed)
# Arguments of one call that share bytes (MPI-3.1 section 2.3).
foreach(entry "sendrecv=MPI_Sendrecv: the send buffer and the receive buffer share byte"
              "allgather=MPI_Allgather: the send buffer and the receive buffer share byte"
              "gatherv=MPI_Gatherv: two blocks of the receive buffer share byte"
              "getacc=MPI_Get_accumulate: the origin buffer and the result buffer share byte")
  string(REGEX MATCH "^[a-z]+" mode "${entry}")
  string(REGEX REPLACE "^[a-z]+=" "" says "${entry}")
  smtrace_check_test(aliased_${mode} aliased_buffers 3 30 --finds invalid-argument --report-has "${says}" ARGS ${mode})
  smtrace_check_test(aliased_${mode}_fixed aliased_buffers 3 30 --clean ARGS ${mode}_fixed)
endforeach()
# Datatypes with overlapping entries where MPI writes (MPI-3.1 section 4.1).
foreach(entry "recv=MPI_Recv: the receive buffer has 1 element of datatype [0-9]+, which has overlapping entries"
              "resized=MPI_Recv: the receive buffer has 4 elements of datatype [0-9]+, which as laid out have overlapping"
              "get=MPI_Get: the origin buffer has 1 element of datatype [0-9]+, which has overlapping entries")
  string(REGEX MATCH "^[a-z]+" mode "${entry}")
  string(REGEX REPLACE "^[a-z]+=" "" says "${entry}")
  smtrace_check_test(overlapping_${mode} overlapping_entries 2 30 --finds invalid-argument --report-has "${says}"
    ARGS ${mode})
  smtrace_check_test(overlapping_${mode}_fixed overlapping_entries 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# MPI_Comm_create with groups that disagree among the members of one.
smtrace_check_test(comm_create_groups comm_create_groups 2 30 --finds invalid-argument
  --report-has "MPI_Comm_create on MPI_COMM_WORLD: rank 1 passes the group of 2 ranks 0 and 1, but rank 0")
smtrace_check_test(comm_create_groups_fixed comm_create_groups 2 30 --clean ARGS fixed)
# MPI_Comm_create_group: calls paired member by member (a legal sequence of
# overlapping groups first), then a member naming the ranks in another order.
# (Open MPI waits forever in the call with the other order: the job is killed.)
smtrace_check_test(comm_create_group comm_create_group 3 40 --expect-fail --kill-after 8 --finds invalid-argument
  --report-has "MPI_Comm_create_group on MPI_COMM_WORLD with tag 8: rank 0 passes the group of 2 ranks 0 and 1, but rank 1" ARGS order)
smtrace_check_test(comm_create_group_fixed comm_create_group 3 30 --clean ARGS fixed)
# RMA calls whose target range lies outside the target's window (MPI-3.1
# 11.3, rma_range.c): Open MPI tests the range at the origin and aborts
# inside the call, which the tracer wrote on entry (wrappers.cpp
# WindowShapes: every member's size and disp_unit, gathered at the window's
# creation). Each mode has a fixed twin; edges_fixed makes correct calls at
# the window's edges. (Brackets in the regexes are dots: a list element
# with an unbalanced bracket is not split.)
set(rma_range_says
  "put=MPI_Put: target_disp 4 x disp_unit 4 with 1 x MPI_INT reaches bytes .16, 20. of target rank 1's window, outside its 16 bytes"
  "get=MPI_Get: target_disp 3 x disp_unit 4 with 2 x MPI_INT reaches bytes .12, 20. of target rank 1's window"
  "fetch=MPI_Fetch_and_op: target_disp 4 x disp_unit 4 with 1 x MPI_INT reaches bytes .16, 20."
  "rput=MPI_Rput: target_disp -1 x disp_unit 4 with 1 x MPI_INT reaches bytes .-4, 0.")
foreach(entry IN LISTS rma_range_says)
  string(REGEX MATCH "^[a-z_]+" mode "${entry}")
  string(REGEX REPLACE "^[a-z_]+=" "" says "${entry}")
  smtrace_check_test(rma_range_${mode} rma_range 2 40 --expect-fail --kill-after 20 --finds invalid-argument
    --lacks deadlock --report-has "${says}" ARGS ${mode})
  smtrace_check_test(rma_range_${mode}_fixed rma_range 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# Windows of different sizes, under MPI_ERRORS_RETURN: the job ends well.
foreach(mode sizes allocate)
  smtrace_check_test(rma_range_${mode} rma_range 2 30 --finds invalid-argument --report-has
    "MPI_Put: target_disp 0 x disp_unit 4 with 4 x MPI_INT reaches bytes .0, 16. of target rank 1's window, outside its 8 bytes"
    ARGS ${mode})
  smtrace_check_test(rma_range_${mode}_fixed rma_range 2 30 --clean ARGS ${mode}_fixed)
endforeach()
# A dynamic window (MPI-3.1 section 11.2.4): the target bytes must be memory the target attached.
smtrace_check_test(rma_range_dynamic rma_range 2 30 --finds invalid-argument --report-has
  "MPI_Put: target address 0x[0-9a-f]+ with 1 x MPI_INT reaches bytes .0x[0-9a-f]+, 0x[0-9a-f]+. of target rank 1's dynamic window, outside the memory it attaches"
  ARGS dynamic)
smtrace_check_test(rma_range_dynamic_fixed rma_range 2 30 --clean ARGS dynamic_fixed)
smtrace_check_test(rma_range_dynamic_split rma_range 2 30 --finds invalid-argument --mpi-np 3 ARGS dynamic)
# The same with smtrace-mpi's ranks read by two processes: the origin's
# range and the target's window reach process 0 from different readers.
smtrace_check_test(rma_range_sizes_split rma_range 2 30 --finds invalid-argument --mpi-np 3 ARGS sizes)
smtrace_check_test(rma_range_edges_fixed rma_range 2 30 --clean ARGS edges_fixed)
# Not every member records (an MPMD context without the tracer, a rank
# under SMTRACE_DISABLE=1): the tracer's gather of the window sizes must
# not leave the others waiting.
add_test(NAME e2e.rma_partial
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/rma_partial.sh $<TARGET_FILE:smtrace_cli> $<TARGET_FILE:smtrace>
          $<TARGET_FILE:e2e_rma_range>)
set_tests_properties(e2e.rma_partial PROPERTIES LABELS e2e TIMEOUT 90 PROCESSORS 2)
