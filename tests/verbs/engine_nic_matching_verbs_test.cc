// The engine over the verbs transport with tag matching in the NIC, on a
// real device. rxe0 has no tag matching, so the NIC's matching is played
// by ContractTmSrq (rdma-core's contract over a plain SRQ); everything
// else is the real path: the transport's two QPs per peer (self too),
// SENDs with a TMH, the SRQ's registered buffers, the NicMatchingPort, the
// engine's book. Ranks are threads of this process, each with its own
// device context, transport and engine. On a ConnectX-5+ the same job runs
// over the device's own TM-SRQ (TAGWIRE_TEST_TM_HARDWARE=1, see docs/matching.md).
#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../support/thread_bootstrap.h"
#include "cancel/cancel_settings.h"
#include "cancel/send_cancel_factory.h"
#include "contract_tm_srq.h"
#include "engine/engine.h"
#include "test_device.h"
#include "verbs/verbs_nic_matching.h"
#include "verbs/verbs_transport.h"

namespace tagwire::engine {
namespace {

using cancel::CancelMode;
using verbs::NicMatchingChoice;
using verbs::VerbsConnectChoice;
using verbs::testing::ContractNic;
using verbs::testing::ContractTmSrq;

constexpr std::size_t kEager = 1024;

std::vector<std::uint8_t> pattern_bytes(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed * 31 + i * 13);
  return v;
}

// Rank 0's opening of the send-cancel scenarios: a send to rank 1 cancelled
// at once (`bytes` must outlive the request). Null after a reported failure.
Request* isend_then_cancel(Engine& e, const std::vector<std::uint8_t>& bytes, int tag) {
  auto s = e.isend(bytes.data(), bytes.size(), 1, tag, e.world(), SendMode::kStandard);
  if (!s.is_ok()) {
    ADD_FAILURE() << "isend: " << s.status().to_string();
    return nullptr;
  }
  if (const Status c = e.cancel(*s); !c.is_ok()) {
    ADD_FAILURE() << "cancel: " << c.to_string();
    return nullptr;
  }
  return *s;
}

// The same, waited for: whether the cancel won (false after a reported
// failure too).
bool cancelled_send_won(Engine& e, const std::vector<std::uint8_t>& bytes, int tag) {
  Request* s = isend_then_cancel(e, bytes, tag);
  if (s == nullptr) return false;
  MessageStatus st;
  if (const Status w = e.wait(s, &st); !w.is_ok()) {
    ADD_FAILURE() << "wait: " << w.to_string();
    return false;
  }
  return st.cancelled;
}

// Whether this run uses the device's own tag matching instead of the
// contract SRQ: only where asked and the device has it.
bool hardware_run() {
  const char* v = std::getenv("TAGWIRE_TEST_TM_HARDWARE");
  return v != nullptr && std::string(v) == "1";
}

struct Job {
  explicit Job(int ranks) : meeting(ranks), facets(static_cast<std::size_t>(ranks)) {}
  tagwire::testing::ThreadMeeting meeting;
  // Each rank's tag-matching facet under its engine (its counters).
  std::vector<const verbs::VerbsNicMatching*> facets;
  std::atomic<int> flag{0};  // test-level signals between ranks (not messages)
};

// Runs `body` on every rank, each in a thread with its own engine over its
// own verbs transport, then checks the book and finalizes.
void run_job(int ranks, ContractNic::StaleAdd stale, std::uint32_t entries,
             const std::function<void(int, Engine&, Job&)>& body,
             CancelMode cancel_mode = CancelMode::kAgent, bool cancel_agent = false) {
  Job job(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      verbs::VerbsOptions o;
      const char* device = std::getenv("TAGWIRE_DEVICE");
      o.device = device != nullptr ? device : "";
      o.rank = r;
      o.size = ranks;
      o.max_payload = kEager;
      o.tm_entries = entries;
      if (hardware_run()) {
        o.nic_matching = NicMatchingChoice::kOn;
      } else {
        o.tm_srq_for_tests = [stale](const verbs::Device& d, std::uint32_t buffers,
                                     ibv_comp_channel* events) {
          return ContractTmSrq::create(d, buffers, stale, /*sync_request_every=*/7, events);
        };
      }
      auto transport = verbs::create_verbs_transport(o);
      ASSERT_TRUE(transport.is_ok()) << transport.status().to_string();
      ASSERT_NE((*transport)->nic_matching(), nullptr) << "the transport offers no tag matching";
      job.facets[static_cast<std::size_t>(r)] =
          dynamic_cast<const verbs::VerbsNicMatching*>((*transport)->nic_matching());
      Config config;
      config.cancel_agent = cancel_agent;
      config.progress_thread = false;
      config.eager_threshold = kEager;
      config.eager_threshold_set = true;
      ASSERT_TRUE(config.settings
                      .set(cancel::cancel_mode_setting(),
                           cancel_mode == CancelMode::kOneSided ? "onesided" : "agent")
                      .is_ok());
      auto engine = Engine::create(
          config, std::make_unique<tagwire::testing::ThreadBootstrap>(&job.meeting, r),
          std::move(transport).value(), tagwire::cancel::kSendCancelLayer);
      ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
      body(r, **engine, job);
      (void)job.meeting.allgather(r, {});  // every body done before any barrier message
      // The book and the NIC agree to the end: nothing left that the NIC
      // holds or owes, and no report the book could not place.
      for (int i = 0; i < 1000 && (*engine)->counters().nic_entries_in_book != 0; ++i) {
        (*engine)->progress();
      }
      const EngineCounters c = (*engine)->counters();
      EXPECT_EQ(c.nic_entries_in_book, 0u) << "rank " << r;
      EXPECT_EQ(c.nic_errors, 0u) << "rank " << r;
      if (::testing::Test::HasFailure()) {
        (void)engine->release();  // its barrier could wait for a lost message
        return;
      }
      EXPECT_TRUE((*engine)->finalize().is_ok()) << "rank " << r;
    });
  }
  for (auto& t : threads) t.join();
}

