// EngineLock: the mutex between the application thread and the progress
// thread, taken only when there is a progress thread. Without one, every
// poll of a blocking loop would pay a lock and an unlock for nothing (they
// were 23% of an 8-byte ping-pong's cycles).
#pragma once

#include <mutex>

namespace tagwire::engine {

class EngineLock {
 public:
  // Fixed before any second thread exists.
  void enable() { enabled_ = true; }
  void lock() {
    if (enabled_) mutex_.lock();
  }
  void unlock() {
    if (enabled_) mutex_.unlock();
  }

 private:
  std::mutex mutex_;
  bool enabled_ = false;
};

}  // namespace tagwire::engine
