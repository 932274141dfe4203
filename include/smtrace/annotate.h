/* smtrace annotation API: declare local reads and writes of memory ranges,
 * so the analyzer can check them against MPI buffers in flight (a local write
 * to a buffer of a pending MPI_Isend, a read of an MPI_Irecv buffer before
 * its wait, a store into a window during an epoch).
 *
 *   smtrace_annotate_write(buf, n * sizeof *buf);   // C
 *   smtrace::annotate_read(x);                       // C++: an object
 *   smtrace::annotate_write(std::span(v));           // C++20: a span
 *
 * Each call is recorded as an ANNOTATE_READ / ANNOTATE_WRITE event with
 * buf = address, size = bytes and the caller's call site.
 *
 * Cost when tracing is off: the implementation functions are declared weak,
 * so a program run without libsmtrace.so needs no library at all and each
 * annotation is one load and a not-taken branch; under the tracer with
 * tracing off (SMTRACE_DISABLE=1, family "annotate" off) it is a call that
 * checks one flag. Define SMTRACE_NO_ANNOTATIONS before including this
 * header to compile annotations out entirely.
 *
 * The weak reference resolves at load time only in position-independent
 * executables and shared objects (the default on Debian: -pie); in a
 * program linked with -no-pie the annotations do nothing.
 *
 * In C++ the helpers of namespace smtrace are inline templates: symbolized
 * with inlined frames, their call site's innermost frame is this header and
 * the caller is the next frame.
 *
 * Thread safety: every function may be called from any thread. */
#ifndef SMTRACE_ANNOTATE_H
#define SMTRACE_ANNOTATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The C API is two macros, so that the call instruction, whose return
 * address is the recorded call site, carries the caller's file and line in
 * the debug info (an inline function would add an inlined frame in this
 * header). Arguments are evaluated at most once, and not at all when the
 * library is not loaded: do not rely on their side effects. */
#if defined(SMTRACE_NO_ANNOTATIONS) || !defined(__GNUC__)

#define smtrace_annotate_read(addr, size) ((void)sizeof(addr), (void)sizeof(size))
#define smtrace_annotate_write(addr, size) ((void)sizeof(addr), (void)sizeof(size))
#define smtrace_cuda_readonly(kernel, index) ((void)sizeof(kernel), (void)sizeof(index))

#else

/* Implementation in libsmtrace.so; null when the library is not loaded. */
extern void smtrace_annotate_read_impl(const void* addr, size_t size) __attribute__((weak));
extern void smtrace_annotate_write_impl(const void* addr, size_t size) __attribute__((weak));

/* Record that the caller reads `size` bytes at `addr`. */
#define smtrace_annotate_read(addr, size) \
  (smtrace_annotate_read_impl ? smtrace_annotate_read_impl((addr), (size)) : (void)0)

/* Record that the caller writes `size` bytes at `addr`. */
#define smtrace_annotate_write(addr, size) \
  (smtrace_annotate_write_impl ? smtrace_annotate_write_impl((addr), (size)) : (void)0)

/* CUDA (libsmtrace.so built with CUPTI): declare that argument `index`
 * (from 0) of kernel `kernel` (its name in the program: the host stub that
 * cudaLaunchKernel and <<<...>>> take) is only read by the kernel, for every
 * later launch. Without it, the pointer arguments of a kernel are taken as
 * written (CUPTI does not say). Same as SMTRACE_CUDA_READONLY=name:index. */
extern void smtrace_cuda_readonly_impl(const void* kernel, unsigned index) __attribute__((weak));
#define smtrace_cuda_readonly(kernel, index) \
  (smtrace_cuda_readonly_impl ? smtrace_cuda_readonly_impl((const void*)(kernel), (index)) : (void)0)

#endif

#ifdef __cplusplus
} /* extern "C" */

#if __cplusplus >= 202002L
#include <span>
#endif

namespace smtrace {

/* Record that the caller reads `object` (all sizeof(T) bytes). */
template <class T>
inline __attribute__((always_inline)) void annotate_read(const T& object) {
  smtrace_annotate_read(&object, sizeof(T));
}
/* Record that the caller writes `object` (all sizeof(T) bytes). */
template <class T>
inline __attribute__((always_inline)) void annotate_write(const T& object) {
  smtrace_annotate_write(&object, sizeof(T));
}
/* Record that the caller reads `count` elements from `data`. */
template <class T>
inline __attribute__((always_inline)) void annotate_read(const T* data, size_t count) {
  smtrace_annotate_read(data, count * sizeof(T));
}
/* Record that the caller writes `count` elements at `data`. */
template <class T>
inline __attribute__((always_inline)) void annotate_write(const T* data, size_t count) {
  smtrace_annotate_write(data, count * sizeof(T));
}

#if __cplusplus >= 202002L
/* Record that the caller reads the elements of `span`. */
template <class T, size_t N>
inline __attribute__((always_inline)) void annotate_read(std::span<T, N> span) {
  smtrace_annotate_read(span.data(), span.size_bytes());
}
/* Record that the caller writes the elements of `span`. */
template <class T, size_t N>
inline __attribute__((always_inline)) void annotate_write(std::span<T, N> span) {
  smtrace_annotate_write(span.data(), span.size_bytes());
}
#endif

}  // namespace smtrace
#endif /* __cplusplus */

#endif /* SMTRACE_ANNOTATE_H */