// Progresses until `done` (no helper thread: only the rank's own calls
// move its NIC's completions).
template <typename Done>
void progress_until(Engine& e, Done done) {
  while (!done()) {
    e.progress();
    std::this_thread::yield();
  }
}

class EngineNicMatchingOverVerbs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    auto device = verbs::testing::open_test_device(&why);
    if (!device) GTEST_SKIP() << why;
    if (hardware_run() && !device->caps().tm_rc) {
      GTEST_SKIP() << "TAGWIRE_TEST_TM_HARDWARE=1, but device " << device->caps().name
                   << " reports no IBV_TM_CAP_RC";
    }
  }
};

// Rank `rank` of two, by the QP exchange; `offload`: the NIC matches tags
// (the contract SRQ plays it, or the device's own where the run asks), for
// the transport-level checks, which need no engine.
verbs::VerbsOptions options(int rank, bool offload) {
  verbs::VerbsOptions o;
  const char* device = std::getenv("TAGWIRE_DEVICE");
  o.device = device != nullptr ? device : "";
  o.rank = rank;
  o.size = 2;
  o.max_payload = kEager;
  o.connect = VerbsConnectChoice::kExchange;
  if (offload && hardware_run()) {
    o.nic_matching = NicMatchingChoice::kOn;
  } else if (offload) {
    o.tm_srq_for_tests = [](const verbs::Device& d, std::uint32_t buffers,
                            ibv_comp_channel* events) {
      return ContractTmSrq::create(d, buffers, ContractNic::StaleAdd::kRefused, 0, events);
    };
  }
  return o;
}

// What the transport refuses, with the reason: rdma_cm's lazy connections
// (the tag-matching QPs are exchanged at start-up), and a peer that matches
// tags the other way (its address says so).
TEST_F(EngineNicMatchingOverVerbs, TransportRefusesRdmaCmAndAPeerThatMatchesTheOtherWay) {
  if (hardware_run()) GTEST_SKIP() << "a contract-SRQ check only";
  auto cm = options(0, true);
  cm.connect = VerbsConnectChoice::kCm;
  auto refused = verbs::create_verbs_transport(cm);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kConfig);
  EXPECT_NE(refused.status().message().find("TAGWIRE_VERBS_CONNECT=cm"), std::string::npos)
      << refused.status().to_string();

  auto with = verbs::create_verbs_transport(options(0, true));
  auto without = verbs::create_verbs_transport(options(1, false));
  ASSERT_TRUE(with.is_ok() && without.is_ok());
  EXPECT_NE((*with)->nic_matching(), nullptr);
  EXPECT_EQ((*without)->nic_matching(), nullptr);
  const std::vector<std::vector<std::uint8_t>> addresses = {(*with)->address(),
                                                            (*without)->address()};
  for (auto* t : {&*with, &*without}) {
    Status s = (**t).set_peer_addresses(addresses);
    EXPECT_EQ(s.code(), ErrorCode::kConfig) << s.to_string();
    EXPECT_NE(s.message().find("TAGWIRE_TM"), std::string::npos) << s.to_string();
  }
}

