#include "matching/posted_queue.h"

namespace tagwire::matching {

ReceiveHandle PostedQueue::push(const ReceivePattern& pattern, std::uint64_t cookie,
                                std::uint64_t sequence) {
  std::uint32_t slot = pool_.allocate();
  Node& node = pool_.at(slot);
  node.pattern = pattern;
  node.slot = slot;
  node.cookie = cookie;
  node.sequence = sequence;
  bins_.for_insert(BinKey{pattern.context, pattern.source, pattern.tag}).push_back(&node, 0);
  ++count_by_kind_[pattern_kind(pattern.source, pattern.tag)];
  return ReceiveHandle{slot, sequence};
}

std::pair<PostedQueue::Node*, IntrusiveList<PostedQueue::Node>*> PostedQueue::find_match(
    const Envelope& e) const {
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

std::optional<PostedQueue::Taken> PostedQueue::take_match(const Envelope& e) {
  auto [best, best_bin] = find_match(e);
  if (best == nullptr) return std::nullopt;
  Taken taken{best->cookie, ReceiveHandle{best->slot, best->sequence}};
  unlink(best_bin, *best);
  return taken;
}

bool PostedQueue::has_match(const Envelope& e) const {
  return find_match(e).first != nullptr;
}

bool PostedQueue::remove(ReceiveHandle handle) {
  if (handle.sequence == 0 || !pool_.contains(handle.slot)) return false;
  Node& node = pool_.at(handle.slot);
  if (node.sequence != handle.sequence) return false;  // matched, cancelled or reused
  const ReceivePattern& p = node.pattern;
  unlink(bins_.find(BinKey{p.context, p.source, p.tag}), node);
  return true;
}

void PostedQueue::unlink(IntrusiveList<Node>* bin, Node& node) {
  const ReceivePattern& p = node.pattern;
  bin->remove(&node, 0);
  if (bin->empty()) bins_.emptied();  // kept for the next receive of its kind
  --count_by_kind_[pattern_kind(p.source, p.tag)];
  node.sequence = 0;
  pool_.release(node.slot);
}

}  // namespace tagwire::matching
