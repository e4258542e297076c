// Two ranks' TagMatchingChannels in one process, connected over the RDMA
// device: eager and rendezvous messages (software READ and FIN, or the
// NIC's own), control messages on the same QP as the data, and the send
// cancel that drains the tag-matching CQ before deciding. Both paths:
//  - Software: plain SRQs; runs wherever there is an RDMA device, rxe
//    included (ci/rxe-tests runs it in the VM).
//  - Hardware: tag-matching SRQs; runs where the device reports
//    IBV_TM_CAP_RC (ConnectX-5 and later) and skips, saying why, elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "matching/envelope.h"
#include "test_device.h"
#include "verbs/device.h"
#include "verbs/tag_matching_channels.h"

namespace tagwire::verbs {
namespace {

using matching::Envelope;
using matching::kAnySource;
using matching::kAnyTag;
using Events = TagMatchingChannels::Events;
using Completed = TagMatchingChannels::Completed;

enum class Path { kSoftware, kHardware };

constexpr std::size_t kMemory = 8 << 20;  // per rank: sources and receive buffers

// One rank: its channels, registered memory, and what its progress found.
struct Rank {
  std::unique_ptr<TagMatchingChannels> channels;
  std::vector<std::uint8_t> memory;
  MrPtr mr;
  Events events;

  LocalBuffer buffer(std::size_t offset, std::uint32_t length) {
    return {memory.data() + offset, length, mr->lkey};
  }
  RendezvousHeader source(std::size_t offset, std::uint32_t length) {
    return {reinterpret_cast<std::uint64_t>(memory.data() + offset), mr->rkey, length};
  }
  void fill(std::size_t offset, std::size_t length, std::uint32_t seed) {
    for (std::size_t i = 0; i < length; ++i) {
      memory[offset + i] = static_cast<std::uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
    }
  }
  const Completed* receive(std::uint64_t cookie) const {
    const Completed* found = nullptr;
    for (const Completed& c : events.receives) {
      if (c.cookie == cookie) {
        EXPECT_EQ(found, nullptr) << "receive " << cookie << " completed twice";
        found = &c;
      }
    }
    return found;
  }
  bool finished(std::uint32_t request) const {
    for (std::uint32_t f : events.finished) {
      if (f == request) return true;
    }
    return false;
  }
};

class TagMatchingChannelsTest : public ::testing::TestWithParam<Path> {
 protected:
  static constexpr std::uint32_t kBufferBytes = 2048;

  void SetUp() override {
    std::string why_not;
    device_ = testing::open_tag_matching_device(GetParam() == Path::kHardware, &why_not);
    if (!device_) GTEST_SKIP() << why_not;
    auto gid = device_->roce_v2_ipv4_gid_index();
    ASSERT_TRUE(gid.is_ok()) << gid.status().to_string();
    TagMatchingChannelOptions options;
    options.receiver.hardware = GetParam() == Path::kHardware;
    options.receiver.nic_entries = 32;
    options.receiver.buffers = 128;
    options.receiver.buffer_bytes = kBufferBytes;
    for (Rank* r : {&a_, &b_}) {
      auto c = TagMatchingChannels::create(*device_, *gid, 2, options);
      ASSERT_TRUE(c.is_ok()) << c.status().to_string();
      r->channels = std::move(c).value();
      r->memory.assign(kMemory, 0);
      auto mr = register_memory(*device_, r->memory.data(), r->memory.size(),
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
      ASSERT_TRUE(mr.is_ok()) << mr.status().to_string();
      r->mr = std::move(mr).value();
    }
    // a is rank 0, b rank 1; each has a channel to the other only.
    ASSERT_TRUE(a_.channels->connect(1, b_.channels->address(0)).is_ok());
    ASSERT_TRUE(b_.channels->connect(0, a_.channels->address(1)).is_ok());
  }

  void TearDown() override {
    a_ = Rank{};
    b_ = Rank{};
  }

  // Drives both ranks until `done` holds (or 30 s pass).
  void pump(const std::function<bool()>& done, const char* what) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < until) {
      Status sa = a_.channels->progress(&a_.events);
      ASSERT_TRUE(sa.is_ok()) << sa.to_string();
      Status sb = b_.channels->progress(&b_.events);
      ASSERT_TRUE(sb.is_ok()) << sb.to_string();
    }
    ASSERT_TRUE(done()) << what << ": not after 30 s";
  }

