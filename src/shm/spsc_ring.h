// SpscRing: one sender's messages to one receiver on the same host, in a
// byte ring inside the receiver's shared segment (common/shared_segment.h).
//
// Why this shape (docs/shared-memory.md): an 8-byte message must cost the
// receiver one cache line. A record starts on a 64-byte cell with one
// 64-bit control word, then the header, then the payload, back to back:
// with the 40-byte compact header an 8-byte message is 56 bytes, one cell.
// The control word carries a stamp derived from the record's absolute
// position, so the receiver knows a fresh record from last lap's control
// words (and, since release() marks them, from last lap's payload), and
// the sender publishes the whole record with one release store of that
// word.
//
// Exactly one process pushes and one polls (single producer, single
// consumer). The producer's position lives in the producer's memory; the
// consumer publishes how far it has read in `RingControl::consumed`, which
// the producer reads only when its cached copy says the ring is full.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/small_copy.h"

namespace tagwire::shm {

inline constexpr std::size_t kCell = 64;

// The consumer's side, shared: on a cache line of its own so that the
// producer's occasional read does not disturb the records.
struct alignas(kCell) RingControl {
  std::atomic<std::uint64_t> consumed{0};  // bytes the consumer has finished with
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// The bytes of a record a receiver sees; valid until the next poll.
struct RingRecord {
  std::span<const std::uint8_t> header;
  std::span<const std::uint8_t> payload;
};

// Largest header a record carries (the control word keeps its length in 8
// bits; 0xFF marks padding).
inline constexpr std::size_t kMaxRecordHeader = 128;
// Largest payload (the control word keeps its length in 24 bits).
inline constexpr std::size_t kMaxRecordPayload = (std::size_t{1} << 24) - 1;

// Bytes of ring a record needs: control word + header + payload, in cells.
constexpr std::size_t record_bytes(std::size_t header, std::size_t payload) {
  return (8 + header + payload + kCell - 1) / kCell * kCell;
}

// At least this much ring per sender: enough 4 KiB messages in flight to
// stream (a 16 KiB ring held osu's 4 KiB bandwidth to 1.9 GB/s, 32 KiB gave
// 4.5), small enough that the copies stay in cache (a 128 KiB ring: 1.4).
inline constexpr std::size_t kMinRingBytes = 32768;

// The ring for records of up to `header` + `max_payload` bytes: a power of
// two, at least twice the largest record (so one always fits once the
// consumer catches up), at least kMinRingBytes.
std::size_t ring_bytes_for(std::size_t header, std::size_t max_payload);

namespace detail {

// The control word: [payload length: 24][header length: 8][stamp: 32].
// The stamp is the record's cell number plus one (mod 2^32): last lap's
// word in the same cell differs from it by the ring's cell count, never 0
// mod 2^32, so a stale word is never taken for a fresh one.
inline constexpr std::uint32_t kPaddingHeader = 0xFF;

inline std::uint32_t stamp_for(std::uint64_t position) {
  return static_cast<std::uint32_t>(position / kCell + 1);
}

inline std::uint64_t control_word(std::uint64_t position, std::uint32_t header,
                                  std::uint64_t payload) {
  return (payload << 40) | (std::uint64_t{header} << 32) | stamp_for(position);
}

inline std::atomic_ref<std::uint64_t> word_at(std::uint8_t* data, std::uint64_t offset) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(data + offset));
}

}  // namespace detail

class RingProducer {
 public:
  RingProducer() = default;
  // `data`: the ring's bytes (a power of two, a multiple of kCell), shared
  // with the consumer; `control`: the consumer's progress.
  RingProducer(std::uint8_t* data, std::size_t bytes, const RingControl* control)
      : data_(data), mask_(bytes - 1), control_(control) {}

  bool attached() const { return data_ != nullptr; }

  // Appends one record; false when the ring has no room for it now (the
  // consumer has not caught up). Nothing is written then.
  // Inline: one per message; what is rare (a reload of the consumer's
  // progress, padding at the ring's end, a full ring) is push_slow's.
  bool push(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload) {
    const std::size_t need = record_bytes(header.size(), payload.size());
    const std::size_t offset = tail_ & mask_;
    if (offset + need > mask_ + 1 || !fits_cached(need)) {
      return push_slow(header, payload);
    }
    write_record(offset, header, payload);
    tail_ += need;
    return true;
  }

