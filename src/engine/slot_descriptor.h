// Slot descriptors: one-sided send-cancel arbitration (docs/architecture.md §4,
// TAGWIRE_CANCEL_MODE=onesided).
//
// Each receiver keeps, in memory registered for remote atomics, a table of
// kSlotsPerPeer 64-bit words per sender. A word is `generation << 2 | state`
// and arbitrates one message at a time between two parties:
//  - the receiver's matcher claims the message (-> MATCHED) before it
//    copies, reads or acknowledges a byte of it;
//  - the sender's MPI_Cancel claims it for cancellation (-> CANCELLED) with
//    a remote compare-and-swap, without the receiver's CPU.
// Both swap from the same `expected` word, which the sender knows and the
// message carries, so exactly one of them succeeds.
//
// The sender owns the slots it uses at each receiver (SenderSlots). It gives
// a slot to a new message only once it has seen the slot's previous message
// settled (MATCHED or CANCELLED in the word, learnt from its own CAS or by
// reading the words back): so a slot holds one unsettled message at a time,
// a late claim or cancel can never touch a later message, and generations
// cannot alias (a generation only repeats after 2^30 uses of one slot).
// When every slot towards a receiver is taken, the message goes without one
// and its cancel takes the agent's path (CANCEL_REQUEST / CANCEL_REPLY).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

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

// The sender's view of its slots at one receiver.
class SenderSlots {
 public:
  SenderSlots() : slots_(kSlotsPerPeer) {}

  // A settled slot for a new message, or nothing if all are in use.
  std::optional<SlotTicket> acquire();

  // True while `ticket`'s message is the unsettled one in its slot.
  bool holds(const SlotTicket& ticket) const;

  // The slot's word was seen as `word` (a CAS's old value, our own
  // CANCELLED, or a read-back): if it settles the ticket's message, the
  // slot is free again. Returns true if it did.
  bool settle(const SlotTicket& ticket, std::uint64_t word);

  // The ticket's message never left (its send failed): the word still
  // holds what it expected, so the slot is free as it was.
  void abandon(const SlotTicket& ticket);

  // A read-back of all the words of this receiver's table for us.
  void settle_all(std::span<const std::uint64_t> words);

  std::size_t free_count() const { return free_; }
  std::size_t in_use() const { return slots_.size() - free_; }

 private:
  struct Slot {
    std::uint64_t last = 0;  // the settled word (free) or the expected one (in use)
    bool in_use = false;
  };
  std::vector<Slot> slots_;
  std::size_t free_ = kSlotsPerPeer;
  std::uint32_t next_ = 0;  // round-robin start, so reuse spreads over the table
};

}  // namespace tagwire::engine