  std::uint64_t post(Rank& r, const matching::ReceivePattern& p, std::size_t offset,
                     std::uint32_t length) {
    const std::uint64_t cookie = ++next_cookie_;
    auto id = r.channels->post_receive(p, r.buffer(offset, length), cookie);
    EXPECT_TRUE(id.is_ok()) << id.status().to_string();
    return cookie;
  }

  bool same_bytes(const Rank& from, std::size_t from_offset, const Rank& to, std::size_t to_offset,
                  std::size_t length) {
    return std::memcmp(from.memory.data() + from_offset, to.memory.data() + to_offset, length) == 0;
  }

  bool hardware() const { return GetParam() == Path::kHardware; }

  std::unique_ptr<Device> device_;
  Rank a_, b_;
  std::uint64_t next_cookie_ = 0;
};

INSTANTIATE_TEST_SUITE_P(BothPaths, TagMatchingChannelsTest,
                         ::testing::Values(Path::kSoftware, Path::kHardware),
                         [](const auto& param_info) {
                           return param_info.param == Path::kSoftware ? "Software" : "Hardware";
                         });

TEST_P(TagMatchingChannelsTest, EagerExpectedAndUnexpected) {
  const std::string first = "expected: matched where it arrives";
  const std::string second = "unexpected: waits in software";
  auto expected = post(b_, {1, 0, 5}, 0, 256);
  std::span<const std::uint8_t> p1(reinterpret_cast<const std::uint8_t*>(first.data()),
                                   first.size());
  std::span<const std::uint8_t> p2(reinterpret_cast<const std::uint8_t*>(second.data()),
                                   second.size());
  ASSERT_TRUE(a_.channels->send_eager(1, {1, 0, 5}, 11, p1).is_ok());
  ASSERT_TRUE(a_.channels->send_eager(1, {1, 0, 6}, 12, p2).is_ok());
  pump(
      [&] {
        return b_.receive(expected) != nullptr && b_.channels->probe({1, 0, 6});
      },
      "eager messages");
  const Completed* c = b_.receive(expected);
  EXPECT_EQ(c->length, first.size());
  EXPECT_EQ(c->sender_request, 11u);
  EXPECT_EQ(c->by_nic, hardware());
  EXPECT_FALSE(c->rendezvous);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b_.memory.data()), c->length), first);
  auto probed = b_.channels->probe({1, kAnySource, kAnyTag});
  ASSERT_TRUE(probed.has_value());
  EXPECT_EQ(probed->length, second.size());
  auto later = post(b_, {1, 0, 6}, 4096, 256);
  pump([&] { return b_.receive(later) != nullptr; }, "receive of the unexpected message");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b_.memory.data() + 4096),
                        b_.receive(later)->length),
            second);
  EXPECT_EQ(a_.channels->counters().eager_sent, 2u);
}

// A receive posted first: the NIC reads the data itself (hardware) or
// software reads it and sends the FIN; either way the sender is told.
TEST_P(TagMatchingChannelsTest, RendezvousToAPostedReceive) {
  constexpr std::uint32_t kBytes = 300000;
  a_.fill(0, kBytes, 1);
  auto cookie = post(b_, {2, 0, 7}, 1 << 20, kBytes);
  ASSERT_TRUE(a_.channels->send_rendezvous(1, {2, 0, 7}, 41, a_.source(0, kBytes)).is_ok());
  pump([&] { return b_.receive(cookie) != nullptr && a_.finished(41); }, "rendezvous and its FIN");
  const Completed* c = b_.receive(cookie);
  EXPECT_TRUE(c->error.is_ok()) << c->error.to_string();
  EXPECT_TRUE(c->rendezvous);
  EXPECT_FALSE(c->truncated);
  EXPECT_EQ(c->length, kBytes);
  EXPECT_EQ(c->sender_request, 41u);
  EXPECT_EQ(c->by_nic, hardware());
  EXPECT_TRUE(same_bytes(a_, 0, b_, 1 << 20, kBytes));
  // One FIN reached the sender: software's, or the NIC's after its own read.
  EXPECT_EQ(a_.channels->counters().fins_received, 1u);
  EXPECT_EQ(b_.channels->counters().fins_sent, c->read_by_nic ? 0u : 1u);
}

