// HandleTable: MPI's integer handles for engine objects. Handle 0 is the
// null handle; a freed handle is reused, and looking up a handle that was
// never issued or is already freed yields nothing instead of a stale object.
//
// Under MPI_THREAD_MULTIPLE every table takes its own mutex for each add,
// find and remove (threads_enabled(), fixed by MPI_Init_thread before the
// application can start a thread; one predictable branch otherwise).
// Entries live in a deque, so a pointer that find() returned stays valid
// while other threads add handles; using an object while another thread
// frees its handle is the application's error, as MPI says.
#pragma once

#include <cstddef>
#include <deque>
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
  explicit ThreadGuard(std::mutex& m) : m_(threads_enabled() ? &m : nullptr) {
    if (m_ != nullptr) m_->lock();
  }
  ~ThreadGuard() {
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
    entries_.push_back(Entry{std::move(value), true});
    return first_ + static_cast<int>(entries_.size()) - 1;
  }

  // Null when the handle is not live.
  T* find(int h) {
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
  T* find_locked(int h) {
    if (h < first_ || h - first_ >= static_cast<int>(entries_.size())) return nullptr;
    Entry& e = slot(h);
    return e.live ? &e.value : nullptr;
  }

  struct Entry {
    T value{};
    bool live = false;
  };
  Entry& slot(int h) { return entries_[static_cast<std::size_t>(h - first_)]; }

  int first_;
  std::deque<Entry> entries_;
  std::vector<int> free_;
  std::mutex mutex_;
};

}  // namespace tagwire::mpi
