// The engine with the NIC's tag matching on (transport/nic_matching.h),
// over NicFabric: ranks in threads, each NIC a ContractNic. Scripted
// scenarios pin one behaviour each (who matched, what the receive got,
// cancel either way); the random job checks MPI's order, data and
// progress under both readings of the contract's stale-ADD rule, with the
// NIC's operations and the arrivals racing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "nic_fabric.h"

namespace tagwire::engine::testing {
namespace {

constexpr int kTag = 7;

// Progresses `me` until `done` holds (the fabric has no events to sleep on).
template <typename Pred>
void progress_until(Rank& me, Pred done) {
  while (!done()) {
    me.engine->progress();
    std::this_thread::yield();
  }
}

// Lets the NIC execute every operation posted so far, and the engine hear
// of it, before anything else arrives. A NIC that never gets to them (an
// operation it holds back, counts out of step) is a failure, not a hang.
void let_nic_run_ops(Rank& me) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  progress_until(me, [&] {
    return !me.transport->nic().has_pending_ops() || std::chrono::steady_clock::now() > until;
  });
  if (me.transport->nic().has_pending_ops()) {
    ADD_FAILURE() << "rank " << me.rank << ": the NIC did not run its operations in 10 s";
  }
}

// Waits for another rank's signal without progressing: what this rank has
// posted stays as it is.
void wait_flag(Rank& me, int value) {
  while (me.fabric->flag.load() < value) std::this_thread::yield();
}

std::vector<std::uint8_t> pattern_bytes(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 13);
  return v;
}

matching::NicMatchingCounters matching_counters(Rank& me) {
  return me.engine->counters().matching;
}

void run(const FabricOptions& options, const std::function<void(Rank&)>& body) {
  Status failure;
  run_job(options, body, &failure);
  EXPECT_TRUE(failure.is_ok()) << failure.to_string();
}

// Every scenario runs twice: the NIC's reports straight to the engine, and
// through the verbs NicMatchingPort as a TM-SRQ's completions.
class EngineNicMatching : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
#if !defined(TAGWIRE_HAVE_VERBS)
    if (GetParam()) GTEST_SKIP() << "built without verbs: no NicMatchingPort";
#endif
  }
  FabricOptions base_options() const {
    FabricOptions options;
    options.through_port = GetParam();
    return options;
  }
};

std::string mode_name(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "ThroughVerbsPort" : "Direct";
}

// Rank 1 posts a receive and lets its NIC take it; then rank 0 sends.
// `bytes` over the eager threshold makes it a rendezvous (RTS matched by
// the NIC, data read by the engine into the receive's buffer).
void expect_matched_by_nic(FabricOptions options, std::size_t bytes, SendMode mode) {
  const auto data = pattern_bytes(bytes, 3);
  run(options, [&](Rank& me) {
    if (me.rank == 1) {
      std::vector<std::uint8_t> in(bytes + 16, 0);
      auto r = me.engine->irecv(in.data(), in.size(), 0, kTag, me.engine->world());
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      let_nic_run_ops(me);
      ASSERT_EQ(me.transport->nic().entries(), 1u);
      ASSERT_TRUE(me.transport->nic().all_usable());
      me.fabric->flag = 1;
      MessageStatus st;
      ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
      EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
      EXPECT_EQ(st.source, 0);
      EXPECT_EQ(st.tag, kTag);
      EXPECT_EQ(st.count, bytes);
      EXPECT_TRUE(std::equal(data.begin(), data.end(), in.begin()));
      const auto c = matching_counters(me);
      EXPECT_EQ(c.matched_by_nic, 1u);
      EXPECT_EQ(c.matched_by_software, 0u);
      EXPECT_EQ(c.tag_adds, 1u);
      EXPECT_EQ(me.transport->nic().entries(), 0u);
      EXPECT_EQ(me.engine->counters().unexpected, 0u);
    } else {
      wait_flag(me, 1);
      auto r = me.engine->isend(data.data(), data.size(), 1, kTag, me.engine->world(), mode);
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      MessageStatus st;
      ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
      EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
      EXPECT_EQ(me.transport->tagged_sent(), 1u);
    }
  });
}

TEST_P(EngineNicMatching, EagerToAPostedReceiveIsMatchedByTheNic) {
  expect_matched_by_nic(base_options(), 100, SendMode::kStandard);
}

