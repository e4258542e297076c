// FrameReader: the launcher's bootstrap reads each connection as its bytes
// arrive, so one that stalls mid-frame holds up nobody; frames must still
// come out whole, in order, however the bytes were split.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bootstrap/frame_io.h"

namespace tagwire::bootstrap {
namespace {

class FrameReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  void send_bytes(const std::vector<std::uint8_t>& bytes) {
    ASSERT_EQ(::write(fds_[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  static std::vector<std::uint8_t> framed(const std::vector<std::uint8_t>& payload) {
    std::vector<std::uint8_t> out(4);
    const auto length = static_cast<std::uint32_t>(payload.size());
    std::memcpy(out.data(), &length, 4);
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
  }
  int fds_[2] = {-1, -1};
  FrameReader reader_;
};

TEST_F(FrameReaderTest, AHalfFrameWaitsWithoutBlocking) {
  auto whole = framed({1, 2, 3, 4, 5});
  send_bytes({whole.begin(), whole.begin() + 2});  // half the length
  auto closed = reader_.read_available(fds_[0]);   // returns: nothing more to read
  ASSERT_TRUE(closed.is_ok());
  EXPECT_FALSE(*closed);
  auto none = reader_.next();
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
  send_bytes({whole.begin() + 2, whole.end() - 1});  // all but the last byte
  ASSERT_TRUE(reader_.read_available(fds_[0]).is_ok());
  EXPECT_FALSE(reader_.next()->has_value());
  send_bytes({whole.end() - 1, whole.end()});
  ASSERT_TRUE(reader_.read_available(fds_[0]).is_ok());
  auto frame = reader_.next();
  ASSERT_TRUE(frame.is_ok());
  ASSERT_TRUE(frame->has_value());
  EXPECT_EQ(**frame, (std::vector<std::uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(reader_.pending(), 0u);
}

TEST_F(FrameReaderTest, FramesInOneReadComeOutInOrderThenTheClose) {
  auto bytes = framed({7});
  auto second = framed({});
  auto third = framed({8, 9});
  bytes.insert(bytes.end(), second.begin(), second.end());
  bytes.insert(bytes.end(), third.begin(), third.end());
  send_bytes(bytes);
  ::close(fds_[1]);
  fds_[1] = -1;
  auto closed = reader_.read_available(fds_[0]);
  ASSERT_TRUE(closed.is_ok());
  EXPECT_TRUE(*closed) << "the peer's close";
  EXPECT_EQ(**reader_.next(), std::vector<std::uint8_t>{7});
  EXPECT_EQ(**reader_.next(), std::vector<std::uint8_t>{});
  EXPECT_EQ(**reader_.next(), (std::vector<std::uint8_t>{8, 9}));
  EXPECT_FALSE(reader_.next()->has_value());
}

TEST_F(FrameReaderTest, AnOversizedLengthIsRefused) {
  const std::uint32_t length = kMaxFrame + 1;
  std::vector<std::uint8_t> bytes(4);
  std::memcpy(bytes.data(), &length, 4);
  send_bytes(bytes);
  ASSERT_TRUE(reader_.read_available(fds_[0]).is_ok());
  auto frame = reader_.next();
  ASSERT_FALSE(frame.is_ok());
  EXPECT_NE(frame.status().message().find("too large"), std::string::npos);
}

TEST_F(FrameReaderTest, AFrameLargerThanOneReadArrivesWhole) {
  std::vector<std::uint8_t> payload(300000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7);
  const auto bytes = framed(payload);
  std::size_t sent = 0;
  std::optional<std::vector<std::uint8_t>> got;
  while (!got) {  // the socket holds less than the frame: write, read, repeat
    if (sent < bytes.size()) {
      const ssize_t n = ::send(fds_[1], bytes.data() + sent, bytes.size() - sent, MSG_DONTWAIT);
      if (n > 0) sent += static_cast<std::size_t>(n);
    }
    ASSERT_TRUE(reader_.read_available(fds_[0]).is_ok());
    auto frame = reader_.next();
    ASSERT_TRUE(frame.is_ok());
    got = std::move(*frame);
  }
  EXPECT_EQ(*got, payload);
}

}  // namespace
}  // namespace tagwire::bootstrap
