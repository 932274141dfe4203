// The implementation behind include/smtrace/annotate.h, exported from
// libsmtrace.so. The header's inline helpers call these only when the
// library is loaded; here one flag check decides whether to record.
#include <cstddef>
#include <cstdint>

#include "tracer/handlers.hpp"
#include "tracer/tracer.hpp"

namespace handlers = smtrace::tracer::handlers;
using smtrace::format::Call;

extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE void smtrace_annotate_read_impl(const void* addr, size_t size) {
  if (!handlers::tracing()) return;
  handlers::on_annotate(Call::Annotate_read, reinterpret_cast<uintptr_t>(addr), size,
                        reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

extern "C" SMTRACE_EXPORT SMTRACE_NOINLINE void smtrace_annotate_write_impl(const void* addr, size_t size) {
  if (!handlers::tracing()) return;
  handlers::on_annotate(Call::Annotate_write, reinterpret_cast<uintptr_t>(addr), size,
                        reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