TEST_P(EngineNicMatching, EmptyMessageIsMatchedByTheNic) {
  expect_matched_by_nic(base_options(), 0, SendMode::kStandard);
}

TEST_P(EngineNicMatching, RendezvousRequestIsMatchedByTheNicAndReadBySoftware) {
  expect_matched_by_nic(base_options(), 3 * FabricOptions{}.eager_threshold + 5,
                        SendMode::kStandard);
}

TEST_P(EngineNicMatching, SynchronousSendCompletesOnTheAckOfANicMatch) {
  expect_matched_by_nic(base_options(), 40, SendMode::kSynchronous);
}

TEST_P(EngineNicMatching, UnexpectedMessageIsMatchedBySoftwareAndCounted) {
  FabricOptions options = base_options();
  const auto data = pattern_bytes(64, 9);
  run(options, [&](Rank& me) {
    if (me.rank == 0) {
      ASSERT_TRUE(me.engine->send(data.data(), data.size(), 1, kTag, me.engine->world()).is_ok());
      me.fabric->flag = 1;
      return;
    }
    wait_flag(me, 1);
    progress_until(me, [&] { return me.engine->counters().unexpected == 1; });
    // Probe sees what the receive will get.
    MessageStatus probed;
    auto found = me.engine->iprobe(0, kTag, me.engine->world(), &probed);
    ASSERT_TRUE(found.is_ok());
    ASSERT_TRUE(*found);
    EXPECT_EQ(probed.count, data.size());
    std::vector<std::uint8_t> in(64);
    MessageStatus st;
    ASSERT_TRUE(me.engine->recv(in.data(), in.size(), 0, kTag, me.engine->world(), &st).is_ok());
    EXPECT_EQ(in, data);
    const auto c = matching_counters(me);
    EXPECT_EQ(c.matched_by_software, 1u);
    EXPECT_EQ(c.matched_by_nic, 0u);
    EXPECT_EQ(c.tag_adds, 0u);  // matched at once: never offered to the NIC
    EXPECT_EQ(me.transport->nic().unexpected(), 1u);
  });
}

