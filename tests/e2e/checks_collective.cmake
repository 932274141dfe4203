# collective-mismatch and collective-misaligned (docs/checks.md).
smtrace_check_test(coll_order coll_order 3 30 --finds collective-mismatch)
smtrace_check_test(coll_order_fixed coll_order 3 30 --clean ARGS fixed)
smtrace_check_test(coll_root coll_root 2 30 --finds collective-mismatch)
smtrace_check_test(coll_root_fixed coll_root 2 30 --clean ARGS fixed)
# MPI_IN_PLACE at some members of an Allgather only (at all or none, MPI-3.1 5.7).
smtrace_check_test(coll_in_place coll_in_place 3 30 --finds collective-mismatch)
smtrace_check_test(coll_in_place_fixed coll_in_place 3 30 --clean ARGS fixed)
# Split communicators used correctly: halves and world (coll_split), halves
# running different code (coll_teams).
smtrace_check_test(coll_split coll_split 4 30 --clean)
smtrace_check_test(coll_teams coll_teams 4 30 --clean)
# collective-misaligned is off by default (a style rule): asked for here.
smtrace_check_test(coll_misaligned coll_misaligned 2 30 --finds collective-misaligned
                   --check-args "--alignment strict")
smtrace_check_test(coll_misaligned_default coll_misaligned 2 30 --clean)
smtrace_check_test(coll_misaligned_named coll_misaligned 2 30 --finds collective-misaligned
                   --check-args "--checks collective-misaligned")
smtrace_check_test(coll_misaligned_weak coll_misaligned 2 30 --finds collective-misaligned
                   --check-args "--alignment weak")
smtrace_check_test(coll_misaligned_off coll_misaligned 2 30 --clean --check-args "--alignment off")
smtrace_check_test(coll_misaligned_fixed coll_misaligned 2 30 --clean --check-args "--alignment strict"
                   ARGS fixed)
# The root of a rooted collective on a path of its own (MPI_IN_PLACE at the
# root) is aligned; non-roots on two paths are not.
smtrace_check_test(coll_misaligned_in_place coll_misaligned 3 30 --clean --check-args "--alignment strict"
                   ARGS in_place)
smtrace_check_test(coll_misaligned_in_place_split coll_misaligned 3 30 --finds collective-misaligned
                   --check-args "--alignment strict" ARGS in_place_split)
# Same call site, different call paths: only a recorded stack shows it.
smtrace_check_test(coll_misaligned_path coll_misaligned 2 30 --finds collective-misaligned
                   --check-args "--alignment strict" ARGS path)
smtrace_check_test(coll_misaligned_path_weak coll_misaligned 2 30 --clean --check-args "--alignment weak"
                   ARGS path)
set_tests_properties(check.coll_misaligned_path check.coll_misaligned_path_weak
                     PROPERTIES ENVIRONMENT SMTRACE_STACK_DEPTH=4)
# Neighbourhood collectives: signatures pair along the topology's edges
# (a neighbour twice, MPI_PROC_NULL neighbours, Neighbor_allgatherv counts
# per source).
smtrace_check_test(neighbor_sig neighbor_sig 4 40 --finds collective-mismatch ARGS float)
smtrace_check_test(neighbor_sig_fixed neighbor_sig 4 40 --clean)
smtrace_check_test(neighbor_sig_w neighbor_sig 4 40 --finds collective-mismatch ARGS wfloat)
