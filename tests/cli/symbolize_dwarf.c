/* The symbolize_dwarf CLI test's program: two compilation units (this file
   and symbolize_callee.c, as a real program has many), a call inside a
   function defined in a header and one in main. The callee prints where it
   was called from as "site MODULE BASE OFFSET" (the return address as the
   tracer records it: module load base and offset), and the test feeds
   these to `smtrace symbolize` through a hand-written trace. */
#include "symbolize_header.h"

int main(void) {
  int sum = smtrace_cli_test_in_header(1);
  smtrace_cli_test_callee(sum); /* site:main */
  return 0;
}