// Probe and mprobe see exactly what a receive would see while the NIC
// holds an earlier receive: not the message the NIC gives that receive,
// but the next one, unexpected, in software; a wildcard mprobe takes the
// rendezvous after it with its full length, and mrecv reads it. The
// messages mprobe took were counted as the NIC counted them, so the next
// receive is offered to the NIC and taken there.
TEST_P(EngineNicMatching, ProbeAndMprobeSeeWhatAReceiveWouldWhileTheNicHoldsAnEarlierOne) {
  FabricOptions options = base_options();
  const auto m1 = pattern_bytes(20, 1);
  const auto m2 = pattern_bytes(30, 2);
  const auto m3 = pattern_bytes(3 * options.eager_threshold + 7, 3);
  const auto m4 = pattern_bytes(10, 4);
  run(options, [&](Rank& me) {
    Communicator* world = me.engine->world();
    if (me.rank == 0) {
      wait_flag(me, 1);
      ASSERT_TRUE(me.engine->send(m1.data(), m1.size(), 1, kTag, world).is_ok());
      ASSERT_TRUE(me.engine->send(m2.data(), m2.size(), 1, kTag, world).is_ok());
      auto r3 = me.engine->isend(m3.data(), m3.size(), 1, kTag, world, SendMode::kStandard);
      ASSERT_TRUE(r3.is_ok());
      me.fabric->flag = 2;
      progress_until(me, [&] { return me.fabric->flag.load() >= 3; });
      ASSERT_TRUE(me.engine->send(m4.data(), m4.size(), 1, kTag, world).is_ok());
      MessageStatus st;
      ASSERT_TRUE(me.engine->wait(*r3, &st).is_ok());
      EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
      return;
    }
    std::vector<std::uint8_t> in1(64, 0);
    auto r1 = me.engine->irecv(in1.data(), in1.size(), 0, kTag, world);
    ASSERT_TRUE(r1.is_ok());
    let_nic_run_ops(me);
    ASSERT_EQ(me.transport->nic().entries(), 1u);
    MessageStatus probed;
    auto none = me.engine->iprobe(0, kTag, world, &probed);
    ASSERT_TRUE(none.is_ok());
    EXPECT_FALSE(*none) << "a posted receive is not a message";
    me.fabric->flag = 1;
    wait_flag(me, 2);

    // m1 is the NIC's (the receive it holds); a probe sees m2.
    auto second = me.engine->mprobe(0, kTag, world, &probed);
    ASSERT_TRUE(second.is_ok()) << second.status().to_string();
    EXPECT_EQ(probed.source, 0);
    EXPECT_EQ(probed.tag, kTag);
    EXPECT_EQ(probed.count, m2.size()) << "the probe saw the message the NIC gave the receive";
    MessageStatus st;
    ASSERT_TRUE(me.engine->wait(*r1, &st).is_ok());
    EXPECT_EQ(st.count, m1.size());
    EXPECT_TRUE(std::equal(m1.begin(), m1.end(), in1.begin()));
    EXPECT_EQ(matching_counters(me).matched_by_nic, 1u);

    auto third = me.engine->mprobe(kAnySource, kAnyTag, world, &probed);
    ASSERT_TRUE(third.is_ok()) << third.status().to_string();
    EXPECT_EQ(probed.count, m3.size()) << "a probed rendezvous has its full length";
    none = me.engine->iprobe(kAnySource, kAnyTag, world, &probed);
    ASSERT_TRUE(none.is_ok());
    EXPECT_FALSE(*none) << "both mprobed messages are gone from the queue";

    std::vector<std::uint8_t> in2(m2.size()), in3(m3.size());
    auto r2 = me.engine->imrecv(in2.data(), in2.size(), std::move(second).value());
    auto r3 = me.engine->imrecv(in3.data(), in3.size(), std::move(third).value());
    ASSERT_TRUE(r2.is_ok() && r3.is_ok());
    ASSERT_TRUE(me.engine->wait(*r2, &st).is_ok());
    EXPECT_EQ(in2, m2);
    ASSERT_TRUE(me.engine->wait(*r3, &st).is_ok());
    EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
    EXPECT_EQ(in3, m3);

    // In step with the NIC: the next receive is the NIC's, usable.
    std::vector<std::uint8_t> in4(16, 0);
    auto r4 = me.engine->irecv(in4.data(), in4.size(), 0, kTag, world);
    ASSERT_TRUE(r4.is_ok());
    let_nic_run_ops(me);
    const bool nics = me.transport->nic().entries() == 1 && me.transport->nic().all_usable();
    me.fabric->flag = 3;  // before the check: rank 0 must not wait for ever
    ASSERT_TRUE(nics) << "the NIC does not hold the next receive usable: counts out of step";
    ASSERT_TRUE(me.engine->wait(*r4, &st).is_ok());
    EXPECT_TRUE(std::equal(m4.begin(), m4.end(), in4.begin()));
    const auto c = matching_counters(me);
    EXPECT_EQ(c.matched_by_nic, 2u);
    EXPECT_EQ(c.matched_by_software, 2u);  // the two mprobes
    EXPECT_EQ(c.add_rejected, 0u);
  });
}

// The NIC holds the receive when it is cancelled: the DEL wins, the
// receive completes cancelled, and a later message goes to the next one.
TEST_P(EngineNicMatching, CancelOfAReceiveTheNicHoldsCompletesByTheDel) {
  FabricOptions options = base_options();
  const auto data = pattern_bytes(32, 1);
  run(options, [&](Rank& me) {
    if (me.rank == 0) {
      wait_flag(me, 1);
      ASSERT_TRUE(me.engine->send(data.data(), data.size(), 1, kTag, me.engine->world()).is_ok());
      return;
    }
    std::vector<std::uint8_t> in(32, 0);
    auto r = me.engine->irecv(in.data(), in.size(), 0, kTag, me.engine->world());
    ASSERT_TRUE(r.is_ok());
    let_nic_run_ops(me);
    ASSERT_EQ(me.transport->nic().entries(), 1u);
    ASSERT_TRUE(me.engine->cancel(*r).is_ok());
    MessageStatus st;
    ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
    EXPECT_TRUE(st.cancelled);
    EXPECT_EQ(me.transport->nic().entries(), 0u);
    EXPECT_EQ(matching_counters(me).tag_dels, 1u);
    EXPECT_EQ(std::count(in.begin(), in.end(), 0), 32);
    me.fabric->flag = 1;
    ASSERT_TRUE(me.engine->recv(in.data(), in.size(), 0, kTag, me.engine->world(), &st).is_ok());
    EXPECT_FALSE(st.cancelled);
    EXPECT_EQ(in, data);
  });
}

