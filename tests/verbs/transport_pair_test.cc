// The verbs transport end to end on a real device: two transports in one
// process, ranks 0 and 1 of a job of two, connected through each other's
// published addresses exactly as the bootstrap would. What the eager ring
// (verbs/eager_ring.h) must guarantee on the wire: every size intact and
// in order, a sender out of credit waits and loses nothing, credits ride
// on replies when traffic flows both ways, and only a kWake message raises
// the sleeping receiver's event. Every test runs with both ways of
// connecting: rdma_cm on first use (both ranks asking at once, so that the
// tie-break is exercised every time) and the QP exchange at start-up.
// Skips without a device (it runs in the soft-RoCE VM: ci/rxe-tests).
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../support/byte_patterns.h"
#include "test_device.h"
#include "verbs/verbs_transport.h"

namespace tagwire::verbs {
namespace {

using transport::Delivery;

struct Inbox final : transport::Receiver {
  std::vector<std::string> headers, payloads;
  std::vector<std::pair<int, Status>> unreachable;
  void on_peer_unreachable(int peer, const Status& why) override {
    unreachable.emplace_back(peer, why);
  }
  void on_message(std::span<const std::uint8_t> header,
                  std::span<const std::uint8_t> payload) override {
    headers.emplace_back(reinterpret_cast<const char*>(header.data()), header.size());
    payloads.emplace_back(reinterpret_cast<const char*>(payload.data()), payload.size());
  }
};

using tagwire::testing::bytes;
using tagwire::testing::payload_for;  // recognisable in every byte: a torn or misplaced WRITE shows

class TransportPair : public ::testing::TestWithParam<VerbsConnectChoice> {
 protected:
  static constexpr std::size_t kMaxPayload = 8192;

  void SetUp() override {
    std::string why;
    if (!testing::open_test_device(&why)) GTEST_SKIP() << why;
    const char* name = std::getenv("TAGWIRE_DEVICE");
    for (int rank = 0; rank < 2; ++rank) {
      VerbsOptions o;
      o.device = name != nullptr ? name : "";
      o.rank = rank;
      o.size = 2;
      o.max_payload = kMaxPayload;
      o.gather_from = kGatherFrom;
      o.connect = GetParam();
      auto t = create_verbs_transport(o);
      ASSERT_TRUE(t.is_ok()) << t.status().to_string();
      side_[rank] = std::move(t).value();
      side_[rank]->set_receiver(&inbox_[rank]);
    }
    std::vector<std::vector<std::uint8_t>> addresses = {side_[0]->address(), side_[1]->address()};
    for (auto& t : side_) ASSERT_TRUE(t->set_peer_addresses(addresses).is_ok());
    const bool lazy = GetParam() == VerbsConnectChoice::kCm;
    for (auto& t : side_) {
      EXPECT_EQ(t->connects_on_first_use(), lazy);
      EXPECT_EQ(t->counters().connections, lazy ? 0u : 1u);
    }
    const std::uint64_t registered_before[2] = {side_[0]->counters().registered_bytes,
                                                side_[1]->counters().registered_bytes};
    // Both ranks speak first, at once: under rdma_cm both start a
    // connection and the tie-break leaves exactly one QP for the pair.
    send(0, "hello", "from 0");
    send(1, "hello", "from 1");
    ASSERT_TRUE(progress_until([&] {
      return inbox_[0].payloads.size() == 1 && inbox_[1].payloads.size() == 1;
    })) << "the first messages did not arrive";
    EXPECT_EQ(inbox_[1].payloads[0], "from 0");
    EXPECT_EQ(inbox_[0].payloads[0], "from 1");
    for (int rank = 0; rank < 2; ++rank) {
      const auto c = side_[rank]->counters();
      EXPECT_EQ(c.connections, 1u);
      EXPECT_EQ(c.open_connections, 1u);
      // Under rdma_cm the ring for the peer's messages comes with the
      // connection (a rank pays for the peers it talks to); the QP
      // exchange registered every ring at start-up.
      if (lazy) {
        EXPECT_GE(c.registered_bytes, registered_before[rank] + 64 * 1024)
            << "rank " << rank << ": no ring registered with the connection";
      } else {
        EXPECT_EQ(c.registered_bytes, registered_before[rank]) << "rank " << rank;
      }
    }
    for (auto& in : inbox_) {
      in.headers.clear();
      in.payloads.clear();
    }
  }

