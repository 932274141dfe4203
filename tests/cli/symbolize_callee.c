/* See symbolize_dwarf.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

__attribute__((noinline)) void smtrace_cli_test_callee(int x) {
  void* ret = __builtin_return_address(0);
  Dl_info info;
  if (dladdr(ret, &info) == 0 || info.dli_fname == NULL) return;
  const uintptr_t base = (uintptr_t)info.dli_fbase;
  printf("site %s %lu %lu %d\n", info.dli_fname, (unsigned long)base, (unsigned long)((uintptr_t)ret - base), x);
}