// The message reaches the NIC while the DEL is on its way: whichever the
// NIC handles first decides, and the other never also happens. Over many
// seeds both outcomes occur; the message is received exactly once.
TEST_P(EngineNicMatching, CancelRacingTheNicsMatchHasExactlyOneOutcome) {
  int cancelled = 0;
  int received = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    FabricOptions options = base_options();
    options.seed = seed;
    const auto data = pattern_bytes(48, static_cast<std::uint8_t>(seed));
    run(options, [&](Rank& me) {
      if (me.rank == 0) {
        wait_flag(me, 1);
        ASSERT_TRUE(me.engine->send(data.data(), data.size(), 1, kTag, me.engine->world()).is_ok());
        me.fabric->flag = 2;
        return;
      }
      std::vector<std::uint8_t> in(48, 0);
      auto r = me.engine->irecv(in.data(), in.size(), 0, kTag, me.engine->world());
      ASSERT_TRUE(r.is_ok());
      let_nic_run_ops(me);
      me.fabric->flag = 1;
      wait_flag(me, 2);  // the message is in the inbox, not yet at the NIC
      ASSERT_TRUE(me.engine->cancel(*r).is_ok());
      MessageStatus st;
      ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
      const auto c = matching_counters(me);
      if (st.cancelled) {
        ++cancelled;
        EXPECT_EQ(c.cancel_lost_to_nic, 0u);
        ASSERT_TRUE(
            me.engine->recv(in.data(), in.size(), 0, kTag, me.engine->world(), &st).is_ok());
        EXPECT_FALSE(st.cancelled);
      } else {
        ++received;
        EXPECT_EQ(c.cancel_lost_to_nic, 1u);
        EXPECT_EQ(c.matched_by_nic, 1u);
      }
      EXPECT_EQ(in, data);
      // Nothing else is left for a receive or a probe.
      MessageStatus probed;
      auto more = me.engine->iprobe(kAnySource, kAnyTag, me.engine->world(), &probed);
      ASSERT_TRUE(more.is_ok());
      EXPECT_FALSE(*more);
    });
  }
  EXPECT_GT(cancelled, 0);
  EXPECT_GT(received, 0);
}

// A send cancel asks the receiver, whose answer follows the NIC's reports
// of everything that came before the request (one ordered channel): a
// message the NIC has matched cannot also be cancelled, and one it left
// unexpected is removed before any receive sees it.
TEST_P(EngineNicMatching, SendCancelLosesToTheNicsMatchAndWinsOverAnUnexpectedMessage) {
  FabricOptions options = base_options();
  const auto first = pattern_bytes(24, 4);
  const auto second = pattern_bytes(24, 8);
  run(options, [&](Rank& me) {
    Communicator* world = me.engine->world();
    if (me.rank == 0) {
      wait_flag(me, 1);  // rank 1's receive is in its NIC
      auto matched = me.engine->isend(first.data(), first.size(), 1, kTag, world);
      auto unexpected = me.engine->isend(second.data(), second.size(), 1, kTag + 1, world);
      ASSERT_TRUE(matched.is_ok() && unexpected.is_ok());
      ASSERT_TRUE(me.engine->cancel(*matched).is_ok());
      ASSERT_TRUE(me.engine->cancel(*unexpected).is_ok());
      MessageStatus st;
      ASSERT_TRUE(me.engine->wait(*matched, &st).is_ok());
      EXPECT_FALSE(st.cancelled) << "the NIC had matched it";
      ASSERT_TRUE(me.engine->wait(*unexpected, &st).is_ok());
      EXPECT_TRUE(st.cancelled) << "nobody had received it";
      me.fabric->flag = 2;
      return;
    }
    std::vector<std::uint8_t> in(24, 0);
    auto r = me.engine->irecv(in.data(), in.size(), 0, kTag, world);
    ASSERT_TRUE(r.is_ok());
    let_nic_run_ops(me);
    me.fabric->flag = 1;
    MessageStatus st;
    ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
    EXPECT_EQ(in, first);
    // Serve the cancel requests until the sender has its answers.
    progress_until(me, [&] { return me.fabric->flag.load() == 2; });
    MessageStatus probed;
    auto left = me.engine->iprobe(0, kAnyTag, world, &probed);
    ASSERT_TRUE(left.is_ok());
    EXPECT_FALSE(*left) << "the cancelled message is still there";
    const auto c = me.engine->counters();
    EXPECT_EQ(c.matching.matched_by_nic, 1u);
    EXPECT_EQ(c.messages_cancelled, 1u);
    EXPECT_EQ(c.cancels_refused, 1u);
  });
}

