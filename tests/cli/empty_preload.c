/* A harmless library for `smtrace record` tests that need no MPI: it is
   preloaded in place of libsmtrace.so (SMTRACE_LIB) and does nothing. */
int smtrace_cli_test_preload_marker(void);
int smtrace_cli_test_preload_marker(void) { return 0; }
