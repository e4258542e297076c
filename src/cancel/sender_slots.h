// The sender's slots at one receiver, for one-sided send cancel
// (one_sided_send_cancel.cc; the word's format is engine/slot_word.h).
//
// The sender owns the slots it uses at each receiver. It gives a slot to a
// new message only once it has seen the slot's previous message settled
// (MATCHED or CANCELLED in the word, learnt from its own CAS or by reading
// the words back): so a slot holds one unsettled message at a time, a late
// claim or cancel can never touch a later message, and generations cannot
// alias (a generation only repeats after 2^30 uses of one slot). When every
// slot towards a receiver is taken, the message goes without one and its
// cancel takes the agent's path (CANCEL_REQUEST / CANCEL_REPLY).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/slot_word.h"

namespace tagwire::cancel {

using engine::kSlotsPerPeer;
using engine::SlotState;
using engine::SlotTicket;
using engine::SlotWord;

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

}  // namespace tagwire::cancel