// A rank found dead while the NIC holds a receive from it: the receive is
// withdrawn by a DEL and fails with MPI_ERR_PROC_FAILED, not cancelled.
TEST_P(EngineNicMatching, ReceiveTheNicHoldsFailsWhenItsSenderDies) {
  FabricOptions options = base_options();
  options.ranks = 3;
  options.check_finalize = false;
  run(options, [&](Rank& me) {
    // Rank 2 "dies": the others see it gone, and it sees them gone, so that
    // finalize's barrier ends (with an error) instead of waiting for it.
    const Status unplugged(ErrorCode::kTransport, "unplugged");
    if (me.rank == 0) me.engine->on_peer_unreachable(2, unplugged);
    if (me.rank == 2) {
      me.engine->on_peer_unreachable(0, unplugged);
      me.engine->on_peer_unreachable(1, unplugged);
    }
    if (me.rank != 1) return;
    std::vector<std::uint8_t> in(8);
    auto r = me.engine->irecv(in.data(), in.size(), 2, kTag, me.engine->world());
    ASSERT_TRUE(r.is_ok());
    let_nic_run_ops(me);
    ASSERT_EQ(me.transport->nic().entries(), 1u);
    me.engine->on_peer_unreachable(2, unplugged);
    MessageStatus st;
    ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
    EXPECT_FALSE(st.cancelled);
    EXPECT_EQ(st.error.code(), ErrorCode::kPeerFailed) << st.error.to_string();
    EXPECT_EQ(me.transport->nic().entries(), 0u);
    EXPECT_EQ(me.engine->counters().matching.tag_dels, 1u);
  });
}

// A job whose ranks disagree on the NIC's tag matching does not start:
// every rank's MPI_Init fails with the ranks named.
TEST_P(EngineNicMatching, RanksThatDisagreeOnNicMatchingRefuseToStart) {
  FabricOptions options = base_options();
  options.ranks = 3;
  options.rank_without_nic_matching = 2;
  Status failure;
  std::atomic<bool> body_ran{false};
  run_job(
      options, [&](Rank&) { body_ran = true; }, &failure);
  EXPECT_FALSE(body_ran);
  EXPECT_EQ(failure.code(), ErrorCode::kConfig) << failure.to_string();
  EXPECT_NE(failure.message().find("tag matching is on at rank"), std::string::npos)
      << failure.to_string();
  EXPECT_NE(failure.message().find("rank 2"), std::string::npos) << failure.to_string();
}

// ANY_SOURCE and ANY_TAG receives go to the NIC as masks; three senders.
TEST_P(EngineNicMatching, WildcardReceivesAreMatchedInTheNic) {
  FabricOptions options = base_options();
  options.ranks = 4;
  run(options, [&](Rank& me) {
    if (me.rank != 0) {
      wait_flag(me, 1);
      const std::uint32_t word = static_cast<std::uint32_t>(me.rank);
      ASSERT_TRUE(
          me.engine->send(&word, sizeof(word), 0, 100 + me.rank, me.engine->world()).is_ok());
      return;
    }
    std::uint32_t in[3] = {};
    Request* r[3] = {};
    for (int i = 0; i < 3; ++i) {
      auto posted = me.engine->irecv(&in[i], sizeof(in[i]), i == 0 ? 2 : kAnySource,
                                     i == 1 ? 103 : kAnyTag, me.engine->world());
      ASSERT_TRUE(posted.is_ok());
      r[i] = *posted;
    }
    let_nic_run_ops(me);
    ASSERT_EQ(me.transport->nic().entries(), 3u);
    me.fabric->flag = 1;
    MessageStatus st[3];
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(me.engine->wait(r[i], &st[i]).is_ok());
    EXPECT_EQ(in[0], 2u);  // from rank 2, any tag
    EXPECT_EQ(st[0].tag, 102);
    EXPECT_EQ(in[1], 3u);  // any source, tag 103
    EXPECT_EQ(st[1].source, 3);
    EXPECT_EQ(in[2], 1u);  // what is left
    EXPECT_EQ(st[2].tag, 101);
    EXPECT_EQ(matching_counters(me).matched_by_nic, 3u);
  });
}

