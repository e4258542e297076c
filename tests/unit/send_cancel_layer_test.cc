// The send-cancel layer (src/cancel) against the engine's face it may use
// (engine/send_cancel.h), with no engine: the factory picks the mode
// TAGWIRE_CANCEL_MODE names, and the receiver's side answers a CANCEL_REQUEST
// from the matching state alone: YES with the message taken, NO with it
// left, a one-sided notice in an agent-mode job refused and counted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "cancel/cancel_settings.h"
#include "cancel/send_cancel_factory.h"
#include "engine/engine_counters.h"
#include "engine/matching_state.h"

namespace tagwire::cancel {
namespace {

using engine::Header;
using engine::MessageType;

// What the layer did through the site, recorded; the transport is never
// reached on these paths.
class RecordingSite final : public engine::CancelSite {
 public:
  struct Control {
    int peer;
    MessageType type;
    std::uint64_t request_id;
    std::uint8_t flags;
  };

  transport::Transport& cancel_transport() override {
    ADD_FAILURE() << "the transport is not needed on this path";
    std::abort();
  }
  engine::MatchingState& cancel_matching() override { return matching; }
  engine::EngineCounters& cancel_counters() override { return counters; }
  engine::Request* cancel_find(std::uint64_t) override { return nullptr; }
  Status cancel_send_header(int, const Header&) override { return Status::ok(); }
  void cancel_defer_header(int, const Header&) override {}
  void cancel_send_control(int peer, MessageType type, std::uint64_t request_id,
                           std::uint8_t flags) override {
    controls.push_back({peer, type, request_id, flags});
  }
  void cancel_maybe_complete(engine::Request*) override {}
  bool cancel_peer_dead(int) const override { return false; }
  int cancel_rank() const override { return 0; }
  int cancel_size() const override { return 2; }

  engine::MatchingState matching;
  engine::EngineCounters counters;
  std::vector<Control> controls;
};

// The layer TAGWIRE_CANCEL_MODE=`mode` makes (null if it refused).
std::unique_ptr<engine::SendCancel> layer_for(std::string_view mode, engine::CancelSite& site) {
  engine::Config config;
  if (!config.settings.set(cancel_mode_setting(), mode).is_ok()) return nullptr;
  auto layer = create_send_cancel(config, site);
  return layer ? std::move(layer).value() : nullptr;
}

// A CANCEL_REQUEST from rank 1 for its message `sender_id` on context 7.
Header cancel_request(std::uint64_t sender_id, std::uint64_t canceller) {
  Header h;
  h.type = MessageType::kCancelRequest;
  h.origin = 1;
  h.context = 7;
  h.source = 1;
  h.tag = 5;
  h.request_id = sender_id;
  h.remote_address = canceller;
  return h;
}

void queue_message(engine::MatchingState& state, std::uint64_t sender_id) {
  matching::IncomingMessage incoming{{7, 1, 5}, sender_id, 1, state.next_cookie()};
  ASSERT_FALSE(state.matcher().on_untagged(incoming).matched);
  engine::PendingMessage message;
  message.origin = 1;
  state.keep(incoming.cookie, message, {});
}

TEST(SendCancelFactory, PicksTheModeTheConfigNames) {
  RecordingSite site;
  auto agent = layer_for("agent", site);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->name(), "agent");
  EXPECT_FALSE(agent->arbitrates_matches()) << "the agent's mode must not claim every match";
  EXPECT_FALSE(agent->take_slot(1).has_value());
  std::vector<std::uint8_t> published;
  ASSERT_TRUE(agent->publish(&published).is_ok());
  EXPECT_TRUE(published.empty()) << "the agent's mode publishes no table";

  auto one_sided = layer_for("onesided", site);
  ASSERT_NE(one_sided, nullptr);
  EXPECT_EQ(one_sided->name(), "one-sided");
  EXPECT_TRUE(one_sided->arbitrates_matches());

  // Nothing set: the agent's.
  auto unset = create_send_cancel(engine::Config{}, site);
  ASSERT_TRUE(unset.is_ok());
  EXPECT_EQ((*unset)->name(), "agent");
}

TEST(AgentSendCancel, AnUnexpectedMessageIsTakenAndTheAnswerIsYes) {
  RecordingSite site;
  auto layer = layer_for("agent", site);
  queue_message(site.matching, 40);
  queue_message(site.matching, 41);
  layer->on_cancel_request(cancel_request(41, 900));
  ASSERT_EQ(site.controls.size(), 1u);
  EXPECT_EQ(site.controls[0].peer, 1);
  EXPECT_EQ(site.controls[0].type, MessageType::kCancelReply);
  EXPECT_EQ(site.controls[0].request_id, 900u) << "the reply must name the canceller's request";
  EXPECT_EQ(site.controls[0].flags, engine::kFlagCancelled);
  EXPECT_EQ(site.counters.messages_cancelled, 1u);
  EXPECT_EQ(site.matching.queued_count(), 1u) << "only the named message leaves";
  auto left = site.matching.matcher().probe({7, 1, 5});
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->sender_request_id, 40u);
}

TEST(AgentSendCancel, AMessageNoLongerQueuedIsRefused) {
  RecordingSite site;
  auto layer = layer_for("agent", site);
  queue_message(site.matching, 40);
  layer->on_cancel_request(cancel_request(77, 901));
  ASSERT_EQ(site.controls.size(), 1u);
  EXPECT_EQ(site.controls[0].flags, 0) << "a NO carries no cancelled flag";
  EXPECT_EQ(site.counters.cancels_refused, 1u);
  EXPECT_EQ(site.matching.queued_count(), 1u) << "a refused cancel must not touch other messages";
}

TEST(AgentSendCancel, AOneSidedNoticeIsRefusedNotObeyed) {
  RecordingSite site;
  auto layer = layer_for("agent", site);
  queue_message(site.matching, 40);
  Header notice = cancel_request(40, 0);
  notice.flags = engine::kFlagCancelled;
  layer->on_cancel_request(notice);
  EXPECT_TRUE(site.controls.empty()) << "a notice is never answered";
  EXPECT_EQ(site.counters.dropped_messages, 1u);
  EXPECT_EQ(site.matching.queued_count(), 1u)
      << "a notice cannot cancel a message in a job without slot descriptors";
}

TEST(AgentSendCancel, AReplyForNoSendIsDroppedAndCounted) {
  RecordingSite site;
  auto layer = layer_for("agent", site);
  Header reply;
  reply.type = MessageType::kCancelReply;
  reply.origin = 1;
  reply.request_id = 1234;
  reply.flags = engine::kFlagCancelled;
  layer->on_cancel_reply(reply);
  EXPECT_EQ(site.counters.dropped_messages, 1u);
  EXPECT_EQ(site.counters.sends_cancelled, 0u);
}

}  // namespace
}  // namespace tagwire::cancel