// A receiver asleep on its event fd (the cancel agent, a progress thread)
// wakes for a message on the tag-matching channel: with tag matching every
// message is a SEND into the TM-SRQ, whose CQ raises its events on the
// transport's one channel. Untagged (a cancel request's way) and tagged
// (here unexpected: the NIC holds no receive) alike, and a message already
// there stops it from falling asleep; before, the TM CQ had no channel and
// the sleeper only found such a message at its next timed look.
TEST_F(EngineNicMatchingOverVerbs, AMessageOnTheNicMatchingChannelWakesTheSleepingReceiver) {
  struct Inbox final : transport::Receiver {
    std::vector<std::string> headers;
    void on_message(std::span<const std::uint8_t> header, std::span<const std::uint8_t>) override {
      headers.emplace_back(header.begin(), header.end());
    }
  };
  struct Sink final : transport::NicMatchingSink {
    std::vector<std::string> unexpected;
    void on_tag_match(std::uint64_t, std::span<const std::uint8_t>,
                      std::span<const std::uint8_t>) override {
      ADD_FAILURE() << "a match, but no receive was posted";
    }
    void on_tag_unexpected(std::span<const std::uint8_t> header, std::span<const std::uint8_t>,
                           bool) override {
      unexpected.emplace_back(header.begin(), header.end());
    }
    void on_tag_op_done(matching::NicOp::Kind, std::uint64_t, bool, bool) override {}
    void on_tag_batch_end() override {}
  };
  std::unique_ptr<transport::Transport> side[2];
  Inbox inbox[2];
  Sink sink[2];
  transport::NicMatching* facet[2] = {};
  for (int r = 0; r < 2; ++r) {
    auto t = verbs::create_verbs_transport(options(r, true));
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    side[r] = std::move(t).value();
    side[r]->set_receiver(&inbox[r]);
    facet[r] = side[r]->nic_matching();
    ASSERT_NE(facet[r], nullptr);
    facet[r]->set_sink(&sink[r]);  // the facet in use, as the engine takes it
  }
  const std::vector<std::vector<std::uint8_t>> addresses = {side[0]->address(), side[1]->address()};
  for (auto& t : side) ASSERT_TRUE(t->set_peer_addresses(addresses).is_ok());
  const int fd = side[1]->event_fd();
  ASSERT_GE(fd, 0);
  const std::string header = "cancel-request";
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(header.data()),
                                            header.size());
  // Held by the engine, the facet is the one way out: the transport's own
  // send refuses, saying so, rather than take the eager ring, where a
  // control message could overtake the tagged message it names.
  auto refused = side[0]->send(1, bytes, {}, {}, transport::Delivery::kWake);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("send_untagged"), std::string::npos)
      << refused.status().to_string();

  for (const bool tagged : {false, true}) {
    SCOPED_TRACE(tagged ? "tagged" : "untagged");
    bool armed = false;
    for (int i = 0; i < 10000 && !armed; ++i) {  // until everything before has settled
      side[0]->progress();
      side[1]->progress();
      auto a = side[1]->arm();
      ASSERT_TRUE(a.is_ok()) << a.status().to_string();
      armed = *a;
    }
    ASSERT_TRUE(armed) << "nothing pending: arm() must allow sleeping";
    auto sent = tagged ? facet[0]->send_tagged(1, 0x1234, bytes, {}, {})
                       : facet[0]->send_untagged(1, bytes, {}, {}, transport::Delivery::kWake);
    ASSERT_TRUE(sent.is_ok()) << sent.status().to_string();
    // Only the sender moves: the receiver sleeps until its event.
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 10000), 1) << "the message raised no event at the sleeping receiver";
    auto& got = tagged ? sink[1].unexpected : inbox[1].headers;
    for (int i = 0; i < 100000 && got.empty(); ++i) {
      side[0]->progress();
      side[1]->progress();
    }
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], header);
  }

  // A message already in the CQ when the receiver arms raises no event:
  // arm() must find it and refuse to sleep. The sender's SEND completes
  // on the peer's ACK, which rxe sends after the receive's completion; a
  // NIC may ACK before its completion is visible, hence the pause there.
  ASSERT_TRUE(facet[0]->send_untagged(1, bytes, {}, {}, transport::Delivery::kWake).is_ok());
  const auto* sender = dynamic_cast<const verbs::VerbsNicMatching*>(facet[0]);
  ASSERT_NE(sender, nullptr);
  for (int i = 0; i < 100000 && sender->sending(); ++i) side[0]->progress();
  ASSERT_FALSE(sender->sending()) << "the SEND was never acknowledged";
  if (hardware_run()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto a = side[1]->arm();
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_FALSE(*a) << "arm() must report the message waiting in the tag-matching CQ";
  for (int i = 0; i < 100000 && inbox[1].headers.size() < 2; ++i) side[1]->progress();
  EXPECT_EQ(inbox[1].headers.size(), 2u);
  for (auto& t : side) EXPECT_TRUE(t->disconnect_all().is_ok());
}

