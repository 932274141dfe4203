# Hybrid MPI + threads (issue 15): thread-level, each bug program with its
# fixed twin.
smtrace_e2e_program(thread_level thread_level.c)
target_link_libraries(e2e_thread_level PRIVATE Threads::Threads)
smtrace_check_test(thread_level_funneled thread_level 2 30 --finds thread-level ARGS funneled)
smtrace_check_test(thread_level_funneled_fixed thread_level 2 30 --clean ARGS funneled_fixed)
smtrace_check_test(thread_level_serialized thread_level 2 30 --finds thread-level ARGS serialized)
smtrace_check_test(thread_level_serialized_fixed thread_level 2 30 --clean ARGS serialized_fixed)
