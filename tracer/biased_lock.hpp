// BiasedLock: the recorder's lock, biased to the one thread that records
// (the thread that started tracing), so that the usual rank, whose MPI calls
// all come from one thread, takes it without an atomic read-modify-write.
//
// Every other taker (another thread's MPI call, a thread event, a signal
// handler on another thread) revokes the bias once and for all, then every
// taker, the owner too, uses the spinlock inside. The owner's fast path and
// the revocation are an asymmetric Dekker pair: the owner stores "inside"
// and loads "still biased" with only a compiler barrier between them; the
// revoker stores "not biased", then membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
// makes every running thread of the process pass a full barrier, then it
// waits until the owner is not inside. So either the owner sees the
// revocation and takes the spinlock, or the revoker sees it inside and
// waits for it to leave. Without the membarrier command (old kernel,
// seccomp) the lock is never biased.
//
// Thread safety: lock/try_lock/unlock are thread safe; try_lock is async-
// signal safe (a handler on the owner thread while the owner is inside gets
// false, as a handler finds a held spinlock). bias() is not: call it before
// other threads may take the lock.
#pragma once

#include <atomic>

#include "tracer/tables.hpp"
#include "tracer/tracer.hpp"

namespace smtrace::tracer {

namespace detail {
// Its address names the thread (BiasedLock's owner).
inline thread_local char t_lock_identity SMTRACE_FAST_TLS = 0;
}  // namespace detail

class BiasedLock {
 public:
  // Bias the lock to the calling thread when the kernel offers the
  // membarrier command (registers the process for it); return whether it is.
  bool bias() noexcept;
  // Return true while the lock is biased (to its first owner).
  bool biased() const noexcept { return m_biased.load(std::memory_order_relaxed); }

  // Take the lock, spinning while another thread holds it.
  void lock() noexcept {
    if (owner()) [[likely]] {
      if (enter_fast()) return;
      m_lock.lock();
      return;
    }
    m_lock.lock();
    // Under the spinlock, so that no other taker passes a revocation in
    // progress; also when a signal handler's revocation gave up waiting.
    if (m_biased.load(std::memory_order_relaxed) || m_inside.load(std::memory_order_acquire)) revoke();
  }
  // Take the lock if it is free (for the owner: if it is not inside);
  // return false at once otherwise (after a bounded wait while revoking).
  bool try_lock() noexcept;
  // Release the lock.
  void unlock() noexcept {
    if (owner() && m_inside.load(std::memory_order_relaxed)) {
      m_inside.store(false, std::memory_order_release);
      return;
    }
    m_lock.unlock();
  }

 private:
  // Return true on the thread the lock was biased to (while it lives; a
  // later thread may get the same identity only after it ended).
  bool owner() const noexcept { return m_owner.load(std::memory_order_relaxed) == self(); }
  static const void* self() noexcept { return &detail::t_lock_identity; }
  bool enter_fast() noexcept {
    m_inside.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the revoker's membarrier is the fence
    if (m_biased.load(std::memory_order_relaxed)) [[likely]] {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      return true;
    }
    m_inside.store(false, std::memory_order_release);
    return false;
  }
  // Turn the bias off for good; return once the owner is not inside, or
  // false after `spins` checks (for signal handlers; 0: wait as long as it takes).
  bool revoke(unsigned long spins = 0) noexcept;

  std::atomic<const void*> m_owner{nullptr};  // the owner's identity (self()), set once
  std::atomic<bool> m_biased{false};
  std::atomic<bool> m_inside{false};  // the owner holds the lock through the fast path
  SpinLock m_lock;
};

}  // namespace smtrace::tracer
