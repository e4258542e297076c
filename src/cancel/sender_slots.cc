#include "cancel/sender_slots.h"

namespace tagwire::cancel {

std::optional<SlotTicket> SenderSlots::acquire() {
  if (free_ == 0) return std::nullopt;
  const auto n = static_cast<std::uint32_t>(slots_.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t i = (next_ + k) % n;
    Slot& s = slots_[i];
    if (s.in_use) continue;
    s.in_use = true;
    --free_;
    next_ = (i + 1) % n;
    return SlotTicket{i, s.last};
  }
  return std::nullopt;
}

bool SenderSlots::holds(const SlotTicket& ticket) const {
  if (ticket.index >= slots_.size()) return false;
  const Slot& s = slots_[ticket.index];
  return s.in_use && s.last == ticket.expected;
}

bool SenderSlots::settle(const SlotTicket& ticket, std::uint64_t word) {
  if (!holds(ticket)) return false;
  const SlotState state = SlotWord::state(word);
  const std::uint32_t generation = SlotWord::generation(SlotWord::matched(ticket.expected));
  if (SlotWord::generation(word) != generation || state == SlotState::kFree) {
    return false;  // still the expected word: the message is not settled
  }
  Slot& s = slots_[ticket.index];
  s.last = word;
  s.in_use = false;
  ++free_;
  return true;
}

void SenderSlots::abandon(const SlotTicket& ticket) {
  if (!holds(ticket)) return;
  slots_[ticket.index].in_use = false;
  ++free_;
}

void SenderSlots::settle_all(std::span<const std::uint64_t> words) {
  for (std::uint32_t i = 0; i < slots_.size() && i < words.size(); ++i) {
    if (slots_[i].in_use) settle(SlotTicket{i, slots_[i].last}, words[i]);
  }
}

}  // namespace tagwire::cancel
