/* A function defined in a header, called from symbolize_dwarf.c: the
   symbolize_dwarf CLI test expects the call inside it to resolve to this
   file and the line marked site:header, with this function's name, whether
   the compiler inlined it (-O2) or not (-O0), with DWARF 4 or 5. */
#ifndef SMTRACE_SYMBOLIZE_HEADER_H
#define SMTRACE_SYMBOLIZE_HEADER_H

void smtrace_cli_test_callee(int x);

static inline int smtrace_cli_test_in_header(int x) {
  int y = x * 3;
  smtrace_cli_test_callee(y); /* site:header */
  return y + 1;
}

#endif