  // Asks for the next record's cell in exclusive state, ahead of the next
  // push: the consumer read that line last lap, and a store to it waits
  // for the line to come back from the consumer's core. Without this, a
  // stream's next message's stores queue behind that one, and the first
  // of its loads the CPU cannot serve from its store buffer waits for all
  // of them (perf put a third of the sender's time there, in an 8-byte
  // window test). Only for a stream: a consumer that has caught up polls
  // exactly that cell, so the line is taken from under its poll and must
  // come back before the next record can go (a ping-pong's round trip
  // 0.91 -> 0.72 us, an 8-byte allreduce 0.62 -> 0.41, without it;
  // docs/shared-memory.md). The caller knows which case it is in.
  void prefetch_next() const { prefetch_for_write(data_ + (tail_ & mask_)); }

  // Whether a record of this size would fit now (reads the consumer's
  // progress when the cached copy says no).
  bool has_room(std::size_t header, std::size_t payload);

 private:
  // Room by the consumer's progress as last read.
  bool fits_cached(std::size_t bytes) const {
    return tail_ + bytes - cached_consumed_ <= mask_ + 1;
  }
  bool room_for(std::size_t bytes) { return fits_cached(bytes) || room_after_reload(bytes); }
  bool room_after_reload(std::size_t bytes);
  bool push_slow(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload);
  // Copies the record to `offset` (room known) and publishes it with one
  // release store of its control word.
  void write_record(std::size_t offset, std::span<const std::uint8_t> header,
                    std::span<const std::uint8_t> payload) {
    std::uint8_t* record = data_ + offset;
    // (A transport record has no header: its span's data may be null.)
    copy_small(record + 8, header.data(), header.size());
    copy_small(record + 8 + header.size(), payload.data(), payload.size());
    detail::word_at(data_, offset)
        .store(
            detail::control_word(tail_, static_cast<std::uint32_t>(header.size()), payload.size()),
            std::memory_order_release);
  }

  // PREFETCHW (0F 0D /1) is a no-op on x86 CPUs without it.
  static void prefetch_for_write(const std::uint8_t* cell) {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*cell));
#else
    __builtin_prefetch(cell, 1, 3);
#endif
  }

  std::uint8_t* data_ = nullptr;
  std::size_t mask_ = 0;
  const RingControl* control_ = nullptr;
  std::uint64_t tail_ = 0;             // absolute position of the next record
  std::uint64_t cached_consumed_ = 0;  // the consumer's progress, last read
};

class RingConsumer {
 public:
  RingConsumer() = default;
  // The consumer writes too: release() marks the cells a record spanned.
  RingConsumer(std::uint8_t* data, std::size_t bytes, RingControl* control)
      : data_(data), mask_(bytes - 1), control_(control) {}

  // The next record if one has arrived, without taking it. Inline: the
  // receiver's poll; padding is skip_padding's.
  bool peek(RingRecord* record) {
    const std::size_t offset = head_ & mask_;
    const std::uint64_t word = detail::word_at(data_, offset).load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(word) != detail::stamp_for(head_)) return false;
    const auto header = static_cast<std::uint32_t>((word >> 32) & 0xFF);
    if (header == detail::kPaddingHeader) return skip_padding(record);
    const std::uint64_t payload = word >> 40;
    const std::uint8_t* bytes = data_ + offset + 8;
    record->header = {bytes, header};
    record->payload = {bytes + header, static_cast<std::size_t>(payload)};
    peeked_bytes_ = record_bytes(header, payload);
    return true;
  }
  // Finishes with the record peek() returned: its bytes go back to the
  // producer. The cells after its first held payload, and next lap a
  // record may start in any of them: the application's bytes could read
  // as that record's control word before the producer writes it. Each
  // such cell's first word gets this lap's stamp, which next lap never
  // expects (a one-cell record costs nothing here).
  void release() {
    if (peeked_bytes_ > kCell) mark_later_cells();
    head_ += peeked_bytes_;
    peeked_bytes_ = 0;
    control_->consumed.store(head_, std::memory_order_release);
  }
  // Whether a record (or padding) is waiting.
  bool pending() const;

 private:
  // Steps over padding to the ring's start and peeks there.
  bool skip_padding(RingRecord* record);
  void mark_later_cells();

  std::uint8_t* data_ = nullptr;
  std::size_t mask_ = 0;
  RingControl* control_ = nullptr;
  std::uint64_t head_ = 0;        // absolute position of the next record
  std::size_t peeked_bytes_ = 0;  // size of the record peek() returned
};

}  // namespace tagwire::shm
