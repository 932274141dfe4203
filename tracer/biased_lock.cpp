#include "tracer/biased_lock.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>


namespace smtrace::tracer {
namespace {

long membarrier(int cmd) noexcept { return syscall(SYS_membarrier, cmd, 0u, 0); }

}  // namespace

bool BiasedLock::bias() noexcept {
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
    return false;
  m_owner.store(self(), std::memory_order_relaxed);
  m_biased.store(true, std::memory_order_release);
  return true;
}

bool BiasedLock::revoke(unsigned long spins) noexcept {
  if (m_biased.exchange(false, std::memory_order_seq_cst)) {
    // The owner may have stored "inside" and not yet loaded m_biased: the
    // barrier on every running thread orders that store before our load
    // below, or that load after our store above. (Fails only in a child
    // after fork, which has one thread: then nobody else is inside.)
    (void)membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  }
  for (unsigned long i = 0; m_inside.load(std::memory_order_acquire); ++i) {
    if (spins && i >= spins) return false;
    __builtin_ia32_pause();
  }
  return true;
}

bool BiasedLock::try_lock() noexcept {
  if (owner()) {
    if (m_inside.load(std::memory_order_relaxed)) return false;  // interrupted inside, on this thread
    if (enter_fast()) return true;
    return m_lock.try_lock();
  }
  if (!m_lock.try_lock()) return false;
  if (m_biased.load(std::memory_order_relaxed) || m_inside.load(std::memory_order_acquire)) {
    if (!revoke(1u << 24)) {
      m_lock.unlock();
      return false;
    }
  }
  return true;
}

}  // namespace smtrace::tracer
