#include "engine/engine_lock.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tagwire::engine {

#ifndef TAGWIRE_ENGINE_LOCK_MUTEX
namespace {

int membarrier(int command) {
  return static_cast<int>(::syscall(__NR_membarrier, command, 0, 0));
}

}  // namespace
#endif

void EngineLock::enable() {
  enabled_ = true;
#ifndef TAGWIRE_ENGINE_LOCK_MUTEX
  // Private expedited: IPIs only to CPUs running this process's threads.
  asymmetric_ = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#endif
}

bool EngineLock::helper_try_enter() {
  if (application_in_.load(std::memory_order_relaxed)) return false;  // cheap early look
#ifdef TAGWIRE_ENGINE_LOCK_MUTEX
  return mutex_.try_lock();
#else
  helper_in_.store(true, std::memory_order_seq_cst);
  if (asymmetric_) {
    // Orders the application's flag store (wherever its thread runs) before
    // our load below: together with our store above, Dekker holds.
    // It cannot fail once registered; if it ever did, staying out is safe.
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
      helper_in_.store(false, std::memory_order_release);
      return false;
    }
  }
  if (application_in_.load(std::memory_order_seq_cst)) {
    helper_in_.store(false, std::memory_order_release);
    return false;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
#endif
}

void EngineLock::wait_for_helper() {
  // The helper sees our flag at its next look and leaves: a progress turn.
  for (unsigned spins = 0; helper_in_.load(std::memory_order_acquire); ++spins) {
    if (spins < 1024) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();
    }
  }
}

}  // namespace tagwire::engine
