// BinTable: the hash table behind the matching bins.
//
// Open addressing with linear probing and backward-shift deletion (no
// tombstones), sized to a power of two and kept at most half full. Why not
// std::unordered_map: a bin is created when its first entry arrives and
// erased when its last one leaves, which for ping-pong traffic is every
// message; unordered_map allocates and frees a node each time (it cost
// 3x the whole match at depth 0). Here that is a store into an array.
//
// Values must be cheap to move: inserting may rehash and move them, so a
// pointer returned by find() lives only until the next insert or erase.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

namespace tagwire::matching {

template <typename Key, typename Value, typename Hash>
class BinTable {
 public:
  explicit BinTable(std::size_t initial_capacity = 64) { reset(round_up(initial_capacity)); }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return mask_ + 1; }

  Value* find(const Key& key) {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  const Value* find(const Key& key) const { return const_cast<BinTable*>(this)->find(key); }

  // The value under `key`, default-constructed if absent.
  Value& operator[](const Key& key) {
    if ((size_ + 1) * 2 > capacity()) rehash(capacity() * 2);
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) break;
      if (s.key == key) return s.value;
    }
    Slot& s = slots_[i];
    s.used = true;
    s.key = key;
    s.value = Value{};
    ++size_;
    return s.value;
  }

  // Removes every entry whose value satisfies `pred`, in one pass, and
  // leaves room for `room` more entries without growing (never more than
  // the capacity it had). Why the room: a caller that sweeps periodically
  // refills the table to the same size before the next sweep, and
  // shrinking to what is left made it grow again through every power of
  // two, each a fresh allocation whose first touch page-faulted (a sixth
  // of the library's time in an 8-rank all-to-all that cycles tags).
  template <typename Pred>
  void remove_if(Pred pred, std::size_t room = 0) {
    std::size_t keep = 0;
    for (std::size_t k = 0; k <= mask_; ++k) {
      if (slots_[k].used && !pred(slots_[k].value)) ++keep;
    }
    const std::size_t wanted = round_up((keep + room) * 2);
    rebuild(std::max(round_up(keep * 2), std::min(wanted, capacity())), pred);
  }

  // Removes `key` if present; true if it was.
  bool erase(const Key& key) {
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    // Backward shift: pull later entries of the probe run into the hole so
    // that every key stays reachable from its home without tombstones.
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      std::size_t want = home(slots_[j].key);
      // Move j into the hole unless its home lies cyclically in (hole, j].
      bool home_after_hole = ((j - want) & mask_) < ((j - hole) & mask_);
      if (!home_after_hole) {
        slots_[hole] = std::move(slots_[j]);
        hole = j;
      }
    }
    slots_[hole].used = false;
    slots_[hole].value = Value{};
    --size_;
    // Shrink with hysteresis (grow at 1/2, shrink at 1/8) so that a burst
    // of distinct tags does not pin memory forever.
    if (capacity() > kMinCapacity && size_ * 8 < capacity()) rehash(capacity() / 2);
    return true;
  }

 private:
  static constexpr std::size_t kMinCapacity = 64;

  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };

  static std::size_t round_up(std::size_t n) {
    std::size_t c = kMinCapacity;
    while (c < n) c *= 2;
    return c;
  }

  std::size_t home(const Key& key) const { return Hash{}(key)&mask_; }

  void reset(std::size_t capacity) {
    slots_ = std::make_unique<Slot[]>(capacity);
    mask_ = capacity - 1;
    size_ = 0;
  }

  void rehash(std::size_t capacity) {
    rebuild(capacity, [](const Value&) { return false; });
  }

  // Moves every entry whose value `drop` refuses into a table of `capacity`.
  template <typename Pred>
  void rebuild(std::size_t capacity, Pred drop) {
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const std::size_t old_capacity = mask_ + 1;
    reset(capacity);
    for (std::size_t k = 0; k < old_capacity; ++k) {
      if (!old[k].used || drop(old[k].value)) continue;
      std::size_t i = home(old[k].key);
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i] = std::move(old[k]);
      ++size_;
    }
  }

  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// KeptBins: matching bins that outlive their last entry.
//
// A ping-pong empties its one bin with every message: creating and erasing
// it each time was most of an exact match's cost. Empty bins stay (a find
// treats them as absent) until kSweepAt of them have gathered, then all go
// in one pass, so a job that cycles through many tags still holds at most
// that many empty ones.
//
// Why 256 and not more: the table is touched at random, and a job that
// cycles tags fills it to 4 x kSweepAt slots of 40 bytes before each
// sweep. At 1024 (160 KiB a table, two tables a rank) an 8-rank
// all-to-all on 2 cores, where each rank's caches are cold after every
// switch, spent 13 % longer than at 256 (40 KiB); 64 was no faster.
template <typename Key, typename List, typename Hash>
class KeptBins {
 public:
  static constexpr std::size_t kSweepAt = 256;

  // The bin for `key`, made if absent; the caller adds an entry to it.
  List& for_insert(const Key& key) {
    if (last_bin_ != nullptr && last_key_ == key) {
      if (last_bin_->empty()) --empty_;  // an empty bin in use again
      return *last_bin_;
    }
    return for_insert_elsewhere(key);
  }
  // Kept out of line so that the common case above inlines small.
  [[gnu::noinline]] List& for_insert_elsewhere(const Key& key) {
    const std::size_t before = table_.size();
    List& bin = table_[key];
    if (table_.size() == before && bin.empty()) --empty_;  // an empty bin in use again
    remember(key, &bin);  // after the insert: a rehash moved every bin
    return bin;
  }
  // The bin for `key` if it holds anything. Valid until the next
  // for_insert() or emptied().
  List* find(const Key& key) {
    List* bin;
    if (last_bin_ != nullptr && last_key_ == key) {
      bin = last_bin_;
    } else {
      bin = table_.find(key);
      if (bin != nullptr) remember(key, bin);
    }
    return bin == nullptr || bin->empty() ? nullptr : bin;
  }
  const List* find(const Key& key) const { return const_cast<KeptBins*>(this)->find(key); }
  // After the caller took the last entry out of a bin.
  void emptied() {
    if (++empty_ < kSweepAt) return;
    // Room for the next kSweepAt empty bins: the table keeps its size
    // from sweep to sweep instead of regrowing.
    table_.remove_if([](const List& bin) { return bin.empty(); }, kSweepAt);
    last_bin_ = nullptr;  // the sweep rebuilt the table
    empty_ = 0;
  }
  // Bins held, empty ones included.
  std::size_t bins() const { return table_.size(); }
  // Slots in the table behind the bins.
  std::size_t capacity() const { return table_.capacity(); }

 private:
  void remember(const Key& key, List* bin) {
    last_key_ = key;
    last_bin_ = bin;
  }

  BinTable<Key, List, Hash> table_;
  std::size_t empty_ = 0;
  // The bin used last: a window of receives from one peer and tag, and the
  // messages that match them, all use one bin, found here without hashing.
  // Bins move only when the table rehashes (an insert that grows it) or is
  // swept, and both renew or drop this.
  mutable Key last_key_{};
  mutable List* last_bin_ = nullptr;
};

}  // namespace tagwire::matching
