// MPI_Cancel across processes (docs/architecture.md §4; MPI-4.1 §3.8.4): send cancel in
// every mode and at every protocol size, the either-or rule checked from
// both sides, siblings with one envelope, persistent requests, a receiver
// that never calls the library, and receive cancel. Ranks pair up as
// (0,1), (2,3): the even rank sends, the odd one receives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace tagwire::engine {
namespace {

int partner() {
  return me() ^ 1;
}
bool paired() {
  return partner() < nranks();
}
bool sender() {
  return paired() && me() % 2 == 0;
}
bool receiver() {
  return paired() && me() % 2 == 1;
}

std::vector<std::size_t> cancel_sizes() {
  return {0, 8, threshold(), threshold() + 1, std::size_t{4} << 20};
}

// Receives one message of `size` with `tag` from the partner and checks it
// carries `seed`; then checks nothing else with that tag is waiting.
void expect_exactly_one(std::size_t size, int tag, std::uint64_t seed, const std::string& what) {
  std::vector<std::uint8_t> in(size + 1, 0xEE);
  MessageStatus st;
  ASSERT_OK(E().recv(in.data(), size, partner(), tag, W(), &st));
  EXPECT_FALSE(st.cancelled) << what;
  ASSERT_EQ(st.count, size) << what;
  ASSERT_EQ(first_mismatch(in.data(), size, seed), std::string::npos)
      << what << ": the received message is not the one that was not cancelled";
  EXPECT_EQ(in[size], 0xEE) << what;
  EXPECT_FALSE(take(E().iprobe(partner(), tag, W(), nullptr)))
      << what << ": a cancelled message was delivered too";
}

// A send nobody has received yet is cancelled, in every mode and at every
// size; a later send with the same envelope is the one the receive gets.
TEST(SendCancel, UnreceivedSendIsCancelledAndTheNextOneIsReceived) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr int kTag = 70;
  for (SendMode mode : {SendMode::kStandard, SendMode::kSynchronous, SendMode::kBuffered}) {
    for (std::size_t size : cancel_sizes()) {
      const std::string what = mode_name(mode) + " " + std::to_string(size) + " B";
      const std::uint64_t seed = size + static_cast<std::uint64_t>(mode) * 7;
      std::vector<std::uint8_t> attached;
      if (sender()) {
        if (mode == SendMode::kBuffered) {
          // Room for one message only: a second bsend fits only if the
          // cancel freed the first one's space.
          attached.resize(size + Engine::kBsendOverhead);
          ASSERT_OK(E().buffer_attach(attached.data(), attached.size()));
        }
        auto doomed = make_payload(size, seed + 1000);
        for (int round = 0; round < 2; ++round) {
          Request* s = take(E().isend(doomed.data(), size, partner(), kTag, W(), mode));
          ASSERT_NE(s, nullptr) << what << " round " << round;
          ASSERT_OK(E().cancel(s));
          ASSERT_OK(E().cancel(s));  // twice is once
          MessageStatus st;
          ASSERT_OK(E().wait(s, &st));
          EXPECT_TRUE(st.cancelled) << what << " round " << round;
        }
        if (mode == SendMode::kBuffered) {
          auto detached = take(E().buffer_detach());
          EXPECT_EQ(detached.first, attached.data());
          EXPECT_EQ(detached.second, attached.size());
        }
      }
      barrier();  // both cancels decided before the receiver posts anything
      if (sender()) {
        auto kept = make_payload(size, seed);
        ASSERT_OK(E().send(kept.data(), size, partner(), kTag, W()));
      } else if (receiver()) {
        expect_exactly_one(size, kTag, seed, what);
      }
      barrier();
    }
  }
}

