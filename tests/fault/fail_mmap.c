/* A preloaded shim for the fault tests: mmap of a trace file (a name ending
 * in ".smt") fails with ENOMEM from the Nth such call on, N taken from
 * SMTRACE_TEST_FAIL_MMAP (1: the first). Other mappings go through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void* (*mmap_fn)(void*, size_t, int, int, int, off_t);

static int is_trace_file(int fd) {
  if (fd < 0) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 4) return 0;
  target[n] = '\0';
  return strcmp(target + n - 4, ".smt") == 0;
}

static void* fail_or_map(mmap_fn real, void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static int calls;
  const char* from = getenv("SMTRACE_TEST_FAIL_MMAP");
  if (from && is_trace_file(fd) && ++calls >= atoi(from)) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  return real(addr, length, prot, flags, fd, offset);
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static mmap_fn real;
  if (!real) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
  return fail_or_map(real, addr, length, prot, flags, fd, offset);
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static mmap_fn real;
  if (!real) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap64");
  return fail_or_map(real, addr, length, prot, flags, fd, offset);
}
