// EagerRing: where an eager message lands at its receiver and how both ends
// keep count (docs/architecture.md §3). Pure bookkeeping, no verbs: the transport posts
// the RDMA WRITEs, this file says where, what, and when a slot is free.
//
// Each receiver keeps, per sender, a ring of `slots` slots of `slot_size`
// bytes in memory registered for remote write. Message n (n = 1, 2, ... per
// sender) goes to slot (n - 1) % slots, right-aligned against an 8-byte
// trailer at the end of its slot:
//
//   ... | prefix | header | payload | trailer |      (slot end)
//   prefix  = header length u32, credit ack u32, marker u32
//   trailer = frame length u32 (prefix + header + payload), marker u32
//
// One WRITE covers prefix to trailer, so the trailer is the last thing it
// places, and the receiver polls a single fixed word per slot: no stale
// payload byte can ever sit where it looks. The marker is derived from n,
// so a slot's previous message cannot be mistaken for the next one, and
// it is repeated in the prefix: both must match before the frame is read
// (a guard against a device that places a message's bytes out of order).
// The receiver zeroes the trailer when it has consumed the message.
//
// Credits: a sender may have at most `slots` messages unconsumed. The
// receiver tells it how many it has consumed, cumulatively, either in the
// ack field of its own messages (free when traffic flows both ways) or by
// writing the count into a word at the sender (CreditReturn says when).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/small_copy.h"

namespace tagwire::verbs {

inline constexpr std::uint32_t kRingMaxSlots = 64;
inline constexpr std::uint32_t kRingMinSlots = 4;
inline constexpr std::size_t kRingPrefix = 12;
inline constexpr std::size_t kRingTrailer = 8;

struct RingLayout {
  std::uint32_t slots = 0;
  std::uint32_t slot_size = 0;  // a multiple of 64

  // The smallest layout whose slots carry `max_header` + `max_payload`.
  static RingLayout for_messages(std::size_t max_header, std::size_t max_payload,
                                 std::uint32_t slots);

  std::size_t ring_bytes() const { return std::size_t{slots} * slot_size; }
  // Slots per ring for a job of `peers` peers whose rings together may
  // take `budget` bytes: kRingMaxSlots while they fit, fewer as the job
  // grows, never under kRingMinSlots (past that point memory grows with
  // the job: ~8,000 peers with 8 KiB slots and 256 MiB).
  static std::uint32_t slots_for_job(std::size_t peers, std::uint32_t slot_size,
                                     std::size_t budget);
  // Offset of message `serial`'s slot within the ring.
  std::size_t slot_offset(std::uint64_t serial) const {
    return static_cast<std::size_t>((serial - 1) % slots) * slot_size;
  }
  std::size_t max_frame() const { return slot_size - kRingTrailer; }
};

// The marker message `serial` carries: never 0, which means "empty".
inline std::uint32_t ring_marker(std::uint64_t serial) {
  return static_cast<std::uint32_t>(serial % 0xffffffffu) + 1;
}

// ring_marker(serial + 1) from ring_marker(serial), without the division:
// a poll keeps the next marker instead of working it out each time.
inline std::uint32_t next_ring_marker(std::uint32_t marker) {
  return marker == 0xffffffffu ? 1 : marker + 1;
}

// Whether the trailer that ends a slot (at `slot_end`) carries `marker`:
// the poll's whole work while nothing has come, one load and one compare.
// The message may still be only partly there: peek_message() decides.
inline bool trailer_carries(std::uint8_t* slot_end, std::uint32_t marker) {
  const std::uint64_t trailer =
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(slot_end - kRingTrailer))
          .load(std::memory_order_acquire);
  return static_cast<std::uint32_t>(trailer >> 32) == marker;
}

// In the prefix's header length: the message came as a WRITE with
// immediate, which consumed one of the receiver's zero-length receives.
// The receiver's poll then looks at its completion queue at once, to post
// the receive again; other arrivals leave the queue to its periodic look
// (VerbsTransport::progress).
inline constexpr std::uint32_t kFrameWoke = std::uint32_t{1} << 31;

// The two small pieces that frame a message around its header and
// payload: the prefix and the trailer, as they must land. Worked out from
// the marker the sender keeps by increments (no division per message), for
// a frame laid out in a staging slot (a WRITE the device reads from
// registered memory) or in the endpoint's image (an inline WRITE, which
// the device copies at post time: VerbsEndpoint::write_inline).
struct FrameEnds {
  std::uint32_t prefix[3];  // header length (| kFrameWoke), ack, marker
  std::uint64_t trailer;    // frame length, marker
  std::size_t frame;        // prefix + header + payload
};

// `marker`: ring_marker() of the message's serial; `woke`: it goes as a
// WRITE with immediate.
inline FrameEnds frame_ends(std::uint32_t marker, std::uint32_t ack, std::size_t header,
                            std::size_t payload, bool woke = false) {
  const std::size_t frame = kRingPrefix + header + payload;
  return {{static_cast<std::uint32_t>(header) | (woke ? kFrameWoke : 0), ack, marker},
          (std::uint64_t{marker} << 32) | static_cast<std::uint32_t>(frame),
          frame};
}