  void TearDown() override {
    for (auto& t : side_) {
      if (t) {
        EXPECT_TRUE(t->disconnect_all().is_ok());
      }
    }
  }

  // Drives both sides until `done` or 20 s.
  template <typename Done>
  bool progress_until(Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      side_[0]->progress();
      side_[1]->progress();
      if (std::chrono::steady_clock::now() > until) return false;
    }
    return true;
  }

  // A payload the WRITE gathers (kGatherFrom bytes or more) stays the
  // caller's until its completion: every payload is kept for the test.
  void send(int from, const std::string& header, const std::string& payload,
            Delivery d = Delivery::kPolled) {
    const std::string& kept = kept_.emplace_back(payload);
    auto r =
        side_[from]->send(1 - from, bytes(header), bytes(kept), completion_[from].callback(), d);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const bool gathered =
        kept.size() >= kGatherFrom && side_[from]->counters().gathered_sends > gathered_seen_[from];
    gathered_seen_[from] = side_[from]->counters().gathered_sends;
    if (gathered) {
      EXPECT_EQ(*r, transport::Issued::kPending) << "a gathered payload is in use until its WRITE";
      ++pending_[from];
    } else {
      EXPECT_EQ(*r, transport::Issued::kDone)
          << "the transport copies: the caller's bytes are free";
    }
  }

  struct Completions {
    int done = 0;
    Status first_error;
    static void on_done(void* ctx, const Status& s) {
      auto* c = static_cast<Completions*>(ctx);
      ++c->done;
      if (!s.is_ok() && c->first_error.is_ok()) c->first_error = s;
    }
    transport::Completion callback() { return {&Completions::on_done, this}; }
  };

  static constexpr std::size_t kGatherFrom = 4096;
  std::unique_ptr<transport::Transport> side_[2];
  Inbox inbox_[2];
  std::deque<std::string> kept_;  // never moves: pending sends point into it
  Completions completion_[2];
  int pending_[2] = {0, 0};
  std::uint64_t gathered_seen_[2] = {0, 0};
};

TEST_P(TransportPair, EverySizeArrivesIntactAndInOrder) {
  // Around the inline limit, the slot size, and empty on both parts.
  std::vector<std::size_t> sizes = {0,
                                    1,
                                    7,
                                    8,
                                    64,
                                    100,
                                    150,
                                    200,
                                    255,
                                    256,
                                    1000,
                                    1024,
                                    1025,
                                    4095,
                                    4096,
                                    4097,
                                    kMaxPayload - 1,
                                    kMaxPayload};
  std::size_t n = 0;
  for (int lap = 0; lap < 12; ++lap) {  // 216 messages: more than three laps of the ring
    for (std::size_t size : sizes) {
      send(0, "h" + std::to_string(n), payload_for(n, size));
      ++n;
      // Receive now and then, so that the ring wraps while in use.
      if (n % 5 == 0) side_[1]->progress();
    }
  }
  ASSERT_TRUE(progress_until([&] {
    return inbox_[1].payloads.size() == n && completion_[0].done == pending_[0];
  })) << inbox_[1].payloads.size()
      << " of " << n << " arrived, " << completion_[0].done << " of " << pending_[0]
      << " gathered sends completed";
  ASSERT_TRUE(completion_[0].first_error.is_ok()) << completion_[0].first_error.to_string();
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(inbox_[1].headers[i], "h" + std::to_string(i)) << "out of order at " << i;
    ASSERT_EQ(inbox_[1].payloads[i], payload_for(i, sizes[i % sizes.size()])) << "message " << i;
  }
  EXPECT_TRUE(inbox_[0].payloads.empty());
  // The sizes from kGatherFrom up (4096, 4097, the last two) went gathered
  // whenever they went at once (not from the backlog, which copies).
  EXPECT_GT(side_[0]->counters().gathered_sends, 0u) << "no payload was gathered";
  EXPECT_LE(side_[0]->counters().gathered_sends, 12u * 4);
}

