// The slot descriptor word and the sender's slot bookkeeping (one-sided
// send cancel: src/engine/slot_word.h, src/cancel/sender_slots.h): a slot is given to a new
// message only once its previous message is seen settled, and a ticket
// names one message only.
#include "cancel/sender_slots.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace tagwire::cancel {
namespace {

TEST(SlotWord, EncodesGenerationAndState) {
  const std::uint64_t w = SlotWord::make(7, SlotState::kCancelled);
  EXPECT_EQ(SlotWord::generation(w), 7u);
  EXPECT_EQ(SlotWord::state(w), SlotState::kCancelled);
  EXPECT_TRUE(SlotWord::valid(w));
  EXPECT_FALSE(SlotWord::valid(w | 3)) << "state 3 is not a state";
  EXPECT_FALSE(SlotWord::valid(std::uint64_t{1} << 32)) << "words travel in 32 bits";
  // Both outcomes of the message that found `w` name the next generation.
  EXPECT_EQ(SlotWord::matched(w), SlotWord::make(8, SlotState::kMatched));
  EXPECT_EQ(SlotWord::cancelled(w), SlotWord::make(8, SlotState::kCancelled));
  EXPECT_NE(SlotWord::matched(w), SlotWord::cancelled(w));
  // The generation wraps inside 30 bits, so words stay below 2^32.
  const std::uint64_t last = SlotWord::make(SlotWord::kGenerationLimit - 1, SlotState::kMatched);
  EXPECT_TRUE(SlotWord::valid(SlotWord::matched(last)));
  EXPECT_EQ(SlotWord::generation(SlotWord::matched(last)), 0u);
}

TEST(SenderSlots, EverySlotOnceThenNone) {
  SenderSlots slots;
  std::set<std::uint32_t> seen;
  for (std::uint32_t i = 0; i < kSlotsPerPeer; ++i) {
    auto t = slots.acquire();
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->expected, 0u) << "a fresh table is all zero (generation 0, free)";
    EXPECT_TRUE(seen.insert(t->index).second) << "slot " << t->index << " given twice";
    EXPECT_TRUE(slots.holds(*t));
  }
  EXPECT_EQ(slots.free_count(), 0u);
  EXPECT_FALSE(slots.acquire().has_value()) << "no slot while every message is unsettled";
}

TEST(SenderSlots, OnlyASettledWordFreesTheSlot) {
  SenderSlots slots;
  const SlotTicket t = *slots.acquire();
  // The word still expects the message: not settled.
  EXPECT_FALSE(slots.settle(t, t.expected));
  // A word of an older or later generation is not this message's outcome.
  EXPECT_FALSE(slots.settle(t, SlotWord::make(5, SlotState::kMatched)));
  EXPECT_FALSE(slots.settle(t, SlotWord::make(1, SlotState::kFree)));
  EXPECT_TRUE(slots.holds(t));
  EXPECT_TRUE(slots.settle(t, SlotWord::matched(t.expected)));
  EXPECT_FALSE(slots.holds(t)) << "a settled ticket names nothing any more";
  EXPECT_FALSE(slots.settle(t, SlotWord::matched(t.expected))) << "settled twice";
  // The next message in that slot expects exactly the settled word.
  std::vector<SlotTicket> all;
  while (auto next = slots.acquire()) all.push_back(*next);
  bool found = false;
  for (const SlotTicket& n : all) {
    if (n.index != t.index) continue;
    found = true;
    EXPECT_EQ(n.expected, SlotWord::matched(t.expected));
    EXPECT_FALSE(slots.holds(t)) << "the old ticket must not name the new message";
  }
  EXPECT_TRUE(found);
}

TEST(SenderSlots, AnUnsentMessageGivesItsSlotBackUnchanged) {
  SenderSlots slots;
  const SlotTicket t = *slots.acquire();
  slots.abandon(t);
  EXPECT_FALSE(slots.holds(t));
  EXPECT_EQ(slots.free_count(), static_cast<std::size_t>(kSlotsPerPeer));
  std::vector<SlotTicket> all;
  while (auto next = slots.acquire()) all.push_back(*next);
  for (const SlotTicket& n : all) {
    if (n.index == t.index) {
      EXPECT_EQ(n.expected, t.expected) << "the word never moved";
    }
  }
}

TEST(SenderSlots, ReadBackSettlesOnlyWhatMoved) {
  SenderSlots slots;
  std::vector<SlotTicket> tickets;
  for (int i = 0; i < 4; ++i) tickets.push_back(*slots.acquire());
  std::vector<std::uint64_t> words(kSlotsPerPeer, 0);
  words[tickets[0].index] = SlotWord::matched(tickets[0].expected);
  words[tickets[1].index] = SlotWord::cancelled(tickets[1].expected);
  // tickets[2], [3]: still expected (unexpected at the receiver).
  const std::size_t before = slots.free_count();
  slots.settle_all(words);
  EXPECT_EQ(slots.free_count(), before + 2);
  EXPECT_FALSE(slots.holds(tickets[0]));
  EXPECT_FALSE(slots.holds(tickets[1]));
  EXPECT_TRUE(slots.holds(tickets[2]));
  EXPECT_TRUE(slots.holds(tickets[3]));
}

}  // namespace
}  // namespace tagwire::cancel
