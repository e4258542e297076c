// EngineLock: mutual exclusion between the application thread and the
// engine's helper thread (cancel agent or progress thread), built so that
// the application pays almost nothing for it.
//
// The two sides are not equal. The application enters the library millions
// of times a second; the helper steps in only while the application is away.
// So this is an asymmetric Dekker lock: each side raises its flag, then
// looks at the other's. The application's side is two plain stores and a
// load (a compiler fence only); the helper's side pays for both with
// membarrier(2), which makes every running thread of the process execute a
// full memory barrier. A std::mutex here cost a tenth of an 8-byte
// ping-pong over shared memory. Where membarrier is unavailable both sides
// use sequentially consistent atomics (classic Dekker), and under
// ThreadSanitizer, which cannot see membarrier's ordering, a plain mutex.
//
// It also tells the cancel agent whether the application is in the library:
// every application entry bumps an activity count, and the agent serves the
// transport only after the count has stood still for a while.
//
// Not re-entrant. The application side is one thread, unless
// allow_application_threads() was called (MPI_THREAD_MULTIPLE): then a
// plain mutex orders the application's threads first, and the one that
// holds it meets the helper exactly as a single thread would.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#if defined(__SANITIZE_THREAD__)
#define TAGWIRE_ENGINE_LOCK_MUTEX 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TAGWIRE_ENGINE_LOCK_MUTEX 1
#endif
#endif

namespace tagwire::engine {

class EngineLock {
 public:
  // Fixed before any second thread exists.
  void enable();
  void allow_application_threads() { multiple_ = true; }
  bool application_threads() const { return multiple_; }
  bool enabled() const { return enabled_; }
  // Whether the helper's side uses membarrier (false: classic Dekker).
  bool asymmetric() const { return asymmetric_; }

  // The application thread. Always inline: under LTO the inliner, out of
  // budget in one unit the size of the library, left both out of line
  // (with the handle lookup and mapped_access: 4 ns of a 17 ns 8-byte
  // MPI_Put + flush over shared memory, 2026-12-02).
  [[gnu::always_inline]] void lock() {
    if (!enabled_) return;
#ifndef TAGWIRE_ENGINE_LOCK_MUTEX
    if (multiple_) application_mutex_.lock();
#endif
    activity_.store(activity_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#ifdef TAGWIRE_ENGINE_LOCK_MUTEX
    application_in_.store(true, std::memory_order_relaxed);
    mutex_.lock();
#else
    if (asymmetric_) {
      application_in_.store(true, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the helper's membarrier does the rest
    } else {
      application_in_.store(true, std::memory_order_seq_cst);
    }
    if (helper_in_.load(std::memory_order_seq_cst)) wait_for_helper();
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
  }
  [[gnu::always_inline]] void unlock() {
    if (!enabled_) return;
#ifdef TAGWIRE_ENGINE_LOCK_MUTEX
    application_in_.store(false, std::memory_order_relaxed);
    mutex_.unlock();
#else
    application_in_.store(false, std::memory_order_release);
    if (multiple_) application_mutex_.unlock();
#endif
  }

  // The helper thread. try_enter fails while the application is inside;
  // once in, the helper should leave as soon as application_waiting().
  bool helper_try_enter();
  bool application_waiting() const {
    return application_in_.load(std::memory_order_relaxed);
  }
  void helper_leave() {
#ifdef TAGWIRE_ENGINE_LOCK_MUTEX
    mutex_.unlock();
#else
    helper_in_.store(false, std::memory_order_release);
#endif
  }
  std::uint64_t activity() const {
    return activity_.load(std::memory_order_relaxed);
  }

 private:
  void wait_for_helper();

  bool enabled_ = false;
  bool asymmetric_ = false;
  bool multiple_ = false;
  std::mutex application_mutex_;  // application threads, when multiple_
  std::atomic<bool> application_in_{false};
  std::atomic<bool> helper_in_{false};
  std::atomic<std::uint64_t> activity_{0};
#ifdef TAGWIRE_ENGINE_LOCK_MUTEX
  std::mutex mutex_;
#endif
};

// std::lock_guard for the engine's lock, always inlined: the standard one's
// destructor stayed a call, 10 instructions per nonblocking call.
class [[nodiscard]] EngineGuard {
 public:
  [[gnu::always_inline]] explicit EngineGuard(EngineLock& lock) : lock_(lock) { lock_.lock(); }
  [[gnu::always_inline]] ~EngineGuard() { lock_.unlock(); }
  EngineGuard(const EngineGuard&) = delete;
  EngineGuard& operator=(const EngineGuard&) = delete;

 private:
  EngineLock& lock_;
};

}  // namespace tagwire::engine
