#include "verbs/registration_cache.h"

#include <algorithm>
#include <cstdint>

#include "common/log.h"

namespace tagwire::verbs {

struct RegistrationCache::Entry {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  std::unique_ptr<CachedRegion> region;
  int users = 0;
  bool valid = true;
  std::list<Entry*>::iterator lru;
};

namespace {
// How far back acquire() looks among entries starting at or before the
// address: overlapping entries are rare, and a miss only costs a fresh
// registration.
constexpr int kLookBack = 8;
}  // namespace

RegistrationCache::RegistrationCache(Register reg, std::size_t max_bytes, std::size_t page_size)
    : register_(std::move(reg)), max_bytes_(max_bytes), page_(page_size) {}

RegistrationCache::~RegistrationCache() {
  std::lock_guard lock(mutex_);
  std::size_t busy = 0;
  for (auto& [start, e] : by_start_) busy += e->users > 0 ? 1 : 0;
  for (auto& e : dead_) busy += e->users > 0 ? 1 : 0;
  if (busy > 0) TW_WARN("verbs", "registration cache destroyed with " << busy << " entries in use");
}

Result<RegistrationCache::Entry*> RegistrationCache::acquire(const void* address,
                                                             std::size_t length) {
  const auto first = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t last = first + std::max<std::size_t>(length, 1);
  std::lock_guard lock(mutex_);
  apply_invalidations_locked();
  collect_locked();
  auto it = by_start_.upper_bound(first);
  for (int k = 0; k < kLookBack && it != by_start_.begin(); ++k) {
    --it;
    Entry* e = it->second.get();
    if (e->valid && e->end >= last) {
      ++e->users;
      lru_.splice(lru_.begin(), lru_, e->lru);
      ++stats_.hits;
      return e;
    }
  }
  ++stats_.misses;
  const std::uintptr_t start = first / page_ * page_;
  const std::uintptr_t end = (last + page_ - 1) / page_ * page_;
  auto region = register_(start, end - start);
  if (!region) return region.status();
  auto owned = std::make_unique<Entry>();
  Entry* e = owned.get();
  e->start = start;
  e->end = end;
  e->region = std::move(region).value();
  e->users = 1;
  lru_.push_front(e);
  e->lru = lru_.begin();
  by_start_.emplace(start, std::move(owned));
  ++stats_.entries;
  stats_.bytes += end - start;
  enforce_budget_locked();
  return e;
}

void RegistrationCache::release(Entry* entry) {
  std::lock_guard lock(mutex_);
  --entry->users;
  apply_invalidations_locked();
  if (!entry->valid || marked_) collect_locked();
}

std::uint32_t RegistrationCache::lkey(const Entry* entry) {
  return entry->region->lkey();
}
std::uint32_t RegistrationCache::rkey(const Entry* entry) {
  return entry->region->rkey();
}

void RegistrationCache::invalidate(std::uintptr_t start, std::size_t length) {
  std::lock_guard lock(pending_mutex_);
  if (pending_count_ == pending_.size()) {
    pending_overflow_ = true;
    return;
  }
  pending_[pending_count_++] = {start, start + length};
}

// Marks what the hooks reported (deregistration waits for collect_locked).
void RegistrationCache::apply_invalidations_locked() {
  std::array<Range, kPendingRanges> ranges;
  std::size_t count = 0;
  bool all = false;
  {
    std::lock_guard lock(pending_mutex_);
    count = pending_count_;
    all = pending_overflow_;
    std::copy_n(pending_.begin(), count, ranges.begin());
    pending_count_ = 0;
    pending_overflow_ = false;
  }
  if (all) {
    count = 1;
    ranges[0] = {0, UINTPTR_MAX};
  }
  for (std::size_t i = 0; i < count; ++i) {
    for (auto it = by_start_.begin(); it != by_start_.end() && it->first < ranges[i].end; ++it) {
      Entry* e = it->second.get();
      if (e->valid && e->end > ranges[i].start) {
        e->valid = false;
        marked_ = true;
        ++stats_.invalidated;
      }
    }
  }
}

void RegistrationCache::drop_locked(Entry* e, bool for_budget) {
  if (for_budget) ++stats_.evicted;
  e->valid = false;
  lru_.erase(e->lru);
  auto range = by_start_.equal_range(e->start);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.get() == e) {
      dead_.push_back(std::move(it->second));
      by_start_.erase(it);
      break;
    }
  }
}

// Deregisters dead entries nobody uses any more (on the caller's thread:
// acquire and release come from the engine, never from a hook).
void RegistrationCache::collect_locked() {
  if (marked_) {
    marked_ = false;
    std::vector<Entry*> marked;
    for (auto& [start, e] : by_start_) {
      if (!e->valid) marked.push_back(e.get());
    }
    for (Entry* e : marked) drop_locked(e, false);
  }
  if (dead_.empty()) return;
  auto keep =
      std::partition(dead_.begin(), dead_.end(), [](const auto& e) { return e->users > 0; });
  for (auto it = keep; it != dead_.end(); ++it) {
    --stats_.entries;
    stats_.bytes -= (*it)->end - (*it)->start;
  }
  dead_.erase(keep, dead_.end());
}

void RegistrationCache::enforce_budget_locked() {
  if (stats_.bytes <= max_bytes_) return;
  // Oldest unused first; entries in use stay whatever the budget.
  std::vector<Entry*> victims;
  std::size_t bytes = stats_.bytes;
  for (auto it = lru_.rbegin(); it != lru_.rend() && bytes > max_bytes_; ++it) {
    if ((*it)->users > 0 || !(*it)->valid) continue;
    victims.push_back(*it);
    bytes -= (*it)->end - (*it)->start;
  }
  for (Entry* e : victims) drop_locked(e, true);
  collect_locked();
}

RegistrationCacheStats RegistrationCache::stats() {
  std::lock_guard lock(mutex_);
  apply_invalidations_locked();
  return stats_;
}

}  // namespace tagwire::verbs