// A send whose message was received cannot be cancelled: the cancel is a
// no-op, the send completes normally, and the data arrived once.
TEST(SendCancel, ReceivedSendIsNotCancelled) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr int kTag = 71;
  for (SendMode mode :
       {SendMode::kStandard, SendMode::kSynchronous, SendMode::kReady, SendMode::kBuffered}) {
    for (std::size_t size : cancel_sizes()) {
      const std::string what = mode_name(mode) + " " + std::to_string(size) + " B";
      const std::uint64_t seed = size * 3 + static_cast<std::uint64_t>(mode);
      std::vector<std::uint8_t> in(size), attached;
      Request* r = nullptr;
      if (receiver()) r = take(E().irecv(in.data(), size, partner(), kTag, W()));
      barrier();  // posted first: ready mode is legal
      Request* s = nullptr;
      auto data = make_payload(size, seed);
      if (sender()) {
        if (mode == SendMode::kBuffered) {
          attached.resize(size + Engine::kBsendOverhead);
          ASSERT_OK(E().buffer_attach(attached.data(), attached.size()));
        }
        s = take(E().isend(data.data(), size, partner(), kTag, W(), mode));
      }
      if (receiver()) {
        MessageStatus rs;
        ASSERT_OK(E().wait(r, &rs));
        EXPECT_FALSE(rs.cancelled) << what;
        ASSERT_EQ(first_mismatch(in.data(), size, seed), std::string::npos) << what;
      }
      barrier();  // received before the cancel is even asked
      if (sender()) {
        ASSERT_OK(E().cancel(s));
        MessageStatus st;
        ASSERT_OK(E().wait(s, &st));
        EXPECT_FALSE(st.cancelled) << what << ": cancelled after it was received";
        EXPECT_TRUE(st.error.is_ok()) << what << ": " << st.error.to_string();
        if (mode == SendMode::kBuffered) {
          ASSERT_TRUE(E().buffer_detach().is_ok());
        }
      }
      barrier();
    }
  }
}

// Several sends with one envelope: a cancel takes the one it names, never a
// sibling, whichever of them it is.
TEST(SendCancel, CancelTakesTheNamedSendNeverASibling) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr int kTag = 72;
  for (std::size_t size : {std::size_t{8}, threshold() + 1}) {
    for (int victim = 0; victim < 3; ++victim) {
      const std::string what =
          std::to_string(size) + " B, cancelling send " + std::to_string(victim) + " of 3";
      std::vector<std::vector<std::uint8_t>> data;
      std::vector<Request*> sends;
      if (sender()) {
        for (int i = 0; i < 3; ++i) data.push_back(make_payload(size, 500 + i));
        for (int i = 0; i < 3; ++i) {
          sends.push_back(take(E().isend(data[i].data(), size, partner(), kTag, W())));
        }
        ASSERT_OK(E().cancel(sends[victim]));
        MessageStatus st;
        ASSERT_OK(E().wait(sends[victim], &st));
        EXPECT_TRUE(st.cancelled) << what;
      }
      barrier();
      if (receiver()) {
        for (int i = 0; i < 3; ++i) {
          if (i == victim) continue;
          std::vector<std::uint8_t> in(size);
          ASSERT_OK(E().recv(in.data(), size, partner(), kTag, W(), nullptr));
          ASSERT_EQ(first_mismatch(in.data(), size, 500 + i), std::string::npos)
              << what << ": expected send " << i;
        }
        EXPECT_FALSE(take(E().iprobe(partner(), kTag, W(), nullptr))) << what;
      }
      if (sender()) {
        for (int i = 0; i < 3; ++i) {
          if (i == victim) continue;
          MessageStatus st;
          ASSERT_OK(E().wait(sends[i], &st));
          EXPECT_FALSE(st.cancelled) << what;
        }
      }
      barrier();
    }
  }
}