// A send and a receive too large for the receive: truncation, reported on
// the receive, with nothing written past its buffer.
TEST_P(EngineNicMatching, TruncationOfAMessageTheNicMatched) {
  FabricOptions options = base_options();
  const auto data = pattern_bytes(120, 5);
  run(options, [&](Rank& me) {
    if (me.rank == 0) {
      wait_flag(me, 1);
      ASSERT_TRUE(me.engine->send(data.data(), data.size(), 1, kTag, me.engine->world()).is_ok());
      return;
    }
    std::vector<std::uint8_t> in(100, 0xee);
    auto r = me.engine->irecv(in.data(), 60, 0, kTag, me.engine->world());
    ASSERT_TRUE(r.is_ok());
    let_nic_run_ops(me);
    me.fabric->flag = 1;
    MessageStatus st;
    ASSERT_TRUE(me.engine->wait(*r, &st).is_ok());
    EXPECT_EQ(st.error.code(), ErrorCode::kTruncate);
    EXPECT_EQ(st.count, 60u);
    EXPECT_TRUE(std::equal(in.begin(), in.begin() + 60, data.begin()));
    EXPECT_EQ(in[60], 0xee);
    EXPECT_EQ(matching_counters(me).matched_by_nic, 1u);
  });
}

// ---- Random jobs: every rank sends to every other and receives with a
// random mix of specific and ANY_SOURCE receives (ANY_TAG; random tags on
// the wire), some cancelled, while the NIC's operations and the arrivals
// race. Checks: each message received exactly once, intact; from each
// sender, receives posted later got later messages (MPI's non-overtaking);
// every receive completes (no hang: the ctest timeout); the book and the
// NIC end empty.
struct JobTally {
  std::mutex mutex;
  std::uint64_t by_nic = 0;
  std::uint64_t by_software = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t syncs = 0;
  std::uint64_t refused = 0;
};

constexpr int kMessagesPerPair = 40;