// A gathered payload is read by the NIC when the WRITE goes, so the send
// completes only with the WRITE; once it has, the caller may reuse its
// buffer and the receiver still has what was sent. Below the threshold the
// transport copies as before.
TEST_P(TransportPair, AGatheredPayloadCompletesWithItsWriteAndArrivesIntact) {
  std::string buffer = payload_for(1, 8000);
  auto r =
      side_[0]->send(1, bytes("g"), bytes(buffer), completion_[0].callback(), Delivery::kPolled);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(*r, transport::Issued::kPending);
  EXPECT_EQ(side_[0]->counters().gathered_sends, 1u);
  ASSERT_TRUE(progress_until([&] { return completion_[0].done == 1; }))
      << "the gathered WRITE never completed";
  ASSERT_TRUE(completion_[0].first_error.is_ok()) << completion_[0].first_error.to_string();
  const std::string sent = buffer;
  buffer.assign(buffer.size(), 'X');  // the caller's buffer is its own again
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 1; }));
  EXPECT_EQ(inbox_[1].payloads[0], sent);
  // A wake-up goes gathered too, with its immediate.
  send(0, "w", payload_for(2, 5000), Delivery::kWake);
  send(0, "s", payload_for(3, 100));
  ASSERT_TRUE(progress_until(
      [&] { return inbox_[1].payloads.size() == 3 && completion_[0].done == 1 + pending_[0]; }));
  EXPECT_EQ(pending_[0], 1);
  EXPECT_EQ(inbox_[1].payloads[1], payload_for(2, 5000));
  EXPECT_EQ(inbox_[1].payloads[2], payload_for(3, 100));
  EXPECT_EQ(side_[0]->counters().gathered_sends, 2u);
}

TEST_P(TransportPair, ASenderWithoutCreditWaitsAndLosesNothing) {
  // The receiver does not poll at all while 1,000 messages go out: only
  // the ring's worth can be written, the rest must wait at the sender.
  constexpr std::size_t kCount = 1000;
  for (std::size_t i = 0; i < kCount; ++i) send(0, "m", payload_for(i, 16 + i % 300));
  EXPECT_GT(side_[0]->counters().credit_waits, 0u);
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == kCount; }))
      << inbox_[1].payloads.size() << " of " << kCount << " arrived";
  for (std::size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(inbox_[1].payloads[i], payload_for(i, 16 + i % 300)) << "message " << i;
  }
  // A receiver that never sends returns its credit by explicit WRITEs.
  EXPECT_GT(side_[1]->counters().credit_writes, 0u);
}

