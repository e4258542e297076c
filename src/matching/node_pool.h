// NodePool: stable storage for queue nodes, addressed by a 32-bit slot.
//
// Nodes live in fixed-size chunks that never move, so pointers stay valid
// while a node is allocated, and a freed slot is reused before the pool
// grows: the steady state allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace tagwire::matching {

template <typename Node>
class NodePool {
 public:
  static constexpr std::uint32_t kChunkBits = 10;
  static constexpr std::uint32_t kChunkSize = 1u << kChunkBits;

  // Returns a slot whose node is default-initialised by the caller.
  std::uint32_t allocate() {
    if (free_count_ == 0) grow();
    ++live_;
    return free_[--free_count_];
  }

  // The slot the next allocate() returns (growing the pool if it must),
  // for a caller that names a node before it makes it.
  std::uint32_t next() {
    if (free_count_ == 0) grow();
    return free_[free_count_ - 1];
  }

  // The free stack has room for every slot the pool has, so a release is
  // a store, with no capacity check: vector::push_back was an out-of-line
  // call of ~21 instructions per matched 8-byte message.
  void release(std::uint32_t slot) {
    free_[free_count_++] = slot;
    --live_;
  }

  Node& at(std::uint32_t slot) { return chunks_[slot >> kChunkBits][slot & (kChunkSize - 1)]; }
  const Node& at(std::uint32_t slot) const {
    return chunks_[slot >> kChunkBits][slot & (kChunkSize - 1)];
  }
  bool contains(std::uint32_t slot) const { return slot < chunks_.size() * kChunkSize; }

  std::size_t live() const { return live_; }

 private:
  [[gnu::noinline]] void grow() {
    auto base = static_cast<std::uint32_t>(chunks_.size() * kChunkSize);
    chunks_.push_back(std::make_unique<Node[]>(kChunkSize));
    free_.resize(chunks_.size() * kChunkSize);
    // In reverse so the lowest slot is handed out first.
    for (std::uint32_t i = kChunkSize; i-- > 0;) free_[free_count_++] = base + i;
  }

  std::vector<std::unique_ptr<Node[]>> chunks_;
  std::vector<std::uint32_t> free_;  // a stack of free slots, free_count_ deep
  std::size_t free_count_ = 0;
  std::size_t live_ = 0;
};

}  // namespace tagwire::matching