void random_rank(Rank& me, std::uint32_t seed, JobTally* tally) {
  const int n = me.fabric->options().ranks;
  const std::size_t threshold = me.fabric->options().eager_threshold;
  std::mt19937 random(seed * 31u + static_cast<std::uint32_t>(me.rank));
  Communicator* world = me.engine->world();
  // Sends: message k to rank d carries (rank, k) in its first 8 bytes.
  // They go out a few at a time between the receives, so that some find
  // their receive already in the NIC and some arrive first.
  const std::size_t sizes[] = {8, 8, 40, threshold, threshold + 1, 3 * threshold};
  std::vector<std::vector<std::uint8_t>> out;
  out.reserve(static_cast<std::size_t>(n * kMessagesPerPair));
  std::vector<Request*> sends;
  std::vector<int> next_k(static_cast<std::size_t>(n), 0);
  next_k[static_cast<std::size_t>(me.rank)] = kMessagesPerPair;
  int unsent = (n - 1) * kMessagesPerPair;
  auto send_one = [&] {
    int d = static_cast<int>(random() % static_cast<unsigned>(n));
    while (next_k[static_cast<std::size_t>(d)] == kMessagesPerPair) d = (d + 1) % n;
    const int k = next_k[static_cast<std::size_t>(d)]++;
    --unsent;
    std::vector<std::uint8_t> bytes(sizes[random() % std::size(sizes)]);
    for (std::size_t i = 8; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i + k);
    const std::int32_t who[2] = {me.rank, k};
    std::memcpy(bytes.data(), who, sizeof(who));
    out.push_back(std::move(bytes));
    const SendMode mode = random() % 5 == 0 ? SendMode::kSynchronous : SendMode::kStandard;
    auto r = me.engine->isend(out.back().data(), out.back().size(), d,
                              static_cast<int>(random() % 4), world, mode);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    sends.push_back(*r);
  };
  // Receives, posted so that none can starve (see below).
  struct Posted {
    Request* request;
    std::vector<std::uint8_t> buffer;
    int source;
    std::uint64_t order;
  };
  std::vector<int> left(static_cast<std::size_t>(n), kMessagesPerPair);  // not yet received
  left[static_cast<std::size_t>(me.rank)] = 0;
  std::vector<int> specific(static_cast<std::size_t>(n), 0);  // outstanding, by source
  int any = 0;
  std::deque<Posted> posted;
  std::uint64_t order = 0;
  std::map<int, std::vector<std::pair<std::uint64_t, int>>> got;  // source -> (order, k)
  std::set<std::pair<int, int>> seen;
  int remaining = (n - 1) * kMessagesPerPair;
  // Receives outstanding at once: within the NIC's capacity or past it.
  const std::size_t window = std::size_t{2} << (seed % 3);
  auto finish = [&](Posted& p, const MessageStatus& st) {
    if (p.source == kAnySource) {
      --any;
    } else {
      --specific[static_cast<std::size_t>(p.source)];
    }
    if (st.cancelled) return;
    ASSERT_TRUE(st.error.is_ok()) << st.error.to_string();
    std::int32_t who[2];
    std::memcpy(who, p.buffer.data(), sizeof(who));
    EXPECT_EQ(who[0], st.source);
    for (std::size_t i = 8; i < st.count; ++i) {
      ASSERT_EQ(p.buffer[i], static_cast<std::uint8_t>(i + who[1])) << "byte " << i;
    }
    EXPECT_TRUE(seen.insert({who[0], who[1]}).second) << "received twice";
    got[who[0]].emplace_back(p.order, who[1]);
    --left[static_cast<std::size_t>(st.source)];
    --remaining;
  };
  // A rule broken shows as a message lost, and so a receive that never
  // completes: fail after a while instead of hanging.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto stuck = [&] {
    if (std::chrono::steady_clock::now() < deadline) return false;
    ADD_FAILURE() << "rank " << me.rank << " (seed " << seed << ") stuck with " << remaining
                  << " messages to receive and " << posted.size() << " receives outstanding";
    return true;
  };
  while (remaining > 0) {
    if (stuck()) return;
    if (unsent > 0 && random() % 3 == 0) {
      send_one();
      continue;
    }
    // A specific receive from s is safe while s has more messages left than
    // the receives that could take them (its own and every ANY_SOURCE one);
    // an ANY_SOURCE receive while that holds for every source.
    std::vector<int> options_for_post;
    bool any_ok = true;
    for (int s = 0; s < n; ++s) {
      const auto i = static_cast<std::size_t>(s);
      if (s == me.rank) continue;
      if (left[i] >= specific[i] + any + 1) {
        options_for_post.push_back(s);
      } else {
        any_ok = false;
      }
      if (left[i] < specific[i] + any + 1) any_ok = false;
    }
    if (any_ok) options_for_post.push_back(kAnySource);
    const bool post = !options_for_post.empty() && posted.size() < window &&
                      (posted.empty() || random() % 3 != 0);
    if (post) {
      const int source = options_for_post[random() % options_for_post.size()];
      Posted p{nullptr, std::vector<std::uint8_t>(3 * threshold), source, order++};
      auto r = me.engine->irecv(p.buffer.data(), p.buffer.size(), source, kAnyTag, world);
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      p.request = *r;
      if (source == kAnySource) {
        ++any;
      } else {
        ++specific[static_cast<std::size_t>(source)];
      }
      posted.push_back(std::move(p));
      if (random() % 8 == 0) {  // cancel one of the outstanding receives
        ASSERT_TRUE(me.engine->cancel(posted[random() % posted.size()].request).is_ok());
      }
      continue;
    }
    // Complete the oldest (or, at random, test another).
    const std::size_t pick = random() % 4 == 0 ? random() % posted.size() : 0;
    MessageStatus st;
    auto done = me.engine->test(posted[pick].request, &st);
    ASSERT_TRUE(done.is_ok());
    if (!*done) {
      std::this_thread::yield();
      continue;
    }
    finish(posted[pick], st);
    posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  while (unsent > 0) send_one();
  // Every receive is done (none can be outstanding past the last
  // message); the sends finish once their receivers have matched them.
  EXPECT_TRUE(posted.empty());
  for (Request* r : sends) {
    for (;;) {
      MessageStatus st;
      auto done = me.engine->test(r, &st);
      ASSERT_TRUE(done.is_ok());
      if (*done) {
        EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
        break;
      }
      if (stuck()) return;
      std::this_thread::yield();
    }
  }
  // Non-overtaking: from each sender, in the order the receives were posted.
  for (auto& [source, list] : got) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i) {
      EXPECT_LT(list[i - 1].second, list[i].second) << "from rank " << source;
    }
    EXPECT_EQ(list.size(), static_cast<std::size_t>(kMessagesPerPair));
  }
  const auto c = me.engine->counters();
  EXPECT_EQ(c.dropped_messages, 0u);
  std::lock_guard lock(tally->mutex);
  tally->by_nic += c.matching.matched_by_nic;
  tally->by_software += c.matching.matched_by_software;
  tally->syncs += c.matching.syncs;
  tally->refused += c.matching.add_rejected;
}

