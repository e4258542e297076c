// HandleTable: MPI's integer handles for engine objects. Handle 0 is the
// null handle; a freed handle is reused, and looking up a handle that was
// never issued or is already freed yields nothing instead of a stale object.
#pragma once

#include <cstddef>
#include <vector>

namespace tagwire::mpi {

template <typename T>
class HandleTable {
 public:
  // Handles below `first` are reserved (predefined objects).
  explicit HandleTable(int first) : first_(first) {}

  int add(T value) {
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
    if (h < first_ || h - first_ >= static_cast<int>(entries_.size())) return nullptr;
    Entry& e = slot(h);
    return e.live ? &e.value : nullptr;
  }

  void remove(int h) {
    if (find(h) == nullptr) return;
    slot(h) = Entry{};
    free_.push_back(h);
  }

 private:
  struct Entry {
    T value{};
    bool live = false;
  };
  Entry& slot(int h) { return entries_[static_cast<std::size_t>(h - first_)]; }

  int first_;
  std::vector<Entry> entries_;
  std::vector<int> free_;
};

}  // namespace tagwire::mpi
