# Calls of MPI at full breadth (issue 14): each newly traced family with a
# bug program and its fixed twin.

# Requests: Open MPI hands one handle value to every operation on
# MPI_PROC_NULL; distinct operations keep distinct ids.
# smtrace-mpi with 3 processes: ranks 0-1 and rank 2 are read, and their
# request-leak passes run, on two processes; process 0 groups the leaks.
smtrace_check_test(halo_proc_null halo_proc_null 3 30 --clean --mpi-np 3)
smtrace_check_test(halo_proc_null_leak halo_proc_null 3 30 --finds request-leak --mpi-np 3 ARGS leak)

# Matched probes: MPI_Mrecv / MPI_Imrecv receive the message their probe took.
smtrace_check_test(mprobe mprobe 2 30 --clean)
smtrace_check_test(mprobe_leak mprobe 2 30 --finds resource-leak ARGS bug)

# Intercommunicators: peers and roots name the remote group.
smtrace_check_test(intercomm intercomm 4 30 --clean)
smtrace_check_test(intercomm_deadlock intercomm 4 40 --expect-fail --kill-after 6 --finds deadlock ARGS bug)
# Roots on an intercommunicator: MPI_ROOT / MPI_PROC_NULL in the root's group,
# the root's rank in the other (MPI-3.1 section 5.2.2).
smtrace_check_test(intercomm_root intercomm_root 6 40 --expect-fail --kill-after 8 --finds collective-mismatch
  --report-has "the roots of MPI_Bcast on an intercommunicator disagree" ARGS bug)
smtrace_check_test(intercomm_root_fixed intercomm_root 6 30 --clean)

# Neighbourhood collectives on a Cartesian topology.
smtrace_check_test(neighbor neighbor 4 30 --clean)
smtrace_check_test(neighbor_overlap neighbor 4 30 --finds local-concurrency ARGS bug)
target_include_directories(e2e_neighbor PRIVATE ${PROJECT_SOURCE_DIR}/include)

# Buffered sends from an attached buffer complete without their receive.
smtrace_check_test(bsend bsend 2 30 --clean)
smtrace_check_test(bsend_standard bsend 2 30 --finds potential-deadlock ARGS bug)
# ... but only from a buffer with room for the message (MPI-4.0 section 3.6).
smtrace_check_test(bsend_small bsend 2 30 --finds invalid-argument
  --report-has "but the attached buffer has" ARGS small)
smtrace_check_test(bsend_unattached bsend 2 30 --finds invalid-argument
  --report-has "with no buffer attached" ARGS none)
# ... and for every buffered message that may still hold its space.
smtrace_check_test(bsend_twice bsend 2 30 --finds invalid-argument
  --report-has "earlier buffered message of this rank may still hold" ARGS twice)
smtrace_check_test(bsend_twice_fixed bsend 2 30 --clean ARGS twice_fixed)
