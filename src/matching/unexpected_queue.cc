#include "matching/unexpected_queue.h"

#include "matching/posted_queue.h"  // pattern_kind

namespace tagwire::matching {

std::array<BinKey, 4> UnexpectedQueue::bin_keys(const Envelope& e) {
  return {BinKey{e.context, e.source, e.tag}, BinKey{e.context, kAnySource, e.tag},
          BinKey{e.context, e.source, kAnyTag}, BinKey{e.context, kAnySource, kAnyTag}};
}

void UnexpectedQueue::push(const IncomingMessage& message) {
  const std::uint32_t slot = pool_.allocate();
  pool_.at(slot).message = message;
  auto keys = bin_keys(message.envelope);
  for (std::size_t kind = 0; kind < keys.size(); ++kind) {
    bins_.for_insert(keys[kind]).push_back(pool_, slot, kind);
  }
}

const IncomingMessage* UnexpectedQueue::peek(const ReceivePattern& pattern) const {
  const auto* bin = bins_.find(BinKey{pattern.context, pattern.source, pattern.tag});
  return bin == nullptr ? nullptr : &pool_.at(bin->front()).message;
}

std::optional<IncomingMessage> UnexpectedQueue::take(const ReceivePattern& pattern) {
  auto* bin = bins_.find(BinKey{pattern.context, pattern.source, pattern.tag});
  if (bin == nullptr) return std::nullopt;
  return remove(bin->front());
}

std::optional<IncomingMessage> UnexpectedQueue::take_by_sender_request(
    ContextId context, Rank source, std::uint64_t sender_request_id) {
  const auto* bin = bins_.find(BinKey{context, source, kAnyTag});
  if (bin == nullptr) return std::nullopt;
  for (std::uint32_t slot = bin->back(); slot != kNoSlot;
       slot = pool_.at(slot).hooks[kSourceHook].prev) {  // newest first
    if (pool_.at(slot).message.sender_request_id == sender_request_id) return remove(slot);
  }
  return std::nullopt;
}

std::optional<IncomingMessage> UnexpectedQueue::remove(std::uint32_t slot) {
  const IncomingMessage message = pool_.at(slot).message;
  auto keys = bin_keys(message.envelope);
  for (std::size_t kind = 0; kind < keys.size(); ++kind) {
    auto* bin = bins_.find(keys[kind]);
    bin->remove(pool_, slot, kind);
    if (bin->empty()) bins_.emptied();
  }
  pool_.release(slot);
  return message;
}

}  // namespace tagwire::matching