// What to write: bytes [offset, offset + length) of the image; the frame
// ends the image, as it must end the remote slot.
struct StagedWrite {
  std::size_t offset = 0;
  std::size_t length = 0;
};

// Lays a message whose frame `ends` describe out at the end of `image` (a
// staging slot or the endpoint's inline image) exactly as it must land at the
// end of its slot at the receiver. The caller has checked that it fits
// (prefix + header + payload + trailer <= image.size(), and the frame <=
// max_frame()). Inline, with copy_small for the pieces: an 8-byte
// message's frame went through a call and two libc memcpy calls here, 96
// instructions of the sender's 1,203 (bench/instructions in the VM).
[[gnu::always_inline]] inline StagedWrite stage_frame(std::span<std::uint8_t> image,
                                                      const FrameEnds& ends,
                                                      std::span<const std::uint8_t> header,
                                                      std::span<const std::uint8_t> payload) {
  const std::size_t start = image.size() - kRingTrailer - ends.frame;
  std::uint8_t* p = image.data() + start;
  std::memcpy(p, ends.prefix, kRingPrefix);
  copy_small(p + kRingPrefix, header.data(), header.size());
  copy_small(p + kRingPrefix + header.size(), payload.data(), payload.size());
  std::memcpy(p + ends.frame, &ends.trailer, kRingTrailer);
  return {start, ends.frame + kRingTrailer};
}

// A frame whose payload the WRITE gathers from elsewhere (the caller's
// registered buffer): `image` gets its two ends, prefix and header at
// [0, head), the trailer right after them at [head, head + kRingTrailer).
// Written as head, payload, trailer, ending at the slot's end (the
// frame and trailer take `length` bytes there, as stage_frame's do), they
// land exactly as stage_frame's frame does, its trailer placed last.
struct GatheredEnds {
  std::size_t head = 0;    // prefix + header; the trailer follows in the image
  std::size_t length = 0;  // the whole frame and trailer at the receiver
};

inline GatheredEnds stage_frame_ends(std::span<std::uint8_t> image, const FrameEnds& ends,
                                     std::span<const std::uint8_t> header) {
  const std::size_t head = kRingPrefix + header.size();
  std::memcpy(image.data(), ends.prefix, kRingPrefix);
  std::memcpy(image.data() + kRingPrefix, header.data(), header.size());
  std::memcpy(image.data() + head, &ends.trailer, kRingTrailer);
  return {head, ends.frame + kRingTrailer};
}

struct ArrivedMessage {
  std::span<const std::uint8_t> header;
  std::span<const std::uint8_t> payload;
  std::uint32_t ack = 0;  // the sender's cumulative count of our messages it consumed
  bool woke = false;      // it consumed a receive (kFrameWoke)
};

enum class Arrival { kEmpty, kReady, kMalformed };

// Looks at the slot where message `serial` lands. kReady fills `out`
// (spans into `slot`, valid until release_slot()); kMalformed means the
// trailer claims this message but its lengths are impossible.
Arrival peek_message(std::span<std::uint8_t> slot, std::uint64_t serial, ArrivedMessage* out);

// The message in `slot` has been consumed: the slot may be written again
// once its credit reaches the sender.
void release_slot(std::span<std::uint8_t> slot);

// The sender's side: which serial comes next and whether the receiver has a
// free slot for it.
class CreditWindow {
 public:
  // `carried`: messages already sent and consumed (0 for a new connection).
  explicit CreditWindow(std::uint32_t slots, std::uint64_t carried = 0)
      : slots_(slots), sent_(carried), acked_(carried) {}
  bool can_send() const { return sent_ - acked_ < slots_; }
  // The serial of the next message; only when can_send().
  std::uint64_t take() { return ++sent_; }
  // The receiver's cumulative consumed count (mod 2^32). Counts that are
  // older than one already seen, or ahead of what was sent, are ignored:
  // piggy-backed acks and the credit word can arrive in either order.
  void on_ack(std::uint32_t consumed);
  std::uint64_t unconsumed() const { return sent_ - acked_; }

 private:
  std::uint32_t slots_;
  std::uint64_t sent_;
  std::uint64_t acked_;
};

// The receiver's side: how many messages of one sender it consumed, and
// whether it is time to tell the sender by an explicit write (when it has
// not been told for `threshold` messages in the ack field of ours).
class CreditReturn {
 public:
  explicit CreditReturn(std::uint32_t threshold) : threshold_(threshold) {}
  void consumed_one() { ++consumed_; }
  // The value for an outgoing ack field or credit write; counts as told.
  std::uint32_t tell() {
    told_ = consumed_;
    return consumed_;
  }
  bool write_due() const { return consumed_ - told_ >= threshold_; }

 private:
  std::uint32_t threshold_;
  std::uint32_t consumed_ = 0;
  std::uint32_t told_ = 0;
};

}  // namespace tagwire::verbs
