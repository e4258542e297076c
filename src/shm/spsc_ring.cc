#include "shm/spsc_ring.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace tagwire::shm {

std::size_t ring_bytes_for(std::size_t header, std::size_t max_payload) {
  return std::bit_ceil(std::max(2 * record_bytes(header, max_payload), kMinRingBytes));
}

bool RingProducer::room_after_reload(std::size_t bytes) {
  cached_consumed_ = control_->consumed.load(std::memory_order_acquire);
  return fits_cached(bytes);
}

// What a record at the tail costs: its cells, plus the padding that skips
// to the ring's start when it would not fit before the end.
static std::size_t cost_at(std::uint64_t tail, std::size_t mask, std::size_t need) {
  const std::size_t offset = tail & mask;
  return offset + need > mask + 1 ? (mask + 1 - offset) + need : need;
}

bool RingProducer::has_room(std::size_t header, std::size_t payload) {
  return room_for(cost_at(tail_, mask_, record_bytes(header, payload)));
}

bool RingProducer::push_slow(std::span<const std::uint8_t> header,
                             std::span<const std::uint8_t> payload) {
  const std::size_t need = record_bytes(header.size(), payload.size());
  if (!room_for(cost_at(tail_, mask_, need))) return false;
  std::size_t offset = tail_ & mask_;
  if (offset + need > mask_ + 1) {
    // Padding to the end: the consumer skips it and finds the record at 0.
    detail::word_at(data_, offset)
        .store(detail::control_word(tail_, detail::kPaddingHeader, 0), std::memory_order_release);
    tail_ += mask_ + 1 - offset;
    offset = 0;
  }
  write_record(offset, header, payload);
  tail_ += need;
  return true;
}

bool RingConsumer::pending() const {
  const std::uint64_t word = detail::word_at(data_, head_ & mask_).load(std::memory_order_relaxed);
  return static_cast<std::uint32_t>(word) == detail::stamp_for(head_);
}

bool RingConsumer::skip_padding(RingRecord* record) {
  // The producer wrote the record that follows at the ring's start.
  head_ += mask_ + 1 - (head_ & mask_);
  control_->consumed.store(head_, std::memory_order_release);
  return peek(record);
}

void RingConsumer::mark_later_cells() {
  for (std::size_t at = kCell; at < peeked_bytes_; at += kCell) {
    detail::word_at(data_, (head_ + at) & mask_)
        .store(detail::stamp_for(head_ + at), std::memory_order_relaxed);
  }
}

}  // namespace tagwire::shm