TEST_P(TagMatchingChannelsTest, UnexpectedRendezvousIsReadWhenReceived) {
  constexpr std::uint32_t kBytes = 1 << 20;
  a_.fill(4096, kBytes, 2);
  ASSERT_TRUE(a_.channels->send_rendezvous(1, {2, 0, 8}, 42, a_.source(4096, kBytes)).is_ok());
  pump([&] { return b_.channels->probe({2, 0, 8}).has_value(); }, "rendezvous request");
  EXPECT_EQ(b_.channels->probe({2, 0, 8})->length, kBytes) << "probe reports the data's length";
  EXPECT_FALSE(a_.finished(42)) << "nothing has been read yet";
  auto cookie = post(b_, {2, kAnySource, kAnyTag}, 2 << 20, kBytes);
  pump([&] { return b_.receive(cookie) != nullptr && a_.finished(42); }, "software read + FIN");
  const Completed* c = b_.receive(cookie);
  EXPECT_TRUE(c->error.is_ok()) << c->error.to_string();
  EXPECT_FALSE(c->by_nic);
  EXPECT_TRUE(c->needs_fin());
  EXPECT_EQ(c->envelope, (Envelope{2, 0, 8}));
  EXPECT_TRUE(same_bytes(a_, 4096, b_, 2 << 20, kBytes));
  EXPECT_EQ(b_.channels->counters().software_reads, 1u);
  EXPECT_FALSE(b_.channels->probe({2, kAnySource, kAnyTag}).has_value());
}

// mprobe sees the rendezvous a receive would get and takes it out of
// matching; mreceive reads it, and the sender is told.
TEST_P(TagMatchingChannelsTest, MprobedRendezvousIsMreceived) {
  constexpr std::uint32_t kBytes = 50000;
  a_.fill(0, kBytes, 4);
  ASSERT_TRUE(a_.channels->send_rendezvous(1, {2, 0, 10}, 44, a_.source(0, kBytes)).is_ok());
  pump([&] { return b_.channels->probe({2, 0, 10}).has_value(); }, "rendezvous request");
  auto m = b_.channels->mprobe({2, kAnySource, kAnyTag});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->length, kBytes);
  EXPECT_FALSE(b_.channels->probe({2, kAnySource, kAnyTag}).has_value());
  auto id = b_.channels->mreceive(*m, b_.buffer(1 << 20, kBytes), 555);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  pump([&] { return b_.receive(555) != nullptr && a_.finished(44); }, "mreceive + FIN");
  EXPECT_TRUE(same_bytes(a_, 0, b_, 1 << 20, kBytes));
}

// Truncation reads only what fits, says so, and still frees the sender.
TEST_P(TagMatchingChannelsTest, RendezvousIntoASmallerBufferTruncatesAndStillFinishes) {
  constexpr std::uint32_t kBytes = 100000, kRoom = 1000;
  a_.fill(0, kBytes, 3);
  b_.fill(3 << 20, 4096, 9);  // what lies past the buffer must stay
  std::vector<std::uint8_t> past(b_.memory.begin() + (3 << 20) + kRoom,
                                 b_.memory.begin() + (3 << 20) + 4096);
  ASSERT_TRUE(a_.channels->send_rendezvous(1, {2, 0, 9}, 43, a_.source(0, kBytes)).is_ok());
  pump([&] { return b_.channels->probe({2, 0, 9}).has_value(); }, "rendezvous request");
  auto cookie = post(b_, {2, 0, 9}, 3 << 20, kRoom);
  pump([&] { return b_.receive(cookie) != nullptr && a_.finished(43); }, "truncated read + FIN");
  const Completed* c = b_.receive(cookie);
  EXPECT_TRUE(c->truncated);
  EXPECT_EQ(c->length, kRoom);
  EXPECT_TRUE(same_bytes(a_, 0, b_, 3 << 20, kRoom));
  EXPECT_TRUE(std::equal(past.begin(), past.end(), b_.memory.begin() + (3 << 20) + kRoom));
}

