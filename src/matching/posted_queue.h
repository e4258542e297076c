// PostedQueue: receives waiting for a message, matched in post order.
//
// A receive sits in the one bin keyed by its pattern (wildcards included).
// An arriving message (c, s, t) can only match receives in four bins:
// (c,s,t), (c,ANY,t), (c,s,ANY), (c,ANY,ANY). The earliest of those four
// heads by post sequence is the MPI answer, so a match costs at most four
// hash lookups whatever the queue depth; bins of wildcard kinds that hold
// nothing are not even looked up.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "matching/bin_table.h"
#include "matching/envelope.h"
#include "matching/intrusive_list.h"
#include "matching/node_pool.h"

namespace tagwire::matching {

// Which bin a pattern lives in: 0 exact, 1 any source, 2 any tag, 3 both.
inline std::size_t pattern_kind(Rank source, Tag tag) {
  return (source == kAnySource ? 1u : 0u) | (tag == kAnyTag ? 2u : 0u);
}

class PostedQueue {
 public:
  struct Taken {
    std::uint64_t cookie;
    ReceiveHandle handle;
  };

  // `sequence` must grow with every call (it orders receives across bins).
  ReceiveHandle push(const ReceivePattern& pattern, std::uint64_t cookie, std::uint64_t sequence);

  // Removes and returns the earliest-posted receive that matches.
  std::optional<Taken> take_match(const Envelope& envelope);

  // Whether take_match would find a receive now (nothing is removed).
  bool has_match(const Envelope& envelope) const;

  // Removes a receive by handle; false if it is no longer posted.
  bool remove(ReceiveHandle handle);

  std::size_t size() const { return pool_.live(); }

 private:
  struct Node {
    ReceivePattern pattern;
    std::uint64_t cookie = 0;
    std::uint64_t sequence = 0;  // 0 while the slot is free
    std::uint32_t slot = 0;
    std::uint8_t kind = 0;  // pattern_kind(pattern), kept: unlink needs it per message
    std::array<ListHook<Node>, 1> hooks;
  };
  using Bins = KeptBins<BinKey, IntrusiveList<Node>, BinKeyHash>;

  // The earliest-posted matching receive and its bin, or nulls.
  std::pair<Node*, IntrusiveList<Node>*> find_match(const Envelope& envelope) const;
  // Takes `node` out of `bin` (its own bin, found by the caller) and frees its slot.
  void unlink(IntrusiveList<Node>* bin, Node& node);

  NodePool<Node> pool_;
  Bins bins_;
  std::array<std::size_t, 4> count_by_kind_{};  // receives per pattern kind
  std::size_t wildcards_ = 0;                   // receives of kinds 1-3
};

// Inline: one call of each per message, and as calls they were a fifth
// of the receiver's matching instructions.

[[gnu::always_inline]] inline ReceiveHandle PostedQueue::push(const ReceivePattern& pattern,
                                                              std::uint64_t cookie,
                                                              std::uint64_t sequence) {
  std::uint32_t slot = pool_.allocate();
  Node& node = pool_.at(slot);
  node.pattern = pattern;
  node.slot = slot;
  node.cookie = cookie;
  node.sequence = sequence;
  node.kind = static_cast<std::uint8_t>(pattern_kind(pattern.source, pattern.tag));
  bins_.for_insert(BinKey{pattern.context, pattern.source, pattern.tag}).push_back(&node, 0);
  ++count_by_kind_[node.kind];
  if (node.kind != 0) ++wildcards_;
  return ReceiveHandle{slot, sequence};
}

inline std::pair<PostedQueue::Node*, IntrusiveList<PostedQueue::Node>*> PostedQueue::find_match(
    const Envelope& e) const {
  // Only exact receives posted (a window from known peers): their one bin.
  if (wildcards_ == 0) {
    auto* bin = const_cast<IntrusiveList<Node>*>(bins_.find({e.context, e.source, e.tag}));
    return {bin == nullptr ? nullptr : bin->front(), bin};
  }
  // The candidate bins, in the kind order of pattern_kind().
  const BinKey keys[4] = {{e.context, e.source, e.tag},
                          {e.context, kAnySource, e.tag},
                          {e.context, e.source, kAnyTag},
                          {e.context, kAnySource, kAnyTag}};
  Node* best = nullptr;
  IntrusiveList<Node>* best_bin = nullptr;
  for (std::size_t kind = 0; kind < 4; ++kind) {
    if (count_by_kind_[kind] == 0) continue;
    auto* bin = const_cast<IntrusiveList<Node>*>(bins_.find(keys[kind]));
    if (bin == nullptr) continue;
    Node* head = bin->front();
    if (best == nullptr || head->sequence < best->sequence) {
      best = head;
      best_bin = bin;
    }
  }
  return {best, best_bin};
}

inline std::optional<PostedQueue::Taken> PostedQueue::take_match(const Envelope& e) {
  auto [best, best_bin] = find_match(e);
  if (best == nullptr) return std::nullopt;
  Taken taken{best->cookie, ReceiveHandle{best->slot, best->sequence}};
  unlink(best_bin, *best);
  return taken;
}

[[gnu::always_inline]] inline void PostedQueue::unlink(IntrusiveList<Node>* bin, Node& node) {
  bin->remove(&node, 0);
  if (bin->empty()) bins_.emptied();  // kept for the next receive of its kind
  --count_by_kind_[node.kind];
  if (node.kind != 0) --wildcards_;
  node.sequence = 0;
  pool_.release(node.slot);
}

}  // namespace tagwire::matching
