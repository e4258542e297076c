// Two shared-memory transports in one process, as ranks 0 and 1 of a job:
// order across a full ring, who wakes a sleeping receiver, a peer's CAS
// against the owner's on the same word, remote access held to its key, and
// a large read shared with the owner of the bytes.
#include "shm/shm_transport.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace tagwire::shm {
namespace {

using transport::Delivery;
using transport::Issued;

struct Collect : transport::Receiver {
  void on_message(std::span<const std::uint8_t> header,
                  std::span<const std::uint8_t> payload) override {
    std::uint32_t n = 0;
    std::memcpy(&n, header.data(), sizeof(n));
    seen.push_back(n);
    bytes += payload.size();
  }
  std::vector<std::uint32_t> seen;
  std::size_t bytes = 0;
};

class ShmPair : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int r = 0; r < 2; ++r) {
      auto t = create_shm_transport({r, 2, 4096, false});
      ASSERT_TRUE(t.is_ok()) << t.status().to_string();
      t_[r] = std::move(t).value();
    }
    std::vector<std::vector<std::uint8_t>> addresses{t_[0]->address(), t_[1]->address()};
    for (auto& t : t_) ASSERT_TRUE(t->set_peer_addresses(addresses).is_ok());
    t_[1]->set_receiver(&inbox_);
  }
  bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
  std::unique_ptr<transport::Transport> t_[2];
  Collect inbox_;
};

TEST_F(ShmPair, MessagesKeepTheirOrderAcrossAFullRing) {
  const std::vector<std::uint8_t> payload(1000, 9);
  int pending = 0, completed = 0;
  const transport::Completion done{[](void* c, const Status& s) {
                                     EXPECT_TRUE(s.is_ok());
                                     ++*static_cast<int*>(c);
                                   },
                                   &completed};
  for (std::uint32_t i = 0; i < 2000; ++i) {
    std::uint8_t header[16] = {};
    std::memcpy(header, &i, sizeof(i));
    auto sent = t_[0]->send(1, header, payload, done, Delivery::kPolled);
    ASSERT_TRUE(sent.is_ok()) << sent.status().to_string();
    if (*sent == Issued::kPending) ++pending;
  }
  EXPECT_GT(pending, 1000) << "the ring should have filled";
  while (inbox_.seen.size() < 2000) {
    t_[1]->progress();
    t_[0]->progress();
  }
  EXPECT_EQ(completed, pending);
  for (std::uint32_t i = 0; i < 2000; ++i) ASSERT_EQ(inbox_.seen[i], i);
  EXPECT_EQ(inbox_.bytes, 2000u * 1000u);
}

