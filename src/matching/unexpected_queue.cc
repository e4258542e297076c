#include "matching/unexpected_queue.h"

#include "matching/posted_queue.h"  // pattern_kind

namespace tagwire::matching {

std::array<BinKey, 4> UnexpectedQueue::bin_keys(const Envelope& e) {
  return {BinKey{e.context, e.source, e.tag}, BinKey{e.context, kAnySource, e.tag},
          BinKey{e.context, e.source, kAnyTag}, BinKey{e.context, kAnySource, kAnyTag}};
}

void UnexpectedQueue::push(const IncomingMessage& message) {
  std::uint32_t slot = pool_.allocate();
  Node& node = pool_.at(slot);
  node.message = message;
  node.slot = slot;
  auto keys = bin_keys(message.envelope);
  for (std::size_t kind = 0; kind < keys.size(); ++kind) {
    bins_.for_insert(keys[kind]).push_back(&node, kind);
  }
  const Envelope& e = message.envelope;
  by_request_[RequestKey{e.context, e.source, message.sender_request_id}].push_back(&node,
                                                                                    kRequestHook);
}

const IncomingMessage* UnexpectedQueue::peek(const ReceivePattern& pattern) const {
  const auto* bin = bins_.find(BinKey{pattern.context, pattern.source, pattern.tag});
  return bin == nullptr ? nullptr : &bin->front()->message;
}

std::optional<IncomingMessage> UnexpectedQueue::take(const ReceivePattern& pattern) {
  auto* bin = bins_.find(BinKey{pattern.context, pattern.source, pattern.tag});
  if (bin == nullptr) return std::nullopt;
  return remove(*bin->front());
}

std::optional<IncomingMessage> UnexpectedQueue::take_by_sender_request(
    ContextId context, Rank source, std::uint64_t sender_request_id) {
  auto* list = by_request_.find(RequestKey{context, source, sender_request_id});
  if (list == nullptr) return std::nullopt;
  return remove(*list->back());  // newest first
}

std::optional<IncomingMessage> UnexpectedQueue::remove(Node& node) {
  const Envelope& e = node.message.envelope;
  auto keys = bin_keys(e);
  for (std::size_t kind = 0; kind < keys.size(); ++kind) {
    auto* bin = bins_.find(keys[kind]);
    bin->remove(&node, kind);
    if (bin->empty()) bins_.emptied();
  }
  const RequestKey request{e.context, e.source, node.message.sender_request_id};
  auto* list = by_request_.find(request);
  list->remove(&node, kRequestHook);
  if (list->empty()) by_request_.erase(request);
  IncomingMessage message = node.message;
  pool_.release(node.slot);
  return message;
}

}  // namespace tagwire::matching