// Cancelling a persistent send cancels the operation, not the request: it
// becomes inactive and starts again. An earlier operation's message still
// waiting at the receiver is not touched by a later operation's cancel.
TEST(SendCancel, PersistentSendIsCancelledThenStartsAgain) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr int kTag = 73;
  for (SendMode mode : {SendMode::kStandard, SendMode::kSynchronous, SendMode::kBuffered}) {
    for (std::size_t size : {std::size_t{8}, threshold() + 1}) {
      const std::string what = mode_name(mode) + " " + std::to_string(size) + " B";
      std::vector<std::uint8_t> out(size), attached;
      if (sender()) {
        if (mode == SendMode::kBuffered) {
          attached.resize(2 * (size + Engine::kBsendOverhead));
          ASSERT_OK(E().buffer_attach(attached.data(), attached.size()));
        }
        Request* s = take(E().send_init(out.data(), size, partner(), kTag, W(), mode));
        // Operation 1 is kept (standard/buffered: completes locally; its
        // message waits at the receiver). Operation 2 is cancelled.
        auto first = make_payload(size, 901);
        std::copy(first.begin(), first.end(), out.begin());
        ASSERT_OK(E().start(s));
        if (mode != SendMode::kSynchronous && size <= threshold()) {
          MessageStatus st;
          ASSERT_OK(E().wait(s, &st));
          EXPECT_FALSE(st.cancelled);
          auto second = make_payload(size, 902);
          std::copy(second.begin(), second.end(), out.begin());
          ASSERT_OK(E().start(s));
        }
        ASSERT_OK(E().cancel(s));
        MessageStatus st;
        ASSERT_OK(E().wait(s, &st));
        EXPECT_TRUE(st.cancelled) << what;
        // Inactive now: cancel and wait are no-ops.
        ASSERT_OK(E().cancel(s));
        ASSERT_TRUE(take(E().test(s, &st)));
        EXPECT_FALSE(st.cancelled) << what << ": an inactive request reports cancelled";
        barrier();
        auto third = make_payload(size, 903);
        std::copy(third.begin(), third.end(), out.begin());
        ASSERT_OK(E().start(s));
        ASSERT_OK(E().wait(s, &st));
        EXPECT_FALSE(st.cancelled) << what;
        ASSERT_OK(E().request_free(s));
        if (mode == SendMode::kBuffered) {
          ASSERT_TRUE(E().buffer_detach().is_ok());
        }
      } else {
        barrier();
      }
      if (receiver()) {
        const bool first_kept = mode != SendMode::kSynchronous && size <= threshold();
        for (std::uint64_t seed : {std::uint64_t{901}, std::uint64_t{903}}) {
          if (seed == 901 && !first_kept) continue;
          std::vector<std::uint8_t> in(size);
          ASSERT_OK(E().recv(in.data(), size, partner(), kTag, W(), nullptr));
          ASSERT_EQ(first_mismatch(in.data(), size, seed), std::string::npos)
              << what << ": expected operation " << seed - 900;
        }
        EXPECT_FALSE(take(E().iprobe(partner(), kTag, W(), nullptr))) << what;
      }
      barrier();
    }
  }
}

// MPI_Cancel is local: a receiver that never calls the library (it sleeps
// here) must not keep the sender's Wait from returning. Its cancel agent
// answers.
TEST(SendCancel, ReceiverAwayFromTheLibraryStillAnswers) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  // Who answers for a receiver that never calls the library: its agent or
  // progress thread; or, in one-sided mode over verbs, nobody at all: the
  // sender's RDMA CAS is executed by the receiver's NIC.
  const bool nic_decides = E().cancels_one_sided() && E().transport_name() == "verbs";
  if (!E().config().cancel_agent && !E().config().progress_thread && !nic_decides) {
    GTEST_SKIP() << "TAGWIRE_CANCEL_AGENT=0 and no progress thread: nothing answers for an "
                    "absent receiver";
  }
  constexpr int kTag = 74;
  constexpr auto kAway = std::chrono::seconds(4);
  barrier();
  if (receiver()) {
    ::sleep(static_cast<unsigned>(kAway.count()));  // no library call at all
  } else if (sender()) {
    auto small = make_payload(8, 1);
    auto large = make_payload(threshold() * 4, 2);
    const auto t0 = std::chrono::steady_clock::now();
    Request* a = take(E().isend(small.data(), small.size(), partner(), kTag, W()));
    Request* b = take(E().isend(large.data(), large.size(), partner(), kTag, W()));
    Request* c =
        take(E().isend(small.data(), small.size(), partner(), kTag, W(), SendMode::kSynchronous));
    for (Request* r : {a, b, c}) ASSERT_OK(E().cancel(r));
    for (Request* r : {a, b, c}) {
      MessageStatus st;
      ASSERT_OK(E().wait(r, &st));
      EXPECT_TRUE(st.cancelled);
    }
    const auto waited = std::chrono::steady_clock::now() - t0;
    // Liveness, not speed: the answer must come while the receiver is still
    // asleep, so from its agent.
    EXPECT_LT(waited, kAway / 2) << "Cancel+Wait waited for the receiver to come back";
  }
  barrier();
  if (receiver()) {
    EXPECT_FALSE(take(E().iprobe(partner(), kTag, W(), nullptr)));
  }
  barrier();
}

