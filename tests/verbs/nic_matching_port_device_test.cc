// The engine's NIC-matching port (verbs/nic_matching_port.h) on the real
// device: made only where the device reports tag matching, refused with the
// reason elsewhere. ci/rxe-tests runs it on rxe0, where it must be refused;
// its bookkeeping is tests/unit/nic_matching_port_test.cc's, and the whole
// NIC path under real engines tests/verbs/engine_nic_matching_verbs_test.cc's.
#include <gtest/gtest.h>

#include <string>

#include "test_device.h"
#include "verbs/device.h"
#include "verbs/nic_matching_port.h"

namespace tagwire::verbs {
namespace {

// The engine's NIC-matching port on the real device: made only where the
// device reports tag matching (a TM-SRQ with the port's pools registered),
// refused with the reason elsewhere, rxe0 included.
TEST(NicMatchingPortOnDevice, MadeOnlyWhereTheDeviceMatchesTags) {
  std::string why_not;
  auto device = testing::open_test_device(&why_not);
  if (!device) GTEST_SKIP() << why_not;
  NicMatchingPortOptions options;
  options.entries = 1u << 20;  // capped by the device
  options.message_bytes = 4096;
  options.unexpected_buffers = 16;
  auto port = NicMatchingPort::create(*device, options);
  if (!device->caps().tm_rc) {
    ASSERT_FALSE(port.is_ok());
    EXPECT_EQ(port.status().code(), ErrorCode::kConfig);
    EXPECT_NE(port.status().message().find("IBV_TM_CAP_RC"), std::string::npos)
        << port.status().to_string();
    return;
  }
  ASSERT_TRUE(port.is_ok()) << port.status().to_string();
  EXPECT_LE((*port)->capacity(), device->caps().tm_max_tags);
  EXPECT_NE((*port)->srq(), nullptr);
  EXPECT_NE((*port)->cq(), nullptr);
}

}  // namespace
}  // namespace tagwire::verbs
