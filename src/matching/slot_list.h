// SlotList: a doubly linked FIFO of NodePool slots, threaded through
// 32-bit hooks inside the nodes.
//
// Why not IntrusiveList's pointers: a message in the unexpected queue is in
// four lists at once, and a flood queues millions of them; slot hooks are
// half the bytes (32 against 64 per message).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tagwire::matching {

inline constexpr std::uint32_t kNoSlot = UINT32_MAX;

struct SlotHook {
  std::uint32_t prev = kNoSlot;
  std::uint32_t next = kNoSlot;
};

class SlotList {
 public:
  bool empty() const { return head_ == kNoSlot; }
  std::uint32_t front() const { return head_; }
  std::uint32_t back() const { return tail_; }

  // `pool.at(slot).hooks[hook]` is this list's hook in that node.
  template <typename Pool>
  void push_back(Pool& pool, std::uint32_t slot, std::size_t hook) {
    SlotHook& h = pool.at(slot).hooks[hook];
    h.prev = tail_;
    h.next = kNoSlot;
    if (tail_ != kNoSlot) {
      pool.at(tail_).hooks[hook].next = slot;
    } else {
      head_ = slot;
    }
    tail_ = slot;
  }

  template <typename Pool>
  void remove(Pool& pool, std::uint32_t slot, std::size_t hook) {
    SlotHook& h = pool.at(slot).hooks[hook];
    if (h.prev != kNoSlot) {
      pool.at(h.prev).hooks[hook].next = h.next;
    } else {
      head_ = h.next;
    }
    if (h.next != kNoSlot) {
      pool.at(h.next).hooks[hook].prev = h.prev;
    } else {
      tail_ = h.prev;
    }
    h.prev = h.next = kNoSlot;
  }

 private:
  std::uint32_t head_ = kNoSlot;
  std::uint32_t tail_ = kNoSlot;
};

}  // namespace tagwire::matching
