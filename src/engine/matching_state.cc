#include "engine/matching_state.h"

#include <cstring>

namespace tagwire::engine {

void MatchingState::keep(std::uint64_t cookie, const PendingMessage& message,
                         std::span<const std::uint8_t> data) {
  const std::uint32_t slot = kept_.allocate();
  assert(slot == slot_of(cookie));
  (void)cookie;
  Kept& k = kept_.at(slot);
  k.origin = message.origin;
  k.slot_expected = message.slot_expected;
  k.size = static_cast<std::uint32_t>(data.size());
  k.type = message.type;
  k.synchronous = message.synchronous;
  k.slot = message.slot;
  k.on_heap = message.type == MessageType::kRts || data.size() > kInlineBytes;
  std::uint8_t* to = k.bytes;
  if (k.on_heap) {
    k.heap.data = to = new std::uint8_t[data.size()];
    k.heap.remote_address = message.remote_address;
  }
  if (!data.empty()) std::memcpy(to, data.data(), data.size());
  held_bytes_ += held_by(k);
  if (held_bytes_ > held_peak_) held_peak_ = held_bytes_;
}

PendingMessage MatchingState::queued(const matching::IncomingMessage& envelope) const {
  const Kept& k = kept_.at(slot_of(envelope.cookie));
  PendingMessage m;
  m.type = k.type;
  m.origin = k.origin;
  m.source = envelope.envelope.source;
  m.tag = envelope.envelope.tag;
  m.synchronous = k.synchronous;
  m.sender_request_id = envelope.sender_request_id;
  m.length = envelope.length;
  m.remote_address = k.on_heap ? k.heap.remote_address : 0;
  m.slot = k.slot;
  m.slot_expected = k.slot_expected;
  return m;
}

std::unique_ptr<PendingMessage> MatchingState::take(const matching::IncomingMessage& envelope) {
  auto message = std::make_unique<PendingMessage>(queued(envelope));
  const auto data = queued_data(envelope);
  message->data.assign(data.begin(), data.end());
  drop(envelope);
  return message;
}

void MatchingState::drop(const matching::IncomingMessage& envelope) {
  const std::uint32_t slot = slot_of(envelope.cookie);
  Kept& k = kept_.at(slot);
  held_bytes_ -= held_by(k);
  if (k.on_heap) {
    delete[] k.heap.data;
    k.on_heap = false;
  }
  kept_.release(slot);
}

}  // namespace tagwire::engine
