// MatchingState: a queued message leaves the matcher only with its payload,
// by whichever way it leaves (a receive, mprobe, a send cancel). A receive
// reads a queued eager message in its slot and then drops it.
#include "engine/matching_state.h"

#include <gtest/gtest.h>
#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizers' allocators count for themselves (declared here: GCC
// ships no header for it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#define TAGWIRE_SANITIZER_HEAP 1
#endif

namespace tagwire::engine {
namespace {

// An arrival as the engine makes it: the envelope carries next_cookie(),
// and a message the matcher queues is kept with its payload.
void arrive(MatchingState& state, int source, int tag, std::uint64_t sender_id, std::uint8_t byte,
            MessageType type = MessageType::kEager) {
  matching::IncomingMessage incoming{{7, source, tag}, sender_id, 1, state.next_cookie()};
  auto arrival = state.matcher().on_untagged(incoming);
  ASSERT_FALSE(arrival.matched);
  PendingMessage message;
  message.type = type;
  message.origin = source + 100;
  const std::uint8_t data[] = {byte};
  state.keep(incoming.cookie, message, data);
}

TEST(MatchingState, EveryWayOutTakesThePayloadWithTheEnvelope) {
  MatchingState state;
  arrive(state, 1, 10, 100, 0xa1);
  arrive(state, 2, 20, 200, 0xb2);
  arrive(state, 3, 30, 300, 0xc3);
  arrive(state, 1, 11, 101, 0xd4);
  EXPECT_EQ(state.queued_count(), 4u);

  // A probe leaves it; its payload is there to read.
  auto head = state.matcher().probe({7, 2, matching::kAnyTag});
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(state.queued(*head).origin, 102);

  // An eager message taken by a receive: read in its slot, then dropped.
  auto posted = state.post_receive({7, 1, matching::kAnyTag}, 55);
  EXPECT_EQ(posted.message, nullptr) << "an eager message copied out of its slot";
  ASSERT_TRUE(posted.in_slot.has_value()) << "a queued message matched, yet no payload came";
  EXPECT_EQ(state.queued(*posted.in_slot).origin, 101);
  ASSERT_EQ(state.queued_data(*posted.in_slot).size(), 1u);
  EXPECT_EQ(state.queued_data(*posted.in_slot)[0], 0xa1) << "not the first message from rank 1";
  EXPECT_EQ(state.queued_count(), 4u) << "the slot went before the receive read it";
  state.drop(*posted.in_slot);
  EXPECT_EQ(state.queued_count(), 3u);

  auto probed = state.mprobe({7, 2, 20});
  ASSERT_NE(probed, nullptr);
  EXPECT_EQ(probed->sender_request_id, 200u);
  EXPECT_EQ(probed->data[0], 0xb2);

  auto cancelled = state.cancel_unexpected(7, 3, 300);
  ASSERT_NE(cancelled, nullptr);
  EXPECT_EQ(cancelled->data[0], 0xc3);
  EXPECT_EQ(state.cancel_unexpected(7, 3, 300), nullptr) << "cancelled twice";

  EXPECT_EQ(state.queued_count(), 1u);
  EXPECT_EQ(state.matcher().unexpected_count(), 1u) << "envelopes and payloads out of step";
  auto last = state.post_receive({7, matching::kAnySource, matching::kAnyTag}, 56);
  ASSERT_TRUE(last.in_slot.has_value());
  EXPECT_EQ(state.queued_data(*last.in_slot)[0], 0xd4);
  state.drop(*last.in_slot);
  EXPECT_EQ(state.queued_count(), 0u);
  EXPECT_EQ(state.matcher().unexpected_count(), 0u);
  EXPECT_EQ(state.held_bytes(), 0u) << "a dropped message still counted";
}

// A rendezvous offer (RTS) leaves as a whole PendingMessage: the read that
// follows outlives the receive's start, and the slot does not.
TEST(MatchingState, AReceiveTakesARendezvousOfferWhole) {
  MatchingState state;
  arrive(state, 4, 40, 400, 0xe5, MessageType::kRts);
  auto posted = state.post_receive({7, 4, 40}, 57);
  EXPECT_FALSE(posted.in_slot.has_value());
  ASSERT_NE(posted.message, nullptr);
  EXPECT_EQ(posted.message->type, MessageType::kRts);
  ASSERT_EQ(posted.message->data.size(), 1u);
  EXPECT_EQ(posted.message->data[0], 0xe5);
  EXPECT_EQ(state.queued_count(), 0u);
  EXPECT_EQ(state.held_bytes(), 0u);
}

TEST(MatchingState, AReceiveWithNothingQueuedWaitsWithoutAPayload) {
  MatchingState state;
  arrive(state, 1, 10, 100, 0x11);
  auto posted = state.post_receive({7, 2, 10}, 77);
  EXPECT_EQ(posted.message, nullptr);
  EXPECT_FALSE(posted.in_slot.has_value());
  EXPECT_EQ(state.matcher().posted_count(), 1u);
  EXPECT_EQ(state.queued_count(), 1u) << "the other source's message must stay";
}

// Bytes the heap holds now (the sanitizers' allocators keep their own count).
std::size_t heap_in_use() {
#ifdef TAGWIRE_SANITIZER_HEAP
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // large blocks are mmapped, outside the arena
#endif
}

// The helper thread's bound on the unexpected queue (Config's
// unexpected_limit) is on held_bytes(): it must not count less than the
// heap a queued message really takes, whatever the queue's depth (its
// tables grow by doubling, so some depths cost more than others).
TEST(MatchingState, HeldBytesCoverTheHeapAQueuedMessageTakes) {
  for (std::size_t depth : {1000u, 20000u, 33000u, 65600u, 131100u}) {
    const std::size_t before = heap_in_use();
    {
      MatchingState state;
      for (std::size_t i = 0; i < depth; ++i) {
        // An 8-byte message: one sender and tag, each its own request id.
        matching::IncomingMessage incoming{{7, 1, 5}, i, 8, state.next_cookie()};
        ASSERT_FALSE(state.matcher().on_untagged(incoming).matched);
        const std::uint8_t data[8] = {0x5a};
        state.keep(incoming.cookie, PendingMessage{}, data);
      }
      const std::size_t heap = heap_in_use() - before;
      const double per_message = static_cast<double>(heap) / static_cast<double>(depth);
      RecordProperty("bytes_per_message_at_" + std::to_string(depth), std::to_string(per_message));
      std::printf("%zu queued 8-byte messages: %.0f heap bytes each, %zu held each\n", depth,
                  per_message, state.held_bytes() / depth);
      EXPECT_LE(heap, state.held_bytes()) << "at a depth of " << depth;
      EXPECT_EQ(state.held_peak(), state.held_bytes());
      for (std::size_t i = 0; i < depth; ++i) {
        auto posted = state.post_receive({7, 1, 5}, 1000 + i);
        ASSERT_TRUE(posted.in_slot.has_value());
        state.drop(*posted.in_slot);
      }
      EXPECT_EQ(state.held_bytes(), 0u) << "a taken message still counted";
      EXPECT_EQ(state.held_peak(), MatchingState::kQueuedMessageBytes * depth);
    }
  }
}

}  // namespace
}  // namespace tagwire::engine