// A control message sent behind a message on the same channel arrives
// behind it, so a cancel request finds the message it names already here;
// still unexpected, the cancel wins and no receive or probe ever sees it.
TEST_P(TagMatchingChannelsTest, SendCancelBehindTheMessageRemovesIt) {
  const std::string text = "to be cancelled";
  std::span<const std::uint8_t> p(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  ASSERT_TRUE(a_.channels->send_eager(1, {3, 0, 1}, 77, p).is_ok());
  const std::uint8_t cancel_request[] = {'C', 77};
  ASSERT_TRUE(a_.channels->send_control(1, cancel_request).is_ok());
  bool message_was_there = false;
  pump(
      [&] {
        if (b_.events.controls.empty()) return false;
        message_was_there = b_.channels->probe({3, 0, 1}).has_value();
        return true;
      },
      "control message");
  ASSERT_EQ(b_.events.controls.size(), 1u);
  EXPECT_EQ(b_.events.controls[0].peer, 0);
  EXPECT_EQ(b_.events.controls[0].bytes,
            std::vector<std::uint8_t>(cancel_request, cancel_request + 2));
  EXPECT_TRUE(message_was_there) << "the control message overtook the data it follows";
  auto won = b_.channels->cancel_unexpected(3, 0, 77);
  ASSERT_TRUE(won.is_ok()) << won.status().to_string();
  EXPECT_TRUE(*won);
  EXPECT_FALSE(b_.channels->probe({3, kAnySource, kAnyTag}).has_value());
  // A receive posted now takes the next message, not the cancelled one.
  const std::string next = "the next one";
  auto cookie = post(b_, {3, 0, 1}, 0, 256);
  ASSERT_TRUE(a_.channels
                  ->send_eager(1, {3, 0, 1}, 78,
                               {reinterpret_cast<const std::uint8_t*>(next.data()), next.size()})
                  .is_ok());
  pump([&] { return b_.receive(cookie) != nullptr; }, "the next message");
  EXPECT_EQ(b_.receive(cookie)->sender_request, 78u);
  EXPECT_EQ(b_.channels->counters().send_cancels_won, 1u);
}

// A message a posted receive took (in the NIC, on the hardware path) is
// final: the cancel loses and the receive has the data.
TEST_P(TagMatchingChannelsTest, SendCancelLosesToAMatch) {
  auto cookie = post(b_, {3, 0, 2}, 0, 256);
  const std::string text = "matched first";
  ASSERT_TRUE(a_.channels
                  ->send_eager(1, {3, 0, 2}, 90,
                               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()})
                  .is_ok());
  const std::uint8_t cancel_request[] = {'C', 90};
  ASSERT_TRUE(a_.channels->send_control(1, cancel_request).is_ok());
  pump([&] { return !b_.events.controls.empty(); }, "control message");
  auto won = b_.channels->cancel_unexpected(3, 0, 90);
  ASSERT_TRUE(won.is_ok()) << won.status().to_string();
  EXPECT_FALSE(*won);
  pump([&] { return b_.receive(cookie) != nullptr; }, "the matched receive");
  EXPECT_EQ(
      std::string(reinterpret_cast<const char*>(b_.memory.data()), b_.receive(cookie)->length),
      text);
  EXPECT_EQ(b_.channels->counters().send_cancels_lost, 1u);
}