// Receives posted first are taken by the NIC: an eager message and a
// rendezvous request (read by the engine straight into the receive), both
// intact, and software matched none.
TEST_F(EngineNicMatchingOverVerbs, PostedReceivesAreMatchedByTheNicEagerAndRendezvous) {
  const auto small = pattern_bytes(100, 1);
  const auto large = pattern_bytes(3 * kEager + 5, 2);
  run_job(2, ContractNic::StaleAdd::kRefused, 16, [&](int rank, Engine& e, Job& job) {
    if (rank == 1) {
      std::vector<std::uint8_t> a(small.size()), b(large.size());
      auto ra = e.irecv(a.data(), a.size(), 0, 1, e.world());
      auto rb = e.irecv(b.data(), b.size(), 0, 2, e.world());
      ASSERT_TRUE(ra.is_ok() && rb.is_ok());
      e.progress();  // the NIC runs the ADDs and the engine hears
      e.progress();
      job.flag = 1;
      MessageStatus sa, sb;
      ASSERT_TRUE(e.wait(*ra, &sa).is_ok());
      ASSERT_TRUE(e.wait(*rb, &sb).is_ok());
      EXPECT_TRUE(sa.error.is_ok() && sb.error.is_ok()) << sa.error.to_string();
      EXPECT_EQ(sa.count, small.size());
      EXPECT_EQ(sb.count, large.size());
      EXPECT_EQ(a, small);
      EXPECT_EQ(b, large);
      const auto c = e.counters().matching;
      EXPECT_EQ(c.matched_by_nic, 2u);
      EXPECT_EQ(c.matched_by_software, 0u);
    } else {
      while (job.flag.load() < 1) std::this_thread::yield();
      const std::uint64_t before = e.transport_counters().messages_sent;
      ASSERT_TRUE(e.send(small.data(), small.size(), 1, 1, e.world(), SendMode::kStandard).is_ok());
      ASSERT_TRUE(e.send(large.data(), large.size(), 1, 2, e.world(), SendMode::kStandard).is_ok());
      // Both went tagged, past Transport::send, and still count as sent.
      EXPECT_EQ(e.transport_counters().messages_sent, before + 2);
      EXPECT_EQ(job.facets[0]->counters().tagged_sent, 2u);
    }
  });
}

// Messages that arrive before their receive are the NIC's unexpected ones:
// probe sees them, software matches them, and software's count of them
// keeps step with the NIC's, so that the next posted receive is the NIC's.
TEST_F(EngineNicMatchingOverVerbs,
       UnexpectedMessagesAreProbedAndMatchedBySoftwareThenTheNicResumes) {
  constexpr int kCount = 5;
  run_job(2, ContractNic::StaleAdd::kRefused, 16, [&](int rank, Engine& e, Job& job) {
    if (rank == 0) {
      for (int i = 0; i < kCount; ++i) {
        const auto m = pattern_bytes(40, static_cast<std::uint32_t>(i));
        ASSERT_TRUE(e.send(m.data(), m.size(), 1, 3, e.world(), SendMode::kStandard).is_ok());
      }
      job.flag = 1;
      while (job.flag.load() < 2) std::this_thread::yield();
      const auto last = pattern_bytes(60, 99);
      ASSERT_TRUE(e.send(last.data(), last.size(), 1, 3, e.world(), SendMode::kStandard).is_ok());
      return;
    }
    while (job.flag.load() < 1) std::this_thread::yield();
    MessageStatus st;
    bool found = false;
    progress_until(e, [&] {
      auto p = e.iprobe(0, 3, e.world(), &st);
      found = p.is_ok() && *p;
      return found;
    });
    EXPECT_EQ(st.count, 40u);
    // The sender's sends returned when staged, not when delivered: wait
    // until all five have landed, or a receive posted below could meet a
    // late one in the NIC (correct MPI, but not this scenario).
    progress_until(e, [&] { return e.counters().unexpected >= kCount; });
    for (int i = 0; i < kCount; ++i) {
      std::vector<std::uint8_t> in(64);
      ASSERT_TRUE(e.recv(in.data(), in.size(), 0, 3, e.world(), &st).is_ok());
      EXPECT_EQ(st.count, 40u);
      in.resize(st.count);
      EXPECT_EQ(in, pattern_bytes(40, static_cast<std::uint32_t>(i))) << "message " << i;
    }
    EXPECT_EQ(e.counters().matching.matched_by_software, static_cast<std::uint64_t>(kCount));
    // Post, let the NIC take it in step, then the sender goes.
    std::vector<std::uint8_t> in(64);
    auto r = e.irecv(in.data(), in.size(), 0, 3, e.world());
    ASSERT_TRUE(r.is_ok());
    for (int i = 0; i < 4; ++i) e.progress();
    job.flag = 2;
    ASSERT_TRUE(e.wait(*r, &st).is_ok());
    in.resize(st.count);
    EXPECT_EQ(in, pattern_bytes(60, 99));
    // The ADD carried software's count of the 5, the NIC's own: in step
    // without a TAG_SYNC (none is due while the NIC holds no entry), so
    // the NIC neither refused the entry (kRefused) nor left it unused.
    const auto c = e.counters().matching;
    EXPECT_EQ(c.matched_by_nic, 1u);
    EXPECT_EQ(c.add_rejected, 0u);
  });
}