// A rank away from the library leaves its core to whoever computes: on a
// transport whose kWake messages raise the sleeper's event (wake_events:
// shm, verbs), the cancel agent sleeps on that event and looks on its own
// only every 20 ms, not every millisecond (a thousand wake-ups a second it
// took before). The cancel that must still be answered at once is the test
// above's.
TEST(SendCancel, AnIdleAgentSleepsOnTheEvent) {
  if (!E().config().cancel_agent || E().config().progress_thread) {
    GTEST_SKIP() << "no cancel agent in this run (TAGWIRE_CANCEL_AGENT=0 or a progress thread)";
  }
  if (!E().transport_capabilities().wake_events) {
    GTEST_SKIP() << E().transport_name()
                 << " declares no wake_events: its agent must look every millisecond";
  }
  constexpr auto kAway = std::chrono::milliseconds(600);
  barrier();
  const std::uint64_t before = E().counters().helper_entries;
  std::this_thread::sleep_for(kAway);  // no library call at all
  const std::uint64_t entries = E().counters().helper_entries - before;
  // About 30 looks at 20 ms; a look every millisecond would be about 600.
  EXPECT_LT(entries, 150u) << "the idle agent took the engine " << entries << " times in "
                           << kAway.count() << " ms";
  barrier();
}

// One-sided mode: more sends in flight to one receiver than it has slot
// descriptors for us. The first ones hold slots and are cancelled by our
// remote CAS; the ones past the table go without and are cancelled by the
// receiver's agent; either way exactly the others arrive.
TEST(SendCancel, OneSidedCancelWithAndWithoutASlot) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (!E().cancels_one_sided()) {
    GTEST_SKIP() << "TAGWIRE_CANCEL_MODE=agent: no slot descriptors to run out of";
  }
  constexpr int kTag = 76;
  constexpr int kSends = static_cast<int>(kSlotsPerPeer) + 8;
  barrier();
  if (sender()) {
    const auto before = E().counters();
    std::vector<std::vector<std::uint8_t>> payloads;
    std::vector<Request*> requests;
    for (int i = 0; i < kSends; ++i) {
      payloads.push_back(make_payload(16, static_cast<std::uint64_t>(i)));
      requests.push_back(take(E().isend(payloads.back().data(), 16, partner(), kTag, W())));
    }
    // Cancel every odd one: slotted (first half) and slotless (the tail).
    for (int i = 1; i < kSends; i += 2)
      ASSERT_OK(E().cancel(requests[static_cast<std::size_t>(i)]));
    for (int i = 0; i < kSends; ++i) {
      MessageStatus st;
      ASSERT_OK(E().wait(requests[static_cast<std::size_t>(i)], &st));
      EXPECT_EQ(st.cancelled, i % 2 == 1) << "send " << i;
    }
    const auto after = E().counters();
    EXPECT_GT(after.one_sided_cancels - before.one_sided_cancels, 0u) << "no cancel by CAS";
    EXPECT_GT(after.cancel_requests_sent - before.cancel_requests_sent, 0u)
        << "no send ran out of slots, so the agent's path was not tried";
    EXPECT_EQ(after.sends_cancelled - before.sends_cancelled,
              static_cast<std::uint64_t>(kSends / 2));
  }
  barrier();
  if (receiver()) {
    // The survivors, in send order (non-overtaking), and nothing else.
    for (int i = 0; i < kSends; i += 2) {
      std::vector<std::uint8_t> in(16, 0);
      MessageStatus st;
      ASSERT_OK(E().recv(in.data(), in.size(), partner(), kTag, W(), &st));
      ASSERT_EQ(st.count, 16u);
      ASSERT_EQ(first_mismatch(in.data(), 16, static_cast<std::uint64_t>(i)), std::string::npos)
          << "expected send " << i << ": a cancelled send arrived or one was lost";
    }
    EXPECT_FALSE(take(E().iprobe(partner(), kTag, W(), nullptr))) << "a cancelled send arrived";
  }
  barrier();
}