INSTANTIATE_TEST_SUITE_P(BothPaths, EngineNicMatching, ::testing::Bool(), mode_name);

class EngineNicMatchingRandom
    : public ::testing::TestWithParam<std::tuple<ContractNic::StaleAdd, bool>> {
 protected:
  void SetUp() override {
#if !defined(TAGWIRE_HAVE_VERBS)
    if (std::get<1>(GetParam())) GTEST_SKIP() << "built without verbs: no NicMatchingPort";
#endif
  }
};

TEST_P(EngineNicMatchingRandom, JobsKeepMpiOrderAndLoseNothing) {
  JobTally tally;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    FabricOptions options;
    options.ranks = 3;
    options.capacity = 4;
    options.stale = std::get<0>(GetParam());
    options.through_port = std::get<1>(GetParam());
    options.sync_request_every = 5;
    options.seed = seed;
    run(options, [&](Rank& me) {
      random_rank(me, seed, &tally);
      // Nothing is left in the NIC once every receive is done, and the NIC
      // stops asking for syncs once software's count has caught up (a
      // count that never does asks for ever).
      for (int i = 0; i < 1000 && me.transport->nic().has_pending_ops(); ++i) {
        me.engine->progress();
      }
      EXPECT_FALSE(me.transport->nic().has_pending_ops()) << "rank " << me.rank;
      EXPECT_EQ(me.transport->nic().entries(), 0u);
      // And the engine's book agrees: it owes the NIC nothing, and the NIC
      // owes it no answer.
      EXPECT_EQ(me.engine->counters().nic_entries_in_book, 0u) << "rank " << me.rank;
#if defined(TAGWIRE_HAVE_VERBS)
      if (me.transport->port() != nullptr) {
        // Every entry buffer came back, and nothing was malformed.
        EXPECT_EQ(me.transport->port()->entries_in_use(), 0u);
        EXPECT_EQ(me.transport->port()->counters().malformed, 0u);
      }
#endif
    });
    if (::testing::Test::HasFailure()) break;
  }
  // Both matchers took part, and the NIC's count was brought up to date.
  EXPECT_GT(tally.by_nic, 0u);
  EXPECT_GT(tally.by_software, 0u);
  EXPECT_GT(tally.syncs, 0u);
  if (std::get<0>(GetParam()) == ContractNic::StaleAdd::kRefused) {
    EXPECT_GT(tally.refused, 0u);
  }
  std::printf("matched by NIC %llu, by software %llu, syncs %llu, ADDs refused %llu\n",
              static_cast<unsigned long long>(tally.by_nic),
              static_cast<unsigned long long>(tally.by_software),
              static_cast<unsigned long long>(tally.syncs),
              static_cast<unsigned long long>(tally.refused));
}

INSTANTIATE_TEST_SUITE_P(BothReadingsBothPaths, EngineNicMatchingRandom,
                         ::testing::Combine(::testing::Values(ContractNic::StaleAdd::kHeldUnused,
                                                              ContractNic::StaleAdd::kRefused),
                                            ::testing::Bool()),
                         [](const auto& param_info) {
                           return std::string(std::get<0>(param_info.param) ==
                                                      ContractNic::StaleAdd::kHeldUnused
                                                  ? "StaleAddsHeldUnused"
                                                  : "StaleAddsRefused") +
                                  (std::get<1>(param_info.param) ? "ThroughVerbsPort" : "Direct");
                         });

}  // namespace
}  // namespace tagwire::engine::testing