// Probe and mprobe see what a receive would while the NIC holds an earlier
// receive: the next message, not the one the NIC gives that receive; a
// wildcard mprobe takes the rendezvous request after it with its full
// length, and mrecv reads it. What mprobe took leaves software's count in
// step with the NIC's, so the next receive is the NIC's.
TEST_F(EngineNicMatchingOverVerbs, ProbeAndMprobeSeeWhatAReceiveWouldWhileTheNicHoldsAnEarlierOne) {
  const auto m1 = pattern_bytes(20, 11);
  const auto m2 = pattern_bytes(30, 12);
  const auto m3 = pattern_bytes(3 * kEager + 7, 13);
  const auto m4 = pattern_bytes(10, 14);
  constexpr int kTag = 9;
  run_job(2, ContractNic::StaleAdd::kRefused, 16, [&](int rank, Engine& e, Job& job) {
    Communicator* world = e.world();
    if (rank == 0) {
      while (job.flag.load() < 1) std::this_thread::yield();
      ASSERT_TRUE(e.send(m1.data(), m1.size(), 1, kTag, world, SendMode::kStandard).is_ok());
      ASSERT_TRUE(e.send(m2.data(), m2.size(), 1, kTag, world, SendMode::kStandard).is_ok());
      auto r3 = e.isend(m3.data(), m3.size(), 1, kTag, world, SendMode::kStandard);
      ASSERT_TRUE(r3.is_ok());
      job.flag = 2;
      progress_until(e, [&] { return job.flag.load() >= 3; });
      ASSERT_TRUE(e.send(m4.data(), m4.size(), 1, kTag, world, SendMode::kStandard).is_ok());
      MessageStatus st;
      ASSERT_TRUE(e.wait(*r3, &st).is_ok());
      EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
      return;
    }
    std::vector<std::uint8_t> in1(64, 0);
    auto r1 = e.irecv(in1.data(), in1.size(), 0, kTag, world);
    ASSERT_TRUE(r1.is_ok());
    for (int i = 0; i < 4; ++i) e.progress();  // the NIC runs the ADD and the engine hears
    MessageStatus probed;
    auto none = e.iprobe(0, kTag, world, &probed);
    ASSERT_TRUE(none.is_ok());
    EXPECT_FALSE(*none) << "a posted receive is not a message";
    job.flag = 1;
    while (job.flag.load() < 2) std::this_thread::yield();

    auto second = e.mprobe(0, kTag, world, &probed);
    ASSERT_TRUE(second.is_ok()) << second.status().to_string();
    EXPECT_EQ(probed.count, m2.size()) << "the probe saw the message the NIC gave the receive";
    MessageStatus st;
    ASSERT_TRUE(e.wait(*r1, &st).is_ok());
    EXPECT_EQ(st.count, m1.size());
    EXPECT_TRUE(std::equal(m1.begin(), m1.end(), in1.begin()));
    EXPECT_EQ(e.counters().matching.matched_by_nic, 1u);

    auto third = e.mprobe(matching::kAnySource, matching::kAnyTag, world, &probed);
    ASSERT_TRUE(third.is_ok()) << third.status().to_string();
    EXPECT_EQ(probed.count, m3.size()) << "a probed rendezvous has its full length";
    none = e.iprobe(matching::kAnySource, matching::kAnyTag, world, &probed);
    ASSERT_TRUE(none.is_ok());
    EXPECT_FALSE(*none) << "both mprobed messages are gone from the queue";
    std::vector<std::uint8_t> in2(m2.size()), in3(m3.size());
    auto r2 = e.imrecv(in2.data(), in2.size(), std::move(second).value());
    auto r3 = e.imrecv(in3.data(), in3.size(), std::move(third).value());
    ASSERT_TRUE(r2.is_ok() && r3.is_ok());
    ASSERT_TRUE(e.wait(*r2, &st).is_ok());
    EXPECT_EQ(in2, m2);
    ASSERT_TRUE(e.wait(*r3, &st).is_ok());
    EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
    EXPECT_EQ(in3, m3);

    std::vector<std::uint8_t> in4(16, 0);
    auto r4 = e.irecv(in4.data(), in4.size(), 0, kTag, world);
    ASSERT_TRUE(r4.is_ok());
    for (int i = 0; i < 4; ++i) e.progress();
    job.flag = 3;
    ASSERT_TRUE(e.wait(*r4, &st).is_ok());
    EXPECT_TRUE(std::equal(m4.begin(), m4.end(), in4.begin()));
    const auto c = e.counters().matching;
    EXPECT_EQ(c.matched_by_nic, 2u) << "the receive after the mprobes was not the NIC's";
    EXPECT_EQ(c.matched_by_software, 2u);  // the two mprobes
    EXPECT_EQ(c.add_rejected, 0u);
  });
}

