// Small parts of the engine, alone: the attached buffer of buffered sends
// (first fit, MPI_BSEND_OVERHEAD per block, space back on release) and the
// book of dead peers (the error names the transport's reason when it gave one).
#include <gtest/gtest.h>

#include <vector>

#include "engine/bsend_buffer.h"
#include "engine/dead_peers.h"

namespace tagwire::engine {
namespace {

TEST(BsendBuffer, NothingFitsUntilABufferIsAttached) {
  BsendBuffer b;
  EXPECT_EQ(b.allocate(1), nullptr);
  std::vector<std::uint8_t> space(100);
  ASSERT_TRUE(b.attach(space.data(), space.size()).is_ok());
  EXPECT_FALSE(b.attach(space.data(), space.size()).is_ok()) << "a second attach must be refused";
  EXPECT_EQ(b.allocate(100 - BsendBuffer::kOverhead + 1), nullptr) << "the overhead counts";
  void* whole = b.allocate(100 - BsendBuffer::kOverhead);
  EXPECT_EQ(whole, space.data());
  EXPECT_TRUE(b.in_use());
  EXPECT_EQ(b.allocate(0), nullptr) << "full";
  b.release(whole);
  EXPECT_FALSE(b.in_use());
  auto back = b.detach();
  EXPECT_EQ(back.first, space.data());
  EXPECT_EQ(back.second, space.size());
  EXPECT_EQ(b.allocate(0), nullptr) << "nothing attached after detach";
  EXPECT_FALSE(b.attach(nullptr, 8).is_ok()) << "a null buffer of 8 bytes";
}

TEST(BsendBuffer, AReleasedHoleIsReusedFirstFit) {
  BsendBuffer b;
  constexpr std::size_t kBlock = 16 + BsendBuffer::kOverhead;
  std::vector<std::uint8_t> space(3 * kBlock);
  ASSERT_TRUE(b.attach(space.data(), space.size()).is_ok());
  void* first = b.allocate(16);
  void* second = b.allocate(16);
  void* third = b.allocate(16);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(static_cast<std::uint8_t*>(second) - static_cast<std::uint8_t*>(first),
            static_cast<std::ptrdiff_t>(kBlock));
  EXPECT_EQ(b.allocate(16), nullptr);
  b.release(second);
  EXPECT_EQ(b.allocate(17), nullptr) << "the hole holds 16 bytes, not 17";
  EXPECT_EQ(b.allocate(16), second) << "the hole is taken again";
  b.release(first);
  b.release(third);
  b.release(second);
  EXPECT_FALSE(b.in_use());
}

TEST(DeadPeers, KnowsEachRankOnceAndSaysWhy) {
  DeadPeers dead;
  EXPECT_FALSE(dead.any());
  EXPECT_FALSE(dead.contains(3));
  EXPECT_TRUE(dead.add(3));
  EXPECT_FALSE(dead.add(3)) << "a rank dies once";
  EXPECT_TRUE(dead.contains(3));
  EXPECT_FALSE(dead.contains(4));
  EXPECT_EQ(dead.status_for(3).code(), ErrorCode::kPeerFailed);
  EXPECT_NE(dead.status_for(3).message().find("rank 3 died"), std::string::npos);

  EXPECT_TRUE(dead.add(5, Status(ErrorCode::kTransport, "connection reset")));
  const Status s = dead.status_for(5);
  EXPECT_EQ(s.code(), ErrorCode::kPeerFailed);
  EXPECT_NE(s.message().find("unreachable: connection reset"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tagwire::engine