// try_send (a blocking eager send without a request) sends whole at once
// or not at all: never before the first send() attached the peer, never
// past a message still waiting in the backlog, and what it sent keeps its
// place among send()'s messages.
TEST_F(ShmPair, TrySendSendsAtOnceOrNothingAndKeepsOrder) {
  const std::vector<std::uint8_t> payload(1000, 7);
  const transport::Completion none{};
  std::uint32_t next = 0;
  auto header_of = [](std::uint32_t i) {
    std::array<std::uint8_t, 16> h{};
    std::memcpy(h.data(), &i, sizeof(i));
    return h;
  };
  {
    auto h = header_of(next);
    auto tried = t_[0]->try_send(1, h, payload);
    ASSERT_TRUE(tried.is_ok());
    EXPECT_FALSE(*tried) << "a peer not yet attached goes through send()";
    auto sent = t_[0]->send(1, h, payload, none, Delivery::kPolled);
    ASSERT_TRUE(sent.is_ok()) << sent.status().to_string();
    ++next;
  }
  // Fill the ring with try_send alone; then it refuses, having sent nothing.
  int refused_at = -1;
  for (int k = 0; k < 100000 && refused_at < 0; ++k) {
    auto h = header_of(next);
    auto tried = t_[0]->try_send(1, h, payload);
    ASSERT_TRUE(tried.is_ok());
    if (*tried) {
      ++next;
    } else {
      refused_at = k;
    }
  }
  ASSERT_GT(refused_at, 0) << "the ring should take some and then be full";
  // A send() now waits in the backlog; try_send must not overtake it even
  // once the ring has room again.
  int completed = 0;
  const transport::Completion done{[](void* c, const Status& s) {
                                     EXPECT_TRUE(s.is_ok());
                                     ++*static_cast<int*>(c);
                                   },
                                   &completed};
  {
    auto h = header_of(next++);
    auto sent = t_[0]->send(1, h, payload, done, Delivery::kPolled);
    ASSERT_TRUE(sent.is_ok());
    EXPECT_EQ(*sent, Issued::kPending);
  }
  t_[1]->progress();  // room in the ring, the backlog not yet drained
  {
    auto h = header_of(next);
    auto tried = t_[0]->try_send(1, h, payload);
    ASSERT_TRUE(tried.is_ok());
    EXPECT_FALSE(*tried) << "a message in the backlog goes first";
  }
  t_[0]->progress();  // the backlog goes into the ring
  EXPECT_EQ(completed, 1);
  {
    auto h = header_of(next);
    auto tried = t_[0]->try_send(1, h, payload);
    ASSERT_TRUE(tried.is_ok());
    EXPECT_TRUE(*tried);
    ++next;
  }
  while (inbox_.seen.size() < next) {
    t_[1]->progress();
    t_[0]->progress();
  }
  for (std::uint32_t i = 0; i < next; ++i) ASSERT_EQ(inbox_.seen[i], i);
  EXPECT_EQ(inbox_.bytes, std::size_t{next} * payload.size());
}

TEST_F(ShmPair, OnlyAWakeMessageWakesASleepingReceiver) {
  std::uint8_t header[16] = {};
  ASSERT_TRUE(*t_[1]->arm());
  ASSERT_TRUE(t_[0]->send(1, header, {}, {}, Delivery::kPolled).is_ok());
  EXPECT_FALSE(readable(t_[1]->event_fd())) << "a polled message woke the receiver";
  EXPECT_FALSE(*t_[1]->arm()) << "arm() slept over a message already there";
  t_[1]->progress();
  ASSERT_TRUE(*t_[1]->arm());
  ASSERT_TRUE(t_[0]->send(1, header, {}, {}, Delivery::kWake).is_ok());
  EXPECT_TRUE(readable(t_[1]->event_fd())) << "a wake message left the receiver asleep";
  t_[1]->progress();
  EXPECT_TRUE(*t_[1]->arm());
  EXPECT_FALSE(readable(t_[1]->event_fd())) << "arm() left an old wake-up behind";
}

TEST_F(ShmPair, APeersCasAndTheOwnersMeetOnOneWord) {
  auto words = t_[1]->allocate_atomic_words(4);
  ASSERT_TRUE(words.is_ok()) << words.status().to_string();
  auto* table = reinterpret_cast<std::uint64_t*>((*words)->address());
  std::uint64_t old = 99;
  auto cas =
      t_[0]->compare_and_swap(1, (*words)->address() + 8, (*words)->packed_key(), 0, 5, &old, {});
  ASSERT_TRUE(cas.is_ok()) << cas.status().to_string();
  EXPECT_EQ(*cas, Issued::kDone);
  EXPECT_EQ(old, 0u);
  EXPECT_EQ(table[1], 5u) << "the peer's CAS did not reach the owner's word";
  auto mine = t_[1]->local_compare_and_swap(**words, &table[1], 0, 7);
  ASSERT_TRUE(mine.is_ok());
  EXPECT_EQ(*mine, 5u) << "the owner's CAS won over the peer's";
  EXPECT_EQ(table[1], 5u);
  // and the other way round: the owner first, the peer's CAS fails
  ASSERT_EQ(*t_[1]->local_compare_and_swap(**words, &table[2], 0, 3), 0u);
  ASSERT_TRUE(
      t_[0]
          ->compare_and_swap(1, (*words)->address() + 16, (*words)->packed_key(), 0, 5, &old, {})
          .is_ok());
  EXPECT_EQ(old, 3u);
  EXPECT_EQ(table[2], 3u);
}