// A receive cancel while the NIC holds the receive goes by TAG_DEL and
// completes cancelled; a send cancel of a message still unexpected at the
// receiver is granted, and neither message is ever received.
TEST_F(EngineNicMatchingOverVerbs, ReceiveAndSendCancelWhileTheNicHoldsOrCountsTheMessage) {
  run_job(2, ContractNic::StaleAdd::kRefused, 16, [&](int rank, Engine& e, Job& job) {
    if (rank == 1) {
      std::vector<std::uint8_t> in(64);
      auto r = e.irecv(in.data(), in.size(), 0, 4, e.world());
      ASSERT_TRUE(r.is_ok());
      for (int i = 0; i < 4; ++i) e.progress();
      ASSERT_TRUE(e.cancel(*r).is_ok());
      MessageStatus st;
      ASSERT_TRUE(e.wait(*r, &st).is_ok());
      EXPECT_TRUE(st.cancelled);
      EXPECT_GT(e.counters().matching.tag_dels, 0u);
      job.flag = 1;
      // Not looking while rank 0 sends the message and then its cancel
      // request: both have landed when this rank looks, and the request is
      // granted only if it comes behind the message on one channel (a
      // request that overtook it would find nothing to cancel).
      while (job.flag.load() < 2) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      // Serve the cancel (no agent thread here) until rank 0 is done.
      progress_until(e, [&] { return job.flag.load() >= 3; });
      // What rank 0 sent after: the cancelled message is not in front of it.
      ASSERT_TRUE(e.recv(in.data(), in.size(), 0, 5, e.world(), &st).is_ok());
      in.resize(st.count);
      EXPECT_EQ(in, pattern_bytes(8, 2));
      bool more = true;
      auto p = e.iprobe(0, 5, e.world(), &st);
      more = p.is_ok() && *p;
      EXPECT_FALSE(more) << "the cancelled send was delivered too";
    } else {
      while (job.flag.load() < 1) std::this_thread::yield();
      const auto doomed = pattern_bytes(8, 1);
      Request* s = isend_then_cancel(e, doomed, 5);
      ASSERT_NE(s, nullptr);
      job.flag = 2;
      MessageStatus st;
      ASSERT_TRUE(e.wait(s, &st).is_ok());
      EXPECT_TRUE(st.cancelled) << "the receiver had not matched it: the cancel must win";
      const auto kept = pattern_bytes(8, 2);
      ASSERT_TRUE(e.send(kept.data(), kept.size(), 1, 5, e.world(), SendMode::kStandard).is_ok());
      job.flag = 3;
    }
  });
}

