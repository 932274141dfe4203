/* A program with debug info whose addresses the `symbolize` CLI test
   resolves: the test puts the address of smtrace_cli_test_target into a
   hand-written trace and expects this file and function back. */
int smtrace_cli_test_target(int x);

int smtrace_cli_test_target(int x) {
  return x * 3 + 1;
}

int main(void) {
  return smtrace_cli_test_target(0) == 1 ? 0 : 1;
}
