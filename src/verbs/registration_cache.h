// RegistrationCache: user buffers stay registered between RDMA operations.
//
// Registering memory is a system call that pins pages (tens of
// microseconds for a megabyte on a real NIC); a rendezvous registers the
// sender's buffer and the receiver's destination for every message, and
// programs send from the same buffers again and again. The cache keeps
// each registration (of whole pages) after its operation and hands it out
// again for any range it covers.
//
// Correctness rests on invalidation: invalidate() is called (from the
// memory hooks, any thread) before a range is unmapped, remapped or
// emptied, and no entry overlapping it is handed out again. It only records
// the range (a hook must not allocate nor wait for the cache, and
// deregistering would call into verbs from arbitrary threads); the next
// acquire or release marks what overlaps it before anything else, an entry
// in use is deregistered when its last user releases it, the rest at once.
// Least recently used unused entries go when the cache passes its budget.
//
// The registering itself is a callback, so that the bookkeeping is tested
// without a device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"

namespace tagwire::verbs {

// One registration, deregistered when destroyed.
class CachedRegion {
 public:
  virtual ~CachedRegion() = default;
  virtual std::uint32_t lkey() const = 0;
  virtual std::uint32_t rkey() const = 0;
};

struct RegistrationCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t invalidated = 0;  // entries dropped because their memory changed
  std::uint64_t evicted = 0;      // entries dropped for the budget
  std::uint64_t entries = 0;      // registered now (in use or kept)
  std::uint64_t bytes = 0;
};

class RegistrationCache {
 public:
  // Registers [start, start + length), both page-aligned.
  using Register = std::function<Result<std::unique_ptr<CachedRegion>>(std::uintptr_t start,
                                                                       std::size_t length)>;
  struct Entry;

  RegistrationCache(Register reg, std::size_t max_bytes, std::size_t page_size = 4096);
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // A registration covering [address, address + length), held until
  // release(). Never null on success.
  Result<Entry*> acquire(const void* address, std::size_t length);
  void release(Entry* entry);
  static std::uint32_t lkey(const Entry* entry);
  static std::uint32_t rkey(const Entry* entry);

  // [start, start + length) is about to change its pages. Called from
  // memory hooks, on any thread, possibly while another thread holds the
  // cache and is itself unmapping (inside a registration): it only records
  // the range under a lock of its own, never the cache's (that wait closed
  // a cycle through the hooks' registry lock), and the next acquire,
  // release or stats() applies it before anything else.
  void invalidate(std::uintptr_t start, std::size_t length);

  RegistrationCacheStats stats();

 private:
  void drop_locked(Entry* e, bool for_budget);
  void collect_locked();
  void enforce_budget_locked();
  void apply_invalidations_locked();

  struct Range {
    std::uintptr_t start = 0;
    std::uintptr_t end = 0;
  };
  // Ranges reported and not yet applied; beyond kPendingRanges, every entry
  // is dropped instead (correct, only slower). A fixed array: nothing under
  // pending_mutex_ may allocate, or it could unmap and re-enter the hook.
  static constexpr std::size_t kPendingRanges = 128;

  Register register_;
  std::size_t max_bytes_;
  std::size_t page_;
  std::mutex mutex_;
  std::mutex pending_mutex_;  // held only to copy ranges in or out
  std::array<Range, kPendingRanges> pending_{};
  std::size_t pending_count_ = 0;
  bool pending_overflow_ = false;
  bool marked_ = false;  // entries marked invalid that are still in by_start_
  // Entries by start address (several may overlap), marked ones included.
  std::multimap<std::uintptr_t, std::unique_ptr<Entry>> by_start_;
  std::list<Entry*> lru_;                     // valid entries, most recently used first
  std::vector<std::unique_ptr<Entry>> dead_;  // invalid, awaiting release / deregistration
  RegistrationCacheStats stats_;
};

}  // namespace tagwire::verbs