// Both ranks send to each other at once, eager and rendezvous mixed, half
// the receives posted before and half after: every message intact, in send
// order per channel, every rendezvous finished.
TEST_P(TagMatchingChannelsTest, BothWaysMixedStream) {
  constexpr std::uint32_t kMessages = 96, kRendezvousBytes = 20000;
  constexpr std::size_t kSourceBase = 0, kReceiveBase = 4 << 20;
  auto length_of = [](std::uint32_t i) { return i % 3 == 0 ? kRendezvousBytes : 100 + i * 13; };
  for (Rank* r : {&a_, &b_}) r->fill(kSourceBase, std::size_t{kMessages} * kRendezvousBytes, 5);
  std::vector<std::uint64_t> cookies_a, cookies_b;
  auto post_half = [&](std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t i = from; i < to; ++i) {
      const std::size_t offset = kReceiveBase + std::size_t{i} * kRendezvousBytes;
      cookies_b.push_back(post(b_, {4, 0, kAnyTag}, offset, kRendezvousBytes));
      cookies_a.push_back(post(a_, {4, 1, kAnyTag}, offset, kRendezvousBytes));
    }
  };
  post_half(0, kMessages / 2);
  for (std::uint32_t i = 0; i < kMessages; ++i) {
    const std::size_t offset = kSourceBase + std::size_t{i} * kRendezvousBytes;
    for (auto [from, to, source] : {std::tuple{&a_, 1, 0}, std::tuple{&b_, 0, 1}}) {
      const Envelope e{4, source, static_cast<int>(i % 7)};
      if (length_of(i) == kRendezvousBytes) {
        ASSERT_TRUE(
            from->channels->send_rendezvous(to, e, i, from->source(offset, kRendezvousBytes))
                .is_ok());
      } else {
        ASSERT_TRUE(
            from->channels->send_eager(to, e, i, {from->memory.data() + offset, length_of(i)})
                .is_ok());
      }
    }
    // Keep both sides moving so that staging slots come back.
    ASSERT_TRUE(a_.channels->progress(&a_.events).is_ok());
    ASSERT_TRUE(b_.channels->progress(&b_.events).is_ok());
  }
  post_half(kMessages / 2, kMessages);
  const std::size_t rendezvous = kMessages / 3;
  pump(
      [&] {
        return a_.events.receives.size() == kMessages && b_.events.receives.size() == kMessages &&
               a_.events.finished.size() == rendezvous && b_.events.finished.size() == rendezvous;
      },
      "96 messages each way and every FIN");
  for (auto [to, from, cookies] :
       {std::tuple{&b_, &a_, &cookies_b}, std::tuple{&a_, &b_, &cookies_a}}) {
    for (std::uint32_t i = 0; i < kMessages; ++i) {
      const Completed* c = to->receive((*cookies)[i]);
      ASSERT_NE(c, nullptr);
      EXPECT_TRUE(c->error.is_ok()) << c->error.to_string();
      EXPECT_EQ(c->sender_request, i) << "receive order is send order";
      EXPECT_EQ(c->length, length_of(i));
      EXPECT_EQ(c->rendezvous, length_of(i) == kRendezvousBytes);
      EXPECT_TRUE(same_bytes(*from, kSourceBase + std::size_t{i} * kRendezvousBytes, *to,
                             kReceiveBase + std::size_t{i} * kRendezvousBytes, c->length))
          << "message " << i;
    }
  }
  const auto& m = b_.channels->matching_counters();
  EXPECT_EQ(m.matched_by_nic + m.matched_by_software, kMessages);
  if (hardware()) {
    EXPECT_GT(m.matched_by_nic, 0u);
  }
}

TEST_P(TagMatchingChannelsTest, BadInputIsRefusedWithAReason) {
  const std::uint8_t byte = 1;
  Status to_self = a_.channels->send_eager(0, {1, 0, 0}, 1, {&byte, 1});
  EXPECT_EQ(to_self.code(), ErrorCode::kInvalidRank) << to_self.to_string();
  Status nobody = a_.channels->send_control(7, {&byte, 1});
  EXPECT_EQ(nobody.code(), ErrorCode::kInvalidRank) << nobody.to_string();
  std::vector<std::uint8_t> big(a_.channels->max_eager() + 1, 0);
  Status too_big = a_.channels->send_eager(1, {1, 0, 0}, 1, big);
  EXPECT_EQ(too_big.code(), ErrorCode::kInvalidArgument) << too_big.to_string();
  Status unencodable = a_.channels->send_eager(1, {1u << 20, 0, 0}, 1, {&byte, 1});
  EXPECT_EQ(unencodable.code(), ErrorCode::kInvalidArgument) << unencodable.to_string();
  // Nothing of it reached the peer.
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(b_.channels->progress(&b_.events).is_ok());
  EXPECT_FALSE(b_.channels->probe({1, kAnySource, kAnyTag}).has_value());
  EXPECT_TRUE(b_.events.controls.empty());
}

}  // namespace
}  // namespace tagwire::verbs
