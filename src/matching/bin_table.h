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
    std::unique_ptr<Slot[]> old = std::move(slots_);
    std::size_t old_capacity = mask_ + 1;
    reset(capacity);
    for (std::size_t k = 0; k < old_capacity; ++k) {
      if (!old[k].used) continue;
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

}  // namespace tagwire::matching
