// A doubly-linked FIFO threaded through the nodes themselves.
//
// A node can sit in several lists at once (an unexpected message is in its
// exact bin, two wildcard bins and the cancel index); each membership uses
// its own hook, chosen by index. Unlinking is O(1) from any list.
#pragma once

#include <cstddef>

namespace tagwire::matching {

template <typename Node>
struct ListHook {
  Node* prev = nullptr;
  Node* next = nullptr;
};

// Node must have `ListHook<Node> hooks[N]`.
template <typename Node>
class IntrusiveList {
 public:
  bool empty() const { return head_ == nullptr; }
  Node* front() const { return head_; }
  Node* back() const { return tail_; }

  void push_back(Node* node, std::size_t hook) {
    auto& h = node->hooks[hook];
    h.prev = tail_;
    h.next = nullptr;
    if (tail_ != nullptr) {
      tail_->hooks[hook].next = node;
    } else {
      head_ = node;
    }
    tail_ = node;
  }

  void remove(Node* node, std::size_t hook) {
    auto& h = node->hooks[hook];
    if (h.prev != nullptr) {
      h.prev->hooks[hook].next = h.next;
    } else {
      head_ = h.next;
    }
    if (h.next != nullptr) {
      h.next->hooks[hook].prev = h.prev;
    } else {
      tail_ = h.prev;
    }
    h.prev = h.next = nullptr;
  }

 private:
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
};

}  // namespace tagwire::matching
