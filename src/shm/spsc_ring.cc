#include "shm/spsc_ring.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace tagwire::shm {

namespace {

// The control word: [payload length: 24][header length: 8][stamp: 32].
// The stamp is the record's cell number plus one (mod 2^32): last lap's
// word in the same cell differs from it by the ring's cell count, never 0
// mod 2^32, so a stale word is never taken for a fresh one.
constexpr std::uint32_t kPaddingHeader = 0xFF;

std::uint32_t stamp_for(std::uint64_t position) {
  return static_cast<std::uint32_t>(position / kCell + 1);
}

std::uint64_t control_word(std::uint64_t position, std::uint32_t header, std::uint64_t payload) {
  return (payload << 40) | (std::uint64_t{header} << 32) | stamp_for(position);
}

std::atomic_ref<std::uint64_t> word_at(std::uint8_t* data, std::uint64_t offset) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(data + offset));
}

std::atomic_ref<const std::uint64_t> word_at(const std::uint8_t* data, std::uint64_t offset) {
  return std::atomic_ref<const std::uint64_t>(
      *reinterpret_cast<const std::uint64_t*>(data + offset));
}

// memcpy for the few bytes of a small record without a call into libc:
// two overlapping fixed-size copies cover any length from 8 to 64 (an
// 8-byte message is a 40-byte header and 8 bytes of payload).
[[gnu::always_inline]] inline void copy_bytes(std::uint8_t* to, const std::uint8_t* from,
                                              std::size_t n) {
  if (n >= 8 && n <= 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n > 16 && n <= 32) {
    std::memcpy(to, from, 16);
    std::memcpy(to + n - 16, from + n - 16, 16);
  } else if (n > 32 && n <= 64) {
    std::memcpy(to, from, 32);
    std::memcpy(to + n - 32, from + n - 32, 32);
  } else if (n != 0) {
    std::memcpy(to, from, n);
  }
}

}  // namespace

std::size_t ring_bytes_for(std::size_t header, std::size_t max_payload) {
  return std::bit_ceil(std::max(2 * record_bytes(header, max_payload), kMinRingBytes));
}

bool RingProducer::room_for(std::size_t bytes) {
  const std::uint64_t capacity = mask_ + 1;
  if (tail_ + bytes - cached_consumed_ <= capacity) return true;
  cached_consumed_ = control_->consumed.load(std::memory_order_acquire);
  return tail_ + bytes - cached_consumed_ <= capacity;
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

bool RingProducer::push(std::span<const std::uint8_t> header,
                        std::span<const std::uint8_t> payload) {
  const std::size_t need = record_bytes(header.size(), payload.size());
  if (!room_for(cost_at(tail_, mask_, need))) return false;
  std::size_t offset = tail_ & mask_;
  if (offset + need > mask_ + 1) {
    // Padding to the end: the consumer skips it and finds the record at 0.
    word_at(data_, offset).store(control_word(tail_, kPaddingHeader, 0), std::memory_order_release);
    tail_ += mask_ + 1 - offset;
    offset = 0;
  }
  std::uint8_t* record = data_ + offset;
  // (A transport record has no header: its span's data may be null.)
  copy_bytes(record + 8, header.data(), header.size());
  copy_bytes(record + 8 + header.size(), payload.data(), payload.size());
  // One release store publishes the record.
  word_at(data_, offset)
      .store(control_word(tail_, static_cast<std::uint32_t>(header.size()), payload.size()),
             std::memory_order_release);
  tail_ += need;
  return true;
}

bool RingConsumer::pending() const {
  const std::uint64_t word = word_at(data_, head_ & mask_).load(std::memory_order_relaxed);
  return static_cast<std::uint32_t>(word) == stamp_for(head_);
}

bool RingConsumer::peek(RingRecord* record) {
  for (;;) {
    const std::size_t offset = head_ & mask_;
    const std::uint64_t word = word_at(data_, offset).load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(word) != stamp_for(head_)) return false;
    const auto header = static_cast<std::uint32_t>((word >> 32) & 0xFF);
    if (header == kPaddingHeader) {
      head_ += mask_ + 1 - offset;
      control_->consumed.store(head_, std::memory_order_release);
      continue;
    }
    const std::uint64_t payload = word >> 40;
    const std::uint8_t* bytes = data_ + offset + 8;
    record->header = {bytes, header};
    record->payload = {bytes + header, static_cast<std::size_t>(payload)};
    peeked_bytes_ = record_bytes(header, payload);
    return true;
  }
}

void RingConsumer::release() {
  for (std::size_t at = kCell; at < peeked_bytes_; at += kCell) {
    word_at(data_, (head_ + at) & mask_).store(stamp_for(head_ + at), std::memory_order_relaxed);
  }
  head_ += peeked_bytes_;
  peeked_bytes_ = 0;
  control_->consumed.store(head_, std::memory_order_release);
}

}  // namespace tagwire::shm