// MPI_Cancel is local: a send cancel is answered while the receiving
// application is away from the library, by its cancel agent, which sleeps
// on the transport's event fd and here is woken by the request's arrival
// on the tag-matching CQ.
TEST_F(EngineNicMatchingOverVerbs, TheCancelAgentAnswersASendCancelWhileTheReceiverIsAway) {
  run_job(
      2, ContractNic::StaleAdd::kRefused, 16,
      [&](int rank, Engine& e, Job& job) {
        if (rank == 1) {
          job.flag = 1;
          // Away: no call into the library until rank 0's send completed.
          while (job.flag.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          EXPECT_GT(e.counters().helper_entries, 0u) << "the agent never served the transport";
          MessageStatus st;
          auto p = e.iprobe(0, 8, e.world(), &st);
          ASSERT_TRUE(p.is_ok());
          EXPECT_FALSE(*p) << "the cancelled send was delivered too";
        } else {
          while (job.flag.load() < 1) std::this_thread::yield();
          const auto doomed = pattern_bytes(8, 3);
          EXPECT_TRUE(cancelled_send_won(e, doomed, 8))
              << "nothing at rank 1 could match it: the cancel must win";
          job.flag = 2;
        }
      },
      CancelMode::kAgent, /*cancel_agent=*/true);
}

// A job of one rank: its only channel is to itself, through the NIC; the
// NIC matches what the rank sends itself, in order.
TEST_F(EngineNicMatchingOverVerbs, AJobOfOneRankMatchesItsOwnMessagesInTheNic) {
  run_job(1, ContractNic::StaleAdd::kRefused, 16, [&](int, Engine& e, Job&) {
    std::vector<std::uint8_t> first(50), second(50);
    auto r1 = e.irecv(first.data(), first.size(), 0, 6, e.world());
    auto r2 = e.irecv(second.data(), second.size(), matching::kAnySource, 6, e.world());
    ASSERT_TRUE(r1.is_ok() && r2.is_ok());
    for (int i = 0; i < 4; ++i) e.progress();
    const auto a = pattern_bytes(50, 7);
    const auto b = pattern_bytes(50, 8);
    ASSERT_TRUE(e.send(a.data(), a.size(), 0, 6, e.world(), SendMode::kStandard).is_ok());
    ASSERT_TRUE(e.send(b.data(), b.size(), 0, 6, e.world(), SendMode::kStandard).is_ok());
    MessageStatus st;
    ASSERT_TRUE(e.wait(*r1, &st).is_ok());
    ASSERT_TRUE(e.wait(*r2, &st).is_ok());
    EXPECT_EQ(first, a);
    EXPECT_EQ(second, b);
    EXPECT_EQ(e.counters().matching.matched_by_nic, 2u);
  });
}

// One-sided send cancel needs every match to claim a slot first, so the
// engine declines the NIC's matching even where the transport offers it;
// the transport then keeps every message on its eager ring (the path the
// one-sided tests cover), and a cancel is decided by the remote CAS.
TEST_F(EngineNicMatchingOverVerbs, OneSidedCancelKeepsMatchingAndMessagesInSoftware) {
  run_job(
      2, ContractNic::StaleAdd::kRefused, 16,
      [&](int rank, Engine& e, Job& job) {
        if (rank == 1) {
          job.flag = 1;
          progress_until(e, [&] { return job.flag.load() >= 2; });
          std::vector<std::uint8_t> in(32);
          MessageStatus st;
          ASSERT_TRUE(e.recv(in.data(), in.size(), 0, 8, e.world(), &st).is_ok());
          in.resize(st.count);
          EXPECT_EQ(in, pattern_bytes(16, 4)) << "the cancelled send was delivered";
          EXPECT_EQ(e.counters().matching.matched_by_nic, 0u);
          EXPECT_EQ(e.counters().matching.tag_adds, 0u);
        } else {
          while (job.flag.load() < 1) std::this_thread::yield();
          const auto doomed = pattern_bytes(16, 3);
          EXPECT_TRUE(cancelled_send_won(e, doomed, 8))
              << "not yet matched: the remote CAS must win";
          EXPECT_GT(e.counters().one_sided_cancels, 0u);
          const auto kept = pattern_bytes(16, 4);
          ASSERT_TRUE(
              e.send(kept.data(), kept.size(), 1, 8, e.world(), SendMode::kStandard).is_ok());
          job.flag = 2;
        }
        // Nothing went by the tag-matching channel: all by the eager ring.
        const auto& sent = job.facets[static_cast<std::size_t>(rank)]->counters();
        EXPECT_EQ(sent.tagged_sent + sent.untagged_sent, 0u);
        if (rank == 0) {
          EXPECT_GE(e.transport_counters().messages_sent, 2u);  // the two sends
        }
      },
      CancelMode::kOneSided);
}

// Three ranks, each sending to every rank (itself too) a stream of eager,
// rendezvous and synchronous messages while receiving with specific and
// ANY_SOURCE receives in random windows: every message arrives once,
// intact, in each sender's order; both the NIC and software match; the
// book ends empty. A small NIC (4 entries) keeps receives in both places.
TEST_F(EngineNicMatchingOverVerbs, StreamsKeepMpiOrderAcrossTheNicAndSoftware) {
  constexpr int kRanks = 3;
  constexpr int kPerPair = 60;
  std::atomic<std::uint64_t> by_nic{0}, by_software{0}, syncs{0};
  run_job(kRanks, ContractNic::StaleAdd::kRefused, 4, [&](int rank, Engine& e, Job&) {
    std::mt19937 random(static_cast<std::uint32_t>(rank) * 7919u + 11u);
    auto size_of = [](int from, int to, int n) -> std::size_t {
      const int k = (from * 131 + to * 17 + n * 7) % 10;
      return k < 6 ? static_cast<std::size_t>(8 + n) : k < 9 ? 2 * kEager + n : 0;
    };
    auto payload = [](int from, int to, int n, std::size_t bytes) {
      return pattern_bytes(bytes, static_cast<std::uint32_t>(from * 10007 + to * 101 + n));
    };
    // Rounds: a chunk of sends to every rank (requests), then a window of
    // up to 6 receives, specific or ANY_SOURCE, so that receives are
    // posted while peers still send (the NIC's chance) and messages also
    // arrive before their receive (software's).
    std::deque<std::vector<std::uint8_t>> out_buffers;
    std::vector<Request*> sends;
    int sent = 0;
    auto send_chunk = [&] {
      for (int k = 0; k < 5 && sent < kPerPair; ++k, ++sent) {
        for (int to = 0; to < kRanks; ++to) {
          out_buffers.push_back(payload(rank, to, sent, size_of(rank, to, sent)));
          const SendMode mode = sent % 9 == 4 ? SendMode::kSynchronous : SendMode::kStandard;
          auto s =
              e.isend(out_buffers.back().data(), out_buffers.back().size(), to, 9, e.world(), mode);
          ASSERT_TRUE(s.is_ok()) << s.status().to_string();
          sends.push_back(*s);
        }
      }
    };
    std::vector<int> next(kRanks, 0);  // next message number expected from each sender
    int received = 0;
    const int expected = kRanks * kPerPair;
    while (received < expected) {
      send_chunk();
      struct Posted {
        Request* r;
        std::vector<std::uint8_t> in;
      };
      std::vector<Posted> window;
      const int n = std::min<int>(1 + static_cast<int>(random() % 6), expected - received);
      for (int i = 0; i < n; ++i) {
        const int source = random() % 2 == 0 ? -1 : static_cast<int>(random() % kRanks);
        Posted p{nullptr, std::vector<std::uint8_t>(2 * kEager + kPerPair)};
        auto r = e.irecv(p.in.data(), p.in.size(), source == -1 ? matching::kAnySource : source, 9,
                         e.world());
        ASSERT_TRUE(r.is_ok());
        p.r = *r;
        window.push_back(std::move(p));
      }
      // A specific receive may wait for a sender that is done with this
      // rank: complete them in post order and cancel what does not come.
      for (Posted& p : window) {
        MessageStatus st;
        bool done = false;
        for (int spins = 0; spins < 20000 && !done; ++spins) {
          auto t = e.test(p.r, &st);
          ASSERT_TRUE(t.is_ok());
          done = *t;
          if (!done) send_chunk();  // keep feeding the others meanwhile
        }
        if (!done) {
          ASSERT_TRUE(e.cancel(p.r).is_ok());
          ASSERT_TRUE(e.wait(p.r, &st).is_ok());
          if (st.cancelled) continue;
        }
        ASSERT_TRUE(st.error.is_ok()) << st.error.to_string();
        ASSERT_GE(st.source, 0);
        const int from = st.source;
        const int number = next[static_cast<std::size_t>(from)]++;
        const std::size_t bytes = size_of(from, rank, number);
        ASSERT_EQ(st.count, bytes) << "from " << from << " message " << number << ": out of order";
        p.in.resize(st.count);
        ASSERT_EQ(p.in, payload(from, rank, number, bytes))
            << "from " << from << " message " << number;
        ++received;
      }
    }
    for (int from = 0; from < kRanks; ++from)
      EXPECT_EQ(next[static_cast<std::size_t>(from)], kPerPair);
    for (Request* s : sends) {
      MessageStatus st;
      ASSERT_TRUE(e.wait(s, &st).is_ok());
      EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
    }
    const auto c = e.counters().matching;
    by_nic += c.matched_by_nic;
    by_software += c.matched_by_software;
    syncs += c.syncs;
  });
  EXPECT_GT(by_nic.load(), 0u);
  EXPECT_GT(by_software.load(), 0u);
  // Unexpected messages while the NIC held entries: its count was caught up.
  EXPECT_GT(syncs.load(), 0u);
  std::printf("matched by the NIC %llu, by software %llu, syncs %llu\n",
              static_cast<unsigned long long>(by_nic.load()),
              static_cast<unsigned long long>(by_software.load()),
              static_cast<unsigned long long>(syncs.load()));
}

}  // namespace
}  // namespace tagwire::engine
