// MatchingState: a queued message leaves the matcher only with its payload,
// by whichever way it leaves (a receive, mprobe, a send cancel).
#include "engine/matching_state.h"

#include <gtest/gtest.h>

namespace tagwire::engine {
namespace {

// An arrival as the engine makes it: the envelope carries next_cookie(),
// and a message the matcher queues is kept with its payload.
void arrive(MatchingState& state, int source, int tag, std::uint64_t sender_id, std::uint8_t byte) {
  matching::IncomingMessage incoming{{7, source, tag}, sender_id, 1, state.next_cookie()};
  auto arrival = state.matcher().on_untagged(incoming);
  ASSERT_FALSE(arrival.matched);
  auto message = std::make_unique<PendingMessage>();
  message->source = source;
  message->tag = tag;
  message->sender_request_id = sender_id;
  message->data = {byte};
  state.keep(incoming.cookie, std::move(message));
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
  EXPECT_EQ(state.queued(*head).data[0], 0xb2);

  auto posted = state.post_receive({7, 1, matching::kAnyTag}, 55);
  ASSERT_NE(posted.message, nullptr) << "a queued message matched, yet no payload came";
  EXPECT_EQ(posted.message->data[0], 0xa1) << "not the first message from rank 1";

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
  ASSERT_NE(last.message, nullptr);
  EXPECT_EQ(last.message->data[0], 0xd4);
  EXPECT_EQ(state.queued_count(), 0u);
  EXPECT_EQ(state.matcher().unexpected_count(), 0u);
}

TEST(MatchingState, AReceiveWithNothingQueuedWaitsWithoutAPayload) {
  MatchingState state;
  arrive(state, 1, 10, 100, 0x11);
  auto posted = state.post_receive({7, 2, 10}, 77);
  EXPECT_EQ(posted.message, nullptr);
  EXPECT_EQ(state.matcher().posted_count(), 1u);
  EXPECT_EQ(state.queued_count(), 1u) << "the other source's message must stay";
}

}  // namespace
}  // namespace tagwire::engine
