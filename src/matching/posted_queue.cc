#include "matching/posted_queue.h"

namespace tagwire::matching {

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

}  // namespace tagwire::matching