TEST_F(ShmPair, RemoteAccessStaysInsideItsKey) {
  std::vector<std::uint8_t> theirs(256);
  for (std::size_t i = 0; i < theirs.size(); ++i) theirs[i] = static_cast<std::uint8_t>(i);
  auto reg = t_[1]->register_memory(theirs.data(), 128, transport::RemoteAccess::kReadAndWrite);
  ASSERT_TRUE(reg.is_ok());
  std::vector<std::uint8_t> mine(128);
  ASSERT_TRUE(t_[0]->read(1, mine, (*reg)->address(), (*reg)->packed_key(), {}).is_ok());
  EXPECT_TRUE(std::equal(mine.begin(), mine.end(), theirs.begin()));
  auto past = t_[0]->read(1, mine, (*reg)->address() + 1, (*reg)->packed_key(), {});
  ASSERT_FALSE(past.is_ok()) << "a read past the registered bytes was allowed";
  EXPECT_EQ(past.status().code(), ErrorCode::kInvalidArgument);
  std::vector<std::uint8_t> ones(16, 0xEE);
  ASSERT_TRUE(t_[0]->write(1, ones, (*reg)->address() + 8, (*reg)->packed_key(), {}).is_ok());
  EXPECT_EQ(theirs[8], 0xEE);
  EXPECT_EQ(theirs[24], 24);
  std::uint64_t old = 0;
  auto cas = t_[0]->compare_and_swap(1, (*reg)->address(), (*reg)->packed_key(), 0, 1, &old, {});
  ASSERT_FALSE(cas.is_ok()) << "a CAS on private memory cannot be atomic with its owner";
  EXPECT_EQ(cas.status().code(), ErrorCode::kUnsupported);
}

TEST_F(ShmPair, AnAddressFromAnotherJobIsRefused) {
  auto stranger = create_shm_transport({0, 1, 4096, false});
  ASSERT_TRUE(stranger.is_ok());
  Status s = (*stranger)->set_peer_addresses({t_[0]->address()});
  EXPECT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), ErrorCode::kConfig);
}

// A large read is split with the owner of the bytes while the owner polls
// (as a sender does in MPI_Wait): the bytes arrive whole, and the owner
// copied part of them.
TEST_F(ShmPair, ALargeReadIsSharedWithTheOwnerOfTheBytes) {
  constexpr std::size_t kBytes = std::size_t{8} << 20;
  std::vector<std::uint8_t> source(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) source[i] = static_cast<std::uint8_t>(i * 7 + i / 4096);
  auto reg = t_[0]->register_memory(source.data(), kBytes, transport::RemoteAccess::kRead);
  ASSERT_TRUE(reg.is_ok());
  std::atomic<bool> stop{false};
  std::thread owner([&] {
    while (!stop.load(std::memory_order_relaxed)) t_[0]->progress();
  });
  // The owner's thread may be off its core for a whole read on a busy
  // machine: a few tries, each checked whole.
  std::vector<std::uint8_t> dest(kBytes);
  for (int attempt = 0; attempt < 50 && t_[0]->counters().bytes_helped == 0; ++attempt) {
    std::fill(dest.begin(), dest.end(), 0);
    auto r = t_[1]->read(0, dest, (*reg)->address(), (*reg)->packed_key(), {});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(*r, Issued::kDone);
    ASSERT_TRUE(dest == source) << "a shared read left the bytes wrong on attempt " << attempt;
  }
  stop = true;
  owner.join();
  EXPECT_GT(t_[0]->counters().bytes_helped, 0u) << "the polling owner never copied a chunk";
  EXPECT_EQ(t_[1]->counters().bytes_helped_by_peers, t_[0]->counters().bytes_helped);
}