// try_send (the engine's blocking eager send without a request) goes whole
// at once or not at all: it fills the ring, refuses once the window is
// shut, never overtakes a message waiting in the backlog, and what it sent
// keeps its place among send()'s messages.
TEST_P(TransportPair, TrySendGoesAtOnceOrNotAtAllAndKeepsOrder) {
  std::size_t n = 0;
  std::vector<std::string> expect;
  auto try_one = [&](std::size_t size) -> bool {
    const std::string h = "t" + std::to_string(n), p = payload_for(n, size);
    auto tried = side_[0]->try_send(1, bytes(h), bytes(p));
    EXPECT_TRUE(tried.is_ok()) << tried.status().to_string();
    if (!tried.is_ok() || !*tried) return false;
    expect.push_back(p);
    ++n;
    return true;
  };
  // The receiver does not poll: try_send takes the window and then
  // refuses. Small messages go inline, so the window alone limits them.
  std::size_t taken = 0;
  while (taken < 10000 && try_one(8 + taken % 32)) ++taken;
  ASSERT_GT(taken, 0u) << "a connected peer with credit took nothing";
  ASSERT_LT(taken, 10000u) << "try_send never refused: it went past the receiver's window";
  // A send() now waits in the sender's backlog. The receiver drains its
  // ring and writes the credit back, but the sender does not progress, so
  // the message is still waiting: try_send must not pass it.
  const std::string waiting = payload_for(n, 100);
  send(0, "t" + std::to_string(n), waiting);
  expect.push_back(waiting);
  ++n;
  EXPECT_GT(side_[0]->counters().credit_waits, 0u);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (inbox_[1].payloads.size() < taken && std::chrono::steady_clock::now() < until) {
    side_[1]->progress();
  }
  ASSERT_EQ(inbox_[1].payloads.size(), taken);
  EXPECT_FALSE(try_one(8)) << "try_send went ahead of a message in the backlog";
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == n; }))
      << inbox_[1].payloads.size() << " of " << n << " arrived";
  EXPECT_TRUE(try_one(8)) << "the backlog drained and credit is back";
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == n; }));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(inbox_[1].headers[i], "t" + std::to_string(i)) << "out of order at " << i;
    ASSERT_EQ(inbox_[1].payloads[i], expect[i]) << "message " << i;
  }
  // To self, and to a rank that is not in the job: never at once.
  auto self = side_[0]->try_send(0, bytes("h"), bytes("x"));
  ASSERT_TRUE(self.is_ok());
  EXPECT_FALSE(*self);
  auto nobody = side_[0]->try_send(7, bytes("h"), bytes("x"));
  ASSERT_TRUE(nobody.is_ok());
  EXPECT_FALSE(*nobody);
}

TEST_P(TransportPair, CreditRidesOnRepliesInAPingPong) {
  for (int i = 0; i < 2000; ++i) {
    const int from = i % 2;
    send(from, "ping", payload_for(static_cast<std::size_t>(i), 8));
    const std::size_t want = static_cast<std::size_t>(i / 2 + 1);
    ASSERT_TRUE(progress_until([&] { return inbox_[1 - from].payloads.size() == want; }));
  }
  // Every message acknowledged the one before it: no explicit credit WRITE.
  EXPECT_EQ(side_[0]->counters().credit_writes, 0u);
  EXPECT_EQ(side_[1]->counters().credit_writes, 0u);
  EXPECT_EQ(side_[0]->counters().credit_waits, 0u);
}

TEST_P(TransportPair, OnlyAWakeMessageRaisesTheSleepingReceiversEvent) {
  auto armed = side_[1]->arm();
  ASSERT_TRUE(armed.is_ok());
  ASSERT_TRUE(*armed) << "nothing pending: arm() must allow sleeping";
  pollfd fd{side_[1]->event_fd(), POLLIN, 0};
  ASSERT_GE(fd.fd, 0);
  send(0, "polled", "a");
  side_[0]->progress();
  EXPECT_EQ(poll(&fd, 1, 300), 0) << "a polled message must not raise the event";
  // ... but a receiver about to sleep sees it is there.
  armed = side_[1]->arm();
  ASSERT_TRUE(armed.is_ok());
  EXPECT_FALSE(*armed) << "arm() must report the message waiting in the ring";
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 1; }));

  armed = side_[1]->arm();
  ASSERT_TRUE(armed.is_ok() && *armed);
  send(0, "cancel-request", "b", Delivery::kWake);
  fd.revents = 0;
  EXPECT_EQ(poll(&fd, 1, 10000), 1) << "a kWake message must raise the event";
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 2; }));
  EXPECT_EQ(inbox_[1].headers[1], "cancel-request");
  EXPECT_EQ(side_[0]->counters().wake_writes, 1u);
}

