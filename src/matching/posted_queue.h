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
};

}  // namespace tagwire::matching