// The owner serves a help request in the poll after the one that read it,
// never in the same one: that poll may have handed the engine a message
// whose read the engine starts once the poll returns, and a rank that
// copied its peer's chunks first began its own read only after them (a
// 2-rank all-to-all ran its two reads one after the other). The reader
// still gets its bytes whole, and the owner still helps on later polls.
TEST_F(ShmPair, AHelpRequestIsServedOnThePollAfterTheOneThatReadIt) {
  constexpr std::size_t kBytes = std::size_t{16} << 20;  // 64 chunks: the reader is still at it
  std::vector<std::uint8_t> source(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) source[i] = static_cast<std::uint8_t>(i * 13 + i / 4096);
  auto reg = t_[0]->register_memory(source.data(), kBytes, transport::RemoteAccess::kRead);
  ASSERT_TRUE(reg.is_ok());
  std::vector<std::uint8_t> dest(kBytes);
  std::atomic<bool> read_over{false};
  std::thread reader([&] {
    auto r = t_[1]->read(0, dest, (*reg)->address(), (*reg)->packed_key(), {});
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    read_over = true;
  });
  while (t_[0]->progress() == 0 && !read_over.load()) {
  }
  EXPECT_EQ(t_[0]->counters().bytes_helped, 0u)
      << "the poll that read the help request copied chunks at once";
  while (!read_over.load()) t_[0]->progress();
  reader.join();
  EXPECT_TRUE(dest == source) << "a shared read left the bytes wrong";
  EXPECT_EQ(t_[1]->counters().bytes_helped_by_peers, t_[0]->counters().bytes_helped);
}

// An owner that polls only after the reads are over (its requests arrive
// late) claims nothing and writes nothing into the reader's buffers: not
// for the read that is over, nor for a later, shorter one whose slot the
// first request's chunk count would still leave room in.
TEST_F(ShmPair, HelpRequestsThatArriveLateWriteNothing) {
  constexpr std::size_t kBytes = std::size_t{2} << 20;  // 8 chunks
  std::vector<std::uint8_t> source(kBytes, 0x11);
  auto reg = t_[0]->register_memory(source.data(), kBytes, transport::RemoteAccess::kRead);
  ASSERT_TRUE(reg.is_ok());
  std::vector<std::uint8_t> first(kBytes);
  ASSERT_TRUE(t_[1]->read(0, first, (*reg)->address(), (*reg)->packed_key(), {}).is_ok());
  EXPECT_EQ(first, source);
  std::fill(first.begin(), first.end(), 0x5A);   // the application reuses its buffer
  std::vector<std::uint8_t> second(kBytes / 4);  // 2 chunks
  ASSERT_TRUE(t_[1]->read(0, second, (*reg)->address(), (*reg)->packed_key(), {}).is_ok());
  EXPECT_TRUE(std::all_of(second.begin(), second.end(), [](std::uint8_t b) { return b == 0x11; }));
  EXPECT_EQ(t_[1]->counters().bytes_helped_by_peers, 0u);
  std::fill(second.begin(), second.end(), 0x5B);
  EXPECT_EQ(t_[0]->progress(), 2u) << "the help requests did not reach the owner";
  t_[0]->progress();  // serves the requests it read (the newer one: the older's read is over)
  EXPECT_EQ(t_[0]->counters().bytes_helped, 0u);
  EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](std::uint8_t b) { return b == 0x5A; }))
      << "a late help request wrote into a buffer its read had finished with";
  EXPECT_TRUE(std::all_of(second.begin(), second.end(), [](std::uint8_t b) { return b == 0x5B; }))
      << "a late help request wrote into a buffer its read had finished with";
}

}  // namespace
}  // namespace tagwire::shm