TEST_P(TransportPair, MessagesToSelfNeverTouchTheNic) {
  auto r = side_[0]->send(0, bytes("self"), bytes("x"), {}, Delivery::kPolled);
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE(progress_until([&] { return inbox_[0].payloads.size() == 1; }));
  EXPECT_EQ(inbox_[0].headers[0], "self");
  EXPECT_TRUE(inbox_[1].payloads.empty());
}

TEST_P(TransportPair, OversizeMessagesAndBadRanksAreRefused) {
  const std::string big(kMaxPayload + 1, 'x');
  auto r = side_[0]->send(1, bytes("h"), bytes(big), {}, Delivery::kPolled);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  r = side_[0]->send(2, bytes("h"), bytes("x"), {}, Delivery::kPolled);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidRank);
  // Nothing half-sent: the next message is the first to arrive.
  send(0, "ok", "y");
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 1; }));
  EXPECT_EQ(inbox_[1].headers[0], "ok");
}

INSTANTIATE_TEST_SUITE_P(BothWays, TransportPair,
                         ::testing::Values(VerbsConnectChoice::kCm, VerbsConnectChoice::kExchange),
                         [](const ::testing::TestParamInfo<VerbsConnectChoice>& p) {
                           return p.param == VerbsConnectChoice::kCm ? "RdmaCm" : "Exchange";
                         });

// A peer that went away before this rank first spoke to it: rdma_cm finds
// nobody listening, gives up after its retries, and the transport says so
// to its receiver (the engine then fails what waits on that rank) instead
// of dropping the waiting messages in silence; later sends fail at once.
TEST(TransportUnreachable, APeerGoneBeforeFirstContactIsReportedWithTheLoss) {
  std::string why;
  if (!testing::open_test_device(&why)) GTEST_SKIP() << why;
  const char* name = std::getenv("TAGWIRE_DEVICE");
  std::unique_ptr<transport::Transport> side[2];
  Inbox inbox;
  for (int rank = 0; rank < 2; ++rank) {
    VerbsOptions o;
    o.device = name != nullptr ? name : "";
    o.rank = rank;
    o.size = 2;
    o.connect = VerbsConnectChoice::kCm;
    auto t = create_verbs_transport(o);
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    side[rank] = std::move(t).value();
  }
  side[0]->set_receiver(&inbox);
  std::vector<std::vector<std::uint8_t>> addresses = {side[0]->address(), side[1]->address()};
  ASSERT_TRUE(side[0]->set_peer_addresses(addresses).is_ok());
  side[1].reset();  // gone: nothing listens where it said it would
  for (int i = 0; i < 3; ++i) {
    auto r =
        side[0]->send(1, bytes("h"), bytes("lost " + std::to_string(i)), {}, Delivery::kPolled);
    ASSERT_TRUE(r.is_ok()) << "queued for the connection: " << r.status().to_string();
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (inbox.unreachable.empty() && std::chrono::steady_clock::now() < until) {
    side[0]->progress();
  }
  ASSERT_EQ(inbox.unreachable.size(), 1u) << "no report within 60 s";
  EXPECT_EQ(inbox.unreachable[0].first, 1);
  EXPECT_EQ(inbox.unreachable[0].second.code(), ErrorCode::kPeerFailed);
  EXPECT_NE(inbox.unreachable[0].second.message().find("3 messages"), std::string::npos)
      << inbox.unreachable[0].second.to_string();
  auto after = side[0]->send(1, bytes("h"), bytes("late"), {}, Delivery::kPolled);
  EXPECT_FALSE(after.is_ok()) << "a send to an unreachable peer must fail";
  EXPECT_TRUE(inbox.payloads.empty());
}

}  // namespace
}  // namespace tagwire::verbs
