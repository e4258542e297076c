// The slot descriptor's word: the format one-sided send cancel
// (src/cancel/one_sided_send_cancel.cc, TAGWIRE_CANCEL_MODE=onesided) puts
// in a receiver's registered table and in every slotted EAGER or RTS header.
// It lives here, below the cancel layer, because the wire checks it and a
// request carries a ticket; what the word means to each party, and how a
// sender reuses slots, is the cancel layer's (src/cancel/sender_slots.h).
//
// Each receiver keeps kSlotsPerPeer 64-bit words per sender. A word is
// `generation << 2 | state` and arbitrates one message at a time: the
// receiver's matcher swaps it to MATCHED before it copies, reads or
// acknowledges a byte, the sender's MPI_Cancel swaps it to CANCELLED with a
// remote compare-and-swap; both swap from the same `expected` word, which the
// message carries, so exactly one of them succeeds.
#pragma once

#include <cstdint>

namespace tagwire::engine {

inline constexpr std::uint32_t kSlotsPerPeer = 64;

enum class SlotState : std::uint32_t { kFree = 0, kMatched = 1, kCancelled = 2 };

// The word's layout. Words stay below 2^32 so that a header carries one in
// 32 bits.
struct SlotWord {
  static constexpr std::uint32_t kGenerationLimit = 1u << 30;
  static std::uint64_t make(std::uint32_t generation, SlotState state) {
    return (std::uint64_t{generation % kGenerationLimit} << 2) | static_cast<std::uint64_t>(state);
  }
  static std::uint32_t generation(std::uint64_t word) {
    return static_cast<std::uint32_t>(word >> 2) % kGenerationLimit;
  }
  static SlotState state(std::uint64_t word) { return static_cast<SlotState>(word & 3); }
  static bool valid(std::uint64_t word) {
    return word < (std::uint64_t{1} << 32) && (word & 3) != 3;
  }
  // What the message whose slot held `expected` turns the word into.
  static std::uint64_t matched(std::uint64_t expected) {
    return make(generation(expected) + 1, SlotState::kMatched);
  }
  static std::uint64_t cancelled(std::uint64_t expected) {
    return make(generation(expected) + 1, SlotState::kCancelled);
  }
};

// A message's claim on a slot: which one, and the word it expects there.
struct SlotTicket {
  std::uint32_t index = 0;
  std::uint64_t expected = 0;
};

}  // namespace tagwire::engine
