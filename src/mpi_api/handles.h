// HandleTable: MPI's integer handles for engine objects. Handle 0 is the
// null handle; a freed handle is reused, and looking up a handle that was
// never issued or is already freed yields nothing instead of a stale object.
//
// Under MPI_THREAD_MULTIPLE every table takes its own mutex for each add,
// find and remove (threads_enabled(), fixed by MPI_Init_thread before the
// application can start a thread; one predictable branch otherwise).
// Entries live in fixed chunks that never move, so a pointer that find()
// returned stays valid while other threads add handles; using an object
// while another thread frees its handle is the application's error, as MPI
// says. (A std::deque did the same, but its indexing was most of the ~70
// instructions a request lookup took, twice per message.)
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace tagwire::mpi {

namespace detail {
inline bool g_threads_enabled = false;
}  // namespace detail

// Whether several application threads may call MPI at once.
inline bool threads_enabled() {
  return detail::g_threads_enabled;
}
// Only MPI_Init_thread, before any application thread exists.
inline void enable_threads() {
  detail::g_threads_enabled = true;
}

// Locks `m` only under MPI_THREAD_MULTIPLE.
class ThreadGuard {
 public:
  [[gnu::always_inline]] explicit ThreadGuard(std::mutex& m)
      : m_(threads_enabled() ? &m : nullptr) {
    if (m_ != nullptr) m_->lock();
  }
  [[gnu::always_inline]] ~ThreadGuard() {
    if (m_ != nullptr) m_->unlock();
  }
  ThreadGuard(const ThreadGuard&) = delete;
  ThreadGuard& operator=(const ThreadGuard&) = delete;

 private:
  std::mutex* m_;
};

template <typename T>
class HandleTable {
 public:
  // Handles below `first` are reserved (predefined objects).
  explicit HandleTable(int first) : first_(first) {}

  int add(T value) {
    ThreadGuard guard(mutex_);
    if (!free_.empty()) {
      int h = free_.back();
      free_.pop_back();
      slot(h) = Entry{std::move(value), true};
      return h;
    }
    if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<Entry[]>(kChunk));
    const int h = first_ + static_cast<int>(size_);
    ++size_;
    slot(h) = Entry{std::move(value), true};
    return h;
  }

  // Null when the handle is not live.
  // (Always inline: every call looks its handles up; see EngineLock::lock.)
  [[gnu::always_inline]] T* find(int h) {
    ThreadGuard guard(mutex_);
    return find_locked(h);
  }

  void remove(int h) {
    ThreadGuard guard(mutex_);
    if (find_locked(h) == nullptr) return;
    slot(h) = Entry{};
    free_.push_back(h);
  }

 private:
  [[gnu::always_inline]] T* find_locked(int h) {
    if (h < first_ || static_cast<std::size_t>(h - first_) >= size_) return nullptr;
    Entry& e = slot(h);
    return e.live ? &e.value : nullptr;
  }

  struct Entry {
    T value{};
    bool live = false;
  };
  Entry& slot(int h) {
    const auto i = static_cast<std::size_t>(h - first_);
    return chunks_[i / kChunk][i % kChunk];
  }

  int first_;
  static constexpr std::size_t kChunk = 256;
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::size_t size_ = 0;  // handles ever issued (first_ .. first_ + size_ - 1)
  std::vector<int> free_;
  std::mutex mutex_;
};

}  // namespace tagwire::mpi
