// Every matching rule, held against both the indexed Matcher and the
// ListMatcher reference model.
#include <gtest/gtest.h>

#include <vector>

#include "matching/list_matcher.h"
#include "matching/matcher.h"

namespace tagwire::matching {
namespace {

template <typename M>
class MatcherRules : public ::testing::Test {
 protected:
  M m;
  std::uint64_t next_cookie = 1000;

  IncomingMessage msg(ContextId c, Rank s, Tag t, std::uint64_t request_id = 0) {
    return IncomingMessage{Envelope{c, s, t}, request_id, 8, next_cookie++};
  }
  static ReceivePattern pat(ContextId c, Rank s, Tag t) { return ReceivePattern{c, s, t}; }
};

using Implementations = ::testing::Types<Matcher, ListMatcher>;
TYPED_TEST_SUITE(MatcherRules, Implementations);

TYPED_TEST(MatcherRules, PostedReceiveMatchesArrivingMessage) {
  auto post = this->m.post_receive(this->pat(1, 2, 3), 77);
  EXPECT_FALSE(post.matched);
  auto arrival = this->m.arrive(this->msg(1, 2, 3));
  ASSERT_TRUE(arrival.matched);
  EXPECT_EQ(arrival.receive_cookie, 77u);
  EXPECT_EQ(this->m.posted_count(), 0u);
  EXPECT_EQ(this->m.unexpected_count(), 0u);
}

TYPED_TEST(MatcherRules, UnexpectedMessageSatisfiesLaterReceive) {
  auto message = this->msg(1, 2, 3);
  EXPECT_FALSE(this->m.arrive(message).matched);
  EXPECT_EQ(this->m.unexpected_count(), 1u);
  auto post = this->m.post_receive(this->pat(1, 2, 3), 5);
  ASSERT_TRUE(post.matched);
  EXPECT_EQ(post.message, message);
  EXPECT_EQ(this->m.unexpected_count(), 0u);
  EXPECT_EQ(this->m.posted_count(), 0u);
}

TYPED_TEST(MatcherRules, ContextSourceAndTagMustAllAgree) {
  this->m.post_receive(this->pat(1, 2, 3), 1);
  EXPECT_FALSE(this->m.arrive(this->msg(0, 2, 3)).matched);  // other communicator
  EXPECT_FALSE(this->m.arrive(this->msg(1, 0, 3)).matched);  // other source
  EXPECT_FALSE(this->m.arrive(this->msg(1, 2, 4)).matched);  // other tag
  EXPECT_EQ(this->m.posted_count(), 1u);
  EXPECT_EQ(this->m.unexpected_count(), 3u);
  // A wildcard never crosses communicators either.
  EXPECT_FALSE(this->m.post_receive(this->pat(2, kAnySource, kAnyTag), 2).matched);
}

TYPED_TEST(MatcherRules, WildcardsMatchAnySourceAnyTagAndBoth) {
  this->m.post_receive(this->pat(0, kAnySource, 9), 1);
  this->m.post_receive(this->pat(0, 4, kAnyTag), 2);
  this->m.post_receive(this->pat(0, kAnySource, kAnyTag), 3);
  auto a = this->m.arrive(this->msg(0, 7, 9));  // only the ANY_SOURCE and both-wild accept it
  ASSERT_TRUE(a.matched);
  EXPECT_EQ(a.receive_cookie, 1u);
  auto b = this->m.arrive(this->msg(0, 4, 100));  // ANY_TAG from 4 and both-wild
  ASSERT_TRUE(b.matched);
  EXPECT_EQ(b.receive_cookie, 2u);
  auto c = this->m.arrive(this->msg(0, 5, 5));
  ASSERT_TRUE(c.matched);
  EXPECT_EQ(c.receive_cookie, 3u);
}

TYPED_TEST(MatcherRules, PostedReceivesMatchInPostOrderAcrossWildcards) {
  // An ANY_SOURCE receive posted first wins over an exact one posted later...
  this->m.post_receive(this->pat(0, kAnySource, 1), 10);
  this->m.post_receive(this->pat(0, 3, 1), 11);
  EXPECT_EQ(this->m.arrive(this->msg(0, 3, 1)).receive_cookie, 10u);
  EXPECT_EQ(this->m.arrive(this->msg(0, 3, 1)).receive_cookie, 11u);
  // ...and an exact receive posted first wins over a later wildcard.
  this->m.post_receive(this->pat(0, 3, 1), 12);
  this->m.post_receive(this->pat(0, kAnySource, kAnyTag), 13);
  this->m.post_receive(this->pat(0, 3, kAnyTag), 14);
  EXPECT_EQ(this->m.arrive(this->msg(0, 3, 1)).receive_cookie, 12u);
  EXPECT_EQ(this->m.arrive(this->msg(0, 3, 1)).receive_cookie, 13u);
  EXPECT_EQ(this->m.arrive(this->msg(0, 3, 1)).receive_cookie, 14u);
}

TYPED_TEST(MatcherRules, MessagesFromOneSourceAreNotOvertaken) {
  std::vector<IncomingMessage> sent;
  for (Tag t : {5, 6, 5, 7}) {
    sent.push_back(this->msg(0, 1, t));
    this->m.arrive(sent.back());
  }
  // ANY_TAG receives take them in send order.
  for (const auto& expected : sent) {
    auto post = this->m.post_receive(this->pat(0, 1, kAnyTag), 0);
    ASSERT_TRUE(post.matched);
    EXPECT_EQ(post.message, expected);
  }
  // Same tag twice: the first sent is the first received.
  auto first = this->msg(0, 1, 5);
  auto second = this->msg(0, 1, 5);
  this->m.arrive(first);
  this->m.arrive(second);
  EXPECT_EQ(this->m.post_receive(this->pat(0, 1, 5), 0).message, first);
  EXPECT_EQ(this->m.post_receive(this->pat(0, kAnySource, 5), 0).message, second);
}

TYPED_TEST(MatcherRules, AnySourceReceiveTakesEarliestArrivalAcrossSources) {
  auto from2 = this->msg(0, 2, 1);
  auto from1 = this->msg(0, 1, 1);
  this->m.arrive(from2);
  this->m.arrive(from1);
  EXPECT_EQ(this->m.post_receive(this->pat(0, kAnySource, 1), 0).message, from2);
  EXPECT_EQ(this->m.post_receive(this->pat(0, kAnySource, kAnyTag), 0).message, from1);
}

TYPED_TEST(MatcherRules, ProbePeeksTheMessageAReceiveWouldGet) {
  auto first = this->msg(0, 1, 4);
  auto second = this->msg(0, 1, 4);
  this->m.arrive(first);
  this->m.arrive(second);
  EXPECT_FALSE(this->m.probe(this->pat(0, 1, 3)).has_value());
  EXPECT_FALSE(this->m.probe(this->pat(1, 1, 4)).has_value());
  // Probing twice names the same message and leaves it queued.
  EXPECT_EQ(this->m.probe(this->pat(0, kAnySource, kAnyTag)), first);
  EXPECT_EQ(this->m.probe(this->pat(0, 1, 4)), first);
  EXPECT_EQ(this->m.unexpected_count(), 2u);
  // A receive with the probed source and tag gets the probed message.
  auto status = *this->m.probe(this->pat(0, kAnySource, kAnyTag));
  auto post = this->m.post_receive(this->pat(0, status.envelope.source, status.envelope.tag), 0);
  ASSERT_TRUE(post.matched);
  EXPECT_EQ(post.message, first);
  EXPECT_EQ(this->m.probe(this->pat(0, 1, 4)), second);
}

TYPED_TEST(MatcherRules, ProbeWithAnyTagNamesEarliestFromThatSource) {
  auto a = this->msg(0, 2, 9);
  auto b = this->msg(0, 1, 8);
  auto c = this->msg(0, 1, 7);
  this->m.arrive(a);
  this->m.arrive(b);
  this->m.arrive(c);
  EXPECT_EQ(this->m.probe(this->pat(0, 1, kAnyTag)), b);
  EXPECT_EQ(this->m.probe(this->pat(0, kAnySource, 7)), c);
}

TYPED_TEST(MatcherRules, ProbeDoesNotSeePostedReceivesOrMatchedMessages) {
  this->m.post_receive(this->pat(0, 1, 1), 1);
  this->m.arrive(this->msg(0, 1, 1));  // matched at once, never pending
  EXPECT_FALSE(this->m.probe(this->pat(0, kAnySource, kAnyTag)).has_value());
}

TYPED_TEST(MatcherRules, MprobeRemovesSoNothingElseCanTakeIt) {
  auto first = this->msg(0, 3, 2);
  auto second = this->msg(0, 3, 2);
  this->m.arrive(first);
  this->m.arrive(second);
  EXPECT_EQ(this->m.mprobe(this->pat(0, kAnySource, kAnyTag)), first);
  // A probe and a receive now see the second message only.
  EXPECT_EQ(this->m.probe(this->pat(0, 3, 2)), second);
  EXPECT_EQ(this->m.post_receive(this->pat(0, 3, 2), 0).message, second);
  EXPECT_FALSE(this->m.mprobe(this->pat(0, 3, 2)).has_value());
  // A send cancel cannot reach an mprobed message either.
  this->m.arrive(this->msg(0, 3, 2, 42));
  ASSERT_TRUE(this->m.mprobe(this->pat(0, 3, 2)).has_value());
  EXPECT_FALSE(this->m.cancel_unexpected(0, 3, 42).has_value());
}

TYPED_TEST(MatcherRules, CancelReceiveOnlyWhilePosted) {
  auto keep = this->m.post_receive(this->pat(0, 1, 1), 1);
  auto drop = this->m.post_receive(this->pat(0, 1, 1), 2);
  EXPECT_TRUE(this->m.cancel_receive(drop.handle));
  EXPECT_FALSE(this->m.cancel_receive(drop.handle));  // already cancelled
  auto a = this->m.arrive(this->msg(0, 1, 1));
  EXPECT_EQ(a.receive_cookie, 1u);
  EXPECT_FALSE(this->m.cancel_receive(keep.handle));  // already matched
  // With both receives gone, the next message waits as unexpected.
  EXPECT_FALSE(this->m.arrive(this->msg(0, 1, 1)).matched);
  EXPECT_EQ(this->m.unexpected_count(), 1u);
}

TYPED_TEST(MatcherRules, StaleHandleNeverCancelsAReceiveThatReusedItsSlot) {
  auto old = this->m.post_receive(this->pat(0, 1, 1), 1);
  ASSERT_TRUE(this->m.arrive(this->msg(0, 1, 1)).matched);
  auto fresh = this->m.post_receive(this->pat(0, 1, 1), 2);  // may reuse old's slot
  EXPECT_FALSE(this->m.cancel_receive(old.handle));
  EXPECT_EQ(this->m.posted_count(), 1u);
  EXPECT_TRUE(this->m.cancel_receive(fresh.handle));
  EXPECT_FALSE(this->m.cancel_receive(ReceiveHandle{}));  // never issued
}

TYPED_TEST(MatcherRules, CancelUnexpectedTakesNewestWithThatSenderRequest) {
  // Three messages from one sender request (IMPI: only the last is still
  // attached to the active request), one from a sibling request.
  auto old1 = this->msg(0, 2, 5, 7);
  auto sibling = this->msg(0, 2, 5, 8);
  auto old2 = this->msg(0, 2, 5, 7);
  auto newest = this->msg(0, 2, 6, 7);
  for (const auto& x : {old1, sibling, old2, newest}) this->m.arrive(x);
  EXPECT_EQ(this->m.cancel_unexpected(0, 2, 7), newest);
  EXPECT_EQ(this->m.cancel_unexpected(0, 2, 7), old2);
  // Same request id from another source or context is someone else's.
  EXPECT_FALSE(this->m.cancel_unexpected(0, 3, 7).has_value());
  EXPECT_FALSE(this->m.cancel_unexpected(1, 2, 7).has_value());
  // Receives now see the survivors in arrival order.
  EXPECT_EQ(this->m.post_receive(this->pat(0, 2, 5), 0).message, old1);
  EXPECT_EQ(this->m.post_receive(this->pat(0, 2, 5), 0).message, sibling);
  EXPECT_FALSE(this->m.cancel_unexpected(0, 2, 7).has_value());  // old1 was received
}

// MPI-2.2 §3.8, first example: rank 2 probes ANY_SOURCE then receives from
// the probed source; each message is received with the right type.
TYPED_TEST(MatcherRules, SpecExampleProbeThenReceiveFromProbedSource) {
  for (bool rank1_first : {false, true}) {
    TypeParam rank2;
    // The cookie stands for the datatype: 100 = INTEGER from rank 0, 101 = REAL from rank 1.
    IncomingMessage from0{Envelope{0, 0, 0}, 1, 4, 100};
    IncomingMessage from1{Envelope{0, 1, 0}, 1, 4, 101};
    if (rank1_first) {
      rank2.arrive(from1);
      rank2.arrive(from0);
    } else {
      rank2.arrive(from0);
      rank2.arrive(from1);
    }
    for (int i = 0; i < 2; ++i) {
      auto status = rank2.probe(ReceivePattern{0, kAnySource, 0});
      ASSERT_TRUE(status.has_value());
      Rank source = status->envelope.source == 0 ? 0 : 1;  // statements 100 and 200
      auto post = rank2.post_receive(ReceivePattern{0, source, 0}, 0);
      ASSERT_TRUE(post.matched);
      EXPECT_EQ(post.message.cookie, source == 0 ? 100u : 101u) << "wrong type received";
      EXPECT_EQ(post.message, *status);
    }
    EXPECT_EQ(rank2.unexpected_count(), 0u);
  }
}

// MPI-2.2 §3.8, second example: the receives use ANY_SOURCE. With another
// receive intervening between probe and receive (the multi-threaded case
// the standard warns about), the ANY_SOURCE receive gets a message other
// than the probed one: the wrong type. The first example's receive, with
// the probed source, can never get the wrong type.
TYPED_TEST(MatcherRules, SpecExampleAnySourceReceiveMayGetAnotherMessage) {
  IncomingMessage from0{Envelope{0, 0, 0}, 1, 4, 100};
  IncomingMessage from1{Envelope{0, 1, 0}, 1, 4, 101};
  this->m.arrive(from0);
  this->m.arrive(from1);
  auto status = this->m.probe(ReceivePattern{0, kAnySource, 0});
  ASSERT_EQ(status->envelope.source, 0);
  // Intervening receive (another thread) takes the probed message.
  EXPECT_EQ(this->m.post_receive(ReceivePattern{0, kAnySource, 0}, 0).message, from0);
  auto wrong = this->m.post_receive(ReceivePattern{0, kAnySource, 0}, 0);  // statement 100
  ASSERT_TRUE(wrong.matched);
  EXPECT_NE(wrong.message.envelope.source, status->envelope.source);
  // With the first example's receive, the source is right or it waits.
  this->m.arrive(from1);
  auto right = this->m.post_receive(ReceivePattern{0, status->envelope.source, 0}, 9);
  EXPECT_FALSE(right.matched);
}

TEST(EnvelopeValidation, WildcardsAndNegativesAreRejectedWhereTheyDoNotBelong) {
  EXPECT_TRUE(validate_envelope(Envelope{0, 0, 0}).is_ok());
  EXPECT_EQ(validate_envelope(Envelope{0, kAnySource, 0}).code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(validate_envelope(Envelope{0, 0, kAnyTag}).code(), ErrorCode::kInvalidTag);
  EXPECT_TRUE(validate_pattern(ReceivePattern{0, kAnySource, kAnyTag}).is_ok());
  EXPECT_EQ(validate_pattern(ReceivePattern{0, -2, 0}).code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(validate_pattern(ReceivePattern{0, 0, -5}).code(), ErrorCode::kInvalidTag);
}

TEST(MatcherScale, DeepQueuesStillMatchTheRightEntry) {
  Matcher m;
  constexpr int kDepth = 20000;
  for (int i = 0; i < kDepth; ++i) m.post_receive(ReceivePattern{0, i % 7, i}, i);
  for (int i = kDepth - 1; i >= 0; --i) {
    auto a = m.arrive(IncomingMessage{Envelope{0, i % 7, i}, 0, 0, 0});
    ASSERT_TRUE(a.matched);
    ASSERT_EQ(a.receive_cookie, static_cast<std::uint64_t>(i));
  }
  EXPECT_EQ(m.posted_count(), 0u);
}

}  // namespace
}  // namespace tagwire::matching