// ------------------------------------------------------------ receives

TEST(ReceiveCancel, PersistentWildcardReceiveIsCancelledThenStartsAgain) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr int kTag = 75;
  std::vector<std::uint8_t> in(64, 0x5A);
  if (receiver()) {
    for (auto [source, tag] : {std::pair{kAnySource, kAnyTag}, std::pair{kAnySource, kTag},
                               std::pair{partner(), kAnyTag}}) {
      Request* r = take(E().recv_init(in.data(), in.size(), source, tag, W()));
      ASSERT_OK(E().start(r));
      ASSERT_OK(E().cancel(r));
      MessageStatus st;
      ASSERT_OK(E().wait(r, &st));
      EXPECT_TRUE(st.cancelled);
      for (auto byte : in) ASSERT_EQ(byte, 0x5A) << "a cancelled receive altered its buffer";
      ASSERT_OK(E().start(r));  // inactive again, starts again
      ASSERT_OK(E().cancel(r));
      ASSERT_OK(E().wait(r, &st));
      EXPECT_TRUE(st.cancelled);
      ASSERT_OK(E().request_free(r));
    }
  }
  barrier();
  // A probed message: a receive posted for it matches at once, so a cancel
  // after that is too late and the receive gets the data.
  if (sender()) {
    auto data = make_payload(40, 77);
    ASSERT_OK(E().send(data.data(), data.size(), partner(), kTag, W()));
  } else if (receiver()) {
    MessageStatus probed;
    ASSERT_OK(E().probe(partner(), kTag, W(), &probed));
    Request* r = take(E().irecv(in.data(), in.size(), partner(), kTag, W()));
    ASSERT_OK(E().cancel(r));
    MessageStatus st;
    ASSERT_OK(E().wait(r, &st));
    EXPECT_FALSE(st.cancelled);
    EXPECT_EQ(st.count, 40u);
    EXPECT_EQ(first_mismatch(in.data(), 40, 77), std::string::npos);
  }
  barrier();
}

TEST(CancelCounters, BothSidesAgreeOnEveryDecision) {
  barrier();
  const auto c = E().counters();
  // Every request sent got exactly one answer (nothing is pending), and the
  // pairs agree: gather the four counters of the partner over the wire.
  std::uint64_t mine[5] = {c.cancel_requests_sent, c.sends_cancelled, c.messages_cancelled,
                           c.cancels_refused, c.one_sided_cancels};
  if (!paired()) GTEST_SKIP() << "unpaired rank";
  std::uint64_t theirs[5] = {};
  MessageStatus st;
  Request* r = take(E().irecv(theirs, sizeof(theirs), partner(), 79, W()));
  ASSERT_OK(E().send(mine, sizeof(mine), partner(), 79, W()));
  ASSERT_OK(E().wait(r, &st));
  // My requests were answered by the partner: granted + refused there = sent
  // here; messages my remote CAS cancelled were dropped there unasked.
  EXPECT_EQ(mine[0] + mine[4], theirs[2] + theirs[3]);
  EXPECT_EQ(mine[1], theirs[2]) << "granted cancels seen differently by the two sides";
  if (sender()) {
    EXPECT_GT(mine[1], 0u);
  }
}

}  // namespace
}  // namespace tagwire::engine
