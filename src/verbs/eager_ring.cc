#include "verbs/eager_ring.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace tagwire::verbs {

namespace {

// The trailer is one aligned 64-bit word: read and cleared atomically, with
// acquire order so that nothing of the frame is read before it.
std::atomic_ref<std::uint64_t> trailer_of(std::span<std::uint8_t> slot) {
  return std::atomic_ref<std::uint64_t>(
      *reinterpret_cast<std::uint64_t*>(slot.data() + slot.size() - kRingTrailer));
}

}  // namespace

RingLayout RingLayout::for_messages(std::size_t max_header, std::size_t max_payload,
                                    std::uint32_t slots) {
  const std::size_t need = kRingPrefix + max_header + max_payload + kRingTrailer;
  RingLayout l;
  l.slots = slots;
  l.slot_size = static_cast<std::uint32_t>((need + 63) / 64 * 64);
  return l;
}

std::uint32_t RingLayout::slots_for_job(std::size_t peers, std::uint32_t slot_size,
                                        std::size_t budget) {
  if (peers == 0 || slot_size == 0) return kRingMaxSlots;
  const std::size_t fit = budget / (peers * slot_size);
  return static_cast<std::uint32_t>(std::clamp<std::size_t>(fit, kRingMinSlots, kRingMaxSlots));
}

Arrival peek_message(std::span<std::uint8_t> slot, std::uint64_t serial, ArrivedMessage* out) {
  const std::uint64_t trailer = trailer_of(slot).load(std::memory_order_acquire);
  const std::uint32_t marker = ring_marker(serial);
  if (static_cast<std::uint32_t>(trailer >> 32) != marker) return Arrival::kEmpty;
  const auto frame = static_cast<std::uint32_t>(trailer);
  if (frame < kRingPrefix || frame > slot.size() - kRingTrailer) return Arrival::kMalformed;
  const std::uint8_t* p = slot.data() + slot.size() - kRingTrailer - frame;
  std::uint32_t prefix[3];
  std::memcpy(prefix, p, kRingPrefix);
  // The trailer is in, the head not yet: the rest of the WRITE is on its way.
  if (prefix[2] != marker) return Arrival::kEmpty;
  const std::uint32_t header_length = prefix[0] & ~kFrameWoke;
  if (header_length > frame - kRingPrefix) return Arrival::kMalformed;
  out->header = {p + kRingPrefix, header_length};
  out->payload = {p + kRingPrefix + header_length, frame - kRingPrefix - header_length};
  out->ack = prefix[1];
  out->woke = (prefix[0] & kFrameWoke) != 0;
  return Arrival::kReady;
}

void release_slot(std::span<std::uint8_t> slot) {
  trailer_of(slot).store(0, std::memory_order_release);
}

void CreditWindow::on_ack(std::uint32_t consumed) {
  const std::uint32_t advance = consumed - static_cast<std::uint32_t>(acked_);
  if (advance == 0 || advance > sent_ - acked_) return;  // stale, or not ours to believe
  acked_ += advance;
}

}  // namespace tagwire::verbs
