// A sequentially consistent full fence, for the Dekker-style handshakes
// (shm's wake-ups against arm(), MPI_Win_sync between processes that share
// memory). GCC refuses std::atomic_thread_fence under ThreadSanitizer
// (-Wtsan, an error with -Werror); there a locked read-modify-write of
// `at` stands in: the same full barrier on x86, and one TSan can see.
#pragma once

#include <atomic>

namespace tagwire {

template <typename T>
inline void full_fence([[maybe_unused]] std::atomic<T>& at) {
#if defined(__SANITIZE_THREAD__)
  (void)at.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace tagwire
